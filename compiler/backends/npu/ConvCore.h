// The convolution engine every MAC-array layer goes through: Conv (any kernel, stride,
// padding, dilation, groups, depthwise), Gemm / MatMul with constant weights (1x1
// convolutions) and the average pools (depthwise convolutions with weights 1).
//
// Loop order (weight-stationary): for each tile of output-channel blocks (kt blocks of
// L channels, weights, biases and requantization rows loaded once), for each image and
// spatial tile (th output rows x tw output columns): load the input tile with its halo
// (padding = zp_x), initialise the accumulators with the zp-folded bias, one gemm per
// (output block, input block, kernel row), requantize into the output buffer, store.
// With a bias requantize (Target::biasInRequant) nothing initialises the accumulators:
// each block's first gemm overwrites them and the requantize adds the bias.
//
// Reduction tiling: when the weights of a tile's output blocks do not fit the weight
// SRAM at once, the reduction (input-channel blocks x kernel taps) is cut into chunks of
// rb input blocks (or, with rb = 1, of rt kernel taps of one block). Each chunk is one
// pipeline step loading its own weights and input blocks; the partial sums stay in the
// accumulator SRAM from the first chunk (which initialises them with the bias) to the
// last (which requantizes and stores). docs/compiler/npu-layers.md has the details.
#pragma once

#include "Layer.h"

#include "ember/quantization/Numerics.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ember::npu {

/// Row addressing of an activation in DRAM: row of (n, cb, y, x) = base row +
/// n * image + cb * block + y * line + x (rows of L bytes).
struct ActView {
  uint64_t base = 0; ///< Byte offset of row (0, 0, 0, 0).
  int64_t image = 0, block = 0, line = 0;
  static ActView of(const DramTensor& t) { return {t.offset, t.CB * t.H * t.W, t.H * t.W, t.W}; }
  /// Byte address of row (n, cb, y, x) with rows of L bytes.
  uint64_t at(int64_t L, int64_t n, int64_t cb, int64_t y, int64_t x) const {
    return base + uint64_t((n * image + cb * block + y * line + x) * L);
  }
};

/// A residual Add fused into a job's epilogue (docs/compiler/npu-layers.md): after a tile
/// is requantized into y, one quantized-add per row run adds the same tile of `view`
/// (the Add's other operand, the output's shape) and the tile stores the Add's result
/// to ConvJob::out. The intermediate y never reaches DRAM.
struct ResidualAdd {
  ActView view;
  std::vector<int32_t> params; ///< The qadd's two param rows (qaddParamRows).
};

/// An activation that is a function of one int8 value (a Lut node: h-swish, SiLU,
/// sigmoid, ...) fused into a job's epilogue (docs/compiler/npu-layers.md, "Activations
/// fused into the requantize"): after a tile is requantized into y, one `lut` per output
/// block maps y to T[y + 128] in place, and the tile stores the Lut's result to
/// ConvJob::out. The table is loaded once, in the layer's first step, at the param rows of
/// the first table the lut instruction selects above the job's M, S (and qadd) rows.
struct EpilogueLut {
  std::vector<uint8_t> table; ///< 256 entries, T[x + 128] (empty in a job only checked).
  int32_t zp = 0; ///< The Lut result's zero point (a resident output's border holds it).
};

/// One convolution as the NPU computes it.
struct ConvJob {
  int64_t N = 1, C = 0, H = 1, W = 1; ///< Input.
  int64_t K = 0, OH = 1, OW = 1;      ///< Output.
  int64_t KH = 1, KW = 1, sH = 1, sW = 1, dH = 1, dW = 1, padT = 0, padL = 0, group = 1;
  ActView in, out;
  std::vector<int8_t> w;               ///< [K][C / group][KH][KW]
  std::vector<int32_t> bias;           ///< [K] (before folding the input zero point)
  int32_t zpIn = 0;                    ///< Also the padding value.
  std::vector<quant::Multiplier> mult; ///< [K]
  int32_t zpOut = 0, lo = -128, hi = 127;
  int64_t macs = 0; ///< Useful MACs (for the summary).
  /// Per output block, the input blocks [first, second) it reads, when not those of its
  /// group (a channel-moving job such as an unaligned Concat, whose weights pick lanes).
  std::vector<std::pair<int64_t, int64_t>> blocks;
  /// The fused residual Add, if any (its params are empty in a job built only to check
  /// or price a tiling).
  std::optional<ResidualAdd> residual;
  /// The fused Lut activation, if any (never with a residual).
  std::optional<EpilogueLut> lut;
  /// Cross-layer residency (Layer.h): the input is read from the act SRAM (no input
  /// loads) / the output is written there (no stores); tiles use the act rows below it.
  std::optional<ActResident> inRes, outRes;
  /// True when every output block reads the same input blocks.
  bool uniformBlocks() const { return group == 1 && blocks.empty(); }
};

