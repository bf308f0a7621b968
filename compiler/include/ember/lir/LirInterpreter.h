#pragma once
/// \file
/// The interpreter of the low-level IR: runs a lir::Function with the graph
/// interpreter's kernels, every activation in one arena at the offsets of the static
/// memory plan. Results are bit-identical to the graph interpreter (same kernels, same
/// order of arithmetic); a wrong plan, a use after deallocation or a read of an unwritten
/// buffer shows up as different results, since allocation and deallocation fill the
/// buffer's bytes with 0xFF (a NaN as float32).
///
/// Kernels take owning tensors, so a compute instruction's operands are staged: its
/// inputs are copied from their buffers into tensors, the kernel runs, and its results
/// are copied into their buffers. In-place pairs are therefore executed correctly
/// whatever the kernel does; which kinds may run in place on a backend without staging
/// is the `isInPlaceSafe` table.

#include "ember/backend/Backend.h"
#include "ember/lir/MemoryPlanner.h"

namespace ember::lir {

class LirInterpreter : public CompiledFunction {
public:
  /// Verifies `f`, checks that every compute kind has a kernel (ember::Error listing all
  /// missing ones) and plans its memory. `f` must outlive the interpreter.
  explicit LirInterpreter(const Function& f, const MemoryPlanOptions& opts = {});
  /// The same, owning the function.
  explicit LirInterpreter(std::unique_ptr<Function> f, const MemoryPlanOptions& opts = {});

  /// Inputs by placeholder name, outputs by output name (as the graph interpreter).
  TensorMap run(const TensorMap& inputs) override;

  const FunctionMemoryPlan& memoryPlan() const { return plan_; }

private:
  std::unique_ptr<Function> owned_;
  const Function& f_;
  FunctionMemoryPlan plan_;
};

/// A Backend ("lir") that compiles a graph function with compileToLir (memory-minimising
/// schedule, default IR passes) and runs it on the LirInterpreter.
std::unique_ptr<Backend> createLirInterpreterBackend();

} // namespace ember::lir
