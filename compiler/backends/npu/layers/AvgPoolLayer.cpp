// AveragePool (docs/numerics.md section 4.5) as depthwise
// convolutions with weights 1 on the MAC array: acc = sum over the window of (x - zp_x)
// (padding holds zp_x), y = R(acc; s_x / (s_y * n)). The NPU applies one multiplier per
// channel, so every window must count the same n: refused when count_include_pad = 0
// meets padding, or when ceil_mode makes windows run past the padded input.
#include "../ConvCore.h"

#include "ember/graph/AttrViews.h"
#include "ember/quantization/Numerics.h"

namespace ember::npu {

namespace {

ConvJob jobOf(const Node& n, const Target& t, bool withData) {
  const Shape x = n.input(0).dims(), y = n.resultType(0).dims;
  ConvJob j;
  j.N = x[0], j.C = x[1], j.H = x[2], j.W = x[3], j.K = x[1], j.OH = y[2], j.OW = y[3];
  j.group = j.C;
  const WindowAttrs w = windowOf(n.attrs(), 2);
  const std::vector<int64_t>&k = w.kernel, &s = w.strides, &p = w.pads;
  j.KH = k.at(0), j.KW = k.at(1), j.sH = s.at(0), j.sW = s.at(1), j.padT = p.at(0),
  j.padL = p.at(1);
  const int64_t L = t.lanes();
  DramTensor in, out;
  in.N = j.N, in.C = j.C, in.H = j.H, in.W = j.W, in.CB = ceilDiv(j.C, L);
  out.N = j.N, out.C = j.K, out.H = j.OH, out.W = j.OW, out.CB = in.CB;
  j.in = ActView::of(in);
  j.out = ActView::of(out);
  j.zpIn = zeroPointOf(n.input(0));
  j.macs = j.N * j.C * j.OH * j.OW * j.KH * j.KW;
  if (!withData)
    return j;
  j.w.assign(size_t(j.K * j.KH * j.KW), 1);
  const QuantParams& yq = n.resultType(0).quant;
  const quant::Multiplier m =
      quant::averageMultiplier(scaleOf(n.input(0)), yq.scales.at(0), j.KH * j.KW);
  j.mult.assign(size_t(j.K), m);
  j.zpOut = yq.zeroPoints.at(0);
  const quant::Bounds bd = quant::activationBounds(n, yq);
  j.lo = bd.lo;
  j.hi = bd.hi;
  return j;
}

class AvgPoolLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkInputAndResult(n); !r.empty())
      return r;
    if (n.input(0).dims().size() != 4)
      return "only 2-D pooling (NCHW) runs on the NPU";
    const Attrs& a = n.attrs();
    const WindowAttrs w = windowOf(a, 2);
    const std::vector<int64_t>& p = w.pads;
    const bool padded = p[0] || p[1] || p[2] || p[3];
    if (padded && !w.countIncludePad)
      return "count_include_pad = 0 with padding gives border windows other counts; the "
             "NPU applies one multiplier per channel";
    if (w.dilations != std::vector<int64_t>{1, 1})
      return "dilated average pooling is not supported";
    const ConvJob j = jobOf(n, t, false);
    if ((j.OH - 1) * j.sH + j.KH > j.H + p[0] + p[2] ||
        (j.OW - 1) * j.sW + j.KW > j.W + p[1] + p[3])
      return "ceil_mode windows run past the padded input and count fewer elements; the NPU "
             "applies one multiplier per channel";
    return checkConvJob(j, t, 2);
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    ConvJob j = jobOf(n, ctx.t, true);
    j.in = ActView::of(ctx.tensor(n.input(0)));
    j.out = ActView::of(ctx.tensor(resultOf(n)));
    return emitConv(j, ctx);
  }
};

} // namespace

void registerAvgPoolLayers() {
  registerLayer(NodeKind::AveragePool, std::make_shared<AvgPoolLayer>());
}

} // namespace ember::npu
