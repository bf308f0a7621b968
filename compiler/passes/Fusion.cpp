// Fusion passes: fuse-activation (Relu / Clip into the producer's attributes) and
// fuse-silu-gelu (pattern matching of SiLU and of torch's erf form of GELU).
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/attrs/FusedActivation.h"
#include "ember/passes/Passes.h"

#include <cmath>

namespace ember {

using namespace passes;

namespace {

// ---- fuse-activation --------------------------------------------------------------

/// The activation a Relu or Clip node computes (None when it is neither, or a Clip
/// without bounds).
FusedActivation activationOf(const Node& n) {
  FusedActivation a;
  if (n.kind() == NodeKind::Relu) {
    a.kind = FusedActivation::Kind::Relu;
    a.lo = 0;
  } else if (n.kind() == NodeKind::Clip && clipOf(n.attrs()).bounded()) {
    const ClipAttrs c = clipOf(n.attrs());
    a.kind = FusedActivation::Kind::Clip;
    a.lo = c.lo(a.lo);
    a.hi = c.hi(a.hi);
    // Clip(min = 0) stays a clip: it keeps -0.0 where Relu gives +0.0, and fusion must
    // be exact.
  }
  return a;
}

bool fuseInto(Function& f, Node* act) {
  const FusedActivation a = activationOf(*act);
  if (!a.active() || !allPlainFloat(*act))
    return false;
  Node* p = act->input(0).node;
  if (!canCarryActivation(p->kind()) || act->input(0).resNo != 0 || !allPlainFloat(*p) ||
      FusedActivation::present(p->attrs()) || singleUser(f, p) != act)
    return false;
  a.writeTo(p->attrs());
  f.replaceAllUsesOf(act->result(), p->result());
  return true;
}

// ---- fuse-silu-gelu ---------------------------------------------------------------

using Users = std::unordered_map<const Node*, std::vector<Node*>>;

Users usersOf(const Function& f) {
  Users u;
  for (const auto& n : f.nodes())
    for (const NodeValue& v : n->inputs())
      if (v)
        u[v.node].push_back(n.get());
  return u;
}

bool near(const std::optional<double>& v, double want) {
  return v && std::fabs(*v - want) <= 1e-4 * std::fabs(want);
}

/// For a binary node `n` with `v` as one operand, the other operand.
NodeValue otherOperand(const Node& n, const Node* v) {
  if (n.input(0).node == v)
    return n.input(1);
  if (n.input(1).node == v)
    return n.input(0);
  return {};
}

/// The first user of `n` of kind `k` whose other operand satisfies `pred`.
template <typename Pred>
Node* userWith(const Users& users, const Node* n, NodeKind k, const Pred& pred) {
  auto it = users.find(n);
  if (it == users.end())
    return nullptr;
  for (Node* u : it->second)
    if (u->kind() == k && u->numInputs() == 2 && allPlainFloat(*u)) {
      const NodeValue o = otherOperand(*u, n);
      if (o && pred(o))
        return u;
    }
  return nullptr;
}

/// Mul(x, Sigmoid(x)) in either order -> the x, or null.
NodeValue siluInput(const Node& m) {
  if (m.kind() != NodeKind::Mul || !allPlainFloat(m))
    return {};
  for (size_t s = 0; s < 2; ++s) {
    const NodeValue a = m.input(s), b = m.input(1 - s);
    if (a.node->kind() == NodeKind::Sigmoid && a.node->input(0) == b &&
        m.resultType().dims == b.dims())
      return b;
  }
  return {};
}

/// At an Erf: the x of 0.5 * x * (1 + Erf(x / sqrt 2)) and the node computing the
/// whole product, or {null, null}.
std::pair<NodeValue, Node*> geluAt(const Users& users, const Node& erf) {
  const Node* d = erf.input(0).node;
  NodeValue x;
  if (d->kind() == NodeKind::Div && near(scalarConstant(d->input(1)), std::sqrt(2.0)))
    x = d->input(0);
  else if (d->kind() == NodeKind::Mul)
    for (size_t s = 0; s < 2 && !x; ++s)
      if (near(scalarConstant(d->input(s)), std::sqrt(0.5)))
        x = d->input(1 - s);
  if (!x)
    return {};
  auto isHalf = [](const NodeValue& v) { return near(scalarConstant(v), 0.5); };
  auto isX = [&](const NodeValue& v) { return v == x; };
  auto isHalfX = [&](const NodeValue& v) {
    const Node* h = v.node;
    return h->kind() == NodeKind::Mul &&
           ((h->input(0) == x && isHalf(h->input(1))) || (h->input(1) == x && isHalf(h->input(0))));
  };
  Node* add = userWith(users, &erf, NodeKind::Add,
                       [](const NodeValue& v) { return near(scalarConstant(v), 1.0); });
  if (!add)
    return {};
  Node* result = nullptr;
  if (Node* m1 = userWith(users, add, NodeKind::Mul, isX)) // ((1 + erf) * x) * 0.5
    result = userWith(users, m1, NodeKind::Mul, isHalf);
  else if (Node* m2 = userWith(users, add, NodeKind::Mul, isHalf)) // ((1 + erf) * 0.5) * x
    result = userWith(users, m2, NodeKind::Mul, isX);
  else // (x * 0.5) * (1 + erf)
    result = userWith(users, add, NodeKind::Mul, isHalfX);
  if (!result || result->resultType().dims != x.dims())
    return {};
  return {x, result};
}

/// Replaces one SiLU or GELU pattern; false when none is left. `made` / `name`: the
/// new node and the name of the node it replaced.
bool fuseOnePattern(Function& f, Node** made, std::string* name) {
  const Users users = usersOf(f);
  for (const auto& p : f.nodes()) {
    Node* n = p.get();
    if (NodeValue x = siluInput(*n)) {
      *name = n->name();
      *made = f.create(NodeKind::Silu, *name, {x});
      f.replaceAllUsesOf(n->result(), (*made)->result());
      return true;
    }
    if (n->kind() == NodeKind::Erf && allPlainFloat(*n)) {
      auto [x, result] = geluAt(users, *n);
      if (!result)
        continue;
      *name = result->name();
      *made = f.create(NodeKind::Gelu, *name, {x});
      f.replaceAllUsesOf(result->result(), (*made)->result());
      return true;
    }
  }
  return false;
}

} // namespace

size_t runFuseActivation(Function& f, const PassContext&) {
  size_t fused = 0;
  for (Node* n : snapshot(f))
    fused += fuseInto(f, n);
  if (fused)
    tidy(f);
  return fused;
}

size_t runFuseSiluGelu(Function& f, const PassContext&) {
  size_t fused = 0;
  Node* made = nullptr;
  std::string name;
  while (fuseOnePattern(f, &made, &name)) {
    ++fused;
    tidy(f);
    takeNameIfFree(f, made, name);
  }
  return fused;
}

} // namespace ember
