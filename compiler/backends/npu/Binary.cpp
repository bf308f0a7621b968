#include "Binary.h"

#include "ember/isa/roles.h"
#include "ember/quantization/Numerics.h"
#include "ember/support/Error.h"

#include <algorithm>

namespace ember::npu {

bool isChannelVector(const Shape& s, const Shape& full) {
  return full.size() == 4 && s.size() == 4 && s[0] == full[0] && s[1] == full[1] && s[2] == 1 &&
         s[3] == 1 && (full[2] != 1 || full[3] != 1);
}

bool isScalarConstant(const NodeValue& v) {
  const Type& t = v.type();
  return v.node->kind() == NodeKind::Constant && numElements(t.dims) == 1 &&
         t.kind == ElemKind::Int8 && t.quant.scales.size() == 1 && t.quant.zeroPoints.size() == 1;
}

std::string checkBinaryShapes(const Node& n) {
  const NodeValue a = n.input(0), b = n.input(1), y = resultOf(n);
  const Shape &ad = a.dims(), &bd = b.dims(), &yd = y.dims();
  if (ad == yd && isScalarConstant(b))
    return checkActivation(a, "a");
  if (bd == yd && isScalarConstant(a))
    return checkActivation(b, "b");
  for (const auto& r : {checkActivation(a, "a"), checkActivation(b, "b")})
    if (!r.empty())
      return r;
  if (!(ad == bd && ad == yd) && !(ad == yd && isChannelVector(bd, yd)) &&
      !(bd == yd && isChannelVector(ad, yd)))
    return "only equal shapes, a per-channel [N, C, 1, 1] operand or a constant scalar are "
           "supported (operands " +
           shapeToString(ad) + " and " + shapeToString(bd) + ")";
  return "";
}

std::vector<int32_t> qaddParamRows(int64_t L, int32_t M0, int32_t M1, int32_t S, int32_t zp,
                                   int32_t zp0, int32_t zp1, int32_t lo, int32_t hi) {
  std::vector<int32_t> rows(size_t(2 * L), 0);
  const int32_t v[8] = {M0, M1, S, zp, zp0, zp1, lo, hi};
  for (int i = 0; i < 4; ++i) {
    rows[size_t(i)] = v[i];
    rows[size_t(L + i)] = v[4 + i];
  }
  return rows;
}

namespace {

/// How emitBinary lays a layer out: its pipeline depth, and whether the zero-point rows
/// live in acc (each operand then copied to acc before its zero point is subtracted there)
/// rather than in act.
struct BinaryPlan {
  int depth = 0; ///< 0: nothing fits.
  bool zpInAcc = false;
  int64_t act = 0, acc = 0; ///< Rows one row of each operand needs.
};

/// The rows layout (d, zpInAcc) needs: act two zero-point rows (unless in acc) and three
/// rows per buffer; acc the operands' multiplier rows, the zero-point rows when there, and
/// one row of each operand.
BinaryPlan layoutOf(int d, bool zpInAcc, bool scaleOperands) {
  return {d, zpInAcc, (zpInAcc ? 0 : 2) + d * 3, (scaleOperands ? 2 : 0) + (zpInAcc ? 2 : 0) + 2};
}

/// A constant scalar as one row of its code in every lane, in the constants.
DramTensor scalarRow(const NodeValue& v, LayerCtx& ctx) {
  DramTensor d;
  d.zp = zeroPointOf(v);
  d.offset = ctx.consts.add(std::vector<uint8_t>(
      size_t(ctx.t.lanes()), static_cast<uint8_t>(v.node->payload().getAsInt(0))));
  return d;
}

BinaryPlan binaryPlan(const Target& t, int depth, bool scaleOperands) {
  for (int d : {depth, 1})
    for (bool zpInAcc : {false, true}) {
      const BinaryPlan p = layoutOf(d, zpInAcc, scaleOperands);
      if (t.rows(Mem::Act) >= p.act && t.rows(Mem::Acc) >= p.acc)
        return p;
    }
  // Nothing fits: the figures of the single-buffered layout that needs the fewest rows
  // of the SRAM that is short (act: zero points in acc; else in act).
  BinaryPlan p = layoutOf(1, false, scaleOperands);
  if (t.rows(Mem::Act) < p.act)
    p = layoutOf(1, true, scaleOperands);
  p.depth = 0;
  return p;
}

} // namespace

std::string checkBinary(const Target& t, int depth, bool scaleOperands) {
  const BinaryPlan p = binaryPlan(t, depth, scaleOperands);
  if (p.depth > 0)
    return "";
  return "one row of each operand needs " + std::to_string(p.act) + " act rows (has " +
         std::to_string(t.rows(Mem::Act)) + ") and " + std::to_string(p.acc) + " acc rows (has " +
         std::to_string(t.rows(Mem::Acc)) + ") single-buffered";
}

namespace {

/// The operands of a binary layer as emitBinary walks them: `a` the full one, `b` the
/// full, per-channel or constant-scalar one (a row of its code in the constants), and the
/// rows of a that meet each row of b.
struct BinaryOperands {
  NodeValue a, b, y;
  bool scalar = false;  ///< b is a constant scalar.
  bool bcast = false;   ///< b is smaller than a (per channel or scalar).
  bool swapped = false; ///< a is n.input(1): the operands' multipliers swap with them.
  const DramTensor *ta = nullptr, *ty = nullptr;
  DramTensor tb;
  int64_t plane = 1; ///< Rows of a per row of b.
};

/// The operands of binary node `n` (their DRAM tensors resolved in the order a, y, b, so
/// that a constant placed on first use lands where it always did).
BinaryOperands binaryOperands(const Node& n, LayerCtx& ctx) {
  BinaryOperands o;
  o.a = n.input(0);
  o.b = n.input(1);
  if (o.a.dims() != n.resultType(0).dims)
    std::swap(o.a, o.b);
  o.y = resultOf(n);
  o.scalar = isScalarConstant(o.b);
  o.ta = &ctx.tensor(o.a);
  o.ty = &ctx.tensor(o.y);
  o.tb = o.scalar ? scalarRow(o.b, ctx) : ctx.tensor(o.b);
  o.bcast = o.a.dims() != o.b.dims();
  o.plane = o.scalar ? o.ta->rows() : o.bcast ? o.ta->H * o.ta->W : 1;
  o.swapped = !(o.a == n.input(0));
  return o;
}

/// The constants' offsets of a binary layer: act rows zp_a, zp_b (int32 rows when the
/// zero points live in acc); param rows M, S of the requant; with scaled operands acc
/// rows M_a, M_b (the multiplier of the operand in n.input(0) goes with a).
struct BinaryConsts {
  uint64_t zp = 0, q = 0, m = 0;
};

/// Adds the constant rows of a binary layer to the constants (zero points, requant
/// parameters, operand multipliers, in that order).
BinaryConsts binaryConsts(const BinaryOp& op, const BinaryPlan& plan, const BinaryOperands& o,
                          LayerCtx& ctx) {
  const int64_t L = ctx.t.lanes();
  const DramTensor &ta = *o.ta, &tb = o.tb;
  std::vector<uint8_t> zp(size_t(2 * L));
  std::vector<int32_t> q(size_t(2 * L)), m(size_t(2 * L));
  for (int64_t l = 0; l < L; ++l) {
    zp[size_t(l)] = static_cast<uint8_t>(ta.zp);
    zp[size_t(L + l)] = static_cast<uint8_t>(tb.zp);
    q[size_t(l)] = op.requantM;
    q[size_t(L + l)] = op.requantS;
    m[size_t(l)] = o.swapped ? op.Mb : op.Ma;
    m[size_t(L + l)] = o.swapped ? op.Ma : op.Mb;
  }
  std::vector<int32_t> zpRows(size_t(2 * L));
  for (int64_t l = 0; l < L; ++l) {
    zpRows[size_t(l)] = ta.zp;
    zpRows[size_t(L + l)] = tb.zp;
  }
  BinaryConsts c;
  c.zp = plan.zpInAcc ? ctx.consts.addInt32(zpRows) : ctx.consts.add(zp);
  c.q = ctx.consts.addInt32(q);
  c.m = op.scaleOperands ? ctx.consts.addInt32(m) : 0;
  return c;
}

/// A tile of T rows of a with up to B rows of b, each row of b `copies` times in acc.
struct BinaryTile {
  int64_t T = 0, B = 0;
  int64_t copies = 1;
};

/// Whether the combining instruction `vb` can walk a's rows in pairs against two copies
/// of one b row (n0 = 2, a's outer stride 2, b's inner stride 1 and outer stride 0), and
/// the instructions that bring b into acc can write its rows two apart.
bool pairsFit(const Target& t, const isa::InstrDesc& vb) {
  using namespace isa::role;
  if (Target::maxOf(vb, kN0) < 2 || Target::maxOf(vb, kSrc0S1) < 2 ||
      Target::maxOf(vb, kDstS1) < 2 || Target::maxOf(vb, kSrc1S0) < 1)
    return false;
  for (const isa::InstrDesc* d : {&t.vecBinary("sub"), &t.vecBinary("mul"), &t.vecUnary("copy")})
    if (Target::maxOf(*d, kDstS0) < 2 || Target::maxOf(*d, kDstS1) < 2 * Target::maxOf(*d, kN0))
      return false;
  return true;
}

/// The largest tile that fits: act holds D slots of (T a rows, B b rows, T result rows)
/// above actBase; acc T rows of a, then B rows of b (plus a spare row keeping them in
/// different banks) above accBase. A broadcast b (one row meeting many rows of a) is held
/// twice in acc, row k of b at rows 2k and 2k + 1 of its region, when the acc SRAM has
/// two or more banks, the combining instruction can walk pairs and a tile still fits: a's
/// row j then meets the copy j mod 2, which lies in the other bank (the two regions start
/// an odd number of rows apart), so the combining reads never collide (rule V1; with one
/// copy, every other row of a shares the b row's bank).
BinaryTile binaryTile(const Target& t, const BinaryOperands& o, const isa::InstrDesc& vb, int64_t D,
                      int64_t actBase, int64_t accBase) {
  int64_t T = std::min(o.ta->rows(), (t.rows(Mem::Act) - actBase) / (D * 3));
  T = std::min(T, (t.rows(Mem::Acc) - accBase) / 2);
  int64_t B = o.bcast ? std::min(T, T / o.plane + 2) : T;
  const isa::MemoryDesc& acc = t.isa().memory(isa::mem::kAcc);
  const int64_t copies = o.bcast && acc.banks >= 2 && acc.read_ports < 2 && pairsFit(t, vb) ? 2 : 1;
  if (copies == 2) {
    const int64_t T2 = std::min(T, t.rows(Mem::Acc) - accBase - 2 * B - 1);
    if (T2 >= 2)
      return {T2, B, 2};
  }
  T = std::min(T, t.rows(Mem::Acc) - accBase - B - 1);
  if (T < 1) {
    // An acc SRAM without room for the spare row: tiles of one row (T odd needs none).
    T = 1;
    B = 1;
  }
  return {T, B, 1};
}

/// Emits a binary layer step by step: each step loads a tile of a and the rows of b it
/// meets, brings both into acc less their zero points (scaled by their multipliers when
/// asked), combines them, requantizes and stores the result.
class BinaryEmitter {
public:
  BinaryEmitter(const BinaryOp& op, const Node& n, const BinaryPlan& plan, LayerCtx& ctx)
      : op_(op), t_(ctx.t), p_(ctx.prog), plan_(plan), L_(t_.lanes()), D_(p_.depth()),
        o_(binaryOperands(n, ctx)), bd_(quant::activationBounds(n, o_.y.type().quant)),
        c_(binaryConsts(op, plan, o_, ctx)), zpRow_(op.scaleOperands ? 2 : 0),
        accBase_(zpRow_ + (plan.zpInAcc ? 2 : 0)), actBase_(plan.zpInAcc ? 0 : 2),
        tile_(binaryTile(t_, o_, t_.vecBinary(op.combine), D_, actBase_, accBase_)),
        slotRows_(2 * tile_.T + tile_.B), vb_(t_.vecBinary(op.combine)), vs_(t_.vecBinary("sub")),
        vm_(t_.vecBinary("mul")) {}

