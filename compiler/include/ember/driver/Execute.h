#pragma once
/// \file
/// Runs a partition::Plan: its segments in order, the host's on a compiler backend
/// (cpu or interp), the NPU's through a runner the caller supplies (the compiler does
/// not link the simulator: ember-run hands in one that goes through the runtime). Int8
/// values cross between segments as they are, so a partitioned run computes exactly what
/// the int8 interpreter computes on the whole function.

#include "ember/backend/Backend.h"
#include "ember/driver/Partition.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ember::partition {

/// What one segment's run took.
struct SegmentRun {
  std::string backend;
  double seconds = 0;                 ///< Host wall time of the segment.
  uint64_t inBytes = 0, outBytes = 0; ///< Boundary bytes read and written.
  uint64_t npuCycles = 0;             ///< NPU segments: simulated cycles ...
  double npuSeconds = 0;              ///< ... their time at the NPU's clock ...
  double npuEnergyJoules = 0;         ///< ... and energy.
};

/// Runs one NPU segment's binary: `inputs` are keyed by the segment function's
/// placeholder names (int8 boundary values, or the model's float inputs when the plan
/// is whole); returns the values the NPU stored, keyed by the function's output names,
/// in the binary's element types. Fills the NPU figures of `run`.
using NpuRunner =
    std::function<TensorMap(const Segment& s, const TensorMap& inputs, SegmentRun& run)>;

/// Float32 values of per-tensor int8 (or other integer) codes, as DequantizeLinear
/// computes them: (code - zeroPoint) * scale in float, shape `dims`.
Tensor dequantizeCodes(const Tensor& codes, float scale, int64_t zeroPoint, const Shape& dims);

/// A plan prepared for running: the host segments compiled once.
class PlanExecutor {
public:
  PlanExecutor(const Plan& plan, NpuRunner npu);
  ~PlanExecutor();
  /// Runs every segment on the model's inputs (by placeholder name) and returns the
  /// model's outputs (by output name), float32 outputs dequantized exactly as the
  /// function's DequantizeLinear nodes do. `runs` (optional) receives one entry per segment.
  TensorMap run(const TensorMap& inputs, std::vector<SegmentRun>* runs = nullptr);

private:
  const Plan& plan_;
  NpuRunner npu_;
  std::vector<std::unique_ptr<CompiledFunction>> host_;
};

/// The per-segment table of a run (backend, nodes, boundary bytes, NPU cycles and
/// energy or host milliseconds) with the total.
std::string formatSegmentRuns(const Plan& plan, const std::vector<SegmentRun>& runs);

} // namespace ember::partition
