#include "Binary.h"

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

LayerInfo emitBinary(const BinaryOp& op, const Node& n, LayerCtx& ctx) {
  const Target& t = ctx.t;
  Program& p = ctx.prog;
  if (auto why = checkBinary(t, p.depth(), op.scaleOperands); !why.empty())
    throw Error("NPU backend", "layer '" + n.name() + "': " + why);
  const BinaryPlan plan = binaryPlan(t, p.depth(), op.scaleOperands);
  if (plan.depth < p.depth())
    p.setLayerDepth(plan.depth); // no room for two buffers: one
  const int64_t L = t.lanes(), D = p.depth();
  // `a` is the full operand, `b` the full or per-channel one.
  NodeValue a = n.input(0), b = n.input(1);
  if (a.dims() != n.resultType(0).dims)
    std::swap(a, b);
  const NodeValue y = resultOf(n);
  const bool scalar = isScalarConstant(b);
  const DramTensor &ta = ctx.tensor(a), &ty = ctx.tensor(y);
  const DramTensor tb = scalar ? scalarRow(b, ctx) : ctx.tensor(b);
  const bool bcast = a.dims() != b.dims();
  // Rows of a per row of b.
  const int64_t plane = scalar ? ta.rows() : bcast ? ta.H * ta.W : 1;
  const quant::Bounds bd = quant::activationBounds(n, y.type().quant);
  // Constants: act rows zp_a, zp_b; param rows M, S of the requant; with scaled operands
  // acc rows M_a, M_b (the operand in n.input(0)'s multiplier goes with a).
  const bool swapped = !(a == n.input(0));
  std::vector<uint8_t> zp(size_t(2 * L));
  std::vector<int32_t> q(size_t(2 * L)), m(size_t(2 * L));
  for (int64_t l = 0; l < L; ++l) {
    zp[size_t(l)] = static_cast<uint8_t>(ta.zp);
    zp[size_t(L + l)] = static_cast<uint8_t>(tb.zp);
    q[size_t(l)] = op.requantM;
    q[size_t(L + l)] = op.requantS;
    m[size_t(l)] = swapped ? op.Mb : op.Ma;
    m[size_t(L + l)] = swapped ? op.Ma : op.Mb;
  }
  std::vector<int32_t> zpRows(size_t(2 * L));
  for (int64_t l = 0; l < L; ++l) {
    zpRows[size_t(l)] = ta.zp;
    zpRows[size_t(L + l)] = tb.zp;
  }
  const uint64_t zpC = plan.zpInAcc ? ctx.consts.addInt32(zpRows) : ctx.consts.add(zp);
  const uint64_t qC = ctx.consts.addInt32(q);
  const uint64_t mC = op.scaleOperands ? ctx.consts.addInt32(m) : 0;
  const int64_t zpRow = op.scaleOperands ? 2 : 0; // the acc zero-point rows, with zpInAcc
  const int64_t accBase = zpRow + (plan.zpInAcc ? 2 : 0), actBase = plan.zpInAcc ? 0 : 2;
  // Tile of T rows of a with up to B rows of b; act: 2 zero-point rows (or none, with
  // them in acc), then D slots of (T a rows, B b rows, T result rows); acc: [M_a, M_b,]
  // [zp_a, zp_b,] T rows (a) then B rows (b).
  int64_t T = std::min(ta.rows(), (t.rows(Mem::Act) - actBase) / (D * 3));
  T = std::min(T, (t.rows(Mem::Acc) - accBase) / 2);
  int64_t B = bcast ? std::min(T, T / plane + 2) : T;
  T = std::min(T, t.rows(Mem::Acc) - accBase - B - 1);
  if (T < 1) {
    // An acc SRAM without room for the spare row: tiles of one row (T odd needs none).
    T = 1;
    B = 1;
  }
  const int64_t slotRows = 2 * T + B;
  // Each instruction's own count fields bound its chunks (a re-encoded description may
  // give vsub a narrower n0 than vmul).
  const isa::InstrDesc &vb = t.vecBinary(op.combine), &vs = t.vecBinary("sub"),
                       &vm = t.vecBinary("mul");
  const Program::Walk zA{plan.zpInAcc ? zpRow : 0, 0, 0}, zB{plan.zpInAcc ? zpRow + 1 : 1, 0, 0},
      mA{0, 0, 0}, mB{1, 0, 0};
  // operand - zero point into acc: one vsub from act, or (zero points in acc) a copy to
  // acc and a vsub there.
  auto subtractZp = [&](Step& s, const Program::Walk& dst, const Program::Walk& src,
                        const Program::Walk& zw, int64_t n0, int64_t n1) {
    if (!plan.zpInAcc) {
      s.computes.push_back(p.vecBinary("sub", Mem::Acc, Mem::Act, dst, src, zw, n0, n1));
      return;
    }
    s.computes.push_back(p.vecUnary("copy", Mem::Acc, Mem::Act, dst, src, n0, n1));
    s.computes.push_back(p.vecBinary("sub", Mem::Acc, Mem::Acc, dst, dst, zw, n0, n1));
  };
  bool first = true;
  for (int64_t r0 = 0; r0 < ta.rows(); r0 += T) {
    const int64_t nr = std::min(T, ta.rows() - r0);
    const int64_t base = actBase + (p.stepIndex() % D) * slotRows;
    const int64_t inA = base, inB = base + T, out = base + T + B;
    // Bank-aware: the b region starts in another acc bank than row i of a (an odd
    // distance when banks are interleaved by row), so the combining reads do not collide.
    const int64_t accA = accBase, accB = accBase + T + (T % 2 == 0 ? 1 : 0);
    const int64_t p0 = r0 / plane, p1 = (r0 + nr - 1) / plane; // b rows [p0, p1]
    Step s;
    if (first) {
      for (auto& in :
           plan.zpInAcc ? p.loadRows(Mem::Acc, zpRow, zpC, 2) : p.loadRows(Mem::Act, 0, zpC, 2))
        s.loads.push_back(in);
      for (auto& in : p.loadRows(Mem::Param, 0, qC, 2))
        s.loads.push_back(in);
      if (op.scaleOperands)
        for (auto& in : p.loadRows(Mem::Acc, 0, mC, 2))
          s.loads.push_back(in);
      first = false;
    }
    for (auto& in : p.loadRows(Mem::Act, inA, ta.offset + uint64_t(r0 * L), nr))
      s.loads.push_back(in);
    for (auto& in : p.loadRows(Mem::Act, inB, tb.offset + uint64_t(p0 * L), p1 - p0 + 1))
      s.loads.push_back(in);
    const isa::InstrDesc& vc = plan.zpInAcc ? t.vecUnary("copy") : vs;
    for (const auto& c :
         Program::rowChunks({&vs, &vc, op.scaleOperands ? &vm : &vs}, p1 - p0 + 1)) {
      const Program::Walk dst{accB + c[0], 1, c[1]};
      subtractZp(s, dst, {inB + c[0], 1, c[1]}, zB, c[1], c[2]);
      if (op.scaleOperands)
        s.computes.push_back(p.vecBinary("mul", Mem::Acc, Mem::Acc, dst, dst, mB, c[1], c[2]));
    }
    for (const auto& c : Program::rowChunks({&vs, &vc, op.scaleOperands ? &vm : &vs}, nr)) {
      const Program::Walk dst{accA + c[0], 1, c[1]};
      subtractZp(s, dst, {inA + c[0], 1, c[1]}, zA, c[1], c[2]);
      if (op.scaleOperands)
        s.computes.push_back(p.vecBinary("mul", Mem::Acc, Mem::Acc, dst, dst, mA, c[1], c[2]));
    }
    // Combine plane segment by plane segment (one b row each when broadcasting).
    for (int64_t i = 0; i < nr;) {
      const int64_t r = r0 + i;
      const int64_t len = bcast ? std::min(nr - i, (r / plane + 1) * plane - r) : nr - i;
      for (const auto& c : Program::rowChunks(vb, len)) {
        const int64_t o = i + c[0];
        const Program::Walk bw =
            bcast ? Program::Walk{accB + r / plane - p0, 0, 0} : Program::Walk{accB + o, 1, c[1]};
        s.computes.push_back(p.vecBinary(op.combine, Mem::Acc, Mem::Acc, {accA + o, 1, c[1]},
                                         {accA + o, 1, c[1]}, bw, c[1], c[2]));
      }
      i += len;
    }
    for (const auto& c : Program::rowChunks(t.requant(), nr))
      s.computes.push_back(p.requant({out + c[0], 1, c[1]}, {accA + c[0], 1, c[1]}, 0, ty.zp, bd.lo,
                                     bd.hi, c[1], c[2]));
    for (auto& in : p.storeRows(Mem::Act, out, ty.offset + uint64_t(r0 * L), nr))
      s.stores.push_back(in);
    p.commitStep(std::move(s));
  }
  LayerInfo info;
  info.tiling = "rows/tile=" + std::to_string(T) +
                (scalar  ? " scalar b"
                 : bcast ? " per-channel b"
                         : "") +
                (plan.zpInAcc ? " zero-points-in-acc" : "");
  info.sram[0] = actBase + D * slotRows;
  info.sram[2] = accBase + T + B + 1;
  info.sram[3] = 2;
  return info;
}

} // namespace ember::npu
