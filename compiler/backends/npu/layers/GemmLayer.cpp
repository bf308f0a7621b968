// Gemm (B constant [K, N] after normalize-gemm, or [N, K] with transB; optional bias C)
// and MatMul with a constant right operand: 1x1 convolutions over the rows of A. A
// rank-2 [M, C] value in NCHWc is M rows of CB blocks (row of (m, cb) = m * CB + cb),
// which the convolution engine walks as one image of M lines, one pixel per line (line
// stride CB, block stride 1). MatMul's A may also be [B, T, C] (a transformer's
// sequence), laid out as B * T such rows. A MatMul whose B is an activation (attention)
// goes to ActMatMul.h.
#include "../ActMatMul.h"
#include "../ConvCore.h"

#include "ember/graph/AttrViews.h"
#include "ember/quantization/Numerics.h"

namespace ember::npu {

namespace {

class GemmLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (isActMatMul(n))
      return checkActMatMul(n, t);
    for (const auto& r : {checkActivation(n.input(0), "A"),
                          checkActivation(resultOf(n), "the result"), checkWeights(n, 1, 2)})
      if (!r.empty())
        return r;
    const size_t ra = n.input(0).dims().size();
    if (n.input(1).dims().size() != 2 || (ra != 2 && !(ra == 3 && n.kind() == NodeKind::MatMul)))
      return "only a 2-D A (or a [B, T, C] A of MatMul) and a 2-D B are supported";
    if (n.kind() == NodeKind::Gemm) {
      if (!gemmOf(n.attrs()).normalized())
        return "Gemm is not normalised (transA = 0, alpha = beta = 1: run normalize-gemm)";
      const NodeValue c = n.optionalInput(2);
      if (c && c.dims() != Shape{outputs(n)})
        return "the bias must have one value per output column";
    }
    const auto& wq = n.input(1).type().quant;
    if (wq.scales.size() > 1 && wq.axis != (transB(n) ? 0 : 1))
      return std::string("the weights must be quantized per output column (axis ") +
             (transB(n) ? "0" : "1") + ")";
    return checkConvJob(jobOf(n, t, false), t, 2);
  }

  std::string checkResidual(const Node& n, const Target& t) const override {
    if (isActMatMul(n))
      return "a MatMul of two activations has no epilogue to fuse an Add into";
    return checkResidualJob(jobOf(n, t, false), t);
  }

  std::string checkEpilogueLut(const Node& n, const Target& t) const override {
    if (isActMatMul(n))
      return "a MatMul of two activations has no per-channel requantize to fuse a Lut into";
    return checkLutJob(jobOf(n, t, false), t);
  }

  uint64_t tempBytes(const Node& n, const Target& t) const override {
    return isActMatMul(n) ? actMatMulTempBytes(n, t) : 0;
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    if (isActMatMul(n))
      return emitActMatMul(n, ctx);
    ConvJob j = jobOf(n, ctx.t, true);
    j.in = rowsView(ctx.tensor(n.input(0)));
    j.out = rowsView(ctx.tensor(resultOf(n)));
    attachResidual(j, resultOf(n), ctx, &rowsView);
    attachLut(j, ctx, &rowsView);
    return emitConv(j, ctx);
  }

private:
  /// A value of M rows as the convolution engine walks it: one image of M lines of one
  /// pixel (line stride CB, block stride 1).
  static ActView rowsView(const DramTensor& t) { return {t.offset, 0, 1, t.CB}; }
  /// B given as [K, C] (Gemm transB = 1) rather than [C, K].
  static bool transB(const Node& n) {
    return n.kind() == NodeKind::Gemm && gemmOf(n.attrs()).transB;
  }
  static int64_t outputs(const Node& n) { return n.input(1).dims()[transB(n) ? 0 : 1]; }

  static ConvJob jobOf(const Node& n, const Target& t, bool withData) {
    const NodeValue a = n.input(0), b = n.input(1);
    // A [B, T, C] A is B * T rows of C (its NCHWc layout, nchwOf).
    const Shape ad = nchwOf(a.dims());
    const int64_t M = ad[0], C = ad[1], K = outputs(n);
    ConvJob j;
    j.N = 1;
    j.C = C;
    j.H = M;
    j.W = 1;
    j.K = K;
    j.OH = M;
    j.OW = 1;
    const int64_t L = t.lanes();
    j.in = {0, 0, 1, ceilDiv(C, L)};
    j.out = {0, 0, 1, ceilDiv(K, L)};
    j.zpIn = zeroPointOf(a);
    j.macs = M * C * K;
    if (!withData)
      return j;
    // The engine wants [K][C]: B as is with transB, else transposed from [C, K].
    const std::vector<int8_t> bw = b.node->payload().toVector<int8_t>();
    j.w.resize(size_t(K * C));
    for (int64_t c = 0; c < C; ++c)
      for (int64_t k = 0; k < K; ++k)
        j.w[size_t(k * C + c)] = transB(n) ? bw[size_t(k * C + c)] : bw[size_t(c * K + k)];
    const NodeValue bias = n.kind() == NodeKind::Gemm ? n.optionalInput(2) : NodeValue();
    if (bias)
      j.bias = bias.node->payload().toVector<int32_t>();
    const QuantParams& yq = n.resultType(0).quant;
    for (int64_t k = 0; k < K; ++k)
      j.mult.push_back(quant::productMultiplier(scaleOf(a), weightScale(b, k), yq.scales.at(0)));
    j.zpOut = yq.zeroPoints.at(0);
    const quant::Bounds bd = quant::activationBounds(n, yq);
    j.lo = bd.lo;
    j.hi = bd.hi;
    return j;
  }
};

} // namespace

void registerGemmLayers() {
  registerLayer(NodeKind::Gemm, std::make_shared<GemmLayer>());
  registerLayer(NodeKind::MatMul, std::make_shared<GemmLayer>());
}

} // namespace ember::npu
