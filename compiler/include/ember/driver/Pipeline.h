#pragma once
/// \file
/// The multi-device partitioner: pipelines a model over the NPUs of a system
/// (isa/systems/*.json, docs/systems.md). The model's layers, in topological order, are
/// cut into one contiguous stage per device (stage k on device k); a dynamic program finds
/// the cut that minimises the slowest stage (its layers' estimated cycles on that
/// device plus its boundary values over the device's host link), among the cuts whose
/// stages fit their devices' DRAMs. For a chain-shaped schedule this is the exact
/// optimum; for a DAG it is the optimum over the schedule's topological order (the
/// documented heuristic). The result, `PipelinePlan`, is the stage assignment a later
/// executor runs.

#include "ember/driver/Partition.h"
#include "ember/graph/Graph.h"
#include "ember/isa/system.h"
#include "ember/npu/Compile.h"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace ember::partition {

/// One schedulable layer: a node of the function, in topological order.
struct PipelineItem {
  std::string name, kind;
  std::vector<double> cycles;  ///< Estimated cycles on each device (index = device).
  uint64_t weightBytes = 0;    ///< Constant operands it keeps in DRAM.
  uint64_t workBytes = 0;      ///< Its activation operands and results (its working set).
  std::vector<size_t> inputs;  ///< Indices into PipelineProblem::values (distinct).
  std::vector<size_t> results; ///< Values it produces.
};

/// One value between layers (or a model input: producer -1).
struct PipelineValue {
  std::string key;       ///< The producer's name (":N" for result N > 0) or the input's.
  int producer = -1;     ///< Item index; -1: a model input.
  size_t lastReader = 0; ///< Largest item index reading it (0 with no reader).
  bool hasReader = false;
  bool modelOutput = false; ///< Returned to the host.
  uint64_t bytes = 0;       ///< Bytes crossing a link (a float value: its int8 codes).
};

/// A device as the partitioner sees it.
struct PipelineDevice {
  std::string name;
  isa::LinkDesc link;
  uint64_t dramBytes = 0; ///< Capacity of its DRAM.
  size_t dram = 0;        ///< Index of its DRAM in the system.
  /// Whether the previous / next device (pipeline order) is attached to the same DRAM:
  /// values between their stages then stay in that DRAM and cross no link.
  bool sharesWithPrev = false, sharesWithNext = false;
};

/// The partitioning problem: items in topological order, values, devices.
struct PipelineProblem {
  std::vector<PipelineItem> items;
  std::vector<PipelineValue> values;
  std::vector<PipelineDevice> devices;
  /// Whether every item reads only values of the item just before it (or model inputs)
  /// and the DP's answer is the exact optimum of the model's pipelining; otherwise the
  /// optimum over this topological order.
  bool chain() const;
};

/// What one stage [begin, end) costs and holds.
struct StageFigures {
  uint64_t inFromHost = 0;   ///< Model inputs its layers read.
  uint64_t inFromStages = 0; ///< Values earlier stages produce that its layers read.
  uint64_t outToHost = 0;    ///< Model outputs it produces.
  uint64_t outToStages = 0;  ///< Values it produces that later stages read.
  uint64_t weightBytes = 0, peakWorkBytes = 0;
  /// DRAM it needs: weights + every boundary buffer + its largest layer's working set.
  uint64_t dramBytes() const {
    return weightBytes + inFromHost + inFromStages + outToHost + outToStages + peakWorkBytes;
  }
};

/// The figures of stage [begin, end) computed directly (the DP keeps them incrementally).
StageFigures stageFigures(const PipelineProblem& p, size_t begin, size_t end);
/// The layers' cycles of [begin, end) on `device`.
double stageComputeCycles(const PipelineProblem& p, size_t device, size_t begin, size_t end);
/// The link cycles of a stage with `f` on `device`: one transfer in, one out (bytes that
/// stay in a DRAM shared with the neighbouring device cross no link).
double stageLinkCycles(const PipelineProblem& p, size_t device, const StageFigures& f);

/// One stage of a pipeline: items [begin, end) on `device`.
struct PipelineStage {
  size_t device = 0;
  size_t begin = 0, end = 0;
  StageFigures figures;
  double computeCycles = 0, linkCycles = 0;
  double cycles() const { return computeCycles + linkCycles; }
};

/// A stage assignment.
struct PipelineAssignment {
  std::vector<PipelineStage> stages; ///< One per device, in device order.
  double bottleneck = 0;             ///< The slowest stage's cycles.
};

