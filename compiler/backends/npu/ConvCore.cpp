#include "ConvCore.h"
#include "Binary.h"
#include "ember/isa/roles.h"

#include <algorithm>
#include <array>
#include <limits>

namespace ember::npu {

namespace {

/// `in` as an instruction of `d` (a twin of its description with the same roles).
isa::Instruction retarget(const isa::Instruction& in, const isa::InstrDesc& d) {
  isa::Instruction out(d);
  for (const auto& f : in.desc().fields)
    out.set(f.role, in.get(f.role));
  return out;
}

/// One reduction chunk of a tile of output blocks as packed: its weights start at
/// weight block `wOff` of the job's constants, output block kb0 + i's at + kbOff[i].
struct ChunkPlan {
  ReductionChunk ch;
  int64_t wOff = 0;
  std::vector<int64_t> kbOff;
};

/// Constants of one job: weight blocks (LxL; byte k*L + c holds W[k][c]) in the order
/// the tiling reads them (tile of output blocks, chunk, output block, input block, kernel
/// tap; only the blocks an output block reads), zp-folded bias rows and requantization
/// rows (M row then S row per output block).
struct ConvConsts {
  uint64_t weights = 0, bias = 0, params = 0; ///< bias: unused with Target::biasInRequant.
  std::vector<std::vector<ChunkPlan>> tiles;  ///< Per tile of kt output blocks.
  int64_t maxWgt = 0;                         ///< Weight blocks of the largest chunk.
};

/// Weight block (output block kb, input block cb, kernel tap `tap`) appended to `out`.
void appendWeightBlock(const ConvJob& j, int64_t L, int64_t kb, int64_t cb, int64_t tap,
                       std::vector<uint8_t>& out) {
  const int64_t Kg = j.K / j.group, Cg = j.C / j.group, taps = j.KH * j.KW;
  const size_t at = out.size();
  out.resize(at + size_t(L * L), 0);
  for (int64_t k = 0; k < L; ++k) {
    const int64_t kg = kb * L + k;
    if (kg >= j.K)
      continue;
    const int64_t g = kg / Kg;
    for (int64_t cc = 0; cc < L; ++cc) {
      const int64_t ci = cb * L + cc - g * Cg;
      if (ci >= 0 && ci < Cg)
        out[at + size_t(k * L + cc)] =
            static_cast<uint8_t>(j.w[size_t((kg * Cg + ci) * taps + tap)]);
    }
  }
}

/// The depthwise weight block of output block kb and kernel rows [kh0, kh0 + kh)
/// appended to `out`: row t holds tap t of those rows of the block's channels (byte t * L
/// + c: channel kb * L + c), docs/isa/instructions.md 2.12.
void appendDepthwiseBlock(const ConvJob& j, int64_t L, int64_t kb, int64_t kh0, int64_t kh,
                          std::vector<uint8_t>& out) {
  const int64_t taps = j.KH * j.KW, first = kh0 * j.KW;
  const size_t at = out.size();
  out.resize(at + size_t(L * L), 0);
  for (int64_t c = 0; c < L && kb * L + c < j.K; ++c)
    for (int64_t t = 0; t < kh * j.KW; ++t)
      out[at + size_t(t * L + c)] =
          static_cast<uint8_t>(j.w[size_t((kb * L + c) * taps + first + t)]);
}

ConvConsts packConsts(const ConvJob& j, const Target& t, const ConvTiling& tl, ConstPool& pool) {
  const int64_t L = t.lanes(), KB = ceilDiv(j.K, L);
  const int64_t Cg = j.C / j.group, taps = j.KH * j.KW;
  ConvConsts c;
  std::vector<uint8_t> wbytes;
  int64_t blocks = 0;
  for (int64_t kb0 = 0; kb0 < KB; kb0 += tl.kt) {
    const int64_t kb1 = std::min(KB, kb0 + tl.kt);
    auto& plans = c.tiles.emplace_back();
    for (const ReductionChunk& ch : reductionChunks(j, L, kb0, kb1, tl)) {
      ChunkPlan cp{ch, blocks, {}};
      for (int64_t kb = kb0; kb < kb1; ++kb) {
        cp.kbOff.push_back(blocks - cp.wOff);
        const auto r = chunkBlocks(j, L, kb, ch);
        for (int64_t cb = r.first; cb < r.second; ++cb) {
          if (tl.dw) { // one block per group of kernel rows
            for (int64_t kh0 = 0; kh0 < j.KH; kh0 += tl.dwRows, ++blocks)
              appendDepthwiseBlock(j, L, kb, kh0, std::min(tl.dwRows, j.KH - kh0), wbytes);
            continue;
          }
          for (int64_t tap = ch.t0; tap < ch.t1; ++tap, ++blocks)
            appendWeightBlock(j, L, kb, cb, tap, wbytes);
        }
      }
      c.maxWgt = std::max(c.maxWgt, ch.weights);
      plans.push_back(std::move(cp));
    }
  }
  c.weights = pool.add(wbytes);
  // Per output block: M, S (and with the bias in the requantize, the bias) rows.
  const int64_t PB = t.paramRowsPerBlock();
  std::vector<int32_t> bias(size_t(KB * L), 0), params(size_t(KB * PB * L), 0);
  for (int64_t kb = 0; kb < KB; ++kb)
    for (int64_t k = 0; k < L; ++k) {
      const int64_t kg = kb * L + k;
      params[size_t((PB * kb + 1) * L + k)] = 1; // padding lanes: M = 0, S = 1
      if (kg >= j.K)
        continue;
      int64_t sumW = 0;
      for (int64_t i = 0; i < Cg * taps; ++i)
        sumW += j.w[size_t(kg * Cg * taps + i)];
      const uint32_t b = static_cast<uint32_t>(j.bias.empty() ? 0 : j.bias[size_t(kg)]) -
                         static_cast<uint32_t>(int64_t(j.zpIn) * sumW);
      bias[size_t(kg)] = static_cast<int32_t>(b);
      params[size_t(PB * kb * L + k)] = j.mult[size_t(kg)].M;
      params[size_t((PB * kb + 1) * L + k)] = j.mult[size_t(kg)].S;
      if (t.biasInRequant()) // the requantize's bias row, after M and S
        params[size_t((PB * kb + 2) * L + k)] = static_cast<int32_t>(b);
    }
  if (!t.biasInRequant()) // else the bias is the param slots' third row, never an acc row
    c.bias = pool.addInt32(bias);
  c.params = pool.addInt32(params);
  return c;
}

/// One spatial tile of one image.
struct Tile {
  int64_t n, oy0, th, ox0, tw;
};

/// The gemms of one output block over `blocks` input blocks of a tile and kernel taps
/// [t0, t1) (all taps, or some taps of one input block); the input tile at `act` starts
/// at kernel row kh0 and column kw0 (0, 0 unless it holds only the chunk's span).
struct GemmNest {
  int64_t act, acc, wgt, blocks, plane, wp, th, tw, t0, t1, kh0, kw0;
  bool background = false; ///< Emit the description's background gemm (rule E6).
  bool dw = false;         ///< Depthwise instructions (ConvTiling::dw).
  int64_t dwRows = 0;      ///< Kernel rows per depthwise instruction (ConvTiling::dwRows).
};

/// The depthwise instruction of one output block of a tile and kernel rows [kh0, kh0 +
/// kh), whose weight block is the `group`-th of the block's (docs/isa/instructions.md
/// section 2.12).
isa::Instruction depthwiseOf(const ConvJob& j, const Program& p, const GemmNest& g, int64_t kh0,
                             int64_t kh, int64_t group) {
  isa::Instruction in = p.make(*p.target().depthwise());
  Program::set(in, isa::role::kActAddr, g.act + kh0 * j.dH * g.wp);
  Program::set(in, isa::role::kAccAddr, g.acc);
  Program::set(in, isa::role::kWgtAddr, g.wgt + group);
  Program::set(in, isa::role::kN0, g.tw);
  Program::set(in, isa::role::kN1, g.th);
  Program::set(in, isa::role::kActS0, j.sW);
  Program::set(in, isa::role::kActS1, j.sH * g.wp);
  Program::set(in, isa::role::kAccS0, 1);
  Program::set(in, isa::role::kAccS1, g.tw);
  Program::set(in, isa::role::kKh, kh);
  Program::set(in, isa::role::kKw, j.KW);
  Program::set(in, isa::role::kTapS0, j.dW);
  Program::set(in, isa::role::kTapS1, j.dH * g.wp);
  return in;
}

/// One gemm of a nest: n2 steps of (act_s2, wgt_s2) from act row `act`, weight block `wgt`.
isa::Instruction nestGemm(const ConvJob& j, const Program& p, const GemmNest& g, int64_t act,
                          int64_t wgt, int64_t n2, int64_t actS2, int64_t wgtS2) {
  isa::Instruction in = p.make(g.background ? *p.target().gemmBackground() : p.target().gemm());
  Program::set(in, isa::role::kActAddr, act);
  Program::set(in, isa::role::kAccAddr, g.acc);
  Program::set(in, isa::role::kWgtAddr, wgt);
  Program::set(in, isa::role::kN0, g.tw);
  Program::set(in, isa::role::kN1, g.th);
  Program::set(in, isa::role::kN2, n2);
  Program::set(in, isa::role::kActS0, j.sW);
  Program::set(in, isa::role::kActS1, j.sH * g.wp);
  Program::set(in, isa::role::kActS2, actS2);
  Program::set(in, isa::role::kAccS0, 1);
  Program::set(in, isa::role::kAccS1, g.tw);
  Program::set(in, isa::role::kAccS2, 0);
  Program::set(in, isa::role::kWgtS2, wgtS2);
  return in;
}

void appendGemms(const ConvJob& j, const Program& p, const GemmNest& g,
                 std::vector<isa::Instruction>& out) {
  const Target& t = p.target();
  if (g.dw) {
    for (int64_t kh0 = 0, group = 0; kh0 < j.KH; kh0 += g.dwRows, ++group)
      out.push_back(depthwiseOf(j, p, g, kh0, std::min(g.dwRows, j.KH - kh0), group));
    return;
  }
  const int64_t n2max = Target::maxOf(t.gemm(), isa::role::kN2);
  if (g.t0 != 0 || g.t1 != j.KH * j.KW) {
    // Some taps of one input block (weights packed tap after tap from t0): one gemm per
    // kernel row, n2 walking that row's columns in the chunk.
    for (int64_t kh = g.t0 / j.KW; kh <= (g.t1 - 1) / j.KW; ++kh) {
      const int64_t kwA = std::max(g.t0 - kh * j.KW, int64_t(0));
      const int64_t kwB = std::min(g.t1 - kh * j.KW, j.KW);
      for (int64_t kw = kwA; kw < kwB; kw += n2max)
        out.push_back(nestGemm(j, p, g, g.act + (kh - g.kh0) * j.dH * g.wp + (kw - g.kw0) * j.dW,
                               g.wgt + kh * j.KW + kw - g.t0, std::min(n2max, kwB - kw), j.dW, 1));
    }
    return;
  }
  const bool blocksInner = gemmBlocksInner(j, t, g.blocks, g.plane);
  // n2 walks the kernel columns (act_s2 = dilation, wgt_s2 = 1) or the input blocks
  // (act_s2 = the tile's plane, wgt_s2 = KH * KW), whichever needs fewer gemms.
  const int64_t outer = blocksInner ? j.KW : g.blocks, inner = blocksInner ? g.blocks : j.KW;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t kh = 0; kh < j.KH; ++kh)
      for (int64_t i0 = 0; i0 < inner; i0 += n2max) {
        const int64_t n = std::min(n2max, inner - i0);
        const int64_t cb = blocksInner ? i0 : o, kw = blocksInner ? o : i0;
        out.push_back(nestGemm(j, p, g, g.act + cb * g.plane + kh * j.dH * g.wp + kw * j.dW,
                               g.wgt + (cb * j.KH + kh) * j.KW + kw, n,
                               blocksInner ? g.plane : j.dW, blocksInner ? j.KH * j.KW : 1));
      }
}

} // namespace

