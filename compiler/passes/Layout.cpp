// Data-movement clean-up: sink-transpose (merge, drop, sink transposes) and
// merge-reshape (merge and drop reshapes).
#include "PassUtil.h"

#include "ember/passes/Passes.h"

#include <numeric>
#include <set>

namespace ember {

using namespace passes;

namespace {

/// The permutation of a Transpose (absent attribute: reversed dimensions).
std::vector<int64_t> permOf(const Node& t) {
  std::vector<int64_t> p = t.attrs().getInts("perm");
  if (p.empty()) {
    p.resize(t.input(0).dims().size());
    std::iota(p.rbegin(), p.rend(), 0);
  }
  return p;
}

bool isIdentity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != int64_t(i))
      return false;
  return true;
}

/// Elementwise unary kinds a transpose commutes with (one input, same shape out).
bool isElementwiseUnary(NodeKind k) {
  using K = NodeKind;
  // clang-format off
  static const std::set<K> kinds = {
      K::Relu, K::Sigmoid, K::Tanh, K::Exp, K::Log, K::Sqrt, K::Erf, K::Neg, K::Abs,
      K::Reciprocal, K::Floor, K::Ceil, K::Round, K::Sign, K::Sin, K::Cos, K::Softplus,
      K::Softsign, K::LeakyRelu, K::Elu, K::Selu, K::Celu, K::ThresholdedRelu,
      K::HardSigmoid, K::HardSwish, K::Shrink, K::Clip, K::Silu, K::Gelu, K::Cast, K::Not};
  // clang-format on
  return kinds.count(k) != 0;
}

/// One rewrite at Transpose `n`: drop it when it is the identity, or merge the
/// Transpose feeding it into it.
bool simplifyTranspose(Function& f, Node* n) {
  const std::vector<int64_t> p = permOf(*n);
  if (isIdentity(p)) {
    f.replaceAllUsesOf(n->result(), n->input(0));
    return true;
  }
  Node* in = n->input(0).node;
  if (in->kind() != NodeKind::Transpose)
    return false;
  const std::vector<int64_t> inner = permOf(*in);
  std::vector<int64_t> merged(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    merged[i] = inner[static_cast<size_t>(p[i])];
  n->setInput(0, in->input(0));
  n->attrs().set("perm", merged);
  return true;
}

/// Unary(Transpose(x)) -> Transpose(Unary(x)) when the Transpose has no other use.
bool sinkBelow(Function& f, Node* u) {
  if (!isElementwiseUnary(u->kind()) || u->numInputs() != 1 || u->numResults() != 1)
    return false;
  Node* t = u->input(0).node;
  if (t->kind() != NodeKind::Transpose || singleUser(f, t) != u)
    return false;
  const std::string uName = u->name(), tName = t->name();
  Node* nu = f.create(u->kind(), uName, {t->input(0)}, u->attrs());
  Node* nt = f.create(NodeKind::Transpose, tName, {nu->result()}, t->attrs());
  f.replaceAllUsesOf(u->result(), nt->result());
  f.erase(u);
  f.erase(t);
  takeNameIfFree(f, nu, uName);
  takeNameIfFree(f, nt, tName);
  return true;
}

} // namespace

size_t runSinkTranspose(Function& f, const PassContext&) {
  size_t changes = 0;
  for (bool again = true; again;) {
    again = false;
    tidy(f);
    for (Node* n : snapshot(f)) {
      if (n->kind() == NodeKind::Transpose && simplifyTranspose(f, n)) {
        ++changes;
        again = true;
      } else if (sinkBelow(f, n)) {
        ++changes;
        again = true;
        break; // new nodes were appended: re-sort first
      }
    }
  }
  return changes;
}

size_t runMergeReshape(Function& f, const PassContext&) {
  size_t changes = 0;
  for (const auto& p : f.nodes()) {
    Node* n = p.get();
    if (n->kind() != NodeKind::Reshape)
      continue;
    const NodeValue in = n->input(0);
    if (in.node->kind() == NodeKind::Reshape) {
      n->setInput(0, in.node->input(0));
      ++changes;
    }
    if (n->input(0).type() == n->resultType()) {
      f.replaceAllUsesOf(n->result(), n->input(0));
      ++changes;
    }
  }
  if (changes)
    tidy(f);
  return changes;
}

} // namespace ember
