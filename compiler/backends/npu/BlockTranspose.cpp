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
//      Per block: a reset gemm and the identity gemm (L rows each), a requantize of L
//      rows, and L rows of DMA each way in both passes.
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

/// The identity rows (act 0..L-1) times weight block `wgt` into acc rows 0..L-1, or
/// (reset) those accumulators zeroed.
isa::Instruction identityGemm(const Program& p, int64_t wgt, bool reset) {
  Program::GemmLoops g;
  g.wgt = wgt;
  g.n0 = p.target().lanes();
  g.reset = reset;
  return p.gemm(g);
}

} // namespace

SramRows blockTransposeRows(int64_t L, int64_t D) {
  return {L + D * L, D, L, 4};
}

SramRows blockGatherRows(int64_t L, int64_t D) {
  return {2 * D * L, 1, L, 4};
}

std::optional<BlockTransposeJob> transposeJobOf(const Node& n, int64_t L) {
  const Shape& x = n.input(0).dims();
  const std::vector<int64_t> perm = n.attrs().getInts("perm");
  BlockTransposeJob j;
  if (x.size() == 2 && perm == std::vector<int64_t>{1, 0}) {
    j.R = x[0];
    j.Cl = x[1];
    j.rStride = ceilDiv(j.Cl, L);
    return j;
  }
  if (x.size() != 3)
    return std::nullopt;
  const int64_t CB = ceilDiv(x[2], L);
  j.Cl = x[2];
  if (perm == std::vector<int64_t>{0, 2, 1}) { // per group a, its B rows
    j.G = x[0];
    j.R = x[1];
    j.gStride = x[1] * CB;
    j.rStride = CB;
    return j;
  }
  if (perm == std::vector<int64_t>{1, 2, 0}) { // per group b, its A rows B * CB apart
    j.G = x[1];
    j.R = x[0];
    j.gStride = CB;
    j.rStride = x[1] * CB;
    return j;
  }
  return std::nullopt;
}

std::string checkBlockTranspose(const Target& t, int D, bool gather) {
  const int64_t L = t.lanes();
  if (L > Target::maxOf(t.gemm(), isa::role::kN0))
    return "transposing a block of " + std::to_string(L) + " x " + std::to_string(L) +
           " values through the array needs a gemm of " + std::to_string(L) +
           " rows; its n0 field counts up to " +
           std::to_string(Target::maxOf(t.gemm(), isa::role::kN0));
  for (const SramRows& r : {blockTransposeRows(L, D), gather ? blockGatherRows(L, D) : SramRows{}})
    if (!r.fits(t))
      return "transposing a block of " + std::to_string(L) + " x " + std::to_string(L) +
             " values through the array needs " + r.figures(t);
  return checkStream(t, D, 1, true);
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
  blockTransposeRows(L, D).raise(info);
}

void emitBlockGather(const BlockTransposeJob& j, LayerCtx& ctx, LayerInfo& info) {
  const Target& t = ctx.t;
  Program& p = ctx.prog;
  const int64_t L = t.lanes(), blockBytes = L * L, D = p.depth();
  const int64_t RB = ceilDiv(j.R, L), CBl = ceilDiv(j.Cl, L);
  auto validRows = [&](int64_t rb) { return std::min(L, j.R - rb * L); };
  auto source = [&](int64_t g, int64_t rb, int64_t cb) {
    return j.src + uint64_t((g * j.gStride + rb * L * j.rStride + cb) * L);
  };
  auto target = [&](int64_t g, int64_t rb, int64_t cb) {
    return j.dst + uint64_t(((g * RB + rb) * CBl + cb) * blockBytes);
  };
  if (j.Cl % L == 0) { // no padding lanes: the rows as they are
    for (int64_t g = 0; g < j.G; ++g)
      for (int64_t rb = 0; rb < RB; ++rb)
        for (int64_t cb = 0; cb < CBl; ++cb) {
          StreamSpec s;
          s.inputs = {source(g, rb, cb)};
          s.output = target(g, rb, cb);
          s.rows = validRows(rb);
          s.groupRows = 1;
          s.inGroupStride = j.rStride;
          s.inPlace = true;
          emitStream(s, ctx, info);
        }
    return;
  }
  // act: D slots of L rows, then D output slots; weight row 0 the identity; acc rows
  // 0..L-1; param rows 0..3 (all lanes; the last channel block's lanes).
  std::vector<uint8_t> identity(size_t(blockBytes), 0);
  for (int64_t i = 0; i < L; ++i)
    identity[size_t(i * L + i)] = 1;
  const quant::Multiplier one = quant::quantizeMultiplier(1.0);
  const int64_t lastLanes = j.Cl - (CBl - 1) * L;
  std::vector<int32_t> params;
  for (const auto& row : {laneRow(L, L, one.M, 0), laneRow(L, L, one.S, 1),
                          laneRow(L, lastLanes, one.M, 0), laneRow(L, lastLanes, one.S, 1)})
    params.insert(params.end(), row.begin(), row.end());
  const uint64_t idC = ctx.consts.add(identity), parC = ctx.consts.addInt32(params);
  bool first = true;
  for (int64_t g = 0; g < j.G; ++g)
    for (int64_t rb = 0; rb < RB; ++rb)
      for (int64_t cb = 0; cb < CBl; ++cb) {
        const int64_t slot = p.stepIndex() % D, in = slot * L, out = (D + slot) * L;
        Step s;
        if (first) {
          for (auto& ld : p.loadRows(Mem::Weight, 0, idC, 1))
            s.loads.push_back(ld);
          for (auto& ld : p.loadRows(Mem::Param, 0, parC, 4))
            s.loads.push_back(ld);
          first = false;
        }
        for (auto& ld : p.loadGroups(Mem::Act, in, source(g, rb, cb), 1, validRows(rb), j.rStride))
          s.loads.push_back(ld);
        Program::GemmLoops gl;
        gl.act = in;
        gl.n0 = L;
        gl.reset = true;
        s.computes.push_back(p.gemm(gl));
        gl.reset = false;
        s.computes.push_back(p.gemm(gl));
        const int64_t par = cb + 1 == CBl ? 2 : 0;
        for (const auto& c : Program::rowChunks(t.requant(), L))
          s.computes.push_back(
              p.requant({out + c[0], 1, c[1]}, {c[0], 1, c[1]}, par, 0, -128, 127, c[1], c[2]));
        for (auto& st : p.storeRows(Mem::Act, out, target(g, rb, cb), L))
          s.stores.push_back(st);
        p.commitStep(std::move(s));
      }
  blockGatherRows(L, D).raise(info);
}

} // namespace ember::npu
