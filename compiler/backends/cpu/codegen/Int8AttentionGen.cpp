// Codegen of the int8 operators of attention blocks (docs/numerics.md 4.1, 4.10, 4.11):
// MatMul whose B is an activation (per tensor, any zero point), Softmax along one axis
// and LayerNormalization with a constant float scale and bias. The parameters (the exp
// table, the multipliers, the LayerNormalization tables) are chosen here at compile time
// by ember/quantization/NormNumerics.h, the functions the interpreter calls, and the
// kernels run the shared lines of ember/quantization/IntegerLines.h.
#include "Codegen.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/quantization/NormNumerics.h"

namespace ember::cpu {

namespace {

/// The interpreter's two forms (isUnbroadcastMatMul).
bool supportsMatMulAct(const Op& n) {
  return n.input(0).type().isPerTensorInt8() && n.input(1).type().isPerTensorInt8() &&
         n.resultType().isPerTensorInt8() &&
         isUnbroadcastMatMul(n.input(0).dims(), n.input(1).dims());
}

void emitMatMulAct(const Op& n, CodegenContext& ctx) {
  const Type &at = n.input(0).type(), &bt = n.input(1).type(), &yt = n.resultType();
  const Shape& b = bt.dims;
  const int64_t K = b[b.size() - 2], N = b.back();
  const bool batched = b.size() > 2;
  const int64_t batches = batched ? numElements(b) / (K * N) : 1;
  const int64_t rows = K ? numElements(at.dims) / (K * batches) : 0;
  const quant::Multiplier m =
      quant::productMultiplier(at.quant.scales[0], bt.quant.scales[0], yt.quant.scales[0]);
  const quant::Bounds bd = quant::activationBounds(n.node(), yt.quant);
  ctx.call("ember_matmul_act_i8",
           {ctx.addr(n.input(0)), ctx.addr(n.input(1)), ctx.result(n), ctx.i64(batches),
            ctx.i64(rows), ctx.i64(K), ctx.i64(N), ctx.i64(batched ? K * N : 0),
            ctx.i32(at.quant.zeroPoints[0]), ctx.i32(bt.quant.zeroPoints[0]), ctx.i32(m.M),
            ctx.i32(m.S), ctx.i32(yt.quant.zeroPoints[0]), ctx.i32(bd.lo), ctx.i32(bd.hi),
            ctx.scratch(size_t(N) * 4), ctx.tid(), ctx.nth()});
}

bool supportsSoftmax(const Op& n) {
  return n.input(0).type().isPerTensorInt8() && n.resultType().isPerTensorInt8() &&
         !n.input(0).dims().empty();
}

void emitSoftmax(const Op& n, CodegenContext& ctx) {
  const AxisSplit s = splitAtAxis(n.input(0).dims(), softmaxOf(n.attrs()).axis);
  const std::array<int32_t, 256> table = quant::softmaxExpTable(n.input(0).type().quant.scales[0]);
  const quant::Multiplier m = quant::softmaxMultiplier(n.resultType().quant.scales[0]);
  const quant::Bounds bd = quant::activationBounds(n.node(), n.resultType().quant);
  ctx.call("ember_softmax_i8",
           {ctx.addr(n.input(0)), ctx.result(n), ctx.i64(s.outer), ctx.i64(s.len), ctx.i64(s.inner),
            ctx.keep(std::vector<int32_t>(table.begin(), table.end())), ctx.i32(m.M), ctx.i32(m.S),
            ctx.i32(n.resultType().quant.zeroPoints[0]), ctx.i32(bd.lo), ctx.i32(bd.hi), ctx.tid(),
            ctx.nth()});
}

/// LayerNormalization's or ChannelLayerNormalization's tables (layerNormTables, which
/// also checks the line's size and the scale and bias counts).
quant::LayerNormTables tablesOf(const Op& n) {
  const int64_t count = layerNormLines(n.kind(), n.input(0).dims(), n.attrs()).len;
  const OpInput g = n.input(1), b = n.optionalInput(2);
  return quant::layerNormTables(n.input(0).type().quant.scales[0], n.resultType().quant.scales[0],
                                count, normOf(n.attrs()).epsilon, g.constantData<float>(),
                                size_t(g.type().size()), b ? b.constantData<float>() : nullptr,
                                b ? size_t(b.type().size()) : 0);
}

bool supportsLayerNorm(const Op& n) {
  if (!n.input(0).type().isPerTensorInt8() || !n.resultType().isPerTensorInt8() ||
      n.input(0).dims().empty() || !n.optionalInput(1))
    return false;
  for (size_t i = 1; i < 3; ++i) {
    const OpInput v = n.optionalInput(i);
    if (v && (!v.isConstant() || v.kind() != ElemKind::Float32))
      return false;
  }
  try {
    tablesOf(n);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void emitLayerNorm(const Op& n, CodegenContext& ctx) {
  const AxisSplit l = layerNormLines(n.kind(), n.input(0).dims(), n.attrs());
  const quant::LayerNormTables t = tablesOf(n);
  ctx.call("ember_layernorm_i8",
           {ctx.addr(n.input(0)), ctx.result(n),
            n.numResults() > 1 ? ctx.result(n, 1) : ctx.nullPtr(),
            n.numResults() > 2 ? ctx.result(n, 2) : ctx.nullPtr(), ctx.i64(l.outer), ctx.i64(l.len),
            ctx.i64(l.inner), ctx.i32(n.input(0).type().quant.zeroPoints[0]), ctx.i64(t.E),
            ctx.keep(t.M), ctx.keep(t.S), ctx.keep(t.B),
            ctx.i32(n.resultType().quant.zeroPoints[0]), ctx.tid(), ctx.nth()});
}

} // namespace

void registerInt8AttentionCodegen() {
  registerCodegenUnit(NodeKind::MatMul, {"int8", supportsMatMulAct, emitMatMulAct});
  registerCodegenUnit(NodeKind::Softmax, {"int8", supportsSoftmax, emitSoftmax});
  registerCodegenUnit(NodeKind::LayerNormalization, {"int8", supportsLayerNorm, emitLayerNorm});
  registerCodegenUnit(NodeKind::ChannelLayerNormalization,
                      {"int8", supportsLayerNorm, emitLayerNorm});
}

} // namespace ember::cpu
