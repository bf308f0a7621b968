// The NPU's low-level IR: the quantized graph function through the low-level IR's IRGen
// in the shared schedule, then the NPU's own transformations of it (layers fused into a
// residual Add move to that Add, aliases of an input become views, layer temporaries
// become allocations), so that the DRAM plan is the low-level IR's memory planner over
// its allocations and the layers are emitted in its instruction order.
#pragma once

#include "Layer.h"

#include "ember/lir/IR.h"
#include "ember/lir/Schedule.h"

#include <map>
#include <memory>

namespace ember::npu {

/// IRGen of `f` with nodes in `order`, every node a compute instruction (no row-major
/// views: NCHWc rows with padded channels are not row-major bytes; the DRAM planner
/// decides which layers alias their input). Each producer in `fusedInto` (a layer fused
/// into the residual Add that reads it, the map's value) then moves to right before
/// that Add, where it is emitted, so its inputs live until there.
std::unique_ptr<lir::Function> generateNpuLir(const Function& f, const lir::NodeOrder& order,
                                              const std::map<const Node*, const Node*>& fusedInto);

/// Makes each producer of `fusedInto` and its Add one place in the live ranges: the
/// allocations between them move before the producer and the deallocations after the
/// Add (the fused layer reads the producer's inputs and temporary while it writes the
/// Add's result). Run after the live ranges were shrunk and the temporaries added.
void joinFusedLiveRanges(lir::Function& fn, const std::map<const Node*, const Node*>& fusedInto);

/// The compute instruction IRGen made of each graph node.
std::map<const Node*, lir::Instruction*> computeInstructions(lir::Function& fn);

/// Replaces compute instruction `c` (one result) by a view of its first input at offset
/// 0: the layer's result is its input's bytes (a Reshape that keeps the NCHWc rows, a
/// Transpose its consumer reads through), it emits nothing and its input lives as long
/// as the view is read. Returns the view.
lir::Instruction* replaceByView(lir::Function& fn, lir::Instruction* c);

/// Adds a buffer of `bytes` alive exactly while compute instruction `c` runs (a layer's
/// DRAM temporary, such as its packed input) and returns its allocation.
lir::Instruction* addTemporary(lir::Function& fn, lir::Instruction* c, uint64_t bytes);

} // namespace ember::npu