ConvJob laneMoveJob(int64_t N, int64_t H, int64_t W, int64_t C, const std::vector<int64_t>& src,
                    int64_t L, int32_t zp) {
  ConvJob j;
  j.N = N;
  j.C = C;
  j.H = j.OH = H;
  j.W = j.OW = W;
  j.K = int64_t(src.size());
  j.w.assign(size_t(j.K * j.C), 0);
  j.blocks.assign(size_t(ceilDiv(j.K, L)), {std::numeric_limits<int64_t>::max(), 0});
  for (int64_t k = 0; k < j.K; ++k) {
    const int64_t c = src[size_t(k)];
    j.w[size_t(k * j.C + c)] = 1;
    auto& r = j.blocks[size_t(k / L)];
    r = {std::min(r.first, c / L), std::max(r.second, c / L + 1)};
  }
  j.zpIn = j.zpOut = zp;
  j.mult.assign(size_t(j.K), quant::quantizeMultiplier(1.0));
  return j;
}

bool gemmBlocksInner(const ConvJob& j, const Target& t, int64_t blocks, int64_t plane) {
  const int64_t n2max = Target::maxOf(t.gemm(), isa::role::kN2);
  if (plane > Target::maxOf(t.gemm(), isa::role::kActS2) ||
      j.KH * j.KW > Target::maxOf(t.gemm(), isa::role::kWgtS2))
    return false;
  return j.KW * ceilDiv(blocks, n2max) < blocks * ceilDiv(j.KW, n2max);
}

