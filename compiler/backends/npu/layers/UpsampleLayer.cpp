// Upsampling by DMA: a row stream loads whole lines of pixels (rows of L lanes) into the
// act SRAM and its stores scatter them, no compute (but for bilinear):
//   - Resize, nearest by whole factors sH x sW (ResizeNearest.h): every input pixel row is
//     stored sH x sW times, at output rows (y sH + i, x sW + j). Input line l (of every
//     image and channel block) lands at output row l sH OW, so one stream walks the whole
//     tensor; per tile one dma.st per (i, j), with pixels sW rows apart (size0 = 1, size1 =
//     the line's pixels, stride1 = sW) and lines sH OW rows apart (size2, stride2).
//   - DepthToSpace (DCR, block b; what pass convtranspose-to-depthtospace makes of a
//     k = s transposed convolution): channel group g = i b + j of the input (C channels)
//     goes to pixel (y b + i, x b + j) of the output. When C fills whole lane blocks, each
//     group's blocks are rows the DMA scatters directly; otherwise a 1 x 1 lane-move job on
//     the MAC array (laneMoveJob, codes unchanged) first lays every group out from a block
//     boundary in a DRAM scratch, its padding lanes the zero point.
#include "../ConvCore.h"
#include "../Stream.h"
#include "ember/graph/AttrViews.h"
#include "ember/graph/ResizeNearest.h"
#include "ember/isa/roles.h"
#include "ember/quantization/BilinearUpsample.h"

