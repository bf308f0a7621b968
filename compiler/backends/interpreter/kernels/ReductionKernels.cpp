// Interpreter kernels of the Reduction node kinds (being written).
#include "ember/interpreter/Kernels.h"

namespace ember {

void registerReductionKernels() {}

} // namespace ember