/// The assignment of least bottleneck (dynamic programming over the items' order, every
/// device one non-empty stage, every stage within its device's DRAM). Throws
/// ember::Error when the model has fewer items than devices, or when no assignment fits
/// the DRAMs (naming the stage, its bytes and the device's, e.g. "stage 2 needs 38.2 MiB
/// of DRAM, device npu1 has 32 MiB"), or when stages on a shared DRAM exceed it together.
PipelineAssignment optimalPipeline(const PipelineProblem& p);

/// A model pipelined over a system: the problem, the chosen assignment and the figures
/// the report compares it with. A later executor runs `stages`.
struct PipelinePlan {
  std::string systemName, functionName;
  uint64_t clockHz = 0;
  PipelineProblem problem;
  PipelineAssignment assignment;
  /// The whole model's estimated cycles on each device alone (no pipelining).
  std::vector<double> singleDeviceCycles;
  /// The ideal bottleneck: the work divided over the devices in proportion to their
  /// speed with no transfer, 1 / sum(1 / singleDeviceCycles) (total / K for equal ones).
  double idealCycles = 0;
  /// The layers' names of stage k (the nodes a stage's function holds).
  std::vector<std::string> stageNodes(size_t k) const;
};

/// Builds the problem for the quantized function `f` over `sys`: items are f's nodes in
/// order, with each device's cycles taken from `summaries[d]` (the NPU compile of the
/// whole of f for device d's description: a layer's cycles by its name, cycles no layer
/// names spread over the nodes by result elements, as the single-NPU placement does).
PipelineProblem pipelineProblem(const Function& f, const isa::SystemDescription& sys,
                                const std::vector<const npu::CompileSummary*>& summaries);

/// Per-layer cycles a simulation measured (`emberc --system SYS --stage-cycles R.json`,
/// R.json the report of the whole model's binary run on the devices' description:
/// `ember-sim BIN --report R.json`): layer name -> cycles, the run's total, and the
/// description it ran on.
struct MeasuredCycles {
  std::string file, isaName;
  double total = 0;
  std::map<std::string, double> layers;
};

/// Reads a simulation report's "isa", "cycles" and "layers" [{"name", "cycles"}]
/// (ember::Error naming the file and the key when they are missing or malformed).
MeasuredCycles readMeasuredCycles(const std::string& reportPath);

/// Compiles `quantized` whole for every distinct description of `sys` but the first
/// device's, whose compile is `plan`'s (`plan` must be the partition of `quantized` for
/// device 0's description, as compileModel gives it), builds the problem and finds the
/// optimal pipeline; a refusal names the system file. Throws ember::Error when the NPU does not run
/// the model whole
/// (`plan` has host segments): the pipeline's stages are NPU stages.
/// With `measured`, the devices of the description it names are costed with its layers'
/// cycles (cycles no layer names spread as above) instead of the compiler's estimates
/// (ember::Error when no device runs that description).
PipelinePlan pipelineModel(const Function& quantized, const Plan& plan,
                           const isa::SystemDescription& sys, const npu::CompileOptions& opts,
                           const MeasuredCycles* measured = nullptr);

/// The pipeline as a plan to package (`emberc --system SYS -o OUT.pkg`, docs/systems.md
/// section 3): the model inputs' QuantizeLinear nodes in a host segment ("interp") first,
/// then one NPU segment per stage, compiled for its device's description, then the model
/// outputs' DequantizeLinear nodes in a host segment. The plan's description is the first
/// device's; a stage on a device of another description carries it (Segment::isa). Throws
/// ember::Error when a stage holds nothing but the host's quantization, or when a stage
/// does not compile (naming the stage and its device).
Plan pipelineSegments(const Function& quantized, const PipelinePlan& pp,
                      const isa::SystemDescription& sys, const npu::CompileOptions& opts);

/// `emberc --system SYS --partition-report`: every stage (device, layers, first and last
/// layer, cycles: layers + link, boundary bytes in and out, DRAM bytes), the bottleneck,
/// the imbalance against the ideal and each stage's share of the bottleneck, and the
/// throughput against one device.
std::string formatPipelineReport(const PipelinePlan& p);

/// "38.2 MiB": bytes in KiB/MiB/GiB with one decimal (bytes below 1 KiB as bytes).
std::string formatBytes(uint64_t bytes);

} // namespace ember::partition
