// Pad (constant mode, spatial pads of an NCHW value): each tile of output rows is loaded
// with dma.ld's padding fields (value = the quantized pad value) and stored whole from
// the same buffer, so the buffers cycle over twice the pipeline depth. On an act SRAM too
// small for whole padded lines, tiles of th lines x tw columns of one channel block; a
// tile wholly in the padding is filled from a constant row of the pad value.
#include "../ConvCore.h"
#include "ember/isa/roles.h"

#include "ember/graph/AttrViews.h"
#include "ember/quantization/Numerics.h"

#include <algorithm>

namespace ember::npu {

namespace {

class PadLayer : public Layer {
public:
  /// Channel blocks and output lines per tile at pipeline depth `depth` ({0, 0} when not
  /// even one block of the fewest lines fits act): each tile of lines holds th + (bottom
  /// pad) lines, since a tile starting in the bottom padding joins the previous one.
  static std::pair<int64_t, int64_t> tiling(const Node& n, const Target& t, int64_t depth) {
    const Shape x = n.input(0).dims(), y = n.resultType(0).dims;
    const auto pads = padOf(n.attrs()).pads.value();
    const int64_t pt = pads[2], pb = pads[6];
    const int64_t D = 2 * depth; // the store reads the buffer the load filled (Stream.cpp)
    const int64_t perSlot = t.rows(Mem::Act) / D;
    const int64_t thMin = std::min(y[2], pt + 1);
    const int64_t cb = ceilDiv(x[1], t.lanes());
    const int64_t cbt = std::min(
        {cb, Target::maxOf(t.dmaStore(), isa::role::kSize2), perSlot / ((thMin + pb) * y[3])});
    if (cbt < 1)
      return {0, 0};
    int64_t th = std::min(y[2], perSlot / (cbt * y[3]) - pb);
    th = std::min(th, Target::maxOf(t.dmaStore(), isa::role::kSize1) - pb);
    return {cbt, std::max(th, thMin)};
  }

