// Block transposition through the MAC array (BlockTranspose.h). Block (g, rb, cb) is the L
// rows r of group g in block rb (valid rows: R - rb * L at the end) and their lanes of
// channel block cb:
//
//   1. gather: its rows (rStride rows apart in DRAM) are copied to L consecutive rows of
//      the scratch, as a weight row must be contiguous;
//   2. transpose: loaded as weights W (W[i][c] = value (g, rb * L + i, cb * L + c)) and
//      multiplied by the identity (L constant act rows), accumulator row p holds
//      W[i][p] in lane i: value (g, rb * L + i, cb * L + p), row cb * L + p of the
//      result. A requantize with multiplier 1 writes it back to int8; lanes i beyond the
//      block's valid rows get multiplier 0, so they are zero whatever the scratch held.
#include "BlockTranspose.h"
#include "Stream.h"

#include "ember/isa/roles.h"
#include "ember/quantization/Numerics.h"

namespace ember::npu {

std::vector<int32_t> laneRow(int64_t L, int64_t valid, int32_t v, int32_t rest) {
  std::vector<int32_t> r(size_t(L), rest);
  std::fill(r.begin(), r.begin() + valid, v);
  return r;
}

namespace {

isa::Instruction identityGemm(const Program& p, int64_t wgt, bool reset) {
  isa::Instruction in = p.make(p.target().gemm());
  Program::set(in, isa::role::kReset, reset ? 1 : 0);
  Program::set(in, isa::role::kActAddr, 0);
  Program::set(in, isa::role::kAccAddr, 0);
  Program::set(in, isa::role::kWgtAddr, wgt);
  Program::set(in, isa::role::kN0, p.target().lanes());
  Program::set(in, isa::role::kN1, 1);
  Program::set(in, isa::role::kN2, 1);
  Program::set(in, isa::role::kActS0, 1);
  Program::set(in, isa::role::kAccS0, 1);
  return in;
}

} // namespace

TransposeRows blockTransposeRows(int64_t L, int64_t D) {
  return {L + D * L, D, L, 4};
}

std::string checkBlockTranspose(const Target& t, int D) {
  const int64_t L = t.lanes();
  const TransposeRows r = blockTransposeRows(L, D);
  if (r.act <= t.rows(Mem::Act) && r.wgt <= t.rows(Mem::Weight) && r.acc <= t.rows(Mem::Acc) &&
      r.param <= t.rows(Mem::Param) && L <= Target::maxOf(t.gemm(), isa::role::kN0))
    return checkStream(t, D, 1, true);
  return "transposing a block of " + std::to_string(L) + " x " + std::to_string(L) +
         " values through the array needs " + std::to_string(r.act) + " act rows (has " +
         std::to_string(t.rows(Mem::Act)) + "), " + std::to_string(r.wgt) + " weight rows (has " +
         std::to_string(t.rows(Mem::Weight)) + "), " + std::to_string(r.acc) + " acc rows (has " +
         std::to_string(t.rows(Mem::Acc)) + ") and " + std::to_string(r.param) +
         " param rows (has " + std::to_string(t.rows(Mem::Param)) + ")";
}

void emitBlockTranspose(const BlockTransposeJob& j, uint64_t scratch, LayerCtx& ctx,
                        LayerInfo& info) {
  const Target& t = ctx.t;
  Program& p = ctx.prog;
  const int64_t L = t.lanes(), blockBytes = L * L;
  const int64_t RB = ceilDiv(j.R, L), CBl = ceilDiv(j.Cl, L);
  auto validRows = [&](int64_t rb) { return std::min(L, j.R - rb * L); };
  // Block (g, rb, cb) is scratch block (g * RB + rb) * CBl + cb.
  for (int64_t g = 0; g < j.G; ++g)
    for (int64_t rb = 0; rb < RB; ++rb)
      for (int64_t cb = 0; cb < CBl; ++cb) {
        StreamSpec s;
        s.inputs = {j.src + uint64_t((g * j.gStride + rb * L * j.rStride + cb) * L)};
        s.output = scratch + uint64_t(((g * RB + rb) * CBl + cb) * blockBytes);
        s.rows = validRows(rb);
        s.groupRows = 1;
        s.inGroupStride = j.rStride;
        s.inPlace = true;
        emitStream(s, ctx, info);
      }
  p.barrier();
  std::vector<uint8_t> identity(size_t(blockBytes), 0);
  for (int64_t i = 0; i < L; ++i)
    identity[size_t(i * L + i)] = 1;
  const quant::Multiplier one = quant::quantizeMultiplier(1.0);
  const int64_t lastValid = validRows(RB - 1);
  std::vector<int32_t> params;
  for (const auto& row : {laneRow(L, L, one.M, 0), laneRow(L, L, one.S, 1),
                          laneRow(L, lastValid, one.M, 0), laneRow(L, lastValid, one.S, 1)})
    params.insert(params.end(), row.begin(), row.end());
  const uint64_t idC = ctx.consts.add(identity), parC = ctx.consts.addInt32(params);
  const int64_t D = p.depth();
  bool first = true;
  for (int64_t g = 0; g < j.G; ++g)
    for (int64_t rb = 0; rb < RB; ++rb)
      for (int64_t cb = 0; cb < CBl; ++cb) {
        const int64_t slot = p.stepIndex() % D, out = L + slot * L;
        Step s;
        if (first) {
          for (auto& in : p.loadRows(Mem::Act, 0, idC, L))
            s.loads.push_back(in);
          for (auto& in : p.loadRows(Mem::Param, 0, parC, 4))
            s.loads.push_back(in);
          first = false;
        }
        const int64_t block = (g * RB + rb) * CBl + cb;
        for (auto& in : p.loadRows(Mem::Weight, slot, scratch + uint64_t(block * blockBytes), 1))
          s.loads.push_back(in);
        s.computes.push_back(identityGemm(p, slot, true));
        s.computes.push_back(identityGemm(p, slot, false));
        const int64_t par = rb + 1 == RB && lastValid < L ? 2 : 0;
        for (const auto& c : Program::rowChunks(t.requant(), L))
          s.computes.push_back(
              p.requant({out + c[0], 1, c[1]}, {c[0], 1, c[1]}, par, 0, -128, 127, c[1], c[2]));
        if (j.toWeights) {
          const uint64_t at = j.dst + uint64_t(((g * CBl + cb) * RB + rb) * blockBytes);
          for (auto& in : p.storeRows(Mem::Act, out, at, L))
            s.stores.push_back(in);
        } else { // rows (g, cb * L + p, rb) of [G, Cl, R], p below the valid channels
          const uint64_t at = j.dst + uint64_t(((g * j.Cl + cb * L) * RB + rb) * L);
          for (auto& in : p.storeGroups(Mem::Act, out, at, 1, std::min(L, j.Cl - cb * L), RB))
            s.stores.push_back(in);
        }
        p.commitStep(std::move(s));
      }
  const TransposeRows r = blockTransposeRows(L, D);
  info.sram[0] = std::max(info.sram[0], r.act);
  info.sram[1] = std::max(info.sram[1], r.wgt);
  info.sram[2] = std::max(info.sram[2], r.acc);
  info.sram[3] = std::max(info.sram[3], r.param);
}

} // namespace ember::npu