namespace ember::npu {

namespace {

/// Where the rows of a stream of lines land: line l of the stream at DRAM row `dst + l *
/// lineStride`, its pixel x at + x * pixelStride, once per row offset of `offsets`.
struct Scatter {
  uint64_t dst = 0; ///< Byte offset of the stream's line 0, pixel 0.
  int64_t W = 0, lineStride = 0, pixelStride = 1;
  std::vector<int64_t> offsets;
};

/// "" when the dma.st fields can express the scatter's strides, else why not.
std::string checkScatter(const Target& t, int64_t lineStride, int64_t pixelStride) {
  const int64_t s1 = Target::maxOf(t.dmaStore(), isa::role::kStride1);
  if (pixelStride > s1)
    return "a pixel stride of " + std::to_string(pixelStride) + " rows exceeds dma.st's stride1 (" +
           std::to_string(s1) + ")";
  (void)lineStride; // a line stride beyond stride2 is stored line by line
  return "";
}

/// The dma.st instructions of a tile of `lines` lines (packed from act row `act`) whose
/// first line is line `l0` of the stream.
std::vector<isa::Instruction> scatterStores(const Program& p, const Scatter& s, int64_t act,
                                            int64_t l0, int64_t lines) {
  const Target& t = p.target();
  const int64_t L = t.lanes();
  const isa::InstrDesc& st = t.dmaStore();
  const int64_t max0 = Target::maxOf(st, isa::role::kSize0),
                max1 = Target::maxOf(st, isa::role::kSize1),
                max2 = Target::maxOf(st, isa::role::kSize2),
                maxS1 = Target::maxOf(st, isa::role::kStride1),
                maxS2 = Target::maxOf(st, isa::role::kStride2);
  const bool rowsWhole = s.pixelStride == 1; // a line's pixels are contiguous in DRAM
  // Lines per instruction: a whole line fits the inner field(s) and the line stride fits.
  const int64_t inner = rowsWhole ? max0 : max1;
  const int64_t outerMax = rowsWhole ? max1 : max2;
  const int64_t strideMax = rowsWhole ? maxS1 : maxS2;
  const bool multiLine = s.W <= inner && s.lineStride <= strideMax;
  std::vector<isa::Instruction> out;
  for (int64_t off : s.offsets) {
    const auto rowAt = [&](int64_t l, int64_t x) {
      return s.dst + uint64_t(((l0 + l) * s.lineStride + x * s.pixelStride + off) * L);
    };
    if (multiLine) {
      for (int64_t l = 0; l < lines; l += outerMax) {
        const int64_t n = std::min(outerMax, lines - l);
        const int64_t sram = act + l * s.W;
        out.push_back(
            rowsWhole
                ? p.dmaStore(Mem::Act, sram, rowAt(l, 0), s.W, n, 1, s.lineStride, 0)
                : p.dmaStore(Mem::Act, sram, rowAt(l, 0), 1, s.W, n, s.pixelStride, s.lineStride));
      }
      continue;
    }
    for (int64_t l = 0; l < lines; ++l)
      for (int64_t x = 0; x < s.W; x += inner) {
        const int64_t n = std::min(inner, s.W - x);
        const int64_t sram = act + l * s.W + x;
        out.push_back(rowsWhole
                          ? p.dmaStore(Mem::Act, sram, rowAt(l, x), n, 1, 1, n, 0)
                          : p.dmaStore(Mem::Act, sram, rowAt(l, x), 1, n, 1, s.pixelStride, 0));
      }
  }
  return out;
}

/// A stream of `lines` lines of s.W rows from DRAM byte `from` (contiguous), scattered.
void emitScatter(uint64_t from, int64_t lines, const Scatter& s, LayerCtx& ctx, LayerInfo& info) {
  StreamSpec spec;
  spec.inputs = {from};
  spec.rows = lines * s.W;
  spec.groupRows = s.W;
  spec.inGroupStride = s.W;
  spec.inPlace = true;
  const Program& p = ctx.prog;
  spec.stores = [&p, &s](const StreamStep& ss, int64_t r0) {
    return scatterStores(p, s, ss.inAct[0], r0 / s.W, ss.rows / s.W);
  };
  emitStream(spec, ctx, info);
}

/// The factors {fH, fW} of an int8 bilinear Resize (BilinearUpsample.h), or empty.
std::vector<int64_t> bilinearOf(const Node& n) {
  return quant::bilinearUpsampleFactors(n.attrs(), n.input(0).dims(), n.resultType(0).dims);
}

/// The factors of a nearest Resize on rank 4 by whole factors of H and W only, or why not.
std::string resizeFactors(const Node& n, int64_t& sH, int64_t& sW) {
  const std::vector<int64_t> f =
      nearestUpsampleFactors(n.attrs(), n.input(0).dims(), n.resultType(0).dims);
  if (n.input(0).dims().size() != 4 || f.size() != 4 || f[0] != 1 || f[1] != 1)
    return "a Resize (mode '" + resizeOf(n.attrs()).mode + "') from " +
           shapeToString(n.input(0).dims()) + " to " + shapeToString(n.resultType(0).dims) +
           " is not a nearest upsampling of an NCHW value by whole factors of H and W (output "
           "coordinate o reading input o / factor), the one the NPU runs";
  sH = f[2];
  sW = f[3];
  return "";
}

/// The rows of the edge-replicated copy P of an input of `lines` lines (N CB H) of W pixels:
/// each line at row y + 1 of its block's (H + 2) x (W + 2) pixels, from column 1, its first
/// and last pixels again at columns 0 and W + 1; lines 0 and H - 1 also at rows 0 and H + 1.
std::vector<isa::Instruction> edgeStores(const Program& p, uint64_t dst, int64_t H, int64_t W,
                                         int64_t act, int64_t l0, int64_t lines) {
  const Target& t = p.target();
  const int64_t L = t.lanes(), max0 = Target::maxOf(t.dmaStore(), isa::role::kSize0);
  std::vector<isa::Instruction> out;
  for (int64_t l = 0; l < lines; ++l) {
    const int64_t blk = (l0 + l) / H, y = (l0 + l) % H, sram = act + l * W;
    std::vector<int64_t> rows = {y + 1};
    if (y == 0)
      rows.push_back(0);
    if (y == H - 1)
      rows.push_back(H + 1);
    for (int64_t r : rows) {
      const uint64_t at = dst + uint64_t((blk * (H + 2) + r) * (W + 2) * L);
      out.push_back(p.dmaStore(Mem::Act, sram, at, 1, 1, 1, 1, 0));
      for (int64_t x = 0; x < W; x += max0) {
        const int64_t n = std::min(max0, W - x);
        out.push_back(p.dmaStore(Mem::Act, sram + x, at + uint64_t((1 + x) * L), n, 1, 1, n, 0));
      }
      out.push_back(p.dmaStore(Mem::Act, sram + W - 1, at + uint64_t((W + 1) * L), 1, 1, 1, 1, 0));
    }
  }
  return out;
}

/// The input's edge-replicated copy into DRAM byte `dst` (edgeStores), one row stream.
void emitEdgeCopy(const DramTensor& x, uint64_t dst, LayerCtx& ctx, LayerInfo& info) {
  StreamSpec spec;
  spec.inputs = {x.offset};
  spec.rows = x.N * x.CB * x.H * x.W;
  spec.groupRows = x.W;
  spec.inGroupStride = x.W;
  spec.inPlace = true;
  const Program& p = ctx.prog;
  const int64_t H = x.H, W = x.W;
  spec.stores = [&p, dst, H, W](const StreamStep& ss, int64_t r0) {
    return edgeStores(p, dst, H, W, ss.inAct[0], r0 / W, ss.rows / W);
  };
  emitStream(spec, ctx, info);
}

/// Phase r of an axis upsampled by f (BilinearUpsample.h before clamping): the first of its
/// two neighbours in the edge-replicated copy, relative to row (column) i + 0 of the copy,
/// and their weights.
struct PhaseTaps {
  int64_t offset = 0;
  int32_t w0 = 0, w1 = 0;
};
PhaseTaps phaseTaps(int64_t r, int64_t f) {
  const int64_t d = 2 * r + 1 - f;
  return d < 0 ? PhaseTaps{0, int32_t(-d), int32_t(2 * f + d)}
               : PhaseTaps{1, int32_t(2 * f - d), int32_t(d)};
}

/// Output phase (rH, rW) of a bilinear upsampling (factors f) of the NCHW input x of
/// zero point zp: a 2 x 2 depthwise convolution of the edge-replicated copy at `padded`
/// (CB blocks of (H + 2) x (W + 2) pixels) into `out` (N x CB x H x W).
ConvJob phaseJob(const Shape& x, int32_t zp, const std::vector<int64_t>& f, int64_t rH, int64_t rW,
                 uint64_t padded, uint64_t out, int64_t L) {
  ConvJob j;
  j.N = x[0], j.C = x[1], j.H = x[2] + 1, j.W = x[3] + 1, j.K = x[1], j.OH = x[2], j.OW = x[3];
  j.KH = j.KW = 2;
  j.group = j.C;
  const int64_t CB = ceilDiv(j.C, L), PH = x[2] + 2, PW = x[3] + 2;
  const PhaseTaps h = phaseTaps(rH, f[0]), w = phaseTaps(rW, f[1]);
  j.in = ActView{padded + uint64_t((h.offset * PW + w.offset) * L), CB * PH * PW, PH * PW, PW};
  j.out = ActView{out, CB * x[2] * x[3], x[2] * x[3], x[3]};
  j.zpIn = zp;
  j.zpOut = zp;
  j.macs = j.N * j.C * j.OH * j.OW * 4;
  const int32_t wh[2] = {h.w0, h.w1}, ww[2] = {w.w0, w.w1};
  for (int64_t k = 0; k < j.K; ++k)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b)
        j.w.push_back(int8_t(wh[a] * ww[b]));
  j.mult.assign(size_t(j.K), quant::bilinearMultiplier(f[0], f[1]));
  return j;
}

/// Bytes of the edge-replicated copy and of one phase's output.
std::pair<uint64_t, uint64_t> bilinearScratch(const Shape& x, int64_t L) {
  const int64_t CB = ceilDiv(x[1], L);
  return {uint64_t(x[0] * CB * (x[2] + 2) * (x[3] + 2) * L), uint64_t(x[0] * CB * x[2] * x[3] * L)};
}

/// A bilinear upsampling (BilinearUpsample.h): the edge-replicated copy, one depthwise
/// job per output phase into the scratch, then each phase scattered into the output as
/// the nearest upsampling scatters its copies.
LayerInfo emitBilinear(const Node& n, const std::vector<int64_t>& f, LayerCtx& ctx) {
  const DramTensor &x = ctx.tensor(n.input(0)), &y = ctx.tensor(resultOf(n));
  const int64_t L = ctx.t.lanes();
  const auto [padBytes, phaseBytes] = bilinearScratch(n.input(0).dims(), L);
  LayerInfo info, conv;
  emitEdgeCopy(x, ctx.temp, ctx, info);
  ctx.prog.barrier(); // the jobs read the copy
  for (int64_t g = 0; g < f[0] * f[1]; ++g) {
    if (g > 0)
      ctx.prog.barrier(); // one job's SRAM buffers are free when the next one starts
    const ConvJob j = phaseJob(n.input(0).dims(), zeroPointOf(n.input(0)), f, g / f[1], g % f[1],
                               ctx.temp, ctx.temp + padBytes + uint64_t(g) * phaseBytes, L);
    const LayerInfo c = emitConv(j, ctx);
    conv.macs += c.macs;
    for (int m = 0; m < 4; ++m)
      conv.sram[m] = std::max(conv.sram[m], c.sram[m]);
  }
  ctx.prog.barrier(); // the scatters read the phases
  for (int64_t g = 0; g < f[0] * f[1]; ++g) {
    Scatter s;
    s.dst = y.offset;
    s.W = x.W;
    s.lineStride = f[0] * y.W;
    s.pixelStride = f[1];
    s.offsets = {(g / f[1]) * y.W + g % f[1]};
    emitScatter(ctx.temp + padBytes + uint64_t(g) * phaseBytes, x.N * x.CB * x.H, s, ctx, info);
  }
  for (int m = 0; m < 4; ++m)
    info.sram[m] = std::max(info.sram[m], conv.sram[m]);
  info.macs = conv.macs;
  info.tiling = "bilinear x" + std::to_string(f[0]) + "x" + std::to_string(f[1]) + ": edge copy, " +
                std::to_string(f[0] * f[1]) + " depthwise 2x2 phases, DMA scatter, " + info.tiling;
  return info;
}

/// "" when the NPU runs the bilinear upsampling `n` by factors f, else why not.
std::string checkBilinear(const Node& n, const Target& t, const std::vector<int64_t>& f) {
  const Shape& x = n.input(0).dims();
  if (auto r = checkScatter(t, f[0] * n.resultType(0).dims[3], f[1]); !r.empty())
    return r;
  if (auto r = checkStream(t, 2, 1, true, 0, 0, 0, x[3]); !r.empty())
    return r;
  for (int64_t g = 0; g < f[0] * f[1]; ++g)
    if (auto r = checkConvJob(phaseJob(x, 0, f, g / f[1], g % f[1], 0, 0, t.lanes()), t, 2);
        !r.empty())
      return r;
  return "";
}

class ResizeLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkCodesMove(n); !r.empty())
      return r;
    if (n.numInputs() != 1)
      return "the scales or sizes are not folded into attributes";
    if (const std::vector<int64_t> f = bilinearOf(n); !f.empty())
      return checkBilinear(n, t, f);
    int64_t sH = 1, sW = 1;
    if (auto r = resizeFactors(n, sH, sW); !r.empty())
      return r;
    if (auto r = checkScatter(t, sH * n.resultType(0).dims[3], sW); !r.empty())
      return r;
    return checkStream(t, 2, 1, true, 0, 0, 0, n.input(0).dims()[3]);
  }

  uint64_t tempBytes(const Node& n, const Target& t) const override {
    if (bilinearOf(n).empty())
      return 0;
    const std::vector<int64_t> f = bilinearOf(n);
    const auto [padBytes, phaseBytes] = bilinearScratch(n.input(0).dims(), t.lanes());
    return padBytes + uint64_t(f[0] * f[1]) * phaseBytes;
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    if (const std::vector<int64_t> f = bilinearOf(n); !f.empty())
      return emitBilinear(n, f, ctx);
    const DramTensor &x = ctx.tensor(n.input(0)), &y = ctx.tensor(resultOf(n));
    int64_t sH = 1, sW = 1;
    resizeFactors(n, sH, sW);
    Scatter s;
    s.dst = y.offset;
    s.W = x.W;
    s.lineStride = sH * y.W;
    s.pixelStride = sW;
    for (int64_t i = 0; i < sH; ++i)
      for (int64_t j = 0; j < sW; ++j)
        s.offsets.push_back(i * y.W + j);
    LayerInfo info;
    emitScatter(x.offset, x.N * x.CB * x.H, s, ctx, info);
    info.tiling = "nearest x" + std::to_string(sH) + "x" + std::to_string(sW) +
                  " by DMA scatter, " + info.tiling;
    return info;
  }
};

