// ONNX importers of the NN operators (opsets 7-17): convolutions, pools,
// normalisations, matrix products and the softmax family.
//
// Window attributes are resolved here once and for all: auto_pad becomes explicit
// pads (all begins, then all ends), absent attributes get their ONNX defaults and
// ConvTranspose's output_shape becomes pads + output_padding. Softmax, LogSoftmax and
// Hardmax before opset 13 (which flatten to 2-D at `axis`) become Reshape, the
// opset-13 node along axis 1, Reshape back, unless `axis` is already the last one.
#include "ember/importer/OnnxOpImporter.h"

#include <string>

namespace ember {

namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

/// Operands in `which` that are present must be float32 (Ember's NN kernels are float).
void requireFloat(OnnxNodeContext& ctx, std::initializer_list<size_t> which) {
  for (size_t i : which)
    if (i < ctx.numInputs() && ctx.hasInput(i) && ctx.input(i).kind() != ElemKind::Float32)
      ctx.unsupported("operand " + str(int64_t(i)) + " has element kind " +
                      elemKindName(ctx.input(i).kind()) + "; only float32 is supported");
}

/// Only result 0 may be used (extra ONNX outputs: indices, training statistics).
void requireOnlyFirstOutput(OnnxNodeContext& ctx, const char* what) {
  for (size_t i = 1; i < ctx.numOutputs(); ++i)
    if (ctx.hasOutput(i))
      ctx.unsupported(std::string("output ") + str(int64_t(i)) + " (" + what +
                      ") is not supported");
}

/// Number of spatial dimensions of operand 0 (N x C x spatial...).
size_t spatialRank(OnnxNodeContext& ctx) {
  const Shape& x = ctx.input(0).dims();
  if (x.size() < 3 || x.size() > 5)
    ctx.fail("input " + shapeToString(x) + " must be N x C x 1 to 3 spatial dimensions");
  return x.size() - 2;
}

/// An int list attribute of exactly `count` values, `def` repeated when absent.
std::vector<int64_t> listAttr(OnnxNodeContext& ctx, const char* name, size_t count, int64_t def) {
  std::vector<int64_t> v = ctx.attrInts(name, std::vector<int64_t>(count, def));
  if (v.size() != count)
    ctx.fail(std::string("attribute ") + name + " has " + str(int64_t(v.size())) +
             " values, expected " + str(int64_t(count)));
  return v;
}

/// a + b and a * b of attribute-derived sizes; an overflow fails the node.
int64_t add(OnnxNodeContext& ctx, int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    ctx.fail("output size overflows (pads, strides, dilations or kernel too large)");
  return r;
}
int64_t mul(OnnxNodeContext& ctx, int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    ctx.fail("output size overflows (pads, strides, dilations or kernel too large)");
  return r;
}

/// The common window of Conv, ConvTranspose and the pools.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
};

/// Reads kernel_shape (from the filter when `filter` and the attribute is absent),
/// strides and dilations.
Window readWindow(OnnxNodeContext& ctx, size_t nsp, bool fromFilter) {
  Window w;
  if (ctx.hasAttr("kernel_shape")) {
    w.kernel = listAttr(ctx, "kernel_shape", nsp, 1);
  } else if (fromFilter) {
    const Shape& f = ctx.input(1).dims();
    if (f.size() != nsp + 2)
      ctx.fail("filter " + shapeToString(f) + " must have rank " + str(int64_t(nsp + 2)));
    w.kernel.assign(f.begin() + 2, f.end());
  } else {
    ctx.fail("attribute kernel_shape is required");
  }
  w.strides = listAttr(ctx, "strides", nsp, 1);
  // AveragePool has no dilations before opset 19.
  w.dilations = ctx.opType() == "AveragePool" ? std::vector<int64_t>(nsp, 1)
                                              : listAttr(ctx, "dilations", nsp, 1);
  for (size_t d = 0; d < nsp; ++d)
    if (w.kernel[d] < 1 || w.strides[d] < 1 || w.dilations[d] < 1)
      ctx.fail("kernel_shape, strides and dilations must be positive");
  return w;
}

