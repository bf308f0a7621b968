#include "NpuLir.h"

#include "ember/lir/IRGen.h"
#include "ember/support/Error.h"

namespace ember::npu {

namespace {

lir::InstrIt deallocOf(lir::Function& fn, const lir::Instruction* alloc) {
  for (auto it = fn.instructions().begin(); it != fn.instructions().end(); ++it)
    if ((*it)->valueKind() == lir::ValueKind::Dealloc && (*it)->operand(0).value == alloc)
      return it;
  throw Error("NPU backend", "internal: allocation '" + alloc->name() + "' is never freed");
}

} // namespace

std::unique_ptr<lir::Function> generateNpuLir(const Function& f, const lir::NodeOrder& order,
                                              const std::map<const Node*, const Node*>& fusedInto) {
  lir::IRGenOptions go;
  go.views = false;
  std::unique_ptr<lir::Function> fn = lir::generateIR(f, order, go);
  const std::map<const Node*, lir::Instruction*> compute = computeInstructions(*fn);
  lir::InstrList& list = fn->instructions();
  for (const auto& [producer, add] : fusedInto) {
    // The producer's only reader is the Add, so it may run anywhere before it; its
    // result's allocation stays where it is (the producer writes no DRAM bytes of it).
    const lir::InstrIt from = fn->find(compute.at(producer));
    list.splice(fn->find(compute.at(add)), list, from);
  }
  lir::verifyOrThrow(*fn);
  return fn;
}

void joinFusedLiveRanges(lir::Function& fn, const std::map<const Node*, const Node*>& fusedInto) {
  const std::map<const Node*, lir::Instruction*> compute = computeInstructions(fn);
  lir::InstrList& list = fn.instructions();
  for (const auto& [producer, add] : fusedInto) {
    const lir::InstrIt first = fn.find(compute.at(producer));
    const lir::InstrIt last = fn.find(compute.at(add));
    for (lir::InstrIt it = std::next(first); it != last;) {
      const lir::InstrIt next = std::next(it);
      if ((*it)->valueKind() == lir::ValueKind::Alloc)
        list.splice(first, list, it);
      else if ((*it)->valueKind() == lir::ValueKind::Dealloc)
        list.splice(std::next(last), list, it);
      else
        throw Error("NPU backend", "internal: '" + (*it)->name() + "' between fused layer '" +
                                       producer->name() + "' and its Add");
      it = next;
    }
  }
}

std::map<const Node*, lir::Instruction*> computeInstructions(lir::Function& fn) {
  std::map<const Node*, lir::Instruction*> out;
  for (const auto& in : fn.instructions())
    if (in->valueKind() == lir::ValueKind::Compute && in->origin())
      out[in->origin()] = in.get();
  return out;
}

lir::Instruction* replaceByView(lir::Function& fn, lir::Instruction* c) {
  if (c->numResults() != 1 || c->operands().size() < 2 || !c->operand(1).value)
    throw Error("NPU backend", "internal: '" + c->name() + "' cannot be a view of its input");
  lir::Value* result = c->operand(0).value;
  lir::Value* input = c->operand(1).value;
  if (result->valueKind() != lir::ValueKind::Alloc)
    throw Error("NPU backend", "internal: '" + c->name() + "' does not write an allocation");
  lir::Instruction* view =
      fn.insert(fn.find(c), lir::ValueKind::View, fn.uniqueName(result->name() + ".view"),
                result->type(), {{input, lir::OperandKind::In}});
  view->setOrigin(c->origin());
  const auto* alloc = static_cast<const lir::Instruction*>(result);
  fn.erase(c);
  fn.instructions().erase(deallocOf(fn, alloc));
  fn.replaceAllUsesOf(alloc, view);
  fn.erase(alloc);
  return view;
}

lir::Instruction* addTemporary(lir::Function& fn, lir::Instruction* c, uint64_t bytes) {
  const Type t(ElemKind::Int8, Shape{int64_t(bytes)});
  lir::Instruction* a =
      fn.insert(fn.find(c), lir::ValueKind::Alloc, fn.uniqueName(c->name() + ".temp"), t, {});
  lir::InstrIt after = std::next(fn.find(c));
  fn.insert(after, lir::ValueKind::Dealloc, "", Type(), {{a, lir::OperandKind::Out}});
  return a;
}

} // namespace ember::npu
