// MaxPool and GlobalMaxPool (docs/numerics.md section 4.4): per tile of output rows the
// input tile is loaded with its halo (padding -128) and the taps are folded with vmax,
// each a strided walk over the tile (docs/isa/examples.md example 7.3): either directly (the first
// two taps into the output, every other one into it) or separably, when that is fewer
// vector rows (3 x 3 windows): the row maximum of every input line of the tile into a
// temporary, then the column maximum of those into the output. On an act SRAM too small
// for one output pixel's whole window, the window goes in chunks of taps, one step each
// (the chunk's pixels only), the running maximum kept in act between them.
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

/// Rows per tile: the most output rows whose input and output tiles (and, separable,
/// the row maxima) of all channel blocks of `cbt` fit D times in act.
struct PoolTiling {
  int64_t cbt = 0, th = 0, tw = 0;
  bool separable = false;
  int64_t rt = 0; ///< Taps per step (0: the whole window in one step).
};

/// The window as a convolution's geometry, for the tap spans and halos ConvCore computes.
ConvJob windowJob(const PoolGeom& g) {
  ConvJob j;
  j.KH = g.KH, j.KW = g.KW, j.sH = g.sH, j.sW = g.sW, j.dH = g.dH, j.dW = g.dW;
  j.padT = g.padT, j.padL = g.padL;
  return j;
}
/// The kernel span of taps [t0, t1) of the window (tapSpan).
TapSpan spanOf(const PoolGeom& g, int64_t t0, int64_t t1) {
  return tapSpan(windowJob(g), t0, t1);
}
/// The input a th x tw tile reads through the taps of `sp` (may reach into padding).
Halo haloOf(const PoolGeom& g, const TapSpan& sp, int64_t oy0, int64_t th, int64_t ox0,
            int64_t tw) {
  return haloOf(windowJob(g), sp, oy0, th, ox0, tw);
}

/// The whole window's span.
TapSpan wholeWindow(const PoolGeom& g) {
  return {0, g.KH - 1, 0, g.KW - 1};
}
/// Input lines / columns the whole window of th output rows / tw output columns reads.
int64_t haloLines(const PoolGeom& g, int64_t th) {
  return haloExtent(windowJob(g), wholeWindow(g), th, 1).first;
}
int64_t haloWidth(const PoolGeom& g, int64_t tw) {
  return haloExtent(windowJob(g), wholeWindow(g), 1, tw).second;
}
int64_t planeRows(const PoolGeom& g, int64_t th, int64_t tw) {
  return haloLines(g, th) * haloWidth(g, tw);
}

/// Vector instructions folding k taps into one result: one copy, or k - 1 maxima.
int64_t passes(int64_t k) {
  return k == 1 ? 1 : k - 1;
}

/// Whether every walk of the vector instructions (vmax, and vmov when a fold has one tap)
/// fits the description's fields: `n1` row steps, source strides (s0, s1), destination
/// line stride dS1.
bool walksFit(const Target& t, int64_t n0, int64_t n1, int64_t s0, int64_t s1, int64_t dS1) {
  namespace r = isa::role;
  const isa::InstrDesc& mx = t.vecBinary("max");
  const isa::InstrDesc& cp = t.vecUnary("copy");
  return n0 <= std::min(Target::maxOf(mx, r::kN0), Target::maxOf(cp, r::kN0)) &&
         n1 <= std::min(Target::maxOf(mx, r::kN1), Target::maxOf(cp, r::kN1)) &&
         s0 <= std::min({Target::maxOf(mx, r::kSrc0S0), Target::maxOf(mx, r::kSrc1S0),
                         Target::maxOf(cp, r::kSrcS0)}) &&
         s1 <= std::min({Target::maxOf(mx, r::kSrc0S1), Target::maxOf(mx, r::kSrc1S1),
                         Target::maxOf(cp, r::kSrcS1)}) &&
         dS1 <= std::min(Target::maxOf(mx, r::kDstS1), Target::maxOf(cp, r::kDstS1));
}

int64_t actBanks(const Target& t) {
  return int64_t(t.isa().memory(isa::mem::kAct).banks);
}

