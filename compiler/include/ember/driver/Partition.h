#pragma once
/// \file
/// The partitioner: places every node of a quantized function on the NPU or on a host
/// backend (cpu or interp), groups the nodes into segments that run one after another,
/// and compiles each NPU segment. A model the NPU runs whole gives one NPU segment and
/// the same binary `npu::compile` gives; otherwise the NPU takes convex regions and the
/// host the rest, with the reason for every node it does not take (docs/compiler/
/// partitioning.md).

#include "ember/graph/Graph.h"
#include "ember/isa/description.h"
#include "ember/npu/Compile.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ember::partition {

/// What runs the nodes the NPU does not take. A node the fallback backend's `supports`
/// refuses runs on the interpreter (the last resort, which runs every kind); a node no
/// backend runs makes `partition` refuse the model, so no plan (and no package) holds a
/// segment its backend cannot run.
enum class Fallback {
  Cpu,    ///< the LLVM CPU backend ("cpu")
  Interp, ///< the reference interpreter ("interp")
  None,   ///< nothing: a model with an unsupported node is refused, as before partitioning
};

/// "cpu", "interp" or "none".
const char* fallbackName(Fallback f);
/// Parses --fallback's value; throws UsageError naming the choices.
Fallback parseFallback(const std::string& s);
/// cpu when this build has the cpu backend, else interp.
Fallback defaultFallback();

/// The partitioner's knobs (the tools' options for them: tools/cli, ember/cli/PartitionOptions.h).
struct PartitionOptions {
  Fallback fallback = defaultFallback();
  /// Node kinds (as in Nodes.def, e.g. "Softmax") always placed on the host.
  std::set<std::string> hostKinds;
  /// Node names always placed on the host.
  std::set<std::string> hostNodes;
  /// An NPU region of fewer layers than this runs on the host instead.
  size_t minRegionNodes = 1;
  /// Keep a region on the NPU only where its estimated time beats the host's (below).
  bool costModel = true;
  /// The host's estimated rates: int8 multiply-accumulates and other element results per
  /// second (defaults: an embedded application processor beside the NPU, not the build
  /// machine; docs/compiler/partitioning.md), bytes per second of converting boundary tensors
  /// (quantize, NCHWc blocking) ...
  double hostMacsPerSecond = 4e9;
  double hostElementsPerSecond = 1e9;
  double boundaryBytesPerSecond = 1e9;
  /// ... and the fixed cost of one NPU job (ring, doorbell, interrupt).
  double npuLaunchSeconds = 10e-6;
  npu::CompileOptions npu;
};

/// A value that crosses between segments (or is a model input or output).
struct BoundaryValue {
  std::string key; ///< Unique name: the producer's name (":N" for result N > 0).
  Type type;
  int producer = -1; ///< Segment index; -1: a model input (`input`) or a constant.
  std::string input; ///< The model input (placeholder) it is, when producer is -1.
  std::shared_ptr<const Tensor> constant; ///< The value, when it is a constant.
  /// Set when the value is float and the NPU stores it as int8 with these parameters (a
  /// model output of a whole plan): it is dequantized as DequantizeLinear does.
  std::optional<QuantParams> dequantizedFrom;
  NodeValue value; ///< In the partitioned function (null in a loaded package).
  uint64_t bytes() const { return type.sizeInBytes(); }
};

/// One segment: a function of its own, run by one backend.
struct Segment {
  std::string backend;                 ///< "npu", "cpu" or "interp".
  std::vector<const Node*> nodes;      ///< In the partitioned function (empty when loaded).
  size_t numNodes = 0;                 ///< Nodes of the model it runs.
  std::vector<size_t> inputs, outputs; ///< Indices into Plan::values.
  /// The names the segment's function (or binary) gives them: boundary keys, or the
  /// model's input and output names in a whole plan. Parallel to inputs / outputs.
  std::vector<std::string> inputNames, outputNames;
  /// The segment as a function of its own module: placeholders named after the
  /// boundary keys (NPU: float32, quantized by QuantizeLinear nodes as the NPU compiler
  /// expects; host: the boundary's own type), outputs named after the keys.
  std::unique_ptr<Module> module;
  Function* function = nullptr;
  /// NPU segments: the compiled binary and its summary.
  std::shared_ptr<npu::CompileResult> npu;
  /// NPU segments of a system of unequal devices: the description the binary is compiled
  /// for when it is not the plan's (null: the plan's own; docs/package.md).
  std::shared_ptr<const isa::IsaDescription> isa;
  int64_t macs = 0;
  int64_t elements = 0; ///< Result elements of its nodes (the host's element-wise work).
  double npuSeconds = 0, hostSeconds = 0; ///< The estimates the cost model compared.
};

