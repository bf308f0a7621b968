// Softmax, LayerNormalization and ChannelLayerNormalization (docs/numerics.md sections
// 4.10 and 4.11) on the normalize instructions (docs/isa/instructions.md section 2.11): the
// line is the value's NCHWc channels, so a line's rows are its channel blocks, H * W rows
// apart (a ChannelLayerNormalization of an image normalises each pixel's line, as Softmax
// along axis 1 does; a LayerNormalization of an image would span its pixels too). The parameter
// block (two header rows, then the exp table or the per-element M, S, B rows) goes into
// the accumulator SRAM once; the rows stream through act in whole images, normalised in
// place. A ChannelLayerNormalization of an image that does not fit a tile streams runs of
// pixels instead: a run of P pixels is its CB channel blocks of P rows, H * W rows apart in
// DRAM, loaded as CB groups into one tile (a line's blocks then P rows apart) and stored
// back the same way, so every pixel's channel blocks stay together.
#include "../Stream.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/isa/roles.h"
#include "ember/isa/semantic.h"
#include "ember/quantization/NormNumerics.h"

namespace ember::npu {

namespace {

/// Where a value's lines lie: `perImage` lines of C codes (CB channel blocks) per image of
/// `imageRows` rows, a line's blocks `blockStride` rows apart and neighbouring lines
/// `lineStride` rows apart.
struct Lines {
  int64_t C = 0, CB = 0, perImage = 0, blockStride = 1, lineStride = 1, imageRows = 0;
};

Lines linesOf(const NodeValue& x, int64_t L) {
  const Shape s = nchwOf(x.dims());
  Lines l;
  l.C = s[1];
  l.CB = ceilDiv(s[1], L);
  l.perImage = s[2] * s[3];
  l.imageRows = l.CB * l.perImage;
  // A sequence (H = W = 1) is one line per image: its blocks are neighbours, and the
  // next image's line follows them.
  l.blockStride = l.perImage;
  l.lineStride = l.perImage == 1 ? l.CB : 1;
  return l;
}

class NormalizeLayer : public Layer {
public:
  explicit NormalizeLayer(NodeKind k)
      : softmax_(k == NodeKind::Softmax), channels_(k == NodeKind::ChannelLayerNormalization) {}

  std::string check(const Node& n, const Target& t) const override {
    const isa::InstrDesc* d = t.normalize(op());
    if (!d)
      return std::string("the description has no normalize instruction with op ") + op();
    if (auto r = checkInputAndResult(n); !r.empty())
      return r;
    const NodeValue x = n.input(0);
    const int64_t rank = int64_t(x.dims().size());
    const int64_t axis = softmax_    ? softmaxOf(n.attrs()).axis
                         : channels_ ? 1
                                     : normOf(n.attrs()).axis;
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a != channelAxis(size_t(rank)))
      return "it normalises along axis " + std::to_string(axis) +
             ", not the NCHWc channels (the last axis of a sequence, axis 1 of an image)";
    const Lines l = linesOf(x, t.lanes());
    if (!softmax_) {
      if (l.perImage != 1 && !channels_)
        return "a LayerNormalization over channels and pixels (rank 4 with H x W > 1)";
      if (auto r = tablesOf(n); !r.empty())
        return r;
    }
    if (uint64_t(l.C) > isa::kNormalizeMaxLen)
      return "a line of " + std::to_string(l.C) + " codes (normalize handles at most " +
             std::to_string(isa::kNormalizeMaxLen) + ")";
    if (l.C > Target::maxOf(*d, isa::role::kLen))
      return "a line of " + std::to_string(l.C) + " codes does not fit len of " + d->name;
    for (const char* r : {isa::role::kSrcSb, isa::role::kDstSb})
      if (l.blockStride > Target::maxOf(*d, r) && !channels_) // (else runs of pixels)
        return "the channel blocks lie " + std::to_string(l.blockStride) + " rows apart, beyond " +
               d->name + "'s " + r;
    for (const char* r : {isa::role::kSrcS1, isa::role::kDstS1})
      if (l.lineStride > Target::maxOf(*d, r))
        return "the lines lie " + std::to_string(l.lineStride) + " rows apart, beyond " + d->name +
               "'s " + r;
    const int64_t params = paramRows(t, l);
    if (params > t.rows(Mem::Acc))
      return "its parameters need " + std::to_string(params) + " acc rows (has " +
             std::to_string(t.rows(Mem::Acc)) + ")";
    // A ChannelLayerNormalization needs one pixel's blocks in a tile (runs of pixels).
    return checkStream(t, 2, 1, true, 0, 0, 0, channels_ ? l.CB : l.imageRows);
  }

