// Interpreter kernels of the NN node kinds (being written).
#include "ember/interpreter/Kernels.h"

namespace ember {

void registerNNKernels() {}

} // namespace ember
