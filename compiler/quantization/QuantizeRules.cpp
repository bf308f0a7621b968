// The quantizer's per-kind rules (see ember/quantization/Quantize.h): one entry per node
// kind, each building the int8 form of a node or declining (the node then stays float).
// A rule checks everything that could fail (constant weights, known parameters,
// multipliers in range) BEFORE it creates a node.
#include "Quantizer.h"
#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/graph/OpInfo.h"
#include "ember/graph/ResizeNearest.h"
#include "ember/quantization/BilinearUpsample.h"
#include "ember/quantization/NormNumerics.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

namespace ember {
namespace quant {

namespace {

using K = NodeKind;

/// The parameters of every float operand in `ins` (nullopt if one is unknown or not
/// per tensor float32).
std::optional<std::vector<QuantParams>> operandParams(Quantizer& q,
                                                      const std::vector<NodeValue>& ins) {
  std::vector<QuantParams> out;
  for (const NodeValue& v : ins) {
    if (!v || v.type().kind != ElemKind::Float32)
      return std::nullopt;
    std::optional<QuantParams> p = q.paramsOf(v);
    if (!p)
      return std::nullopt;
    out.push_back(*p);
  }
  return out;
}

/// Whether `f` does not throw (a multiplier in range).
template <typename F> bool valid(F&& f) {
  try {
    f();
    return true;
  } catch (const Error&) {
    return false;
  }
}

/// A Constant's float payload, or nullptr.
const Tensor* floatConstant(const NodeValue& v) {
  if (!v || v.node->kind() != K::Constant || v.type().kind != ElemKind::Float32)
    return nullptr;
  return &v.node->payload();
}

/// The int8 form of a weighted product `kind` (Conv, Gemm, MatMul) of x with float
/// weights `w` (per channel along `wAxis`) and an optional float bias `b`, producing the
/// float value `y`; `wName` / `bName` name the new constants.
bool weightedCore(Quantizer& q, NodeKind kind, const std::string& name, const Attrs& attrs,
                  NodeValue x, NodeValue y, const Tensor& w, const Tensor* b, int wAxis,
                  const std::string& wName, const std::string& bName) {
  auto ps = operandParams(q, {x, y});
  if (!ps)
    return false;
  const QuantParams &xq = (*ps)[0], &yq = (*ps)[1];
  const int64_t channels = w.dims()[size_t(wAxis)];
  if (b && b->size() != channels)
    return false;
  Tensor w8 = quantizeWeights(w, wAxis);
  const std::vector<float> sw = w8.type().quant.scales;
  for (float s : sw)
    if (!valid([&] { productMultiplier(xq.scales[0], s, yq.scales[0]); }))
      return false;
  std::vector<NodeValue> ins = {q.int8Of(x), q.constant(wName + "_int8", std::move(w8))->result()};
  if (b)
    ins.push_back(
        q.constant(bName + "_int32", quantizeBias(b->reshaped({channels}), xq.scales[0], sw))
            ->result());
  Node* made = q.createInt8(kind, name, ins, attrs, {int8Type(y.dims(), yq)});
  q.setInt8(y, made->result());
  return true;
}

/// Conv, Gemm and MatMul: int8 input, per-channel int8 weights along `wAxis`, int32 bias.
bool weightedProduct(const Node& n, Quantizer& q, size_t biasIndex, int wAxis) {
  const Tensor* w = floatConstant(n.input(1));
  const NodeValue biasV = biasIndex ? n.optionalInput(biasIndex) : NodeValue();
  const Tensor* b = biasIndex ? floatConstant(biasV) : nullptr;
  if (!w || (biasV && !b))
    return false;
  return weightedCore(q, n.kind(), n.name(), n.attrs(), n.input(0), const_cast<Node&>(n).result(),
                      *w, b, wAxis, n.input(1).node->name(),
                      biasV ? biasV.node->name() : std::string());
}

/// A BatchNormalization with constant parameters over N x C x spatial becomes a
/// depthwise 1x1 int8 Conv: w[c] = scale / sqrt(var + eps), b[c] = bias - mean * w[c]
/// (double, stored float32), group = C (section 4.1).
bool batchNormRule(const Node& n, Quantizer& q) {
  const NodeValue x = n.input(0);
  const size_t rank = x.dims().size();
  if (rank < 3 || rank > 5 || n.numResults() != 1)
    return false;
  const Tensor* p[4];
  for (size_t i = 0; i < 4; ++i)
    if (!(p[i] = floatConstant(n.input(i + 1))))
      return false;
  const int64_t c = x.dims()[1];
  const double eps = normOf(n.attrs()).epsilon;
  Shape wd = {c, 1};
  wd.resize(rank, 1);
  Tensor w(ElemKind::Float32, wd), b(ElemKind::Float32, {c});
  for (int64_t k = 0; k < c; ++k) {
    const double s =
        double(p[0]->data<float>()[k]) / std::sqrt(double(p[3]->data<float>()[k]) + eps);
    w.data<float>()[k] = static_cast<float>(s);
    b.data<float>()[k] =
        static_cast<float>(double(p[1]->data<float>()[k]) - double(p[2]->data<float>()[k]) * s);
  }
  Attrs a;
  a.set("group", c);
  a.set("kernel_shape", std::vector<int64_t>(rank - 2, 1));
  a.set("pads", std::vector<int64_t>(2 * (rank - 2), 0));
  return weightedCore(q, K::Conv, n.name(), a, x, const_cast<Node&>(n).result(), w, &b, 0,
                      n.name() + "_w", n.name() + "_b");
}

bool convRule(const Node& n, Quantizer& q) {
  return weightedProduct(n, q, 2, 0);
}

bool gemmRule(const Node& n, Quantizer& q) {
  const GemmAttrs g = gemmOf(n.attrs());
  if (!g.normalized())
    return false;
  return weightedProduct(n, q, 2, g.transB ? 0 : 1);
}

/// MatMul of two activations (section 4.1): both per tensor with their own zero points,
/// B [K, N] or batched with A's batch dimensions (the forms every executor takes).
bool activationMatMul(const Node& n, Quantizer& q) {
  if (!isUnbroadcastMatMul(n.input(0).dims(), n.input(1).dims()))
    return false;
  const NodeValue y = const_cast<Node&>(n).result();
  auto ps = operandParams(q, {n.input(0), n.input(1), y});
  if (!ps || !valid([&] {
        productMultiplier((*ps)[0].scales[0], (*ps)[1].scales[0], (*ps)[2].scales[0]);
      }))
    return false;
  Node* made = q.createInt8(K::MatMul, n.name(), {q.int8Of(n.input(0)), q.int8Of(n.input(1))},
                            n.attrs(), {int8Type(y.dims(), (*ps)[2])});
  q.setInt8(y, made->result());
  return true;
}

bool matMulRule(const Node& n, Quantizer& q) {
  if (!floatConstant(n.input(1)))
    return activationMatMul(n, q);
  if (n.input(1).dims().size() != 2)
    return false;
  return weightedProduct(n, q, 0, 1);
}

/// Div by a float scalar constant c: the int8 Mul by 1/c (section 4.3), the reciprocal a
/// constant quantized over its own range, so it is code 127 or -128 exactly.
bool divRule(const Node& n, Quantizer& q) {
  const Tensor* c = floatConstant(n.input(1));
  if (!c || c->size() != 1)
    return false;
  const double r = 1.0 / double(c->data<float>()[0]);
  const NodeValue y = const_cast<Node&>(n).result();
  auto ps = operandParams(q, {n.input(0), y});
  if (!std::isfinite(r) || r == 0 || !ps)
    return false;
  Tensor rt(ElemKind::Float32, c->dims());
  rt.data<float>()[0] = static_cast<float>(r);
  const QuantParams rq = // the range [r, r], which chooseActivationParams widens to hold 0
      chooseActivationParams(rt.data<float>()[0], rt.data<float>()[0]);
  if (!valid([&] { productMultiplier((*ps)[0].scales[0], rq.scales[0], (*ps)[1].scales[0]); }))
    return false;
  Node* rc = q.constant(n.input(1).node->name() + "_reciprocal_q", quantizeTensor(rt, rq));
  Node* made = q.createInt8(K::Mul, n.name(), {q.int8Of(n.input(0)), rc->result()}, {},
                            {int8Type(y.dims(), (*ps)[1])});
  q.setInt8(y, made->result());
  return true;
}

/// Whether `x` is int8 already or a float graph input with calibrated parameters, which
/// is then quantized at the input: what Softmax, LayerNormalization and data movement
/// take (a model's first LayerNorm or input transpose then runs in int8, on the NPU too).
bool int8OrInput(const NodeValue& x, Quantizer& q) {
  return q.hasInt8(x) || (x.node->kind() == K::Placeholder && x.kind() == ElemKind::Float32 &&
                          q.paramsOf(x).has_value());
}

/// The kinds that move codes unchanged: movingRule's, in the rule table too.
constexpr NodeKind kMovingKinds[] = {K::Reshape,      K::Transpose,   K::Slice,  K::Pad,
                                     K::Gather,       K::Split,       K::Expand, K::Tile,
                                     K::DepthToSpace, K::SpaceToDepth};

bool isMoving(NodeKind k) {
  return std::find(std::begin(kMovingKinds), std::end(kMovingKinds), k) != std::end(kMovingKinds);
}

/// Whether a reader of `v`, through data movement, is a kind with a quantization rule
/// that computes (so an int8 `v` may serve it): otherwise quantizing a float graph input
/// only to move it would add error before a float node.
bool feedsInt8Compute(const NodeValue& v, const Quantizer& q) {
  for (const Node* u : q.readersOf(v)) {
    if (!isMoving(u->kind()))
      return findRule(u->kind()) != nullptr;
    for (unsigned r = 0; r < u->numResults(); ++r)
      if (feedsInt8Compute(NodeValue(const_cast<Node*>(u), r), q))
        return true;
  }
  return false;
}

/// Softmax (section 4.10): the input's codes through the 2^16-scaled exp table; the
/// result has the parameters of the range [0, 2^-k] that holds its calibrated largest
/// value (softmaxResultParams). Only when the input already is int8 or is a graph input:
/// quantizing a value a float node computed just to normalise it would add error and a
/// node.
bool softmaxRule(const Node& n, Quantizer& q) {
  if (!int8OrInput(n.input(0), q) || n.input(0).dims().empty())
    return false;
  const NodeValue y = const_cast<Node&>(n).result();
  const std::optional<QuantParams> cal = q.paramsOf(y); // calibrated: lo = 0, zp = -128
  const QuantParams yq = softmaxResultParams(
      cal ? double(cal->scales[0]) * (127.0 - double(cal->zeroPoints[0])) : 1.0);
  Node* made = q.createInt8(K::Softmax, n.name(), {q.int8Of(n.input(0))}, n.attrs(),
                            {int8Type(y.dims(), yq)});
  q.setInt8(y, made->result());
  return true;
}

/// LayerNormalization with a constant float scale and bias (section 4.11) whose Mean and
/// InvStdDev results nothing reads (the int8 form leaves them zero); only when the input
/// already is int8 or is a graph input, as Softmax. ChannelLayerNormalization likewise,
/// its lines being each position's channels.
bool layerNormRule(const Node& n, Quantizer& q) {
  const NodeValue x = n.input(0);
  const Tensor* gamma = floatConstant(n.input(1));
  const NodeValue betaV = n.optionalInput(2);
  const Tensor* beta = floatConstant(betaV);
  const NodeValue y = const_cast<Node&>(n).result();
  auto ps = operandParams(q, {x, y});
  if (!int8OrInput(x, q) || x.dims().empty() || !gamma || (betaV && !beta) || !ps)
    return false;
  for (unsigned r = 1; r < n.numResults(); ++r)
    if (q.isUsed(NodeValue(const_cast<Node*>(&n), r)))
      return false;
  const NormAttrs na = normOf(n.attrs());
  const int64_t count = layerNormLines(n.kind(), x.dims(), n.attrs()).len;
  if (!valid([&] { // also refuses a scale or bias of other than count values or one
        layerNormTables((*ps)[0].scales[0], (*ps)[1].scales[0], count, na.epsilon,
                        gamma->data<float>(), size_t(gamma->size()),
                        beta ? beta->data<float>() : nullptr, beta ? size_t(beta->size()) : 0);
      }))
    return false;
  std::vector<NodeValue> ins = {q.int8Of(x), q.origOf(n.input(1))};
  if (betaV)
    ins.push_back(q.origOf(betaV));
  std::vector<Type> types = n.resultTypes();
  types[0] = int8Type(y.dims(), (*ps)[1]);
  Node* made = q.createInt8(n.kind(), n.name(), ins, n.attrs(), types);
  q.setInt8(y, made->result());
  return true;
}

/// Add and Mul: both operands int8 (a float constant operand is quantized), own params.
bool binaryRule(const Node& n, Quantizer& q) {
  const NodeValue y = const_cast<Node&>(n).result();
  auto ps = operandParams(q, {n.input(0), n.input(1), y});
  if (!ps)
    return false;
  const float sa = (*ps)[0].scales[0], sb = (*ps)[1].scales[0], sy = (*ps)[2].scales[0];
  const bool ok = n.kind() == K::Add ? valid([&] { addMultipliers(sa, sb, sy); })
                                     : valid([&] { productMultiplier(sa, sb, sy); });
  if (!ok)
    return false;
  Node* made = q.createInt8(n.kind(), n.name(), {q.int8Of(n.input(0)), q.int8Of(n.input(1))},
                            n.attrs(), {int8Type(y.dims(), (*ps)[2])});
  q.setInt8(y, made->result());
  return true;
}

/// Average pools: own parameters (section 4.5).
bool averageRule(const Node& n, Quantizer& q) {
  const NodeValue y = const_cast<Node&>(n).result();
  auto ps = operandParams(q, {n.input(0), y});
  if (!ps || !valid([&] { averageMultiplier((*ps)[0].scales[0], (*ps)[1].scales[0], 1); }))
    return false;
  Node* made = q.createInt8(n.kind(), n.name(), {q.int8Of(n.input(0))}, n.attrs(),
                            {int8Type(y.dims(), (*ps)[1])});
  q.setInt8(y, made->result());
  return true;
}

/// ReduceMean of an int8 value (section 4.5: the average over the reduced elements),
/// own parameters; float values stay float, as Softmax's.
bool reduceMeanRule(const Node& n, Quantizer& q) {
  const NodeValue y = const_cast<Node&>(n).result();
  auto ps = operandParams(q, {n.input(0), y});
  if (!q.hasInt8(n.input(0)) || n.numInputs() != 1 || !ps || y.type().size() == 0)
    return false;
  const int64_t count = n.input(0).type().size() / y.type().size();
  if (count < 1 ||
      !valid([&] { averageMultiplier((*ps)[0].scales[0], (*ps)[1].scales[0], count); }))
    return false;
  Node* made = q.createInt8(K::ReduceMean, n.name(), {q.int8Of(n.input(0))}, n.attrs(),
                            {int8Type(y.dims(), (*ps)[1])});
  q.setInt8(y, made->result());
  return true;
}

/// Max pools, Relu, Clip: codes keep the input's parameters (section 4.4).
bool sameParamsRule(const Node& n, Quantizer& q) {
  auto ps = operandParams(q, {n.input(0)});
  if (!ps)
    return false;
  const NodeValue x8 = q.int8Of(n.input(0));
  const NodeValue y = const_cast<Node&>(n).result();
  Node* made =
      q.createInt8(n.kind(), n.name(), {x8}, n.attrs(), {int8Type(y.dims(), x8.type().quant)});
  q.setInt8(y, made->result());
  return true;
}

/// Data movement: int8 when the input already is (else a float move is cheaper than a
/// QuantizeLinear), or when it is a float graph input moved before anything computes on it
/// in int8 (a transformer's input transposed to sequence-first): quantized at the input,
/// the codes move exactly, and the moved value's range is the input's. Every result keeps
/// the input's parameters. Operands after the first (indices) are passed as they are.
bool movingRule(const Node& n, Quantizer& q) {
  const NodeValue x = n.input(0);
  auto feeds = [&] {
    for (unsigned r = 0; r < n.numResults(); ++r)
      if (feedsInt8Compute(NodeValue(const_cast<Node*>(&n), r), q))
        return true;
    return false;
  };
  if (!q.hasInt8(x) && !(int8OrInput(x, q) && feeds()))
    return false;
  if (n.kind() == K::Pad && n.optionalInput(1))
    return false; // a run-time pad value
  const NodeValue x8 = q.int8Of(n.input(0));
  std::vector<NodeValue> ins = {x8};
  for (size_t i = 1; i < n.numInputs(); ++i)
    ins.push_back(n.input(i) ? q.origOf(n.input(i)) : NodeValue());
  std::vector<Type> types;
  for (const Type& t : n.resultTypes())
    types.push_back(int8Type(t.dims, x8.type().quant));
  Node* made = q.createInt8(n.kind(), n.name(), ins, n.attrs(), types);
  for (unsigned r = 0; r < n.numResults(); ++r)
    q.setInt8(NodeValue(const_cast<Node*>(&n), r), made->result(r));
  return true;
}

/// Resize by nearest neighbour by whole factors (section 4.4): picks codes, so it moves
/// them as data movement does, with the input's parameters; a bilinear upsampling by whole
/// factors (quant::bilinearUpsampleFactors) keeps them too (its outputs are convex
/// combinations of its inputs). Other Resizes stay float.
bool nearestResizeRule(const Node& n, Quantizer& q) {
  if (n.numInputs() != 1 ||
      !quant::isInt8Resize(n.attrs(), n.input(0).dims(), n.resultType(0).dims))
    return false;
  return movingRule(n, q);
}

/// Concat: own parameters; inputs of other parameters are Rescaled (section 4.7).
bool concatRule(const Node& n, Quantizer& q) {
  const NodeValue y = const_cast<Node&>(n).result();
  std::vector<NodeValue> all(n.inputs());
  all.push_back(y);
  auto ps = operandParams(q, all);
  if (!ps)
    return false;
  const QuantParams& yq = ps->back();
  for (size_t i = 0; i + 1 < ps->size(); ++i)
    if (!valid([&] { averageMultiplier((*ps)[i].scales[0], yq.scales[0], 1); }))
      return false;
  std::vector<NodeValue> ins;
  for (size_t i = 0; i < n.numInputs(); ++i)
    ins.push_back(q.rescaled(q.int8Of(n.input(i)), yq, n.name() + "_rescale" + std::to_string(i)));
  Node* made = q.createInt8(n.kind(), n.name(), ins, n.attrs(), {int8Type(y.dims(), yq)});
  q.setInt8(y, made->result());
  return true;
}

/// Elementwise functions as a 256-entry table (section 4.6).
bool lutRule(const Node& n, Quantizer& q) {
  std::function<double(double)> f = lutFunctionOf(n);
  const NodeValue y = const_cast<Node&>(n).result();
  auto ps = f ? operandParams(q, {n.input(0), y}) : std::nullopt;
  if (!ps)
    return false;
  const NodeValue x8 = q.int8Of(n.input(0));
  const std::vector<int8_t> table = buildLut(f, x8.type().quant, (*ps)[1]);
  Node* t = q.constant(n.name() + "_table", Tensor::fromVector<int8_t>({256}, table));
  Attrs a;
  a.set("function", std::string(n.kindName()));
  Node* made = q.createInt8(K::Lut, n.name(), {x8, t->result()}, a, {int8Type(y.dims(), (*ps)[1])});
  q.setInt8(y, made->result());
  return true;
}

/// PRelu with a float constant slope (section 4.12): one slope for every element becomes a
/// Lut of x < 0 ? a x : x (section 4.6); a slope per channel (axis 1) an int8 PRelu that
/// keeps the float slope as its operand.
bool preluRule(const Node& n, Quantizer& q) {
  const Tensor* slope = floatConstant(n.input(1));
  const NodeValue x = n.input(0), y = const_cast<Node&>(n).result();
  if (!slope || slope->size() < 1 || y.dims() != x.dims())
    return false;
  auto ps = operandParams(q, {x, y});
  if (!ps)
    return false;
  const float* sp = slope->data<float>();
  const bool scalar = std::all_of(sp, sp + slope->size(), [&](float v) { return v == sp[0]; });
  const NodeValue x8 = q.int8Of(x);
  Node* made = nullptr;
  if (scalar) {
    const double a = sp[0];
    const std::vector<int8_t> table =
        buildLut([a](double v) { return v < 0 ? a * v : v; }, x8.type().quant, (*ps)[1]);
    Node* t = q.constant(n.name() + "_table", Tensor::fromVector<int8_t>({256}, table));
    Attrs at;
    at.set("function", std::string(n.kindName()));
    made = q.createInt8(K::Lut, n.name(), {x8, t->result()}, at, {int8Type(y.dims(), (*ps)[1])});
  } else {
    const std::vector<float> slopes = preluChannelSlopes(x.dims(), *slope);
    if (slopes.empty() ||
        !valid([&] { preluMultipliers((*ps)[0].scales[0], (*ps)[1].scales[0], slopes); }))
      return false;
    made = q.createInt8(K::PRelu, n.name(), {x8, q.origOf(n.input(1))}, n.attrs(),
                        {int8Type(y.dims(), (*ps)[1])});
  }
  q.setInt8(y, made->result());
  return true;
}

/// A rule and its one-line description. Whether it chooses its output's parameters or
/// keeps its input's is the kind's OpTrait::KeepsQuantization.
struct RuleEntry {
  RuleFn fn;
  const char* doc;
};

const std::map<NodeKind, RuleEntry>& rules() {
  static const std::map<NodeKind, RuleEntry> table = [] {
    std::map<NodeKind, RuleEntry> t;
    t[K::Conv] = {convRule, "int8 x, weights per channel (axis 0), int32 bias; constant W/B only"};
    t[K::Gemm] = {gemmRule, "int8 a, constant B per channel (axis 1, or 0 with transB), int32 "
                            "c of N values; alpha = beta = 1, transA = 0"};
    t[K::MatMul] = {matMulRule, "int8 a, constant 2-D B per channel (axis 1); or B an int8 "
                                "activation (2-D, or batched as a), own params"};
    t[K::Div] = {divRule, "by a scalar constant: int8 Mul by its reciprocal, own params"};
    t[K::Softmax] = {softmaxRule,
                     "when its input is int8 or a graph input: exp table of the input scale, "
                     "result params of [0, 2^-k], the smallest power of two holding the "
                     "calibrated largest probability (numerics.md 4.10)"};
    t[K::LayerNormalization] = {layerNormRule,
                                "when its input is int8 or a graph input: constant float "
                                "scale/bias, integer statistics, own params"};
    t[K::ChannelLayerNormalization] = {layerNormRule,
                                       "when its input is int8 or a graph input: constant "
                                       "float scale/bias, integer statistics per position, "
                                       "own params"};
    t[K::BatchNormalization] = {batchNormRule,
                                "constant parameters over N x C x spatial: a "
                                "depthwise 1x1 int8 Conv (scale folded per channel)"};
    t[K::Add] = {binaryRule, "rescaled add of two int8 values (constants quantized), own params"};
    t[K::Mul] = {binaryRule, "int8 product, own params"};
    for (K k : {K::AveragePool, K::GlobalAveragePool})
      t[k] = {averageRule, "int8 average, own params"};
    t[K::ReduceMean] = {reduceMeanRule, "when its input is int8: the int8 average over the "
                                        "reduced axes, own params"};
    for (K k : {K::MaxPool, K::GlobalMaxPool, K::Relu, K::Clip})
      t[k] = {sameParamsRule, "on the codes, the input's params"};
    t[K::Concat] = {concatRule, "own params; inputs of other params Rescaled"};
    t[K::Resize] = {nearestResizeRule,
                    "nearest by whole factors (rank <= 4, at most two axes): moves codes; "
                    "bilinear of NCHW by whole H, W factors <= 5 (half_pixel): integer weights, "
                    "one requantization; when its input is int8 or a graph input; the input's "
                    "params"};
    for (K k : kMovingKinds)
      t[k] = {movingRule,
              "moves codes when its input is int8 or a graph input; the input's params"};
    t[K::PRelu] = {preluRule, "constant float slope: one value a Lut, one per channel (axis 1) "
                              "an int8 PRelu with the float slope, own params"};
    for (K k : {K::Sigmoid, K::Tanh, K::HardSigmoid, K::HardSwish, K::Silu, K::Gelu, K::Erf, K::Exp,
                K::Softplus, K::Softsign, K::LeakyRelu, K::Elu, K::Selu, K::Celu,
                K::ThresholdedRelu, K::Neg, K::Abs})
      t[k] = {lutRule, "Lut with a 256-entry table, own params"};
    return t;
  }();
  return table;
}

} // namespace

const RuleFn* findRule(NodeKind k) {
  auto it = rules().find(k);
  return it == rules().end() ? nullptr : &it->second.fn;
}

bool ownsOutputParams(NodeKind k) {
  return rules().count(k) != 0 && !hasTrait(k, OpTrait::KeepsQuantization);
}

std::vector<QuantizeRuleInfo> quantizeRules() {
  std::vector<QuantizeRuleInfo> out;
  for (const auto& [k, e] : rules())
    out.push_back({k, e.doc});
  return out;
}

} // namespace quant
} // namespace ember
