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
  registerIndexOps();
}
} // namespace

void registerOpInfo(OpInfo info) {
  table().at(static_cast<size_t>(info.kind)) = std::move(info);
}

void addOpTraits(std::initializer_list<NodeKind> kinds, std::initializer_list<OpTrait> traits) {
  for (NodeKind k : kinds)
    for (OpTrait t : traits)
      table().at(static_cast<size_t>(k)).traits |= static_cast<uint32_t>(t);
}

bool hasTrait(NodeKind k, OpTrait t) {
  const OpInfo* info = findOpInfo(k);
  return info && (info->traits & static_cast<uint32_t>(t)) != 0;
}

std::string traitNames(NodeKind k) {
  static const std::pair<OpTrait, const char*> names[] = {
      {OpTrait::ElementwiseUnary, "elementwise-unary"},
      {OpTrait::ElementwiseBinary, "elementwise-binary"},
      {OpTrait::InPlaceSafe, "in-place"},
      {OpTrait::KeepsQuantization, "keeps-quantization"}};
  std::string out;
  for (const auto& [t, name] : names)
    if (hasTrait(k, t))
      out += std::string(out.empty() ? "" : ", ") + name;
  return out;
}

const OpInfo* findOpInfo(NodeKind k) {
  static std::once_flag once;
  std::call_once(once, registerAll);
  const OpInfo& info = table().at(static_cast<size_t>(k));
  return info.infer ? &info : nullptr;
}

} // namespace ember