  LayerInfo run() {
    bool first = true;
    for (int64_t r0 = 0; r0 < o_.ta->rows(); r0 += tile_.T) {
      emitStep(r0, first);
      first = false;
    }
    LayerInfo info;
    info.tiling = "rows/tile=" + std::to_string(tile_.T) +
                  (o_.scalar  ? " scalar b"
                   : o_.bcast ? " per-channel b"
                              : "") +
                  (plan_.zpInAcc ? " zero-points-in-acc" : "");
    info.sram[0] = actBase_ + D_ * slotRows_;
    info.sram[2] = accBase_ + tile_.T + tile_.copies * tile_.B + 1;
    info.sram[3] = 2;
    return info;
  }

private:
  /// The first step's loads of the constant rows: zero points (act or acc), requant
  /// parameters, and the operands' multipliers when scaled.
  void loadConstants(Step& s) const {
    for (auto& in : plan_.zpInAcc ? p_.loadRows(Mem::Acc, zpRow_, c_.zp, 2)
                                  : p_.loadRows(Mem::Act, 0, c_.zp, 2))
      s.loads.push_back(in);
    for (auto& in : p_.loadRows(Mem::Param, 0, c_.q, 2))
      s.loads.push_back(in);
    if (op_.scaleOperands)
      for (auto& in : p_.loadRows(Mem::Acc, 0, c_.m, 2))
        s.loads.push_back(in);
  }

