// Interpreter kernels of the Quant node kinds (being written).
#include "ember/interpreter/Kernels.h"

namespace ember {

void registerQuantKernels() {}

} // namespace ember
