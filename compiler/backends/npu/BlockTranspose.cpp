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

#include "ember/graph/AttrViews.h"
#include "ember/isa/roles.h"
#include "ember/quantization/Numerics.h"

namespace ember::npu {

std::vector<int32_t> laneRow(int64_t L, int64_t valid, int32_t v, int32_t rest) {
  std::vector<int32_t> r(size_t(L), rest);
  std::fill(r.begin(), r.begin() + valid, v);
  return r;
}

namespace {

/// Byte offset of the L rows of block (g, rb, cb) when blocks lie one after the other in
/// (g, rb, cb) order from `base` (the gather's scratch; the gather's weight blocks).
uint64_t blockAt(const BlockTransposeJob& j, int64_t L, uint64_t base, int64_t g, int64_t rb,
                 int64_t cb) {
  return base + uint64_t(((g * ceilDiv(j.R, L) + rb) * ceilDiv(j.Cl, L) + cb) * L * L);
}

/// Calls f(g, rb, cb) for every block of the job, in (g, rb, cb) order.
template <typename F> void forEachBlock(const BlockTransposeJob& j, int64_t L, F f) {
  for (int64_t g = 0; g < j.G; ++g)
    for (int64_t rb = 0; rb < ceilDiv(j.R, L); ++rb)
      for (int64_t cb = 0; cb < ceilDiv(j.Cl, L); ++cb)
        f(g, rb, cb);
}

/// Rows r of block rb that exist (L but for a last, partial block).
int64_t validRows(const BlockTransposeJob& j, int64_t L, int64_t rb) {
  return std::min(L, j.R - rb * L);
}

/// DRAM byte of row rb * L of group g, channel block cb.
uint64_t sourceAt(const BlockTransposeJob& j, int64_t L, int64_t g, int64_t rb, int64_t cb) {
  return j.src + uint64_t((g * j.gStride + rb * L * j.rStride + cb) * L);
}

/// Each block's valid rows by DMA to its L consecutive rows at blockAt(base).
void gatherRows(const BlockTransposeJob& j, uint64_t base, LayerCtx& ctx, LayerInfo& info) {
  const int64_t L = ctx.t.lanes();
  forEachBlock(j, L, [&](int64_t g, int64_t rb, int64_t cb) {
    StreamSpec s;
    s.inputs = {sourceAt(j, L, g, rb, cb)};
    s.output = blockAt(j, L, base, g, rb, cb);
    s.rows = validRows(j, L, rb);
    s.groupRows = 1;
    s.inGroupStride = j.rStride;
    s.inPlace = true;
    emitStream(s, ctx, info);
  });
}

/// The constants of a pass through the array: an identity block (as L act rows or one
/// weight row) and two requantize pairs, multiplier 1 on every lane, then on the lanes
/// below `lastValid` only (0 beyond: those lanes come out zero).
struct CopyConsts {
  uint64_t identity = 0, params = 0;
};

CopyConsts copyConsts(LayerCtx& ctx, int64_t lastValid) {
  const int64_t L = ctx.t.lanes();
  std::vector<uint8_t> identity(size_t(L * L), 0);
  for (int64_t i = 0; i < L; ++i)
    identity[size_t(i * L + i)] = 1;
  const quant::Multiplier one = quant::quantizeMultiplier(1.0);
  std::vector<int32_t> params;
  for (const auto& row : {laneRow(L, L, one.M, 0), laneRow(L, L, one.S, 1),
                          laneRow(L, lastValid, one.M, 0), laneRow(L, lastValid, one.S, 1)})
    params.insert(params.end(), row.begin(), row.end());
  return {ctx.consts.add(identity), ctx.consts.addInt32(params)};
}

/// One block through the array: L act rows from `act` against weight block `wgt` (one of
/// them the identity) into accumulators 0..L-1, requantized with param pair `par` into
/// act rows `out`.
void copyThroughArray(const Program& p, int64_t act, int64_t wgt, int64_t par, int64_t out,
                      Step& s) {
  Program::GemmLoops g;
  g.act = act;
  g.wgt = wgt;
  g.n0 = p.target().lanes();
  g.reset = true;
  s.computes.push_back(p.gemm(g));
  g.reset = false;
  s.computes.push_back(p.gemm(g));
  for (const auto& c : Program::rowChunks(p.target().requant(), g.n0))
    s.computes.push_back(
        p.requant({out + c[0], 1, c[1]}, {c[0], 1, c[1]}, par, 0, -128, 127, c[1], c[2]));
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
  const std::vector<int64_t> perm = transposeOf(n.attrs()).perm;
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
  Program& p = ctx.prog;
  const int64_t L = ctx.t.lanes(), D = p.depth(), RB = ceilDiv(j.R, L), CBl = ceilDiv(j.Cl, L);
  gatherRows(j, scratch, ctx, info);
  p.barrier();
  // act: the identity, then D output slots; weight: D slots; the last row block's lanes
  // beyond R masked.
  const int64_t lastValid = validRows(j, L, RB - 1);
  const CopyConsts cc = copyConsts(ctx, lastValid);
  bool first = true;
  forEachBlock(j, L, [&](int64_t g, int64_t rb, int64_t cb) {
    const int64_t slot = p.stepIndex() % D, out = L + slot * L;
    Step s;
    if (first) {
      for (auto& in : p.loadRows(Mem::Act, 0, cc.identity, L))
        s.loads.push_back(in);
      for (auto& in : p.loadRows(Mem::Param, 0, cc.params, 4))
        s.loads.push_back(in);
      first = false;
    }
    for (auto& in : p.loadRows(Mem::Weight, slot, blockAt(j, L, scratch, g, rb, cb), 1))
      s.loads.push_back(in);
    copyThroughArray(p, 0, slot, rb + 1 == RB ? 2 : 0, out, s);
    if (j.toWeights) {
      const uint64_t at = j.dst + uint64_t(((g * CBl + cb) * RB + rb) * L * L);
      for (auto& in : p.storeRows(Mem::Act, out, at, L))
        s.stores.push_back(in);
    } else { // rows (g, cb * L + p, rb) of [G, Cl, R], p below the valid channels
      const uint64_t at = j.dst + uint64_t(((g * j.Cl + cb * L) * RB + rb) * L);
      for (auto& in : p.storeGroups(Mem::Act, out, at, 1, std::min(L, j.Cl - cb * L), RB))
        s.stores.push_back(in);
    }
    p.commitStep(std::move(s));
  });
  blockTransposeRows(L, D).raise(info);
}

void emitBlockGather(const BlockTransposeJob& j, LayerCtx& ctx, LayerInfo& info) {
  Program& p = ctx.prog;
  const int64_t L = ctx.t.lanes(), D = p.depth(), CBl = ceilDiv(j.Cl, L);
  if (j.Cl % L == 0) { // no padding lanes: the rows as they are
    gatherRows(j, j.dst, ctx, info);
    return;
  }
  // act: D input slots, then D output slots; weight row 0 the identity; the last channel
  // block's lanes beyond Cl masked.
  const CopyConsts cc = copyConsts(ctx, j.Cl - (CBl - 1) * L);
  bool first = true;
  forEachBlock(j, L, [&](int64_t g, int64_t rb, int64_t cb) {
    const int64_t slot = p.stepIndex() % D, in = slot * L, out = (D + slot) * L;
    Step s;
    if (first) {
      for (auto& ld : p.loadRows(Mem::Weight, 0, cc.identity, 1))
        s.loads.push_back(ld);
      for (auto& ld : p.loadRows(Mem::Param, 0, cc.params, 4))
        s.loads.push_back(ld);
      first = false;
    }
    for (auto& ld :
         p.loadGroups(Mem::Act, in, sourceAt(j, L, g, rb, cb), 1, validRows(j, L, rb), j.rStride))
      s.loads.push_back(ld);
    copyThroughArray(p, in, 0, cb + 1 == CBl ? 2 : 0, out, s);
    for (auto& st : p.storeRows(Mem::Act, out, blockAt(j, L, j.dst, g, rb, cb), L))
      s.stores.push_back(st);
    p.commitStep(std::move(s));
  });
  blockGatherRows(L, D).raise(info);
}

} // namespace ember::npu