/// Where one node went and why.
struct NodePlacement {
  std::string name, kind;
  std::string backend; ///< "npu" or the fallback's name.
  std::string reason;  ///< Why it is not on the NPU ("" when it is).
  int segment = -1;
  int64_t macs = 0; ///< nodeMacs of the node.
};

/// The estimated seconds of one segment, by where they are spent.
struct SegmentEstimate {
  std::string backend;
  /// NPU segments: their cycles at the description's clock (the compiler's estimate, or
  /// the simulated cycles when a run gives them).
  double npu = 0;
  /// Host segments: their MACs and element results at the host's rates. NPU segments:
  /// the host's conversion of their boundary values (quantize, NCHWc blocking).
  double host = 0;
  double link = 0;        ///< NPU segments: every boundary value over the host link.
  double launch = 0;      ///< NPU segments: the job's fixed cost (ring, doorbell, interrupt).
  uint64_t linkBytes = 0; ///< Bytes the segment moves over the host link.
  double total() const { return npu + host + link + launch; }
};

/// The estimated end-to-end time of a plan (the segments run one after another).
struct PlanEstimate {
  std::vector<SegmentEstimate> segments;
  double npu = 0, host = 0, link = 0, launch = 0; ///< Sums over the segments.
  uint64_t linkBytes = 0;                         ///< Bytes over the host link per run.
  size_t linkTransfers = 0;                       ///< Values moved over the host link.
  /// The rates it assumed (PartitionOptions' fields of the same names): a package
  /// records them, so its report shows the estimate it was placed by.
  double hostMacsPerSecond = 0, hostElementsPerSecond = 0, boundaryBytesPerSecond = 0,
         npuLaunchSeconds = 0;
  double total() const { return npu + host + link + launch; }
  /// The host's part of the total (0 when the total is 0).
  double hostShare() const { return total() > 0 ? host / total() : 0; }
};

/// The result of partitioning a function (or of loading a package).
struct Plan {
  const Function* function = nullptr; ///< Null when loaded from a package.
  std::string functionName, source, isaName;
  bool whole = false; ///< One NPU segment holding the whole function (npu::compile's binary).
  std::vector<Segment> segments; ///< In execution order.
  std::vector<BoundaryValue> values;
  /// Model inputs (name and type, in the function's order) and outputs (name and index
  /// into `values`).
  std::vector<std::pair<std::string, Type>> inputs;
  std::vector<std::pair<std::string, size_t>> outputs;
  std::vector<NodePlacement> nodes; ///< Every node, in topological order.
  /// The end-to-end estimate (ember/driver/Estimate.h) with the options it was placed
  /// by; empty for a plan loaded from a package until a caller estimates it.
  PlanEstimate estimate;

  /// The placement of the node called `name` (ember::Error if there is none).
  const NodePlacement& placementOf(const std::string& name) const;
  size_t npuNodes() const;
  int64_t totalMacs() const;
  int64_t npuMacs() const;
  size_t npuSegments() const;
  /// Bytes crossing between the host and the NPU (every NPU segment's inputs + outputs).
  uint64_t boundaryBytes() const;
};

/// Partitions `quantized` (a function from quant::quantize) for `isa`. Throws
/// ember::Unsupported listing every node (kind, name, reason) the NPU cannot run when
/// `opts.fallback` is None and some node cannot run there, as npu::compile does, and
/// listing every node that runs on no backend at all (neither the NPU, the fallback nor
/// the interpreter) otherwise.
Plan partition(const Function& quantized, const isa::IsaDescription& isa,
               const PartitionOptions& opts = {});

/// The placement report: every node with its backend and reason, then the coverage
/// (% of nodes and of MACs on the NPU), the segments and the boundary bytes, and the
/// end-to-end estimate when the plan has one.
std::string formatPlacementReport(const Plan& p);
/// One line: "placement: 52 of 60 nodes (97.1% of MACs) on the NPU in 3 segments, ...".
std::string placementSummaryLine(const Plan& p);

/// Multiply-accumulates of node `n` as a dense computation (Conv, ConvTranspose, Gemm,
/// MatMul, ...); 0 for nodes without a reduction.
int64_t nodeMacs(const Node& n);

} // namespace ember::partition
