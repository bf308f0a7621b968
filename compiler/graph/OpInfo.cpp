#include "ember/graph/OpInfo.h"

#include <mutex>

namespace ember {

namespace {
std::vector<OpInfo>& table() {
  static std::vector<OpInfo> t(numNodeKinds());
  return t;
}

void registerAll() {
  registerElementwiseOps();
  registerReductionOps();
  registerNNOps();
  registerDataMovementOps();
  registerQuantOps();
}
} // namespace

void registerOpInfo(OpInfo info) {
  table().at(static_cast<size_t>(info.kind)) = std::move(info);
}

const OpInfo* findOpInfo(NodeKind k) {
  static std::once_flag once;
  std::call_once(once, registerAll);
  const OpInfo& info = table().at(static_cast<size_t>(k));
  return info.infer ? &info : nullptr;
}

} // namespace ember