/// Explicit pads of a Conv or pool: auto_pad resolved against the input extents.
std::vector<int64_t> resolvePads(OnnxNodeContext& ctx, const Window& w) {
  const size_t nsp = w.kernel.size();
  const Shape& x = ctx.input(0).dims();
  const std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET" || autoPad.empty()) {
    std::vector<int64_t> pads = listAttr(ctx, "pads", 2 * nsp, 0);
    for (int64_t p : pads)
      if (p < 0)
        ctx.unsupported("negative pads are not supported");
    return pads;
  }
  if (autoPad == "VALID")
    return std::vector<int64_t>(2 * nsp, 0);
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    ctx.fail("unknown auto_pad '" + autoPad + "'");
  std::vector<int64_t> pads(2 * nsp);
  for (size_t d = 0; d < nsp; ++d) {
    const int64_t in = x[d + 2], s = w.strides[d];
    const int64_t out = in / s + (in % s != 0);
    const int64_t extent = add(ctx, mul(ctx, w.kernel[d] - 1, w.dilations[d]), 1);
    const int64_t total = std::max<int64_t>(0, add(ctx, mul(ctx, out - 1, s), extent - in));
    const int64_t small = total / 2, large = total - small;
    pads[d] = autoPad == "SAME_UPPER" ? small : large;
    pads[d + nsp] = autoPad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

Attrs windowAttrs(const Window& w) {
  Attrs a;
  a.set("kernel_shape", w.kernel);
  a.set("strides", w.strides);
  a.set("dilations", w.dilations);
  a.set("pads", w.pads);
  return a;
}

std::vector<NodeValue> presentInputs(OnnxNodeContext& ctx, size_t max) {
  std::vector<NodeValue> in;
  for (size_t i = 0; i < max && i < ctx.numInputs(); ++i)
    in.push_back(ctx.hasInput(i) ? ctx.input(i) : NodeValue());
  while (!in.empty() && !in.back())
    in.pop_back();
  return in;
}

void importConv(OnnxNodeContext& ctx) {
  requireFloat(ctx, {0, 1, 2});
  const size_t nsp = spatialRank(ctx);
  Window w = readWindow(ctx, nsp, true);
  w.pads = resolvePads(ctx, w);
  Attrs a = windowAttrs(w);
  a.set("group", ctx.attrInt("group", 1));
  ctx.setOutput(0, ctx.emit(NodeKind::Conv, presentInputs(ctx, 3), a));
}

void importConvTranspose(OnnxNodeContext& ctx) {
  requireFloat(ctx, {0, 1, 2});
  const size_t nsp = spatialRank(ctx);
  Window w = readWindow(ctx, nsp, true);
  std::vector<int64_t> outPad = listAttr(ctx, "output_padding", nsp, 0);
  const std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  const Shape& x = ctx.input(0).dims();
  std::vector<int64_t> target;
  if (ctx.hasAttr("output_shape")) {
    target = ctx.attrInts("output_shape");
    if (target.size() == nsp + 2)
      target.erase(target.begin(), target.begin() + 2);
    if (target.size() != nsp)
      ctx.fail("attribute output_shape has " + str(int64_t(target.size())) + " values, expected " +
               str(int64_t(nsp)));
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t d = 0; d < nsp; ++d)
      target.push_back(mul(ctx, x[d + 2], w.strides[d]));
  }
  for (int64_t t : target)
    if (t < 1)
      ctx.fail("output_shape " + shapeToString(target) + " must be positive");
  if (target.empty()) {
    w.pads =
        autoPad == "VALID" ? std::vector<int64_t>(2 * nsp, 0) : listAttr(ctx, "pads", 2 * nsp, 0);
  } else {
    // total = full extent - wanted extent, split as the ONNX specification says; a
    // negative total (the output is larger) becomes extra output padding at the end.
    w.pads.assign(2 * nsp, 0);
    for (size_t d = 0; d < nsp; ++d) {
      const int64_t total = add(ctx,
                                add(ctx, add(ctx, mul(ctx, w.strides[d], x[d + 2] - 1), outPad[d]),
                                    add(ctx, mul(ctx, w.kernel[d] - 1, w.dilations[d]), 1)),
                                -target[d]);
      if (total < 0) {
        outPad[d] -= total;
        continue;
      }
      const int64_t small = total / 2, large = total - small;
      w.pads[d] = autoPad == "SAME_UPPER" ? small : large;
      w.pads[d + nsp] = autoPad == "SAME_UPPER" ? large : small;
    }
  }
  for (int64_t p : w.pads)
    if (p < 0)
      ctx.unsupported("negative pads are not supported");
  Attrs a = windowAttrs(w);
  a.set("group", ctx.attrInt("group", 1));
  a.set("output_padding", outPad);
  ctx.setOutput(0, ctx.emit(NodeKind::ConvTranspose, presentInputs(ctx, 3), a));
}