/// Act rows of one channel block's row maxima: hp lines of up to tw + banks - 1 rows (the
/// line stride is widened so the column pass's two sources fall in different banks) and
/// up to banks - 1 rows of shift.
int64_t rowBlockRows(const PoolGeom& g, const Target& t, int64_t th, int64_t tw) {
  const int64_t banks = actBanks(t);
  return haloLines(g, th) * (tw + banks - 1) + banks - 1;
}

/// Whether a tile of th x tw output pixels can be folded separably (the row pass walks
/// the halo's lines, the column pass the row maxima).
bool separableFits(const PoolGeom& g, const Target& t, int64_t th, int64_t tw) {
  const int64_t ts = tw + actBanks(t) - 1; // the widest line stride of the row maxima
  return walksFit(t, tw, haloLines(g, th), g.sW, haloWidth(g, tw), ts) &&
         walksFit(t, tw, th, 1, g.sH * ts, tw);
}

/// Steps of an n0 x n1 walk of two vector-binary sources whose rows share an act bank
/// (docs/simulator.md rule V1: each costs a cycle with one read port).
int64_t bankConflicts(const Program::Walk& a, const Program::Walk& b, int64_t n0, int64_t n1,
                      int64_t banks) {
  int64_t n = 0;
  for (int64_t l = 0; l < n1; ++l)
    for (int64_t i = 0; i < n0; ++i)
      n += (a.addr + i * a.s0 + l * a.s1 - b.addr - i * b.s0 - l * b.s1) % banks == 0;
  return n;
}

/// Vector rows of the whole layer under tiling `tl` (the cost the choice compares).
int64_t vectorRows(const PoolGeom& g, const Target& t, const PoolTiling& tl) {
  const int64_t CB = ceilDiv(g.C, t.lanes()), tiles = ceilDiv(g.OH, tl.th);
  if (!tl.separable)
    return g.N * CB * g.OH * g.OW * passes(g.KH * g.KW);
  return g.N * CB * g.OW * (g.OH * passes(g.KH) + tiles * haloLines(g, tl.th) * passes(g.KW));
}

