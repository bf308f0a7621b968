// Codegen of Conv (float32, 1-D and 2-D): depthwise convolutions call the phase-plane
// kernel (its scratch sized by libjit/ConvScratch.h); every other convolution has its
// constant weights packed here (k-major, zero rows past the group's channels) and calls
// the packed-GEMM kernel whose MR x NR blocking fits the host's vector registers: blocks
// of MR output channels against panels of NR positions, or, on planes of few positions,
// blocks of NR channels against panels of MR positions (blockingOf).
// The 3-D Conv, a Conv whose weights are known only at run time (not depthwise) and
// ConvTranspose (1-D to 3-D) call the kernels of libjit/ConvNd.cpp, which repeat the
// interpreter's arithmetic operation for operation (the path of its GEMM core chosen here
// from the shapes, ConvNd.h).
#include "Codegen.h"
#include "Jit.h"
#include "libjit/ConvNd.h"
#include "libjit/ConvScratch.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/attrs/FusedActivation.h"

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
  // The packed-GEMM path needs its weights at compile time; ember_conv3d_f32 reads them as
  // they are (byInterpreterOrder).
  const size_t rank = n.input(0).dims().size();
  return rank >= 3 && rank <= 5;
}

/// Whether a Conv runs on ember_conv3d_f32 (any window of one to three dimensions, the
/// interpreter's arithmetic): 3-D, or weights known only at run time (not depthwise).
bool byInterpreterOrder(const Op& n) {
  const int64_t group = groupOf(n.attrs());
  const bool depthwise = n.input(0).dims()[1] == group && group > 1;
  return n.input(0).dims().size() == 5 || (!depthwise && !n.input(1).isConstant());
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

/// The weights of ember_conv_f32_winograd2x3: U = G g G^T per output and input channel
/// (G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], in double, rounded once), packed
/// U[xi][block of 32 output channels][c][32] with zeros past M.
std::vector<float> winogradWeights(const float* src, const Geom& g) {
  const int64_t mblocks = (g.M + 31) / 32;
  std::vector<float> out(static_cast<size_t>(16 * mblocks * g.C * 32), 0.f);
  const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  for (int64_t m = 0; m < g.M; ++m)
    for (int64_t c = 0; c < g.C; ++c) {
      const float* w = src + (m * g.C + c) * 9;
      double t[4][3]; // G g
      for (int a = 0; a < 4; ++a)
        for (int j = 0; j < 3; ++j)
          t[a][j] = G[a][0] * w[j] + G[a][1] * w[3 + j] + G[a][2] * w[6 + j];
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) {
          const double u = t[a][0] * G[b][0] + t[a][1] * G[b][1] + t[a][2] * G[b][2];
          const int64_t xi = 4 * a + b;
          out[static_cast<size_t>(((xi * mblocks + m / 32) * g.C + c) * 32 + m % 32)] =
              static_cast<float>(u);
        }
    }
  return out;
}

int64_t roundUp(int64_t a, int64_t b) {
  return (a + b - 1) / b * b;
}

/// The register blocking of a packed-GEMM convolution: MR broadcast rows by NR vector
/// columns, and whether the vectors run over output channels (channelVectors: few
/// output positions) rather than positions.
struct Blocking {
  int64_t mr = 8, nr = 32;
  bool channelVectors = false;
  /// The direct kernel (channels in the vectors, inputs broadcast from a padded band):
  /// mr = 7 positions, nr = 32 channels (or 14 x 16), no X_col.
  bool direct = false;
  /// Winograd F(2x2, 3x3) (ember_conv_f32_winograd2x3): weights transformed, no mr / nr.
  bool winograd = false;
  const char* kernel = "";   ///< the libjit kernel of this blocking
  int64_t scratchFloats = 0; ///< its scratch per thread (libjit/ConvScratch.h)
};

/// Most bytes of scratch one thread of the channel-vectorised kernel may take (all of
/// X_col of an image).
constexpr int64_t kMaxGatherBytes = int64_t(4) << 20;