void importPool(OnnxNodeContext& ctx, NodeKind kind) {
  requireFloat(ctx, {0});
  requireOnlyFirstOutput(ctx, "Indices");
  const size_t nsp = spatialRank(ctx);
  Window w = readWindow(ctx, nsp, false);
  w.pads = resolvePads(ctx, w);
  Attrs a = windowAttrs(w);
  a.set("ceil_mode", ctx.attrInt("ceil_mode", 0));
  if (kind == NodeKind::AveragePool)
    a.set("count_include_pad", ctx.attrInt("count_include_pad", 0));
  ctx.setOutput(0, ctx.emit(kind, {ctx.input(0)}, a));
}

void importGlobalPool(OnnxNodeContext& ctx, NodeKind kind) {
  requireFloat(ctx, {0});
  spatialRank(ctx);
  ctx.setOutput(0, ctx.emit(kind, {ctx.input(0)}));
}

/// BatchNormalization with training_mode=1 (opset 14+): normalised by the batch's own
/// statistics (mean and population variance over every axis but 1), and the running
/// statistics as outputs 1 and 2: input * momentum + batch statistic * (1 - momentum).
void importBatchNormTraining(OnnxNodeContext& ctx) {
  const NodeValue x = ctx.input(0);
  const Shape& d = x.dims();
  if (d.size() < 2)
    ctx.fail("input " + shapeToString(d) + " must have rank 2 or more");
  std::vector<int64_t> axes, channelShape(d.size(), 1);
  for (size_t k = 0; k < d.size(); ++k)
    if (k != 1)
      axes.push_back(int64_t(k));
  channelShape[1] = d[1];
  Attrs r;
  r.set("axes", axes);
  r.set("keepdims", int64_t(1));
  auto reshape = [&](NodeValue v, std::vector<int64_t> shape, const char* suffix) {
    Attrs a;
    a.set("shape", std::move(shape));
    return ctx.emit(NodeKind::Reshape, {v}, a, suffix);
  };
  auto scalar = [&](double v, const char* suffix) {
    return ctx.constant(Tensor::scalar<float>(float(v)), suffix);
  };
  const NodeValue mean = ctx.emit(NodeKind::ReduceMean, {x}, r, "_batch_mean");
  const NodeValue centred = ctx.emit(NodeKind::Sub, {x, mean}, {}, "_centred");
  const NodeValue sq = ctx.emit(NodeKind::Mul, {centred, centred}, {}, "_sq");
  const NodeValue var = ctx.emit(NodeKind::ReduceMean, {sq}, r, "_batch_var");
  const NodeValue eps = scalar(ctx.attrFloat("epsilon", 1e-5), "_eps");
  const NodeValue sd =
      ctx.emit(NodeKind::Sqrt, {ctx.emit(NodeKind::Add, {var, eps}, {}, "_var_eps")}, {}, "_std");
  const NodeValue scale = reshape(ctx.input(1), channelShape, "_scale");
  const NodeValue bias = reshape(ctx.input(2), channelShape, "_bias");
  const NodeValue norm = ctx.emit(NodeKind::Div, {centred, sd}, {}, "_norm");
  ctx.setOutput(
      0, ctx.emit(NodeKind::Add, {ctx.emit(NodeKind::Mul, {norm, scale}, {}, "_scaled"), bias}));
  const double momentum = ctx.attrFloat("momentum", 0.9);
  const std::vector<int64_t> c = {d[1]};
  for (size_t i = 1; i <= 2; ++i) {
    if (!ctx.hasOutput(i))
      continue;
    const NodeValue batch = reshape(i == 1 ? mean : var, c, i == 1 ? "_mean_c" : "_var_c");
    const NodeValue kept = ctx.emit(NodeKind::Mul, {ctx.input(2 + i), scalar(momentum, "_m")}, {},
                                    i == 1 ? "_mean_kept" : "_var_kept");
    const NodeValue added = ctx.emit(NodeKind::Mul, {batch, scalar(1 - momentum, "_1m")}, {},
                                     i == 1 ? "_mean_added" : "_var_added");
    ctx.setOutput(
        i, ctx.emit(NodeKind::Add, {kept, added}, {}, i == 1 ? "_running_mean" : "_running_var"));
  }
}

