// The convolution cost model: every tiling (output-channel blocks x rows x columns per
// tile) that fits the SRAMs and the instruction fields is priced with the timing
// formulas of docs/isa.md section 3, and the cheapest is taken.
#include "ConvCore.h"
#include "ember/isa/roles.h"

#include <algorithm>
#include <limits>
#include <set>

namespace ember::npu {

std::pair<int64_t, int64_t> inputBlocks(const ConvJob& j, int64_t L, int64_t kb) {
  const int64_t Kg = j.K / j.group, Cg = j.C / j.group;
  const int64_t k0 = kb * L, k1 = std::min(j.K, k0 + L) - 1;
  const int64_t c0 = (k0 / Kg) * Cg, c1 = (k1 / Kg + 1) * Cg;
  return {c0 / L, ceilDiv(c1, L)};
}

namespace {

struct Geometry {
  int64_t L, KB, D;
  int64_t padB, padR; ///< Padding the last output row / column needs.
};

Geometry geometry(const ConvJob& j, const Target& t, int depth) {
  Geometry g;
  g.L = t.lanes();
  g.KB = ceilDiv(j.K, g.L);
  g.D = depth;
  g.padB = std::max<int64_t>(0, (j.OH - 1) * j.sH - j.padT + (j.KH - 1) * j.dH - (j.H - 1));
  g.padR = std::max<int64_t>(0, (j.OW - 1) * j.sW - j.padL + (j.KW - 1) * j.dW - (j.W - 1));
  return g;
}

/// Largest input-block count and weight-block count of any tile of `kt` output blocks.
void tileBlocks(const ConvJob& j, int64_t L, int64_t KB, int64_t kt, int64_t* maxCB,
                int64_t* maxWgt) {
  *maxCB = 0;
  *maxWgt = 0;
  for (int64_t kb0 = 0; kb0 < KB; kb0 += kt) {
    const int64_t kb1 = std::min(KB, kb0 + kt);
    *maxCB = std::max(*maxCB, inputBlocks(j, L, kb1 - 1).second - inputBlocks(j, L, kb0).first);
    int64_t wgt = 0;
    for (int64_t kb = kb0; kb < kb1; ++kb) {
      auto r = inputBlocks(j, L, kb);
      wgt += (r.second - r.first) * j.KH * j.KW;
    }
    *maxWgt = std::max(*maxWgt, wgt);
  }
}

int64_t minMax(const Target& t,
               std::initializer_list<std::pair<const isa::InstrDesc*, const char*>> f) {
  int64_t m = std::numeric_limits<int64_t>::max();
  for (auto& p : f)
    m = std::min(m, Target::maxOf(*p.first, p.second));
  (void)t;
  return m;
}

/// Distinct tile sizes ceil(n / parts) for parts = 1..n, at most `cap`.
std::vector<int64_t> tileSizes(int64_t n, int64_t cap) {
  std::set<int64_t> s;
  for (int64_t parts = 1; parts <= n; ++parts) {
    const int64_t v = ceilDiv(n, parts);
    if (v <= cap)
      s.insert(v);
  }
  return std::vector<int64_t>(s.rbegin(), s.rend());
}

/// Fills the SRAM needs of a tiling; false if it does not fit or a field overflows.
bool fits(const ConvJob& j, const Target& t, const Geometry& g, ConvTiling& c) {
  int64_t maxCB = 0, maxWgt = 0;
  tileBlocks(j, g.L, g.KB, c.kt, &maxCB, &maxWgt);
  const int64_t Hp = (c.th - 1) * j.sH + (j.KH - 1) * j.dH + 1;
  const int64_t Wp = (c.tw - 1) * j.sW + (j.KW - 1) * j.dW + 1;
  const int64_t inRows = maxCB * Hp * Wp, outRows = c.kt * c.th * c.tw;
  c.actRows = g.D * (inRows + outRows);
  c.wgtRows = g.D * maxWgt;
  c.accRows = c.kt * c.th * c.tw + g.D * c.kt;
  c.paramRows = g.D * 2 * c.kt;
  if (c.actRows > t.rows(Mem::Act) || c.wgtRows > t.rows(Mem::Weight) ||
      c.accRows > t.rows(Mem::Acc) || c.paramRows > t.rows(Mem::Param))
    return false;
  if (j.sH * Wp > Target::maxOf(t.gemm(), isa::role::kActS1) ||
      std::min(Wp, j.W) > Target::maxOf(t.dmaLoad(), isa::role::kSize0) ||
      std::min(Hp, j.H) > Target::maxOf(t.dmaLoad(), isa::role::kSize1))
    return false;
  return true;
}

double tileCost(const ConvJob& j, const Target& t, const Geometry& g, const ConvTiling& c) {
  const int64_t L = g.L;
  int64_t maxCB = 0, maxWgt = 0;
  tileBlocks(j, L, g.KB, c.kt, &maxCB, &maxWgt);
  const int64_t Hp = (c.th - 1) * j.sH + (j.KH - 1) * j.dH + 1;
  const int64_t Wp = (c.tw - 1) * j.sW + (j.KW - 1) * j.dW + 1;
  const int64_t validH = std::min(Hp, j.H), validW = std::min(Wp, j.W);
  const int64_t size2 = Target::maxOf(t.dmaLoad(), isa::role::kSize2);
  const int64_t dmaIn = ceilDiv(maxCB, size2);
  const int64_t inRows = maxCB * validH * validW / dmaIn;
  const double Lt = double(dmaIn) * t.dmaCycles(t.dmaLoad(), inRows, Mem::Act);
  const double Wt = t.dmaCycles(t.dmaLoad(), maxWgt, Mem::Weight) +
                    t.dmaCycles(t.dmaLoad(), c.kt, Mem::Acc) +
                    t.dmaCycles(t.dmaLoad(), 2 * c.kt, Mem::Param);
  const auto cb = inputBlocks(j, L, 0);
  const int64_t perKb = cb.second - cb.first;
  const int64_t n2 = Target::maxOf(t.gemm(), isa::role::kN2);
  const int64_t kwChunks = ceilDiv(j.KW, n2);
  const double Ct =
      double(c.kt) *
      (t.vectorCycles(t.vecUnary("copy"), c.th, c.tw) + t.vectorCycles(t.requant(), c.th, c.tw) +
       double(perKb * j.KH * kwChunks) * t.gemmCycles(std::min(j.KW, n2), c.th, c.tw));
  const double St = t.dmaCycles(t.dmaStore(), c.kt * c.th * c.tw, Mem::Act);
  const double steps = double(j.N * ceilDiv(j.OH, c.th) * ceilDiv(j.OW, c.tw));
  const double ktiles = double(ceilDiv(g.KB, c.kt));
  const double total = steps * ktiles;
  // Both DMA engines share the DRAM channel: its reserved time bounds the layer too.
  const double bus = total * (double(dmaIn) * t.channelCycles(t.dmaLoad(), inRows, Mem::Act) +
                              t.channelCycles(t.dmaStore(), c.kt * c.th * c.tw, Mem::Act)) +
                     ktiles * t.channelCycles(t.dmaLoad(), maxWgt, Mem::Weight);
  return std::max({total * Lt + ktiles * Wt, total * Ct, total * St, bus}) + Lt + Wt + Ct + St;
}

} // namespace

std::string checkConvJob(const ConvJob& j, const Target& t, int depth) {
  const Geometry g = geometry(j, t, depth);
  const isa::InstrDesc& ld = t.dmaLoad();
  if (j.padT > Target::maxOf(ld, isa::role::kPadTop) ||
      j.padL > Target::maxOf(ld, isa::role::kPadLeft) ||
      g.padB > Target::maxOf(ld, isa::role::kPadBottom) ||
      g.padR > Target::maxOf(ld, isa::role::kPadRight))
    return "padding (" + std::to_string(j.padT) + ", " + std::to_string(j.padL) + ", " +
           std::to_string(g.padB) + ", " + std::to_string(g.padR) +
           ") exceeds what dma.ld can pad (" +
           std::to_string(Target::maxOf(ld, isa::role::kPadTop)) + ")";
  if (j.sW > Target::maxOf(t.gemm(), isa::role::kActS0) ||
      j.dW > Target::maxOf(t.gemm(), isa::role::kActS2))
    return "stride " + std::to_string(j.sW) + " / dilation " + std::to_string(j.dW) +
           " exceed the gemm stride fields";
  if (j.in.block > Target::maxOf(ld, isa::role::kStride2) ||
      j.in.line > Target::maxOf(ld, isa::role::kStride1) ||
      j.out.block > Target::maxOf(t.dmaStore(), isa::role::kStride2) ||
      j.out.line > Target::maxOf(t.dmaStore(), isa::role::kStride1))
    return "the image is too large for the DMA stride fields";
  ConvTiling c;
  if (!fits(j, t, g, c))
    return "one output row, pixel and channel block does not fit the SRAMs (" +
           std::to_string(c.actRows) + " act rows, " + std::to_string(c.wgtRows) +
           " weight blocks, " + std::to_string(c.accRows) + " acc rows needed)";
  return "";
}

ConvTiling chooseConvTiling(const ConvJob& j, const Target& t, int depth,
                            const CompileOptions& opts) {
  const Geometry g = geometry(j, t, depth);
  const int64_t n0max = minMax(t, {{&t.gemm(), isa::role::kN0},
                                   {&t.requant(), isa::role::kN0},
                                   {&t.vecUnary("copy"), isa::role::kN0},
                                   {&t.dmaStore(), isa::role::kSize0},
                                   {&t.gemm(), isa::role::kAccS1},
                                   {&t.requant(), isa::role::kSrcS1},
                                   {&t.requant(), isa::role::kDstS1}});
  int64_t n1max = minMax(t, {{&t.gemm(), isa::role::kN1},
                             {&t.requant(), isa::role::kN1},
                             {&t.vecUnary("copy"), isa::role::kN1},
                             {&t.dmaStore(), isa::role::kSize1}});
  if (opts.maxTileHeight > 0)
    n1max = std::min(n1max, opts.maxTileHeight);
  int64_t ktmax = std::min(g.KB, Target::maxOf(t.dmaStore(), isa::role::kSize2));
  if (opts.maxTileKBlocks > 0)
    ktmax = std::min(ktmax, opts.maxTileKBlocks);
  ConvTiling best;
  best.cycles = -1;
  for (int64_t kt : tileSizes(g.KB, ktmax))
    for (int64_t th : tileSizes(j.OH, n1max))
      for (int64_t tw : tileSizes(j.OW, n0max)) {
        ConvTiling c;
        c.kt = kt;
        c.th = th;
        c.tw = tw;
        if (!fits(j, t, g, c))
          continue;
        c.cycles = tileCost(j, t, g, c);
        if (best.cycles < 0 || c.cycles < best.cycles)
          best = c;
      }
  if (best.cycles < 0)
    throw Error("NPU backend", "no convolution tiling fits the SRAMs");
  return best;
}

} // namespace ember::npu
