#pragma once
/// \file
/// `fold-qdq`: pre-quantized models (QDQ exports of torch FX / onnxruntime, where every
/// int8 operator is written as DequantizeLinear -> float op -> QuantizeLinear) become the
/// int8 form of docs/numerics.md section 5.
///
/// For a float node whose float operands are all DequantizeLinear outputs (of int8
/// activations, int8 weight constants, or an int32 bias constant) and whose only use is
/// a QuantizeLinear, the QuantizeLinear is replaced by the int8 node of the same kind
/// with those parameters: the DQ'd constants become int8/int32 constants typed with the
/// DQ's parameters, the result type is the Q's. Kinds: Conv, Gemm, MatMul, Add, Mul,
/// Softmax, ReduceMean, AveragePool, GlobalAveragePool, LayerNormalization (float
/// constant scale and bias, Mean / InvStdDev unread; any parameters); MaxPool,
/// GlobalMaxPool, Relu, Clip and data movement (when the Q keeps the input's
/// parameters); Concat (inputs of other parameters get a Rescale); the LUT activations
/// (Sigmoid, Tanh, ...: a Lut). A
/// QuantizeLinear of a DequantizeLinear becomes the int8 value itself (equal parameters)
/// or a Rescale. A node whose parameters cannot be expressed (a multiplier out of range,
/// mixed per-channel activations) is left as it is. Run it after the default pipeline
/// (which keeps Q/DQ nodes: constant-fold does not fold them).

#include "ember/passes/Pass.h"

namespace ember {
namespace quant {

/// The fold-qdq pass; returns the number of QuantizeLinear nodes replaced.
size_t runFoldQdq(Function& f, const PassContext& ctx = {});

/// Registers "fold-qdq" in the pass registry (ember/passes/Pass.h), so that pipelines
/// can name it. Idempotent; quantize() and quantizeModel() call it.
void registerQuantPasses();

} // namespace quant
} // namespace ember