std::vector<isa::Instruction> loadHalo(const Program& p, const ActView& in, int64_t n, int64_t cbA,
                                       int64_t cbB, int64_t H, int64_t W, const Halo& h,
                                       int64_t sramAddr, int64_t padValue, int64_t padRow) {
  const int64_t L = p.target().lanes();
  const int64_t size2 = Target::maxOf(p.target().dmaLoad(), isa::role::kSize2);
  const int64_t vy0 = std::max<int64_t>(h.y0, 0), vy1 = std::min(h.y1, H - 1);
  const int64_t vx0 = std::max<int64_t>(h.x0, 0), vx1 = std::min(h.x1, W - 1);
  const int64_t plane = h.lines() * h.width();
  std::vector<isa::Instruction> out;
  if (vy0 > vy1 || vx0 > vx1) {
    // Nothing of the image: repeat the padding row (stride 0) over every row of the tile.
    if (padRow < 0)
      throw Error("NPU backend", "an input tile lies wholly in the padding");
    const int64_t size1 = Target::maxOf(p.target().dmaLoad(), isa::role::kSize1);
    const int64_t rows = (cbB - cbA) * plane;
    for (int64_t r0 = 0; r0 < rows;) {
      const int64_t n1 = std::min(size1, rows - r0);
      const int64_t n2 = std::min(size2, (rows - r0) / n1);
      out.push_back(p.dmaLoad(Mem::Act, sramAddr + r0, uint64_t(padRow), 1, n1, n2, 0, 0));
      r0 += n1 * n2;
    }
    return out;
  }
  for (int64_t c0 = cbA; c0 < cbB; c0 += size2) {
    const int64_t c1 = std::min(cbB, c0 + size2);
    const uint64_t src = in.at(L, n, c0, vy0, vx0);
    isa::Instruction ld = p.dmaLoad(Mem::Act, sramAddr + (c0 - cbA) * plane, src, vx1 - vx0 + 1,
                                    vy1 - vy0 + 1, c1 - c0, in.line, in.block);
    Program::setPads(ld, vx0 - h.x0, h.x1 - vx1, vy0 - h.y0, h.y1 - vy1, padValue);
    out.push_back(ld);
  }
  return out;
}

int64_t padRowFor(const Halo& h, int64_t H, int64_t W, int32_t value, LayerCtx& ctx, int64_t& row) {
  if (row < 0 && (h.y0 >= H || h.y1 < 0 || h.x0 >= W || h.x1 < 0))
    row = int64_t(ctx.consts.add(
        std::vector<uint8_t>(size_t(ctx.t.rowBytes(Mem::Act)), uint8_t(int8_t(value)))));
  return row;
}

