// Type inference of the neural-network node kinds: convolutions, pools, normalisations,
// matrix products and the softmax family.
//
// Convolution and pooling windows use the canonical attributes the ONNX importer
// resolves (kernel_shape, strides, pads = all begins then all ends, dilations, group,
// ceil_mode, output_padding). Absent attributes take the ONNX defaults, so hand-built
// graphs may omit them.
#include "ember/graph/AttrViews.h"
#include "ember/graph/Einsum.h"
#include "ember/graph/InferUtil.h"
#include "ember/graph/OpInfo.h"

namespace ember {

namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

/// Output extent of one spatial dimension of a convolution or pool.
int64_t windowOutDim(int64_t in, const WindowAttrs& w, size_t d, bool ceilMode) {
  const size_t nsp = w.kernel.size();
  const std::string what = "spatial dimension " + str(int64_t(d)) + ": the padded input";
  const int64_t padded = checkedAdd(checkedAdd(in, w.pads[d], what), w.pads[d + nsp], what);
  const int64_t extent =
      checkedMul(w.kernel[d] - 1, w.dilations[d], "the window extent (kernel x dilation)") + 1;
  if (padded < extent)
    inferError("spatial dimension " + str(int64_t(d)) + ": window of extent " + str(extent) +
               " is larger than the padded input (" + str(padded) + ")");
  const int64_t span = padded - extent, s = w.strides[d];
  int64_t out = (ceilMode ? span / s + (span % s != 0) : span / s) + 1;
  // As PyTorch and ONNX: the last window must start inside the input or left padding.
  if (ceilMode && (out - 1) * s >= in + w.pads[d])
    --out;
  return out;
}

/// Checks that x is float32 (or int8: a quantized value, docs/numerics.md section 4)
/// with rank 3..5 (N, C, 1 to 3 spatial dims).
void requireImage(const NodeValue& x, const char* operand) {
  requireKind(x, {ElemKind::Float32, ElemKind::Int8}, operand);
  if (x.dims().size() < 3 || x.dims().size() > 5)
    inferError(std::string(operand) + " has shape " + shapeToString(x.dims()) +
               ", expected N x C x 1 to 3 spatial dimensions");
}

/// Checks an optional per-channel vector operand of `channels` elements and kind `kind`.
void requireChannelVector(const NodeValue& v, int64_t channels, const char* operand,
                          ElemKind kind = ElemKind::Float32) {
  if (!v)
    return;
  requireKind(v, {kind}, operand);
  if (v.dims() != Shape{channels})
    inferError(std::string(operand) + " has shape " + shapeToString(v.dims()) + ", expected [" +
               str(channels) + "]");
}

std::vector<Type> convInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  const NodeValue &x = in[0], &w = in[1];
  requireImage(x, "input");
  // Int8 (docs/numerics.md 4.1): int8 input and filter, int32 bias, int8 result.
  const bool q = x.kind() == ElemKind::Int8;
  requireKind(w, {q ? ElemKind::Int8 : ElemKind::Float32}, "filter");
  const size_t nsp = x.dims().size() - 2;
  if (w.dims().size() != nsp + 2)
    inferError("filter has shape " + shapeToString(w.dims()) + ", expected rank " +
               str(int64_t(nsp + 2)) + " like input " + shapeToString(x.dims()));
  const int64_t group = groupOf(a), c = x.dims()[1], m = w.dims()[0];
  if (group < 1 || c % group != 0 || m % group != 0)
    inferError("group " + str(group) + " does not divide input channels " + str(c) +
               " and output channels " + str(m));
  if (w.dims()[1] * group != c)
    inferError("input has " + str(c) + " channels but filter " + shapeToString(w.dims()) +
               " with group " + str(group) + " expects " + str(w.dims()[1] * group));
  requireChannelVector(in.size() > 2 ? in[2] : NodeValue(), m, "bias",
                       q ? ElemKind::Int32 : ElemKind::Float32);
  const Shape ks(w.dims().begin() + 2, w.dims().end());
  const WindowAttrs win = windowOf(a, nsp, &ks);
  Shape out = {x.dims()[0], m};
  for (size_t d = 0; d < nsp; ++d)
    out.push_back(windowOutDim(x.dims()[d + 2], win, d, false));
  return {Type(x.kind(), out)};
}

