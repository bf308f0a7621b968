// IRGen: graph nodes in schedule order -> allocations, views, compute instructions,
// output copies and (at the end) deallocations.
#include "ember/lir/IRGen.h"

#include "Views.h"
#include "ember/lir/Passes.h"
#include "ember/support/Error.h"

#include <map>

namespace ember::lir {

namespace {

class IRGen {
public:
  IRGen(const ember::Function& g, Function& f, const IRGenOptions& opts)
      : g_(g), f_(f), opts_(opts) {}

  void run(const NodeOrder& order) {
    // Every placeholder of the module is an input (as the graph interpreter accepts
    // them all); only those the function reads need a value at run time.
    for (const auto& p : g_.module().placeholders())
      values_[NodeValue(p.get(), 0)] =
          f_.addWeight(p->name(), p->resultType(), WeightVar::Role::Input, nullptr, p->name());
    for (const auto& o : g_.outputs())
      outputs_.push_back(
          f_.addWeight(o.name, o.value.type(), WeightVar::Role::Output, nullptr, o.name));
    (void)schedulePeakBytes(g_, order); // validates the order
    for (const Node* n : order)
      visit(*n);
    for (size_t i = 0; i < outputs_.size(); ++i)
      f_.insert(
          f_.instructions().end(), ValueKind::Copy, outputs_[i]->name() + ".copy", Type(),
          {{outputs_[i], OperandKind::Out}, {valueOf(g_.outputs()[i].value), OperandKind::In}});
    const std::vector<Instruction*> allocs = f_.allocations();
    for (auto it = allocs.rbegin(); it != allocs.rend(); ++it)
      f_.insert(f_.instructions().end(), ValueKind::Dealloc, "", Type(), {{*it, OperandKind::Out}});
  }

private:
  Value* valueOf(const NodeValue& v) {
    if (!v)
      return nullptr;
    auto it = values_.find(v);
    if (it != values_.end())
      return it->second;
    if (v.node->kind() != NodeKind::Constant)
      throw Error("node '" + v.node->name() + "'", "used before it is computed");
    Value* w = f_.addWeight(v.node->name(), v.node->resultType(), WeightVar::Role::Constant,
                            &v.node->payload(), "");
    values_[v] = w;
    return w;
  }

  void visit(const Node& n) {
    Node* key = const_cast<Node*>(&n);
    const auto offsets = opts_.views ? viewOffsets(n) : std::nullopt;
    if (offsets) {
      Value* base = valueOf(n.input(0));
      for (unsigned r = 0; r < n.numResults(); ++r) {
        Instruction* v =
            f_.insert(f_.instructions().end(), ValueKind::View,
                      n.numResults() == 1 ? n.name() : n.name() + "." + std::to_string(r),
                      n.resultType(r), {{base, OperandKind::In}});
        v->setOffset((*offsets)[r]);
        v->setOrigin(&n);
        values_[NodeValue(key, r)] = v;
      }
      return;
    }
    std::vector<Operand> ops;
    for (unsigned r = 0; r < n.numResults(); ++r) {
      const std::string name =
          n.name() + (n.numResults() == 1 ? ".res" : ".res" + std::to_string(r));
      Instruction* a =
          f_.insert(f_.instructions().end(), ValueKind::Alloc, name, n.resultType(r), {});
      values_[NodeValue(key, r)] = a;
      ops.push_back({a, OperandKind::Out});
    }
    std::vector<Type> inputTypes;
    for (const NodeValue& in : n.inputs()) {
      ops.push_back({valueOf(in), OperandKind::In});
      inputTypes.push_back(in ? in.type() : Type());
    }
    Instruction* c =
        f_.insert(f_.instructions().end(), ValueKind::Compute, n.name(), Type(), std::move(ops));
    c->setNode(std::make_unique<Node>(n.kind(), n.name(), std::vector<NodeValue>{}, n.resultTypes(),
                                      n.attrs()),
               std::move(inputTypes));
    c->setOrigin(&n);
  }

  const ember::Function& g_;
  Function& f_;
  IRGenOptions opts_;
  std::map<NodeValue, Value*> values_;
  std::vector<WeightVar*> outputs_;
};

} // namespace

std::unique_ptr<Function> generateIR(const ember::Function& g, const NodeOrder& order,
                                     const IRGenOptions& opts) {
  auto f = std::make_unique<Function>(g.name());
  IRGen(g, *f, opts).run(order);
  return f;
}

std::unique_ptr<Function> compileToLir(const ember::Function& g, const LirOptions& opts) {
  const NodeOrder order =
      opts.minimizeMemorySchedule ? memoryMinimizingOrder(g) : topologicalOrder(g);
  std::unique_ptr<Function> f = generateIR(g, order);
  verifyOrThrow(*f);
  if (opts.optimize)
    runLirPipeline(*f, defaultLirPipeline());
  return f;
}

} // namespace ember::lir
