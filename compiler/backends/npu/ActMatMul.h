// MatMul of two activations (attention's query x key and probabilities x value): the right
// operand is not a constant but a value computed at run time, which the NPU must bring into
// its weight SRAM itself. docs/compiler/npu-layers.md ("Attention: transposes and MatMuls of
// two activations").
#pragma once

#include "Layer.h"

#include <cstdint>
#include <string>

namespace ember::npu {

/// Whether MatMul `n` multiplies by an activation (its b is no constant).
bool isActMatMul(const Node& n);

/// "" when the NPU runs act x act MatMul `n` (a [G, M, C] or [M, C], b [G, C, K] or
/// [C, K] of the same batch, both int8 per tensor), else why not with the figures.
std::string checkActMatMul(const Node& n, const Target& t);

/// DRAM scratch the layer needs: b gathered into whole blocks, then transposed into
/// weight blocks.
uint64_t actMatMulTempBytes(const Node& n, const Target& t);

/// Emits act x act MatMul `n` (checked by checkActMatMul).
LayerInfo emitActMatMul(const Node& n, LayerCtx& ctx);

} // namespace ember::npu
