// The table of code-generation units, filled once by the family files of codegen/.
#include "Codegen.h"

#include <mutex>

namespace ember::cpu {

namespace {

std::vector<std::unique_ptr<CodegenUnit>>& table() {
  static std::vector<std::unique_ptr<CodegenUnit>> t(numNodeKinds());
  return t;
}

void registerAll() {
  registerElementwiseCodegen();
  registerConvCodegen();
  registerMatMulCodegen();
  registerPoolCodegen();
  registerMovementCodegen();
  registerNormCodegen();
  registerReduceCodegen();
}

void ensureRegistered() {
  static std::once_flag once;
  std::call_once(once, registerAll);
}

} // namespace

void registerCodegenUnit(NodeKind k, CodegenUnit u) {
  table().at(static_cast<size_t>(k)) = std::make_unique<CodegenUnit>(u);
}

const CodegenUnit* findCodegenUnit(NodeKind k) {
  ensureRegistered();
  return table().at(static_cast<size_t>(k)).get();
}

std::vector<std::pair<NodeKind, const char*>> codegenTable() {
  ensureRegistered();
  std::vector<std::pair<NodeKind, const char*>> out;
  for (size_t i = 0; i < table().size(); ++i)
    if (table()[i])
      out.emplace_back(static_cast<NodeKind>(i), table()[i]->family);
  return out;
}

std::string nodeRef(const Node& n) {
  return std::string(n.kindName()) + " '" + n.name() + "'";
}

} // namespace ember::cpu
