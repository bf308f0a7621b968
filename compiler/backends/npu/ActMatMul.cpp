// MatMul of two int8 activations, y[g] = a[g] x b[g] (a [G, M, C], b [G, C, K]; rank 2
// is G = 1), as docs/numerics.md section 4.1 defines it:
//
//   acc[m][k] = sum_c (a[m][c] - zp_a) (b[c][k] - zp_b)
//             = sum_c a b  +  sum_c a (-zp_b)  +  sum_c (-zp_a) b  +  C zp_a zp_b
//
// exact modulo 2^32 like the interpreter's expansion. The array holds weights W[k][c]
// (byte k * L + c of a block), so b must become weight blocks: block (g, kb, cb) holds
// b[g][cb * L + c][kb * L + k] at byte k * L + c, the transpose of the L rows of b it
// covers, which BlockTranspose.h makes (into a DRAM scratch; lanes of c beyond C zero).
// Then per (g, tile of tm rows of a, output block kb) one step loads a's tile
// (block-major, so one gemm walks its input blocks, up to the n2 field's limit) and the
// CB weight blocks of (g, kb), starts the accumulators from C zp_a zp_b, and adds the
// three sums: a x weights, a x a constant block of -zp_b (weight rows 0 and 1: full, and
// the last input block's when C is not a multiple of L), and a constant act row of -zp_a
// walked with stride 0 x weights. -zp = 128 does not fit int8 and is done as two gemms of 64.
// Requantize (s_a s_b / s_y, per tensor; multiplier 0 on the last block's lanes beyond K) and a
// strided store of the tile's rows of block kb.
#include "ActMatMul.h"
#include "BlockTranspose.h"

#include "ember/isa/roles.h"
#include "ember/quantization/Numerics.h"
#include "ember/support/Error.h"

#include <algorithm>

