// ONNX importers of the index and loss operators: TopK, OneHot, GatherND,
// ScatterElements (and the older Scatter), ScatterND, Compress, Einsum,
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (LogSoftmax + NLL). Operands
// that decide a result's shape (TopK's K, OneHot's depth, Compress's condition) must be
// known at compile time.
#include "ember/importer/OnnxOpImporter.h"

#include "ember/tensor/Tensor.h"

#include <string>

namespace ember {

namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

void importTopK(OnnxNodeContext& ctx) {
  int64_t k;
  if (ctx.opset() < 10) {
    if (!ctx.hasAttr("k"))
      ctx.fail("attribute 'k' is required");
    k = ctx.attrInt("k", 0);
  } else {
    const std::vector<int64_t> kv = ctx.constantInts(1, "K");
    if (kv.size() != 1)
      ctx.fail("operand K must hold one value, holds " + str(int64_t(kv.size())));
    k = kv[0];
  }
  Attrs a;
  a.set("k", k);
  a.set("axis", ctx.attrInt("axis", -1));
  a.set("largest", ctx.attrInt("largest", 1));
  a.set("sorted", ctx.attrInt("sorted", 1));
  Node* n = ctx.emitNode(NodeKind::TopK, {ctx.input(0)}, std::move(a));
  for (unsigned i = 0; i < 2; ++i)
    if (ctx.hasOutput(i))
      ctx.setOutput(i, NodeValue(n, i));
}

void importOneHot(OnnxNodeContext& ctx) {
  const std::vector<double> depth = ctx.constantFloats(1, "depth");
  if (depth.size() != 1)
    ctx.fail("operand depth must hold one value, holds " + str(int64_t(depth.size())));
  Attrs a;
  a.set("depth", static_cast<int64_t>(depth[0]));
  a.set("axis", ctx.attrInt("axis", -1));
  ctx.setOutput(0, ctx.emit(NodeKind::OneHot, {ctx.input(0), ctx.input(2)}, std::move(a)));
}

void importGatherND(OnnxNodeContext& ctx) {
  Attrs a;
  a.set("batch_dims", ctx.attrInt("batch_dims", 0));
  ctx.setOutput(0, ctx.emit(NodeKind::GatherND, {ctx.input(0), ctx.input(1)}, std::move(a)));
}

void importScatter(OnnxNodeContext& ctx, NodeKind kind, bool hasAxis) {
  Attrs a;
  if (hasAxis)
    a.set("axis", ctx.attrInt("axis", 0));
  if (ctx.opType() != "Scatter")
    a.set("reduction", ctx.attrString("reduction", "none"));
  ctx.setOutput(0, ctx.emit(kind, {ctx.input(0), ctx.input(1), ctx.input(2)}, std::move(a)));
}

/// Compress with a constant condition: a Gather of the selected positions (of the
/// flattened input when there is no axis).
void importCompress(OnnxNodeContext& ctx) {
  std::optional<Tensor> cond = ctx.constantInput(1);
  if (!cond)
    ctx.unsupported("operand condition must be known at compile time");
  NodeValue x = ctx.input(0);
  int64_t axis = 0;
  if (ctx.hasAttr("axis")) {
    axis = ctx.attrInt("axis", 0);
    const int64_t rank = int64_t(x.dims().size());
    if (axis < -rank || axis >= rank)
      ctx.fail("axis " + str(axis) + " is out of range for rank " + str(rank));
    if (axis < 0)
      axis += rank;
  } else {
    Attrs flat;
    flat.set("shape", std::vector<int64_t>{x.type().size()});
    x = ctx.emit(NodeKind::Reshape, {x}, std::move(flat), "_flatten");
  }
  const int64_t extent = x.dims()[size_t(axis)];
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < cond->size() && i < extent; ++i)
    if (cond->getAsDouble(i) != 0)
      picked.push_back(i);
  Attrs a;
  a.set("axis", axis);
  NodeValue idx =
      ctx.constant(Tensor::fromVector<int64_t>({int64_t(picked.size())}, picked), "_indices");
  ctx.setOutput(0, ctx.emit(NodeKind::Gather, {x, idx}, std::move(a)));
}

void importEinsum(OnnxNodeContext& ctx) {
  if (!ctx.hasAttr("equation"))
    ctx.fail("attribute 'equation' is required");
  std::vector<NodeValue> in;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    in.push_back(ctx.input(i));
  Attrs a;
  a.set("equation", ctx.attrString("equation", ""));
  ctx.setOutput(0, ctx.emit(NodeKind::Einsum, std::move(in), std::move(a)));
}

/// The loss attributes both loss operators share.
Attrs lossAttrs(OnnxNodeContext& ctx) {
  Attrs a;
  a.set("reduction", ctx.attrString("reduction", "mean"));
  if (ctx.hasAttr("ignore_index"))
    a.set("ignore_index", ctx.attrInt("ignore_index", 0));
  return a;
}

std::vector<NodeValue> lossOperands(OnnxNodeContext& ctx, NodeValue logProb) {
  std::vector<NodeValue> in = {logProb, ctx.input(1)};
  if (ctx.hasInput(2))
    in.push_back(ctx.input(2));
  return in;
}

void importNll(OnnxNodeContext& ctx) {
  ctx.setOutput(0, ctx.emit(NodeKind::NegativeLogLikelihoodLoss, lossOperands(ctx, ctx.input(0)),
                            lossAttrs(ctx)));
}

/// SoftmaxCrossEntropyLoss = NLL of LogSoftmax over the class axis (1); its optional
/// second output is that log-probability.
void importSoftmaxCrossEntropy(OnnxNodeContext& ctx) {
  NodeValue x = ctx.input(0);
  if (x.dims().size() < 2)
    ctx.fail("scores " + shapeToString(x.dims()) + " must be [N, C, d...]");
  Attrs sm;
  sm.set("axis", int64_t(1));
  NodeValue logProb = ctx.emit(NodeKind::LogSoftmax, {x}, std::move(sm), "_log_prob");
  ctx.setOutput(
      0, ctx.emit(NodeKind::NegativeLogLikelihoodLoss, lossOperands(ctx, logProb), lossAttrs(ctx)));
  if (ctx.hasOutput(1))
    ctx.setOutput(1, logProb);
}

} // namespace

void registerOnnxIndexImporters() {
  using K = NodeKind;
  registerOnnxOp("TopK", {"axis", "k", "largest", "sorted"}, importTopK);
  registerOnnxOp("OneHot", {"axis"}, importOneHot);
  registerOnnxOp("GatherND", {"batch_dims"}, importGatherND);
  registerOnnxOp("ScatterElements", {"axis", "reduction"},
                 [](OnnxNodeContext& c) { importScatter(c, K::ScatterElements, true); });
  registerOnnxOp("Scatter", {"axis"},
                 [](OnnxNodeContext& c) { importScatter(c, K::ScatterElements, true); });
  registerOnnxOp("ScatterND", {"reduction"},
                 [](OnnxNodeContext& c) { importScatter(c, K::ScatterND, false); });
  registerOnnxOp("Compress", {"axis"}, importCompress);
  registerOnnxOp("Einsum", {"equation"}, importEinsum);
  registerOnnxOp("NegativeLogLikelihoodLoss", {"ignore_index", "reduction"}, importNll);
  registerOnnxOp("SoftmaxCrossEntropyLoss", {"ignore_index", "reduction"},
                 importSoftmaxCrossEntropy);
}

} // namespace ember