PoolTiling choose(const PoolGeom& g, const Target& t, int64_t D, const CompileOptions& o,
                  bool separable) {
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
        const int64_t temp = separable ? rowBlockRows(g, t, th, w) : 0;
        const int64_t rows = D * cbt * (planeRows(g, th, w) + th * w + temp);
        const int64_t hp = haloLines(g, th), wp = haloWidth(g, w);
        if (rows <= t.rows(Mem::Act) &&
            std::min(hp, g.H) <= Target::maxOf(t.dmaLoad(), isa::role::kSize1) &&
            std::min(wp, g.W) <= Target::maxOf(t.dmaLoad(), isa::role::kSize0) &&
            g.sH * wp <= Target::maxOf(t.vecBinary("max"), isa::role::kSrc1S1) &&
            (!separable || separableFits(g, t, th, w))) {
          if (th * cbt > best.th * best.cbt)
            best = {cbt, th, w, separable};
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

/// The window in chunks of rt taps (for an act SRAM too small for a whole window):
/// one block per step, D input and output slots and one running-maximum tile; the
/// fewest steps (tiles x chunks) that fit.
PoolTiling chooseChunked(const PoolGeom& g, const Target& t, int64_t D, const CompileOptions& o) {
  const int64_t taps = g.KH * g.KW, CB = ceilDiv(g.C, t.lanes());
  const isa::InstrDesc& mx = t.vecBinary("max");
  const int64_t twMax = std::min(
      {g.OW, Target::maxOf(mx, isa::role::kN0), Target::maxOf(t.dmaStore(), isa::role::kSize0)});
  int64_t thMax = std::min(
      {g.OH, Target::maxOf(mx, isa::role::kN1), Target::maxOf(t.dmaStore(), isa::role::kSize1)});
  if (o.maxTileHeight > 0)
    thMax = std::min(thMax, o.maxTileHeight);
  PoolTiling best;
  int64_t bestSteps = 0;
  for (int64_t parts = 2; parts <= taps; ++parts) {
    const int64_t rt = ceilDiv(taps, parts);
    if (parts > 2 && rt == ceilDiv(taps, parts - 1))
      continue;
    for (int64_t tw = twMax;; tw = ceilDiv(tw, 2)) {
      for (int64_t th = thMax; th >= 1; --th) {
        int64_t plane = 0;
        bool fields = true;
        for (int64_t t0 = 0; t0 < taps; t0 += rt) {
          const Halo h = haloOf(g, spanOf(g, t0, std::min(taps, t0 + rt)), 0, th, 0, tw);
          plane = std::max(plane, h.lines() * h.width());
          fields = fields &&
                   std::min(h.lines(), g.H) <= Target::maxOf(t.dmaLoad(), isa::role::kSize1) &&
                   std::min(h.width(), g.W) <= Target::maxOf(t.dmaLoad(), isa::role::kSize0) &&
                   walksFit(t, tw, th, g.sW, g.sH * h.width(), tw);
        }
        if (!fields || D * (plane + th * tw) + th * tw > t.rows(Mem::Act))
          continue;
        const int64_t steps = g.N * CB * ceilDiv(g.OH, th) * ceilDiv(g.OW, tw) * parts;
        if (best.th == 0 || steps < bestSteps)
          best = {1, th, tw, false, rt}, bestSteps = steps;
        break;
      }
      if (tw == 1)
        break;
    }
  }
  return best;
}

/// The direct or the separable fold, whichever walks fewer vector rows; the window in
/// chunks when neither fits.
PoolTiling choose(const PoolGeom& g, const Target& t, int64_t D, const CompileOptions& o) {
  const PoolTiling direct = choose(g, t, D, o, false);
  if (direct.th == 0 && g.KH * g.KW > 1)
    return chooseChunked(g, t, D, o);
  if (g.KH < 2 || g.KW < 2)
    return direct;
  const PoolTiling sep = choose(g, t, D, o, true);
  if (sep.th == 0 || (direct.th != 0 && vectorRows(g, t, sep) >= vectorRows(g, t, direct)))
    return direct;
  return sep;
}

/// Vector instructions folding taps `taps` (walks of act rows) into `dst`, n0 x n1 steps:
/// the maximum of the first two taps, then every other one into it (a copy of the first
/// tap instead when there is one tap, or when its walk does not fit vmax's first source,
/// which the direct fold of a re-encoded description may narrow).
void foldMax(const Program& p, const Target& t, std::vector<isa::Instruction>& out,
             const Program::Walk& dst, const std::vector<Program::Walk>& taps, int64_t n0,
             int64_t n1) {
  const isa::InstrDesc& mx = t.vecBinary("max");
  const bool pair = taps.size() > 1 && taps[0].s0 <= Target::maxOf(mx, isa::role::kSrc0S0) &&
                    taps[0].s1 <= Target::maxOf(mx, isa::role::kSrc0S1);
  if (pair)
    out.push_back(p.vecBinary("max", Mem::Act, Mem::Act, dst, taps[0], taps[1], n0, n1));
  else
    out.push_back(p.vecUnary("copy", Mem::Act, Mem::Act, dst, taps[0], n0, n1));
  for (size_t i = pair ? 2 : 1; i < taps.size(); ++i)
    out.push_back(p.vecBinary("max", Mem::Act, Mem::Act, dst, dst, taps[i], n0, n1));
}

/// The separable fold of one channel block: the row maxima of the hp halo lines (input
/// rows from `src`, wp per line) into rows at `rowBase`, then their column maxima into
/// `dst`. The row maxima's line stride (tw .. tw + banks - 1) and shift (0 .. banks - 1)
/// are the ones with the fewest act bank conflicts.
void separableFold(const Program& p, const Target& t, const PoolGeom& g,
                   std::vector<isa::Instruction>& out, const Program::Walk& dst, int64_t src,
                   int64_t rowBase, int64_t hp, int64_t wp, int64_t th, int64_t tw) {
  const int64_t banks = actBanks(t);
  auto plan = [&](int64_t ts, int64_t shift) {
    std::pair<std::vector<Program::Walk>, std::vector<Program::Walk>> w;
    for (int64_t kw = 0; kw < g.KW; ++kw)
      w.first.push_back({src + kw * g.dW, g.sW, wp});
    for (int64_t kh = 0; kh < g.KH; ++kh)
      w.second.push_back({rowBase + shift + kh * g.dH * ts, 1, g.sH * ts});
    return w;
  };
  auto conflicts = [&](int64_t ts, int64_t shift) {
    const auto w = plan(ts, shift);
    const Program::Walk rows{rowBase + shift, 1, ts};
    int64_t n = bankConflicts(w.first[0], w.first[1], tw, hp, banks) +
                bankConflicts(w.second[0], w.second[1], tw, th, banks);
    for (size_t i = 2; i < w.first.size(); ++i)
      n += bankConflicts(rows, w.first[i], tw, hp, banks);
    for (size_t i = 2; i < w.second.size(); ++i)
      n += bankConflicts(dst, w.second[i], tw, th, banks);
    return n;
  };
  int64_t bestTs = tw, bestShift = 0, best = -1;
  for (int64_t ts = tw; banks > 1 && ts < tw + banks; ++ts)
    for (int64_t shift = 0; shift < banks; ++shift)
      if (const int64_t n = conflicts(ts, shift); best < 0 || n < best)
        best = n, bestTs = ts, bestShift = shift;
  const auto w = plan(bestTs, bestShift);
  foldMax(p, t, out, {rowBase + bestShift, 1, bestTs}, w.first, tw, hp);
  foldMax(p, t, out, dst, w.second, tw, th);
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
    if (choose(g, t, 2, CompileOptions{}).th == 0 && choose(g, t, 1, CompileOptions{}).th == 0)
      return "one output pixel of the pool does not fit the act SRAM: one tap, the result and "
             "the running maximum need 3 act rows single-buffered (has " +
             std::to_string(t.rows(Mem::Act)) + "), or a field overflows";
    return "";
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const PoolGeom g = geomOf(n);
    if (p.depth() > 1 && choose(g, t, p.depth(), ctx.opts).th == 0)
      p.setLayerDepth(1); // no tile fits two buffers: single-buffered
    const int64_t L = t.lanes(), D = p.depth();
    const PoolTiling tl = choose(g, t, D, ctx.opts);
    if (tl.rt > 0)
      return emitChunked(n, ctx, g, tl);
    const ActView in = ActView::of(ctx.tensor(n.input(0)));
    const ActView out = ActView::of(ctx.tensor(resultOf(n)));
    const int64_t CB = ceilDiv(g.C, L);
    const int64_t inSlot = tl.cbt * planeRows(g, tl.th, tl.tw), outSlot = tl.cbt * tl.th * tl.tw;
    const int64_t rowRows = tl.separable ? rowBlockRows(g, t, tl.th, tl.tw) : 0;
    const int64_t rowSlot = tl.cbt * rowRows;
    int64_t step = 0;
    for (int64_t b = 0; b < g.N; ++b)
      for (int64_t cb0 = 0; cb0 < CB; cb0 += tl.cbt)
        for (int64_t oy0 = 0; oy0 < g.OH; oy0 += tl.th)
          for (int64_t ox0 = 0; ox0 < g.OW; ox0 += tl.tw, ++step) {
            const int64_t cb1 = std::min(CB, cb0 + tl.cbt), th = std::min(tl.th, g.OH - oy0),
                          tw = std::min(tl.tw, g.OW - ox0);
            const int64_t inA = (step % D) * inSlot, outA = D * inSlot + (step % D) * outSlot;
            const int64_t rowA = D * (inSlot + outSlot) + (step % D) * rowSlot;
            const Halo h = haloOf(g, wholeWindow(g), oy0, th, ox0, tw);
            Step s;
            s.loads = loadHalo(p, in, b, cb0, cb1, g.H, g.W, h, inA, -128);
            const int64_t wp = h.width(), hp = h.lines(), plane = hp * wp, P = th * tw;
            for (int64_t cb = 0; cb < cb1 - cb0; ++cb) {
              const Program::Walk dst{outA + cb * P, 1, tw};
              const int64_t src = inA + cb * plane;
              if (tl.separable) {
                separableFold(p, t, g, s.computes, dst, src, rowA + cb * rowRows, hp, wp, th, tw);
                continue;
              }
              std::vector<Program::Walk> taps;
              for (int64_t kh = 0; kh < g.KH; ++kh)
                for (int64_t kw = 0; kw < g.KW; ++kw)
                  taps.push_back({src + kh * g.dH * wp + kw * g.dW, g.sW, g.sH * wp});
              foldMax(p, t, s.computes, dst, taps, tw, th);
            }
            s.stores.push_back(p.dmaStore(
                Mem::Act, outA,
                out.base + uint64_t((b * out.image + cb0 * out.block + oy0 * out.line + ox0) * L),
                tw, th, cb1 - cb0, out.line, out.block));
            p.commitStep(std::move(s));
          }
    LayerInfo info;
    info.tiling = "blocks=" + std::to_string(tl.cbt) + " th=" + std::to_string(tl.th) +
                  " tw=" + std::to_string(tl.tw) + (tl.separable ? " separable" : "");
    info.sram[0] = D * (inSlot + outSlot + rowSlot);
    return info;
  }

private:
  /// The window in chunks of tl.rt taps, one step each: a chunk's pixels into the step's
  /// input slot, folded into the running maximum (the first chunk starts it, the last
  /// folds it with its taps into the step's output slot, which is stored).
  static LayerInfo emitChunked(const Node& n, LayerCtx& ctx, const PoolGeom& g,
                               const PoolTiling& tl) {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const int64_t L = t.lanes(), D = p.depth(), taps = g.KH * g.KW, CB = ceilDiv(g.C, L);
    const ActView in = ActView::of(ctx.tensor(n.input(0)));
    const ActView out = ActView::of(ctx.tensor(resultOf(n)));
    int64_t inSlot = 0;
    for (int64_t t0 = 0; t0 < taps; t0 += tl.rt) {
      const Halo h = haloOf(g, spanOf(g, t0, std::min(taps, t0 + tl.rt)), 0, tl.th, 0, tl.tw);
      inSlot = std::max(inSlot, h.lines() * h.width());
    }
    const int64_t outSlot = tl.th * tl.tw, runA = D * (inSlot + outSlot);
    int64_t padRow = -1; // a constant row of -128 for chunks wholly in the padding
    int64_t step = 0;
    for (int64_t b = 0; b < g.N; ++b)
      for (int64_t cb = 0; cb < CB; ++cb)
        for (int64_t oy0 = 0; oy0 < g.OH; oy0 += tl.th)
          for (int64_t ox0 = 0; ox0 < g.OW; ox0 += tl.tw)
            for (int64_t t0 = 0; t0 < taps; t0 += tl.rt, ++step) {
              const int64_t t1 = std::min(taps, t0 + tl.rt);
              const int64_t th = std::min(tl.th, g.OH - oy0), tw = std::min(tl.tw, g.OW - ox0);
              const int64_t inA = (step % D) * inSlot, outA = D * inSlot + (step % D) * outSlot;
              const TapSpan sp = spanOf(g, t0, t1);
              const Halo h = haloOf(g, sp, oy0, th, ox0, tw);
              Step s;
              s.loads = loadHalo(p, in, b, cb, cb + 1, g.H, g.W, h, inA, -128,
                                 padRowFor(h, g.H, g.W, -128, ctx, padRow));
              const int64_t wp = h.width();
              std::vector<Program::Walk> walks;
              for (int64_t tap = t0; tap < t1; ++tap)
                walks.push_back(
                    {inA + (tap / g.KW - sp.kh0) * g.dH * wp + (tap % g.KW - sp.kw0) * g.dW, g.sW,
                     g.sH * wp});
              const Program::Walk run{runA, 1, tw}, dst{outA, 1, tw};
              if (t0 == 0) {
                foldMax(p, t, s.computes, run, walks, tw, th);
              } else {
                walks.insert(walks.begin(), run);
                foldMax(p, t, s.computes, t1 == taps ? dst : run, walks, tw, th);
              }
              if (t1 == taps)
                s.stores.push_back(p.dmaStore(Mem::Act, outA, out.at(L, b, cb, oy0, ox0), tw, th, 1,
                                              out.line, out.block));
              p.commitStep(std::move(s));
            }
    LayerInfo info;
    info.tiling = "blocks=1 th=" + std::to_string(tl.th) + " tw=" + std::to_string(tl.tw) +
                  " taps=" + std::to_string(tl.rt);
    info.sram[0] = D * (inSlot + outSlot) + outSlot;
    return info;
  }
};

} // namespace

void registerPoolLayers() {
  registerLayer(NodeKind::MaxPool, std::make_shared<MaxPoolLayer>());
  registerLayer(NodeKind::GlobalMaxPool, std::make_shared<MaxPoolLayer>());
}

} // namespace ember::npu
