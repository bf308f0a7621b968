// The low-level IR interpreter: one arena, staged kernel calls.
#include "ember/lir/LirInterpreter.h"

#include "ember/interpreter/Interpreter.h"
#include "ember/lir/IRGen.h"
#include "ember/support/Error.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace ember::lir {

namespace {

constexpr uint8_t kPoison = 0xFF;

void checkKernels(const Function& f) {
  std::vector<std::string> missing;
  for (const auto& in : f.instructions())
    if (in->valueKind() == ValueKind::Compute && in->hasNode() && !interpreterSupports(in->node()))
      missing.push_back(std::string(in->node().kindName()) + " '" + in->name() + "'");
  if (missing.empty())
    return;
  std::string msg = "the interpreter cannot run " + std::to_string(missing.size()) + " node(s):";
  for (const std::string& m : missing)
    msg += "\n  " + m;
  throw Error("lir function '" + f.name() + "'", msg);
}

} // namespace

LirInterpreter::LirInterpreter(const Function& f, const MemoryPlanOptions& opts) : f_(f) {
  verifyOrThrow(f_);
  checkKernels(f_);
  plan_ = planMemory(f_, opts);
}

LirInterpreter::LirInterpreter(std::unique_ptr<Function> f, const MemoryPlanOptions& opts)
    : owned_(std::move(f)), f_(*owned_) {
  verifyOrThrow(f_);
  checkKernels(f_);
  plan_ = planMemory(f_, opts);
}

TensorMap LirInterpreter::run(const TensorMap& inputs) {
  std::vector<uint8_t> arena(plan_.plan.arenaBytes, kPoison);
  std::unordered_map<const Value*, uint8_t*> base;
  TensorMap result;
  for (const auto& [name, _] : inputs)
    if (!f_.findWeight(WeightVar::Role::Input, name))
      throw Error("input '" + name + "'", "the model has no input of this name");
  std::unordered_set<const Value*> used;
  for (const auto& in : f_.instructions())
    for (const Operand& op : in->operands())
      if (op.value)
        used.insert(locate(op.value).root);
  for (const auto& w : f_.weights()) {
    switch (w->role()) {
    case WeightVar::Role::Constant:
      base[w.get()] = const_cast<uint8_t*>(w->payload()->raw());
      break;
    case WeightVar::Role::Input: {
      auto it = inputs.find(w->ioName());
      if (it == inputs.end() && !used.count(w.get()))
        break; // an input this function does not read
      if (it == inputs.end())
        throw Error("input '" + w->ioName() + "'",
                    "no value given (expects " + w->type().toString() + ")");
      const Type& have = it->second.type();
      if (have.kind != w->type().kind || have.dims != w->type().dims)
        throw Error("input '" + w->ioName() + "'",
                    "given " + have.toString() + ", the model expects " + w->type().toString());
      // The verifier forbids writes to inputs: reading the caller's bytes is safe.
      base[w.get()] = const_cast<uint8_t*>(it->second.raw());
      break;
    }
    case WeightVar::Role::Output:
      base[w.get()] = result.insert_or_assign(w->ioName(), Tensor(w->type())).first->second.raw();
      break;
    }
  }
  for (size_t i = 0; i < plan_.allocs.size(); ++i)
    base[plan_.allocs[i]] = arena.data() + plan_.plan.offsets[i];

  auto ptr = [&](const Value* v) {
    const Location l = locate(const_cast<Value*>(v));
    return base.at(l.root) + l.offset;
  };
  for (const auto& p : f_.instructions()) {
    const Instruction& in = *p;
    switch (in.valueKind()) {
    case ValueKind::Alloc:
    case ValueKind::Dealloc: {
      const Value* a = in.valueKind() == ValueKind::Alloc ? &in : in.operand(0).value;
      if (a->sizeInBytes())
        std::memset(ptr(a), kPoison, a->sizeInBytes());
      break;
    }
    case ValueKind::View:
    case ValueKind::Weight:
      break;
    case ValueKind::Copy:
      if (in.operand(1).value->sizeInBytes())
        std::memmove(ptr(in.operand(0).value), ptr(in.operand(1).value),
                     in.operand(1).value->sizeInBytes());
      break;
    case ValueKind::Compute: {
      const size_t results = in.numResults();
      std::vector<Tensor> staged;
      staged.reserve(in.operands().size() - results);
      std::vector<const Tensor*> args;
      for (size_t i = results; i < in.operands().size(); ++i) {
        const Value* v = in.operand(i).value;
        if (!v) {
          args.push_back(nullptr);
          continue;
        }
        staged.emplace_back(v->type());
        if (v->sizeInBytes())
          std::memcpy(staged.back().raw(), ptr(v), v->sizeInBytes());
        args.push_back(&staged.back());
      }
      const std::vector<Tensor> out = evaluateNode(in.node(), args);
      for (size_t r = 0; r < results; ++r)
        if (out[r].sizeInBytes())
          std::memcpy(ptr(in.operand(r).value), out[r].raw(), out[r].sizeInBytes());
      break;
    }
    }
  }
  return result;
}

namespace {

class LirBackend : public Backend {
public:
  std::string name() const override { return "lir"; }
  bool supports(const Node& n) const override { return interpreterSupports(n); }
  std::string kindSupport(NodeKind k) const override {
    return createInterpreterBackend()->kindSupport(k);
  }
  std::unique_ptr<CompiledFunction> compile(const ember::Function& f) const override {
    return std::make_unique<LirInterpreter>(compileToLir(f));
  }
};

} // namespace

std::unique_ptr<Backend> createLirInterpreterBackend() {
  return std::make_unique<LirBackend>();
}

} // namespace ember::lir
