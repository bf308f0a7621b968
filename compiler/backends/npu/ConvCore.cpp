#include "ConvCore.h"
#include "ember/isa/roles.h"

#include <algorithm>
#include <array>

namespace ember::npu {

namespace {

/// Constants of one job: weight blocks (K/L, C/L, KH, KW, LxL; byte k*L + c holds
/// W[k][c]; only the input blocks an output block reads), zp-folded bias rows and
/// requantization rows (M row then S row per output block).
struct ConvConsts {
  uint64_t weights = 0, bias = 0, params = 0;
  std::vector<int64_t> wOff; ///< First weight block of each output block (+ total).
};

ConvConsts packConsts(const ConvJob& j, const Target& t, ConstPool& pool) {
  const int64_t L = t.lanes(), KB = ceilDiv(j.K, L);
  const int64_t Kg = j.K / j.group, Cg = j.C / j.group, taps = j.KH * j.KW;
  ConvConsts c;
  c.wOff.push_back(0);
  std::vector<uint8_t> wbytes;
  for (int64_t kb = 0; kb < KB; ++kb) {
    const auto r = inputBlocks(j, L, kb);
    for (int64_t cb = r.first; cb < r.second; ++cb)
      for (int64_t tap = 0; tap < taps; ++tap) {
        std::vector<uint8_t> blk(size_t(L * L), 0);
        for (int64_t k = 0; k < L; ++k) {
          const int64_t kg = kb * L + k;
          if (kg >= j.K)
            continue;
          const int64_t g = kg / Kg;
          for (int64_t cc = 0; cc < L; ++cc) {
            const int64_t ci = cb * L + cc - g * Cg;
            if (ci < 0 || ci >= Cg)
              continue;
            blk[size_t(k * L + cc)] =
                static_cast<uint8_t>(j.w[size_t((kg * Cg + ci) * taps + tap)]);
          }
        }
        wbytes.insert(wbytes.end(), blk.begin(), blk.end());
      }
    c.wOff.push_back(c.wOff.back() + (r.second - r.first) * taps);
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

/// The gemms of one output block over `blocks` input blocks of a tile.
struct GemmNest {
  int64_t act, acc, wgt, blocks, plane, wp, th, tw;
};

void appendGemms(const ConvJob& j, const Program& p, const GemmNest& g,
                 std::vector<isa::Instruction>& out) {
  const Target& t = p.target();
  const int64_t n2max = Target::maxOf(t.gemm(), isa::role::kN2);
  const bool blocksInner = gemmBlocksInner(j, t, g.blocks, g.plane);
  // n2 walks the kernel columns (act_s2 = dilation, wgt_s2 = 1) or the input blocks
  // (act_s2 = the tile's plane, wgt_s2 = KH * KW), whichever needs fewer gemms.
  const int64_t outer = blocksInner ? j.KW : g.blocks, inner = blocksInner ? g.blocks : j.KW;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t kh = 0; kh < j.KH; ++kh)
      for (int64_t i0 = 0; i0 < inner; i0 += n2max) {
        const int64_t n = std::min(n2max, inner - i0);
        const int64_t cb = blocksInner ? i0 : o, kw = blocksInner ? o : i0;
        isa::Instruction in = p.make(t.gemm());
        Program::set(in, isa::role::kActAddr, g.act + cb * g.plane + kh * j.dH * g.wp + kw * j.dW);
        Program::set(in, isa::role::kAccAddr, g.acc);
        Program::set(in, isa::role::kWgtAddr, g.wgt + (cb * j.KH + kh) * j.KW + kw);
        Program::set(in, isa::role::kN0, g.tw);
        Program::set(in, isa::role::kN1, g.th);
        Program::set(in, isa::role::kN2, n);
        Program::set(in, isa::role::kActS0, j.sW);
        Program::set(in, isa::role::kActS1, j.sH * g.wp);
        Program::set(in, isa::role::kActS2, blocksInner ? g.plane : j.dW);
        Program::set(in, isa::role::kAccS0, 1);
        Program::set(in, isa::role::kAccS1, g.tw);
        Program::set(in, isa::role::kAccS2, 0);
        Program::set(in, isa::role::kWgtS2, blocksInner ? j.KH * j.KW : 1);
        out.push_back(in);
      }
}

} // namespace

bool gemmBlocksInner(const ConvJob& j, const Target& t, int64_t blocks, int64_t plane) {
  const int64_t n2max = Target::maxOf(t.gemm(), isa::role::kN2);
  if (plane > Target::maxOf(t.gemm(), isa::role::kActS2) ||
      j.KH * j.KW > Target::maxOf(t.gemm(), isa::role::kWgtS2))
    return false;
  return j.KW * ceilDiv(blocks, n2max) < blocks * ceilDiv(j.KW, n2max);
}

std::vector<isa::Instruction> loadHalo(const Program& p, const ActView& in, int64_t n, int64_t cbA,
                                       int64_t cbB, int64_t H, int64_t W, const Halo& h,
                                       int64_t sramAddr, int64_t padValue) {
  const int64_t L = p.target().lanes();
  const int64_t size2 = Target::maxOf(p.target().dmaLoad(), isa::role::kSize2);
  const int64_t vy0 = std::max<int64_t>(h.y0, 0), vy1 = std::min(h.y1, H - 1);
  const int64_t vx0 = std::max<int64_t>(h.x0, 0), vx1 = std::min(h.x1, W - 1);
  const int64_t plane = h.lines() * h.width();
  std::vector<isa::Instruction> out;
  for (int64_t c0 = cbA; c0 < cbB; c0 += size2) {
    const int64_t c1 = std::min(cbB, c0 + size2);
    const uint64_t src =
        in.base + uint64_t((n * in.image + c0 * in.block + vy0 * in.line + vx0) * L);
    isa::Instruction ld = p.dmaLoad(Mem::Act, sramAddr + (c0 - cbA) * plane, src, vx1 - vx0 + 1,
                                    vy1 - vy0 + 1, c1 - c0, in.line, in.block);
    Program::setPads(ld, vx0 - h.x0, h.x1 - vx1, vy0 - h.y0, h.y1 - vy1, padValue);
    out.push_back(ld);
  }
  return out;
}

LayerInfo emitConv(const ConvJob& j, LayerCtx& ctx) {
  const Target& t = ctx.t;
  Program& p = ctx.prog;
  const int64_t L = t.lanes(), KB = ceilDiv(j.K, L), D = p.depth();
  const ConvTiling tl = chooseConvTiling(j, t, int(D), ctx.opts);
  const ConvConsts cc = packConsts(j, t, ctx.consts);
  const int64_t WR = t.rowBytes(Mem::Weight), AR = t.rowBytes(Mem::Acc),
                PR = t.rowBytes(Mem::Param);

  // SRAM plan: act = D input slots then D output slots; weight = D slots; acc =
  // accumulators then D bias slots; param = D slots.
  int64_t maxCB = 0, maxWgt = 0;
  for (int64_t kb0 = 0; kb0 < KB; kb0 += tl.kt) {
    const int64_t kb1 = std::min(KB, kb0 + tl.kt);
    maxCB = std::max(maxCB, inputBlocks(j, L, kb1 - 1).second - inputBlocks(j, L, kb0).first);
    maxWgt = std::max(maxWgt, cc.wOff[size_t(kb1)] - cc.wOff[size_t(kb0)]);
  }
  const int64_t Hp = (tl.th - 1) * j.sH + (j.KH - 1) * j.dH + 1;
  const int64_t Wp = (tl.tw - 1) * j.sW + (j.KW - 1) * j.dW + 1;
  const int64_t inSlot = maxCB * Hp * Wp, outSlot = tl.kt * tl.th * tl.tw;
  const int64_t outBase = D * inSlot, biasBase = tl.kt * tl.th * tl.tw;
  const int64_t size2St = Target::maxOf(t.dmaStore(), isa::role::kSize2);

  int64_t step = 0;
  std::vector<std::array<int64_t, 7>> slotHolds(size_t(D), {-1, -1, -1, -1, -1, -1, -1});
  for (int64_t kb0 = 0, ktile = 0; kb0 < KB; kb0 += tl.kt, ++ktile) {
    const int64_t kb1 = std::min(KB, kb0 + tl.kt), ktl = kb1 - kb0;
    const int64_t cbA = inputBlocks(j, L, kb0).first, cbB = inputBlocks(j, L, kb1 - 1).second;
    const int64_t wslot = (ktile % D) * maxWgt, bslot = biasBase + (ktile % D) * tl.kt;
    const int64_t pslot = (ktile % D) * 2 * tl.kt;
    bool first = true;
    std::vector<Tile> tiles;
    for (int64_t n = 0; n < j.N; ++n)
      for (int64_t oy0 = 0; oy0 < j.OH; oy0 += tl.th)
        for (int64_t ox0 = 0; ox0 < j.OW; ox0 += tl.tw)
          tiles.push_back({n, oy0, std::min(tl.th, j.OH - oy0), ox0, std::min(tl.tw, j.OW - ox0)});
    for (const Tile& tile : tiles) {
      Step s;
      const int64_t slot = step % D;
      const int64_t inAddr = slot * inSlot, outAddr = outBase + slot * outSlot;
      if (first) {
        for (auto& in :
             p.loadRows(Mem::Weight, wslot, cc.weights + uint64_t(cc.wOff[size_t(kb0)] * WR),
                        cc.wOff[size_t(kb1)] - cc.wOff[size_t(kb0)]))
          s.loads.push_back(in);
        for (auto& in : p.loadRows(Mem::Acc, bslot, cc.bias + uint64_t(kb0 * AR), ktl))
          s.loads.push_back(in);
        for (auto& in : p.loadRows(Mem::Param, pslot, cc.params + uint64_t(2 * kb0 * PR), 2 * ktl))
          s.loads.push_back(in);
      }
      // Input tile with its halo; padding rows hold the input zero point.
      const Halo h{
          tile.oy0 * j.sH - j.padT, (tile.oy0 + tile.th - 1) * j.sH - j.padT + (j.KH - 1) * j.dH,
          tile.ox0 * j.sW - j.padL, (tile.ox0 + tile.tw - 1) * j.sW - j.padL + (j.KW - 1) * j.dW};
      const int64_t wp = h.width(), plane = h.lines() * wp;
      // The buffer may still hold this very tile (loaded D steps ago for the previous
      // output-channel tile): then it is not fetched again.
      const std::array<int64_t, 7> key{tile.n, tile.oy0, tile.ox0, tile.th, tile.tw, cbA, cbB};
      if (slotHolds[size_t(slot)] != key) {
        for (auto& in : loadHalo(p, j.in, tile.n, cbA, cbB, j.H, j.W, h, inAddr, j.zpIn))
          s.loads.push_back(in);
        slotHolds[size_t(slot)] = key;
      }
      // Accumulators = bias, then one gemm per (output block, input block, kernel row).
      const int64_t P = tile.th * tile.tw;
      for (int64_t kbl = 0; kbl < ktl; ++kbl)
        s.computes.push_back(p.vecUnary("copy", Mem::Acc, Mem::Acc, {kbl * P, 1, tile.tw},
                                        {bslot + kbl, 0, 0}, tile.tw, tile.th));
      for (int64_t kbl = 0; kbl < ktl; ++kbl) {
        const int64_t kb = kb0 + kbl;
        const auto r = inputBlocks(j, L, kb);
        GemmNest g;
        g.act = inAddr + (r.first - cbA) * plane;
        g.acc = kbl * P;
        g.wgt = wslot + cc.wOff[size_t(kb)] - cc.wOff[size_t(kb0)];
        g.blocks = r.second - r.first;
        g.plane = plane;
        g.wp = wp;
        g.th = tile.th;
        g.tw = tile.tw;
        appendGemms(j, p, g, s.computes);
      }
      for (int64_t kbl = 0; kbl < ktl; ++kbl)
        s.computes.push_back(p.requant({outAddr + kbl * P, 1, tile.tw}, {kbl * P, 1, tile.tw},
                                       pslot + 2 * kbl, j.zpOut, j.lo, j.hi, tile.tw, tile.th));
      for (int64_t k0 = 0; k0 < ktl; k0 += size2St) {
        const int64_t k1 = std::min(ktl, k0 + size2St);
        const uint64_t dst =
            j.out.base + uint64_t((tile.n * j.out.image + (kb0 + k0) * j.out.block +
                                   tile.oy0 * j.out.line + tile.ox0) *
                                  L);
        s.stores.push_back(p.dmaStore(Mem::Act, outAddr + k0 * P, dst, tile.tw, tile.th, k1 - k0,
                                      j.out.line, j.out.block));
      }
      p.commitStep(std::move(s));
      first = false;
      ++step;
    }
  }
  LayerInfo info;
  info.macs = j.macs;
  info.tiling = "kt=" + std::to_string(tl.kt) + " th=" + std::to_string(tl.th) +
                " tw=" + std::to_string(tl.tw);
  info.sram[0] = tl.actRows;
  info.sram[1] = tl.wgtRows;
  info.sram[2] = tl.accRows;
  info.sram[3] = tl.paramRows;
  return info;
}

} // namespace ember::npu