  /// operand - zero point into acc: one vsub from act, or (zero points in acc) a copy to
  /// acc and a vsub there.
  void subtractZp(Step& s, const Program::Walk& dst, const Program::Walk& src,
                  const Program::Walk& zw, int64_t n0, int64_t n1) const {
    if (!plan_.zpInAcc) {
      s.computes.push_back(p_.vecBinary("sub", Mem::Acc, Mem::Act, dst, src, zw, n0, n1));
      return;
    }
    s.computes.push_back(p_.vecUnary("copy", Mem::Acc, Mem::Act, dst, src, n0, n1));
    s.computes.push_back(p_.vecBinary("sub", Mem::Acc, Mem::Acc, dst, dst, zw, n0, n1));
  }

  /// `rows` act rows from `act` into acc rows from `acc`, `step` rows apart, less their
  /// zero point (zero point row `zpIndex` of the two) and times their multiplier (acc row
  /// `zpIndex`) when the operands are scaled. Each instruction's own count fields bound
  /// the chunks (a re-encoded description may give vsub a narrower n0 than vmul).
  void operandIntoAcc(Step& s, int64_t acc, int64_t act, int64_t zpIndex, int64_t rows,
                      int64_t step = 1) const {
    const Program::Walk zw{plan_.zpInAcc ? zpRow_ + zpIndex : zpIndex, 0, 0}, mw{zpIndex, 0, 0};
    const isa::InstrDesc& vc = plan_.zpInAcc ? t_.vecUnary("copy") : vs_;
    for (const auto& c : Program::rowChunks({&vs_, &vc, op_.scaleOperands ? &vm_ : &vs_}, rows)) {
      const Program::Walk dst{acc + c[0] * step, step, c[1] * step};
      subtractZp(s, dst, {act + c[0], 1, c[1]}, zw, c[1], c[2]);
      if (op_.scaleOperands)
        s.computes.push_back(p_.vecBinary("mul", Mem::Acc, Mem::Acc, dst, dst, mw, c[1], c[2]));
    }
  }