/// Block size and output channels of a DCR DepthToSpace on rank 4, or why not.
std::string depthToSpaceOf(const Node& n, int64_t& b, int64_t& C) {
  const BlockAttrs a = blockOf(n.attrs());
  if (n.input(0).dims().size() != 4 || a.mode != "DCR" || a.blockSize < 1)
    return "the NPU runs DepthToSpace in DCR mode on NCHW values (mode '" + a.mode + "' of " +
           shapeToString(n.input(0).dims()) + ")";
  b = a.blockSize;
  C = n.resultType(0).dims[1];
  return "";
}

/// The lane-move job laying group g's C channels out from block g * CBo (input channel
/// g C + c to channel g CBo L + c; the padding lanes get the zero point).
ConvJob groupLayoutJob(const Node& n, int64_t b, int64_t C, int64_t L) {
  const Shape& x = n.input(0).dims();
  const int64_t CBo = ceilDiv(C, L);
  std::vector<int64_t> src(size_t(b * b * CBo * L));
  for (int64_t g = 0; g < b * b; ++g)
    for (int64_t c = 0; c < CBo * L; ++c)
      src[size_t(g * CBo * L + c)] = g * C + std::min(c, C - 1);
  ConvJob j = laneMoveJob(x[0], x[2], x[3], x[1], src, L, zeroPointOf(n.input(0)));
  for (int64_t g = 0; g < b * b; ++g)
    for (int64_t c = C; c < CBo * L; ++c) {
      const int64_t k = g * CBo * L + c;
      j.w[size_t(k * j.C + src[size_t(k)])] = 0;
    }
  return j;
}

class DepthToSpaceLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkCodesMove(n); !r.empty())
      return r;
    int64_t b = 1, C = 0;
    if (auto r = depthToSpaceOf(n, b, C); !r.empty())
      return r;
    if (auto r = checkScatter(t, b * n.resultType(0).dims[3], b); !r.empty())
      return r;
    if (C % t.lanes() != 0)
      if (auto r = checkConvJob(groupLayoutJob(n, b, C, t.lanes()), t, 2); !r.empty())
        return r;
    return checkStream(t, 2, 1, true, 0, 0, 0, n.input(0).dims()[3]);
  }

  uint64_t tempBytes(const Node& n, const Target& t) const override {
    int64_t b = 1, C = 0;
    if (!depthToSpaceOf(n, b, C).empty() || C % t.lanes() == 0)
      return 0;
    const Shape& x = n.input(0).dims();
    return uint64_t(x[0] * b * b * ceilDiv(C, t.lanes()) * x[2] * x[3] * t.lanes());
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const DramTensor &x = ctx.tensor(n.input(0)), &y = ctx.tensor(resultOf(n));
    const int64_t L = ctx.t.lanes();
    int64_t b = 1, C = 0;
    depthToSpaceOf(n, b, C);
    const int64_t CBo = y.CB;
    LayerInfo info, move;
    DramTensor src = x; // groups from a block boundary: the input itself, or the scratch
    if (C % L != 0) {
      src.offset = ctx.temp;
      src.C = b * b * CBo * L;
      src.CB = b * b * CBo;
      ConvJob j = groupLayoutJob(n, b, C, L);
      j.in = ActView::of(x);
      j.out = ActView::of(src);
      move = emitConv(j, ctx);
      ctx.prog.barrier(); // the scatter reads the rows just stored
    }
    for (int64_t img = 0; img < x.N; ++img)
      for (int64_t g = 0; g < b * b; ++g)
        for (int64_t cb = 0; cb < CBo; ++cb) {
          Scatter s;
          s.dst = y.at(L, img, cb, 0, 0);
          s.W = x.W;
          s.lineStride = b * y.W;
          s.pixelStride = b;
          s.offsets = {(g / b) * y.W + g % b};
          emitScatter(src.at(L, img, g * CBo + cb, 0, 0), x.H, s, ctx, info);
        }
    for (int m = 0; m < 4; ++m)
      info.sram[m] = std::max(info.sram[m], move.sram[m]);
    info.tiling = std::string(C % L ? "lane move to block-aligned groups, " : "") +
                  std::to_string(x.N * b * b * CBo) + " DMA scatters, " + info.tiling;
    return info;
  }
};

} // namespace

void registerUpsampleLayers() {
  registerLayer(NodeKind::Resize, std::make_shared<ResizeLayer>());
  registerLayer(NodeKind::DepthToSpace, std::make_shared<DepthToSpaceLayer>());
}

} // namespace ember::npu
