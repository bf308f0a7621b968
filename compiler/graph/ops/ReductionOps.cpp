// Type inference of the Reduction node kinds (being written).
#include "ember/graph/InferUtil.h"
#include "ember/graph/OpInfo.h"

namespace ember {

void registerReductionOps() {}

} // namespace ember
