// Relu and Clip on int8 codes (docs/numerics.md section 4.4): vclamp of every row to the
// quantized bounds, in place in the input tile.
#include "../Stream.h"

#include "ember/quantization/Numerics.h"

namespace ember::npu {

namespace {

class ClampLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkCodesMove(n); !r.empty())
      return r;
    for (size_t i = 1; i < n.numInputs(); ++i)
      if (n.input(i))
        return "bounds given as operands are not supported (use attributes min/max)";
    return checkStream(t, 2, 1, true);
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const NodeValue x = n.input(0), y = resultOf(n);
    const quant::Bounds bd = quant::activationBounds(n, y.type().quant);
    StreamSpec s;
    s.inputs = {ctx.tensor(x).offset};
    s.output = ctx.tensor(y).offset;
    s.rows = ctx.tensor(y).rows();
    s.inPlace = true;
    s.compute = [&](const StreamStep& ss, Step& st) {
      for (const auto& c : Program::rowChunks(t.vecUnary("clamp"), ss.rows)) {
        const int64_t o = c[0], n0 = c[1], n1 = c[2];
        st.computes.push_back(p.vecUnary("clamp", Mem::Act, Mem::Act, {ss.outAct + o, 1, n0},
                                         {ss.inAct[0] + o, 1, n0}, n0, n1, bd.lo, bd.hi));
      }
    };
    LayerInfo info;
    emitStream(s, ctx, info);
    return info;
  }
};

} // namespace

void registerClampLayers() {
  registerLayer(NodeKind::Relu, std::make_shared<ClampLayer>());
  registerLayer(NodeKind::Clip, std::make_shared<ClampLayer>());
}

} // namespace ember::npu