namespace {

/// The rows of a tile's output blocks [kb0, kb0 + ktl) in `view` (block by block, each
/// th lines of tw pixels) as dma instructions of at most size2 blocks each, between act
/// row `actAddr` (packed) and DRAM.
std::vector<isa::Instruction> tileRows(const Program& p, const ActView& view, const Tile& tile,
                                       int64_t kb0, int64_t ktl, int64_t actAddr, bool load) {
  const Target& t = p.target();
  const int64_t L = t.lanes(), P = tile.th * tile.tw;
  const int64_t size2 = Target::maxOf(load ? t.dmaLoad() : t.dmaStore(), isa::role::kSize2);
  std::vector<isa::Instruction> out;
  for (int64_t k0 = 0; k0 < ktl; k0 += size2) {
    const int64_t k1 = std::min(ktl, k0 + size2);
    const uint64_t dram = view.at(L, tile.n, kb0 + k0, tile.oy0, tile.ox0);
    out.push_back(load ? p.dmaLoad(Mem::Act, actAddr + k0 * P, dram, tile.tw, tile.th, k1 - k0,
                                   view.line, view.block)
                       : p.dmaStore(Mem::Act, actAddr + k0 * P, dram, tile.tw, tile.th, k1 - k0,
                                    view.line, view.block));
  }
  return out;
}

/// Where a tile's output goes: its accumulators from acc row `acc0`, its output slot at act
/// row `outAddr`, requantization parameters from param row `pslot`, the residual tile at act
/// row `resAddr` (< 0: none; qadd scalars at param row `qaddParam`), the fused Lut's table
/// `lutTable` (< 0: none).
struct TileOutput {
  int64_t kb0, ktl, outAddr, acc0, pslot, resAddr, qaddParam;
  /// Act rows between the output's lines and between its blocks: the tile's own (tw and
  /// th * tw) in its output slot, the tensor's in a resident output (ConvJob::outRes).
  int64_t line, block;
  int64_t lutTable = -1;
};

/// The requantize of output block `kbl` of a tile into its output slot.
isa::Instruction requantOf(const ConvJob& j, const Program& p, const Tile& tile,
                           const TileOutput& o, int64_t kbl) {
  const int64_t P = tile.th * tile.tw;
  const Target& t = p.target();
  isa::Instruction in =
      p.requant({o.outAddr + kbl * o.block, 1, o.line}, {o.acc0 + kbl * P, 1, tile.tw},
                o.pslot + t.paramRowsPerBlock() * kbl, j.zpOut, j.lo, j.hi, tile.tw, tile.th);
  return t.biasInRequant() ? retarget(in, t.requantBias()) : in;
}

/// The fused Lut of output block `kbl` of a tile, in place in its output rows.
isa::Instruction lutOf(const Program& p, const Tile& tile, const TileOutput& o, int64_t kbl) {
  const Program::Walk rows{o.outAddr + kbl * o.block, 1, o.line};
  return p.lut(o.lutTable, rows, rows, tile.tw, tile.th);
}

/// The requantize of output block `kbl` of a tile (and the qadd of its fused residual, or
/// its fused Lut).
void blockOutput(const ConvJob& j, const Program& p, const Tile& tile, const TileOutput& o,
                 int64_t kbl, std::vector<isa::Instruction>& out) {
  const int64_t P = tile.th * tile.tw;
  out.push_back(requantOf(j, p, tile, o, kbl));
  if (o.lutTable >= 0)
    out.push_back(lutOf(p, tile, o, kbl));
  if (o.resAddr >= 0)
    for (const auto& c : Program::rowChunks(*p.target().quantizedAdd(), P)) {
      const int64_t r = kbl * P + c[0];
      out.push_back(p.qadd({o.outAddr + r, 1, c[1]}, {o.outAddr + r, 1, c[1]},
                           {o.resAddr + r, 1, c[1]}, o.qaddParam, c[1], c[2]));
    }
}

/// Requantizes a tile's accumulators into its output slot (block after block unless
/// `computes` is false: the caller interleaved them with the gemms), adds the residual tile
/// when there is one, and stores the result.
void emitOutput(const ConvJob& j, const Program& p, const Tile& tile, const TileOutput& o, Step& s,
                bool computes) {
  const int64_t P = tile.th * tile.tw;
  if (computes)
    for (int64_t kbl = 0; kbl < o.ktl; ++kbl) {
      s.computes.push_back(requantOf(j, p, tile, o, kbl));
      if (o.lutTable >= 0)
        s.computes.push_back(lutOf(p, tile, o, kbl));
    }
  if (o.resAddr >= 0) {
    for (auto& in : tileRows(p, j.residual->view, tile, o.kb0, o.ktl, o.resAddr, true))
      s.loads.push_back(in);
    if (computes)
      for (const auto& c : Program::rowChunks(*p.target().quantizedAdd(), o.ktl * P))
        s.computes.push_back(p.qadd({o.outAddr + c[0], 1, c[1]}, {o.outAddr + c[0], 1, c[1]},
                                    {o.resAddr + c[0], 1, c[1]}, o.qaddParam, c[1], c[2]));
  }
  if (!j.outRes) // a resident output stays in the act SRAM for the next layer
    for (auto& in : tileRows(p, j.out, tile, o.kb0, o.ktl, o.outAddr, false))
      s.stores.push_back(in);
}

/// Whether a step's last requantize should run during the next step's first gemm (its
/// tail) rather than after a join: only when the array, not the DRAM channel, paces the
/// steps. The tail delays this step's tokens until the next step's input has arrived, so
/// a channel-bound layer would wait for it once per step.
bool deferTail(const Target& t, const Step& s, const std::vector<isa::Instruction>& tail) {
  double array = 0, channel = 0, vector = 0;
  for (const auto& in : s.computes)
    if (in.desc().cls->on_array)
      array += t.cyclesOf(in);
  for (const auto* v : {&s.loads, &s.stores})
    for (const auto& in : *v)
      channel += t.dmaParts(in).transfer;
  for (const auto& in : tail)
    vector += t.cyclesOf(in);
  return array >= channel + vector;
}

/// One step of a convolution's chunk (ConvTiling's reduction chunks): where its input,
/// weights, accumulators and output are.
struct ChunkStep {
  const ChunkPlan& cp;
  Tile tile;
  bool first, last;  ///< The tile's first chunk (bias), its last (requantize, store).
  int64_t dmaBlocks; ///< Output blocks of the tile whose bias the load engine writes.
  int64_t inAddr, plane, wp, bslot, wslot;
  TapSpan span;
  TileOutput out;
};

/// The compute of one chunk step: the bias copies of the first chunk (without the bias by
/// DMA), the gemms (or depthwise instructions) of every output block and, in the last
/// chunk, their requantizes. Returns whether the requantizes were interleaved with the
/// array's work (rule E6), which emitOutput then leaves out.
bool emitChunkComputes(const ConvJob& j, const ConvTiling& tl, const Program& p, const ChunkStep& c,
                       Step& s) {
  const Target& t = p.target();
  const int64_t L = t.lanes(), P = c.tile.th * c.tile.tw, ktl = c.out.ktl, kb0 = c.out.kb0;
  const Tile& tile = c.tile;
  const TileOutput& o = c.out;
  const ChunkPlan& cp = c.cp;
  const bool last = c.last;
  // With a background gemm (rule E6) the last chunk requantizes block k - 1 on the
  // vector unit while the array computes block k, and copies block k + 1's bias;
  // the last block's requantize is the step's tail (Program runs it during the
  // next step's first gemm) or follows a join.
  const bool overlap =
      last && (tl.dw ? t.depthwise()->background : t.gemmBackground() && !t.gemmNeedsJoin());
  // The bias copies of the blocks whose bias does not come by DMA (biasDmaBlocks), by
  // output block.
  std::vector<std::optional<isa::Instruction>> copies(static_cast<size_t>(ktl));
  if (c.first && !t.biasInRequant())
    for (int64_t kbl = c.dmaBlocks; kbl < ktl; ++kbl)
      copies[size_t(kbl)] = p.vecUnary("copy", Mem::Acc, Mem::Acc, {o.acc0 + kbl * P, 1, tile.tw},
                                       {c.bslot + kbl, 0, 0}, tile.tw, tile.th);
  size_t nextCopy = 0;
  auto copyUpTo = [&](int64_t k) { // the bias of blocks up to k, before their gemms
    for (; nextCopy < copies.size() && int64_t(nextCopy) <= (overlap ? k : ktl); ++nextCopy)
      if (copies[nextCopy])
        s.computes.push_back(std::move(*copies[nextCopy]));
  };
  std::vector<isa::Instruction> pending;
  for (int64_t kbl = 0; kbl < ktl; ++kbl) {
    const auto r = chunkBlocks(j, L, kb0 + kbl, cp.ch);
    copyUpTo(kbl);
    if (r.first >= r.second && c.first && t.biasInRequant()) {
      // No input block in this chunk: the accumulators start at 0 (the requantize adds
      // the bias).
      Program::GemmLoops z;
      z.reset = true;
      z.acc = o.acc0 + kbl * P;
      z.n0 = tile.tw;
      z.n1 = tile.th;
      z.n2 = 1;
      z.accS0 = 1;
      z.accS1 = tile.tw;
      s.computes.push_back(p.gemm(z));
    }
    if (r.first < r.second) {
      GemmNest g{c.inAddr + (r.first - cp.ch.cbLo) * c.plane,
                 o.acc0 + kbl * P,
                 c.wslot + cp.kbOff[size_t(kbl)],
                 r.second - r.first,
                 c.plane,
                 c.wp,
                 tile.th,
                 tile.tw,
                 cp.ch.t0,
                 cp.ch.t1,
                 c.span.kh0,
                 c.span.kw0};
      g.background = overlap;
      g.dw = tl.dw;
      g.dwRows = tl.dwRows;
      std::vector<isa::Instruction> gemms;
      appendGemms(j, p, g, gemms);
      if (c.first && t.biasInRequant()) // the block's first accumulation writes
        gemms.front() = retarget(gemms.front(), t.overwriting(gemms.front().desc()));
      s.computes.push_back(std::move(gemms.front()));
      for (auto& in : pending)
        s.computes.push_back(std::move(in));
      pending.clear();
      copyUpTo(kbl + 1);
      for (size_t k = 1; k < gemms.size(); ++k)
        s.computes.push_back(std::move(gemms[k]));
    }
    if (overlap)
      blockOutput(j, p, tile, o, kbl, pending);
  }
  if (overlap && deferTail(t, s, pending)) {
    s.tail = std::move(pending); // after the next step's first gemm, or a join
  } else if (overlap) {
    s.computes.push_back(p.syncOn(isa::Engine::Compute));
    for (auto& in : pending)
      s.computes.push_back(std::move(in));
  }
  return overlap;
}

} // namespace

