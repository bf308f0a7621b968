// The low-level IR's containers, the in-place table and the textual dump.
#include "ember/lir/IR.h"

#include "ember/graph/OpInfo.h"

#include "ember/support/Error.h"

#include <algorithm>
#include <sstream>

namespace ember::lir {

const char* operandKindName(OperandKind k) {
  switch (k) {
  case OperandKind::In:
    return "in";
  case OperandKind::Out:
    return "out";
  case OperandKind::InOut:
    return "inout";
  }
  return "?";
}

std::string Instruction::opName() const {
  switch (valueKind()) {
  case ValueKind::Alloc:
    return "allocactivation";
  case ValueKind::Dealloc:
    return "deallocactivation";
  case ValueKind::View:
    return "tensorview";
  case ValueKind::Copy:
    return "copy";
  case ValueKind::Compute:
    return hasNode() ? node().kindName() : "compute";
  case ValueKind::Weight:
    break;
  }
  return "?";
}

Location locate(Value* v) {
  Location loc{v, 0};
  while (loc.root && loc.root->valueKind() == ValueKind::View) {
    auto* view = static_cast<Instruction*>(loc.root);
    loc.offset += view->offset();
    loc.root = view->operand(0).value;
  }
  return loc;
}

WeightVar* Function::addWeight(const std::string& name, Type t, WeightVar::Role role,
                               const Tensor* payload, const std::string& ioName) {
  weights_.push_back(
      std::make_unique<WeightVar>(uniqueName(name), std::move(t), role, payload, ioName));
  return weights_.back().get();
}

WeightVar* Function::findWeight(WeightVar::Role role, const std::string& ioName) const {
  for (const auto& w : weights_)
    if (w->role() == role && w->ioName() == ioName)
      return w.get();
  return nullptr;
}

Instruction* Function::insert(InstrIt pos, ValueKind k, const std::string& name, Type t,
                              std::vector<Operand> ops) {
  const std::string unique = name.empty() ? std::string() : uniqueName(name);
  auto it =
      instrs_.insert(pos, std::make_unique<Instruction>(k, unique, std::move(t), std::move(ops)));
  return it->get();
}

InstrIt Function::find(const Instruction* in) {
  for (auto it = instrs_.begin(); it != instrs_.end(); ++it)
    if (it->get() == in)
      return it;
  throw Error("lir function '" + name_ + "'",
              "instruction '" + in->name() + "' is not in this function");
}

void Function::erase(const Instruction* in) {
  instrs_.erase(find(in));
}

void Function::replaceAllUsesOf(const Value* from, Value* to) {
  for (auto& in : instrs_)
    for (size_t i = 0; i < in->operands().size(); ++i)
      if (in->operand(i).value == from)
        in->setOperandValue(i, to);
}

std::string Function::uniqueName(const std::string& base) {
  std::string name = base;
  for (int i = 1; names_.count(name); ++i)
    name = base + "." + std::to_string(i);
  names_.insert(name);
  return name;
}

size_t Function::count(ValueKind k) const {
  return size_t(std::count_if(instrs_.begin(), instrs_.end(),
                              [&](const auto& in) { return in->valueKind() == k; }));
}

std::vector<Instruction*> Function::allocations() const {
  std::vector<Instruction*> out;
  for (const auto& in : instrs_)
    if (in->valueKind() == ValueKind::Alloc)
      out.push_back(in.get());
  return out;
}

size_t Function::allocatedBytes() const {
  size_t sum = 0;
  for (Instruction* a : allocations())
    sum += a->sizeInBytes();
  return sum;
}

bool isInPlaceSafe(NodeKind k) {
  return hasTrait(k, OpTrait::InPlaceSafe);
}

namespace {

std::string ref(const Value* v) {
  return v ? "%" + v->name() : "<none>";
}

const char* roleName(WeightVar::Role r) {
  switch (r) {
  case WeightVar::Role::Constant:
    return "constant";
  case WeightVar::Role::Input:
    return "input";
  case WeightVar::Role::Output:
    return "output";
  }
  return "?";
}

} // namespace

std::string dump(const Function& f) {
  std::ostringstream os;
  os << "lir function " << f.name() << " {\n";
  for (const auto& w : f.weights()) {
    os << "  weight " << ref(w.get()) << " : " << w->type().toString() << " "
       << roleName(w->role());
    if (!w->ioName().empty())
      os << " \"" << w->ioName() << "\"";
    os << "\n";
  }
  for (const auto& in : f.instructions()) {
    os << "  ";
    if (in->valueKind() != ValueKind::Dealloc)
      os << ref(in.get()) << " = ";
    os << in->opName();
    const char* sep = " ";
    for (const Operand& op : in->operands()) {
      os << sep << "@" << operandKindName(op.kind) << " " << ref(op.value);
      sep = ", ";
    }
    if (in->valueKind() == ValueKind::View)
      os << ", offset " << in->offset();
    if (in->hasNode() && !in->node().attrs().all().empty())
      os << " " << in->node().attrs().toString();
    if (in->valueKind() == ValueKind::Alloc || in->valueKind() == ValueKind::View)
      os << " : " << in->type().toString();
    os << "\n";
  }
  os << "}\n";
  return os.str();
}

} // namespace ember::lir