/// A tiling of a ConvJob.
struct ConvTiling {
  int64_t kt = 1, th = 1, tw = 1; ///< Output-channel blocks, rows and columns per tile.
  /// Reduction chunks: input-channel blocks per chunk (0: the whole reduction of a tile
  /// in one chunk, no partial sums) and, when rb == 1, kernel taps per chunk (0: all).
  int64_t rb = 0, rt = 0;
  /// With tap chunks (rt > 0): each chunk loads only the input lines and columns its own
  /// taps read (tapSpan) instead of the tile's whole halo. Far fewer act rows (a 7x7
  /// kernel's one-tap chunk of one output pixel reads one pixel, not 49), so act SRAMs
  /// too small for a whole window still compile; the cost model decides otherwise.
  bool tapHalo = false;
  /// The accumulators start from the bias by a dma.ld (one bias row repeated over the
  /// tile's pixels, on the load engine) rather than a vmov on the compute engine; they
  /// are then double-buffered like the act tiles (a buffer per tile, which all the
  /// tile's reduction chunks add into).
  bool biasDma = false;
  /// With biasDma, the output blocks of a tile whose bias the load engine writes: the
  /// first `biasDmaBlocks` (0: all); the others get theirs by a vmov from a bias slot, as
  /// without biasDma. Splitting the bias between the DRAM channel (two beats an int32 acc
  /// row) and the vector unit (one cycle a row, beside the requantize) balances the two
  /// where either alone would pace the layer (a thin 1x1 convolution, a depthwise one).
  int64_t biasDmaBlocks = 0;
  /// Output blocks among the first `ktl` of a tile whose bias comes by DMA.
  int64_t dmaBiasBlocks(int64_t ktl) const {
    return biasDma ? (biasDmaBlocks > 0 ? std::min(biasDmaBlocks, ktl) : ktl) : 0;
  }
  /// The share of the accumulators' bias rows that come by DMA.
  double dmaBiasShare() const { return double(dmaBiasBlocks(kt)) / double(kt); }
  /// True when some output blocks take their bias by vmov from a bias slot.
  bool biasByCopy() const { return !biasDma || (biasDmaBlocks > 0 && biasDmaBlocks < kt); }
  /// A depthwise job on the description's depthwise instruction (docs/isa/instructions.md section
  /// 2.12): one weight block per output block (row t = tap t), one instruction per output
  /// block and tile, no reduction chunks. Else depthwise runs as diagonal gemm blocks.
  bool dw = false;
  /// With dw: kernel rows per depthwise instruction (depthwiseRows); a kernel of more taps
  /// than the array has rows takes one instruction per group of rows, each with its own
  /// weight block, adding into the same accumulators.
  int64_t dwRows = 0;
  /// Depthwise instructions (and weight blocks) per output block.
  int64_t dwGroups(const ConvJob& j) const { return dwRows > 0 ? ceilDiv(j.KH, dwRows) : 1; }
  /// The lut table a fused Lut (ConvJob::lut) uses, at param rows from lutRow; -1: none.
  int64_t lutTable = -1, lutRow = 0;
  /// Pipeline depth of the layer: the program's, or 1 when no tiling fits its SRAMs
  /// twice (the layer then runs single-buffered, Program::setLayerDepth).
  int depth = 2;
  double cycles = 0; ///< Cost-model estimate.
  int64_t actRows = 0, wgtRows = 0, accRows = 0, paramRows = 0;
  int64_t inRows = 0; ///< Act rows of one buffer's input tile (the largest chunk's).
  /// True when the reduction is cut into chunks (partial sums in the accumulators).
  bool splitsReduction() const { return rb > 0; }
};

/// The dma.ld instructions that start a tile's accumulators from the bias (tiling `c`
/// with biasDma, its B = dmaBiasBlocks(kt) blocks): ceil(B / size2) when the tile's th * tw
/// pixels fit size1 (one bias row repeated by stride1 0, the next block's by stride2 1),
/// else B (one per output block, th x tw repeats by strides 0, 0) when tw fits size1 and
/// th size2; 0 when neither fits.
int64_t biasDmaLoads(const Target& t, const ConvTiling& c);

