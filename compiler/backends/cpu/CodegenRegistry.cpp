// The table of code-generation units, filled once by the family files of codegen/.
#include "Codegen.h"

#include <mutex>

namespace ember::cpu {

namespace {

std::vector<std::vector<CodegenUnit>>& table() {
  static std::vector<std::vector<CodegenUnit>> t(numNodeKinds());
  return t;
}

void registerAll() {
  registerElementwiseCodegen();
  registerConvCodegen();
  registerMatMulCodegen();
  registerPoolCodegen();
  registerResizeCodegen();
  registerMovementCodegen();
  registerNormCodegen();
  registerReduceCodegen();
  registerInt8Codegen();
  registerInt8AttentionCodegen();
}

void ensureRegistered() {
  static std::once_flag once;
  std::call_once(once, registerAll);
}

} // namespace

void registerCodegenUnit(NodeKind k, CodegenUnit u) {
  table().at(static_cast<size_t>(k)).push_back(u);
}

const CodegenUnit* findCodegenUnit(const Op& n) {
  ensureRegistered();
  // The interpreter-only element kinds (float64, float16, uint*, int16) have no codegen.
  for (const OpInput& in : n.inputs())
    if (in && !isCoreElemKind(in.kind()))
      return nullptr;
  for (const Type& t : n.resultTypes())
    if (!isCoreElemKind(t.kind))
      return nullptr;
  for (const CodegenUnit& u : table().at(static_cast<size_t>(n.kind())))
    if (u.supports(n))
      return &u;
  return nullptr;
}

std::vector<std::pair<NodeKind, const char*>> codegenTable() {
  ensureRegistered();
  std::vector<std::pair<NodeKind, const char*>> out;
  for (size_t i = 0; i < table().size(); ++i)
    for (const CodegenUnit& u : table()[i])
      out.emplace_back(static_cast<NodeKind>(i), u.family);
  return out;
}

} // namespace ember::cpu