  /// Combines rows [r0, r0 + nr) of a (acc rows from accA) with b (acc rows from accB,
  /// holding b's rows from p0) plane segment by plane segment (one b row each when
  /// broadcasting).
  void combine(Step& s, int64_t r0, int64_t nr, int64_t accA, int64_t accB, int64_t p0) const {
    for (int64_t i = 0; i < nr;) {
      const int64_t r = r0 + i;
      const int64_t len = o_.bcast ? std::min(nr - i, (r / o_.plane + 1) * o_.plane - r) : nr - i;
      if (tile_.copies == 2)
        combinePairs(s, i, len, accA, accB + 2 * (r / o_.plane - p0));
      else
        for (const auto& c : Program::rowChunks(vb_, len)) {
          const int64_t at = i + c[0];
          const Program::Walk bw = o_.bcast ? Program::Walk{accB + r / o_.plane - p0, 0, 0}
                                            : Program::Walk{accB + at, 1, c[1]};
          s.computes.push_back(p_.vecBinary(op_.combine, Mem::Acc, Mem::Acc, {accA + at, 1, c[1]},
                                            {accA + at, 1, c[1]}, bw, c[1], c[2]));
        }
      i += len;
    }
  }

  /// Combines a's acc rows [at, at + len) (from accA) with the two copies of one b row
  /// (acc rows bRow, bRow + 1): a's row j with copy j mod 2, which lies in the other bank
  /// (binaryTile). Whole pairs go n0 = 2 at a time; an odd first or last row alone.
  void combinePairs(Step& s, int64_t at, int64_t len, int64_t accA, int64_t bRow) const {
    const int64_t max1 = Target::maxOf(vb_, isa::role::kN1);
    auto emit = [&](int64_t j, int64_t n0, int64_t n1, Program::Walk bw) {
      const Program::Walk aw{accA + j, 1, 2};
      s.computes.push_back(p_.vecBinary(op_.combine, Mem::Acc, Mem::Acc, aw, aw, bw, n0, n1));
    };
    int64_t j = at;
    const int64_t end = at + len;
    if (j % 2 == 1 && j < end) {
      emit(j, 1, 1, {bRow + 1, 0, 0});
      ++j;
    }
    while (end - j >= 2) {
      const int64_t n1 = std::min(max1, (end - j) / 2);
      emit(j, 2, n1, {bRow, 1, 0});
      j += 2 * n1;
    }
    if (j < end)
      emit(j, 1, 1, {bRow, 0, 0});
  }