  bool takesFloatConstant(size_t i) const override { return !softmax_ && i > 0; }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const isa::InstrDesc& d = *t.normalize(op());
    const NodeValue x = n.input(0), y = resultOf(n);
    const Lines l = linesOf(x, t.lanes());
    const int64_t params = paramRows(t, l);
    const uint64_t block = ctx.consts.addInt32(paramBlock(n, t, l));
    if (pixelRuns(t, d, l, p.depth()))
      return emitPixelRuns(ctx, n, l, params, block);
    StreamSpec s;
    s.inputs = {ctx.tensor(x).offset};
    s.output = ctx.tensor(y).offset;
    s.rows = ctx.tensor(y).rows();
    s.inPlace = true;
    s.groupRows = l.imageRows;
    s.inGroupStride = l.imageRows;
    s.constants = [&](Step& st) {
      for (auto& in : p.loadRows(Mem::Acc, 0, block, params))
        st.loads.push_back(in);
    };
    const int64_t maxLines = Target::maxOf(d, isa::role::kN1);
    s.compute = [&](const StreamStep& ss, Step& st) {
      // A sequence's tile is one run of lines; an image tile is a run of lines per image.
      const int64_t runs = l.perImage == 1 ? 1 : ss.rows / l.imageRows;
      const int64_t perRun = l.perImage == 1 ? ss.rows / l.CB : l.perImage;
      for (int64_t r = 0; r < runs; ++r)
        for (int64_t j = 0; j < perRun; j += maxLines) {
          const int64_t row = ss.outAct + r * l.imageRows + j * l.lineStride;
          const Program::Walk w{row, l.blockStride, l.lineStride};
          st.computes.push_back(p.normalize(d, w, w, 0, l.C, std::min(maxLines, perRun - j)));
        }
    };
    LayerInfo info;
    emitStream(s, ctx, info);
    info.sram[2] = std::max(info.sram[2], params);
    return info;
  }

private:
  /// Whether a ChannelLayerNormalization of images runs in runs of pixels: its images do
  /// not fit a tile whole, or a line's blocks lie beyond the instruction's stride fields.
  bool pixelRuns(const Target& t, const isa::InstrDesc& d, const Lines& l, int depth) const {
    if (!channels_ || l.perImage == 1)
      return false;
    const int64_t sb =
        std::min(Target::maxOf(d, isa::role::kSrcSb), Target::maxOf(d, isa::role::kDstSb));
    return streamTileRows(t, depth, 1, true) < l.imageRows || l.perImage > sb;
  }

  /// Runs of P pixels (as many as a tile holds; the last may be shorter) of every image,
  /// each one stream of one step: its CB blocks loaded as groups of the run's rows H * W
  /// apart, normalised a line (a pixel, its blocks P rows apart in the tile) at a time,
  /// stored back as groups. The parameter block is loaded by the layer's first step only.
  LayerInfo emitPixelRuns(LayerCtx& ctx, const Node& n, const Lines& l, int64_t params,
                          uint64_t block) const {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const isa::InstrDesc& d = *t.normalize(op());
    if (p.depth() > 1 && streamTileRows(t, p.depth(), 1, true) < l.CB)
      p.setLayerDepth(1); // one pixel's blocks fit single-buffered only (check())
    const int64_t sb =
        std::min(Target::maxOf(d, isa::role::kSrcSb), Target::maxOf(d, isa::role::kDstSb));
    const int64_t P = std::min({streamTileRows(t, p.depth(), 1, true) / l.CB, l.perImage, sb});
    const int64_t L = t.lanes(), images = ctx.tensor(n.input(0)).rows() / l.imageRows;
    const int64_t maxLines = Target::maxOf(d, isa::role::kN1);
    const uint64_t x = ctx.tensor(n.input(0)).offset, y = ctx.tensor(resultOf(n)).offset;
    LayerInfo info;
    bool loaded = false;
    for (int64_t img = 0; img < images; ++img)
      for (int64_t p0 = 0; p0 < l.perImage; p0 += P) {
        const int64_t run = std::min(P, l.perImage - p0);
        const uint64_t at = uint64_t((img * l.imageRows + p0) * L);
        StreamSpec s;
        s.inputs = {x + at};
        s.output = y + at;
        s.rows = run * l.CB;
        s.inPlace = true;
        s.groupRows = run;
        s.inGroupStride = l.perImage;
        s.constants = [&](Step& st) {
          if (!loaded)
            for (auto& in : p.loadRows(Mem::Acc, 0, block, params))
              st.loads.push_back(in);
          loaded = true;
        };
        s.compute = [&](const StreamStep& ss, Step& st) {
          for (int64_t j = 0; j < run; j += maxLines) {
            const Program::Walk w{ss.outAct + j, run, 1};
            st.computes.push_back(p.normalize(d, w, w, 0, l.C, std::min(maxLines, run - j)));
          }
        };
        s.stores = [&](const StreamStep& ss, int64_t) {
          return p.storeGroups(Mem::Act, ss.outAct, s.output, run, l.CB, l.perImage);
        };
        if (emitStream(s, ctx, info) < s.rows)
          throw Error("NPU backend",
                      "a run of " + std::to_string(run) + " pixels does not fit one stream tile");
      }
    info.sram[2] = std::max(info.sram[2], params);
    info.tiling = "pixels/run=" + std::to_string(P);
    return info;
  }