std::string checkResidualJob(ConvJob j, const Target& t) {
  if (!t.quantizedAdd())
    return "the description has no quantized-add instruction";
  j.residual = ResidualAdd{};
  return checkConvJob(j, t, 2);
}

std::string checkLutJob(ConvJob j, const Target& t) {
  if (j.residual)
    return "a job with a fused residual Add takes no Lut";
  j.lut = EpilogueLut{};
  return checkConvJob(j, t, 2);
}

void attachLut(ConvJob& j, LayerCtx& ctx, ActView (*view)(const DramTensor&)) {
  if (!ctx.epilogueLut)
    return;
  const Node& lut = *ctx.epilogueLut;
  const Tensor& tab = lut.input(1).node->payload();
  EpilogueLut e;
  e.table.assign(tab.raw(), tab.raw() + 256);
  e.zp = zeroPointOf(resultOf(lut));
  j.lut = std::move(e);
  j.out = view(ctx.tensor(resultOf(lut)));
}

void attachResidual(ConvJob& j, const NodeValue& result, LayerCtx& ctx,
                    ActView (*view)(const DramTensor&)) {
  if (!ctx.residualAdd)
    return;
  const Node& add = *ctx.residualAdd;
  const unsigned mine = add.input(0) == result ? 0 : 1;
  const NodeValue other = add.input(1 - mine), y = resultOf(add);
  const quant::AddMultipliers m =
      quant::addMultipliers(scaleOf(add.input(0)), scaleOf(add.input(1)), scaleOf(y));
  const quant::Bounds bd = quant::activationBounds(add, y.type().quant);
  // src0 of the qadd is this job's requantized tile, src1 the other operand.
  ResidualAdd r;
  r.view = view(ctx.tensor(other));
  r.params = qaddParamRows(ctx.t.lanes(), mine == 0 ? m.Ma : m.Mb, mine == 0 ? m.Mb : m.Ma, m.S,
                           zeroPointOf(y), j.zpOut, zeroPointOf(other), bd.lo, bd.hi);
  j.residual = std::move(r);
  j.out = view(ctx.tensor(y));
}

namespace {
LayerInfo emitConvWith(const ConvJob& j, const ConvTiling& tl, LayerCtx& ctx);

/// The estimated cycles of `j` under tiling `tl` alone: emitted into a scratch program
/// (and scratch constants), then dropped. Infinity when the emission refuses it. (The
/// emission reads the job, not the layer's tensors: the trial shares ctx's map.)
double trialCycles(const ConvJob& j, const ConvTiling& tl, LayerCtx& ctx) {
  Program scratch(ctx.t, ctx.prog.depth(), ctx.opts.maxInstructions);
  ConstPool consts(0);
  LayerCtx trial{ctx.t,       scratch,  consts,          ctx.opts,
                 ctx.tensors, ctx.temp, ctx.residualAdd, ctx.absorbed};
  trial.epilogueLut = ctx.epilogueLut;
  try {
    scratch.beginLayer("trial");
    emitConvWith(j, tl, trial);
    return scratch.endLayer().cycles;
  } catch (const Error&) {
    return std::numeric_limits<double>::infinity();
  }
}
} // namespace

namespace {
/// Whether `v` addresses `r`'s value's whole DRAM tensor.
bool viewsResident(const ActView& v, const Residency& r, LayerCtx& ctx) {
  const ActView t = ActView::of(ctx.tensor(r.value));
  return v.base == t.base && v.image == t.image && v.block == t.block && v.line == t.line;
}

/// `j` with the layer's residency (LayerCtx::readsResident, writesResident) when `j`
/// reads or produces that value's whole DRAM tensor (one image; no fused residual on
/// the producing side).
ConvJob withResidency(const ConvJob& j, LayerCtx& ctx) {
  ConvJob out = j;
  const int64_t L = ctx.t.lanes();
  if (Residency* r = ctx.readsResident) {
    ++r->jobs;
    if (j.N == 1 && viewsResident(j.in, *r, ctx) && j.H == r->at.H && j.W == r->at.W &&
        ceilDiv(j.C, L) == r->at.CB) {
      out.inRes = r->at;
      r->applied = true;
    }
  }
  if (Residency* r = ctx.writesResident) {
    ++r->jobs;
    if (j.N == 1 && !j.residual && viewsResident(j.out, *r, ctx) && j.OH == r->at.H &&
        j.OW == r->at.W && ceilDiv(j.K, L) == r->at.CB) {
      out.outRes = r->at;
      r->applied = true;
    }
  }
  return out;
}
} // namespace

