// Type inference of the NN node kinds (being written).
#include "ember/graph/InferUtil.h"
#include "ember/graph/OpInfo.h"

namespace ember {

void registerNNOps() {}

} // namespace ember
