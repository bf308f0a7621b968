// lower: high-level nodes into primitives, for the nodes the backend asks for
// (Backend::shouldLower). One table entry per lowerable kind.
#include "PassUtil.h"

#include "ember/backend/Backend.h"
#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/graph/attrs/FusedActivation.h"
#include "ember/passes/Passes.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace ember {

using namespace passes;

namespace {

/// Builds the replacement of one node; returns its value, or a null NodeValue when
/// this node cannot be lowered (non-constant parameters, extra results in use, ...).
using LowerFn = NodeValue (*)(Function& f, Node& n);

/// Creates a node named after the lowered one.
NodeValue emit(Function& f, const Node& n, const char* suffix, NodeKind k,
               std::vector<NodeValue> in, Attrs a = {}) {
  return f.create(k, n.name() + "." + suffix, std::move(in), std::move(a))->result();
}

NodeValue scalar(Function& f, const Node& n, const char* suffix, double v) {
  return makeScalar(f, n.name() + "." + suffix, static_cast<float>(v));
}

Attrs clipAttrs(double lo, double hi) {
  Attrs a;
  a.set("min", lo);
  a.set("max", hi);
  return a;
}

Attrs reduceAttrs(int64_t first, size_t rank) {
  std::vector<int64_t> axes;
  for (int64_t i = first; i < int64_t(rank); ++i)
    axes.push_back(i);
  Attrs a;
  a.set("axes", axes);
  a.set("keepdims", int64_t(1));
  return a;
}

NodeValue lowerGemm(Function& f, Node& n) {
  const GemmAttrs g = gemmOf(n.attrs());
  const double alpha = g.alpha, beta = g.beta;
  Attrs t;
  t.set("perm", std::vector<int64_t>{1, 0});
  NodeValue a = n.input(0), b = n.input(1);
  if (g.transA)
    a = emit(f, n, "a_t", NodeKind::Transpose, {a}, t);
  if (g.transB)
    b = emit(f, n, "b_t", NodeKind::Transpose, {b}, t);
  NodeValue y = emit(f, n, "matmul", NodeKind::MatMul, {a, b});
  if (alpha != 1.0)
    y = emit(f, n, "alpha", NodeKind::Mul, {y, scalar(f, n, "alpha", alpha)});
  NodeValue c = n.optionalInput(2);
  if (c && beta != 0.0) {
    if (beta != 1.0)
      c = emit(f, n, "beta", NodeKind::Mul, {c, scalar(f, n, "beta", beta)});
    y = emit(f, n, "bias", NodeKind::Add, {y, c});
  }
  return y;
}

/// Whether results other than the first of `n` are used.
bool extraResultsUsed(const Function& f, const Node& n) {
  for (const auto& m : f.nodes())
    for (const NodeValue& v : m->inputs())
      if (v.node == &n && v.resNo != 0)
        return true;
  for (const auto& o : f.outputs())
    if (o.value.node == &n && o.value.resNo != 0)
      return true;
  return false;
}

NodeValue lowerLayerNorm(Function& f, Node& n) {
  if (extraResultsUsed(f, n))
    return {};
  const NodeValue x = n.input(0);
  const size_t rank = x.dims().size();
  const NormAttrs na = normOf(n.attrs());
  const int64_t axis = normalizeAxis(na.axis, rank);
  const Attrs r = reduceAttrs(axis, rank);
  const NodeValue mean = emit(f, n, "mean", NodeKind::ReduceMean, {x}, r);
  const NodeValue d = emit(f, n, "centered", NodeKind::Sub, {x, mean});
  const NodeValue sq = emit(f, n, "square", NodeKind::Mul, {d, d});
  const NodeValue var = emit(f, n, "var", NodeKind::ReduceMean, {sq}, r);
  const NodeValue eps = scalar(f, n, "epsilon", na.epsilon);
  const NodeValue veps = emit(f, n, "var_eps", NodeKind::Add, {var, eps});
  const NodeValue den = emit(f, n, "stddev", NodeKind::Sqrt, {veps});
  NodeValue y = emit(f, n, "normalized", NodeKind::Div, {d, den});
  y = emit(f, n, "scaled", NodeKind::Mul, {y, n.input(1)});
  if (n.optionalInput(2))
    y = emit(f, n, "shifted", NodeKind::Add, {y, n.input(2)});
  return y;
}

NodeValue lowerBatchNorm(Function& f, Node& n) {
  if (extraResultsUsed(f, n) || n.input(0).dims().size() < 2)
    return {};
  for (size_t i = 1; i < 5; ++i)
    if (!isConstant(n.input(i)) || n.input(i).kind() != ElemKind::Float32)
      return {};
  const Shape& xd = n.input(0).dims();
  const int64_t c = xd[1];
  Shape pc(xd.size() - 1, 1); // [C, 1, ..., 1]: broadcasts along axis 1
  pc[0] = c;
  Tensor mul(ElemKind::Float32, pc), add(ElemKind::Float32, pc);
  const double eps = normOf(n.attrs()).epsilon;
  auto at = [&](size_t in, int64_t ch) { return n.input(in).node->payload().getAsDouble(ch); };
  for (int64_t ch = 0; ch < c; ++ch) {
    // The same float arithmetic as the BatchNormalization kernel.
    const float m = static_cast<float>(at(1, ch) / std::sqrt(at(4, ch) + eps));
    mul.data<float>()[ch] = m;
    add.data<float>()[ch] = static_cast<float>(at(2, ch)) - static_cast<float>(at(3, ch)) * m;
  }
  const NodeValue y = emit(f, n, "scale", NodeKind::Mul,
                           {n.input(0), makeConstant(f, n.name() + ".mul", std::move(mul))});
  return emit(f, n, "shift", NodeKind::Add,
              {y, makeConstant(f, n.name() + ".add", std::move(add))});
}

NodeValue lowerGlobalAveragePool(Function& f, Node& n) {
  const size_t rank = n.input(0).dims().size();
  return emit(f, n, "mean", NodeKind::ReduceMean, {n.input(0)}, reduceAttrs(2, rank));
}

/// ReduceMean over exactly the spatial axes of a rank >= 3 tensor, keeping them.
NodeValue lowerReduceMean(Function& f, Node& n) {
  const size_t rank = n.input(0).dims().size();
  const ReduceAttrs r = reduceOf(n.attrs());
  if (rank < 3 || !r.keepDims)
    return {};
  std::vector<int64_t> axes = r.axes;
  for (int64_t& ax : axes)
    ax = normalizeAxis(ax, rank);
  std::sort(axes.begin(), axes.end());
  if (axes != reduceOf(reduceAttrs(2, rank)).axes)
    return {};
  return emit(f, n, "gap", NodeKind::GlobalAveragePool, {n.input(0)});
}

/// max(0, min(1, alpha * x + beta)).
NodeValue hardSigmoidOf(Function& f, const Node& n, NodeValue x, double alpha, double beta) {
  const NodeValue ax = emit(f, n, "alpha_x", NodeKind::Mul, {x, scalar(f, n, "alpha", alpha)});
  const NodeValue s = emit(f, n, "plus_beta", NodeKind::Add, {ax, scalar(f, n, "beta", beta)});
  return emit(f, n, "clip", NodeKind::Clip, {s}, clipAttrs(0.0, 1.0));
}

NodeValue lowerHardSigmoid(Function& f, Node& n) {
  const UnaryAttrs u = unaryOf(n);
  return hardSigmoidOf(f, n, n.input(0), u.alpha, u.beta);
}

NodeValue lowerHardSwish(Function& f, Node& n) {
  const NodeValue hs = hardSigmoidOf(f, n, n.input(0), 1.0 / 6.0, 0.5);
  return emit(f, n, "mul", NodeKind::Mul, {n.input(0), hs});
}

NodeValue lowerSilu(Function& f, Node& n) {
  const NodeValue s = emit(f, n, "sigmoid", NodeKind::Sigmoid, {n.input(0)});
  return emit(f, n, "mul", NodeKind::Mul, {n.input(0), s});
}

NodeValue lowerGelu(Function& f, Node& n) {
  const NodeValue x = n.input(0);
  const NodeValue d = emit(f, n, "div", NodeKind::Div, {x, scalar(f, n, "sqrt2", std::sqrt(2.0))});
  const NodeValue e = emit(f, n, "erf", NodeKind::Erf, {d});
  const NodeValue a = emit(f, n, "add", NodeKind::Add, {e, scalar(f, n, "one", 1.0)});
  const NodeValue h = emit(f, n, "half_x", NodeKind::Mul, {x, scalar(f, n, "half", 0.5)});
  return emit(f, n, "mul", NodeKind::Mul, {h, a});
}

const std::map<NodeKind, LowerFn>& lowerings() {
  static const std::map<NodeKind, LowerFn> table = {
      {NodeKind::Gemm, lowerGemm},
      {NodeKind::LayerNormalization, lowerLayerNorm},
      {NodeKind::BatchNormalization, lowerBatchNorm},
      {NodeKind::GlobalAveragePool, lowerGlobalAveragePool},
      {NodeKind::ReduceMean, lowerReduceMean},
      {NodeKind::HardSigmoid, lowerHardSigmoid},
      {NodeKind::HardSwish, lowerHardSwish},
      {NodeKind::Silu, lowerSilu},
      {NodeKind::Gelu, lowerGelu},
  };
  return table;
}

/// Carries the fused activation of `n` (if any) over to its replacement `y`: as an
/// attribute when `y`'s node can carry it, else as an explicit Relu / Clip node.
NodeValue keepActivation(Function& f, const Node& n, NodeValue y) {
  const FusedActivation a = FusedActivation::of(n);
  if (!a.active())
    return y;
  if (canCarryActivation(y.node->kind()) && !FusedActivation::present(y.node->attrs())) {
    a.writeTo(y.node->attrs());
    return y;
  }
  if (a.kind == FusedActivation::Kind::Relu)
    return emit(f, n, "relu", NodeKind::Relu, {y});
  return emit(f, n, "clip", NodeKind::Clip, {y}, clipAttrs(a.lo, a.hi));
}

bool inputsPlainFloat(const Node& n) {
  for (const NodeValue& v : n.inputs())
    if (v && !isPlainFloat(v.type()))
      return false;
  return true;
}

} // namespace

std::vector<NodeKind> lowerableKinds() {
  std::vector<NodeKind> kinds;
  for (const auto& [k, _] : lowerings())
    kinds.push_back(k);
  return kinds;
}

size_t runLower(Function& f, const PassContext& ctx) {
  if (!ctx.backend)
    return 0;
  size_t lowered = 0;
  // Only the nodes present now: what a lowering creates is not lowered again (so
  // GlobalAveragePool <-> ReduceMean cannot ping-pong).
  for (Node* n : snapshot(f)) {
    auto it = lowerings().find(n->kind());
    if (it == lowerings().end() || !allPlainFloat(*n) || !inputsPlainFloat(*n) ||
        !ctx.backend->shouldLower(*n))
      continue;
    NodeValue y;
    try {
      y = it->second(f, *n);
    } catch (const Error& e) {
      throw Error(nodeRef(*n), std::string("lowering failed: ") + e.what());
    }
    if (!y)
      continue;
    f.replaceAllUsesOf(n->result(), keepActivation(f, *n, y));
    ++lowered;
  }
  if (lowered)
    tidy(f);
  return lowered;
}

} // namespace ember