  /// The step of the tile of a from row r0 (the `first` also loads the constants).
  void emitStep(int64_t r0, bool first) {
    const DramTensor &ta = *o_.ta, &tb = o_.tb, &ty = *o_.ty;
    const int64_t T = tile_.T, B = tile_.B;
    const int64_t nr = std::min(T, ta.rows() - r0);
    const int64_t base = actBase_ + (p_.stepIndex() % D_) * slotRows_;
    const int64_t inA = base, inB = base + T, out = base + T + B;
    // Bank-aware: the b region starts in another acc bank than row i of a (an odd
    // distance when banks are interleaved by row), so the combining reads do not collide.
    const int64_t accA = accBase_, accB = accBase_ + T + (T % 2 == 0 ? 1 : 0);
    const int64_t p0 = r0 / o_.plane, p1 = (r0 + nr - 1) / o_.plane; // b rows [p0, p1]
    Step s;
    if (first)
      loadConstants(s);
    for (auto& in : p_.loadRows(Mem::Act, inA, ta.offset + uint64_t(r0 * L_), nr))
      s.loads.push_back(in);
    for (auto& in : p_.loadRows(Mem::Act, inB, tb.offset + uint64_t(p0 * L_), p1 - p0 + 1))
      s.loads.push_back(in);
    for (int64_t k = 0; k < tile_.copies; ++k)
      operandIntoAcc(s, accB + k, inB, 1, p1 - p0 + 1, tile_.copies);
    operandIntoAcc(s, accA, inA, 0, nr);
    combine(s, r0, nr, accA, accB, p0);
    for (const auto& c : Program::rowChunks(t_.requant(), nr))
      s.computes.push_back(p_.requant({out + c[0], 1, c[1]}, {accA + c[0], 1, c[1]}, 0, ty.zp,
                                      bd_.lo, bd_.hi, c[1], c[2]));
    for (auto& in : p_.storeRows(Mem::Act, out, ty.offset + uint64_t(r0 * L_), nr))
      s.stores.push_back(in);
    p_.commitStep(std::move(s));
  }

  const BinaryOp& op_;
  const Target& t_;
  Program& p_;
  const BinaryPlan plan_;
  const int64_t L_, D_;
  const BinaryOperands o_;
  const quant::Bounds bd_;
  const BinaryConsts c_;
  /// Acc rows: [M_a, M_b,] [zp_a, zp_b (from zpRow_),] then the tile's; act rows: [zp_a,
  /// zp_b,] then D slots of slotRows_.
  const int64_t zpRow_, accBase_, actBase_;
  const BinaryTile tile_;
  const int64_t slotRows_;
  const isa::InstrDesc &vb_, &vs_, &vm_;
};

} // namespace

LayerInfo emitBinary(const BinaryOp& op, const Node& n, LayerCtx& ctx) {
  Program& p = ctx.prog;
  if (auto why = checkBinary(ctx.t, p.depth(), op.scaleOperands); !why.empty())
    throw Error("NPU backend", "layer '" + n.name() + "': " + why);
  const BinaryPlan plan = binaryPlan(ctx.t, p.depth(), op.scaleOperands);
  if (plan.depth < p.depth())
    p.setLayerDepth(plan.depth); // no room for two buffers: one
  return BinaryEmitter(op, n, plan, ctx).run();
}

} // namespace ember::npu
