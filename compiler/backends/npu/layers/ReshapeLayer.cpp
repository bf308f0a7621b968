// Reshape: when the NCHWc bytes of the input and the result are the same (equal N, C and
// H*W, e.g. [N, C, 1, 1] -> [N, C]) the result is the input's DRAM buffer (no
// instructions), or a row copy when it must land in the output region. Other reshapes
// move channels across blocks and lanes, which DMA (whole rows) cannot do.
#include "../Stream.h"

namespace ember::npu {

namespace {

bool sameBytes(const Node& n) {
  const Shape a = nchwOf(n.input(0).dims()), b = nchwOf(n.resultType(0).dims);
  return a[0] == b[0] && a[1] == b[1] && a[2] * a[3] == b[2] * b[3];
}

class ReshapeLayer : public Layer {
public:
  std::string check(const Node& n, const Target&) const override {
    if (auto r = checkInputAndResult(n); !r.empty())
      return r;
    if (n.input(0).type().quant != n.resultType(0).quant)
      return "input and result quantization parameters differ";
    if (!sameBytes(n))
      return "reshaping " + shapeToString(n.input(0).dims()) + " to " +
             shapeToString(n.resultType(0).dims) +
             " moves channels between NCHWc blocks and lanes, which the NPU's DMA (whole "
             "rows) cannot do";
    return "";
  }

  bool aliasesInput(const Node& n, const Target&) const override { return sameBytes(n); }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    StreamSpec s;
    s.inputs = {ctx.tensor(n.input(0)).offset};
    s.output = ctx.tensor(resultOf(n)).offset;
    s.rows = ctx.tensor(resultOf(n)).rows();
    s.inPlace = true;
    LayerInfo info;
    emitStream(s, ctx, info);
    return info;
  }
};

} // namespace

void registerReshapeLayers() {
  registerLayer(NodeKind::Reshape, std::make_shared<ReshapeLayer>());
}

} // namespace ember::npu