Blocking blockingOf(const Geom& g) {
  Blocking b;
  const bool wide = hostHasAvx512();
  if (!wide) {
    b.mr = 6;
    b.nr = 16;
  }
  // Positions in panels of nr leave the last panel partly empty on small planes (49
  // positions fill 64); with channels in the vectors only a panel of mr positions and a
  // block of nr channels are padded. Taken when it saves at least 7% of the work, on
  // AVX-512 hosts (the kernel gathers X_col with the masked-load packPanel32).
  const int64_t P = g.OH * g.OW, mg = g.M / g.group, K = (g.C / g.group) * g.KH * g.KW;
  const int64_t plain = roundUp(P, b.nr) * roundUp(mg, b.mr);
  const int64_t swapped = roundUp(P, b.mr) * roundUp(mg, b.nr);
  b.channelVectors =
      wide && swapped * 100 < plain * 93 && jitops::convTScratchFloats(K, P) * 4 <= kMaxGatherBytes;
  b.kernel = b.channelVectors ? "ember_conv_f32_t_mr8_nr32"
             : wide           ? "ember_conv_f32_mr8_nr32"
                              : "ember_conv_f32_mr6_nr16";
  b.scratchFloats = b.channelVectors ? jitops::convTScratchFloats(K, P) : K * b.nr + b.mr * b.nr;
  // A kernel larger than 1x1 gathers each input KH x KW times into X_col (about 8% of
  // ResNet-18's time); the direct kernel reads the inputs in place. Taken on AVX-512
  // hosts unless its padding (positions per row to a multiple of 7, channels to 32) costs
  // more than that gather saves. A 1x1 convolution reads its panels in place already.
  const int64_t cg = g.C / g.group;
  const jitops::DirectGeom dg =
      jitops::directGeom(cg, g.OH, g.OW, g.KH, g.KW, g.sh, g.sw, g.dh, g.dw);
  // Its narrow variant (14 positions x 16 channels) for groups of at most 16 channels.
  const int64_t directWide =
      g.OH * roundUp(g.OW, jitops::kDirectSlice) * roundUp(mg, jitops::kDirectBlock);
  const int64_t directNarrow =
      g.OH * roundUp(g.OW, jitops::kDirectNarrowSlice) * roundUp(mg, jitops::kDirectNarrowBlock);
  const bool narrow = directNarrow < directWide;
  const int64_t direct = narrow ? directNarrow : directWide;
  const int64_t best = b.channelVectors ? swapped : plain;
  // A pointwise convolution (1x1, stride 1, no padding) whose panels of nr positions pad
  // less than 5%: the packed GEMM reads its panels in place and stores whole aligned
  // rows, where the direct kernel transposes every tile (ResNet-50's 28x28 layers).
  const bool pointwise = g.KH == 1 && g.KW == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 &&
                         g.pw == 0 && g.OH == g.H && g.OW == g.W;
  const bool inPlaceGemm = pointwise && !b.channelVectors && plain * 100 < direct * 105;
  if (wide && (g.KH * g.KW > 1 ? direct * 100 <= best * 108 : direct < best && !inPlaceGemm) &&
      dg.scratchFloats(cg) * 4 <= kMaxGatherBytes) {
    b = Blocking{};
    b.mr = narrow ? jitops::kDirectNarrowSlice : jitops::kDirectSlice;
    b.nr = narrow ? jitops::kDirectNarrowBlock : jitops::kDirectBlock;
    b.direct = true;
    b.kernel = narrow ? "ember_conv_f32_direct_mr14_nr16" : "ember_conv_f32_direct_mr7_nr32";
    b.scratchFloats = dg.scratchFloats(cg);
  }
  // 3x3, stride 1, one group, on planes of at least 14 columns: Winograd F(2x2, 3x3)
  // takes 16 products per 2x2 outputs and channel pair instead of 36. On 7x7 planes its
  // transformed weights (16/9 of the weights) would stream from memory once per run for
  // few tiles.
  if (wide && g.group == 1 && g.KH == 3 && g.KW == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 &&
      g.dw == 1 && g.OW >= 14 && g.OH >= 2 && g.C >= 16 && g.M >= 16) {
    b = Blocking{};
    b.winograd = true;
    b.kernel = "ember_conv_f32_winograd2x3";
    b.scratchFloats = jitops::winogradGeom(g.N, g.C, g.M, g.OH, g.OW, 1).scratchFloats(g.C);
  }
  return b;
}

