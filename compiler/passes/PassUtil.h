#pragma once
// Helpers shared by the pass implementations (not a public header).
#include "ember/graph/Graph.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ember::passes {

/// "Kind 'name'", for error messages.
inline std::string nodeRef(const Node& n) {
  return std::string(n.kindName()) + " '" + n.name() + "'";
}

/// A float32 value without quantization parameters (what the float passes rewrite).
inline bool isPlainFloat(const Type& t) {
  return t.kind == ElemKind::Float32 && !t.quant.isQuantized();
}

/// Whether every result of `n` is a plain float.
inline bool allPlainFloat(const Node& n) {
  for (const Type& t : n.resultTypes())
    if (!isPlainFloat(t))
      return false;
  return true;
}

inline bool isConstant(const NodeValue& v) {
  return v && v.node->kind() == NodeKind::Constant;
}

/// The value of a one-element float Constant, if `v` is one.
inline std::optional<double> scalarConstant(const NodeValue& v) {
  if (!isConstant(v) || v.type().size() != 1 || v.kind() != ElemKind::Float32)
    return std::nullopt;
  return v.node->payload().getAsDouble(0);
}

/// A new Constant holding `t`, named after `base`.
inline NodeValue makeConstant(Function& f, const std::string& base, Tensor t) {
  return f.module().createConstant(base, std::move(t))->result();
}

/// A new float scalar Constant.
inline NodeValue makeScalar(Function& f, const std::string& base, float v) {
  return makeConstant(f, base, Tensor::scalar<float>(v));
}

/// Uses of every node of `f` (node inputs and outputs), counted once.
inline std::unordered_map<const Node*, size_t> countUses(const Function& f) {
  std::unordered_map<const Node*, size_t> uses;
  for (const auto& n : f.nodes())
    for (const NodeValue& v : n->inputs())
      if (v)
        ++uses[v.node];
  for (const auto& o : f.outputs())
    ++uses[o.value.node];
  return uses;
}

/// The nodes of `f` in their current order (a snapshot a pass may iterate while it
/// appends new nodes).
inline std::vector<Node*> snapshot(const Function& f) {
  std::vector<Node*> v;
  v.reserve(f.numNodes());
  for (const auto& n : f.nodes())
    v.push_back(n.get());
  return v;
}

/// The single user node of `n`'s result 0, or nullptr when there is not exactly one
/// use or `n` feeds an output.
inline Node* singleUser(const Function& f, const Node* n) {
  Node* user = nullptr;
  size_t uses = 0;
  for (const auto& m : f.nodes())
    for (const NodeValue& v : m->inputs())
      if (v.node == n) {
        ++uses;
        user = m.get();
      }
  for (const auto& o : f.outputs())
    if (o.value.node == n)
      return nullptr;
  return uses == 1 ? user : nullptr;
}

/// Gives `n` the name `want` if no node of `f` has it any more (a replacement takes the
/// name of the node it replaced once that one is gone, so names stay readable).
inline void takeNameIfFree(Function& f, Node* n, const std::string& want) {
  if (n->name() != want && !f.findNode(want))
    n->setName(want);
}

/// After a rewrite: restore topological order and drop what became dead.
inline void tidy(Function& f) {
  f.topoSort();
  f.eraseDeadNodes();
}

} // namespace ember::passes
