// Transpose of a sequence's two outer axes, [A, B, C] -> [B, A, C] (perm 1, 0, 2): how a
// transformer goes between [T, batch x heads, head_dim] and [batch x heads, T, head_dim],
// and PyTorch's sequence-first attention between [batch, T, E] and [T, batch, E]. The
// channels stay the last axis, so every row of L lanes moves whole (DramTensor: row
// (a * B + b) * CB + cb of the input is row (b * A + a) * CB + cb of the result): a copy
// by strided DMA, one row stream per b gathering its A runs of CB rows that lie B * CB
// rows apart. With A or B equal to 1 the bytes do not move (the result aliases the
// input). Other permutations move values across lanes and stay on the host.
#include "../Stream.h"

namespace ember::npu {

namespace {

bool swapsOuterAxes(const Node& n) {
  const std::vector<int64_t> perm = n.attrs().getInts("perm");
  return n.input(0).dims().size() == 3 && perm == std::vector<int64_t>{1, 0, 2};
}

/// True when one of the swapped axes has length 1: the rows keep their order.
bool sameBytes(const Node& n) {
  const Shape& x = n.input(0).dims();
  return x[0] == 1 || x[1] == 1;
}

class TransposeLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkInputAndResult(n); !r.empty())
      return r;
    if (n.input(0).type().quant != n.resultType(0).quant)
      return "input and result quantization parameters differ";
    if (!swapsOuterAxes(n))
      return "perm " + shapeToString(n.attrs().getInts("perm")) + " of " +
             shapeToString(n.input(0).dims()) +
             ": the NPU runs only the swap of a [A, B, C] sequence's outer axes (perm 1, 0, 2)";
    if (sameBytes(n))
      return "";
    const int64_t CB = ceilDiv(n.input(0).dims()[2], t.lanes());
    return checkStream(t, 2, 1, true, 0, 0, 0, CB);
  }

  bool aliasesInput(const Node& n, const Target&) const override {
    return swapsOuterAxes(n) && sameBytes(n);
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const DramTensor &x = ctx.tensor(n.input(0)), &y = ctx.tensor(resultOf(n));
    const int64_t L = ctx.t.lanes(), A = n.input(0).dims()[0], B = n.input(0).dims()[1];
    LayerInfo info;
    if (sameBytes(n)) { // aliased unless the result must land in the output region
      StreamSpec s;
      s.inputs = {x.offset};
      s.output = y.offset;
      s.rows = y.rows();
      s.inPlace = true;
      emitStream(s, ctx, info);
      return info;
    }
    for (int64_t b = 0; b < B; ++b) {
      StreamSpec s;
      s.inputs = {x.offset + uint64_t(b * x.CB * L)};
      s.output = y.offset + uint64_t(b * A * y.CB * L);
      s.rows = A * y.CB;
      s.groupRows = y.CB;
      s.inGroupStride = B * x.CB;
      s.inPlace = true;
      emitStream(s, ctx, info);
    }
    info.tiling = std::to_string(B) + " strided row copies of " + std::to_string(A) + " x " +
                  std::to_string(y.CB) + " rows";
    return info;
  }
};

} // namespace

void registerTransposeLayers() {
  registerLayer(NodeKind::Transpose, std::make_shared<TransposeLayer>());
}

} // namespace ember::npu
