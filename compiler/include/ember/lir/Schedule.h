#pragma once
/// \file
/// Scheduling the graph for low peak memory before IRGen.
///
/// The memory model is the one IRGen and the IR passes realise: a node's results are
/// allocated when it runs and freed after the last node that reads them (through views
/// too); values that are views (see IRGen: Reshape, contiguous Slice/Split) take no
/// memory of their own but keep the viewed buffer alive; placeholders, constants and
/// the function's outputs live outside the arena and count zero.

#include "ember/graph/Graph.h"

#include <vector>

namespace ember::lir {

using NodeOrder = std::vector<const Node*>;

/// The function's own (topological) node order.
NodeOrder topologicalOrder(const ember::Function& f);

/// A memory-minimising topological order, greedy: among the ready nodes, run the one
/// that adds the fewest bytes (its allocations minus the buffers it frees); ties go to
/// the node that reads the most recently produced value (depth first), then to the
/// earlier node of the function's order. Deterministic.
NodeOrder memoryMinimizingOrder(const ember::Function& f);

/// Peak live bytes of running `order` under the memory model above. Throws
/// ember::Error if `order` is not a topological order of all of f's nodes.
size_t schedulePeakBytes(const ember::Function& f, const NodeOrder& order);

} // namespace ember::lir