/// The packed-GEMM and direct kernels add a residual in their epilogue; the convolution
/// must have no activation of its own (the Add's applies after the sum).
bool takesResidualAdd(const Op& n) {
  if (byInterpreterOrder(n))
    return false;
  const Geom g = geomOf(n);
  return !(g.C == g.group && g.group > 1) && !FusedActivation::of(n.node()).active();
}

/// True when the depthwise convolution `g` (one channel per group) runs with 16
/// channels in each vector (ember_dwconv_f32_c16): one output channel per input channel,
/// whole blocks of 16 channels, on AVX-512 hosts (16-lane transposes). It measured faster
/// than the per-plane kernel on every depthwise layer of MobileNetV2; a last block of 8
/// channels (MobileNetV3-small's 72) did not (docs/compiler/cpu-kernels.md).
bool dwOnChannelVectors(const Geom& g) {
  return g.M == g.C && g.C % 16 == 0 && hostHasAvx512();
}

/// The window of a 1-D to 3-D Conv or ConvTranspose as libjit/ConvNd.h's NdGeom (leading
/// spatial dimensions of extent 1), flattened in its field order.
std::vector<int64_t> ndGeomOf(const Op& n, jitops::NdGeom* out) {
  const Shape& x = n.input(0).dims();
  const Shape& w = n.input(1).dims();
  const Shape& y = n.resultType().dims;
  const size_t nsp = x.size() - 2;
  const Shape filter(w.begin() + 2, w.end());
  const WindowAttrs a = windowOf(n.attrs(), nsp, &filter);
  jitops::NdGeom g{x[0],      x[1],      y[1],      a.group,   {1, 1, 1},
                   {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}};
  for (size_t i = 0, at = 3 - nsp; i < nsp; ++i, ++at) {
    g.in[at] = x[2 + i];
    g.out[at] = y[2 + i];
    g.k[at] = filter[i];
    g.s[at] = a.strides[i];
    g.d[at] = a.dilations[i];
    g.p[at] = a.pads[i];
  }
  *out = g;
  std::vector<int64_t> v = {g.N, g.C, g.M, g.group};
  for (const int64_t* f : {g.in, g.out, g.k, g.s, g.d, g.p})
    v.insert(v.end(), f, f + 3);
  if (v.size() != size_t(jitops::kNdGeomFields))
    throw Error(nodeRef(n), "convolution geometry of the wrong size");
  return v;
}

/// A Conv on ember_conv3d_f32 (byInterpreterOrder), with the interpreter's path for its
/// shapes.
void emitConvNd(const Op& n, CodegenContext& ctx) {
  jitops::NdGeom g;
  const std::vector<int64_t> geom = ndGeomOf(n, &g);
  const FusedActivation act = FusedActivation::of(n.node());
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  const jitops::NdSum sum = jitops::convSum(mg, cg, g.group, g.outSize());
  ctx.call("ember_conv3d_f32",
           {ctx.addr(n.input(0)), ctx.addr(n.input(1)), ctx.addr(n.optionalInput(2)), ctx.result(n),
            ctx.int64Array(geom), ctx.i32(sum), ctx.i32(interpreterGemmFuses()),
            ctx.i32(static_cast<int>(act.kind)), ctx.f64(act.lo), ctx.f64(act.hi),
            ctx.scratch(static_cast<size_t>(jitops::conv3dScratchFloats(g, sum) * 4)), ctx.tid(),
            ctx.nth()});
}

