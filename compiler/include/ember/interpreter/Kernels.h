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

/// Family registration functions, one per file in kernels/.
void registerElementwiseKernels();
void registerReductionKernels();
void registerNNKernels();
void registerDataMovementKernels();
void registerQuantKernels();

} // namespace ember
