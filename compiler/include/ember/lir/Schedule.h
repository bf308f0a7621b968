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

/// How a greedy schedule picks among the ready nodes. "Adds" = the bytes a node
/// allocates minus the bytes it frees; "depth" = it reads the most recently produced
/// value. Every rule ends with the function's order as the last tie-break.
enum class GreedyRule {
  FewestBytes,        ///< least added bytes, then depth
  FreeFirstThenDepth, ///< nodes adding nothing first (least added), then depth, then bytes
  DepthFirst,         ///< depth, then least added bytes
};

/// A topological order built greedily with `rule`. Deterministic.
NodeOrder greedyOrder(const ember::Function& f, GreedyRule rule);

/// The memory-minimising order: the lowest-peak (schedulePeakBytes) of the three greedy
/// orders and the function's own order (ties: in that order). No greedy rule wins
/// everywhere (FewestBytes starts wide branches too early on the int8 transformers), so
/// the result is never worse than the function's order by construction.
NodeOrder memoryMinimizingOrder(const ember::Function& f);

/// Peak live bytes of running `order` under the memory model above. Throws
/// ember::Error if `order` is not a topological order of all of f's nodes.
size_t schedulePeakBytes(const ember::Function& f, const NodeOrder& order);

} // namespace ember::lir
