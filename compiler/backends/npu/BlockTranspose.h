// Transposing int8 values on the NPU, whose DMA moves whole rows of L lanes only: the MAC
// array transposes a block of L x L values when the block is its weights and the
// activations are the identity (accumulator row p of the gemm is column p of the
// block). A Transpose that moves the channel axis, and the right operand of a MatMul of
// two activations (which the array needs as weight blocks, transposed), go through it.
#pragma once

#include "Layer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ember::npu {

/// G groups of R rows of Cl values each (value (g, r, c) in the DRAM row g * gStride + r *
/// rStride + c / L of `src`, lane c % L), transposed into G groups of Cl rows of R values.
struct BlockTransposeJob {
  int64_t G = 1, R = 0, Cl = 0;
  uint64_t src = 0;                 ///< Byte offset of row (0, 0, block 0).
  int64_t gStride = 0, rStride = 0; ///< Rows between groups, and between rows r.
  /// Where the result goes: false, the rows of a [G, Cl, R] value at `dst` (NCHWc, lanes
  /// of r beyond R zero); true, weight blocks for the MAC array at `dst`, block (g, cb, rb)
  /// (cb over Cl, rb over R) the L rows starting at byte ((g * CBl + cb) * RB + rb) * L * L,
  /// row p holding value (g, rb * L + i, cb * L + p) in lane i (zero for i beyond R).
  bool toWeights = false;
  uint64_t dst = 0;
  int64_t blocks(int64_t L) const { return G * ceilDiv(R, L) * ceilDiv(Cl, L); }
};

/// A row of L int32: `v` in lanes below `valid`, `rest` in the others (constant rows
/// whose last block of channels is partial).
std::vector<int32_t> laneRow(int64_t L, int64_t valid, int32_t v, int32_t rest);

/// The block transposition of Transpose node `n` when it moves the channels ([G, R, C] ->
/// [G, C, R], perm 0, 2, 1; [A, B, C] -> [B, C, A], perm 1, 2, 0; a matrix), without its
/// DRAM addresses (the strides count rows of L lanes); nullopt for other transposes.
std::optional<BlockTransposeJob> transposeJobOf(const Node& n, int64_t L);

/// DRAM scratch bytes the job needs (its blocks gathered into contiguous rows).
inline uint64_t blockTransposeScratch(const BlockTransposeJob& j, int64_t L) {
  return uint64_t(j.blocks(L) * L * L);
}

/// SRAM rows the transposition needs at pipeline depth D: act the identity and D output
/// blocks, weight D blocks, acc one block, param two multiplier/shift pairs.
SramRows blockTransposeRows(int64_t L, int64_t D);

/// SRAM rows emitBlockGather needs at depth D (blocks with padding lanes): act D input
/// and D output blocks, weight the identity, acc one block, param two pairs.
SramRows blockGatherRows(int64_t L, int64_t D);

/// "" when the transposition (with `gather`, also emitBlockGather) fits the SRAMs at
/// depth D, else why not with the figures.
std::string checkBlockTranspose(const Target& t, int D, bool gather = false);

/// The job's blocks untransposed, as weight blocks at j.dst (j.toWeights): block (g, rb,
/// cb) at byte ((g * RB + rb) * CBl + cb) * L * L holds value (g, rb * L + p, cb * L + c)
/// at byte p * L + c, lanes c beyond Cl zero (rows p beyond R unspecified). A MatMul whose b is
/// such a transpose of a value X needs exactly X's rows as its weights (ActMatMul.cpp): one pass of
/// DMA when Cl fills whole blocks, else each block through the array against the identity weights
/// (a copy whose requantize zeroes the padding lanes).
void emitBlockGather(const BlockTransposeJob& j, LayerCtx& ctx, LayerInfo& info);

/// Emits the job in two passes separated by a barrier (gather each block's rows into
/// `scratch`, then transpose each block through the array); the caller places a barrier
/// before reading the result.
void emitBlockTranspose(const BlockTransposeJob& j, uint64_t scratch, LayerCtx& ctx,
                        LayerInfo& info);

} // namespace ember::npu
