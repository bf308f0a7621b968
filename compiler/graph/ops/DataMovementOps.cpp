// Type inference of the DataMovement node kinds (being written).
#include "ember/graph/InferUtil.h"
#include "ember/graph/OpInfo.h"

namespace ember {

void registerDataMovementOps() {}

} // namespace ember
