// Concat along channels (docs/numerics.md section 4.4: codes move unchanged, so every
// input must share the result's parameters). In NCHWc an input whose channel offset is a
// multiple of L is a contiguous run of rows per image in the result, copied through act
// by DMA. An input starting inside a channel block (24-channel inputs on 16 lanes,
// GoogLeNet's branches on 32) needs lanes moved, which DMA (whole rows) cannot do; then
// the inputs are first copied block-aligned into a layer temporary, and a 1x1
// convolution on the MAC array whose one-hot weights pick each output lane's channel
// (multiplier 1, zero points folded: the codes come out unchanged) writes the result.
// Sequences [B, T, C] (rows (b, t, cb), channels last) also concatenate along the tokens
// (axis 1: a vision transformer's class token before its patches): each input's T_i * CB
// rows of every sequence are one run of rows in the result, copied by DMA.
#include "../ConvCore.h"
#include "../Stream.h"
#include "ember/graph/AttrViews.h"

namespace ember::npu {

namespace {

/// The inputs of `n` as they sit in NCHWc: channels and channel blocks of each.
struct ConcatShape {
  int64_t N = 1, H = 1, W = 1, C = 0;
  std::vector<int64_t> channels, blocks;
  int64_t tempBlocks = 0; ///< Blocks of the aligned copy (sum of the inputs' blocks).
  bool aligned = true;    ///< Every input but the last has a multiple of L channels.
};

ConcatShape shapeOf(const Node& n, int64_t L) {
  ConcatShape s;
  const Shape y = nchwOf(n.resultType(0).dims);
  s.N = y[0];
  s.H = y[2];
  s.W = y[3];
  s.C = y[1];
  for (size_t i = 0; i < n.numInputs(); ++i) {
    const int64_t c = n.input(i).dims()[size_t(channelAxis(n.input(i).dims().size()))];
    s.channels.push_back(c);
    s.blocks.push_back(ceilDiv(c, L));
    s.tempBlocks += s.blocks.back();
    if (i + 1 < n.numInputs() && c % L != 0)
      s.aligned = false;
  }
  return s;
}

/// The 1x1 convolution from the aligned copy (input i's channel c at copy channel
/// (sum of earlier inputs' blocks) * L + c) to the result, without its DRAM views.
ConvJob shiftJob(const ConcatShape& s, int64_t L, int32_t zp) {
  std::vector<int64_t> src;
  int64_t tempBlock = 0;
  for (size_t i = 0; i < s.channels.size(); ++i) {
    for (int64_t c = 0; c < s.channels[i]; ++c)
      src.push_back(tempBlock * L + c);
    tempBlock += s.blocks[i];
  }
  return laneMoveJob(s.N, s.H, s.W, s.tempBlocks * L, src, L, zp);
}

/// The normalized axis of Concat `n`.
int64_t concatAxis(const Node& n) {
  const int64_t rank = int64_t(n.resultType(0).rank());
  const int64_t axis = axisOf(n.attrs()).axis;
  return axis < 0 ? axis + rank : axis;
}

/// A Concat of sequences [B, T, C] along the tokens.
bool alongTokens(const Node& n) {
  return n.resultType(0).rank() == 3 && concatAxis(n) == 1;
}

/// Each input's rows of every sequence copied to their run of the result's rows.
LayerInfo emitTokenConcat(const Node& n, LayerCtx& ctx) {
  const int64_t L = ctx.t.lanes();
  const Shape& yd = n.resultType(0).dims;
  const DramTensor& y = ctx.tensor(resultOf(n));
  LayerInfo info;
  int64_t tOff = 0;
  for (size_t i = 0; i < n.numInputs(); ++i) {
    const DramTensor& x = ctx.tensor(n.input(i));
    const int64_t T = n.input(i).dims()[1];
    emitRowRuns({x.offset, y.at(L, tOff, 0, 0, 0), T * x.CB, yd[0], T * x.CB, yd[1] * y.CB}, ctx,
                info);
    tOff += T;
  }
  info.tiling = "copies of tokens";
  return info;
}

class ConcatLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkActivation(resultOf(n), "the result"); !r.empty())
      return r;
    const int64_t rank = int64_t(n.resultType(0).rank());
    const int64_t axis = concatAxis(n);
    if (axis != channelAxis(size_t(rank)) && !alongTokens(n))
      return "only concatenation along channels (axis " +
             std::to_string(channelAxis(size_t(rank))) +
             ") or along the tokens of sequences runs on the NPU";
    for (size_t i = 0; i < n.numInputs(); ++i) {
      if (auto r = checkActivation(n.input(i), "an input"); !r.empty())
        return r;
      if (n.input(i).type().quant != n.resultType(0).quant)
        return "input " + std::to_string(i) +
               " has other quantization parameters than the result (insert a Rescale)";
    }
    if (auto r = checkStream(t, 2, 1, true); !r.empty())
      return r;
    if (alongTokens(n))
      return "";
    const ConcatShape s = shapeOf(n, t.lanes());
    if (s.aligned)
      return "";
    const std::string why = checkConvJob(shiftJob(s, t.lanes(), 0), t, 2);
    return why.empty() ? "" : "an input starts inside a channel block and the lane move: " + why;
  }

  uint64_t tempBytes(const Node& n, const Target& t) const override {
    if (alongTokens(n))
      return 0;
    const ConcatShape s = shapeOf(n, t.lanes());
    return s.aligned ? 0 : uint64_t(s.N * s.tempBlocks * s.H * s.W * t.lanes());
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    if (alongTokens(n))
      return emitTokenConcat(n, ctx);
    const int64_t L = ctx.t.lanes();
    const DramTensor& y = ctx.tensor(resultOf(n));
    const ConcatShape s = shapeOf(n, L);
    // Aligned: each input straight into the result; else into the aligned temporary.
    DramTensor dst = y;
    if (!s.aligned) {
      dst.offset = ctx.temp;
      dst.CB = s.tempBlocks;
      dst.C = s.tempBlocks * L;
    }
    LayerInfo info;
    int64_t cbOff = 0;
    for (size_t i = 0; i < n.numInputs(); ++i) {
      const DramTensor& x = ctx.tensor(n.input(i));
      const int64_t image = x.CB * x.H * x.W; // rows of one image of x
      emitRowRuns({x.offset, dst.at(L, 0, cbOff, 0, 0), image, x.N, image, dst.CB * x.H * x.W}, ctx,
                  info);
      cbOff += x.CB;
    }
    info.tiling = "copies";
    if (s.aligned)
      return info;
    ctx.prog.barrier(); // the lane move reads the copies just stored
    ConvJob j = shiftJob(s, L, zeroPointOf(resultOf(n)));
    j.in = ActView::of(dst);
    j.out = ActView::of(y);
    LayerInfo move = emitConv(j, ctx);
    info.tiling = "aligned copies, lanes moved by a 1x1 conv (" + move.tiling + ")";
    for (int m = 0; m < 4; ++m)
      info.sram[m] = std::max(info.sram[m], move.sram[m]);
    return info;
  }
};

} // namespace

void registerConcatLayers() {
  registerLayer(NodeKind::Concat, std::make_shared<ConcatLayer>());
}

} // namespace ember::npu
