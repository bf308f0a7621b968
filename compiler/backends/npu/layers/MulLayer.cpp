// Mul (docs/numerics.md section 4.3): acc = (a - zp_a) * (b - zp_b), y = R(acc; s_a * s_b /
// s_y), as vsub, vsub, vmul in the accumulators and requant. Equal shapes, or one operand
// of shape [N, C, 1, 1] scaling every pixel of its channel (squeeze-and-excitation): in
// NCHWc that operand has one row per (image, channel block), which the vmul walks with
// stride 0 over the pixels of the plane.
#include "../Layer.h"

#include "ember/quantization/Numerics.h"

#include <algorithm>

namespace ember::npu {

namespace {

/// Whether `s` is [N, C, 1, 1] against the 4-D `full` (same N and C).
bool isChannelVector(const Shape& s, const Shape& full) {
  return full.size() == 4 && s.size() == 4 && s[0] == full[0] && s[1] == full[1] && s[2] == 1 &&
         s[3] == 1 && (full[2] != 1 || full[3] != 1);
}

class MulLayer : public Layer {
public:
  std::string check(const Node& n, const Target&) const override {
    for (const auto& r : {checkActivation(n.input(0), "a"), checkActivation(n.input(1), "b"),
                          checkActivation(resultOf(n), "the result")})
      if (!r.empty())
        return r;
    const Shape &a = n.input(0).dims(), &b = n.input(1).dims(), &y = n.resultType(0).dims;
    if (!(a == b && a == y) && !(a == y && isChannelVector(b, y)) &&
        !(b == y && isChannelVector(a, y)))
      return "only equal shapes or a per-channel [N, C, 1, 1] operand are supported (operands " +
             shapeToString(a) + " and " + shapeToString(b) + ")";
    quant::productMultiplier(scaleOf(n.input(0)), scaleOf(n.input(1)), scaleOf(resultOf(n)));
    return "";
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const int64_t L = t.lanes(), D = p.depth();
    // `a` is the full operand, `b` the full or per-channel one.
    NodeValue a = n.input(0), b = n.input(1);
    if (a.dims() != n.resultType(0).dims)
      std::swap(a, b);
    const NodeValue y = resultOf(n);
    const DramTensor &ta = ctx.tensor(a), &tb = ctx.tensor(b), &ty = ctx.tensor(y);
    const bool bcast = a.dims() != b.dims();
    const int64_t plane = bcast ? ta.H * ta.W : 1; // rows of a per row of b
    const quant::Multiplier m = quant::productMultiplier(scaleOf(a), scaleOf(b), scaleOf(y));
    const quant::Bounds bd = quant::activationBounds(n, y.type().quant);
    std::vector<uint8_t> zp(size_t(2 * L));
    std::vector<int32_t> q(size_t(2 * L));
    for (int64_t l = 0; l < L; ++l) {
      zp[size_t(l)] = static_cast<uint8_t>(ta.zp);
      zp[size_t(L + l)] = static_cast<uint8_t>(tb.zp);
      q[size_t(l)] = m.M;
      q[size_t(L + l)] = m.S;
    }
    const uint64_t zpC = ctx.consts.add(zp), qC = ctx.consts.addInt32(q);
    // Tile of T rows of a with up to B rows of b; act: 2 zero-point rows, then D slots of
    // (T a rows, B b rows, T result rows); acc: T rows (a) then B rows (b).
    int64_t T = std::min(ta.rows(), (t.rows(Mem::Act) - 2) / (D * 3));
    T = std::min(T, t.rows(Mem::Acc) / 2);
    const int64_t B = bcast ? std::min(T, T / plane + 2) : T;
    T = std::min(T, t.rows(Mem::Acc) - B - 1);
    const int64_t slotRows = 2 * T + B;
    const isa::InstrDesc &vb = t.vecBinary("mul"), &vs = t.vecBinary("sub");
    const Program::Walk zA{0, 0, 0}, zB{1, 0, 0};
    bool first = true;
    for (int64_t r0 = 0; r0 < ta.rows(); r0 += T) {
      const int64_t nr = std::min(T, ta.rows() - r0);
      const int64_t base = 2 + (p.stepIndex() % D) * slotRows;
      const int64_t inA = base, inB = base + T, out = base + T + B;
      // Bank-aware: the b region starts in another acc bank than row i of a (an odd
      // distance when banks are interleaved by row), so vmul's two reads do not collide.
      const int64_t accA = 0, accB = T + (T % 2 == 0 ? 1 : 0);
      const int64_t p0 = r0 / plane, p1 = (r0 + nr - 1) / plane; // b rows [p0, p1]
      Step s;
      if (first) {
        for (auto& in : p.loadRows(Mem::Act, 0, zpC, 2))
          s.loads.push_back(in);
        for (auto& in : p.loadRows(Mem::Param, 0, qC, 2))
          s.loads.push_back(in);
        first = false;
      }
      for (auto& in : p.loadRows(Mem::Act, inA, ta.offset + uint64_t(r0 * L), nr))
        s.loads.push_back(in);
      for (auto& in : p.loadRows(Mem::Act, inB, tb.offset + uint64_t(p0 * L), p1 - p0 + 1))
        s.loads.push_back(in);
      for (const auto& c : Program::rowChunks(vs, p1 - p0 + 1))
        s.computes.push_back(p.vecBinary("sub", Mem::Acc, Mem::Act, {accB + c[0], 1, c[1]},
                                         {inB + c[0], 1, c[1]}, zB, c[1], c[2]));
      for (const auto& c : Program::rowChunks(vs, nr))
        s.computes.push_back(p.vecBinary("sub", Mem::Acc, Mem::Act, {accA + c[0], 1, c[1]},
                                         {inA + c[0], 1, c[1]}, zA, c[1], c[2]));
      // Multiply plane segment by plane segment (one b row each when broadcasting).
      for (int64_t i = 0; i < nr;) {
        const int64_t r = r0 + i;
        const int64_t len = bcast ? std::min(nr - i, (r / plane + 1) * plane - r) : nr - i;
        for (const auto& c : Program::rowChunks(vb, len)) {
          const int64_t o = i + c[0];
          const Program::Walk bw =
              bcast ? Program::Walk{accB + r / plane - p0, 0, 0} : Program::Walk{accB + o, 1, c[1]};
          s.computes.push_back(p.vecBinary("mul", Mem::Acc, Mem::Acc, {accA + o, 1, c[1]},
                                           {accA + o, 1, c[1]}, bw, c[1], c[2]));
        }
        i += len;
      }
      for (const auto& c : Program::rowChunks(t.requant(), nr))
        s.computes.push_back(p.requant({out + c[0], 1, c[1]}, {accA + c[0], 1, c[1]}, 0, ty.zp,
                                       bd.lo, bd.hi, c[1], c[2]));
      for (auto& in : p.storeRows(Mem::Act, out, ty.offset + uint64_t(r0 * L), nr))
        s.stores.push_back(in);
      p.commitStep(std::move(s));
    }
    LayerInfo info;
    info.tiling = "rows/tile=" + std::to_string(T) + (bcast ? " per-channel b" : "");
    info.sram[0] = 2 + D * slotRows;
    info.sram[2] = T + B + 1;
    info.sram[3] = 2;
    return info;
  }
};

} // namespace

void registerMulLayers() {
  registerLayer(NodeKind::Mul, std::make_shared<MulLayer>());
}

} // namespace ember::npu
