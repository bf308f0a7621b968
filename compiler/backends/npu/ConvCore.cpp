#include "ConvCore.h"
#include "Binary.h"
#include "ember/isa/roles.h"

#include <algorithm>
#include <array>
#include <limits>

namespace ember::npu {

namespace {

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
  uint64_t weights = 0, bias = 0, params = 0;
  std::vector<std::vector<ChunkPlan>> tiles; ///< Per tile of kt output blocks.
  int64_t maxWgt = 0;                        ///< Weight blocks of the largest chunk.
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

/// The depthwise weight block of output block kb appended to `out`: row t holds kernel
/// tap t of the block's channels (byte t * L + c: channel kb * L + c),
/// docs/isa/instructions.md 2.12.
void appendDepthwiseBlock(const ConvJob& j, int64_t L, int64_t kb, std::vector<uint8_t>& out) {
  const int64_t taps = j.KH * j.KW;
  const size_t at = out.size();
  out.resize(at + size_t(L * L), 0);
  for (int64_t c = 0; c < L && kb * L + c < j.K; ++c)
    for (int64_t tap = 0; tap < taps; ++tap)
      out[at + size_t(tap * L + c)] = static_cast<uint8_t>(j.w[size_t((kb * L + c) * taps + tap)]);
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
          if (tl.dw) {
            appendDepthwiseBlock(j, L, kb, wbytes);
            ++blocks;
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
  std::vector<int32_t> bias(size_t(KB * L), 0), params(size_t(KB * 2 * L), 0);
  for (int64_t kb = 0; kb < KB; ++kb)
    for (int64_t k = 0; k < L; ++k) {
      const int64_t kg = kb * L + k;
      params[size_t((2 * kb + 1) * L + k)] = 1; // padding lanes: M = 0, S = 1
      if (kg >= j.K)
        continue;
      int64_t sumW = 0;
      for (int64_t i = 0; i < Cg * taps; ++i)
        sumW += j.w[size_t(kg * Cg * taps + i)];
      const uint32_t b = static_cast<uint32_t>(j.bias.empty() ? 0 : j.bias[size_t(kg)]) -
                         static_cast<uint32_t>(int64_t(j.zpIn) * sumW);
      bias[size_t(kg)] = static_cast<int32_t>(b);
      params[size_t(2 * kb * L + k)] = j.mult[size_t(kg)].M;
      params[size_t((2 * kb + 1) * L + k)] = j.mult[size_t(kg)].S;
    }
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
  bool dw = false;         ///< One depthwise instruction (ConvTiling::dw).
};

/// The depthwise instruction of one output block of a tile (docs/isa/instructions.md section 2.12).
isa::Instruction depthwiseOf(const ConvJob& j, const Program& p, const GemmNest& g) {
  isa::Instruction in = p.make(*p.target().depthwise());
  Program::set(in, isa::role::kActAddr, g.act);
  Program::set(in, isa::role::kAccAddr, g.acc);
  Program::set(in, isa::role::kWgtAddr, g.wgt);
  Program::set(in, isa::role::kN0, g.tw);
  Program::set(in, isa::role::kN1, g.th);
  Program::set(in, isa::role::kActS0, j.sW);
  Program::set(in, isa::role::kActS1, j.sH * g.wp);
  Program::set(in, isa::role::kAccS0, 1);
  Program::set(in, isa::role::kAccS1, g.tw);
  Program::set(in, isa::role::kKh, j.KH);
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
    out.push_back(depthwiseOf(j, p, g));
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
/// row `resAddr` (< 0: none; qadd scalars at param row `qaddParam`).
struct TileOutput {
  int64_t kb0, ktl, outAddr, acc0, pslot, resAddr, qaddParam;
  /// Act rows between the output's lines and between its blocks: the tile's own (tw and
  /// th * tw) in its output slot, the tensor's in a resident output (ConvJob::outRes).
  int64_t line, block;
};

/// The requantize of output block `kbl` of a tile into its output slot.
isa::Instruction requantOf(const ConvJob& j, const Program& p, const Tile& tile,
                           const TileOutput& o, int64_t kbl) {
  const int64_t P = tile.th * tile.tw;
  return p.requant({o.outAddr + kbl * o.block, 1, o.line}, {o.acc0 + kbl * P, 1, tile.tw},
                   o.pslot + 2 * kbl, j.zpOut, j.lo, j.hi, tile.tw, tile.th);
}

/// The requantize of output block `kbl` of a tile (and the qadd of its fused residual).
void blockOutput(const ConvJob& j, const Program& p, const Tile& tile, const TileOutput& o,
                 int64_t kbl, std::vector<isa::Instruction>& out) {
  const int64_t P = tile.th * tile.tw;
  out.push_back(requantOf(j, p, tile, o, kbl));
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
    for (int64_t kbl = 0; kbl < o.ktl; ++kbl)
      s.computes.push_back(requantOf(j, p, tile, o, kbl));
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
  bool first, last; ///< The tile's first chunk (bias), its last (requantize, store).
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
  std::vector<isa::Instruction> copies;
  if (c.first && !tl.biasDma)
    for (int64_t kbl = 0; kbl < ktl; ++kbl)
      copies.push_back(p.vecUnary("copy", Mem::Acc, Mem::Acc, {kbl * P, 1, tile.tw},
                                  {c.bslot + kbl, 0, 0}, tile.tw, tile.th));
  size_t nextCopy = 0;
  auto copyUpTo = [&](int64_t k) { // the bias of blocks up to k, before their gemms
    for (; nextCopy < copies.size() && int64_t(nextCopy) <= (overlap ? k : ktl); ++nextCopy)
      s.computes.push_back(std::move(copies[nextCopy]));
  };
  std::vector<isa::Instruction> pending;
  for (int64_t kbl = 0; kbl < ktl; ++kbl) {
    const auto r = chunkBlocks(j, L, kb0 + kbl, cp.ch);
    copyUpTo(kbl);
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
      std::vector<isa::Instruction> gemms;
      appendGemms(j, p, g, gemms);
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

LayerInfo emitConvWith(const ConvJob& j, const ConvTiling& tl, LayerCtx& ctx) {
  const Target& t = ctx.t;
  Program& p = ctx.prog;
  if (tl.depth < p.depth())
    p.setLayerDepth(tl.depth);
  const int64_t L = t.lanes(), KB = ceilDiv(j.K, L), D = p.depth();
  const ConvConsts cc = packConsts(j, t, tl, ctx.consts);
  const uint64_t residualParams = j.residual ? ctx.consts.addInt32(j.residual->params) : 0;
  const int64_t WR = t.rowBytes(Mem::Weight), AR = t.rowBytes(Mem::Acc),
                PR = t.rowBytes(Mem::Param);
  const bool split = tl.splitsReduction();

  // SRAM plan: act = D input slots then D output slots; weight = D slots; acc =
  // accumulators then D bias slots; param = D slots. Without chunks a weight slot holds
  // a tile of output blocks' weights for all its steps; with chunks one step's chunk.
  // An input tile may lie wholly in the padding (a tap chunk of a border tile): it is
  // then this constant row of zp_x, repeated (added to the constants when first needed).
  int64_t padRow = -1;
  const int64_t inSlot = tl.inRows, outSlot = tl.kt * tl.th * tl.tw; // inRows 0: resident
  const int64_t outBase = D * inSlot, biasBase = tl.kt * tl.th * tl.tw;
  // A fused residual's tile follows its buffer's output tile (residualRows apart from it).
  const int64_t resSlot = residualRows(j, t, outSlot), outStride = outSlot + resSlot;
  const int64_t qaddParam = D * 2 * tl.kt; // param rows of the fused residual's qadd
  const int64_t size2Ld = Target::maxOf(t.dmaLoad(), isa::role::kSize2);
  const int64_t size1Ld = Target::maxOf(t.dmaLoad(), isa::role::kSize1);

  int64_t step = 0, tileNo = 0;
  std::vector<std::array<int64_t, 7>> slotHolds(size_t(D), {-1, -1, -1, -1, -1, -1, -1});
  std::vector<std::pair<int64_t, int64_t>> weightHolds(size_t(D), {-1, -1});
  for (int64_t kb0 = 0, ktile = 0; kb0 < KB; kb0 += tl.kt, ++ktile) {
    const int64_t kb1 = std::min(KB, kb0 + tl.kt), ktl = kb1 - kb0;
    const std::vector<ChunkPlan>& chunks = cc.tiles[size_t(ktile)];
    const int64_t bslot = biasBase + (ktile % D) * tl.kt, pslot = (ktile % D) * 2 * tl.kt;
    bool first = true;
    std::vector<Tile> tiles;
    for (int64_t n = 0; n < j.N; ++n)
      for (int64_t oy0 = 0; oy0 < j.OH; oy0 += tl.th)
        for (int64_t ox0 = 0; ox0 < j.OW; ox0 += tl.tw)
          tiles.push_back({n, oy0, std::min(tl.th, j.OH - oy0), ox0, std::min(tl.tw, j.OW - ox0)});
    for (const Tile& tile : tiles)
      for (size_t ci = 0; ci < chunks.size(); ++ci) {
        const ChunkPlan& cp = chunks[ci];
        Step s;
        const int64_t slot = step % D;
        const int64_t inAddr = slot * inSlot, outAddr = outBase + slot * outStride;
        const int64_t wslot = (split ? slot : ktile % D) * cc.maxWgt;
        const bool loadWeights =
            split ? weightHolds[size_t(slot)] != std::make_pair(ktile, int64_t(ci)) : first;
        if (loadWeights) {
          for (auto& in :
               p.loadRows(Mem::Weight, wslot, cc.weights + uint64_t(cp.wOff * WR), cp.ch.weights))
            s.loads.push_back(in);
          weightHolds[size_t(slot)] = {ktile, int64_t(ci)};
        }
        if (step == 0 && j.outRes && j.outRes->bordered())
          fillBorder(*j.outRes, j.zpOut, ctx, s);
        if (step == 0 && j.residual)
          for (auto& in : p.loadRows(Mem::Param, qaddParam, residualParams, 2))
            s.loads.push_back(in);
        if (first && !tl.biasDma)
          for (auto& in : p.loadRows(Mem::Acc, bslot, cc.bias + uint64_t(kb0 * AR), ktl))
            s.loads.push_back(in);
        if (first) {
          for (auto& in :
               p.loadRows(Mem::Param, pslot, cc.params + uint64_t(2 * kb0 * PR), 2 * ktl))
            s.loads.push_back(in);
        }
        // Input tile with its halo (of the chunk's taps with tapHalo); padding rows hold
        // the input zero point.
        const TapSpan span = chunkSpan(j, tl, cp.ch);
        const Halo h = haloOf(j, span, tile.oy0, tile.th, tile.ox0, tile.tw);
        const int64_t wp = h.width(), plane = h.lines() * wp;
        // The buffer may still hold this very tile (loaded D steps ago for the previous
        // output-channel tile or chunk): then it is not fetched again.
        const std::array<int64_t, 7> key{tile.n, h.y0, h.y1, h.x0, h.x1, cp.ch.cbLo, cp.ch.cbHi};
        const InputAt at = inputAt(j, h, cp.ch.cbLo, inAddr, wp, plane);
        if (!j.inRes && slotHolds[size_t(slot)] != key) {
          for (auto& in : loadHalo(p, j.in, tile.n, cp.ch.cbLo, cp.ch.cbHi, j.H, j.W, h, inAddr,
                                   j.zpIn, padRowFor(h, j.H, j.W, j.zpIn, ctx, padRow)))
            s.loads.push_back(in);
          slotHolds[size_t(slot)] = key;
        }
        // Accumulators = bias (first chunk), then one gemm per (output block, input
        // block, kernel row); the last chunk requantizes and stores.
        const int64_t P = tile.th * tile.tw;
        // The accumulators of this tile: one region, or with the bias by DMA the tile's
        // buffer (the load engine writes them while the previous tile computes; every
        // chunk of the tile adds into it).
        const int64_t acc0 = tl.biasDma ? (tileNo % D) * outSlot : 0;
        if (ci == 0 && tl.biasDma && P <= size1Ld) {
          // Block z's P rows all hold bias row kb0 + z: stride1 0 repeats it, stride2 1
          // moves to the next block's row; the SRAM side is packed (z * P + y).
          for (int64_t z0 = 0; z0 < ktl; z0 += size2Ld)
            s.loads.push_back(p.dmaLoad(Mem::Acc, acc0 + z0 * P,
                                        cc.bias + uint64_t((kb0 + z0) * AR), 1, P,
                                        std::min(size2Ld, ktl - z0), 0, 1));
        } else if (ci == 0 && tl.biasDma) {
          // More pixels than size1: per block, tw x th repeats of its row (strides 0, 0).
          for (int64_t z = 0; z < ktl; ++z)
            s.loads.push_back(p.dmaLoad(Mem::Acc, acc0 + z * P, cc.bias + uint64_t((kb0 + z) * AR),
                                        1, tile.tw, tile.th, 0, 0));
        }
        const bool last = ci + 1 == chunks.size();
        const TileOutput o =
            j.outRes ? TileOutput{kb0,
                                  ktl,
                                  j.outRes->at(kb0, tile.oy0, tile.ox0),
                                  acc0,
                                  pslot,
                                  -1,
                                  qaddParam,
                                  j.outRes->width(),
                                  j.outRes->lines() * j.outRes->width()}
                     : TileOutput{kb0,       ktl,     outAddr,
                                  acc0,      pslot,   j.residual ? outAddr + resSlot : -1,
                                  qaddParam, tile.tw, P};
        const ChunkStep cs{cp,    tile,  ci == 0, last, at.addr, at.plane,
                           at.wp, bslot, wslot,   span, o};
        const bool overlap = emitChunkComputes(j, tl, p, cs, s);
        if (last)
          emitOutput(j, p, tile, o, s, !overlap);
        p.commitStep(std::move(s));
        first = false;
        ++step;
        tileNo += ci + 1 == chunks.size() ? 1 : 0;
      }
  }
  LayerInfo info;
  info.macs = j.macs;
  info.tiling = "kt=" + std::to_string(tl.kt) + " th=" + std::to_string(tl.th) +
                " tw=" + std::to_string(tl.tw);
  if (tl.biasDma)
    info.tiling += " bias-dma";
  if (tl.dw)
    info.tiling += " depthwise";
  if (split)
    info.tiling += " rb=" + std::to_string(tl.rb) + (tl.rt ? " rt=" + std::to_string(tl.rt) : "") +
                   (tl.tapHalo ? " tap-halo" : "");
  if (j.residual)
    info.tiling += " +residual";
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
} // namespace

} // namespace ember::npu