LayerInfo emitConv(const ConvJob& job, LayerCtx& ctx) {
  const ConvJob j = withResidency(job, ctx);
  const std::vector<ConvTiling> cands = convTilingCandidates(
      j, ctx.t, ctx.prog.depth(), ctx.opts, size_t(std::max(1, ctx.opts.tilingTrials)));
  size_t best = 0;
  if (cands.size() > 1) {
    double bestCycles = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < cands.size(); ++i)
      if (const double c = trialCycles(j, cands[i], ctx); c < bestCycles) {
        bestCycles = c;
        best = i;
      }
  }
  return emitConvWith(j, cands[best], ctx);
}

namespace {
/// The border of a resident output (its reader's padding) set to the zero point `zp`
/// in the first step: one dma.ld of a constant row of zp into its zpRow, then vector
/// copies of that row over the top lines, bottom lines, left and right columns.
void fillBorder(const ActResident& r, int32_t zp, LayerCtx& ctx, Step& s) {
  const Program& p = ctx.prog;
  const uint64_t row =
      ctx.consts.add(std::vector<uint8_t>(size_t(ctx.t.rowBytes(Mem::Act)), uint8_t(int8_t(zp))));
  for (auto& in : p.loadRows(Mem::Act, r.zpRow(), row, 1))
    s.loads.push_back(in);
  const int64_t Wr = r.width(), plane = r.lines() * Wr;
  const Program::Walk zpRow{r.zpRow(), 0, 0};
  // Rows [first, first + n0) of every block, and columns [first, first + n0) of every
  // line of every block.
  auto copy = [&](int64_t first, int64_t n0, int64_t n1, int64_t s1) {
    if (n0 > 0)
      s.computes.push_back(
          p.vecUnary("copy", Mem::Act, Mem::Act, {r.base + first, 1, s1}, zpRow, n0, n1));
  };
  copy(0, r.padT * Wr, r.CB, plane);
  copy((r.padT + r.H) * Wr, r.padB * Wr, r.CB, plane);
  copy(0, r.padL, r.CB * r.lines(), Wr);
  copy(r.padL + r.W, r.padR, r.CB * r.lines(), Wr);
}

/// Where a chunk's input tile is for the gemms: its act slot at `slot` (lines `wp` rows
/// apart, blocks `plane` apart), or the resident input's rows (ConvJob::inRes), which
/// must hold the whole halo (its border covers the reader's padding).
struct InputAt {
  int64_t addr, wp, plane;
};
InputAt inputAt(const ConvJob& j, const Halo& h, int64_t cbLo, int64_t slot, int64_t wp,
                int64_t plane) {
  if (!j.inRes)
    return {slot, wp, plane};
  const ActResident& r = *j.inRes;
  if (h.y0 < -r.padT || h.x0 < -r.padL || h.y1 >= r.H + r.padB || h.x1 >= r.W + r.padR)
    throw Error("NPU backend", "a tile reads beyond the border of its resident input");
  return {r.at(cbLo, h.y0, h.x0), r.width(), r.lines() * r.width()};
}

/// The summary's account of a convolution job under tiling `tl`: its MACs, tiling and the
/// rows of each SRAM it uses.
LayerInfo convInfo(const ConvJob& j, const ConvTiling& tl) {
  LayerInfo info;
  info.macs = j.macs;
  info.tiling = "kt=" + std::to_string(tl.kt) + " th=" + std::to_string(tl.th) +
                " tw=" + std::to_string(tl.tw);
  if (tl.biasDma)
    info.tiling += tl.biasByCopy() ? " bias-dma=" + std::to_string(tl.biasDmaBlocks) : " bias-dma";
  if (tl.dw)
    info.tiling += " depthwise";
  if (tl.splitsReduction())
    info.tiling += " rb=" + std::to_string(tl.rb) + (tl.rt ? " rt=" + std::to_string(tl.rt) : "") +
                   (tl.tapHalo ? " tap-halo" : "");
  if (j.residual)
    info.tiling += " +residual";
  if (j.lut)
    info.tiling += " +lut";
  if (j.inRes)
    info.tiling += " in-sram";
  if (j.outRes)
    info.tiling += " out-sram";
  info.sram[0] = tl.actRows;
  info.sram[1] = tl.wgtRows;
  info.sram[2] = tl.accRows;
  info.sram[3] = tl.paramRows;
  return info;
}

/// The spatial tiles of every image of `j` under tiling `tl`, in emission order.
std::vector<Tile> spatialTiles(const ConvJob& j, const ConvTiling& tl) {
  std::vector<Tile> tiles;
  for (int64_t n = 0; n < j.N; ++n)
    for (int64_t oy0 = 0; oy0 < j.OH; oy0 += tl.th)
      for (int64_t ox0 = 0; ox0 < j.OW; ox0 += tl.tw)
        tiles.push_back({n, oy0, std::min(tl.th, j.OH - oy0), ox0, std::min(tl.tw, j.OW - ox0)});
  return tiles;
}

/// One tile of output blocks [kb0, kb0 + ktl) (the ktile-th) and its chunks; its bias
/// rows at acc row bslot, its M, S rows at param row pslot.
struct OutputBlocks {
  int64_t kb0, ktl, ktile, bslot, pslot;
  const std::vector<ChunkPlan>& chunks;
};

/// Emits a convolution job under one tiling, one step per (tile of output blocks, spatial
/// tile, reduction chunk). SRAM plan: act = D input slots then D output slots; weight = D
/// slots; acc = accumulators then D bias slots; param = D slots. Without chunks a weight
/// slot holds a tile of output blocks' weights for all its steps; with chunks one step's
/// chunk. An input tile may lie wholly in the padding (a tap chunk of a border tile): it
/// is then a constant row of zp_x, repeated (added to the constants when first needed).
class ConvEmitter {
public:
  /// Packs the job's constants (then the fused residual's qadd rows) into ctx.consts;
  /// the program's depth must already be the tiling's.
  ConvEmitter(const ConvJob& j, const ConvTiling& tl, LayerCtx& ctx)
      : j_(j), tl_(tl), ctx_(ctx), t_(ctx.t), p_(ctx.prog), KB_(ceilDiv(j.K, t_.lanes())),
        D_(p_.depth()), cc_(packConsts(j, t_, tl, ctx.consts)),
        residualParams_(j.residual ? ctx.consts.addInt32(j.residual->params) : 0),
        lutConst_(j.lut ? ctx.consts.add(j.lut->table) : 0), WR_(t_.rowBytes(Mem::Weight)),
        AR_(t_.rowBytes(Mem::Acc)), PR_(t_.rowBytes(Mem::Param)), split_(tl.splitsReduction()),
        inSlot_(tl.inRows), outSlot_(tl.kt * tl.th * tl.tw), outBase_(D_ * inSlot_),
        biasBase_((tl.biasDma ? D_ : 1) * tl.kt * tl.th * tl.tw),
        resSlot_(residualRows(j, t_, outSlot_)), outStride_(outSlot_ + resSlot_),
        qaddParam_(D_ * t_.paramRowsPerBlock() * tl.kt),
        size2Ld_(Target::maxOf(t_.dmaLoad(), isa::role::kSize2)),
        size1Ld_(Target::maxOf(t_.dmaLoad(), isa::role::kSize1)),
        slotHolds_(size_t(D_), {-1, -1, -1, -1, -1, -1, -1}), weightHolds_(size_t(D_), {-1, -1}) {}