std::vector<Type> convTransposeInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  const NodeValue &x = in[0], &w = in[1];
  requireImage(x, "input");
  requireKind(x, {ElemKind::Float32}, "input");
  requireKind(w, {ElemKind::Float32}, "filter");
  const size_t nsp = x.dims().size() - 2;
  if (w.dims().size() != nsp + 2)
    inferError("filter has shape " + shapeToString(w.dims()) + ", expected rank " +
               str(int64_t(nsp + 2)) + " like input " + shapeToString(x.dims()));
  const int64_t group = groupOf(a), c = x.dims()[1];
  if (group < 1 || c % group != 0)
    inferError("group " + str(group) + " does not divide input channels " + str(c));
  if (w.dims()[0] != c)
    inferError("input has " + str(c) + " channels but filter " + shapeToString(w.dims()) +
               " expects " + str(w.dims()[0]));
  const int64_t m = w.dims()[1] * group;
  requireChannelVector(in.size() > 2 ? in[2] : NodeValue(), m, "bias");
  const Shape ks(w.dims().begin() + 2, w.dims().end());
  const WindowAttrs win = windowOf(a, nsp, &ks);
  const std::vector<int64_t>& outPad = win.outputPadding;
  Shape out = {x.dims()[0], m};
  for (size_t d = 0; d < nsp; ++d) {
    const std::string what = "spatial dimension " + str(int64_t(d)) + " of the result";
    const int64_t full = checkedAdd(
        checkedAdd(checkedMul(win.strides[d], x.dims()[d + 2] - 1, what), outPad[d], what),
        checkedMul(win.kernel[d] - 1, win.dilations[d], what) + 1, what);
    const int64_t o = checkedAdd(full, -checkedAdd(win.pads[d], win.pads[d + nsp], what), what);
    if (o < 1)
      inferError("spatial dimension " + str(int64_t(d)) + " of the result would be " + str(o));
    out.push_back(o);
  }
  return {Type(ElemKind::Float32, out)};
}

std::vector<Type> poolInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  const NodeValue& x = in[0];
  requireImage(x, "input");
  const size_t nsp = x.dims().size() - 2;
  const WindowAttrs win = windowOf(a, nsp);
  const bool ceilMode = win.ceilMode;
  for (size_t d = 0; d < nsp; ++d)
    if (win.pads[d] >= win.kernel[d] * win.dilations[d] ||
        win.pads[d + nsp] >= win.kernel[d] * win.dilations[d])
      inferError("pads " + shapeToString(win.pads) + " must be smaller than the kernel " +
                 shapeToString(win.kernel));
  Shape out = {x.dims()[0], x.dims()[1]};
  for (size_t d = 0; d < nsp; ++d)
    out.push_back(windowOutDim(x.dims()[d + 2], win, d, ceilMode));
  return {Type(x.kind(), out, x.type().quant)};
}

std::vector<Type> globalPoolInfer(const std::vector<NodeValue>& in, const Attrs&) {
  requireImage(in[0], "input");
  Shape out = in[0].dims();
  for (size_t d = 2; d < out.size(); ++d)
    out[d] = 1;
  return {Type(in[0].kind(), out, in[0].type().quant)};
}

std::vector<Type> batchNormInfer(const std::vector<NodeValue>& in, const Attrs&) {
  const NodeValue& x = in[0];
  requireKind(x, {ElemKind::Float32}, "input");
  if (x.dims().size() < 2)
    inferError("input has shape " + shapeToString(x.dims()) + ", expected at least N x C");
  const int64_t c = x.dims()[1];
  const char* names[] = {"scale", "bias", "mean", "var"};
  for (size_t i = 1; i < 5; ++i)
    requireChannelVector(in[i], c, names[i - 1]);
  return {x.type()};
}

std::vector<Type> instanceNormInfer(const std::vector<NodeValue>& in, const Attrs&) {
  const NodeValue& x = in[0];
  requireKind(x, {ElemKind::Float32}, "input");
  if (x.dims().size() < 3)
    inferError("input has shape " + shapeToString(x.dims()) + ", expected N x C x D1 ...");
  requireChannelVector(in[1], x.dims()[1], "scale");
  requireChannelVector(in[2], x.dims()[1], "bias");
  return {x.type()};
}

/// A normalisation's float scale and bias (inputs 1 and 2, each optional) must broadcast
/// to `shape`, named `what` in the error.
void checkNormParams(const std::vector<NodeValue>& in, const Shape& shape, const char* what) {
  const char* names[] = {"scale", "bias"};
  for (size_t i = 1; i < 3 && i < in.size(); ++i) {
    if (!in[i])
      continue;
    requireKind(in[i], {ElemKind::Float32}, names[i - 1]);
    if (!broadcastsTo(in[i].dims(), shape))
      inferError(std::string(names[i - 1]) + " of shape " + shapeToString(in[i].dims()) +
                 " does not broadcast to " + what + " " + shapeToString(shape));
  }
}

