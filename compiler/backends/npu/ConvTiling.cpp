// The convolution cost model: every tiling (output-channel blocks x rows x columns per
// tile) that fits the SRAMs and the instruction fields is priced with the timing
// formulas of docs/isa/timing-energy.md section 3, and the cheapest is taken.
#include "ConvCore.h"
#include "ember/isa/roles.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

namespace ember::npu {

std::pair<int64_t, int64_t> inputBlocks(const ConvJob& j, int64_t L, int64_t kb) {
  if (!j.blocks.empty())
    return j.blocks[size_t(kb)];
  const int64_t Kg = j.K / j.group, Cg = j.C / j.group;
  const int64_t k0 = kb * L, k1 = std::min(j.K, k0 + L) - 1;
  const int64_t c0 = (k0 / Kg) * Cg, c1 = (k1 / Kg + 1) * Cg;
  return {c0 / L, ceilDiv(c1, L)};
}

int64_t depthwiseRows(const ConvJob& j, const Target& t) {
  const isa::InstrDesc* d = t.depthwise();
  if (!d)
    return 0;
  const int64_t rows = int64_t(t.isa().hw().mac.rows) / std::max<int64_t>(j.KW, 1);
  return std::min({j.KH, rows, Target::maxOf(*d, isa::role::kKh)});
}

bool depthwiseJob(const ConvJob& j, const Target& t) {
  const isa::InstrDesc* d = t.depthwise();
  return d && j.group > 1 && j.group == j.C && j.K == j.C && j.blocks.empty() &&
         depthwiseRows(j, t) >= 1 && j.KW <= Target::maxOf(*d, isa::role::kKw) &&
         j.sW <= Target::maxOf(*d, isa::role::kActS0) &&
         j.dW <= Target::maxOf(*d, isa::role::kTapS0) && 1 <= Target::maxOf(*d, isa::role::kAccS0);
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

} // namespace

int64_t residualRows(const ConvJob& j, const Target& t, int64_t outRows) {
  if (!j.residual)
    return 0;
  const int64_t banks = int64_t(t.isa().memory(isa::mem::kAct).banks);
  return outRows + (banks > 1 && outRows % banks == 0 ? 1 : 0);
}

int64_t lutTableRows(const Target& t) {
  return ceilDiv(256, t.rowBytes(Mem::Param));
}

int64_t lutTableRow(const Target& t, int64_t table) {
  return 256 * (t.lut().table_offset + table) / t.rowBytes(Mem::Param);
}

int64_t lutTableFrom(const Target& t, int64_t from) {
  const int64_t PR = t.rowBytes(Mem::Param), last = Target::maxOf(t.lut(), isa::role::kTable);
  for (int64_t table = 0; table <= last; ++table) {
    const int64_t byte = 256 * (t.lut().table_offset + table), row = byte / PR;
    if (byte % PR == 0 && row >= from && row + lutTableRows(t) <= t.rows(Mem::Param))
      return table;
  }
  return -1;
}

std::pair<int64_t, int64_t> chunkBlocks(const ConvJob& j, int64_t L, int64_t kb,
                                        const ReductionChunk& ch) {
  const auto r = inputBlocks(j, L, kb);
  const int64_t a = std::max(r.first, ch.cbLo);
  return {a, std::max(a, std::min(r.second, ch.cbHi))};
}

TapSpan tapSpan(const ConvJob& j, int64_t t0, int64_t t1) {
  const int64_t kh0 = t0 / j.KW, kh1 = (t1 - 1) / j.KW;
  if (kh0 == kh1)
    return {kh0, kh1, t0 % j.KW, (t1 - 1) % j.KW};
  return {kh0, kh1, 0, j.KW - 1};
}

TapSpan chunkSpan(const ConvJob& j, const ConvTiling& c, const ReductionChunk& ch) {
  if (c.tapHalo)
    return tapSpan(j, ch.t0, ch.t1);
  return {0, j.KH - 1, 0, j.KW - 1};
}

std::pair<int64_t, int64_t> haloExtent(const ConvJob& j, const TapSpan& s, int64_t th, int64_t tw) {
  return {(th - 1) * j.sH + (s.kh1 - s.kh0) * j.dH + 1,
          (tw - 1) * j.sW + (s.kw1 - s.kw0) * j.dW + 1};
}

Halo haloOf(const ConvJob& j, const TapSpan& s, int64_t oy0, int64_t th, int64_t ox0, int64_t tw) {
  const int64_t y0 = oy0 * j.sH - j.padT + s.kh0 * j.dH, x0 = ox0 * j.sW - j.padL + s.kw0 * j.dW;
  const auto [lines, width] = haloExtent(j, s, th, tw);
  return {y0, y0 + lines - 1, x0, x0 + width - 1};
}

std::vector<ReductionChunk> reductionChunks(const ConvJob& j, int64_t L, int64_t kb0, int64_t kb1,
                                            const ConvTiling& c) {
  const int64_t taps = j.KH * j.KW;
  const int64_t cbA = inputBlocks(j, L, kb0).first, cbB = inputBlocks(j, L, kb1 - 1).second;
  const int64_t rb = c.splitsReduction() ? c.rb : cbB - cbA;
  const int64_t rt = c.splitsReduction() && c.rb == 1 && c.rt > 0 ? c.rt : taps;
  std::vector<ReductionChunk> out;
  for (int64_t c0 = cbA; c0 < cbB; c0 += rb)
    for (int64_t t0 = 0; t0 < taps; t0 += rt) {
      const ReductionChunk whole{c0, std::min(cbB, c0 + rb), t0, std::min(taps, t0 + rt), 0};
      ReductionChunk ch = whole;
      ch.cbLo = whole.cbHi;
      ch.cbHi = whole.cbLo;
      for (int64_t kb = kb0; kb < kb1; ++kb) {
        const auto r = chunkBlocks(j, L, kb, whole);
        if (r.first == r.second)
          continue;
        ch.weights += (r.second - r.first) * (c.dw ? c.dwGroups(j) : ch.t1 - ch.t0);
        ch.cbLo = std::min(ch.cbLo, r.first);
        ch.cbHi = std::max(ch.cbHi, r.second);
      }
      if (ch.weights > 0)
        out.push_back(ch);
    }
  return out;
}

namespace {

/// What a tiling's chunks need, over every tile of output blocks.
struct ChunkStats {
  int64_t maxCB = 0;          ///< Input blocks of the largest chunk.
  int64_t maxWgt = 0;         ///< Weight blocks of the largest chunk.
  int64_t chunks = 0;         ///< Chunks of all tiles of output blocks together.
  int64_t maxChunks = 0;      ///< Chunks of the tile of output blocks with the most.
  int64_t ktiles = 0;         ///< Tiles of output blocks.
  double gemms = 0;           ///< Gemm instructions per spatial tile, all tiles together.
  int64_t perOutput = 0;      ///< Largest weight blocks of one output block in one chunk.
  std::vector<TapSpan> spans; ///< The kernel spans the chunks' input tiles cover (distinct).
};

/// The largest input tile (lines, columns, lines x columns) of th x tw output pixels
/// over the chunks' spans.
struct HaloSize {
  int64_t Hp = 0, Wp = 0, plane = 0;
};
HaloSize haloSize(const ConvJob& j, const ChunkStats& st, int64_t th, int64_t tw) {
  HaloSize h;
  for (const TapSpan& s : st.spans) {
    const auto [lines, width] = haloExtent(j, s, th, tw);
    h.Hp = std::max(h.Hp, lines);
    h.Wp = std::max(h.Wp, width);
    h.plane = std::max(h.plane, lines * width);
  }
  return h;
}

ChunkStats chunkStats(const ConvJob& j, int64_t L, int64_t KB, int64_t n2max, const ConvTiling& c) {
  ChunkStats st;
  const int64_t kwChunks = ceilDiv(j.KW, n2max);
  // When every output block reads the same input blocks, the first
  // full tile stands for all full ones, the last (shorter) one for itself.
  std::vector<std::pair<int64_t, int64_t>> tiles; // (first block, how many such tiles)
  if (j.uniformBlocks()) {
    if (KB / c.kt > 0)
      tiles.push_back({0, KB / c.kt});
    if (KB % c.kt)
      tiles.push_back({KB - KB % c.kt, 1});
  } else {
    for (int64_t kb0 = 0; kb0 < KB; kb0 += c.kt)
      tiles.push_back({kb0, 1});
  }
  for (const auto& [kb0, times] : tiles) {
    const int64_t kb1 = std::min(KB, kb0 + c.kt);
    const auto chunks = reductionChunks(j, L, kb0, kb1, c);
    st.ktiles += times;
    st.chunks += times * int64_t(chunks.size());
    st.maxChunks = std::max(st.maxChunks, int64_t(chunks.size()));
    for (const auto& ch : chunks) {
      const TapSpan sp = chunkSpan(j, c, ch);
      if (std::none_of(st.spans.begin(), st.spans.end(), [&](const TapSpan& o) {
            return o.kh1 - o.kh0 == sp.kh1 - sp.kh0 && o.kw1 - o.kw0 == sp.kw1 - sp.kw0;
          }))
        st.spans.push_back(sp);
      st.maxCB = std::max(st.maxCB, ch.cbHi - ch.cbLo);
      st.maxWgt = std::max(st.maxWgt, ch.weights);
      const bool allTaps = ch.t0 == 0 && ch.t1 == j.KH * j.KW;
      const int64_t rows = (ch.t1 - 1) / j.KW - ch.t0 / j.KW + 1;
      for (int64_t kb = kb0; kb < kb1; ++kb) {
        const auto r = chunkBlocks(j, L, kb, ch);
        const int64_t b = r.second - r.first;
        st.perOutput = std::max(st.perOutput, b * (c.dw ? c.dwGroups(j) : ch.t1 - ch.t0));
        if (b > 0)
          st.gemms += double(times) * double(allTaps ? b * j.KH * kwChunks : rows * kwChunks);
      }
    }
  }
  return st;
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

} // namespace

double depthwiseTapCost(const ConvJob& j, const Target& t, int64_t pitch) {
  double c = 0;
  const int64_t rows = std::max<int64_t>(1, depthwiseRows(j, t));
  for (int64_t kh0 = 0; kh0 < j.KH; kh0 += rows)
    c += t.depthwiseCycles(1024, std::min(rows, j.KH - kh0), j.KW, j.dW, j.dH * pitch);
  return c;
}

int64_t depthwisePitchPad(const ConvJob& j, const Target& t, int64_t width, int64_t room) {
  const int64_t banks = int64_t(t.isa().memory(isa::mem::kAct).banks);
  int64_t best = 0;
  double bestCost = depthwiseTapCost(j, t, width);
  for (int64_t e = 1; e < banks && e <= room; ++e)
    if (const double c = depthwiseTapCost(j, t, width + e); c < bestCost) {
      best = e;
      bestCost = c;
    }
  return best;
}

namespace {

/// The input tile of a tiling: haloSize's, and for a depthwise job whose input is loaded
/// (not resident) each tile's lines widened by depthwisePitchPad (the emitter's room
/// permitting; the full tile's pitch is `Wp`, the wider of the full and the last tile's
/// `plane`).
HaloSize tilingHalo(const ConvJob& j, const Target& t, const ChunkStats& st, const ConvTiling& c) {
  HaloSize h = haloSize(j, st, c.th, c.tw);
  if (!c.dw || j.inRes)
    return h;
  const int64_t unlimited = std::numeric_limits<int64_t>::max();
  h.Wp += depthwisePitchPad(j, t, h.Wp, unlimited);
  h.plane = h.Hp * h.Wp;
  if (const int64_t rest = j.OW % c.tw) {
    const int64_t w = haloSize(j, st, c.th, rest).Wp;
    h.plane = std::max(h.plane, h.Hp * (w + depthwisePitchPad(j, t, w, unlimited)));
  }
  return h;
}

/// Tile widths for a depthwise job on the depthwise instruction: for each count n of
/// tiles across the image, the narrowest width giving n tiles whose input lines (the
/// last, narrower tile's too) put the window's taps in the fewest act banks' worth of
/// cycles over a line of outputs (rule DW1). tileSizes' widths ceil(OW / n) alone miss
/// these: a 14-wide image's 14 (lines 16 rows apart), 7 (9) and 5 (7) put two or three
/// taps in a bank of ember-v1's 16, so before these the layer took 4-wide tiles and
/// paid the instruction's fixed weight load, fill and drain on every 56 outputs; 11 (13
/// rows apart, the last tile 3 wide and 5 apart) gives two tiles a line at one cycle an
/// output.
std::vector<int64_t> depthwiseWidths(const ConvJob& j, const Target& t, int64_t cap) {
  std::set<int64_t> s;
  const int64_t top = std::min(j.OW, cap);
  // Tap cycles of a tile `tw` outputs wide, per line.
  auto line = [&](int64_t tw) {
    int64_t Wp = (tw - 1) * j.sW + (j.KW - 1) * j.dW + 1;
    Wp = j.inRes ? j.inRes->width() : Wp + depthwisePitchPad(j, t, Wp, j.W);
    return double(tw) * depthwiseTapCost(j, t, Wp);
  };
  for (int64_t n = 1; n <= j.OW; ++n) {
    const int64_t lo = ceilDiv(j.OW, n);
    const int64_t hi = std::min(top, n == 1 ? j.OW : ceilDiv(j.OW, n - 1) - 1);
    int64_t best = -1;
    double bestCost = 0;
    for (int64_t tw = lo; tw <= hi; ++tw) {
      const int64_t full = j.OW / tw, rest = j.OW % tw;
      const double c = double(full) * line(tw) + (rest ? line(rest) : 0.0);
      if (best < 0 || c < bestCost) {
        best = tw;
        bestCost = c;
      }
    }
    if (best > 0)
      s.insert(best);
  }
  return std::vector<int64_t>(s.rbegin(), s.rend());
}

/// Fills the SRAM needs of a tiling whose chunks need `st`; false if it does not fit or
/// a field overflows.
bool fits(const ConvJob& j, const Target& t, const Geometry& g, const ChunkStats& st,
          ConvTiling& c) {
  const auto [Hp, Wp, plane] = tilingHalo(j, t, st, c);
  const int64_t outRows = c.kt * c.th * c.tw;
  c.inRows = j.inRes ? 0 : st.maxCB * plane;
  // A resident input or output (ConvJob::inRes, outRes) takes no slots: the tiles use the
  // act rows below the lowest of them.
  int64_t lowest = t.rows(Mem::Act);
  for (const auto* r : {&j.inRes, &j.outRes})
    if (*r)
      lowest = std::min(lowest, (*r)->base);
  const int64_t resident = t.rows(Mem::Act) - lowest;
  c.actRows = g.D * (c.inRows + (j.outRes ? 0 : outRows) + residualRows(j, t, outRows)) + resident;
  c.wgtRows = g.D * st.maxWgt;
  // With the bias by DMA, D accumulator buffers (and the bias slots of the blocks that
  // copy theirs, biasDmaBlocks); else one accumulator region and D bias slots.
  c.accRows = c.biasDma           ? g.D * c.kt * c.th * c.tw + (c.biasByCopy() ? g.D * c.kt : 0)
              : t.biasInRequant() ? g.D * c.kt * c.th * c.tw
                                  : c.kt * c.th * c.tw + g.D * c.kt;
  if (c.biasDma && biasDmaLoads(t, c) == 0)
    return false;
  c.paramRows = g.D * t.paramRowsPerBlock() * c.kt + (j.residual ? 2 : 0);
  c.lutTable = -1;
  if (j.lut) { // the fused Lut's table above the M, S rows
    c.lutTable = lutTableFrom(t, c.paramRows);
    if (c.lutTable < 0)
      return false;
    c.lutRow = lutTableRow(t, c.lutTable);
    c.paramRows = c.lutRow + lutTableRows(t);
  }
  if (c.actRows > t.rows(Mem::Act) || c.wgtRows > t.rows(Mem::Weight) ||
      c.accRows > t.rows(Mem::Acc) || c.paramRows > t.rows(Mem::Param))
    return false;
  if (c.dw) {
    const isa::InstrDesc& d = *t.depthwise();
    if (j.sH * Wp > Target::maxOf(d, isa::role::kActS1) ||
        j.dH * Wp > Target::maxOf(d, isa::role::kTapS1) ||
        c.tw > Target::maxOf(d, isa::role::kN0) || c.th > Target::maxOf(d, isa::role::kN1) ||
        c.tw > Target::maxOf(d, isa::role::kAccS1))
      return false;
  }
  if (j.sH * Wp > Target::maxOf(t.gemm(), isa::role::kActS1) ||
      std::min(Wp, j.W) > Target::maxOf(t.dmaLoad(), isa::role::kSize0) ||
      std::min(Hp, j.H) > Target::maxOf(t.dmaLoad(), isa::role::kSize1))
    return false;
  return true;
}

/// Whether the convolutions overlap requantizes with gemms (rule E6, ConvCore.cpp).
bool overlaps(const Target& t) {
  return t.gemmBackground() && !t.gemmNeedsJoin();
}

/// A tiling's price with the step's tail joined and with it deferred (rule E6).
struct TilePrice {
  double joined = 0, deferred = 0;
};

TilePrice tileCost(const ConvJob& j, const Target& t, const Geometry& g, const ChunkStats& st,
                   const ConvTiling& c) {
  const int64_t L = g.L;
  const auto [Hp, Wp, plane] = tilingHalo(j, t, st, c);
  const int64_t validH = std::min(Hp, j.H), validW = std::min(Wp, j.W);
  const int64_t size2 = Target::maxOf(t.dmaLoad(), isa::role::kSize2);
  const int64_t dmaIn = ceilDiv(st.maxCB, size2);
  const int64_t inRows = st.maxCB * validH * validW / dmaIn;
  const double Lt = j.inRes ? 0.0 : double(dmaIn) * t.dmaCycles(t.dmaLoad(), inRows, Mem::Act);
  const double Wc = t.dmaCycles(t.dmaLoad(), st.maxWgt, Mem::Weight);
  const int64_t PB = t.paramRowsPerBlock();
  const double BP = (t.biasInRequant() ? 0.0 : t.dmaCycles(t.dmaLoad(), c.kt, Mem::Acc)) +
                    t.dmaCycles(t.dmaLoad(), PB * c.kt, Mem::Param);
  const double Wt = Wc + BP;
  const int64_t n2 = Target::maxOf(t.gemm(), isa::role::kN2);
  // A fused residual: a qadd over the tile's rows and a load of the residual tile.
  // The bias: a vmov per output block, or one dma.ld of the tile's accumulators.
  // The requantize (and qadd) is what a deferred tail moves into the next step.
  // A fused Lut: a lut over the tile's rows after the requantize.
  const double tailVec =
      t.vectorCycles(t.biasInRequant() ? t.requantBias() : t.requant(), c.th, c.tw) +
      (j.residual ? t.vectorCycles(*t.quantizedAdd(), c.th, c.tw) : 0.0) +
      (j.lut ? t.vectorCycles(t.lut(), c.th, c.tw) : 0.0);
  // Per output block; with the bias split (biasDmaBlocks) the copies' average share.
  const double perTile = (t.biasInRequant() ? 0.0 : 1.0 - c.dmaBiasShare()) *
                             t.vectorCycles(t.vecUnary("copy"), c.th, c.tw) +
                         tailVec;
  const int64_t biasRows = c.dmaBiasBlocks(c.kt) * c.th * c.tw;
  const int64_t biasLoads = c.biasDma ? biasDmaLoads(t, c) : 0;
  const double Bt =
      biasRows ? double(biasLoads) * t.dmaCycles(t.dmaLoad(), biasRows / biasLoads, Mem::Acc) : 0.0;
  const double biasBus = biasRows ? t.channelCycles(t.dmaLoad(), biasRows, Mem::Acc) : 0.0;
  const int64_t resRows = j.residual ? c.kt * c.th * c.tw : 0;
  const double Rt = resRows ? t.dmaCycles(t.dmaLoad(), resRows, Mem::Act) : 0.0;
  const double resBus = resRows ? t.channelCycles(t.dmaLoad(), resRows, Mem::Act) : 0.0;
  const double inBus =
      j.inRes ? 0.0 : double(dmaIn) * t.channelCycles(t.dmaLoad(), inRows, Mem::Act);
  const double outBus =
      j.outRes ? 0.0 : t.channelCycles(t.dmaStore(), c.kt * c.th * c.tw, Mem::Act);
  const double gemm = t.gemmCycles(std::min(j.KW, n2), c.th, c.tw);
  double Ct, CtDeferred;
  if (!c.splitsReduction()) {
    const auto cb = inputBlocks(j, L, 0);
    const int64_t perKb = cb.second - cb.first;
    double gemms = double(perKb * j.KH * ceilDiv(j.KW, n2)) * gemm;
    if (c.dw) {
      // One depthwise instruction per output block and group of kernel rows (rule DW1:
      // the taps' act banks).
      gemms = 0;
      const int64_t pitch = j.inRes ? j.inRes->width() : Wp;
      for (int64_t kh0 = 0; kh0 < j.KH; kh0 += c.dwRows)
        gemms += t.depthwiseCycles(c.th * c.tw, std::min(c.dwRows, j.KH - kh0), j.KW, j.dW,
                                   j.dH * pitch);
    } else if (gemmBlocksInner(j, t, perKb, plane)) {
      // appendGemms' other nest: n2 walks the input blocks, one gemm per kernel tap and
      // group of up to n2 blocks (a 1x1 convolution: one weight load, fill and drain
      // per output block instead of one per input block).
      const int64_t groups = ceilDiv(perKb, n2), last = perKb - (groups - 1) * n2;
      gemms = double(j.KH * j.KW) *
              (double(groups - 1) * t.gemmCycles(n2, c.th, c.tw) + t.gemmCycles(last, c.th, c.tw));
    }
    // With a background gemm (rule E6) block k's requantize runs while the array
    // computes block k + 1: only the last block's stays on the critical path.
    Ct = overlaps(t) ? double(c.kt - 1) * std::max(gemms, perTile) + gemms + perTile
                     : double(c.kt) * (perTile + gemms);
    // Deferred: the last block's requantize runs during the next step's first gemm (the
    // step's tail, ConvCore's deferTail) when the array's work covers the step's DRAM
    // transfers and that requantize; then only block 0's bias copy is not overlapped.
    CtDeferred = overlaps(t) && double(c.kt) * gemms >= inBus + outBus + resBus + tailVec
                     ? double(c.kt) * std::max(gemms, perTile) + (perTile - tailVec)
                     : Ct;
  } else {
    Ct = CtDeferred = double(c.kt) * perTile + st.gemms / double(st.ktiles) * gemm;
  }
  const double St = j.outRes ? 0.0 : t.dmaCycles(t.dmaStore(), c.kt * c.th * c.tw, Mem::Act);
  const double steps = double(j.N * ceilDiv(j.OH, c.th) * ceilDiv(j.OW, c.tw));
  const double ktiles = double(st.ktiles);
  const double total = steps * ktiles;
  const double wBus = t.channelCycles(t.dmaLoad(), st.maxWgt, Mem::Weight);
  // The layer with a tile's compute of `C` cycles.
  auto layer = [&](double C) {
    // Fill and drain: one tile of each stage but the one that paces the steps.
    const double fill = Lt + Rt + Bt + Wt + C + St - std::max({Lt + Rt + Bt + Wt, C, St});
    if (!c.splitsReduction()) {
      // Both DMA engines share the DRAM channel: its reserved time bounds the layer too.
      const double bus = total * (inBus + outBus + resBus + biasBus) + ktiles * wBus;
      return std::max({total * (Lt + Rt + Bt) + ktiles * Wt, total * C, total * St, bus}) + fill;
    }
    // One step per chunk; a tile's chunk weights stay in their buffer when the tile has
    // no more chunks than buffers, else they are fetched again for every spatial tile.
    const double chunkSteps = steps * double(st.chunks);
    const double weightLoads = st.maxChunks <= g.D ? double(st.chunks) : chunkSteps;
    const double bus = chunkSteps * inBus + total * (outBus + resBus) + weightLoads * wBus;
    // The bias: kt rows per tile of output blocks into its slot, or by DMA per tile.
    const double BPk = c.biasByCopy() ? BP : t.dmaCycles(t.dmaLoad(), PB * c.kt, Mem::Param);
    return std::max({chunkSteps * Lt + total * (Rt + Bt) + weightLoads * Wc + ktiles * BPk,
                     total * C, total * St, bus + total * biasBus}) +
           fill;
  };
  const double joined = layer(Ct);
  return {joined, CtDeferred == Ct ? joined : layer(CtDeferred)};
}

/// How a tiling cuts the reduction (ConvTiling::rb, rt, tapHalo).
struct Reduction {
  int64_t rb = 0, rt = 0;
  bool tapHalo = false;
};

/// Candidate reductions, largest chunks first: the whole reduction, then chunks of rb
/// input blocks, then (rb = 1) chunks of rt kernel taps, each first with the tile's
/// whole halo and then with only the chunk's own (tapHalo); none above `cap` weight
/// blocks of one output block (0 = no cap).
std::vector<Reduction> reductionCandidates(const ConvJob& j, int64_t L, int64_t KB, int64_t cap) {
  int64_t maxBlocks = 0;
  for (int64_t kb = 0; kb < KB; ++kb) {
    const auto r = inputBlocks(j, L, kb);
    maxBlocks = std::max(maxBlocks, r.second - r.first);
    if (j.uniformBlocks())
      break;
  }
  const int64_t taps = j.KH * j.KW;
  std::vector<Reduction> out;
  if (cap <= 0 || maxBlocks * taps <= cap)
    out.push_back({0, 0, false});
  for (int64_t rb : tileSizes(maxBlocks, maxBlocks - 1))
    if (cap <= 0 || rb * taps <= cap)
      out.push_back({rb, 0, false});
  for (int64_t rt : tileSizes(taps, taps - 1))
    if (cap <= 0 || rt <= cap) {
      out.push_back({1, rt, false});
      out.push_back({1, rt, true});
    }
  return out;
}

} // namespace

int64_t biasDmaLoads(const Target& t, const ConvTiling& c) {
  const isa::InstrDesc& ld = t.dmaLoad();
  const int64_t size1 = Target::maxOf(ld, isa::role::kSize1);
  const int64_t blocks = c.dmaBiasBlocks(c.kt);
  if (c.th * c.tw <= size1)
    return ceilDiv(blocks, Target::maxOf(ld, isa::role::kSize2));
  return c.tw <= size1 && c.th <= Target::maxOf(ld, isa::role::kSize2) ? blocks : 0;
}

namespace {

std::string checkConvJobAt(const ConvJob& j, const Target& t, int depth) {
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
  const int64_t n2max = Target::maxOf(t.gemm(), isa::role::kN2);
  ConvTiling c; // one output pixel and channel block; the whole reduction at once
  if (fits(j, t, g, chunkStats(j, g.L, g.KB, n2max, c), c))
    return "";
  c.rb = 1; // else one kernel tap of one input block per chunk, loading only its pixels
  c.rt = 1;
  c.tapHalo = true;
  if (fits(j, t, g, chunkStats(j, g.L, g.KB, n2max, c), c))
    return "";
  c.biasDma = true; // the fewest acc rows: the bias loaded into the accumulators
  if (fits(j, t, g, chunkStats(j, g.L, g.KB, n2max, c), c))
    return "";
  auto need = [&](const char* what, int64_t rows, Mem m) {
    return std::to_string(rows) + " " + what + (rows > t.rows(m) ? " (has " : " (of ") +
           std::to_string(t.rows(m)) + ")";
  };
  return "one output pixel, channel block and kernel tap does not fit the SRAMs: it needs " +
         need("act rows", c.actRows, Mem::Act) + ", " +
         need("weight blocks", c.wgtRows, Mem::Weight) + ", " +
         need("acc rows", c.accRows, Mem::Acc) + ", " +
         need("param rows", c.paramRows, Mem::Param) + " with " + std::to_string(depth) +
         (depth == 1 ? " buffer" : " buffers") + ", or a field overflows";
}

/// How a tile of kt output blocks may start its accumulators: -1 the bias by vmov, 0 all
/// by DMA, and m in [1, kt) the first m blocks by DMA and the others by vmov (ConvTiling::
/// biasDmaBlocks), m about a quarter, a third, half, two thirds and three quarters of kt.
std::vector<int64_t> biasSplits(int64_t kt) {
  std::vector<int64_t> out{-1, 0};
  for (const auto& [num, den] :
       {std::pair<int64_t, int64_t>{1, 4}, {1, 3}, {1, 2}, {2, 3}, {3, 4}}) {
    const int64_t m = (kt * num + den / 2) / den;
    if (m >= 1 && m < kt && std::find(out.begin(), out.end(), m) == out.end())
      out.push_back(m);
  }
  return out;
}

/// The tilings that fit at `depth`, each priced by the cost model with the step's tail
/// joined (`cycles`) and deferred (`deferred`); empty when none fits.
struct Priced {
  ConvTiling c;
  double deferred = 0;
};
std::vector<Priced> tilingsAt(const ConvJob& j, const Target& t, int depth,
                              const CompileOptions& opts) {
  const Geometry g = geometry(j, t, depth);
  const int64_t n0lut = j.lut ? minMax(t, {{&t.lut(), isa::role::kN0},
                                           {&t.lut(), isa::role::kSrcS1},
                                           {&t.lut(), isa::role::kDstS1}})
                              : std::numeric_limits<int64_t>::max();
  const int64_t n0max = std::min(n0lut, minMax(t, {{&t.gemm(), isa::role::kN0},
                                                   {&t.requant(), isa::role::kN0},
                                                   {&t.vecUnary("copy"), isa::role::kN0},
                                                   {&t.dmaStore(), isa::role::kSize0},
                                                   {&t.gemm(), isa::role::kAccS1},
                                                   {&t.requant(), isa::role::kSrcS1},
                                                   {&t.requant(), isa::role::kDstS1}}));
  int64_t n1max = minMax(t, {{&t.gemm(), isa::role::kN1},
                             {&t.requant(), isa::role::kN1},
                             {&t.vecUnary("copy"), isa::role::kN1},
                             {&t.dmaStore(), isa::role::kSize1}});
  if (j.lut) // the fused Lut walks the tile as the requantize does
    n1max = std::min(n1max, Target::maxOf(t.lut(), isa::role::kN1));
  if (opts.maxTileHeight > 0)
    n1max = std::min(n1max, opts.maxTileHeight);
  int64_t ktmax = std::min(g.KB, Target::maxOf(t.dmaStore(), isa::role::kSize2));
  if (opts.maxTileKBlocks > 0)
    ktmax = std::min(ktmax, opts.maxTileKBlocks);
  const int64_t n2max = Target::maxOf(t.gemm(), isa::role::kN2);
  // A depthwise job on the depthwise instruction takes its whole reduction (one block of
  // taps per output block); when no such tiling fits, it runs as diagonal gemm blocks.
  bool dw = depthwiseJob(j, t);
  std::vector<Reduction> candidates = dw ? std::vector<Reduction>{Reduction{}}
                                         : reductionCandidates(j, g.L, g.KB, opts.maxTileReduction);
  std::vector<Priced> all;
  // The tilings whose reduction is one of candidates [from, to); for each (kt, th, tw)
  // the largest chunks that fit.
  auto search = [&](size_t from, size_t to) {
    const std::vector<int64_t> widths = dw ? depthwiseWidths(j, t, n0max) : tileSizes(j.OW, n0max);
    for (int64_t kt : tileSizes(g.KB, ktmax)) {
      // With the bias in the requantize (Target::biasInRequant) nothing initialises the
      // accumulators.
      const std::vector<int64_t> splits =
          t.biasInRequant() ? std::vector<int64_t>{-1} : biasSplits(kt);
      // The chunk figures of each candidate reduction, computed when first needed.
      std::vector<std::optional<ChunkStats>> stats(candidates.size());
      for (int64_t th : tileSizes(j.OH, n1max))
        for (int64_t tw : widths)
          for (size_t i = from; i < to; ++i) {
            ConvTiling c;
            c.dw = dw;
            c.dwRows = dw ? depthwiseRows(j, t) : 0;
            c.kt = kt;
            c.th = th;
            c.tw = tw;
            c.rb = candidates[i].rb;
            c.rt = candidates[i].rt;
            c.tapHalo = candidates[i].tapHalo;
            if (!stats[i])
              stats[i] = chunkStats(j, g.L, g.KB, n2max, c);
            bool fit = false;
            for (int64_t m : splits) {
              c.biasDma = m >= 0;
              c.biasDmaBlocks = std::max<int64_t>(m, 0);
              if (!fits(j, t, g, *stats[i], c))
                continue;
              fit = true;
              const TilePrice price = tileCost(j, t, g, *stats[i], c);
              c.cycles = price.joined;
              c.depth = depth;
              all.push_back({c, price.deferred});
            }
            if (fit)
              break;
          }
    }
  };
  // The reduction is cut only when no tiling holds it whole: partial sums cost a
  // chunk's input and weight loads per step, which the whole reduction never pays.
  size_t whole = !candidates.empty() && candidates.front().rb == 0 ? 1 : 0;
  search(0, whole);
  if (all.empty() && dw) {
    dw = false;
    candidates = reductionCandidates(j, g.L, g.KB, opts.maxTileReduction);
    whole = !candidates.empty() && candidates.front().rb == 0 ? 1 : 0;
    search(0, whole);
  }
  if (all.empty())
    search(whole, candidates.size());
  return all;
}

/// The fitting tilings at `depth`, or at depth 1 when none fits at `depth`.
std::vector<Priced> tilings(const ConvJob& j, const Target& t, int depth,
                            const CompileOptions& opts) {
  std::vector<Priced> all = tilingsAt(j, t, depth, opts);
  if (all.empty() && depth > 1)
    all = tilingsAt(j, t, 1, opts);
  if (all.empty())
    throw Error("NPU backend", "no convolution tiling fits the SRAMs");
  return all;
}

} // namespace

std::string checkConvJob(const ConvJob& j, const Target& t, int depth) {
  const std::string r = checkConvJobAt(j, t, depth);
  return r.empty() || depth == 1 ? r : checkConvJobAt(j, t, 1);
}

namespace {
/// The first of the cheapest by the joined-tail price (search order breaks ties).
ConvTiling cheapest(const std::vector<Priced>& all) {
  return std::min_element(all.begin(), all.end(),
                          [](const Priced& a, const Priced& b) { return a.c.cycles < b.c.cycles; })
      ->c;
}
} // namespace

ConvTiling chooseConvTiling(const ConvJob& j, const Target& t, int depth,
                            const CompileOptions& opts) {
  return cheapest(tilings(j, t, depth, opts));
}

namespace {
/// Up to `n` of `all` for emission on trial, not already in `out`: the cheapest by the
/// joined-tail price, then alternately the next cheapest under the deferred-tail price
/// and under the joined one.
void addCandidates(const std::vector<const Priced*>& all, size_t n, std::vector<ConvTiling>& out) {
  auto same = [](const ConvTiling& a, const ConvTiling& b) {
    return a.kt == b.kt && a.th == b.th && a.tw == b.tw && a.rb == b.rb && a.rt == b.rt &&
           a.tapHalo == b.tapHalo && a.biasDma == b.biasDma && a.biasDmaBlocks == b.biasDmaBlocks &&
           a.dw == b.dw;
  };
  std::vector<const Priced*> byDeferred = all, byJoined = all;
  std::stable_sort(byDeferred.begin(), byDeferred.end(),
                   [](const Priced* a, const Priced* b) { return a->deferred < b->deferred; });
  std::stable_sort(byJoined.begin(), byJoined.end(),
                   [](const Priced* a, const Priced* b) { return a->c.cycles < b->c.cycles; });
  const size_t limit = out.size() + n;
  auto add = [&](const ConvTiling& c) {
    if (out.size() < limit &&
        std::none_of(out.begin(), out.end(), [&](const ConvTiling& o) { return same(o, c); }))
      out.push_back(c);
  };
  if (!byJoined.empty())
    add(byJoined.front()->c);
  for (size_t i = 0; i < all.size() && out.size() < limit; ++i)
    for (const auto* list : {&byDeferred, &byJoined})
      add((*list)[i]->c);
}
} // namespace

std::vector<ConvTiling> convTilingCandidates(const ConvJob& j, const Target& t, int depth,
                                             const CompileOptions& opts, size_t n) {
  const std::vector<Priced> all = tilings(j, t, depth, opts);
  // The tilings whose bias comes wholly by vmov or wholly by DMA first, then as many
  // whose bias is split (ConvTiling::biasDmaBlocks): the closed-form price of a split
  // is the least sure, and the program estimate of each trial decides. One trial (n = 1)
  // takes the cheapest whole one, as before splits existed.
  std::vector<const Priced*> whole, split;
  for (const Priced& p : all)
    (p.c.biasDma && p.c.biasByCopy() ? split : whole).push_back(&p);
  std::vector<ConvTiling> out;
  addCandidates(whole, n, out);
  addCandidates(split, n > 1 ? n : 0, out);
  return out;
}

} // namespace ember::npu
