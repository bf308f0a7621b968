// DRAM planning: the binary's inputs and outputs (I/O table), the scratch region where
// intermediate tensors live (the low-level IR's memory planner over their live ranges,
// reusing space once a tensor's last reader has run) and where the constant region starts.
#pragma once

#include "Layer.h"

#include "ember/isa/binary.h"
#include "ember/lir/IR.h"

#include <map>
#include <memory>
#include <set>
#include <vector>

namespace ember::npu {

inline uint64_t roundUp(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

/// A graph output that is a graph input unchanged: its rows are copied (DMA in, DMA
/// out) from the input's buffer to the output's.
struct OutputCopy {
  const Node* node; ///< The output's DequantizeLinear.
  DramTensor from, to;
};

struct DramPlan {
  /// The layers' low-level IR (NpuLir.h): compute instructions in emission order (a
  /// layer fused into a residual Add right before it), aliases as views, temporaries as
  /// allocations; the scratch offsets below are its memory plan.
  std::unique_ptr<lir::Function> lir;
  std::map<NodeValue, DramTensor> tensors; ///< Every int8 value the NPU reads or writes.
  std::set<const Node*> aliased;           ///< Nodes whose result is their input's bytes.
  /// The `absorbed` nodes planDram could alias (their consumer reads through them).
  std::set<const Node*> absorbed;
  std::map<const Node*, uint64_t> temps; ///< DRAM offset of each layer's temporary.
  std::vector<OutputCopy> copies;        ///< Outputs that are inputs, in output order.
  std::vector<isa::IoEntry> io;
  std::vector<isa::MemRegion> regions; ///< input, output, scratch (const added later).
  uint64_t constBase = 0;
  uint64_t scratchBytes = 0, ioBytes = 0;
};

/// Plans `f` (which unsupportedNodes accepted) for target `t`, its layers emitted in
/// `order` (a topological order of all of f's nodes: the low-level IR's schedule,
/// lir::memoryMinimizingOrder). The intermediate values are those of the NPU's low-level
/// IR of f (generateNpuLir), placed by the low-level IR's memory planner
/// (lir::planMemory) over the NPU's buffer sizes. `emittedWith` maps a node emitted at
/// another node's place (a layer fused into the residual Add that follows it) to that
/// node, so that the lifetimes of its inputs and temporary reach that place.
/// With `opts.packInputsOnHost`, a graph input that one layer alone reads is laid out in
/// the packing or patches that layer asks for (Layer::hostLayout). Nodes in `absorbed`
/// may be read through by their one consumer (a Transpose a MatMul takes its weights
/// from): planned as aliases of their input, which lives until that consumer has run,
/// when that input has a buffer to share (not an output, not a constant); DramPlan::absorbed
/// says which were.
DramPlan planDram(const Function& f, const Target& t, const std::vector<const Node*>& order,
                  const std::map<const Node*, const Node*>& emittedWith = {},
                  const CompileOptions& opts = {}, const std::set<const Node*>& absorbed = {});

} // namespace ember::npu
