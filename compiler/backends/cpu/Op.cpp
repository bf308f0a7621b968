#include "Op.h"

#include "ember/lir/IR.h"
#include "ember/support/Error.h"

namespace ember::cpu {

const Type& OpInput::type() const {
  if (!type_)
    throw Error("cpu backend", "an absent optional input has no type");
  return *type_;
}

Op Op::ofNode(const Node& n) {
  Op op;
  op.node_ = &n;
  for (size_t i = 0; i < n.numInputs(); ++i) {
    const NodeValue& v = n.input(i);
    if (!v) {
      op.inputs_.emplace_back();
      continue;
    }
    const void* constant = v.node->kind() == NodeKind::Constant ? v.node->payload().raw() : nullptr;
    op.inputs_.emplace_back(static_cast<unsigned>(i), &v.type(), constant);
  }
  return op;
}

Op Op::ofInstruction(const lir::Instruction& in) {
  Op op;
  op.node_ = &in.node();
  const size_t results = in.numResults();
  for (size_t i = results; i < in.operands().size(); ++i) {
    lir::Value* v = in.operand(i).value;
    if (!v) {
      op.inputs_.emplace_back();
      continue;
    }
    const void* constant = nullptr;
    const lir::Location l = lir::locate(v);
    if (l.root->valueKind() == lir::ValueKind::Weight) {
      const auto* w = static_cast<const lir::WeightVar*>(l.root);
      if (w->role() == lir::WeightVar::Role::Constant)
        constant = w->payload()->raw() + l.offset;
    }
    op.inputs_.emplace_back(static_cast<unsigned>(i - results), &in.inputTypes().at(i - results),
                            constant);
  }
  return op;
}

const OpInput& Op::input(size_t i) const {
  if (i >= inputs_.size())
    throw Error(nodeRef(*this), "has no input " + std::to_string(i));
  return inputs_[i];
}

std::string nodeRef(const Node& n) {
  return std::string(n.kindName()) + " '" + n.name() + "'";
}

std::string nodeRef(const Op& n) {
  return nodeRef(n.node());
}

} // namespace ember::cpu