// Results: Y, Mean and InvStdDev (the latter two of shape dims[:axis] + ones).
std::vector<Type> layerNormInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  const NodeValue& x = in[0];
  // Int8 (docs/numerics.md 4.11): int8 input and result, float scale and bias.
  requireKind(x, {ElemKind::Float32, ElemKind::Int8}, "input");
  if (x.dims().empty())
    inferError("input must have rank >= 1");
  const int64_t axis = normalizeAxis(normOf(a).axis, x.dims().size());
  checkNormParams(in, Shape(x.dims().begin() + axis, x.dims().end()), "the normalised shape");
  Shape stats = x.dims();
  for (size_t d = static_cast<size_t>(axis); d < stats.size(); ++d)
    stats[d] = 1;
  return {x.type(), Type(ElemKind::Float32, stats), Type(ElemKind::Float32, stats)};
}

// One result, Y: the scale and bias are per channel (they broadcast to [C]).
std::vector<Type> channelLayerNormInfer(const std::vector<NodeValue>& in, const Attrs&) {
  const NodeValue& x = in[0];
  // Int8 (docs/numerics.md 4.11, the line being one position's channels).
  requireKind(x, {ElemKind::Float32, ElemKind::Int8}, "input");
  if (x.dims().size() < 2)
    inferError("input has shape " + shapeToString(x.dims()) + ", expected N x C x ...");
  checkNormParams(in, Shape{x.dims()[1]}, "the channels");
  return {x.type()};
}

std::vector<Type> lrnInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  requireImage(in[0], "input");
  requireKind(in[0], {ElemKind::Float32}, "input");
  if (lrnOf(a).size < 1)
    inferError("attribute size must be >= 1");
  return {in[0].type()};
}

std::vector<Type> matMulInfer(const std::vector<NodeValue>& in, const Attrs&) {
  // Int8 (docs/numerics.md 4.1): int8 operands, int8 result.
  requireKind(in[0], {ElemKind::Float32, ElemKind::Int8}, "a");
  requireKind(in[1], {in[0].kind()}, "b");
  Shape a = in[0].dims(), b = in[1].dims();
  if (a.empty() || b.empty())
    inferError("operands must have rank >= 1");
  const bool vecA = a.size() == 1, vecB = b.size() == 1;
  if (vecA)
    a.insert(a.begin(), 1);
  if (vecB)
    b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), kb = b[b.size() - 2], n = b.back();
  if (k != kb)
    inferError("inner dimensions differ: a " + shapeToString(in[0].dims()) + ", b " +
               shapeToString(in[1].dims()));
  Shape batch = broadcastShapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!vecA)
    batch.push_back(m);
  if (!vecB)
    batch.push_back(n);
  return {Type(in[0].kind(), batch)};
}

std::vector<Type> gemmInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  // Int8 (docs/numerics.md 4.1): int8 a and b, int32 c, int8 result.
  const bool q = in[0].kind() == ElemKind::Int8;
  requireKind(in[0], {ElemKind::Float32, ElemKind::Int8}, "a");
  requireKind(in[1], {in[0].kind()}, "b");
  requireRank(in[0], 2, "a");
  requireRank(in[1], 2, "b");
  const GemmAttrs g = gemmOf(a);
  const bool ta = g.transA, tb = g.transB;
  const int64_t m = in[0].dims()[ta ? 1 : 0], k = in[0].dims()[ta ? 0 : 1];
  const int64_t kb = in[1].dims()[tb ? 1 : 0], n = in[1].dims()[tb ? 0 : 1];
  if (k != kb)
    inferError("inner dimensions differ: a " + shapeToString(in[0].dims()) +
               (ta ? " (transposed)" : "") + ", b " + shapeToString(in[1].dims()) +
               (tb ? " (transposed)" : ""));
  const Shape out = {m, n};
  if (in.size() > 2 && in[2]) {
    requireKind(in[2], {q ? ElemKind::Int32 : ElemKind::Float32}, "c");
    if (!broadcastsTo(in[2].dims(), out))
      inferError("c of shape " + shapeToString(in[2].dims()) + " does not broadcast to " +
                 shapeToString(out));
  }
  return {Type(in[0].kind(), out)};
}