void emitConv(const Op& n, CodegenContext& ctx) {
  if (byInterpreterOrder(n))
    return emitConvNd(n, ctx);
  const Geom g = geomOf(n);
  const CodegenContext::Residual* residual = ctx.residual();
  const FusedActivation act = residual ? residual->activation : FusedActivation::of(n.node());
  const bool depthwise = g.C == g.group && g.group > 1;
  const Blocking blk = blockingOf(g);
  if (blk.winograd) {
    // A part that takes a group of output channels transforms its band's inputs again:
    // no more parts than bands (at least two), so the inputs are transformed once per
    // band, or twice for a plane of one band (ResNet's 14x14 layers), not once per part.
    const jitops::WinogradGeom wg = jitops::winogradGeom(g.N, g.C, g.M, g.OH, g.OW, 1);
    ctx.limitParts(g.N * ((wg.th + wg.R - 1) / wg.R));
  }
  if (blk.direct && g.KH * g.KW == 1) {
    // Likewise a 1x1 layer's band of slices is copied by every part that takes some of its
    // output channels: no more parts than bands (at least two).
    const jitops::DirectGeom dg =
        jitops::directGeom(g.C / g.group, g.OH, g.OW, g.KH, g.KW, g.sh, g.sw, g.dh, g.dw);
    ctx.limitParts(g.N * g.group * ((g.OH + dg.bandRows - 1) / dg.bandRows));
  }
  std::vector<llvm::Value*> args = {ctx.addr(n.input(0))};
  if (depthwise)
    args.push_back(ctx.addr(n.input(1)));
  else if (blk.winograd)
    args.push_back(ctx.keep(winogradWeights(n.input(1).constantData<float>(), g)));
  else
    args.push_back(ctx.keep(packWeights(n.input(1).constantData<float>(), g,
                                        blk.channelVectors || blk.direct ? blk.nr : blk.mr)));
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
    if (residual)
      throw Error(nodeRef(n), "a depthwise convolution takes no residual Add");
    const bool c16 = dwOnChannelVectors(g);
    const int64_t floats =
        c16 ? jitops::dwC16Geom(g.OH, g.OW, g.KH, g.KW, g.sh, g.sw, g.dh, g.dw).scratchFloats()
            : jitops::dwGeom(g.OH, g.OW, g.KH, g.KW, g.sh, g.sw, g.dh, g.dw).scratchFloats();
    args.push_back(ctx.scratch(static_cast<size_t>(floats * 4)));
    args.push_back(ctx.tid());
    args.push_back(ctx.nth());
    ctx.call(c16 ? "ember_dwconv_f32_c16" : "ember_dwconv_f32", args);
    return;
  }
  args.push_back(residual ? residual->addend : ctx.nullPtr());
  args.push_back(ctx.scratch(static_cast<size_t>(blk.scratchFloats * 4)));
  args.push_back(ctx.tid());
  args.push_back(ctx.nth());
  // The channel counts C and M only bound loops: layers that differ in them share an
  // instance. The spatial sizes stay constants (the panel gathers specialise on them).
  ctx.call(blk.kernel, args, {5, 8});
}

bool supportsConvTranspose(const Op& n) {
  if (n.numInputs() < 2 || !plainFloat(n.input(0)) || !plainFloat(n.input(1)) ||
      !plainFloat(n.optionalInput(2)) || n.resultType().kind != ElemKind::Float32 ||
      n.resultType().quant.isQuantized())
    return false;
  const size_t rank = n.input(0).dims().size();
  return rank >= 3 && rank <= 5 && n.input(1).dims().size() == rank;
}

/// ConvTranspose: ember_conv_transpose_f32 with the interpreter's path for its product.
void emitConvTranspose(const Op& n, CodegenContext& ctx) {
  jitops::NdGeom g;
  const std::vector<int64_t> geom = ndGeomOf(n, &g);
  ctx.call("ember_conv_transpose_f32",
           {ctx.addr(n.input(0)), ctx.addr(n.input(1)), ctx.addr(n.optionalInput(2)), ctx.result(n),
            ctx.int64Array(geom),
            ctx.i32(jitops::convTransposeSum(g.M / g.group, g.kSize(), g.inSize())),
            ctx.i32(interpreterGemmFuses()),
            ctx.scratch(static_cast<size_t>(jitops::convTransposeScratchFloats(g) * 4)), ctx.tid(),
            ctx.nth()});
}

} // namespace

std::vector<int64_t> convNdGeom(const Op& n) {
  jitops::NdGeom g;
  return ndGeomOf(n, &g);
}

void registerConvCodegen() {
  registerCodegenUnit(NodeKind::Conv, {"conv", supportsConv, emitConv, takesResidualAdd});
  registerCodegenUnit(NodeKind::ConvTranspose, {"conv", supportsConvTranspose, emitConvTranspose});
}

} // namespace ember::cpu
