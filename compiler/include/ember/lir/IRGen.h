#pragma once
/// \file
/// IRGen: a scheduled graph function becomes a low-level function.
///
/// Placeholders become input weights, Constants constant weights (their payloads are
/// referenced, not copied: the graph Module must outlive the result), and every named
/// output an output weight. Nodes are visited in the given order: a view-able node
/// (Reshape, contiguous Slice or Split) becomes `tensorview`s of its input; any other
/// node becomes an `allocactivation` per result and one compute instruction. Each
/// output is then copied into its weight, and, as in Glow's IRGen, every activation
/// is deallocated at the end: the IR passes shorten live ranges and remove copies.
/// Element kinds are taken from the graph's types (float and int8 graphs alike).

#include "ember/lir/IR.h"
#include "ember/lir/Schedule.h"

#include "ember/graph/Graph.h"

namespace ember::lir {

/// What IRGen makes of the graph.
struct IRGenOptions {
  /// Row-major views for view-able nodes (Reshape, contiguous Slice/Split). Off: every
  /// node is a compute instruction, for a backend whose buffers are not row-major (the
  /// NPU's NCHWc rows decide themselves which nodes alias their input).
  bool views = true;
};

/// Generates the low-level IR of `f` with nodes in `order` (checked: a topological
/// order of all of f's nodes; ember::Error otherwise). Every compute instruction and
/// view records the node it came from (Instruction::origin).
std::unique_ptr<Function> generateIR(const ember::Function& f, const NodeOrder& order,
                                     const IRGenOptions& opts = {});

/// What `compileToLir` does.
struct LirOptions {
  bool minimizeMemorySchedule = true; ///< memoryMinimizingOrder, else topologicalOrder
  bool optimize = true;               ///< run the default IR pass pipeline
};

/// Schedule + IRGen + (optionally) the default IR passes, verified after each step.
std::unique_ptr<Function> compileToLir(const ember::Function& f, const LirOptions& opts = {});

} // namespace ember::lir
