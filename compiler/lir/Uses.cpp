#include "Uses.h"

namespace ember::lir {

Uses::Uses(Function& f) {
  size_t i = 0;
  for (auto& p : f.instructions()) {
    Instruction* in = p.get();
    pos[in] = i++;
    if (in->valueKind() == ValueKind::Alloc)
      continue;
    if (in->valueKind() == ValueKind::Dealloc) {
      dealloc[in->operand(0).value] = in;
      continue;
    }
    for (const Operand& op : in->operands()) {
      if (!op.value)
        continue;
      const Value* root = locate(op.value).root;
      auto& u = users[root];
      if (u.empty() || u.back() != in)
        u.push_back(in);
      if (op.kind != OperandKind::Out && in->valueKind() != ValueKind::View)
        ++reads[root];
    }
  }
}

const Instruction* Uses::lastUser(const Value* root) const {
  auto it = users.find(root);
  return it == users.end() || it->second.empty() ? nullptr : it->second.back();
}

const Instruction* Uses::firstUser(const Value* root) const {
  auto it = users.find(root);
  return it == users.end() || it->second.empty() ? nullptr : it->second.front();
}

} // namespace ember::lir