/// One chunk of the reduction of the output blocks [kb0, kb1): input blocks
/// [cbLo, cbHi) and kernel taps [t0, t1) (tap = kh * KW + kw).
struct ReductionChunk {
  int64_t cbLo = 0, cbHi = 0, t0 = 0, t1 = 0;
  int64_t weights = 0; ///< Weight blocks of all output blocks of the tile in this chunk.
};

/// Whether `j` can run on the description's depthwise instruction: one input channel
/// per output channel (group = C = K), one kernel row's taps at most the MAC array's rows.
bool depthwiseJob(const ConvJob& j, const Target& t);

/// Kernel rows of `j` one depthwise instruction takes: as many whole rows as the array
/// has rows for (all KH when KH x KW taps fit), at most the kh field's; 0 without one.
int64_t depthwiseRows(const ConvJob& j, const Target& t);

/// Cycles one output of depthwise job `j` takes over all its kernel-row groups (rule DW1)
/// when its input lines lie `pitch` act rows apart: the bank conflicts of its taps.
double depthwiseTapCost(const ConvJob& j, const Target& t, int64_t pitch);

/// Extra act rows (at most `room`, fewer than the act banks) to put between the lines of
/// a depthwise tile `width` rows wide so that the window's taps fall in the fewest rows
/// of one bank (rule DW1); 0 when none does better. The tile's input is loaded that much
/// wider (image columns, or padding past the image's right edge), which no tap reads: a
/// 7-wide tile of a 3 x 3 window (lines 9 rows apart, two taps in a bank of ember-v1's 16)
/// loaded 10 wide takes one cycle an output instead of two.
int64_t depthwisePitchPad(const ConvJob& j, const Target& t, int64_t width, int64_t room);

/// The chunks of output blocks [kb0, kb1) under tiling `c` (one chunk unless
/// c.splitsReduction()); chunks no output block reads are left out.
std::vector<ReductionChunk> reductionChunks(const ConvJob& j, int64_t L, int64_t kb0, int64_t kb1,
                                            const ConvTiling& c);

/// Input blocks of output block `kb` inside `ch`: [first, second) (empty if none).
std::pair<int64_t, int64_t> chunkBlocks(const ConvJob& j, int64_t L, int64_t kb,
                                        const ReductionChunk& ch);

/// The input rows/columns a tile reads, [y0, y1] x [x0, x1] (may reach into padding).
struct Halo {
  int64_t y0, y1, x0, x1;
  int64_t lines() const { return y1 - y0 + 1; }
  int64_t width() const { return x1 - x0 + 1; }
};

/// The kernel rows [kh0, kh1] and columns [kw0, kw1] that taps [t0, t1) touch: one row's
/// columns when the taps lie in one kernel row, else every column of their rows.
struct TapSpan {
  int64_t kh0, kh1, kw0, kw1;
};
TapSpan tapSpan(const ConvJob& j, int64_t t0, int64_t t1);

/// The span a chunk's input tile covers under tiling `c`: the chunk's own (tapHalo, which
/// only tap chunks set), else the whole kernel.
TapSpan chunkSpan(const ConvJob& j, const ConvTiling& c, const ReductionChunk& ch);

/// The input lines x columns of a tile of th x tw output pixels whose taps cover `s`.
std::pair<int64_t, int64_t> haloExtent(const ConvJob& j, const TapSpan& s, int64_t th, int64_t tw);

/// The input a tile of output pixels [oy0, oy0 + th) x [ox0, ox0 + tw) reads through the
/// taps of `s`.
Halo haloOf(const ConvJob& j, const TapSpan& s, int64_t oy0, int64_t th, int64_t ox0, int64_t tw);

/// dma.ld instructions bringing input blocks [cbA, cbB) of image `n` (H x W pixels) for
/// `h` into act row `sramAddr` (packed: block, line, pixel), positions outside the image
/// filled with `padValue`. A halo entirely outside the image (a tap chunk of a border
/// tile) has no line to pad around: it is filled by repeating the constant row at DRAM
/// byte `padRow` (every byte `padValue`), which the caller must then give (>= 0).
std::vector<isa::Instruction> loadHalo(const Program& p, const ActView& in, int64_t n, int64_t cbA,
                                       int64_t cbB, int64_t H, int64_t W, const Halo& h,
                                       int64_t sramAddr, int64_t padValue, int64_t padRow = -1);

