// Mul (docs/numerics.md section 4.3): acc = (a - zp_a) * (b - zp_b), y = R(acc; s_a * s_b /
// s_y), as vsub, vsub, vmul in the accumulators and requant. Equal shapes, or one operand
// of shape [N, C, 1, 1] scaling every pixel of its channel (squeeze-and-excitation): in
// NCHWc that operand has one row per (image, channel block), which the vmul walks with
// stride 0 over the pixels of the plane. A constant scalar operand (attention's 1 /
// sqrt(head_dim)) is one constant row walked with stride 0 over the whole tensor.
#include "../Binary.h"

#include "ember/quantization/Numerics.h"

#include <algorithm>

namespace ember::npu {

namespace {

class MulLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    for (const auto& r : {checkActivation(resultOf(n), "the result"), checkBinaryShapes(n)})
      if (!r.empty())
        return r;
    quant::productMultiplier(scaleOf(n.input(0)), scaleOf(n.input(1)), scaleOf(resultOf(n)));
    return checkBinary(t, 2, false);
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const quant::Multiplier m =
        quant::productMultiplier(scaleOf(n.input(0)), scaleOf(n.input(1)), scaleOf(resultOf(n)));
    BinaryOp op;
    op.combine = "mul";
    op.requantM = m.M;
    op.requantS = m.S;
    return emitBinary(op, n, ctx);
  }
};

} // namespace

void registerMulLayers() {
  registerLayer(NodeKind::Mul, std::make_shared<MulLayer>());
}

} // namespace ember::npu
