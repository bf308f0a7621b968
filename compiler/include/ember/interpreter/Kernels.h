#pragma once
/// \file
/// The interpreter's kernel registry: one kernel per node kind, grouped by family in
/// compiler/backends/interpreter/kernels/. A kernel receives the node (for attributes
/// and types), its input tensors (null for absent optional inputs) and its output
/// tensors already allocated with the node's result types.

#include "ember/graph/Node.h"

#include <functional>

namespace ember {

using KernelFn = std::function<void(const Node& n, const std::vector<const Tensor*>& in,
                                    std::vector<Tensor>& out)>;

/// Registers (or replaces) the kernel of `k`.
void registerKernel(NodeKind k, KernelFn fn);
/// The kernel of `k`, or nullptr.
const KernelFn* findKernel(NodeKind k);

/// Registers (or replaces) the int8 kernel of `k`: the interpreter runs it instead of
/// the kernel of registerKernel when the node's first result is int8 with quantization
/// parameters (the integer operators of docs/numerics.md section 4). Kinds without one
/// (data movement) run their generic kernel, which moves int8 codes unchanged.
void registerQuantizedKernel(NodeKind k, KernelFn fn);
/// The int8 kernel of `k`, or nullptr.
const KernelFn* findQuantizedKernel(NodeKind k);
/// The kernel the interpreter runs for `n`: the int8 kernel for a quantized int8
/// result when one is registered, else the kernel of its kind; nullptr if none.
const KernelFn* selectKernel(const Node& n);

/// Family registration functions, one per file in kernels/.
void registerElementwiseKernels();
void registerReductionKernels();
void registerNNKernels();
void registerDataMovementKernels();
void registerQuantKernels();
void registerInt8Kernels();       // kernels/Int8*.cpp
void registerIndexKernels();      // kernels/IndexKernels.cpp
void registerLossEinsumKernels(); // kernels/LossEinsumKernels.cpp

} // namespace ember
