#include "ember/interpreter/Interpreter.h"

#include "ember/interpreter/Kernels.h"
#include "ember/support/Error.h"

#include <mutex>
#include <unordered_map>
#include <vector>

namespace ember {

namespace {

std::vector<KernelFn>& kernelTable() {
  static std::vector<KernelFn> t(numNodeKinds());
  return t;
}

std::vector<KernelFn>& quantizedKernelTable() {
  static std::vector<KernelFn> t(numNodeKinds());
  return t;
}

void registerAllKernels() {
  registerElementwiseKernels();
  registerReductionKernels();
  registerNNKernels();
  registerDataMovementKernels();
  registerQuantKernels();
  registerInt8Kernels();
  registerIndexKernels();
  registerLossEinsumKernels();
}

std::string nodeRef(const Node& n) {
  return std::string(n.kindName()) + " '" + n.name() + "'";
}

} // namespace

void registerKernel(NodeKind k, KernelFn fn) {
  kernelTable().at(static_cast<size_t>(k)) = std::move(fn);
}

const KernelFn* findKernel(NodeKind k) {
  static std::once_flag once;
  std::call_once(once, registerAllKernels);
  const KernelFn& fn = kernelTable().at(static_cast<size_t>(k));
  return fn ? &fn : nullptr;
}

void registerQuantizedKernel(NodeKind k, KernelFn fn) {
  quantizedKernelTable().at(static_cast<size_t>(k)) = std::move(fn);
}

const KernelFn* findQuantizedKernel(NodeKind k) {
  findKernel(k); // registers every table on first use
  const KernelFn& fn = quantizedKernelTable().at(static_cast<size_t>(k));
  return fn ? &fn : nullptr;
}

const KernelFn* selectKernel(const Node& n) {
  if (n.numResults() > 0 && n.resultType(0).kind == ElemKind::Int8 &&
      n.resultType(0).quant.isQuantized())
    if (const KernelFn* q = findQuantizedKernel(n.kind()))
      return q;
  return findKernel(n.kind());
}

bool interpreterSupports(const Node& n) {
  return n.isStorage() || selectKernel(n);
}

std::vector<Tensor> evaluateNode(const Node& n, const std::vector<const Tensor*>& inputs) {
  const KernelFn* kernel = selectKernel(n);
  if (!kernel)
    throw Error(nodeRef(n), "the interpreter has no kernel for this kind");
  std::vector<Tensor> out;
  out.reserve(n.numResults());
  bool empty = true;
  for (const Type& t : n.resultTypes()) {
    out.emplace_back(t);
    empty = empty && out.back().size() == 0;
  }
  // Every result empty: nothing to compute. (Kernels loop over outer extents, which an
  // empty tensor may still have in the billions: [1, 3e10, 0] must not take minutes.)
  if (empty && n.numResults() > 0)
    return out;
  try {
    (*kernel)(n, inputs, out);
  } catch (const Error& e) {
    throw Error(nodeRef(n), e.what());
  }
  return out;
}

Interpreter::Interpreter(const Function& f) : f_(f) {
  std::vector<std::string> missing;
  for (const auto& n : f.nodes())
    if (!interpreterSupports(*n))
      missing.push_back(nodeRef(*n));
  if (!missing.empty()) {
    std::string msg = "the interpreter cannot run " + std::to_string(missing.size()) + " node(s):";
    for (const auto& m : missing)
      msg += "\n  " + m;
    throw Error("function '" + f.name() + "'", msg);
  }
}

std::string Interpreter::whereIs(const Node& n) const {
  return f_.module().source() + ": node '" + n.name() + "' (" + n.kindName() + ")";
}

TensorMap Interpreter::run(const TensorMap& inputs) {
  // Values live in a map keyed by (node, result); each is dropped after its last use.
  std::map<NodeValue, Tensor> values;
  std::unordered_map<const Node*, size_t> lastUse;
  size_t index = 0;
  for (const auto& n : f_.nodes()) {
    for (const NodeValue& v : n->inputs())
      if (v)
        lastUse[v.node] = index;
    ++index;
  }
  for (const auto& o : f_.outputs())
    lastUse[o.value.node] = SIZE_MAX;

  for (const Node* p : f_.inputs()) {
    auto it = inputs.find(p->name());
    if (it == inputs.end())
      throw Error("input '" + p->name() + "'",
                  "no value given (expects " + p->resultType().toString() + ")");
    const Type& want = p->resultType();
    const Type& have = it->second.type();
    if (have.kind != want.kind || have.dims != want.dims)
      throw Error("input '" + p->name() + "'",
                  "given " + have.toString() + ", the model expects " + want.toString());
    Tensor t = it->second;
    t.mutableType().quant = want.quant;
    values.emplace(NodeValue(const_cast<Node*>(p), 0), std::move(t));
  }
  for (const auto& [name, _] : inputs) {
    Node* p = f_.module().getPlaceholder(name);
    if (!p)
      throw Error("input '" + name + "'", "the model has no input of this name");
  }

  auto lookup = [&](const NodeValue& v) -> const Tensor* {
    if (!v)
      return nullptr;
    if (v.node->kind() == NodeKind::Constant)
      return &v.node->payload();
    auto it = values.find(v);
    if (it == values.end())
      throw Error(nodeRef(*v.node), "value used before it was computed");
    return &it->second;
  };

  index = 0;
  for (const auto& n : f_.nodes()) {
    std::vector<const Tensor*> in;
    in.reserve(n->numInputs());
    for (const NodeValue& v : n->inputs())
      in.push_back(lookup(v));
    std::vector<Tensor> out;
    try {
      out = evaluateNode(*n, in);
    } catch (const Unsupported& e) {
      if (f_.module().source().empty())
        throw;
      throw Unsupported(whereIs(*n), e.reason());
    } catch (const Error& e) {
      // Run-time errors (an index out of range, an integer division by zero) name the
      // model file too, as import errors do.
      if (f_.module().source().empty())
        throw;
      throw Error(whereIs(*n), e.reason());
    }
    if (observer_)
      observer_(*n, out);
    for (size_t r = 0; r < out.size(); ++r)
      values.insert_or_assign(NodeValue(n.get(), static_cast<unsigned>(r)), std::move(out[r]));
    for (const NodeValue& v : n->inputs()) {
      if (!v || v.node->isStorage())
        continue;
      auto lu = lastUse.find(v.node);
      if (lu != lastUse.end() && lu->second == index)
        for (unsigned r = 0; r < v.node->numResults(); ++r)
          values.erase(NodeValue(v.node, r));
    }
    ++index;
  }

  TensorMap result;
  for (const auto& o : f_.outputs())
    result[o.name] = *lookup(o.value);
  return result;
}

namespace {
class InterpreterBackend : public Backend {
public:
  std::string name() const override { return "interp"; }
  bool supports(const Node& n) const override { return interpreterSupports(n); }
  std::string kindSupport(NodeKind k) const override {
    if (k == NodeKind::Placeholder || k == NodeKind::Constant)
      return "";
    const bool f = findKernel(k) != nullptr, q = findQuantizedKernel(k) != nullptr;
    return f && q ? "yes, int8 kernel" : f ? "yes" : q ? "int8 kernel" : "";
  }
  std::unique_ptr<CompiledFunction> compile(const Function& f) const override {
    return std::make_unique<Interpreter>(f);
  }
};
} // namespace

std::unique_ptr<Backend> createInterpreterBackend() {
  return std::make_unique<InterpreterBackend>();
}

} // namespace ember