namespace ember::npu {

namespace {

/// The operands' extents: G batches of [M, C] x [C, K]; CB input and KB output blocks.
struct MM {
  int64_t G = 1, M = 0, C = 0, K = 0, CB = 0, KB = 0;
  int64_t blocks() const { return G * KB * CB; }
  /// Lanes of c in input block cb (L but for a last, partial block).
  int64_t valid(int64_t cb, int64_t L) const { return std::min(L, C - cb * L); }
  bool partialLast(int64_t L) const { return C % L != 0; }
};

MM dimsOf(const Node& n, int64_t L) {
  const Shape &a = n.input(0).dims(), &b = n.input(1).dims();
  const size_t r = a.size();
  MM d;
  d.G = r == 3 ? a[0] : 1;
  d.M = a[r - 2];
  d.C = a[r - 1];
  d.K = b[r - 1];
  d.CB = ceilDiv(d.C, L);
  d.KB = ceilDiv(d.K, L);
  return d;
}

/// -zp as `count` equal int8 gemm operands `value` (-zp in [-127, 128]): none for 0, two
/// of 64 for 128.
struct ZeroPointTerm {
  int32_t value = 0;
  int count = 0;
};

ZeroPointTerm zeroPointTerm(int32_t zp) {
  if (zp == 0)
    return {};
  if (-zp > 127)
    return {-zp / 2, 2};
  return {-zp, 1};
}

/// A gemm's share of the input blocks: [cb, cb + nb), and the row of the zero-point
/// constants it uses (1 for the partial last block, else 0).
struct Run {
  int64_t cb, nb, shape;
};

/// The input blocks in runs of at most `n2max` (one gemm each); with `splitLast`, a
/// partial last block is a run of its own (its constants differ).
std::vector<Run> runsOf(const MM& d, int64_t L, int64_t n2max, bool splitLast) {
  const int64_t full = splitLast && d.partialLast(L) ? d.CB - 1 : d.CB;
  std::vector<Run> out;
  for (int64_t cb = 0; cb < full; cb += n2max)
    out.push_back({cb, std::min(n2max, full - cb), 0});
  if (full < d.CB)
    out.push_back({full, 1, 1});
  return out;
}

/// SRAM rows the product needs at depth D with tiles of tm rows of a (see the file
/// comment): act the -zp_a rows and D slots of (a tile, output tile); weight the -zp_b
/// blocks and D slots of CB blocks; acc the bias row and the tile's accumulators; param
/// two requantization pairs (all lanes; the last output block's, zero beyond K).
SramRows multiplyNeeds(const MM& d, int64_t L, int64_t tm, int64_t D) {
  const int64_t shapes = d.partialLast(L) ? 2 : 1;
  return {shapes + D * tm * (d.CB + 1), shapes + D * d.CB, 1 + tm, 4};
}

struct Plan {
  int depth = 0; ///< 0: nothing fits.
  int64_t tm = 0;
};

/// The most rows of a per tile that the gemm's and store's count fields take.
int64_t tileRowsMax(const Target& t) {
  return std::min({Target::maxOf(t.gemm(), isa::role::kN0),
                   Target::maxOf(t.dmaLoad(), isa::role::kSize1),
                   Target::maxOf(t.dmaStore(), isa::role::kSize1)});
}

Plan planOf(const MM& d, const Target& t, int depth) {
  const int64_t L = t.lanes();
  for (int D : {depth, 1}) {
    if (!checkBlockTranspose(t, D, true).empty())
      continue;
    for (int64_t tm = std::min(d.M, tileRowsMax(t)); tm >= 1; --tm)
      if (multiplyNeeds(d, L, tm, D).fits(t))
        return {D, tm};
  }
  return {};
}

/// One gemm of n0 rows from act row `act` (step actS0) into acc rows 1.., over n2 weight
/// blocks from `wgt` (act step actS2, weight step wgtS2).
isa::Instruction gemm(const Program& p, int64_t act, int64_t actS0, int64_t actS2, int64_t wgt,
                      int64_t wgtS2, int64_t n0, int64_t n2) {
  Program::GemmLoops g;
  g.act = act;
  g.actS0 = actS0;
  g.actS2 = actS2;
  g.wgt = wgt;
  g.wgtS2 = wgtS2;
  g.acc = 1;
  g.n0 = n0;
  g.n2 = n2;
  return p.gemm(g);
}

/// Constant rows of the multiply phase: a block of -zp_b parts (full, last), an act row of
/// -zp_a parts (full, last), the bias row and the requantization rows.
struct MultiplyConsts {
  uint64_t zBlocks = 0, eRows = 0, bias = 0, params = 0;
  ZeroPointTerm zb, za; ///< The terms a x (-zp_b) and (-zp_a) x b.
  int64_t shapes = 1;   ///< Rows of each constant: 2 when the last input block is partial.
};

MultiplyConsts multiplyConsts(const Node& n, const MM& d, LayerCtx& ctx) {
  const int64_t L = ctx.t.lanes();
  const NodeValue a = n.input(0), b = n.input(1), y = resultOf(n);
  const int32_t za = zeroPointOf(a), zb = zeroPointOf(b);
  MultiplyConsts c;
  c.shapes = d.partialLast(L) ? 2 : 1;
  c.zb = zeroPointTerm(zb);
  c.za = zeroPointTerm(za);
  std::vector<uint8_t> z, e;
  for (int64_t sh = 0; sh < c.shapes; ++sh) {
    const int64_t valid = sh == 0 ? L : d.valid(d.CB - 1, L);
    for (int64_t k = 0; k < L; ++k)
      for (int64_t i = 0; i < L; ++i)
        z.push_back(static_cast<uint8_t>(i < valid ? c.zb.value : 0));
    for (int64_t i = 0; i < L; ++i)
      e.push_back(static_cast<uint8_t>(i < valid ? c.za.value : 0));
  }
  c.zBlocks = ctx.consts.add(z);
  c.eRows = ctx.consts.add(e);
  const uint32_t bias = uint32_t(d.C) * uint32_t(za) * uint32_t(zb); // wraps like int32
  c.bias = ctx.consts.addInt32(laneRow(L, L, static_cast<int32_t>(bias), 0));
  const quant::Multiplier m = quant::productMultiplier(scaleOf(a), scaleOf(b), scaleOf(y));
  const int64_t lastK = d.K - (d.KB - 1) * L; // lanes of the last output block
  std::vector<int32_t> par;
  for (const auto& row : {laneRow(L, L, m.M, 0), laneRow(L, L, m.S, 1), laneRow(L, lastK, m.M, 0),
                          laneRow(L, lastK, m.S, 1)})
    par.insert(par.end(), row.begin(), row.end());
  c.params = ctx.consts.addInt32(par);
  return c;
}

/// The product itself (see the file comment), from the weight blocks at `weights`.
void multiply(const Node& n, const MM& d, const Plan& plan, uint64_t weights, LayerCtx& ctx) {
  const Target& t = ctx.t;
  Program& p = ctx.prog;
  const int64_t L = t.lanes(), D = p.depth(), blockBytes = L * L, tm = plan.tm;
  const DramTensor &A = ctx.tensor(n.input(0)), &Y = ctx.tensor(resultOf(n));
  const MultiplyConsts c = multiplyConsts(n, d, ctx);
  const quant::Bounds bd = quant::activationBounds(n, resultOf(n).type().quant);
  const int64_t n2max = Target::maxOf(t.gemm(), isa::role::kN2);
  const std::vector<Run> all = runsOf(d, L, n2max, false), split = runsOf(d, L, n2max, true);
  const int64_t size2 = Target::maxOf(t.dmaLoad(), isa::role::kSize2);
  const bool boxed = d.CB <= Target::maxOf(t.dmaLoad(), isa::role::kStride1);
  const int64_t slotRows = tm * (d.CB + 1);
  std::vector<std::pair<int64_t, int64_t>> holds(size_t(D), {-1, -1}); // (g, m0) per slot
  bool first = true;
  for (int64_t g = 0; g < d.G; ++g)
    for (int64_t m0 = 0; m0 < d.M; m0 += tm)
      for (int64_t kb = 0; kb < d.KB; ++kb) {
        const int64_t mt = std::min(tm, d.M - m0), slot = p.stepIndex() % D;
        const int64_t aAddr = c.shapes + slot * slotRows, oAddr = aAddr + tm * d.CB;
        const int64_t wAddr = c.shapes + slot * d.CB;
        Step s;
        if (first) {
          for (auto& in : p.loadRows(Mem::Weight, 0, c.zBlocks, c.shapes))
            s.loads.push_back(in);
          for (auto& in : p.loadRows(Mem::Act, 0, c.eRows, c.shapes))
            s.loads.push_back(in);
          for (auto& in : p.loadRows(Mem::Acc, 0, c.bias, 1))
            s.loads.push_back(in);
          for (auto& in : p.loadRows(Mem::Param, 0, c.params, 4))
            s.loads.push_back(in);
          first = false;
        }
        // a's tile block-major (row cb * mt + m): rows m are CB apart in DRAM; one 3-D
        // load per size2 blocks, or per block when the stride field is too narrow.
        if (holds[size_t(slot)] != std::make_pair(g, m0)) {
          const uint64_t at = A.offset + uint64_t((g * d.M + m0) * d.CB * L);
          for (int64_t cb0 = 0; cb0 < d.CB; cb0 += boxed ? size2 : 1) {
            if (boxed)
              s.loads.push_back(p.dmaLoad(Mem::Act, aAddr + cb0 * mt, at + uint64_t(cb0 * L), 1, mt,
                                          std::min(size2, d.CB - cb0), d.CB, 1));
            else
              for (auto& in :
                   p.loadGroups(Mem::Act, aAddr + cb0 * mt, at + uint64_t(cb0 * L), 1, mt, d.CB))
                s.loads.push_back(in);
          }
          holds[size_t(slot)] = {g, m0};
        }
        for (auto& in : p.loadRows(Mem::Weight, wAddr,
                                   weights + uint64_t((g * d.KB + kb) * d.CB * blockBytes), d.CB))
          s.loads.push_back(in);
        for (const auto& ch : Program::rowChunks(t.vecUnary("copy"), mt))
          s.computes.push_back(p.vecUnary("copy", Mem::Acc, Mem::Acc, {1 + ch[0], 1, ch[1]},
                                          {0, 0, 0}, ch[1], ch[2]));
        for (const Run& r : all) // a x b
          s.computes.push_back(gemm(p, aAddr + r.cb * mt, 1, mt, wAddr + r.cb, 1, mt, r.nb));
        for (int i = 0; i < c.zb.count; ++i) // a x (-zp_b)
          for (const Run& r : split)
            s.computes.push_back(gemm(p, aAddr + r.cb * mt, 1, mt, r.shape, 0, mt, r.nb));
        for (int i = 0; i < c.za.count; ++i) // (-zp_a) x b
          for (const Run& r : split)
            s.computes.push_back(gemm(p, r.shape, 0, 0, wAddr + r.cb, 1, mt, r.nb));
        const int64_t par = kb + 1 == d.KB ? 2 : 0; // the last block's lanes beyond K: zero
        for (const auto& ch : Program::rowChunks(t.requant(), mt))
          s.computes.push_back(p.requant({oAddr + ch[0], 1, ch[1]}, {1 + ch[0], 1, ch[1]}, par,
                                         Y.zp, bd.lo, bd.hi, ch[1], ch[2]));
        for (auto& in :
             p.storeGroups(Mem::Act, oAddr, Y.offset + uint64_t(((g * d.M + m0) * d.KB + kb) * L),
                           1, mt, d.KB))
          s.stores.push_back(in);
        p.commitStep(std::move(s));
      }
}

/// b's weight blocks by the array's block transposition (BlockTranspose.h) into
/// `weights`, through the `gathered` scratch.
void emitTransposedWeights(const Node& n, const MM& d, uint64_t gathered, uint64_t weights,
                           LayerCtx& ctx, LayerInfo& info) {
  BlockTransposeJob bt;
  bt.G = d.G;
  bt.R = d.C;
  bt.Cl = d.K;
  bt.src = ctx.tensor(n.input(1)).offset;
  bt.gStride = d.C * d.KB;
  bt.rStride = d.KB;
  bt.toWeights = true;
  bt.dst = weights;
  emitBlockTranspose(bt, gathered, ctx, info);
}

} // namespace

bool isActMatMul(const Node& n) {
  return n.kind() == NodeKind::MatMul && n.input(1).node->kind() != NodeKind::Constant;
}

std::string checkActMatMul(const Node& n, const Target& t) {
  for (const auto& r : {checkActivation(n.input(0), "A"), checkActivation(n.input(1), "B"),
                        checkActivation(resultOf(n), "the result")})
    if (!r.empty())
      return r;
  const Shape &a = n.input(0).dims(), &b = n.input(1).dims();
  // The requantization multiplier exists (s_a s_b / s_y below 2^30 and finite).
  quant::productMultiplier(scaleOf(n.input(0)), scaleOf(n.input(1)), scaleOf(resultOf(n)));
  if (a.size() != b.size() || (a.size() == 3 && a[0] != b[0]) || a.size() == 4)
    return "a MatMul of two activations runs on the NPU for [M, C] x [C, K] and [G, M, C] x "
           "[G, C, K] (operands " +
           shapeToString(a) + " and " + shapeToString(b) + ")";
  const MM d = dimsOf(n, t.lanes());
  if (planOf(d, t, 2).depth > 0)
    return "";
  if (auto why = checkBlockTranspose(t, 1, true); !why.empty())
    return "a MatMul of two activations: b's blocks cannot be transposed: " + why;
  return "a MatMul of two activations does not fit the SRAMs single-buffered: the product "
         "with tiles of one row of a needs " +
         multiplyNeeds(d, t.lanes(), 1, 1).figures(t);
}

uint64_t actMatMulTempBytes(const Node& n, const Target& t) {
  const int64_t L = t.lanes();
  return uint64_t(2 * dimsOf(n, L).blocks() * L * L);
}

LayerInfo emitActMatMul(const Node& n, LayerCtx& ctx) {
  const Target& t = ctx.t;
  Program& p = ctx.prog;
  const int64_t L = t.lanes();
  const MM d = dimsOf(n, L);
  const Plan plan = planOf(d, t, p.depth());
  if (plan.depth == 0)
    throw Error("NPU backend", "layer '" + n.name() + "': " + checkActMatMul(n, t));
  if (plan.depth < p.depth())
    p.setLayerDepth(plan.depth);
  const uint64_t gathered = ctx.temp, weights = ctx.temp + uint64_t(d.blocks() * L * L);
  LayerInfo info;
  const Node* tr = n.input(1).node;
  if (ctx.absorbed && ctx.absorbed->count(tr)) {
    // b = Transpose(X): the weight blocks are X's own rows (Compile.cpp absorbs the
    // Transpose), gathered in one pass.
    BlockTransposeJob bg = *transposeJobOf(*tr, L);
    bg.src = ctx.tensor(tr->input(0)).offset;
    bg.toWeights = true;
    bg.dst = weights;
    emitBlockGather(bg, ctx, info);
    info.tiling = "b's blocks gathered from its transpose's input";
  } else {
    emitTransposedWeights(n, d, gathered, weights, ctx, info);
    info.tiling = "b as weights (" + std::to_string(d.blocks()) + " blocks transposed)";
  }
  p.barrier();
  multiply(n, d, plan, weights, ctx);
  multiplyNeeds(d, L, plan.tm, p.depth()).raise(info);
  info.macs = d.G * d.M * d.C * d.K;
  info.tiling += ", rows/tile=" + std::to_string(plan.tm);
  return info;
}

} // namespace ember::npu
