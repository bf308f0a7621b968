// Slice and Gather of channels (output channel k = input channel src[k]; every other axis
// whole): codes move unchanged (the quantizer gives the result the input's parameters,
// docs/numerics.md section 4.4). A channel that changes lane or block needs lanes moved,
// which DMA (whole rows) cannot do, so the selection runs on the MAC array as a 1x1
// convolution whose one-hot weights pick src[k] for lane k (multiplier 1, the zero point
// folded into the bias: zp + (x - zp) = x), each output block reading only the input
// blocks its channels come from (ConvJob::blocks). ShuffleNet's channel split (Slice) and
// channel shuffle (a Gather after pass channel-shuffle-to-gather) run this way. A
// selection of whole blocks (a run of channels starting at a block boundary, e.g. the
// query/key/value thirds of a transformer's fused projection) is a row copy by DMA.
// A run of tokens of sequences [B, T, C] (channels last: rows (b, t, cb)) is a row copy
// too: a Slice along axis 1 with step 1, or a Gather along axis 1 of one index (a vision
// transformer's class token, x[:, 0] -> [B, C]) or of consecutive indices, copies the
// run's K * CB rows of every sequence by a strided DMA. A Slice of the lines and/or columns
// of an image (step 1, N and C whole: the crop after pass convtranspose-to-depthtospace, a
// window of a feature map) copies the window's runs of pixels by strided DMA as well.
#include "../ConvCore.h"
#include "../Stream.h"
#include "ember/graph/AttrViews.h"