  LayerInfo run() {
    for (int64_t kb0 = 0, ktile = 0; kb0 < KB_; kb0 += tl_.kt, ++ktile) {
      const OutputBlocks k{kb0,
                           std::min(KB_, kb0 + tl_.kt) - kb0,
                           ktile,
                           biasBase_ + (ktile % D_) * tl_.kt,
                           (ktile % D_) * t_.paramRowsPerBlock() * tl_.kt,
                           cc_.tiles[size_t(ktile)]};
      bool first = true;
      for (const Tile& tile : spatialTiles(j_, tl_))
        for (size_t ci = 0; ci < k.chunks.size(); ++ci) {
          emitStep(k, tile, ci, first);
          first = false;
        }
    }
    return convInfo(j_, tl_);
  }

private:
  /// The step's loads of constants: the chunk's weights unless its weight slot holds them
  /// (without chunks: the first step of a tile of output blocks), the resident output's
  /// border and the residual's qadd rows (first step), the bias (unless by DMA) and the
  /// M, S rows (first step of a tile of output blocks).
  void loadConstants(Step& s, const OutputBlocks& k, size_t ci, int64_t slot, int64_t wslot,
                     bool first) {
    const ChunkPlan& cp = k.chunks[ci];
    const bool loadWeights =
        split_ ? weightHolds_[size_t(slot)] != std::make_pair(k.ktile, int64_t(ci)) : first;
    if (loadWeights) {
      for (auto& in :
           p_.loadRows(Mem::Weight, wslot, cc_.weights + uint64_t(cp.wOff * WR_), cp.ch.weights))
        s.loads.push_back(in);
      weightHolds_[size_t(slot)] = {k.ktile, int64_t(ci)};
    }
    if (step_ == 0 && j_.outRes && j_.outRes->bordered())
      fillBorder(*j_.outRes, j_.lut ? j_.lut->zp : j_.zpOut, ctx_, s); // the stored value's
    if (step_ == 0 && j_.residual)
      for (auto& in : p_.loadRows(Mem::Param, qaddParam_, residualParams_, 2))
        s.loads.push_back(in);
    if (step_ == 0 && j_.lut)
      for (auto& in : p_.loadRows(Mem::Param, tl_.lutRow, lutConst_, lutTableRows(t_)))
        s.loads.push_back(in);
    if (first && !t_.biasInRequant() && k.ktl > tl_.dmaBiasBlocks(k.ktl))
      for (auto& in : p_.loadRows(Mem::Acc, k.bslot, cc_.bias + uint64_t(k.kb0 * AR_), k.ktl))
        s.loads.push_back(in);
    if (first) {
      const int64_t PB = t_.paramRowsPerBlock();
      for (auto& in :
           p_.loadRows(Mem::Param, k.pslot, cc_.params + uint64_t(PB * k.kb0 * PR_), PB * k.ktl))
        s.loads.push_back(in);
    }
  }

  /// Where the chunk's input tile `h` is, loaded into act slot `inAddr` (padding rows
  /// holding the input zero point) unless the input is resident or the buffer still
  /// holds this very tile (loaded D steps ago for the previous output-channel tile or
  /// chunk).
  InputAt loadInput(Step& s, const Tile& tile, const ChunkPlan& cp, const Halo& h, int64_t slot,
                    int64_t inAddr) {
    const int64_t wp = h.width(), plane = h.lines() * wp;
    const std::array<int64_t, 7> key{tile.n, h.y0, h.y1, h.x0, h.x1, cp.ch.cbLo, cp.ch.cbHi};
    const InputAt at = inputAt(j_, h, cp.ch.cbLo, inAddr, wp, plane);
    if (!j_.inRes && slotHolds_[size_t(slot)] != key) {
      for (auto& in : loadHalo(p_, j_.in, tile.n, cp.ch.cbLo, cp.ch.cbHi, j_.H, j_.W, h, inAddr,
                               j_.zpIn, padRowFor(h, j_.H, j_.W, j_.zpIn, ctx_, padRow_)))
        s.loads.push_back(in);
      slotHolds_[size_t(slot)] = key;
    }
    return at;
  }

  /// A depthwise tile's input `h` widened on the right by depthwisePitchPad (image
  /// columns, or padding within what dma.ld's pad_right field holds) so its lines put
  /// the window's taps in more act banks; `h` itself for other jobs or a resident input.
  Halo widenForBanks(Halo h) const {
    if (!tl_.dw || j_.inRes)
      return h;
    // The image's columns right of the halo, and what pad_right holds beyond those the
    // halo already pads.
    const int64_t room = Target::maxOf(t_.dmaLoad(), isa::role::kPadRight) + (j_.W - 1 - h.x1);
    h.x1 += depthwisePitchPad(j_, t_, h.width(), room);
    return h;
  }