  const char* op() const { return softmax_ ? "softmax" : "layernorm"; }

  int64_t paramRows(const Target& t, const Lines& l) const {
    return int64_t(isa::normalizeParamRows(softmax_, uint64_t(l.C), unsigned(t.lanes())));
  }

  /// "" when the quantizer's LayerNormalization tables exist for `n`, else why not.
  static std::string tablesOf(const Node& n) {
    try {
      tables(n);
      return "";
    } catch (const Error& e) {
      return e.what();
    }
  }

  static quant::LayerNormTables tables(const Node& n) {
    const NodeValue x = n.input(0);
    const NormAttrs na = normOf(n.attrs());
    const int64_t count = layerNormLines(n.kind(), x.dims(), n.attrs()).len;
    // The quantizer's int8 form (docs/numerics.md 4.11): a constant float scale and bias,
    // Mean and InvStdDev read by nothing.
    const NodeValue g = n.optionalInput(1), b = n.optionalInput(2);
    if (!g)
      throw Error("a LayerNormalization needs its scale");
    for (const NodeValue& c : {g, b})
      if (c && (c.node->kind() != NodeKind::Constant || c.type().kind != ElemKind::Float32))
        throw Error("the scale and bias must be float32 constants");
    return quant::layerNormTables(scaleOf(x), scaleOf(resultOf(n)), count, na.epsilon,
                                  g.node->payload().data<float>(), size_t(g.type().size()),
                                  b ? b.node->payload().data<float>() : nullptr,
                                  b ? size_t(b.type().size()) : 0);
  }

  /// The acc rows of docs/isa/instructions.md section 2.11, row-major int32 lanes.
  std::vector<int32_t> paramBlock(const Node& n, const Target& t, const Lines& l) const {
    const int64_t L = t.lanes();
    std::vector<int32_t> w(size_t(paramRows(t, l) * L), 0);
    const NodeValue x = n.input(0), y = resultOf(n);
    const quant::Bounds bd = quant::activationBounds(n, y.type().quant);
    w[0] = zeroPointOf(x), w[1] = zeroPointOf(y), w[2] = bd.lo, w[3] = bd.hi;
    if (softmax_) {
      const quant::Multiplier m = quant::softmaxMultiplier(scaleOf(y));
      w[size_t(L)] = m.M, w[size_t(L) + 1] = m.S;
      const std::array<int32_t, 256> T = quant::softmaxExpTable(scaleOf(x));
      std::copy(T.begin(), T.end(), w.begin() + 2 * L);
      return w;
    }
    const quant::LayerNormTables tb = tables(n);
    w[size_t(L)] = static_cast<int32_t>(static_cast<uint32_t>(uint64_t(tb.E)));
    w[size_t(L) + 1] = static_cast<int32_t>(tb.E >> 32);
    for (int64_t i = 0; i < l.C; ++i) {
      const int64_t b = i / L, lane = i % L;
      w[size_t((2 + 3 * b) * L + lane)] = tb.M[size_t(i)];
      w[size_t((3 + 3 * b) * L + lane)] = tb.S[size_t(i)];
      w[size_t((4 + 3 * b) * L + lane)] = tb.B[size_t(i)];
    }
    return w;
  }

  bool softmax_;
  bool channels_; ///< ChannelLayerNormalization: a line per pixel of an image too
};

} // namespace

void registerNormalizeLayers() {
  for (NodeKind k :
       {NodeKind::Softmax, NodeKind::LayerNormalization, NodeKind::ChannelLayerNormalization})
    registerLayer(k, std::make_shared<NormalizeLayer>(k));
}

} // namespace ember::npu
