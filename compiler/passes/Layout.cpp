// Data-movement clean-up: sink-transpose (merge, drop, sink transposes) and
// merge-reshape (merge and drop reshapes).
#include "PassUtil.h"

#include "ember/graph/OpInfo.h"

#include "ember/graph/AttrViews.h"
#include "ember/passes/Passes.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace ember {

using namespace passes;

namespace {

/// The permutation of a Transpose (absent attribute: reversed dimensions).
std::vector<int64_t> permOf(const Node& t) {
  return transposeOf(t.attrs()).resolved(t.input(0).dims().size());
}

bool isIdentity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != int64_t(i))
      return false;
  return true;
}

/// Elementwise unary kinds a transpose commutes with (one input, same shape out).
bool isElementwiseUnary(NodeKind k) {
  return hasTrait(k, OpTrait::ElementwiseUnary);
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

bool isElementwiseBinary(NodeKind k) {
  return hasTrait(k, OpTrait::ElementwiseBinary);
}

bool anyQuantized(const Node& n) {
  for (const Type& t : n.resultTypes())
    if (t.quant.isQuantized())
      return true;
  for (const NodeValue& v : n.inputs())
    if (v && v.type().quant.isQuantized())
      return true;
  return false;
}

/// Whether every use of `t` is an input of `u` (and `t` is no output).
bool onlyUsedBy(const Function& f, const Node* t, const Node* u) {
  for (const auto& m : f.nodes())
    if (m.get() != u)
      for (const NodeValue& v : m->inputs())
        if (v.node == t)
          return false;
  for (const auto& o : f.outputs())
    if (o.value.node == t)
      return false;
  return true;
}

/// Op(Transpose(x1, p), ..., Transpose(xn, p)) -> Transpose(Op(x1, ..., xn), p) for an
/// elementwise unary or binary op (operands of equal shape) or a Concat (whose axis
/// becomes p[axis]), when the transposes have no other use.
bool sinkBelow(Function& f, Node* u) {
  const NodeKind k = u->kind();
  const bool binary = isElementwiseBinary(k) && u->numInputs() == 2;
  if (!((isElementwiseUnary(k) && u->numInputs() == 1) || binary ||
        (k == NodeKind::Concat && u->numInputs() >= 1)) ||
      u->numResults() != 1 || anyQuantized(*u))
    return false;
  std::vector<int64_t> perm;
  std::vector<NodeValue> inner;
  for (const NodeValue& v : u->inputs()) {
    if (!v || v.node->kind() != NodeKind::Transpose || !onlyUsedBy(f, v.node, u))
      return false;
    if (perm.empty())
      perm = permOf(*v.node);
    else if (permOf(*v.node) != perm)
      return false;
    inner.push_back(v.node->input(0));
  }
  if (binary && inner[0].dims() != inner[1].dims())
    return false; // broadcasting: the operands' ranks or shapes may not line up
  Attrs a = u->attrs();
  if (k == NodeKind::Concat) {
    const size_t rank = perm.size();
    const int64_t axis = axisOf(a).axis;
    a.set("axis", perm[static_cast<size_t>(axis < 0 ? axis + int64_t(rank) : axis)]);
  }
  const std::string uName = u->name();
  std::vector<Node*> transposes;
  for (const NodeValue& v : u->inputs())
    if (std::find(transposes.begin(), transposes.end(), v.node) == transposes.end())
      transposes.push_back(v.node);
  const std::string tName = transposes.front()->name();
  Node* nu = f.create(k, uName, inner, a);
  Attrs ta;
  ta.set("perm", perm);
  Node* nt = f.create(NodeKind::Transpose, tName, {nu->result()}, ta);
  f.replaceAllUsesOf(u->result(), nt->result());
  f.erase(u);
  for (Node* t : transposes)
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
