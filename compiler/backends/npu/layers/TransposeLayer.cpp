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
//   - a rank-4 permutation that keeps the channel axis (perm[1] = 1), e.g. a channels-last
//     sequence's rows [T, C, 1, 1] -> [1, C, 1, T] for a 1-D convolution and back
//     (perm 2, 1, 3, 0 and 3, 1, 0, 2, pass conv1d-to-conv2d): every pixel's rows move
//     whole, so it is a row permutation by strided DMA. Each line of the side with the
//     longer lines is one stream: of the result (its rows gathered from the input, a
//     stride apart) or of the input (its rows scattered into the result, a stride apart).
// Other permutations stay on the host.
#include "../BlockTranspose.h"
#include "../Stream.h"
#include "ember/graph/AttrViews.h"

#include <array>

namespace ember::npu {

namespace {

std::vector<int64_t> permOf(const Node& n) {
  return transposeOf(n.attrs()).perm;
}

bool swapsOuterAxes(const Node& n) {
  return n.input(0).dims().size() == 3 && permOf(n) == std::vector<int64_t>{1, 0, 2};
}

bool keepsChannels(const Node& n) {
  const std::vector<int64_t> p = permOf(n);
  return n.input(0).dims().size() == 4 && p.size() == 4 && p[1] == 1;
}

/// Row strides of the four NCHWc axes of `d` (axis 1: the channel blocks).
std::array<int64_t, 4> rowStrides(const DramTensor& d) {
  return {d.CB * d.H * d.W, d.H * d.W, d.W, 1};
}

/// True when a channel-keeping permutation leaves the rows in order: the axes longer
/// than one keep their order.
bool rowsInOrder(const Node& n, int64_t L) {
  const std::vector<int64_t> p = permOf(n);
  const Shape& x = n.input(0).dims();
  int64_t last = -1;
  for (int64_t a : p) {
    const int64_t len = a == 1 ? ceilDiv(x[1], L) : x[size_t(a)];
    if (len == 1)
      continue;
    if (a < last)
      return false;
    last = a;
  }
  return true;
}

/// True when one of the swapped outer axes has length 1: the rows keep their order.
bool sameBytes(const Node& n, int64_t L) {
  const Shape& x = n.input(0).dims();
  if (keepsChannels(n))
    return rowsInOrder(n, L);
  return swapsOuterAxes(n) && (x[0] == 1 || x[1] == 1);
}

/// A channel-keeping permutation as strided row streams (see the file comment).
void emitRowPermutation(const Node& n, const DramTensor& x, const DramTensor& y, LayerCtx& ctx,
                        LayerInfo& info) {
  const int64_t L = ctx.t.lanes();
  const std::vector<int64_t> p = permOf(n);
  const auto sx = rowStrides(x), sy = rowStrides(y);
  const bool gather = y.W >= x.W; // lines of the result, else of the input
  const DramTensor& lines = gather ? y : x;
  int64_t streams = 0;
  for (int64_t a = 0; a < lines.N; ++a)
    for (int64_t cb = 0; cb < lines.CB; ++cb)
      for (int64_t h = 0; h < lines.H; ++h) {
        const std::array<int64_t, 4> idx{a, cb, h, 0};
        // Row of the other tensor for pixel idx of `lines` (output axis i is input axis p[i]).
        int64_t other = 0, inner = 0;
        for (size_t i = 0; i < 4; ++i) {
          if (gather) {
            other += idx[i] * sx[size_t(p[i])];
          } else {
            other += idx[size_t(p[i])] * sy[i];
            if (p[i] == 3)
              inner = sy[i];
          }
        }
        if (gather)
          inner = sx[size_t(p[3])];
        const int64_t own = ((a * lines.CB + cb) * lines.H + h) * lines.W;
        StreamSpec s;
        s.rows = lines.W;
        s.inPlace = true;
        s.inputs = {x.offset + uint64_t((gather ? other : own) * L)};
        s.output = y.offset + uint64_t((gather ? own : other) * L);
        if (gather && inner != 1) {
          s.groupRows = 1;
          s.inGroupStride = inner;
        } else if (!gather && inner != 1) {
          s.outGroupStride = inner;
        }
        emitStream(s, ctx, info);
        ++streams;
      }
  info.tiling = std::to_string(streams) + " strided row streams of " + std::to_string(lines.W) +
                " rows (" + (gather ? "gather" : "scatter") + ")";
}

class TransposeLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkCodesMove(n); !r.empty())
      return r;
    if (transposeJobOf(n, t.lanes()))
      return checkBlockTranspose(t, 1);
    if (keepsChannels(n))
      return checkStream(t, 2, 1, true);
    if (!swapsOuterAxes(n))
      return "perm " + shapeToString(permOf(n)) + " of " + shapeToString(n.input(0).dims()) +
             ": the NPU runs the swap of a [A, B, C] sequence's outer axes (perm 1, 0, 2) and "
             "the transposes [G, R, C] -> [G, C, R] (perm 0, 2, 1), [A, B, C] -> [B, C, A] "
             "(perm 1, 2, 0) and [R, C] -> [C, R], and rank-4 permutations that keep the "
             "channel axis (perm[1] = 1)";
    if (sameBytes(n, t.lanes()))
      return "";
    const int64_t CB = ceilDiv(n.input(0).dims()[2], t.lanes());
    return checkStream(t, 2, 1, true, 0, 0, 0, CB);
  }

  bool aliasesInput(const Node& n, const Target& t) const override {
    return sameBytes(n, t.lanes());
  }

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
    if (sameBytes(n, L)) { // aliased unless the result must land in the output region
      emitRowCopy(x.offset, y.offset, y.rows(), ctx, info);
      return info;
    }
    if (keepsChannels(n)) {
      emitRowPermutation(n, x, y, ctx, info);
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
