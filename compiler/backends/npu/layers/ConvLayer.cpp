// Conv (2-D, any kernel, stride, padding, dilation, groups; depthwise) with optional
// bias and fused ReLU / Clip: docs/numerics.md section 4.1 on the MAC array.
#include "../ConvCore.h"
#include "ember/graph/AttrViews.h"
#include "ember/isa/roles.h"

#include "ember/quantization/Numerics.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

namespace ember::npu {

namespace {

/// A 1 x 1 convolution of vertical stride s > 1 (no top padding, and no output row in
/// the bottom padding) reads every s-th input line only: the job reads a view whose lines
/// are s lines apart, at stride 1, so that its tiles load none of the lines it skips.
void skipInputLines(ConvJob& j) {
  if (j.KH != 1 || j.KW != 1 || j.sH < 2 || j.padT != 0 || (j.OH - 1) * j.sH >= j.H)
    return;
  j.in.line *= j.sH;
  j.H = j.OH;
  j.sH = 1;
}

/// The ConvJob of convolution `n` (`withData`: also the weights and parameters); its
/// input view is `input`'s when given (emit), else that of an Nchwc tensor of the
/// input's shape (checks and pricing).
ConvJob convJobOf(const Node& n, const Target& t, bool withData,
                  const DramTensor* input = nullptr) {
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
  const Shape filter(ws.begin() + 2, ws.end());
  const WindowAttrs win = windowOf(a, 2, &filter);
  const std::vector<int64_t>&strides = win.strides, &dil = win.dilations, &pads = win.pads;
  j.sH = strides[0];
  j.sW = strides[1];
  j.dH = dil[0];
  j.dW = dil[1];
  j.padT = pads[0];
  j.padL = pads[1];
  j.group = win.group;
  const int64_t L = t.lanes();
  DramTensor in, out;
  in.N = j.N, in.C = j.C, in.H = j.H, in.W = j.W, in.CB = ceilDiv(j.C, L);
  out.N = j.N, out.C = j.K, out.H = j.OH, out.W = j.OW, out.CB = ceilDiv(j.K, L);
  j.in = ActView::of(input ? *input : in);
  j.out = ActView::of(out);
  skipInputLines(j);
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

/// Packing of a convolution with few input channels (the stem's 3): P neighbouring
/// pixels of C channels side by side in one row of L lanes (P * C <= L), so one gemm row
/// does P kernel columns at once and KW taps become G = ceil(KW / P). The packed tensor
/// is made on the MAC array by a 1 x P convolution whose weights pick channel c of pixel
/// x + dx into lane dx * C + c (multiplier 1: the codes are copied exactly), padded left
/// by padL and right by `padR` (both within the dma pad fields). The convolution reads
/// packed pixel x = ox * sW + g * P only, so with d = gcd(sW, P) > 1 (the 7x7 stride-2
/// stem packed by 4: d = 2) the packing pass makes every d-th packed pixel only (a 1 x P
/// convolution of stride d) and the convolution reads them at stride sW / d and
/// dilation P / d: Wp packed pixels per line.
struct Packing {
  int64_t P = 0, G = 0, Wp = 0, padR = 0, d = 1;
};

/// The packing of P pixels per row for `j`: kernel groups G, compaction stride d and the
/// packed pixels per line Wp the convolution reads (need - 1, the last one, is a multiple
/// of d).
Packing packBy(const ConvJob& j, int64_t P) {
  Packing pk;
  pk.P = P;
  pk.G = ceilDiv(j.KW, P);
  pk.d = std::gcd(j.sW, P);
  const int64_t need = (j.OW - 1) * j.sW + (pk.G - 1) * P + 1;
  pk.Wp = (need - 1) / pk.d + 1;
  return pk;
}

Packing packingOf(const ConvJob& j, const Target& t) {
  Packing pk;
  const int64_t L = t.lanes();
  const isa::InstrDesc& ld = t.dmaLoad();
  if (j.group != 1 || j.dW != 1 || j.KW < 2 || 2 * j.C > L)
    return pk;
  const int64_t maxPad =
      std::min(Target::maxOf(ld, isa::role::kPadRight), Target::maxOf(ld, isa::role::kPadLeft));
  // The widest packing whose right padding the dma pad field can express.
  for (int64_t P = std::min({L / j.C, maxPad + 1, j.KW}); P >= 2; --P) {
    if (j.padL > maxPad)
      return pk;
    const int64_t G = ceilDiv(j.KW, P);
    const int64_t need = (j.OW - 1) * j.sW + (G - 1) * P + 1; // packed pixels the conv reads
    const int64_t padR = std::max<int64_t>(0, need + P - 1 - j.W - j.padL);
    if (padR > maxPad)
      continue;
    pk = packBy(j, P);
    pk.padR = padR;
    return pk;
  }
  return pk;
}

/// The packing when the host lays the input out (isa::Layout::Packed, no packing pass):
/// as many pixels per row as the lanes hold, up to KW (no dma pad limit: the host writes
/// the zero point outside the image), the fewest kernel groups G first, then the fewest
/// packed pixels (the widest stride compaction d).
Packing hostPackingOf(const ConvJob& j, const Target& t) {
  Packing best;
  const int64_t L = t.lanes();
  if (j.group != 1 || j.dW != 1 || j.KW < 2 || 2 * j.C > L || j.padL > 65535)
    return best;
  for (int64_t P = std::min(L / j.C, j.KW); P >= 2; --P) {
    const Packing pk = packBy(j, P);
    if (!best.P || pk.G < best.G || (pk.G == best.G && pk.Wp < best.Wp))
      best = pk;
  }
  return best;
}

/// The packing job (input -> packed tensor at `packed`) and the convolution on the
/// packed tensor, from the original job `j`.
std::pair<ConvJob, ConvJob> packedJobs(const ConvJob& j, const Packing& pk, uint64_t packed,
                                       bool withData) {
  ConvJob a; // 1 x P selection convolution
  a.N = j.N, a.C = j.C, a.H = j.H, a.W = j.W, a.K = pk.P * j.C, a.OH = j.H, a.OW = pk.Wp;
  a.KH = 1, a.KW = pk.P, a.sW = pk.d, a.padT = 0, a.padL = j.padL;
  a.in = j.in;
  a.out = {packed, j.H * pk.Wp, j.H * pk.Wp, pk.Wp};
  a.zpIn = j.zpIn;
  a.zpOut = j.zpIn;
  ConvJob b = j; // the convolution on packed rows
  b.C = pk.P * j.C, b.W = pk.Wp, b.KW = pk.G, b.sW = j.sW / pk.d, b.dW = pk.P / pk.d, b.padL = 0;
  b.in = a.out;
  if (!withData)
    return {a, b};
  a.w.assign(size_t(a.K * a.C * a.KW), 0);
  for (int64_t dx = 0; dx < pk.P; ++dx)
    for (int64_t c = 0; c < j.C; ++c)
      a.w[size_t(((dx * j.C + c) * j.C + c) * pk.P + dx)] = 1;
  a.mult.assign(size_t(a.K), quant::quantizeMultiplier(1.0));
  b.w.assign(size_t(j.K * b.C * j.KH * pk.G), 0);
  for (int64_t k = 0; k < j.K; ++k)
    for (int64_t c = 0; c < j.C; ++c)
      for (int64_t kh = 0; kh < j.KH; ++kh)
        for (int64_t kw = 0; kw < j.KW; ++kw) {
          const int64_t g = kw / pk.P, dx = kw % pk.P;
          b.w[size_t(((k * b.C + dx * j.C + c) * j.KH + kh) * pk.G + g)] =
              j.w[size_t(((k * j.C + c) * j.KH + kh) * j.KW + kw)];
        }
  return {a, b};
}

/// The 1 x 1 convolution on the host's patches of `j`'s input (isa::Layout::Patches):
/// channel (kh * KW + kw) * C + c of an output pixel is tap (kh, kw) of input channel c,
/// so the reduction fills whole lane blocks (ceil(C * KH * KW / L) weight blocks per
/// output block instead of ceil(C / L) * KH * KW).
ConvJob patchJob(const ConvJob& j, bool withData) {
  ConvJob b = j;
  b.C = j.C * j.KH * j.KW, b.H = j.OH, b.W = j.OW;
  b.KH = b.KW = b.sH = b.sW = b.dH = b.dW = 1, b.padT = b.padL = 0;
  if (!withData)
    return b;
  b.w.assign(size_t(j.K * b.C), 0);
  for (int64_t k = 0; k < j.K; ++k)
    for (int64_t c = 0; c < j.C; ++c)
      for (int64_t kh = 0; kh < j.KH; ++kh)
        for (int64_t kw = 0; kw < j.KW; ++kw)
          b.w[size_t(k * b.C + (kh * j.KW + kw) * j.C + c)] =
              j.w[size_t(((k * j.C + c) * j.KH + kh) * j.KW + kw)];
  return b;
}

/// True when `n` reads a graph input (a QuantizeLinear of a placeholder), which the host
/// may lay out for it (Layer::hostLayout).
bool readsGraphInput(const Node& n) {
  const Node* q = n.input(0).node;
  return q->kind() == NodeKind::QuantizeLinear && q->input(0).node->kind() == NodeKind::Placeholder;
}

/// The patches of `j`'s input when it has few channels (2 C <= L, as for packing: Nchwc
/// leaves most lanes idle), they take fewer weight blocks than its channel blocks times
/// taps and every field fits the I/O table's; else all zero. With more channels patches
/// save few blocks (C = 40, 3 x 3: 23 instead of 27) for taps times the input bytes.
isa::IoPatches patchesOf(const ConvJob& j, const Target& t) {
  const int64_t L = t.lanes(), taps = j.KH * j.KW;
  const int64_t u16 = 65535;
  if (j.group != 1 || taps < 2 || 2 * j.C > L || ceilDiv(j.C * taps, L) >= ceilDiv(j.C, L) * taps)
    return {};
  for (int64_t v : {j.KH, j.KW, j.sH, j.sW, j.dH, j.dW, j.padT, j.padL})
    if (v > u16)
      return {};
  if (j.OH > int64_t(UINT32_MAX) || j.OW > int64_t(UINT32_MAX))
    return {};
  auto u = [](int64_t v) { return uint16_t(v); };
  return {u(j.KH), u(j.KW),   u(j.sH),   u(j.sW),        u(j.dH),
          u(j.dW), u(j.padT), u(j.padL), uint32_t(j.OH), uint32_t(j.OW)};
}

class ConvLayer : public Layer {
  /// The packing when both jobs fit the NPU and the cost model prices the packing pass
  /// plus the packed convolution (plus a barrier: two DMA latencies) below the plain
  /// convolution; else P = 0.
  static Packing usablePacking(const ConvJob& j, const Target& t) {
    const Packing pk = packingOf(j, t);
    if (!pk.P)
      return pk;
    const auto jobs = packedJobs(j, pk, 0, false);
    if (!checkConvJob(jobs.first, t, 2).empty() || !checkConvJob(jobs.second, t, 2).empty() ||
        !checkConvJob(j, t, 2).empty())
      return checkConvJob(j, t, 2).empty() ? Packing{} : pk;
    const CompileOptions none;
    const double packed = chooseConvTiling(jobs.first, t, 2, none).cycles +
                          chooseConvTiling(jobs.second, t, 2, none).cycles +
                          2.0 * double(t.isa().hw().dma.latency_cycles);
    return packed < chooseConvTiling(j, t, 2, none).cycles ? pk : Packing{};
  }

public:
  /// The cheapest of the plain convolution, the host packing's (the NPU packing's
  /// convolution without the packing pass) and the 1 x 1 one on the host's patches, as
  /// the cost model prices those that fit.
  std::optional<HostLayout> hostLayout(const Node& n, const Target& t,
                                       const CompileOptions& opts) const override {
    if (!check(n, t).empty())
      return std::nullopt;
    const ConvJob j = convJobOf(n, t, false);
    const CompileOptions none;
    auto cost = [&](const ConvJob& b) {
      return checkConvJob(b, t, 2).empty() ? chooseConvTiling(b, t, 2, none).cycles
                                           : std::numeric_limits<double>::infinity();
    };
    double best = cost(j);
    std::optional<HostLayout> layout;
    if (const Packing pk = hostPackingOf(j, t); pk.P && pk.Wp <= int64_t(UINT32_MAX))
      if (const double c = cost(packedJobs(j, pk, 0, false).second); c < best) {
        best = c;
        layout = HostLayout{
            isa::IoPacking{uint16_t(pk.P), uint16_t(pk.d), uint16_t(j.padL), uint32_t(pk.Wp)}, {}};
      }
    if (const isa::IoPatches pt = opts.hostPatches ? patchesOf(j, t) : isa::IoPatches{};
        pt.kernel_h)
      if (cost(patchJob(j, false)) < best)
        layout = HostLayout{{}, pt};
    return layout;
  }

  std::string check(const Node& n, const Target& t) const override {
    for (const auto& r : {checkActivation(n.input(0), "the input"),
                          checkActivation(resultOf(n), "the result"), checkWeights(n, 1, 2)})
      if (!r.empty())
        return r;
    if (n.input(0).dims().size() != 4)
      return "only 2-D convolutions (NCHW inputs) run on the NPU";
    const Shape& wd = n.input(1).dims();
    const Shape filter(wd.begin() + 2, wd.end());
    if (windowOf(n.attrs(), 2, &filter).autoPad != "NOTSET")
      return "auto_pad is not resolved into pads";
    const ConvJob j = convJobOf(n, t, false);
    const std::string why = checkConvJob(j, t, 2);
    // A convolution the array cannot walk (a ViT's 16 x 16 patch embedding: stride 16 past
    // the gemm's stride field) still runs as the 1 x 1 convolution on the host's patches
    // when it reads a graph input (emit refuses it if the host did not write them).
    if (!why.empty() && readsGraphInput(n) && patchesOf(j, t).kernel_h &&
        checkConvJob(patchJob(j, false), t, 2).empty())
      return "";
    return why;
  }

  bool needsHostLayout(const Node& n, const Target& t) const override {
    return !checkConvJob(convJobOf(n, t, false), t, 2).empty(); // the host's patches only
  }

  std::string checkResidual(const Node& n, const Target& t) const override {
    return checkResidualJob(convJobOf(n, t, false), t);
  }

  std::string checkEpilogueLut(const Node& n, const Target& t) const override {
    return checkLutJob(convJobOf(n, t, false), t);
  }

  uint64_t tempBytes(const Node& n, const Target& t) const override {
    const ConvJob j = convJobOf(n, t, false);
    const Packing pk = usablePacking(j, t);
    return pk.P ? uint64_t(j.N * j.H * pk.Wp * t.lanes()) : 0;
  }
  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    ConvJob j = convJobOf(n, ctx.t, true, &ctx.tensor(n.input(0)));
    j.out = ActView::of(ctx.tensor(resultOf(n)));
    attachResidual(j, resultOf(n), ctx);
    attachLut(j, ctx);
    if (ctx.tensor(n.input(0)).patches.kernel_h) {
      // The host wrote every output pixel's window: a 1 x 1 convolution on them.
      ConvJob b = patchJob(j, true);
      b.in = j.in;
      LayerInfo info = emitConv(b, ctx);
      info.macs = j.macs;
      info.tiling = "host patches " + std::to_string(b.C) + "ch, " + info.tiling;
      return info;
    }
    if (const isa::IoPacking hp = ctx.tensor(n.input(0)).packing; hp.pixels) {
      // The host wrote the input packed: only the convolution on the packed rows.
      Packing pk;
      pk.P = hp.pixels, pk.G = ceilDiv(j.KW, pk.P), pk.d = hp.stride, pk.Wp = hp.width;
      ConvJob b = packedJobs(j, pk, 0, true).second;
      b.in = j.in;
      LayerInfo info = emitConv(b, ctx);
      info.macs = j.macs;
      info.tiling =
          "host-packed " + std::to_string(pk.P) + "x" + std::to_string(j.C) + "ch, " + info.tiling;
      return info;
    }
    if (const std::string why = checkConvJob(convJobOf(n, ctx.t, false), ctx.t, 2); !why.empty())
      throw Error(nodeRef(n), "NPU backend: " + why +
                                  ", and its input is not laid out as patches by the host (it "
                                  "is so only when this convolution is the input's one reader)");
    const Packing pk = usablePacking(j, ctx.t);
    if (!pk.P)
      return emitConv(j, ctx);
    const auto jobs = packedJobs(j, pk, ctx.temp, true);
    LayerInfo pack = emitConv(jobs.first, ctx);
    ctx.prog.barrier(); // the convolution reads the packed rows just stored
    LayerInfo info = emitConv(jobs.second, ctx);
    info.macs = j.macs;
    info.tiling = "packed " + std::to_string(pk.P) + "x" + std::to_string(j.C) + "ch (" +
                  pack.tiling + "), " + info.tiling;
    for (int m = 0; m < 4; ++m)
      info.sram[m] = std::max(info.sram[m], pack.sram[m]);
    return info;
  }
};

} // namespace

void registerConvLayers() {
  registerLayer(NodeKind::Conv, std::make_shared<ConvLayer>());
}

} // namespace ember::npu