/// loadHalo's `padRow` for halo `h` of an H x W image: a constant act row of `value`,
/// added to the layer's constants the first time a halo lies wholly outside the image and
/// kept in `row` (-1 until then), which is returned.
int64_t padRowFor(const Halo& h, int64_t H, int64_t W, int32_t value, LayerCtx& ctx, int64_t& row);

/// A 1x1 convolution over N images of H x W pixels and C channels whose output channel k
/// is input channel src[k], codes unchanged: one-hot weights, multiplier 1 and the zero
/// point `zp` folded into the bias (zp + (x - zp) = x); each output block reads only the
/// input blocks its channels come from (ConvJob::blocks). How the NPU moves channels
/// across lanes (DMA moves whole rows); the caller sets the DRAM views.
ConvJob laneMoveJob(int64_t N, int64_t H, int64_t W, int64_t C, const std::vector<int64_t>& src,
                    int64_t L, int32_t zp);

/// Act rows of one buffer's residual tile of a job with a fused residual Add (0
/// without): `outRows`, plus one when needed so that the residual and output tiles lie in
/// different act banks row by row (no qadd bank conflicts).
int64_t residualRows(const ConvJob& j, const Target& t, int64_t outRows);

/// Input-channel block range [first, second) that output block `kb` reads.
std::pair<int64_t, int64_t> inputBlocks(const ConvJob& j, int64_t L, int64_t kb);

/// "" when the job fits the NPU's fields at all (some tiling exists at `depth` or, failing
/// that, single-buffered, if need be with the reduction in chunks of one kernel tap),
/// else why not with the figures it needs single-buffered.
std::string checkConvJob(const ConvJob& j, const Target& t, int depth);

/// The cheapest tiling under every SRAM's capacity (docs/isa/timing-energy.md section 3 formulas)
/// at pipeline depth `depth`, or at depth 1 when none fits (ConvTiling::depth).
ConvTiling chooseConvTiling(const ConvJob& j, const Target& t, int depth,
                            const CompileOptions& opts);
/// Up to `n` good tilings for emission on trial (emitConv): chooseConvTiling's first,
/// then the cost model's next best with the step's tail deferred into the next step and
/// with it joined, alternately. The cost model prices a tile in closed form; which of its
/// close candidates is fastest only the emitted program's estimate tells.
std::vector<ConvTiling> convTilingCandidates(const ConvJob& j, const Target& t, int depth,
                                             const CompileOptions& opts, size_t n);

/// Whether a tile's gemms should walk the `blocks` input blocks in their n2 loop (one
/// gemm per kernel tap, act_s2 = the tile's `plane`) rather than the kernel columns (one
/// gemm per input block and kernel row): the fewer gemms, the less weight-load, fill
/// and drain overhead (docs/isa/timing-energy.md section 3), when the stride fields allow it.
bool gemmBlocksInner(const ConvJob& j, const Target& t, int64_t blocks, int64_t plane);

/// "" when `j` (built without data) can take a fused residual Add: the description has a
/// quantized-add and some tiling fits with the residual tiles; else why not.
std::string checkResidualJob(ConvJob j, const Target& t);

/// When ctx.residualAdd is set, makes `j` (whose result is `result`) write that Add's
/// result: sets ConvJob::residual (the other operand and the qadd's scalars) and
/// ConvJob::out, both addressed as `view` addresses a tensor (the job's own convention).
void attachResidual(ConvJob& j, const NodeValue& result, LayerCtx& ctx,
                    ActView (*view)(const DramTensor&) = &ActView::of);

/// "" when `j` (built without data) can take a fused Lut activation in its epilogue (some
/// tiling fits with the table in the param SRAM, every lut field holds the tile's walk);
/// else why not.
std::string checkLutJob(ConvJob j, const Target& t);

/// When ctx.epilogueLut is set, makes `j` write that Lut's result: sets ConvJob::lut (the
/// table) and ConvJob::out, addressed as `view` addresses a tensor.
void attachLut(ConvJob& j, LayerCtx& ctx, ActView (*view)(const DramTensor&) = &ActView::of);

/// The first table the description's lut instruction selects whose param rows start at or
/// above row `from`, or -1 when its table field cannot reach one inside the param SRAM.
int64_t lutTableFrom(const Target& t, int64_t from);
/// Param row of table `table` of the lut instruction (properties.table_offset honoured).
int64_t lutTableRow(const Target& t, int64_t table);
/// Param rows a 256-entry table takes.
int64_t lutTableRows(const Target& t);

/// Emits the job as steps of the current layer; returns the summary figures.
LayerInfo emitConv(const ConvJob& j, LayerCtx& ctx);

} // namespace ember::npu
