// fuse-layernorm: the decomposed layer normalisation that exporters write for opsets
// below 17 (torch's nn.LayerNorm among them),
//   d = x - ReduceMean(x); y = d / Sqrt(ReduceMean(d^2) + eps) [* scale] [+ bias],
// becomes one LayerNormalization node, which the int8 path runs with integer statistics
// (docs/numerics.md 4.11) and the float path with the same arithmetic as before.
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/passes/Passes.h"

#include <algorithm>

namespace ember {

using namespace passes;

namespace {

/// The first normalised axis of a ReduceMean with keepdims over trailing axes of its
/// input (reducedAxes: a run of reduced axes that ends at the last one), or -1.
int64_t trailingMeanAxis(const Node* n) {
  if (n->kind() != NodeKind::ReduceMean || !allPlainFloat(*n) || n->numInputs() != 1 ||
      !reduceOf(n->attrs()).keepDims)
    return -1;
  const std::vector<bool> r = reducedAxes(n->attrs(), n->input(0).dims().size());
  const auto first = std::find(r.begin(), r.end(), true);
  if (first == r.end() || std::find(first, r.end(), false) != r.end())
    return -1;
  return first - r.begin();
}

/// The element of a constant of shape `s` that broadcasts to flat index `i` of `target`.
int64_t broadcastOffset(const Shape& s, const Shape& target, int64_t i) {
  const size_t off = target.size() - s.size();
  int64_t result = 0, stride = 1;
  for (size_t d = target.size(); d-- > 0;) {
    const int64_t idx = i % target[d];
    i /= target[d];
    if (d >= off) {
      const int64_t extent = s[d - off];
      result += (extent == 1 ? 0 : idx) * stride;
      stride *= extent;
    }
  }
  return result;
}

/// Whether `v` is d * d or d ^ 2.
bool isSquareOf(const NodeValue& v, const NodeValue& d) {
  const Node* n = v.node;
  if (n->kind() == NodeKind::Mul)
    return n->input(0) == d && n->input(1) == d;
  if (n->kind() == NodeKind::Pow) {
    const std::optional<double> e = scalarConstant(n->input(1));
    return n->input(0) == d && e && *e == 2.0;
  }
  return false;
}

/// A float constant operand of `n` other than `from` that broadcasts onto the
/// normalised shape `inner` (scale or bias), or a null value.
NodeValue constantOperand(const Node* n, const Node* from, const Shape& inner) {
  if (!n || n->numInputs() != 2 || !allPlainFloat(*n))
    return {};
  const NodeValue o = n->input(0).node == from ? n->input(1) : n->input(0);
  if (!isConstant(o) || !isPlainFloat(o.type()) || !broadcastsTo(o.dims(), inner))
    return {};
  return o;
}

/// The pattern ending at a Div node, as the parts of the LayerNormalization.
struct Match {
  NodeValue x, scale, bias;
  Node* last = nullptr;
  int64_t axis = -1;
  double eps = 0;
};

bool matchAt(const Function& f, Node* div, Match* m) {
  if (div->kind() != NodeKind::Div || !allPlainFloat(*div))
    return false;
  const NodeValue d = div->input(0);
  const Node* sub = d.node;
  const Node* sq = div->input(1).node;
  if (sub->kind() != NodeKind::Sub || sq->kind() != NodeKind::Sqrt)
    return false;
  const Node* mean = sub->input(1).node;
  const int64_t axis = trailingMeanAxis(mean);
  if (axis < 0 || mean->input(0) != sub->input(0))
    return false;
  const Node* add = sq->input(0).node;
  if (add->kind() != NodeKind::Add)
    return false;
  for (size_t s = 0; s < 2; ++s) {
    const std::optional<double> eps = scalarConstant(add->input(1 - s));
    const Node* var = add->input(s).node;
    if (!eps || *eps < 0 || trailingMeanAxis(var) != axis || !isSquareOf(var->input(0), d))
      continue;
    m->x = sub->input(0);
    m->axis = axis;
    m->eps = *eps;
    m->last = div;
    break;
  }
  if (!m->last || m->x.dims() != div->resultType().dims)
    return false;
  // Then an optional constant scale and bias, each the single user of what precedes it
  // (values of the pattern read elsewhere stay for those readers).
  const Shape& xd = m->x.dims();
  const Shape inner(xd.begin() + axis, xd.end());
  if (Node* mul = singleUser(f, div); mul && mul->kind() == NodeKind::Mul)
    if ((m->scale = constantOperand(mul, div, inner)))
      m->last = mul;
  if (Node* badd = singleUser(f, m->last); badd && badd->kind() == NodeKind::Add)
    if ((m->bias = constantOperand(badd, m->last, inner)))
      m->last = badd;
  return m->last->resultType().dims == xd;
}

/// A scale or bias as a constant of exactly the normalised shape (what every executor's
/// LayerNormalization takes), or of ones / zeros when absent.
NodeValue expanded(Function& f, const std::string& name, const NodeValue& v, const Shape& inner,
                   float fill) {
  Tensor t(ElemKind::Float32, inner);
  const int64_t n = t.size();
  for (int64_t i = 0; i < n; ++i)
    t.data<float>()[i] = fill;
  if (v) {
    const Tensor& src = v.node->payload();
    for (int64_t i = 0; i < n; ++i)
      t.data<float>()[i] = src.data<float>()[broadcastOffset(v.dims(), inner, i)];
  }
  return makeConstant(f, name, std::move(t));
}

/// Replaces one LayerNorm pattern; false when none is left.
bool fuseOne(Function& f) {
  for (Node* n : snapshot(f)) {
    Match m;
    if (!matchAt(f, n, &m))
      continue;
    const Shape& xd = m.x.dims();
    const Shape inner(xd.begin() + m.axis, xd.end());
    const std::string name = m.last->name();
    Attrs a;
    a.set("axis", m.axis);
    a.set("epsilon", m.eps);
    std::vector<NodeValue> ins = {m.x, expanded(f, name + ".scale", m.scale, inner, 1.f)};
    if (m.bias)
      ins.push_back(expanded(f, name + ".bias", m.bias, inner, 0.f));
    Node* ln = f.create(NodeKind::LayerNormalization, name + ".layernorm", ins, a);
    f.replaceAllUsesOf(m.last->result(), ln->result());
    tidy(f); // erases the pattern's nodes: the snapshot is stale from here
    takeNameIfFree(f, ln, name);
    return true;
  }
  return false;
}

} // namespace

size_t runFuseLayerNorm(Function& f, const PassContext&) {
  size_t fused = 0;
  while (fuseOne(f))
    ++fused;
  return fused;
}

} // namespace ember