  /// Lines and columns of one channel block per tile when whole lines do not fit
  /// ({0, 0} when not even one pixel per buffer fits).
  static std::pair<int64_t, int64_t> gridTiling(const Node& n, const Target& t, int64_t depth) {
    const Shape y = n.resultType(0).dims;
    const int64_t perSlot = t.rows(Mem::Act) / (2 * depth);
    const int64_t tw = std::min({y[3], perSlot, Target::maxOf(t.dmaStore(), isa::role::kSize0),
                                 Target::maxOf(t.dmaLoad(), isa::role::kSize0)});
    if (tw < 1)
      return {0, 0};
    const int64_t th = std::min({y[2], perSlot / tw, Target::maxOf(t.dmaStore(), isa::role::kSize1),
                                 Target::maxOf(t.dmaLoad(), isa::role::kSize1)});
    return {th, tw};
  }

  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkInputAndResult(n); !r.empty())
      return r;
    if (n.input(0).dims().size() != 4)
      return "only NCHW values are padded on the NPU";
    if (padOf(n.attrs()).mode != "constant")
      return "only constant padding runs on the NPU";
    if (n.input(0).type().quant != n.resultType(0).quant)
      return "input and result quantization parameters differ";
    if (n.numInputs() > 1 && n.input(1) &&
        (n.input(1).node->kind() != NodeKind::Constant || n.input(1).type().kind != ElemKind::Int8))
      return "the pad value is not an int8 constant";
    const auto p = padOf(n.attrs()).pads.value();
    if (p.size() != 8 || p[0] || p[1] || p[4] || p[5])
      return "only spatial (H, W) padding runs on the NPU";
    const isa::InstrDesc& ld = t.dmaLoad();
    for (int i : {2, 3, 6, 7})
      if (p[size_t(i)] < 0 || p[size_t(i)] > Target::maxOf(ld, isa::role::kPadTop))
        return "pad " + std::to_string(p[size_t(i)]) +
               " is negative or exceeds what dma.ld can pad";
    const Shape y = n.resultType(0).dims;
    if (y[3] > Target::maxOf(t.dmaStore(), isa::role::kSize0))
      return "rows wider than the DMA size field";
    if (tiling(n, t, 2).first == 0 && gridTiling(n, t, 1).first == 0)
      return "one padded pixel of one channel block in each of 2 buffers (single-buffered: "
             "the store reads what the load wrote) needs 2 act rows (has " +
             std::to_string(t.rows(Mem::Act)) + ")";
    return "";
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    // The store reads the buffer the load filled: 2 D buffers (see Stream.cpp).
    const int64_t L = t.lanes(), D = 2 * int64_t(p.depth());
    const DramTensor& x = ctx.tensor(n.input(0));
    const DramTensor& y = ctx.tensor(resultOf(n));
    const auto pads = padOf(n.attrs()).pads.value();
    const int64_t pt = pads[2], pl = pads[3], pb = pads[6];
    int32_t value;
    if (n.numInputs() > 1 && n.input(1))
      value = n.input(1).node->payload().data<int8_t>()[0];
    else
      value = quant::quantizeBound(padOf(n.attrs()).value, n.resultType(0).quant);
    if (tiling(n, t, p.depth()).first == 0)
      return emitGrid(n, ctx, value);
    // Row tiles; a tile starting in the bottom padding joins the previous one, so every
    // tile reads at least one input row (th >= pads + 1 keeps the first one valid too).
    const auto [cbt, th] = tiling(n, t, p.depth());
    std::vector<std::pair<int64_t, int64_t>> tiles;
    for (int64_t oy0 = 0; oy0 < y.H; oy0 += th) {
      const int64_t rows = std::min(th, y.H - oy0);
      if (!tiles.empty() && oy0 - pt > x.H - 1)
        tiles.back().second += rows;
      else
        tiles.push_back({oy0, rows});
    }
    const ActView in = ActView::of(x), out = ActView::of(y);
    for (int64_t b = 0; b < x.N; ++b)
      for (int64_t cb0 = 0; cb0 < x.CB; cb0 += cbt)
        for (const auto& tile : tiles) {
          const int64_t cb1 = std::min(x.CB, cb0 + cbt);
          const int64_t slot = (p.stepIndex() % D) * cbt * (th + pb) * y.W;
          const Halo h{tile.first - pt, tile.first + tile.second - 1 - pt, -pl, y.W - 1 - pl};
          Step s;
          s.loads = loadHalo(p, in, b, cb0, cb1, x.H, x.W, h, slot, value);
          s.stores.push_back(p.dmaStore(
              Mem::Act, slot,
              out.base + uint64_t((b * out.image + cb0 * out.block + tile.first * out.line) * L),
              y.W, tile.second, cb1 - cb0, out.line, out.block));
          p.commitStep(std::move(s));
        }
    LayerInfo info;
    info.tiling = "th=" + std::to_string(th);
    info.sram[0] = D * cbt * (th + pb) * y.W;
    return info;
  }

private:
  /// Tiles of gridTiling's lines x columns of one channel block, each loaded with its
  /// padding (or, wholly in the padding, from a constant row of `value`) and stored.
  static LayerInfo emitGrid(const Node& n, LayerCtx& ctx, int32_t value) {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    if (p.depth() > 1 && gridTiling(n, t, p.depth()).first == 0)
      p.setLayerDepth(1); // not one pixel per buffer: single-buffered
    const int64_t L = t.lanes(), D = 2 * int64_t(p.depth());
    const DramTensor& x = ctx.tensor(n.input(0));
    const DramTensor& y = ctx.tensor(resultOf(n));
    const auto pads = padOf(n.attrs()).pads.value();
    const int64_t pt = pads[2], pl = pads[3];
    const auto [th, tw] = gridTiling(n, t, p.depth());
    const ActView in = ActView::of(x), out = ActView::of(y);
    int64_t padRow = -1;
    for (int64_t b = 0; b < x.N; ++b)
      for (int64_t cb = 0; cb < x.CB; ++cb)
        for (int64_t oy0 = 0; oy0 < y.H; oy0 += th)
          for (int64_t ox0 = 0; ox0 < y.W; ox0 += tw) {
            const int64_t lines = std::min(th, y.H - oy0), cols = std::min(tw, y.W - ox0);
            const int64_t slot = (p.stepIndex() % D) * th * tw;
            const Halo h{oy0 - pt, oy0 + lines - 1 - pt, ox0 - pl, ox0 + cols - 1 - pl};
            Step s;
            s.loads = loadHalo(p, in, b, cb, cb + 1, x.H, x.W, h, slot, value,
                               padRowFor(h, x.H, x.W, value, ctx, padRow));
            s.stores.push_back(p.dmaStore(Mem::Act, slot, out.at(L, b, cb, oy0, ox0), cols, lines,
                                          1, out.line, out.block));
            p.commitStep(std::move(s));
          }
    LayerInfo info;
    info.tiling = "blocks=1 th=" + std::to_string(th) + " tw=" + std::to_string(tw);
    info.sram[0] = D * th * tw;
    return info;
  }
};

} // namespace

void registerPadLayers() {
  registerLayer(NodeKind::Pad, std::make_shared<PadLayer>());
}

} // namespace ember::npu
