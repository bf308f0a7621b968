// PRelu with a slope per channel (docs/numerics.md section 4.12), in place in the input
// tile, row by row: with d = x - zp_x,
//   vsub    acc N = act x - act zp-row                  (d)
//   vclamp  acc P = clamp(N, 0, 255), N = clamp(N, -255, 0)
//   vmul    P *= Mp-row; N *= Mn-row of the row's channel block (stride 0)
//   vadd    P += N
//   requant x = R(P; M = 1, S, zp_y, lo, hi)
// The slope rows (one per channel block, zero in the padding lanes) and the Mp row stay in
// acc; in NCHWc a row belongs to channel block (row / (H W)) mod CB, so the Mn vmul walks
// the tile plane segment by plane segment. Rank-2 [N, C] and rank-4 values (rank 3 keeps
// its channels on the last axis, not on PRelu's axis 1).
#include "../Stream.h"

#include "ember/quantization/Numerics.h"

#include <algorithm>

namespace ember::npu {

namespace {

class PReluLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkInputAndResult(n); !r.empty())
      return r;
    const NodeValue x = n.input(0);
    if (x.dims().size() == 3)
      return "a rank-3 value keeps its channels on the last axis, PRelu's slope runs along "
             "axis 1";
    if (resultOf(n).dims() != x.dims())
      return "the result's shape differs from the input's";
    const std::vector<float> slopes = slopesOf(n);
    if (slopes.empty())
      return "the slope must be a float32 constant that varies along the channel axis only";
    try {
      quant::preluMultipliers(scaleOf(x), scaleOf(resultOf(n)), slopes);
    } catch (const Error& e) {
      return e.what();
    }
    const int64_t CB = ceilDiv(x.dims()[1], t.lanes());
    return checkStream(t, 2, 1, true, 1, 2, 1 + CB);
  }

  bool takesFloatConstant(size_t i) const override { return i == 1; }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const int64_t L = t.lanes();
    const NodeValue x = n.input(0), y = resultOf(n);
    const DramTensor &tx = ctx.tensor(x), &ty = ctx.tensor(y);
    const std::vector<float> slopes = slopesOf(n);
    const quant::PReluMultipliers m = quant::preluMultipliers(scaleOf(x), scaleOf(y), slopes);
    const quant::Bounds bd = quant::activationBounds(n, y.type().quant);
    const int64_t C = tx.C, CB = tx.CB, plane = tx.H * tx.W, accRes = 1 + CB;
    // acc rows: Mp, then Mn of each channel block; param rows: M = 1, S.
    std::vector<int32_t> mult(size_t((1 + CB) * L), 0), q(size_t(2 * L));
    for (int64_t l = 0; l < L; ++l) {
      mult[size_t(l)] = m.Mp;
      q[size_t(l)] = 1;
      q[size_t(L + l)] = m.S;
    }
    for (int64_t c = 0; c < C; ++c)
      mult[size_t(L + c)] = m.Mn[size_t(c)]; // row 1 + c / L, lane c % L
    const uint64_t zpC =
        ctx.consts.add(std::vector<uint8_t>(size_t(L), static_cast<uint8_t>(tx.zp)));
    const uint64_t mC = ctx.consts.addInt32(mult), qC = ctx.consts.addInt32(q);
    StreamSpec s;
    s.inputs = {tx.offset};
    s.output = ty.offset;
    s.rows = ty.rows();
    s.inPlace = true;
    s.actReserved = 1;
    s.accPerRow = 2;
    s.accReserved = accRes;
    s.constants = [&](Step& st) {
      for (auto& in : p.loadRows(Mem::Act, 0, zpC, 1))
        st.loads.push_back(in);
      for (auto& in : p.loadRows(Mem::Acc, 0, mC, 1 + CB))
        st.loads.push_back(in);
      for (auto& in : p.loadRows(Mem::Param, 0, qC, 2))
        st.loads.push_back(in);
    };
    s.compute = [&](const StreamStep& ss, Step& st) {
      emitStep(ss, st, ctx, accRes, plane, CB, ty.zp, bd);
    };
    LayerInfo info;
    emitStream(s, ctx, info);
    info.sram[3] = 2;
    return info;
  }

private:
  static std::vector<float> slopesOf(const Node& n) {
    const NodeValue s = n.input(1);
    if (s.node->kind() != NodeKind::Constant)
      return {};
    return quant::preluChannelSlopes(n.input(0).dims(), s.node->payload());
  }

  /// The instructions of one step (see the file comment): P rows at accRes, N rows one
  /// tile after them.
  static void emitStep(const StreamStep& ss, Step& st, LayerCtx& ctx, int64_t accRes, int64_t plane,
                       int64_t CB, int32_t zpY, const quant::Bounds& bd) {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const int64_t P = accRes, N = accRes + ss.tile, in = ss.inAct[0];
    const isa::InstrDesc &vs = t.vecBinary("sub"), &vm = t.vecBinary("mul"),
                         &va = t.vecBinary("add"), &vc = t.vecUnary("clamp");
    for (const auto& c : Program::rowChunks({&vs, &vc, &vm}, ss.rows)) {
      const int64_t o = c[0], n0 = c[1], n1 = c[2];
      st.computes.push_back(p.vecBinary("sub", Mem::Acc, Mem::Act, {N + o, 1, n0}, {in + o, 1, n0},
                                        {0, 0, 0}, n0, n1));
      st.computes.push_back(
          p.vecUnary("clamp", Mem::Acc, Mem::Acc, {P + o, 1, n0}, {N + o, 1, n0}, n0, n1, 0, 255));
      st.computes.push_back(
          p.vecUnary("clamp", Mem::Acc, Mem::Acc, {N + o, 1, n0}, {N + o, 1, n0}, n0, n1, -255, 0));
      st.computes.push_back(p.vecBinary("mul", Mem::Acc, Mem::Acc, {P + o, 1, n0}, {P + o, 1, n0},
                                        {0, 0, 0}, n0, n1));
    }
    // The negative part, plane segment by plane segment (one channel block each).
    for (int64_t i = 0; i < ss.rows;) {
      const int64_t r = ss.row0 + i;
      const int64_t len = std::min(ss.rows - i, (r / plane + 1) * plane - r);
      const int64_t mn = 1 + (r / plane) % CB;
      for (const auto& c : Program::rowChunks(vm, len)) {
        const int64_t o = i + c[0], n0 = c[1], n1 = c[2];
        st.computes.push_back(p.vecBinary("mul", Mem::Acc, Mem::Acc, {N + o, 1, n0}, {N + o, 1, n0},
                                          {mn, 0, 0}, n0, n1));
      }
      i += len;
    }
    for (const auto& c : Program::rowChunks({&va, &t.requant()}, ss.rows)) {
      const int64_t o = c[0], n0 = c[1], n1 = c[2];
      st.computes.push_back(p.vecBinary("add", Mem::Acc, Mem::Acc, {P + o, 1, n0}, {P + o, 1, n0},
                                        {N + o, 1, n0}, n0, n1));
      st.computes.push_back(
          p.requant({in + o, 1, n0}, {P + o, 1, n0}, 0, zpY, bd.lo, bd.hi, n0, n1));
    }
  }
};

} // namespace

void registerPReluLayers() {
  registerLayer(NodeKind::PRelu, std::make_shared<PReluLayer>());
}

} // namespace ember::npu