void importBatchNorm(OnnxNodeContext& ctx) {
  requireFloat(ctx, {0, 1, 2, 3, 4});
  for (size_t i = 0; i < 5; ++i)
    if (!ctx.hasInput(i))
      ctx.fail("operand " + str(int64_t(i)) + " is required");
  if (ctx.attrInt("training_mode", 0) != 0) {
    importBatchNormTraining(ctx);
    return;
  }
  requireOnlyFirstOutput(ctx, "training statistics");
  if (ctx.opset() < 9 && ctx.attrInt("spatial", 1) == 0 && ctx.input(0).dims().size() > 2)
    ctx.unsupported("spatial=0 (per-activation statistics) is not supported");
  Attrs a;
  a.set("epsilon", ctx.attrFloat("epsilon", 1e-5));
  ctx.setOutput(0, ctx.emit(NodeKind::BatchNormalization, presentInputs(ctx, 5), a));
}

void importInstanceNorm(OnnxNodeContext& ctx) {
  requireFloat(ctx, {0, 1, 2});
  Attrs a;
  a.set("epsilon", ctx.attrFloat("epsilon", 1e-5));
  ctx.setOutput(0, ctx.emit(NodeKind::InstanceNormalization, presentInputs(ctx, 3), a));
}

void importLayerNorm(OnnxNodeContext& ctx) {
  requireFloat(ctx, {0, 1, 2});
  Attrs a;
  a.set("axis", ctx.attrInt("axis", -1));
  a.set("epsilon", ctx.attrFloat("epsilon", 1e-5));
  Node* n = ctx.emitNode(NodeKind::LayerNormalization, presentInputs(ctx, 3), a);
  for (size_t i = 0; i < ctx.numOutputs() && i < 3; ++i) {
    if (!ctx.hasOutput(i))
      continue;
    if (i >= n->numResults())
      ctx.unsupported("output " + str(int64_t(i)) + " of a constant-folded node");
    ctx.setOutput(i, NodeValue(n, static_cast<unsigned>(i)));
  }
}

void importLRN(OnnxNodeContext& ctx) {
  requireFloat(ctx, {0});
  if (!ctx.hasAttr("size"))
    ctx.fail("attribute size is required");
  Attrs a;
  a.set("size", ctx.attrInt("size", 1));
  a.set("alpha", ctx.attrFloat("alpha", 1e-4));
  a.set("beta", ctx.attrFloat("beta", 0.75));
  a.set("bias", ctx.attrFloat("bias", 1.0));
  ctx.setOutput(0, ctx.emit(NodeKind::LRN, {ctx.input(0)}, a));
}

void importMatMul(OnnxNodeContext& ctx) {
  requireFloat(ctx, {0, 1});
  ctx.setOutput(0, ctx.emit(NodeKind::MatMul, {ctx.input(0), ctx.input(1)}));
}

