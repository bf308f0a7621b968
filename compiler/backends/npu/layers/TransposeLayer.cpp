// Transpose of a sequence (rank 3, [A, B, C] with its channels C last) or a matrix (rank
// 2). Two kinds:
//   - the swap of the outer axes, [A, B, C] -> [B, A, C] (perm 1, 0, 2): how a transformer
//     goes between [T, batch x heads, head_dim] and [batch x heads, T, head_dim]. The
//     channels stay the last axis, so every row of L lanes moves whole (row (a * B + b) *
//     CB + cb of the input is row (b * A + a) * CB + cb of the result): a copy by strided
//     DMA, one row stream per b gathering its A runs of CB rows that lie B * CB rows apart.
//     With A or B equal to 1 the bytes do not move (the result aliases the input).
//   - a transpose that moves the channels: [G, R, C] -> [G, C, R] (perm 0, 2, 1), [A, B, C]
//     -> [B, C, A] (perm 1, 2, 0: attention's keys, [T, heads, head_dim] -> [heads,
//     head_dim, T]) and [R, C] -> [C, R]: values change lanes, which only the MAC array
//     does (BlockTranspose.h, blocks of L x L through a DRAM scratch).
// Other permutations stay on the host.
#include "../BlockTranspose.h"
#include "../Stream.h"
#include "ember/graph/AttrViews.h"

namespace ember::npu {

namespace {

std::vector<int64_t> permOf(const Node& n) {
  return transposeOf(n.attrs()).perm;
}

bool swapsOuterAxes(const Node& n) {
  return n.input(0).dims().size() == 3 && permOf(n) == std::vector<int64_t>{1, 0, 2};
}

/// True when one of the swapped outer axes has length 1: the rows keep their order.
bool sameBytes(const Node& n) {
  const Shape& x = n.input(0).dims();
  return swapsOuterAxes(n) && (x[0] == 1 || x[1] == 1);
}

class TransposeLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkCodesMove(n); !r.empty())
      return r;
    if (transposeJobOf(n, t.lanes()))
      return checkBlockTranspose(t, 1);
    if (!swapsOuterAxes(n))
      return "perm " + shapeToString(permOf(n)) + " of " + shapeToString(n.input(0).dims()) +
             ": the NPU runs the swap of a [A, B, C] sequence's outer axes (perm 1, 0, 2) and "
             "the transposes [G, R, C] -> [G, C, R] (perm 0, 2, 1), [A, B, C] -> [B, C, A] "
             "(perm 1, 2, 0) and [R, C] -> [C, R]";
    if (sameBytes(n))
      return "";
    const int64_t CB = ceilDiv(n.input(0).dims()[2], t.lanes());
    return checkStream(t, 2, 1, true, 0, 0, 0, CB);
  }

  bool aliasesInput(const Node& n, const Target&) const override { return sameBytes(n); }

  uint64_t tempBytes(const Node& n, const Target& t) const override {
    const auto j = transposeJobOf(n, t.lanes());
    return j ? blockTransposeScratch(*j, t.lanes()) : 0;
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const DramTensor &x = ctx.tensor(n.input(0)), &y = ctx.tensor(resultOf(n));
    const int64_t L = ctx.t.lanes();
    LayerInfo info;
    if (auto j = transposeJobOf(n, L)) {
      if (!checkBlockTranspose(ctx.t, ctx.prog.depth()).empty())
        ctx.prog.setLayerDepth(1);
      j->src = x.offset;
      j->dst = y.offset;
      emitBlockTranspose(*j, ctx.temp, ctx, info);
      info.tiling = std::to_string(j->blocks(L)) + " blocks transposed by the array";
      return info;
    }
    if (sameBytes(n)) { // aliased unless the result must land in the output region
      emitRowCopy(x.offset, y.offset, y.rows(), ctx, info);
      return info;
    }
    const int64_t A = n.input(0).dims()[0], B = n.input(0).dims()[1];
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
