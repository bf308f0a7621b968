// Element-wise binary layers whose second operand may be per channel: `a` full, `b`
// either of a's shape, [N, C, 1, 1] (one value per image and channel, as squeeze-and-
// excitation gates and per-channel offsets are) or a constant scalar (attention's scaling
// of its queries by 1 / sqrt(head_dim)). In NCHWc such a b has one row per (image,
// channel block), which the combining vector instruction walks with stride 0 over the
// pixels of the plane; a scalar is one constant row of its code in every lane, walked
// with stride 0 over the whole tensor. Mul and broadcasting Add share this loop.
#pragma once

#include "Layer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::npu {

/// What distinguishes one binary layer: acc = op(f(a - zp_a), f(b - zp_b)) with f an
/// optional multiply by an acc constant row, then requant with a param row pair.
struct BinaryOp {
  std::string combine;        ///< Vector-binary op joining the operands: "add" or "mul".
  bool scaleOperands = false; ///< vmul each operand by its multiplier row (Add's M_a, M_b).
  int32_t Ma = 0, Mb = 0;     ///< The multiplier rows' values when scaleOperands.
  int32_t requantM = 0;       ///< requant's M row value.
  int32_t requantS = 0;       ///< requant's S row value.
};

/// Whether `s` is [N, C, 1, 1] against the 4-D `full` (same N and C, a larger plane).
bool isChannelVector(const Shape& s, const Shape& full);

/// Whether `v` is a constant int8 scalar (one element, any rank) with per-tensor
/// parameters: a binary layer's `b` that every element of `a` meets.
bool isScalarConstant(const NodeValue& v);

/// "" when the operands of element-wise binary node `n` have shapes emitBinary takes
/// (equal, one of them per channel, or one a constant scalar), else why not.
std::string checkBinaryShapes(const Node& n);

/// "" when one row of each operand fits the SRAMs at pipeline depth `depth` (act: two
/// zero-point rows and three rows per buffer; acc: the operands' multiplier rows when
/// `scaleOperands`, and one row of each operand) or, failing that, single-buffered
/// (emitBinary then runs the layer at depth 1), else why not, with the figures. Layers
/// call it in check() with depth 2; emitBinary checks its own depth with it.
std::string checkBinary(const Target& t, int depth, bool scaleOperands);

/// The two param rows of a quantized add (docs/isa/instructions.md section 2.10), L int32 each:
/// lanes 0..3 of the first hold M0, M1, S, zp (the result's), of the second zp0, zp1, lo, hi.
std::vector<int32_t> qaddParamRows(int64_t L, int32_t M0, int32_t M1, int32_t S, int32_t zp,
                                   int32_t zp0, int32_t zp1, int32_t lo, int32_t hi);

/// Emits `n` (inputs 0 and 1, either of which may be the per-channel operand) as `op`.
LayerInfo emitBinary(const BinaryOp& op, const Node& n, LayerCtx& ctx);

} // namespace ember::npu
