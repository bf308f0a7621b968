// Conv (2-D, any kernel, stride, padding, dilation, groups; depthwise) with optional
// bias and fused ReLU / Clip: docs/numerics.md section 4.1 on the MAC array.
#include "../ConvCore.h"

#include "ember/quantization/Numerics.h"

namespace ember::npu {

namespace {

/// A ConvJob for node `n` (a Conv). `withData`: also the weights and parameters.
ConvJob convJobOf(const Node& n, const Target& t, bool withData) {
  const NodeValue x = n.input(0), w = n.input(1), b = n.optionalInput(2);
  const Shape& xs = x.dims();
  const Shape& ws = w.dims();
  const Shape& ys = n.resultType(0).dims;
  const Attrs& a = n.attrs();
  ConvJob j;
  j.N = xs[0];
  j.C = xs[1];
  j.H = xs[2];
  j.W = xs[3];
  j.K = ys[1];
  j.OH = ys[2];
  j.OW = ys[3];
  j.KH = ws[2];
  j.KW = ws[3];
  const auto strides = a.getInts("strides", {1, 1}), dil = a.getInts("dilations", {1, 1});
  const auto pads = a.getInts("pads", {0, 0, 0, 0});
  j.sH = strides[0];
  j.sW = strides[1];
  j.dH = dil[0];
  j.dW = dil[1];
  j.padT = pads[0];
  j.padL = pads[1];
  j.group = a.getInt("group", 1);
  const int64_t L = t.lanes();
  DramTensor in, out;
  in.N = j.N, in.C = j.C, in.H = j.H, in.W = j.W, in.CB = ceilDiv(j.C, L);
  out.N = j.N, out.C = j.K, out.H = j.OH, out.W = j.OW, out.CB = ceilDiv(j.K, L);
  j.in = ActView::of(in);
  j.out = ActView::of(out);
  j.zpIn = zeroPointOf(x);
  j.macs = j.N * j.OH * j.OW * j.K * (j.C / j.group) * j.KH * j.KW;
  if (!withData)
    return j;
  j.w = w.node->payload().toVector<int8_t>();
  if (b)
    j.bias = b.node->payload().toVector<int32_t>();
  const QuantParams& yq = n.resultType(0).quant;
  for (int64_t k = 0; k < j.K; ++k)
    j.mult.push_back(quant::productMultiplier(scaleOf(x), weightScale(w, k), yq.scales.at(0)));
  j.zpOut = yq.zeroPoints.at(0);
  const quant::Bounds bd = quant::activationBounds(n, yq);
  j.lo = bd.lo;
  j.hi = bd.hi;
  return j;
}

class ConvLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    for (const auto& r : {checkActivation(n.input(0), "the input"),
                          checkActivation(resultOf(n), "the result"), checkWeights(n, 1, 2)})
      if (!r.empty())
        return r;
    if (n.input(0).dims().size() != 4)
      return "only 2-D convolutions (NCHW inputs) run on the NPU";
    if (n.attrs().getString("auto_pad", "NOTSET") != "NOTSET")
      return "auto_pad is not resolved into pads";
    return checkConvJob(convJobOf(n, t, false), t, 2);
  }
  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    ConvJob j = convJobOf(n, ctx.t, true);
    j.in = ActView::of(ctx.tensor(n.input(0)));
    j.out = ActView::of(ctx.tensor(resultOf(n)));
    return emitConv(j, ctx);
  }
};

} // namespace

void registerConvLayers() {
  registerLayer(NodeKind::Conv, std::make_shared<ConvLayer>());
}

} // namespace ember::npu
