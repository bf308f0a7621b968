// Codegen of Conv (float32, 1-D and 2-D): depthwise convolutions call the direct
// kernel; every other convolution has its constant weights packed here into blocks of
// MR output channels (k-major, zero rows past the group's channels) and calls the
// packed-GEMM kernel whose MR x NR blocking fits the host's vector registers.
#include "Codegen.h"
#include "Jit.h"

#include "ember/graph/AttrViews.h"
#include "ember/passes/FusedActivation.h"

namespace ember::cpu {

namespace {

bool plainFloat(const OpInput& v) {
  return !v || (v.kind() == ElemKind::Float32 && !v.type().quant.isQuantized());
}

/// The 2-D geometry of a 1-D or 2-D convolution (1-D: height 1).
struct Geom {
  int64_t N, C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, group;
};

Geom geomOf(const Op& n) {
  const Shape& x = n.input(0).dims();
  const Shape& w = n.input(1).dims();
  const Shape& y = n.resultType().dims;
  const bool oneD = x.size() == 3;
  const size_t nsp = x.size() - 2;
  const Shape filter(w.begin() + 2, w.end());
  const WindowAttrs a = windowOf(n.attrs(), nsp, &filter);
  const std::vector<int64_t>&s = a.strides, &p = a.pads, &d = a.dilations;
  Geom g{};
  g.N = x[0];
  g.C = x[1];
  g.M = y[1];
  g.group = a.group;
  if (oneD) {
    g.H = g.OH = g.KH = g.sh = g.dh = 1;
    g.ph = 0;
    g.W = x[2];
    g.OW = y[2];
    g.KW = w[2];
    g.sw = s[0];
    g.pw = p[0];
    g.dw = d[0];
  } else {
    g.H = x[2];
    g.W = x[3];
    g.OH = y[2];
    g.OW = y[3];
    g.KH = w[2];
    g.KW = w[3];
    g.sh = s[0];
    g.sw = s[1];
    g.ph = p[0];
    g.pw = p[1];
    g.dh = d[0];
    g.dw = d[1];
  }
  return g;
}

bool supportsConv(const Op& n) {
  if (n.numInputs() < 2 || !plainFloat(n.input(0)) || !plainFloat(n.input(1)) ||
      !plainFloat(n.optionalInput(2)) || n.resultType().kind != ElemKind::Float32 ||
      n.resultType().quant.isQuantized())
    return false;
  const size_t rank = n.input(0).dims().size();
  if (rank != 3 && rank != 4)
    return false;
  const int64_t group = n.attrs().getInt("group", 1);
  const bool depthwise = n.input(0).dims()[1] == group && group > 1;
  // The packed-GEMM path needs its weights at compile time.
  return depthwise || n.input(1).isConstant();
}

std::vector<float> packWeights(const float* src, const Geom& g, int64_t mr) {
  const int64_t mg = g.M / g.group, K = (g.C / g.group) * g.KH * g.KW;
  const int64_t mblocks = (mg + mr - 1) / mr;
  std::vector<float> out(static_cast<size_t>(g.group * mblocks * K * mr), 0.f);
  for (int64_t grp = 0; grp < g.group; ++grp)
    for (int64_t mb = 0; mb < mblocks; ++mb)
      for (int64_t i = 0; i < mr && mb * mr + i < mg; ++i) {
        const int64_t m = grp * mg + mb * mr + i;
        float* dst = out.data() + (grp * mblocks + mb) * K * mr + i;
        for (int64_t k = 0; k < K; ++k)
          dst[k * mr] = src[m * K + k];
      }
  return out;
}

void emitConv(const Op& n, CodegenContext& ctx) {
  const Geom g = geomOf(n);
  const FusedActivation act = FusedActivation::of(n.node());
  const bool depthwise = g.C == g.group && g.group > 1;
  std::vector<llvm::Value*> args = {ctx.addr(n.input(0))};
  if (depthwise) {
    args.push_back(ctx.addr(n.input(1)));
  } else {
    const int64_t mr = hostHasAvx512() ? 8 : 6;
    args.push_back(ctx.keep(packWeights(n.input(1).constantData<float>(), g, mr)));
  }
  args.push_back(ctx.addr(n.optionalInput(2)));
  args.push_back(ctx.result(n));
  for (int64_t v :
       {g.N, g.C, g.H, g.W, g.M, g.OH, g.OW, g.KH, g.KW, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw})
    args.push_back(ctx.i64(v));
  if (!depthwise)
    args.push_back(ctx.i64(g.group));
  args.push_back(ctx.i32(static_cast<int>(act.kind)));
  args.push_back(ctx.f32(act.lo));
  args.push_back(ctx.f32(act.hi));
  if (depthwise) {
    args.push_back(ctx.tid());
    args.push_back(ctx.nth());
    ctx.call("ember_dwconv_f32", args);
    return;
  }
  const bool wide = hostHasAvx512();
  const int64_t mr = wide ? 8 : 6, nr = wide ? 32 : 16;
  const int64_t K = (g.C / g.group) * g.KH * g.KW;
  args.push_back(ctx.scratch(static_cast<size_t>((K * nr + mr * nr) * 4)));
  args.push_back(ctx.tid());
  args.push_back(ctx.nth());
  // The channel counts C and M only bound loops: layers that differ in them share an
  // instance. The spatial sizes stay constants (the panel gathers specialise on them).
  ctx.call(wide ? "ember_conv_f32_mr8_nr32" : "ember_conv_f32_mr6_nr16", args, {5, 8});
}

} // namespace

void registerConvCodegen() {
  registerCodegenUnit(NodeKind::Conv, {"conv", supportsConv, emitConv});
}

} // namespace ember::cpu
