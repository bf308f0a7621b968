// fold-batchnorm: BatchNormalization, and Mul / Add by per-channel constants, after a
// Conv with constant weights are folded into the convolution's weights and bias.
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/attrs/FusedActivation.h"
#include "ember/passes/Passes.h"

#include <cmath>

namespace ember {

using namespace passes;

namespace {

/// A single-use float Conv with constant weights (and bias) and no fused activation.
Node* foldableConv(const Function& f, const NodeValue& v, const Node* user) {
  Node* conv = v.node;
  if (!conv || conv->kind() != NodeKind::Conv || v.resNo != 0 || !allPlainFloat(*conv))
    return nullptr;
  if (FusedActivation::present(conv->attrs()) || !isConstant(conv->input(1)) ||
      (conv->optionalInput(2) && !isConstant(conv->input(2))))
    return nullptr;
  return singleUser(f, conv) == user ? conv : nullptr;
}

/// Per-output-channel values of a constant `c` combined elementwise with a Conv result
/// of shape `out` ([N, M, spatial...]), if `c` varies at most along the channel axis and
/// does not widen the result; nullopt otherwise.
std::optional<std::vector<double>> perChannel(const NodeValue& c, const Shape& out) {
  if (!isConstant(c) || c.kind() != ElemKind::Float32 || c.type().quant.isQuantized())
    return std::nullopt;
  const Shape& s = c.dims();
  if (s.size() > out.size())
    return std::nullopt;
  const size_t lead = out.size() - s.size();
  bool perCh = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == 1)
      continue;
    if (lead + i != 1 || s[i] != out[1])
      return std::nullopt;
    perCh = true;
  }
  const int64_t m = out[1];
  std::vector<double> vals(static_cast<size_t>(m));
  const Tensor& t = c.node->payload();
  for (int64_t ch = 0; ch < m; ++ch)
    vals[static_cast<size_t>(ch)] = t.getAsDouble(perCh ? ch : 0);
  return vals;
}

/// Replaces `anchor` (which consumes `conv`) by a new Conv whose weights are scaled by
/// mul[m] and whose bias is bias[m] * mul[m] + add[m].
void rebuildConv(Function& f, Node* conv, Node* anchor, const std::vector<double>& mul,
                 const std::vector<double>& add) {
  const Tensor& w = conv->input(1).node->payload();
  const int64_t m = w.dims()[0], per = m ? w.size() / m : 0;
  Tensor nw(w.type());
  const float* wp = w.data<float>();
  float* np = nw.data<float>();
  for (int64_t ch = 0; ch < m; ++ch)
    for (int64_t i = 0; i < per; ++i)
      np[ch * per + i] = static_cast<float>(double(wp[ch * per + i]) * mul[size_t(ch)]);
  Tensor nb(ElemKind::Float32, {m});
  const NodeValue oldBias = conv->optionalInput(2);
  for (int64_t ch = 0; ch < m; ++ch) {
    const double b = oldBias ? oldBias.node->payload().getAsDouble(ch) : 0.0;
    nb.data<float>()[ch] = static_cast<float>(b * mul[size_t(ch)] + add[size_t(ch)]);
  }
  const std::string name = conv->name();
  Node* nc = f.create(NodeKind::Conv, name,
                      {conv->input(0), makeConstant(f, name + ".w_folded", std::move(nw)),
                       makeConstant(f, name + ".b_folded", std::move(nb))},
                      conv->attrs());
  f.replaceAllUsesOf(anchor->result(), nc->result());
  f.erase(anchor);
  f.erase(conv);
  nc->setName(name);
}

/// Tries to fold `n` (BatchNormalization, Mul or Add) into the Conv feeding it.
bool tryFold(Function& f, Node* n) {
  if (!allPlainFloat(*n))
    return false;
  if (n->kind() == NodeKind::BatchNormalization) {
    Node* conv = foldableConv(f, n->input(0), n);
    if (!conv || n->numResults() != 1)
      return false;
    for (size_t i = 1; i < 5; ++i)
      if (!isConstant(n->input(i)))
        return false;
    const double eps = normOf(n->attrs()).epsilon;
    const int64_t m = conv->resultType().dims[1];
    std::vector<double> mul(static_cast<size_t>(m)), add(static_cast<size_t>(m));
    auto at = [&](size_t in, int64_t ch) { return n->input(in).node->payload().getAsDouble(ch); };
    for (int64_t ch = 0; ch < m; ++ch) {
      const double scale = at(1, ch) / std::sqrt(at(4, ch) + eps);
      mul[size_t(ch)] = scale;
      add[size_t(ch)] = at(2, ch) - at(3, ch) * scale;
    }
    rebuildConv(f, conv, n, mul, add);
    return true;
  }
  if (n->kind() != NodeKind::Mul && n->kind() != NodeKind::Add)
    return false;
  for (size_t side = 0; side < 2; ++side) {
    Node* conv = foldableConv(f, n->input(side), n);
    if (!conv || n->resultType().dims != conv->resultType().dims)
      continue;
    auto vals = perChannel(n->input(1 - side), conv->resultType().dims);
    if (!vals)
      continue;
    const size_t m = vals->size();
    if (n->kind() == NodeKind::Mul)
      rebuildConv(f, conv, n, *vals, std::vector<double>(m, 0.0));
    else
      rebuildConv(f, conv, n, std::vector<double>(m, 1.0), *vals);
    return true;
  }
  return false;
}

} // namespace

size_t runFoldBatchNorm(Function& f, const PassContext&) {
  size_t folded = 0;
  for (bool again = true; again;) {
    // A fold erases the anchor and the Conv before it (never a later node of the
    // snapshot); the new Conv is appended, so re-sort before the next round.
    f.topoSort();
    again = false;
    for (Node* n : snapshot(f))
      if (tryFold(f, n)) {
        ++folded;
        again = true;
      }
  }
  if (folded)
    tidy(f);
  return folded;
}

} // namespace ember