void importGemm(OnnxNodeContext& ctx) {
  requireFloat(ctx, {0, 1, 2});
  Attrs a;
  a.set("transA", ctx.attrInt("transA", 0));
  a.set("transB", ctx.attrInt("transB", 0));
  a.set("alpha", ctx.attrFloat("alpha", 1.0));
  a.set("beta", ctx.attrFloat("beta", 1.0));
  ctx.setOutput(0, ctx.emit(NodeKind::Gemm, presentInputs(ctx, 3), a));
}

void importSoftmaxLike(OnnxNodeContext& ctx, NodeKind kind) {
  requireFloat(ctx, {0});
  NodeValue x = ctx.input(0);
  const Shape dims = x.dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t axis = ctx.attrInt("axis", ctx.opset() < 13 ? 1 : -1);
  if (rank == 0)
    ctx.fail("input must have rank >= 1");
  if (axis < -rank || axis >= rank)
    ctx.fail("axis " + str(axis) + " is out of range for rank " + str(rank));
  if (axis < 0)
    axis += rank;
  Attrs a;
  if (ctx.opset() >= 13 || axis == rank - 1) {
    a.set("axis", axis);
    ctx.setOutput(0, ctx.emit(kind, {x}, a));
    return;
  }
  // Before opset 13 the operator works on the input flattened to 2-D at axis.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= dims[static_cast<size_t>(d)];
  Attrs flat;
  flat.set("shape", std::vector<int64_t>{outer, inner});
  NodeValue x2 = ctx.emit(NodeKind::Reshape, {x}, flat, "_flatten");
  a.set("axis", int64_t(1));
  NodeValue y2 = ctx.emit(kind, {x2}, a);
  Attrs back;
  back.set("shape", std::vector<int64_t>(dims.begin(), dims.end()));
  ctx.setOutput(0, ctx.emit(NodeKind::Reshape, {y2}, back, "_unflatten"));
}

} // namespace

void registerOnnxNNImporters() {
  using K = NodeKind;
  registerOnnxOp("Conv", {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"},
                 importConv);
  registerOnnxOp("ConvTranspose",
                 {"auto_pad", "dilations", "group", "kernel_shape", "output_padding",
                  "output_shape", "pads", "strides"},
                 importConvTranspose);
  registerOnnxOp(
      "MaxPool",
      {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"},
      [](OnnxNodeContext& c) { importPool(c, K::MaxPool); });
  registerOnnxOp("AveragePool",
                 {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"},
                 [](OnnxNodeContext& c) { importPool(c, K::AveragePool); });
  registerOnnxOp("GlobalAveragePool", {},
                 [](OnnxNodeContext& c) { importGlobalPool(c, K::GlobalAveragePool); });
  registerOnnxOp("GlobalMaxPool", {},
                 [](OnnxNodeContext& c) { importGlobalPool(c, K::GlobalMaxPool); });
  registerOnnxOp("BatchNormalization", {"epsilon", "momentum", "spatial", "training_mode"},
                 importBatchNorm);
  registerOnnxOp("InstanceNormalization", {"epsilon"}, importInstanceNorm);
  registerOnnxOp("LayerNormalization", {"axis", "epsilon", "stash_type"}, importLayerNorm);
  registerOnnxOp("LRN", {"alpha", "beta", "bias", "size"}, importLRN);
  registerOnnxOp("MatMul", {}, importMatMul);
  registerOnnxOp("Gemm", {"alpha", "beta", "transA", "transB"}, importGemm);
  registerOnnxOp("Softmax", {"axis"}, [](OnnxNodeContext& c) { importSoftmaxLike(c, K::Softmax); });
  registerOnnxOp("LogSoftmax", {"axis"},
                 [](OnnxNodeContext& c) { importSoftmaxLike(c, K::LogSoftmax); });
  registerOnnxOp("Hardmax", {"axis"}, [](OnnxNodeContext& c) { importSoftmaxLike(c, K::Hardmax); });
}

} // namespace ember