  /// With the bias by DMA, the first chunk's load of the bias into the tile's
  /// accumulators at acc0 (the load engine writes them while the previous tile
  /// computes; every chunk of the tile adds into them).
  void loadBiasByDma(Step& s, const OutputBlocks& k, const Tile& tile, int64_t acc0) const {
    const int64_t P = tile.th * tile.tw, blocks = tl_.dmaBiasBlocks(k.ktl);
    if (P <= size1Ld_) {
      // Block z's P rows all hold bias row kb0 + z: stride1 0 repeats it, stride2 1
      // moves to the next block's row; the SRAM side is packed (z * P + y).
      for (int64_t z0 = 0; z0 < blocks; z0 += size2Ld_)
        s.loads.push_back(p_.dmaLoad(Mem::Acc, acc0 + z0 * P,
                                     cc_.bias + uint64_t((k.kb0 + z0) * AR_), 1, P,
                                     std::min(size2Ld_, blocks - z0), 0, 1));
      return;
    }
    // More pixels than size1: per block, tw x th repeats of its row (strides 0, 0).
    for (int64_t z = 0; z < blocks; ++z)
      s.loads.push_back(p_.dmaLoad(Mem::Acc, acc0 + z * P, cc_.bias + uint64_t((k.kb0 + z) * AR_),
                                   1, tile.tw, tile.th, 0, 0));
  }

  /// Where the tile's output blocks go: the resident output's rows, or the output slot
  /// at outAddr (a fused residual's tile resSlot_ rows after it), and the fused Lut's table.
  TileOutput tileOutput(const OutputBlocks& k, const Tile& tile, int64_t acc0,
                        int64_t outAddr) const {
    TileOutput o = plainOutput(k, tile, acc0, outAddr);
    o.lutTable = tl_.lutTable;
    return o;
  }

  /// tileOutput without the Lut.
  TileOutput plainOutput(const OutputBlocks& k, const Tile& tile, int64_t acc0,
                         int64_t outAddr) const {
    if (j_.outRes)
      return TileOutput{k.kb0,
                        k.ktl,
                        j_.outRes->at(k.kb0, tile.oy0, tile.ox0),
                        acc0,
                        k.pslot,
                        -1,
                        qaddParam_,
                        j_.outRes->width(),
                        j_.outRes->lines() * j_.outRes->width()};
    return TileOutput{k.kb0,      k.ktl,   outAddr,
                      acc0,       k.pslot, j_.residual ? outAddr + resSlot_ : -1,
                      qaddParam_, tile.tw, tile.th * tile.tw};
  }

  /// The step of chunk ci of spatial tile `tile` of output blocks `k`: its loads, then
  /// accumulators = bias (first chunk), one gemm per (output block, input block, kernel
  /// row); the last chunk requantizes and stores.
  void emitStep(const OutputBlocks& k, const Tile& tile, size_t ci, bool first) {
    const ChunkPlan& cp = k.chunks[ci];
    Step s;
    const int64_t slot = step_ % D_;
    const int64_t inAddr = slot * inSlot_, outAddr = outBase_ + slot * outStride_;
    const int64_t wslot = (split_ ? slot : k.ktile % D_) * cc_.maxWgt;
    loadConstants(s, k, ci, slot, wslot, first);
    // Input tile with its halo (of the chunk's taps with tapHalo).
    const TapSpan span = chunkSpan(j_, tl_, cp.ch);
    const Halo h = widenForBanks(haloOf(j_, span, tile.oy0, tile.th, tile.ox0, tile.tw));
    const InputAt at = loadInput(s, tile, cp, h, slot, inAddr);
    // The accumulators of this tile: one region, or with the bias by DMA the tile's
    // buffer.
    const int64_t acc0 = tl_.biasDma || t_.biasInRequant() ? (tileNo_ % D_) * outSlot_ : 0;
    const int64_t dmaBlocks = tl_.dmaBiasBlocks(k.ktl);
    if (ci == 0 && dmaBlocks > 0)
      loadBiasByDma(s, k, tile, acc0);
    const bool last = ci + 1 == k.chunks.size();
    const TileOutput o = tileOutput(k, tile, acc0, outAddr);
    const ChunkStep cs{cp,       tile,  ci == 0, last,  dmaBlocks, at.addr,
                       at.plane, at.wp, k.bslot, wslot, span,      o};
    const bool overlap = emitChunkComputes(j_, tl_, p_, cs, s);
    if (last)
      emitOutput(j_, p_, tile, o, s, !overlap);
    p_.commitStep(std::move(s));
    ++step_;
    tileNo_ += last ? 1 : 0;
  }

  const ConvJob& j_;
  const ConvTiling& tl_;
  LayerCtx& ctx_;
  const Target& t_;
  Program& p_;
  const int64_t KB_, D_;
  const ConvConsts cc_;
  const uint64_t residualParams_;
  const uint64_t lutConst_;    ///< DRAM offset of the fused Lut's table.
  const int64_t WR_, AR_, PR_; ///< Row bytes of the weight, acc and param SRAMs.
  const bool split_;           ///< The tiling splits the reduction into chunks.
  /// Rows of an input slot (0: resident input) and an output slot; where the output
  /// slots and the bias slots start; a fused residual's tile rows (after its output
  /// tile) and the distance between output slots; the param row of the residual's qadd.
  const int64_t inSlot_, outSlot_, outBase_, biasBase_, resSlot_, outStride_, qaddParam_;
  const int64_t size2Ld_, size1Ld_; ///< The dma.ld's largest size2 and size1.
  int64_t padRow_ = -1;             ///< The constant row of zp_x, once added (padRowFor).
  int64_t step_ = 0, tileNo_ = 0;   ///< Steps, and spatial tiles completed, so far.
  /// What each buffer's input slot holds (image, halo, input blocks), and each weight slot's
  /// (tile of output blocks, chunk).
  std::vector<std::array<int64_t, 7>> slotHolds_;
  std::vector<std::pair<int64_t, int64_t>> weightHolds_;
};

LayerInfo emitConvWith(const ConvJob& j, const ConvTiling& tl, LayerCtx& ctx) {
  if (tl.depth < ctx.prog.depth())
    ctx.prog.setLayerDepth(tl.depth);
  return ConvEmitter(j, tl, ctx).run();
}
} // namespace

} // namespace ember::npu
