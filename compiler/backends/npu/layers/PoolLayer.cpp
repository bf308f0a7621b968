// MaxPool and GlobalMaxPool (docs/numerics.md section 4.4): per tile of output rows the
// input tile is loaded with its halo (padding -128), the first tap copied with vmov and
// every other tap folded in with vmax, each a strided walk over the tile (docs/isa.md
// example 7.3).
#include "../ConvCore.h"
#include "ember/graph/AttrViews.h"
#include "ember/isa/roles.h"

#include <algorithm>

namespace ember::npu {

namespace {

struct PoolGeom {
  int64_t N, C, H, W, OH, OW, KH, KW, sH, sW, dH, dW, padT, padL;
};

PoolGeom geomOf(const Node& n) {
  const Shape x = n.input(0).dims(), y = n.resultType(0).dims;
  PoolGeom g{x[0], x[1], x[2], x[3], y[2], y[3], x[2], x[3], 1, 1, 1, 1, 0, 0};
  if (n.kind() == NodeKind::MaxPool) {
    const WindowAttrs w = windowOf(n.attrs(), 2);
    const std::vector<int64_t>&k = w.kernel, &s = w.strides, &d = w.dilations, &p = w.pads;
    g.KH = k.at(0), g.KW = k.at(1), g.sH = s.at(0), g.sW = s.at(1), g.dH = d.at(0), g.dW = d.at(1),
    g.padT = p.at(0), g.padL = p.at(1);
  }
  return g;
}

/// Rows per tile: the most output rows whose input and output tiles (all channel blocks
/// of `cbt`) fit D times in act.
struct PoolTiling {
  int64_t cbt = 0, th = 0, tw = 0;
};

int64_t planeRows(const PoolGeom& g, int64_t th, int64_t tw) {
  return ((th - 1) * g.sH + (g.KH - 1) * g.dH + 1) * ((tw - 1) * g.sW + (g.KW - 1) * g.dW + 1);
}

PoolTiling choose(const PoolGeom& g, const Target& t, int64_t D, const CompileOptions& o) {
  const int64_t CB = ceilDiv(g.C, t.lanes());
  const isa::InstrDesc& mx = t.vecBinary("max");
  int64_t tw = std::min(
      {g.OW, Target::maxOf(mx, isa::role::kN0), Target::maxOf(t.dmaStore(), isa::role::kSize0)});
  int64_t thMax = std::min(
      {g.OH, Target::maxOf(mx, isa::role::kN1), Target::maxOf(t.dmaStore(), isa::role::kSize1)});
  if (o.maxTileHeight > 0)
    thMax = std::min(thMax, o.maxTileHeight);
  // The tile of columns `w` with the most rows x blocks that fits.
  auto bestFor = [&](int64_t w) {
    PoolTiling best;
    for (int64_t cbt = std::min(CB, Target::maxOf(t.dmaStore(), isa::role::kSize2)); cbt >= 1;
         --cbt)
      for (int64_t th = thMax; th >= 1; --th) {
        const int64_t rows = D * cbt * (planeRows(g, th, w) + th * w);
        const int64_t hp = (th - 1) * g.sH + (g.KH - 1) * g.dH + 1;
        const int64_t wp = (w - 1) * g.sW + (g.KW - 1) * g.dW + 1;
        if (rows <= t.rows(Mem::Act) &&
            std::min(hp, g.H) <= Target::maxOf(t.dmaLoad(), isa::role::kSize1) &&
            std::min(wp, g.W) <= Target::maxOf(t.dmaLoad(), isa::role::kSize0) &&
            g.sH * wp <= Target::maxOf(t.vecBinary("max"), isa::role::kSrc1S1)) {
          if (th * cbt > best.th * best.cbt)
            best = {cbt, th, w};
          break;
        }
      }
    return best;
  };
  // Whole output rows when one fits; on a small act SRAM, halved column tiles.
  PoolTiling best = bestFor(tw);
  while (best.th == 0 && tw > 1) {
    tw = ceilDiv(tw, 2);
    best = bestFor(tw);
  }
  return best;
}

class MaxPoolLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkInputAndResult(n); !r.empty())
      return r;
    if (n.input(0).dims().size() != 4)
      return "only 2-D pooling (NCHW) runs on the NPU";
    if (n.numResults() != 1)
      return "the indices result of MaxPool is not supported";
    if (n.input(0).type().quant != n.resultType(0).quant)
      return "input and result quantization parameters differ";
    const PoolGeom g = geomOf(n);
    const isa::InstrDesc& ld = t.dmaLoad();
    const int64_t padB =
        std::max<int64_t>(0, (g.OH - 1) * g.sH - g.padT + (g.KH - 1) * g.dH - (g.H - 1));
    const int64_t padR =
        std::max<int64_t>(0, (g.OW - 1) * g.sW - g.padL + (g.KW - 1) * g.dW - (g.W - 1));
    if (g.padT > Target::maxOf(ld, isa::role::kPadTop) ||
        g.padL > Target::maxOf(ld, isa::role::kPadLeft) ||
        padB > Target::maxOf(ld, isa::role::kPadBottom) ||
        padR > Target::maxOf(ld, isa::role::kPadRight))
      return "padding exceeds what dma.ld can pad";
    const isa::InstrDesc& mx = t.vecBinary("max");
    if (g.sW > Target::maxOf(mx, isa::role::kSrc1S0))
      return "stride " + std::to_string(g.sW) + " exceeds the vector stride field";
    if (choose(g, t, 2, CompileOptions{}).th == 0)
      return "one output pixel of the pool does not fit the act SRAM: its window and result "
             "in each of 2 buffers need " +
             std::to_string(2 * (planeRows(g, 1, 1) + 1)) + " act rows (has " +
             std::to_string(t.rows(Mem::Act)) + ")";
    return "";
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const int64_t L = t.lanes(), D = p.depth();
    const PoolGeom g = geomOf(n);
    const PoolTiling tl = choose(g, t, D, ctx.opts);
    const ActView in = ActView::of(ctx.tensor(n.input(0)));
    const ActView out = ActView::of(ctx.tensor(resultOf(n)));
    const int64_t CB = ceilDiv(g.C, L);
    const int64_t inSlot = tl.cbt * planeRows(g, tl.th, tl.tw), outSlot = tl.cbt * tl.th * tl.tw;
    int64_t step = 0;
    for (int64_t b = 0; b < g.N; ++b)
      for (int64_t cb0 = 0; cb0 < CB; cb0 += tl.cbt)
        for (int64_t oy0 = 0; oy0 < g.OH; oy0 += tl.th)
          for (int64_t ox0 = 0; ox0 < g.OW; ox0 += tl.tw, ++step) {
            const int64_t cb1 = std::min(CB, cb0 + tl.cbt), th = std::min(tl.th, g.OH - oy0),
                          tw = std::min(tl.tw, g.OW - ox0);
            const int64_t inA = (step % D) * inSlot, outA = D * inSlot + (step % D) * outSlot;
            const Halo h{oy0 * g.sH - g.padT, (oy0 + th - 1) * g.sH - g.padT + (g.KH - 1) * g.dH,
                         ox0 * g.sW - g.padL, (ox0 + tw - 1) * g.sW - g.padL + (g.KW - 1) * g.dW};
            Step s;
            s.loads = loadHalo(p, in, b, cb0, cb1, g.H, g.W, h, inA, -128);
            const int64_t wp = h.width(), plane = h.lines() * wp, P = th * tw;
            for (int64_t cb = 0; cb < cb1 - cb0; ++cb)
              for (int64_t kh = 0; kh < g.KH; ++kh)
                for (int64_t kw = 0; kw < g.KW; ++kw) {
                  const Program::Walk dst{outA + cb * P, 1, tw};
                  const Program::Walk src{inA + cb * plane + kh * g.dH * wp + kw * g.dW, g.sW,
                                          g.sH * wp};
                  if (kh == 0 && kw == 0)
                    s.computes.push_back(p.vecUnary("copy", Mem::Act, Mem::Act, dst, src, tw, th));
                  else
                    s.computes.push_back(
                        p.vecBinary("max", Mem::Act, Mem::Act, dst, dst, src, tw, th));
                }
            s.stores.push_back(p.dmaStore(
                Mem::Act, outA,
                out.base + uint64_t((b * out.image + cb0 * out.block + oy0 * out.line + ox0) * L),
                tw, th, cb1 - cb0, out.line, out.block));
            p.commitStep(std::move(s));
          }
    LayerInfo info;
    info.tiling = "blocks=" + std::to_string(tl.cbt) + " th=" + std::to_string(tl.th) +
                  " tw=" + std::to_string(tl.tw);
    info.sram[0] = D * (inSlot + outSlot);
    return info;
  }
};

} // namespace

void registerPoolLayers() {
  registerLayer(NodeKind::MaxPool, std::make_shared<MaxPoolLayer>());
  registerLayer(NodeKind::GlobalMaxPool, std::make_shared<MaxPoolLayer>());
}

} // namespace ember::npu