/// The result of Softmax, LogSoftmax and Hardmax: the input's type.
std::vector<Type> softmaxShape(const std::vector<NodeValue>& in, const Attrs& a) {
  if (in[0].dims().empty())
    inferError("input must have rank >= 1");
  normalizeAxis(softmaxOf(a).axis, in[0].dims().size());
  return {in[0].type()};
}

std::vector<Type> softmaxInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  requireKind(in[0], {ElemKind::Float32}, "input");
  return softmaxShape(in, a);
}

/// Softmax also has an int8 form (docs/numerics.md 4.10); LogSoftmax and Hardmax do not.
std::vector<Type> softmaxInt8Infer(const std::vector<NodeValue>& in, const Attrs& a) {
  requireKind(in[0], {ElemKind::Float32, ElemKind::Int8}, "input");
  return softmaxShape(in, a);
}

std::vector<Type> nllInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  requireKind(in[0], wideFloatKinds(), "input");
  requireKind(in[1], {ElemKind::Int32, ElemKind::Int64}, "target");
  const Shape& x = in[0].dims();
  const Shape& t = in[1].dims();
  if (x.size() < 2)
    inferError("input " + shapeToString(x) + " must be [N, C, d...]");
  Shape want = x;
  want.erase(want.begin() + 1);
  if (t != want)
    inferError("target " + shapeToString(t) + " must be " + shapeToString(want) + " for input " +
               shapeToString(x));
  if (in.size() > 2 && in[2]) {
    requireKind(in[2], {in[0].kind()}, "weight");
    if (in[2].dims() != Shape{x[1]})
      inferError("weight " + shapeToString(in[2].dims()) + " must be [" + std::to_string(x[1]) +
                 "]");
  }
  const std::string r = nllLossOf(a).reduction;
  if (r != "none" && r != "sum" && r != "mean")
    inferError("reduction '" + r + "' is not none, sum or mean");
  return {Type(in[0].kind(), r == "none" ? t : Shape{})};
}

std::vector<Type> einsumInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  std::vector<Shape> shapes;
  for (const NodeValue& v : in) {
    requireKind(v, wideNumericKinds(), "operand");
    if (v.kind() != in[0].kind())
      inferError(std::string("operands have different element kinds: ") +
                 elemKindName(in[0].kind()) + " and " + elemKindName(v.kind()));
    shapes.push_back(v.dims());
  }
  EinsumPlan plan;
  try {
    plan = planEinsum(einsumOf(a).equation, shapes);
  } catch (const Error& e) {
    inferError(e.what());
  }
  Shape out;
  for (int l : plan.outputLabels)
    out.push_back(plan.extents[static_cast<size_t>(l)]);
  return {Type(in[0].kind(), out)};
}

void add(NodeKind k, InferFn fn, std::vector<std::string> operands, unsigned minInputs) {
  registerOpInfo({k, std::move(operands), minInputs, std::move(fn)});
}

} // namespace

void registerNNOps() {
  using K = NodeKind;
  add(K::Conv, convInfer, {"input", "filter", "bias"}, 2);
  add(K::ConvTranspose, convTransposeInfer, {"input", "filter", "bias"}, 2);
  add(K::MaxPool, poolInfer, {"input"}, 1);
  add(K::AveragePool, poolInfer, {"input"}, 1);
  add(K::GlobalAveragePool, globalPoolInfer, {"input"}, 1);
  add(K::GlobalMaxPool, globalPoolInfer, {"input"}, 1);
  add(K::BatchNormalization, batchNormInfer, {"input", "scale", "bias", "mean", "var"}, 5);
  add(K::InstanceNormalization, instanceNormInfer, {"input", "scale", "bias"}, 3);
  add(K::LayerNormalization, layerNormInfer, {"input", "scale", "bias"}, 2);
  add(K::ChannelLayerNormalization, channelLayerNormInfer, {"input", "scale", "bias"}, 2);
  add(K::LRN, lrnInfer, {"input"}, 1);
  add(K::MatMul, matMulInfer, {"a", "b"}, 2);
  add(K::Gemm, gemmInfer, {"a", "b", "c"}, 2);
  add(K::Softmax, softmaxInt8Infer, {"input"}, 1);
  for (K k : {K::LogSoftmax, K::Hardmax})
    add(k, softmaxInfer, {"input"}, 1);
  add(K::NegativeLogLikelihoodLoss, nllInfer, {"input", "target", "weight"}, 2);
  add(K::Einsum, einsumInfer, {"operand", "..."}, 1);
  // The int8 max of codes keeps the input's parameters.
  addOpTraits({K::MaxPool, K::GlobalMaxPool}, {OpTrait::KeepsQuantization});
}

} // namespace ember
