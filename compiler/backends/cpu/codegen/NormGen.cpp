// Codegen of Softmax / LogSoftmax (along one axis), BatchNormalization (constant
// parameters), LayerNormalization (normalised result and, when the node has them,
// its Mean and InvStdDev results) and ChannelLayerNormalization (the same kernel along
// axis 1).
#include "Codegen.h"
#include "ember/support/Error.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"

#include <cmath>

namespace ember::cpu {

namespace {

bool plainFloat(const Type& t) {
  return t.kind == ElemKind::Float32 && !t.quant.isQuantized();
}

bool supportsSoftmax(const Op& n) {
  return plainFloat(n.input(0).type()) && !n.input(0).dims().empty();
}

void emitSoftmax(const Op& n, CodegenContext& ctx) {
  const AxisSplit s = splitAtAxis(n.input(0).dims(), softmaxOf(n.attrs()).axis);
  ctx.call("ember_softmax_f32",
           {ctx.i32(n.kind() == NodeKind::LogSoftmax), ctx.addr(n.input(0)), ctx.result(n),
            ctx.i64(s.outer), ctx.i64(s.len), ctx.i64(s.inner), ctx.tid(), ctx.nth()});
}

/// The number of values LayerNormalization's scale and bias cover (the dimensions from
/// its axis on) or ChannelLayerNormalization's (C).
int64_t normalisedCount(const Op& n) {
  return layerNormLines(n.kind(), n.input(0).dims(), n.attrs()).len;
}

bool supportsLayerNorm(const Op& n) {
  const Shape& d = n.input(0).dims();
  const bool channels = n.kind() == NodeKind::ChannelLayerNormalization;
  if (!plainFloat(n.input(0).type()) || d.size() < (channels ? 2u : 1u))
    return false;
  // Scale and bias must cover the normalised dimensions exactly (no broadcasting).
  for (size_t i = 1; i < 3; ++i) {
    const OpInput v = n.optionalInput(i);
    if (v && (!plainFloat(v.type()) || numElements(v.dims()) != normalisedCount(n)))
      return false;
  }
  return n.optionalInput(1) && (channels || normOf(n.attrs()).stashType == 1);
}

/// LayerNormalization's rows (inner 1) or ChannelLayerNormalization's pixel lines.
void emitLayerNorm(const Op& n, CodegenContext& ctx) {
  const AxisSplit l = layerNormLines(n.kind(), n.input(0).dims(), n.attrs());
  ctx.call("ember_layernorm_f32",
           {ctx.addr(n.input(0)), ctx.addr(n.input(1)), ctx.addr(n.optionalInput(2)), ctx.result(n),
            n.numResults() > 1 ? ctx.result(n, 1) : ctx.nullPtr(),
            n.numResults() > 2 ? ctx.result(n, 2) : ctx.nullPtr(), ctx.i64(l.outer), ctx.i64(l.len),
            ctx.i64(l.inner), ctx.f64(normOf(n.attrs()).epsilon), ctx.tid(), ctx.nth()});
}

bool supportsBatchNorm(const Op& n) {
  if (n.numResults() != 1 || !plainFloat(n.input(0).type()) || n.input(0).dims().size() < 2 ||
      n.numInputs() != 5)
    return false;
  for (size_t i = 1; i < 5; ++i)
    if (!n.input(i).isConstant() || !plainFloat(n.input(i).type()))
      return false;
  return true;
}

/// The interpreter's factors: mul = scale / sqrt(var + eps) (double, rounded to float),
/// add = bias - mean * mul (float).
void emitBatchNorm(const Op& n, CodegenContext& ctx) {
  const Shape& d = n.input(0).dims();
  const int64_t C = d[1], images = d[0] * C;
  const int64_t plane = images != 0 ? numElements(d) / images : 0;
  const double eps = normOf(n.attrs()).epsilon;
  const float* scale = n.input(1).constantData<float>();
  const float* bias = n.input(2).constantData<float>();
  const float* mean = n.input(3).constantData<float>();
  const float* var = n.input(4).constantData<float>();
  std::vector<float> mul(static_cast<size_t>(C)), add(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    mul[size_t(c)] = static_cast<float>(scale[c] / std::sqrt(double(var[c]) + eps));
    add[size_t(c)] = bias[c] - mean[c] * mul[size_t(c)];
  }
  ctx.call("ember_scale_shift_f32",
           {ctx.addr(n.input(0)), ctx.keep(mul), ctx.keep(add), ctx.result(n), ctx.i64(d[0]),
            ctx.i64(C), ctx.i64(plane), ctx.tid(), ctx.nth()},
           {4, 5, 6}); // one instance whatever the sizes
}

} // namespace

void registerNormCodegen() {
  registerCodegenUnit(NodeKind::Softmax, {"softmax", supportsSoftmax, emitSoftmax});
  registerCodegenUnit(NodeKind::LogSoftmax, {"softmax", supportsSoftmax, emitSoftmax});
  registerCodegenUnit(NodeKind::LayerNormalization, {"norm", supportsLayerNorm, emitLayerNorm});
  registerCodegenUnit(NodeKind::ChannelLayerNormalization,
                      {"norm", supportsLayerNorm, emitLayerNorm});
  registerCodegenUnit(NodeKind::BatchNormalization, {"norm", supportsBatchNorm, emitBatchNorm});
}

} // namespace ember::cpu
