// The clean-up passes: dce, cse, constant-fold.
#include "PassUtil.h"

#include "ember/interpreter/Interpreter.h"
#include "ember/passes/Passes.h"
#include "ember/support/Error.h"

#include <map>
#include <string_view>

namespace ember {

using namespace passes;

namespace {

/// Replacements found so far: uses of a key become uses of the value.
class Remap {
public:
  void set(NodeValue from, NodeValue to) { map_[from] = to; }
  NodeValue get(NodeValue v) const {
    auto it = map_.find(v);
    return it == map_.end() ? v : it->second;
  }
  /// Rewrites the inputs of `n`.
  void apply(Node& n) const {
    for (size_t i = 0; i < n.numInputs(); ++i)
      if (n.input(i))
        n.setInput(i, get(n.input(i)));
  }
  /// Rewrites the function's outputs.
  void applyOutputs(Function& f) const {
    for (size_t i = 0; i < f.outputs().size(); ++i)
      f.setOutputValue(i, get(f.outputs()[i].value));
  }
  bool empty() const { return map_.empty(); }

private:
  std::map<NodeValue, NodeValue> map_;
};

/// A key that equal nodes share (collisions are resolved by sameNode).
std::string cseKey(const Node& n) {
  std::string k = std::to_string(static_cast<int>(n.kind()));
  for (const NodeValue& v : n.inputs())
    k += "|" + std::to_string(reinterpret_cast<uintptr_t>(v.node)) + ":" + std::to_string(v.resNo);
  return k + "|" + n.attrs().toString();
}

bool sameNode(const Node& a, const Node& b) {
  return a.kind() == b.kind() && a.inputs() == b.inputs() && a.attrs() == b.attrs() &&
         a.resultTypes() == b.resultTypes();
}

/// Maps every Constant used by `f` that duplicates an earlier one (same type and bytes)
/// to that earlier one.
size_t mergeConstants(const Function& f, Remap& remap) {
  std::vector<const Node*> used;
  std::unordered_map<const Node*, bool> seen;
  for (const auto& n : f.nodes())
    for (const NodeValue& v : n->inputs())
      if (isConstant(v) && !seen[v.node]) {
        seen[v.node] = true;
        used.push_back(v.node);
      }
  std::unordered_map<size_t, std::vector<Node*>> byHash;
  size_t merged = 0;
  for (const Node* c : used) {
    const Tensor& t = c->payload();
    const std::string_view bytes(reinterpret_cast<const char*>(t.raw()), t.sizeInBytes());
    const size_t h =
        std::hash<std::string_view>()(bytes) ^ std::hash<std::string>()(c->resultType().toString());
    auto& bucket = byHash[h];
    Node* same = nullptr;
    for (Node* other : bucket)
      if (other->payload() == t) {
        same = other;
        break;
      }
    if (same) {
      remap.set(NodeValue(const_cast<Node*>(c), 0), same->result());
      ++merged;
    } else {
      bucket.push_back(const_cast<Node*>(c));
    }
  }
  return merged;
}

/// Whether constant-fold may evaluate `n` (all inputs Constants, a kernel, not a
/// quantization boundary, result within the size cap).
bool foldable(const Node& n, const PassContext& ctx) {
  if (n.kind() == NodeKind::QuantizeLinear || n.kind() == NodeKind::DequantizeLinear)
    return false;
  int64_t inElems = 0, outElems = 0;
  for (const NodeValue& v : n.inputs()) {
    if (v && !isConstant(v))
      return false;
    if (v)
      inElems += v.type().size();
  }
  for (const Type& t : n.resultTypes())
    outElems += t.size();
  if (outElems > ctx.foldLimitElements && outElems > inElems)
    return false;
  return interpreterSupports(n);
}

} // namespace

size_t runDce(Function& f, const PassContext&) {
  const size_t nodes = f.eraseDeadNodes();
  return nodes + f.module().eraseUnusedConstants();
}

size_t runCse(Function& f, const PassContext&) {
  Remap remap;
  size_t merged = mergeConstants(f, remap);
  std::unordered_map<std::string, std::vector<Node*>> seen;
  for (const auto& p : f.nodes()) {
    Node& n = *p;
    remap.apply(n);
    auto& bucket = seen[cseKey(n)];
    Node* same = nullptr;
    for (Node* other : bucket)
      if (sameNode(*other, n)) {
        same = other;
        break;
      }
    if (!same) {
      bucket.push_back(&n);
      continue;
    }
    for (unsigned r = 0; r < n.numResults(); ++r)
      remap.set(n.result(r), same->result(r));
    ++merged;
  }
  if (merged) {
    remap.applyOutputs(f);
    f.eraseDeadNodes();
  }
  return merged;
}

size_t runConstantFold(Function& f, const PassContext& ctx) {
  Remap remap;
  size_t folded = 0;
  for (const auto& p : f.nodes()) {
    Node& n = *p;
    remap.apply(n);
    if (!foldable(n, ctx))
      continue;
    std::vector<const Tensor*> in;
    for (const NodeValue& v : n.inputs())
      in.push_back(v ? &v.node->payload() : nullptr);
    std::vector<Tensor> out;
    try {
      out = evaluateNode(n, in);
    } catch (const Error&) {
      continue; // e.g. an integer division by zero: left for run time to report
    }
    for (unsigned r = 0; r < out.size(); ++r) {
      const std::string name = r == 0 ? n.name() : n.name() + "_" + std::to_string(r);
      remap.set(n.result(r), makeConstant(f, name, std::move(out[r])));
    }
    ++folded;
  }
  if (folded) {
    remap.applyOutputs(f);
    f.eraseDeadNodes();
  }
  return folded;
}

} // namespace ember
