// Reshape: when the NCHWc bytes of the input and the result are the same the result is
// the input's DRAM buffer (no instructions), or a row copy when it must land in the
// output region. The bytes are the same when N, C and H*W are equal (e.g. [N, C, 1, 1]
// -> [N, C]), and when both are sequences of feature vectors (rank 2 or 3, or a 1x1
// plane) whose channels fill whole lane blocks: such a value is its elements in row-major
// order without padding, so a transformer's head split [T, B, E] -> [T, B * H, E / H] and
// the merge back move nothing when E / H is a multiple of the lanes. Other reshapes move
// channels across blocks and lanes, which DMA (whole rows) cannot do.
#include "../Stream.h"

namespace ember::npu {

namespace {

bool sameBytes(const Node& n, int64_t L) {
  const Shape a = nchwOf(n.input(0).dims()), b = nchwOf(n.resultType(0).dims);
  if (a[0] == b[0] && a[1] == b[1] && a[2] * a[3] == b[2] * b[3])
    return true;
  // Row-major without padding on both sides (the element counts are equal, Reshape).
  const auto rowMajor = [L](const Shape& s) { return s[2] * s[3] == 1 && s[1] % L == 0; };
  return rowMajor(a) && rowMajor(b);
}

class ReshapeLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkCodesMove(n); !r.empty())
      return r;
    if (!sameBytes(n, t.lanes()))
      return "reshaping " + shapeToString(n.input(0).dims()) + " to " +
             shapeToString(n.resultType(0).dims) +
             " moves channels between NCHWc blocks and lanes, which the NPU's DMA (whole "
             "rows) cannot do";
    return "";
  }

  bool aliasesInput(const Node& n, const Target& t) const override {
    return sameBytes(n, t.lanes());
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const DramTensor& y = ctx.tensor(resultOf(n));
    LayerInfo info;
    emitRowCopy(ctx.tensor(n.input(0)).offset, y.offset, y.rows(), ctx, info);
    return info;
  }
};

} // namespace

void registerReshapeLayers() {
  registerLayer(NodeKind::Reshape, std::make_shared<ReshapeLayer>());
}

} // namespace ember::npu
