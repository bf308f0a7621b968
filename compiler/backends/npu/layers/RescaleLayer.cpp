// Rescale (docs/numerics.md section 4.7): y = R(x - zp_x; s_x / s_y) as vsub (act rows
// minus a zero-point row, into the accumulators) and requant with per-tensor M, S.
#include "../Stream.h"

#include "ember/quantization/Numerics.h"

namespace ember::npu {

namespace {

class RescaleLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkInputAndResult(n); !r.empty())
      return r;
    quant::averageMultiplier(scaleOf(n.input(0)), n.resultType(0).quant.scales[0], 1);
    return checkStream(t, 2, 1, false, 1, 1);
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const int64_t L = t.lanes();
    const NodeValue x = n.input(0), y = resultOf(n);
    const quant::Multiplier m = quant::averageMultiplier(scaleOf(x), scaleOf(y), 1);
    const quant::Bounds bd = quant::activationBounds(n, y.type().quant);
    const uint64_t zpC =
        ctx.consts.add(std::vector<uint8_t>(size_t(L), static_cast<uint8_t>(zeroPointOf(x))));
    std::vector<int32_t> q(size_t(2 * L));
    for (int64_t l = 0; l < L; ++l) {
      q[size_t(l)] = m.M;
      q[size_t(L + l)] = m.S;
    }
    const uint64_t qC = ctx.consts.addInt32(q);
    StreamSpec s;
    s.inputs = {ctx.tensor(x).offset};
    s.output = ctx.tensor(y).offset;
    s.rows = ctx.tensor(y).rows();
    s.actReserved = 1;
    s.accPerRow = 1;
    s.constants = [&](Step& st) {
      for (auto& in : p.loadRows(Mem::Act, 0, zpC, 1))
        st.loads.push_back(in);
      for (auto& in : p.loadRows(Mem::Param, 0, qC, 2))
        st.loads.push_back(in);
    };
    s.compute = [&](const StreamStep& ss, Step& st) {
      for (const auto& c : Program::rowChunks({&t.vecBinary("sub"), &t.requant()}, ss.rows)) {
        const int64_t o = c[0], n0 = c[1], n1 = c[2];
        st.computes.push_back(p.vecBinary("sub", Mem::Acc, Mem::Act, {o, 1, n0},
                                          {ss.inAct[0] + o, 1, n0}, {0, 0, 0}, n0, n1));
        st.computes.push_back(
            p.requant({ss.outAct + o, 1, n0}, {o, 1, n0}, 0, zeroPointOf(y), bd.lo, bd.hi, n0, n1));
      }
    };
    LayerInfo info;
    emitStream(s, ctx, info);
    info.sram[3] = 2;
    return info;
  }
};

} // namespace

void registerRescaleLayers() {
  registerLayer(NodeKind::Rescale, std::make_shared<RescaleLayer>());
}

} // namespace ember::npu
