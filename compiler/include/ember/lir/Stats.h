#pragma once
/// \file
/// Memory figures of a graph function compiled to the low-level IR, as the model tests
/// and bench/lir print them.

#include "ember/lir/IRGen.h"
#include "ember/lir/MemoryPlanner.h"

#include <iosfwd>

namespace ember::lir {

struct MemoryStats {
  size_t nodes = 0;           ///< graph nodes
  size_t instructions = 0;    ///< after the IR passes
  size_t buffers = 0;         ///< activation allocations after the IR passes
  size_t sumBytes = 0;        ///< sum of those buffers (no reuse at all)
  size_t arenaBytes = 0;      ///< the memory planner's arena
  size_t lowerBound = 0;      ///< max over time of the live bytes
  size_t buffersBefore = 0;   ///< allocations straight out of IRGen
  size_t bytesBefore = 0;     ///< their sum
  size_t greedyPeak = 0;      ///< schedulePeakBytes of memoryMinimizingOrder (the best)
  size_t fewestBytesPeak = 0; ///< ... of greedyOrder(FewestBytes)
  size_t freeFirstPeak = 0;   ///< ... of greedyOrder(FreeFirstThenDepth)
  size_t depthFirstPeak = 0;  ///< ... of greedyOrder(DepthFirst)
  size_t topoPeak = 0;        ///< schedulePeakBytes of topologicalOrder
  size_t topoLowerBound = 0;  ///< the IR's lower bound when scheduled topologically
};

/// Compiles `g` both ways (greedy and topological schedule, default IR passes), plans
/// the greedy one with `opts` and returns the figures.
MemoryStats measureMemory(const ember::Function& g, const MemoryPlanOptions& opts = {});

/// One header line and one row per model: name, nodes, buffers (IRGen -> after the
/// passes), sum of buffers, arena peak, lower bound, their ratio, the schedule peaks
/// (the chosen one, each greedy rule, topological) and the IR lower bound of the
/// topological schedule (KiB).
void printMemoryStatsHeader(std::ostream& os);
void printMemoryStatsRow(std::ostream& os, const std::string& model, const MemoryStats& s);

} // namespace ember::lir
