// Interpreter kernels of the Elementwise node kinds (being written).
#include "ember/interpreter/Kernels.h"

namespace ember {

void registerElementwiseKernels() {}

} // namespace ember
