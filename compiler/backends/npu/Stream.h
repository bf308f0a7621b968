// Row streaming for layers whose operands and result have one NCHWc layout (elementwise
// layers, copies): the tensors are walked as one run of rows, cut into tiles of T rows;
// each step loads T rows of every input into its act slot, computes, and stores T rows.
#pragma once

#include "Layer.h"

#include <functional>

namespace ember::npu {

/// SRAM addresses of one step of a row stream.
struct StreamStep {
  int64_t rows = 0;           ///< Rows in this step (T, or fewer at the end).
  int64_t row0 = 0;           ///< The stream row of the step's first row.
  int64_t tile = 0;           ///< T, the rows of a full tile (acc regions are T apart).
  std::vector<int64_t> inAct; ///< Act row of each input's tile.
  int64_t outAct = 0;         ///< Act row of the result tile.
  bool first = false;         ///< First step of the layer (constants to load).
};

/// A stream of `rows` rows over `inputs` (DRAM byte offsets) into `output`.
struct StreamSpec {
  std::vector<uint64_t> inputs;
  uint64_t output = 0;
  int64_t rows = 0;
  int64_t actReserved = 0; ///< Act rows kept at the bottom for constants.
  int64_t accPerRow = 0;   ///< Acc rows needed per tile row (after accReserved).
  int64_t accReserved = 0;
  /// Adds the constant loads of the first step.
  std::function<void(Step&)> constants;
  /// Adds the compute of one step.
  std::function<void(const StreamStep&, Step&)> compute;
  /// When true the result is the first input's tile itself (no compute output slot).
  bool inPlace = false;
  /// When > 0 the inputs are read in groups of `groupRows` rows that lie
  /// `inGroupStride` rows apart in DRAM (the result stays contiguous): a copy of some
  /// channel blocks of every image. Tiles then hold whole groups.
  int64_t groupRows = 0, inGroupStride = 0;
  /// When > 0 the result is stored in groups of `groupRows` rows (one row when groupRows is
  /// 0), each group `outGroupStride` rows after the previous one in DRAM (a scatter of the
  /// stream's rows or runs; the inputs stay contiguous or grouped).
  int64_t outGroupStride = 0;
  /// When true the input tiles lie a number of rows apart that is not a multiple of the
  /// act banks, so an instruction reading row i of two inputs in one step (qadd) pays no
  /// bank conflict (docs/isa/timing-energy.md section 3).
  bool skewBanks = false;
  /// When set, the stores of each step (whose tile starts at stream row `r0`) instead of
  /// one contiguous or strided store of the tile: a scatter of its rows (upsampling).
  std::function<std::vector<isa::Instruction>(const StreamStep&, int64_t r0)> stores;
};

/// "" when a stream of `nIn` inputs (in place or not) with the given reserved rows gets a
/// tile of at least `minTileRows` rows (a group, StreamSpec::groupRows) from the description's
/// SRAMs at pipeline depth `depth` or, failing that, single-buffered (emitStream then runs
/// the layer at depth 1), else why not, with the single-buffered figures (layers call it in
/// check(), so that a refusal names them).
std::string checkStream(const Target& t, int depth, int64_t nIn, bool inPlace,
                        int64_t actReserved = 0, int64_t accPerRow = 0, int64_t accReserved = 0,
                        int64_t minTileRows = 1);

/// The rows of a full tile of a stream of `nIn` inputs (in place or not) at pipeline depth
/// `depth` with the given reserved rows (0 or less: none fits), the tile emitStream uses.
int64_t streamTileRows(const Target& t, int depth, int64_t nIn, bool inPlace,
                       int64_t actReserved = 0, int64_t accPerRow = 0, int64_t accReserved = 0);

/// Emits the stream (buffer slots follow Program::stepIndex, so several streams may
/// follow each other in one layer); returns the rows per tile (0 if nothing to do) and fills
/// `info`.
int64_t emitStream(const StreamSpec& s, LayerCtx& ctx, LayerInfo& info);

/// A copy of `rows` contiguous rows from DRAM byte `from` to `to` through act (an output
/// that is another value's bytes, a Reshape or Transpose that moves nothing but must land
/// in the output region).
void emitRowCopy(uint64_t from, uint64_t to, int64_t rows, LayerCtx& ctx, LayerInfo& info);

/// `count` runs of `len` rows each, copied through act by DMA with the codes unchanged:
/// run i is read from DRAM byte `from` + i * `inStride` rows and written to DRAM byte `to`
/// + i * `outStride` rows. What Concat, the channel and token selections, the gather and
/// scatter of rows and the spatial Slice copy.
struct RowRuns {
  uint64_t from = 0, to = 0;
  int64_t len = 0, count = 1, inStride = 0, outStride = 0;
};

/// The row streams emitRowRuns emits for `r` at pipeline depth `depth`: one when the runs
/// make one contiguous block of rows on both sides or when a run fits a stream tile
/// (one strided stream: StreamSpec::groupRows / inGroupStride / outGroupStride), else one
/// contiguous copy per run.
int64_t rowRunStreams(const RowRuns& r, const Target& t, int depth);

/// Emits the copy of `r` (rowRunStreams' streams); returns how many streams it emitted.
int64_t emitRowRuns(const RowRuns& r, LayerCtx& ctx, LayerInfo& info);

} // namespace ember::npu