namespace ember::npu {

namespace {

/// The input channel of every output channel, or why the node is not a channel selection.
std::string sourcesOf(const Node& n, std::vector<int64_t>* src) {
  const Shape& x = n.input(0).dims();
  const Shape& y = n.resultType(0).dims;
  const size_t axis = size_t(channelAxis(x.size()));
  const Attrs& a = n.attrs();
  if (n.kind() == NodeKind::Slice) {
    const SliceAttrs sl = sliceOf(a);
    const std::vector<int64_t> starts = sl.starts.value();
    const std::vector<int64_t> steps = sl.stepsOr(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      if (i != axis && (starts[i] != 0 || steps[i] != 1 || y[i] != x[i]))
        return "only a slice of the channels (axis " + std::to_string(axis) +
               ") runs on the NPU, every other axis whole";
    for (int64_t k = 0; k < y[axis]; ++k)
      src->push_back(starts[axis] + k * steps[axis]);
    return "";
  }
  int64_t ax = axisOf(a).axis;
  if (ax < 0)
    ax += int64_t(x.size());
  if (size_t(ax) != axis)
    return "only a gather of the channels (axis " + std::to_string(axis) + ") runs on the NPU";
  const NodeValue idx = n.input(1);
  if (idx.node->kind() != NodeKind::Constant || idx.dims().size() != 1)
    return "the indices are not a constant vector";
  const Tensor& t = idx.node->payload();
  for (int64_t k = 0; k < t.size(); ++k) {
    int64_t c = t.getAsInt(k);
    src->push_back(c < 0 ? c + x[axis] : c);
  }
  return "";
}

/// A run of tokens of a sequence: the first token and how many.
struct TokenRun {
  int64_t first = 0, count = 0;
};

/// Whether `n` selects along the tokens (axis 1) of a rank-3 input; then `run` or `why`
/// says which tokens or why they are not a run the NPU copies.
bool selectsTokens(const Node& n, TokenRun* run, std::string* why) {
  const Shape& x = n.input(0).dims();
  if (x.size() != 3)
    return false;
  const Shape& y = n.resultType(0).dims;
  if (n.kind() == NodeKind::Slice) {
    const SliceAttrs sl = sliceOf(n.attrs());
    const std::vector<int64_t> starts = sl.starts.value();
    const std::vector<int64_t> steps = sl.stepsOr(x.size());
    if (starts[1] == 0 && steps[1] == 1 && y[1] == x[1])
      return false; // not a selection of tokens
    for (size_t i : {size_t(0), size_t(2)})
      if (starts[i] != 0 || steps[i] != 1 || y[i] != x[i])
        return false;
    if (steps[1] != 1)
      *why = "a slice of tokens with a step other than 1";
    *run = {starts[1] < 0 ? starts[1] + x[1] : starts[1], y[1]};
    return true;
  }
  int64_t ax = axisOf(n.attrs()).axis;
  if (ax < 0)
    ax += 3;
  if (ax != 1)
    return false;
  const NodeValue idx = n.input(1);
  if (idx.node->kind() != NodeKind::Constant || idx.dims().size() > 1) {
    *why = "the token indices are not a constant scalar or vector";
    return true;
  }
  const Tensor& t = idx.node->payload();
  for (int64_t k = 0; k < t.size(); ++k) {
    int64_t i = t.getAsInt(k);
    i = i < 0 ? i + x[1] : i;
    if (i < 0 || i >= x[1]) {
      *why = "token index " + std::to_string(t.getAsInt(k)) + " is outside the " +
             std::to_string(x[1]) + " tokens";
      return true;
    }
    if (k == 0)
      run->first = i;
    else if (i != run->first + k)
      *why = "the token indices are not consecutive";
  }
  run->count = t.size();
  return true;
}

/// The run's rows of every sequence copied by a strided DMA.
LayerInfo emitTokenCopy(const Node& n, const TokenRun& run, LayerCtx& ctx) {
  const int64_t L = ctx.t.lanes(), T = n.input(0).dims()[1], B = n.input(0).dims()[0];
  const DramTensor &x = ctx.tensor(n.input(0)), &y = ctx.tensor(resultOf(n));
  LayerInfo info;
  emitRowRuns({x.at(L, run.first, 0, 0, 0), y.at(L, 0, 0, 0, 0), run.count * x.CB, B, T * x.CB,
               run.count * x.CB},
              ctx, info);
  info.tiling = "copies of tokens";
  return info;
}

/// The first line and column of a window of an image's pixels.
struct PixelBox {
  int64_t h0 = 0, w0 = 0;
};

/// Whether `n` is a Slice of a rank-4 value along H and/or W, N and C whole (a crop after
/// pass convtranspose-to-depthtospace, a segmentation head's window); then `box` says
/// where the window starts, or `why` why it is not one the NPU copies.
bool selectsPixels(const Node& n, PixelBox* box, std::string* why) {
  const Shape& x = n.input(0).dims();
  const Shape& y = n.resultType(0).dims;
  if (n.kind() != NodeKind::Slice || x.size() != 4 || (y[2] == x[2] && y[3] == x[3]))
    return false;
  const SliceAttrs sl = sliceOf(n.attrs());
  const std::vector<int64_t> starts = sl.starts.value();
  const std::vector<int64_t> steps = sl.stepsOr(x.size());
  if (starts[0] != 0 || steps[0] != 1 || y[0] != x[0] || starts[1] != 0 || steps[1] != 1 ||
      y[1] != x[1])
    return false; // a selection of images or channels as well
  if (steps[2] != 1 || steps[3] != 1)
    *why = "a slice of lines or columns with a step other than 1";
  *box = {starts[2], starts[3]}; // normalised: the graph verifier's rule
  return true;
}

/// The window's rows copied by strided DMA: lines of whole width are one run per channel
/// plane, a window of every line one run per line of the tensor, else each plane's lines.
LayerInfo emitPixelCopy(const Node& n, const PixelBox& b, LayerCtx& ctx) {
  const int64_t L = ctx.t.lanes();
  const DramTensor &x = ctx.tensor(n.input(0)), &y = ctx.tensor(resultOf(n));
  LayerInfo info;
  int64_t streams = 0;
  if (y.W == x.W)
    streams = emitRowRuns(
        {x.at(L, 0, 0, b.h0, 0), y.offset, y.H * x.W, x.N * x.CB, x.H * x.W, y.H * y.W}, ctx, info);
  else if (y.H == x.H)
    streams =
        emitRowRuns({x.at(L, 0, 0, 0, b.w0), y.offset, y.W, x.N * x.CB * x.H, x.W, y.W}, ctx, info);
  else
    for (int64_t i = 0; i < x.N; ++i)
      for (int64_t cb = 0; cb < x.CB; ++cb)
        streams += emitRowRuns(
            {x.at(L, i, cb, b.h0, b.w0), y.at(L, i, cb, 0, 0), y.W, y.H, x.W, y.W}, ctx, info);
  info.tiling = std::to_string(streams) + " row streams (slice of pixels)";
  return info;
}

/// The input block of the first selected channel when the selection is a run of whole
/// blocks (src[k] = first + k, first a multiple of L, ending on a block boundary or at the
/// input's last channel, so even the padding lanes come from the input's), else -1.
int64_t wholeBlocksFrom(const Node& n, const std::vector<int64_t>& src, int64_t L) {
  const int64_t C = nchwOf(n.input(0).dims())[1], K = int64_t(src.size());
  if (K == 0 || src[0] % L != 0 || (K % L != 0 && src[0] + K != C))
    return -1;
  for (int64_t k = 0; k < K; ++k)
    if (src[size_t(k)] != src[0] + k)
      return -1;
  return src[0] / L;
}

/// The input block a whole-block selection copies from, when its copy (whole images'
/// selected blocks per tile) fits the SRAMs; else -1 (the lane move then runs it).
int64_t copyFrom(const Node& n, const std::vector<int64_t>& src, const Target& t) {
  const int64_t cb = wholeBlocksFrom(n, src, t.lanes());
  const Shape y = nchwOf(n.resultType(0).dims);
  const int64_t group = ceilDiv(y[1], t.lanes()) * y[2] * y[3];
  return cb >= 0 && checkStream(t, 2, 1, true, 0, 0, 0, group).empty() ? cb : -1;
}

/// The selection as a 1x1 convolution, without its DRAM views.
ConvJob selectJob(const Node& n, const std::vector<int64_t>& src, int64_t L) {
  const Shape x = nchwOf(n.input(0).dims());
  return laneMoveJob(x[0], x[2], x[3], x[1], src, L, zeroPointOf(n.input(0)));
}

class ChannelSelectLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkCodesMove(n); !r.empty())
      return r;
    TokenRun run;
    std::string why;
    if (selectsTokens(n, &run, &why))
      return !why.empty() ? why
                          : checkStream(t, 2, 1, true, 0, 0, 0,
                                        run.count * ceilDiv(n.input(0).dims()[2], t.lanes()));
    PixelBox box;
    if (selectsPixels(n, &box, &why))
      return !why.empty() ? why : checkStream(t, 2, 1, true);
    std::vector<int64_t> src;
    if (auto r = sourcesOf(n, &src); !r.empty())
      return r;
    if (copyFrom(n, src, t) >= 0)
      return "";
    return checkConvJob(selectJob(n, src, t.lanes()), t, 2);
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    TokenRun run;
    std::string why;
    if (selectsTokens(n, &run, &why))
      return emitTokenCopy(n, run, ctx);
    if (PixelBox box; selectsPixels(n, &box, &why))
      return emitPixelCopy(n, box, ctx);
    std::vector<int64_t> src;
    sourcesOf(n, &src);
    const int64_t L = ctx.t.lanes();
    if (const int64_t cb = copyFrom(n, src, ctx.t); cb >= 0) {
      const DramTensor &x = ctx.tensor(n.input(0)), &y = ctx.tensor(resultOf(n));
      LayerInfo info;
      const int64_t image = y.CB * y.H * y.W;
      emitRowRuns({x.at(L, 0, cb, 0, 0), y.at(L, 0, 0, 0, 0), image, y.N, x.CB * x.H * x.W, image},
                  ctx, info);
      info.tiling = "copies of whole blocks";
      return info;
    }
    ConvJob j = selectJob(n, src, ctx.t.lanes());
    j.in = ActView::of(ctx.tensor(n.input(0)));
    j.out = ActView::of(ctx.tensor(resultOf(n)));
    LayerInfo info = emitConv(j, ctx);
    info.tiling = "lanes moved by a 1x1 conv (" + info.tiling + ")";
    return info;
  }
};

} // namespace

void registerChannelSelectLayers() {
  registerLayer(NodeKind::Slice, std::make_shared<ChannelSelectLayer>());
  registerLayer(NodeKind::Gather, std::make_shared<ChannelSelectLayer>());
}

} // namespace ember::npu
