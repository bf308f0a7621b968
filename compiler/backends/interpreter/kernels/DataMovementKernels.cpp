// Interpreter kernels of the DataMovement node kinds (being written).
#include "ember/interpreter/Kernels.h"

namespace ember {

void registerDataMovementKernels() {}

} // namespace ember
