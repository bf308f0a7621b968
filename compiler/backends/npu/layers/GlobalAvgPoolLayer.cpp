// GlobalAveragePool (docs/numerics.md section 4.5, n = H * W): a reduction on the MAC
// array. One diagonal block of ones stays in the array; every pixel row of a channel
// block streams through a gemm whose accumulator walk has stride 0, so all of them add
// into one accumulator row (initialised with -zp_x * n, the folded zero point); one gemm
// covers all whole blocks of a step, its outer loop stepping block and accumulator row. Images
// of any size are cut into chunks of rows that accumulate across steps; the last chunk
// requantizes with M, S of s_x / (s_y * n) and stores one row per channel block.
//
// ReduceMean (section 4.5) is the same average when it reduces an [N, C, H, W] value over
// H and W, or a [B, T, C] sequence over its tokens T (a transformer classifier's pooling):
// the sequence's rows of one channel block then lie CB rows apart, and each step gathers
// them by strided DMA into the packed order the gemms walk.
#include "../ConvCore.h"
#include "ember/graph/InferUtil.h"
#include "ember/isa/roles.h"

#include "ember/quantization/Numerics.h"

#include <algorithm>

namespace ember::npu {

namespace {

/// The pixels averaged into each output: rows (image, block, pixel) of the input at
/// base + (image * imageRows + block * blockRows + pixel * pixelRows) rows of L bytes.
struct PoolRows {
  int64_t N = 1, CB = 0, HW = 0;
  int64_t imageRows = 0, blockRows = 0, pixelRows = 0;
};

/// The rows a GlobalAveragePool or ReduceMean averages, or nullopt when the NPU has no
/// such average (a ReduceMean over other axes).
std::optional<PoolRows> poolRowsOf(const Node& n, int64_t L) {
  const Shape& x = n.input(0).dims();
  PoolRows r;
  if (x.size() == 4 && (n.kind() == NodeKind::GlobalAveragePool ||
                        reducedAxes(n.attrs(), 4) == std::vector<bool>{false, false, true, true})) {
    r.N = x[0];
    r.CB = ceilDiv(x[1], L);
    r.HW = x[2] * x[3];
    r.imageRows = r.CB * r.HW;
    r.blockRows = r.HW;
    r.pixelRows = 1;
    return r;
  }
  if (x.size() == 3 && n.kind() == NodeKind::ReduceMean &&
      reducedAxes(n.attrs(), 3) == std::vector<bool>{false, true, false}) {
    r.N = x[0];
    r.CB = ceilDiv(x[2], L);
    r.HW = x[1];
    r.imageRows = r.HW * r.CB;
    r.blockRows = 1;
    r.pixelRows = r.CB;
    return r;
  }
  return std::nullopt;
}

/// Loads rows [r0, r0 + nr) of image b's blocks from cb0 on, in the packed order the
/// gemms walk ((cb - cb0) * HW + pixel), into act row `slot`: one run when the blocks'
/// pixels are contiguous, else each block's run of pixels, pixelRows apart.
std::vector<isa::Instruction> loadPoolRows(const Program& p, const PoolRows& pr, uint64_t base,
                                           int64_t b, int64_t cb0, int64_t r0, int64_t nr,
                                           int64_t slot, int64_t L) {
  const int64_t HW = pr.HW;
  if (pr.pixelRows == 1)
    return p.loadRows(Mem::Act, slot, base + uint64_t((b * pr.imageRows + cb0 * HW + r0) * L), nr);
  std::vector<isa::Instruction> out;
  for (int64_t i = 0; i < nr;) {
    const int64_t r = r0 + i, cb = cb0 + r / HW, px = r % HW, len = std::min(nr - i, HW - px);
    const uint64_t at =
        base + uint64_t((b * pr.imageRows + cb * pr.blockRows + px * pr.pixelRows) * L);
    for (auto& in : p.loadGroups(Mem::Act, slot + i, at, 1, len, pr.pixelRows))
      out.push_back(in);
    i += len;
  }
  return out;
}

/// The constants of an average: a diagonal block of ones (the gemms' weights), the bias
/// row -zp_x * n and the requantization's M and S rows (of s_x / (s_y * n)).
struct PoolConsts {
  uint64_t eye = 0, bias = 0, q = 0;
};

/// Adds the constants of an average of `HW` pixels of `tx` into `ty` (in the order eye,
/// bias, M and S).
PoolConsts poolConsts(const DramTensor& tx, const DramTensor& ty, int64_t HW, LayerCtx& ctx) {
  const int64_t L = ctx.t.lanes();
  PoolConsts c;
  std::vector<uint8_t> eye(size_t(L * L), 0);
  for (int64_t k = 0; k < L; ++k)
    eye[size_t(k * L + k)] = 1;
  c.eye = ctx.consts.add(eye);
  const uint32_t bias = 0u - static_cast<uint32_t>(int64_t(tx.zp) * HW);
  c.bias = ctx.consts.addInt32(std::vector<int32_t>(size_t(L), static_cast<int32_t>(bias)));
  const quant::Multiplier m = quant::averageMultiplier(tx.scale, ty.scale, HW);
  std::vector<int32_t> q(size_t(2 * L));
  for (int64_t l = 0; l < L; ++l) {
    q[size_t(l)] = m.M;
    q[size_t(L + l)] = m.S;
  }
  c.q = ctx.consts.addInt32(q);
  return c;
}

/// The gemms adding act rows [slot, slot + nr) (rows r0.. of the step's blocks, HW per
/// block, block cb's into accumulator row cb) into their accumulators. Whole blocks go
/// in one gemm whose outer loop steps to the next block and accumulator row (the same
/// weight block each time) when the description's fields allow, so the array's fill,
/// drain and first weight load are paid once per step, not once per block.
void addPoolGemms(const Program& p, const isa::InstrDesc& g, int64_t slot, int64_t r0, int64_t nr,
                  int64_t HW, Step& s) {
  const auto whole = Program::rowChunks(g, HW);
  const int64_t maxBlocks = whole.size() == 1 && HW <= Target::maxOf(g, isa::role::kActS2) &&
                                    Target::maxOf(g, isa::role::kAccS2) >= 1
                                ? Target::maxOf(g, isa::role::kN2)
                                : 1;
  for (int64_t i = 0; i < nr;) {
    const int64_t r = r0 + i, cb = r / HW, left = std::min(nr - i, (cb + 1) * HW - r);
    if (const int64_t k = std::min(maxBlocks, (nr - i) / HW); r % HW == 0 && k >= 2) {
      Program::GemmLoops gl;
      gl.act = slot + i;
      gl.acc = cb;
      gl.n0 = whole[0][1];
      gl.n1 = whole[0][2];
      gl.n2 = k;
      gl.actS1 = whole[0][1];
      gl.actS2 = HW;
      gl.accS0 = gl.accS1 = 0; // every row adds into the block's accumulator
      gl.accS2 = 1;
      s.computes.push_back(p.gemm(gl));
      i += k * HW;
      continue;
    }
    for (const auto& c : Program::rowChunks(g, left)) {
      Program::GemmLoops gl;
      gl.act = slot + i + c[0];
      gl.acc = cb;
      gl.n0 = c[1];
      gl.n1 = c[2];
      gl.actS1 = c[1];
      gl.accS0 = gl.accS1 = 0;
      s.computes.push_back(p.gemm(gl));
    }
    i += left;
  }
}

/// Channel blocks averaged per step (cbt): all of them, as far as acc holds their
/// accumulators beside the bias row, act an input row and cbt output rows per buffer, and
/// the store's, copy's and requant's count fields reach.
int64_t poolBlocksPerStep(const Target& t, int64_t CB, int64_t D) {
  return std::min({CB, std::max<int64_t>(1, t.rows(Mem::Acc) - 1), t.rows(Mem::Act) / D - 1,
                   Target::maxOf(t.dmaStore(), isa::role::kSize0),
                   Target::maxOf(t.vecUnary("copy"), isa::role::kN0),
                   Target::maxOf(t.requant(), isa::role::kN0)});
}

class GlobalAvgPoolLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkInputAndResult(n); !r.empty())
      return r;
    if (!poolRowsOf(n, t.lanes()))
      return n.kind() == NodeKind::ReduceMean
                 ? "only a mean over an NCHW value's H and W or a [B, T, C] sequence's T runs "
                   "on the NPU"
                 : "only NCHW values are pooled on the NPU";
    quant::averageMultiplier(scaleOf(n.input(0)), n.resultType(0).quant.scales.at(0), 1);
    // One input row and one output row (single-buffered on the smallest SRAMs); one
    // accumulator (the bias loaded into it when there is no row for it beside).
    if (t.rows(Mem::Act) < 2 || t.rows(Mem::Acc) < 1)
      return "one channel block needs 2 act rows (has " + std::to_string(t.rows(Mem::Act)) +
             ") and 1 acc row (has " + std::to_string(t.rows(Mem::Acc)) + ")";
    return "";
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    // Single-buffered when act holds no input and output row per buffer, or acc no bias
    // row beside the accumulator (the bias then goes by DMA into the accumulator, which
    // must not happen while the previous step still adds into it).
    if (t.rows(Mem::Act) < 2 * p.depth() || t.rows(Mem::Acc) < 2)
      p.setLayerDepth(1);
    const bool biasDma = t.rows(Mem::Acc) < 2;
    const int64_t L = t.lanes(), D = p.depth();
    const NodeValue x = n.input(0), y = resultOf(n);
    const DramTensor& tx = ctx.tensor(x);
    const DramTensor& ty = ctx.tensor(y);
    const PoolRows pr = *poolRowsOf(n, L);
    const int64_t HW = pr.HW, CB = pr.CB;
    const PoolConsts pc = poolConsts(tx, ty, HW, ctx);
    const quant::Bounds bd = quant::activationBounds(n, y.type().quant);
    // Acc: rows [0, cbt) accumulators of one image, row cbt the bias. Act: D slots of
    // T rows, then D output slots of cbt rows (at least one input row per slot).
    const int64_t cbt = poolBlocksPerStep(t, CB, D);
    const int64_t outBase = t.rows(Mem::Act) - D * cbt;
    const int64_t T = std::min(HW * cbt, outBase / D);
    bool first = true;
    for (int64_t b = 0; b < pr.N; ++b)
      for (int64_t cb0 = 0; cb0 < CB; cb0 += cbt) {
        const int64_t cb1 = std::min(CB, cb0 + cbt);
        // Rows of blocks cb0..cb1 of image b are contiguous: (cb - cb0) * HW + pixel.
        const int64_t rows = (cb1 - cb0) * HW;
        for (int64_t r0 = 0; r0 < rows; r0 += T) {
          const int64_t nr = std::min(T, rows - r0);
          const int64_t slot = (p.stepIndex() % D) * T;
          Step s;
          if (first) {
            for (auto& in : p.loadRows(Mem::Weight, 0, pc.eye, 1))
              s.loads.push_back(in);
            if (!biasDma)
              for (auto& in : p.loadRows(Mem::Acc, cbt, pc.bias, 1))
                s.loads.push_back(in);
            for (auto& in : p.loadRows(Mem::Param, 0, pc.q, 2))
              s.loads.push_back(in);
            first = false;
          }
          for (auto& in : loadPoolRows(p, pr, tx.offset, b, cb0, r0, nr, slot, L))
            s.loads.push_back(in);
          if (r0 == 0 && biasDma)
            s.loads.push_back(p.dmaLoad(Mem::Acc, 0, pc.bias, 1, cb1 - cb0, 1, 0, 0));
          else if (r0 == 0)
            s.computes.push_back(
                p.vecUnary("copy", Mem::Acc, Mem::Acc, {0, 1, 1}, {cbt, 0, 0}, cb1 - cb0, 1));
          addPoolGemms(p, t.gemm(), slot, r0, nr, HW, s);
          if (r0 + nr == rows) {
            const int64_t out = outBase + (p.stepIndex() % D) * cbt;
            s.computes.push_back(
                p.requant({out, 1, 1}, {0, 1, 1}, 0, ty.zp, bd.lo, bd.hi, cb1 - cb0, 1));
            // The result's rows: (image, block) in order, whichever its rank.
            for (auto& in :
                 p.storeRows(Mem::Act, out, ty.offset + uint64_t((b * CB + cb0) * L), cb1 - cb0))
              s.stores.push_back(in);
          }
          p.commitStep(std::move(s));
        }
      }
    LayerInfo info;
    info.macs = pr.N * tx.C * HW;
    info.tiling = "rows/step=" + std::to_string(T) + " blocks=" + std::to_string(cbt) +
                  (biasDma ? " bias-dma" : "");
    info.sram[0] = D * T + D * cbt;
    info.sram[1] = 1;
    info.sram[2] = cbt + (biasDma ? 0 : 1);
    info.sram[3] = 2;
    return info;
  }
};

} // namespace

void registerGlobalAvgPoolLayers() {
  registerLayer(NodeKind::GlobalAveragePool, std::make_shared<GlobalAvgPoolLayer>());
  registerLayer(NodeKind::ReduceMean, std::make_shared<GlobalAvgPoolLayer>());
}

} // namespace ember::npu
