#pragma once
/// \file
/// The NPU backend: compiles a quantized function (docs/numerics.md section 5) into an
/// NPU binary for one ISA description (instruction stream, pre-packed constants, I/O
/// table, memory map, debug map). Everything about the hardware (lanes, SRAM sizes,
/// field widths, timing) is read from the description, so another description (e.g.
/// isa/examples/ember-v1-large.json) needs no code change. The compiler never runs the
/// binary; tools and tests do that with the simulator (`ember-run --device sim`).

#include "ember/backend/Backend.h"
#include "ember/graph/Graph.h"
#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/lir/IR.h"
#include "ember/support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ember::npu {

/// Knobs of the compilation (defaults: what the cost model picks).
struct CompileOptions {
  /// Two SRAM buffers per operand so that DMA overlaps compute. Off: one buffer, every
  /// step waits for the previous one (for tests of the token protocol).
  bool doubleBuffer = true;
  /// Upper bound on output rows (H) per convolution / pool tile; 0 = no bound. Tests use
  /// it to force many tiles.
  int64_t maxTileHeight = 0;
  /// Upper bound on output-channel blocks per convolution tile; 0 = no bound.
  int64_t maxTileKBlocks = 0;
  /// Upper bound on the weight blocks of one output-channel block per reduction chunk
  /// (input-channel blocks x kernel taps); 0 = no bound. Below a layer's whole reduction
  /// it forces partial sums in the accumulators (tests of reduction tiling).
  int64_t maxTileReduction = 0;
  /// Fuse a residual Add into the epilogue of the convolution / Gemm producing one of its
  /// operands, when the description has a quantized-add (docs/compiler/npu-layers.md).
  /// Off: every Add is a layer of its own (for comparisons).
  bool fuseResidual = true;
  /// Apply a Lut (an activation of one value: h-swish, SiLU, sigmoid, ...) in the epilogue
  /// of the convolution / Gemm producing its input when nothing else reads that input
  /// (docs/compiler/npu-layers.md, "Activations fused into the requantize"). Off: every
  /// Lut is a layer of its own (for comparisons).
  bool fuseLut = true;
  /// Let the host lay out a graph input that only a convolution with few input channels
  /// reads (the RGB stem) packed, neighbouring pixels side by side in a row
  /// (isa::Layout::Packed), or as each output pixel's window (isa::Layout::Patches),
  /// whichever the cost model prices lower, so that the NPU skips that convolution's
  /// packing pass (docs/compiler/npu-layers.md, "Few input channels"). Off: every input is Nchwc.
  bool packInputsOnHost = true;
  /// Let packInputsOnHost choose the patches layout too. Off: packed or Nchwc only (for
  /// comparisons, and the tests of the packed layout).
  bool hostPatches = true;
  /// Most instructions of one program (16 Mi: 256 MiB of 128-bit instructions, 600 times
  /// ResNet-50's program on ember-v1; about 4 GiB of compiler memory). A description
  /// whose SRAMs are far too small for a model can call for billions of one-row steps;
  /// beyond this the compile stops with ProgramTooLong. Tests lower it.
  size_t maxInstructions = size_t(1) << 24;
  /// Convolution tilings the compiler emits on trial and times with its program
  /// estimate (docs/compiler/npu-layers.md, "Tiling by trial"): the cheapest of the cost
  /// model's best candidates wins. 1: the cost model's first choice, no trial.
  int tilingTrials = 4;
  /// Keep a layer's result in the act SRAM for the next layer when that layer is its one
  /// reader and the pair is faster so, by emitting it both ways on trial
  /// (docs/compiler/npu-layers.md, "Cross-layer residency"). Off: every result goes
  /// through DRAM (for comparisons).
  bool crossLayerResidency = true;
};

/// The program would exceed CompileOptions::maxInstructions: the description's SRAMs are
/// too small for the model's tiles to be few (a refusal for the description's sizes, not
/// for an operator; ember-dse grows the SRAMs until the model compiles to name the sizes
/// that are needed). The message names the layer, its place and the instructions so far.
class ProgramTooLong : public Error {
public:
  using Error::Error;
};

/// One layer (graph node) of the compiled program.
struct LayerSummary {
  std::string name, kind;
  int64_t tiles = 0;        ///< Pipeline steps.
  int64_t instructions = 0; ///< Instructions emitted for it (its debug range).
  double cycles = 0;        ///< Estimated cycles (docs/isa/timing-energy.md section 3 timing).
  int64_t macs = 0;         ///< Useful multiply-accumulates.
  std::string tiling;       ///< Tiling chosen by the cost model (free text).
};

/// Figures of one compilation.
struct CompileSummary {
  std::string isaName;
  std::vector<LayerSummary> layers;
  int64_t instructions = 0;
  double cycles = 0; ///< Estimated total.
  int64_t macs = 0;
  /// Peak rows used per SRAM by any layer, with the SRAM's size in rows.
  struct SramUse {
    std::string name;
    int64_t peakRows = 0, rows = 0;
  };
  std::vector<SramUse> sram;
  uint64_t constantBytes = 0, scratchBytes = 0, ioBytes = 0;
  uint64_t binaryBytes = 0; ///< Size of the ELF image.
  double compileSeconds = 0;
  uint64_t peakMacsPerCycle = 0;
  uint64_t clockHz = 0;
};

/// A readable multi-line table of the summary (layers, tiles, instructions, SRAM use,
/// estimated cycles, binary size, compile time).
std::string formatSummary(const CompileSummary& s);

/// The names of the graph nodes a layer of the summary stands for: its own name, or the
/// nodes of a layer the compiler fused, "PRODUCER + ADD" or "CONV + LUT", in that order
/// (the producer first).
std::vector<std::string> layerNodeNames(const std::string& layerName);

/// Each layer's estimated cycles by the node it counts for: a fused layer's for its
/// producer (what cost models that weigh nodes read).
std::map<std::string, double> cyclesByNode(const CompileSummary& s);

/// What `compile` produces.
struct CompileResult {
  isa::Binary binary;
  CompileSummary summary;
  /// The program's low-level IR (docs/compiler/npu-backend.md): one compute instruction per
  /// layer in emission order, aliases as views, layer temporaries as allocations; its
  /// memory plan over the NPU's buffer sizes is the scratch region. lir::dump prints it.
  /// It refers to the compiled function's nodes and constants: valid while that
  /// function's Module lives.
  std::shared_ptr<const lir::Function> lir;
};

/// Compiles `quantized` for `isa`. Inputs are the int8 results of QuantizeLinear nodes
/// reading placeholders (I/O entries named after the placeholder), outputs the int8
/// inputs of DequantizeLinear nodes that are function outputs (named after the output).
/// Throws one ember::Error listing every node the NPU cannot run (kind, name, reason).
CompileResult compile(const Function& quantized, const isa::IsaDescription& isa,
                      const CompileOptions& opts = {});

/// Every node of `f` the NPU cannot run, as "Kind 'name': reason" (empty: all run).
/// `isa` decides limits that depend on field widths (e.g. the largest padding).
std::vector<std::string> unsupportedNodes(const Function& f, const isa::IsaDescription& isa);
/// The same with the default description (isa::IsaDescription::loadDefault()).
std::vector<std::string> unsupportedNodes(const Function& f);
/// Throws the one ember::Unsupported that lists `bad` (unsupportedNodes' lines) for `f`,
/// named after the model file; `note` follows "cannot run on the NPU" (e.g. the option
/// that asked for the refusal).
[[noreturn]] void throwUnsupported(const Function& f, const std::vector<std::string>& bad,
                                   const std::string& note = "");

class Target;

/// What the NPU can take inside one region of a partitioned model (compiler/driver): the
/// partitioner asks it per node and per boundary value, with the reason when it cannot.
class RegionSupport {
public:
  explicit RegionSupport(const isa::IsaDescription& isa);
  ~RegionSupport();
  /// Why node `n` of `f` cannot be a layer of an NPU region ("" = it can). In a
  /// partitioned model QuantizeLinear and DequantizeLinear run on the host.
  std::string layerReason(const Function& f, const Node& n) const;
  /// Why value `v` cannot cross between the host and the NPU at a region's edge ("" = it
  /// can): boundary values are per-tensor int8 of rank 2 or 4.
  std::string boundaryReason(const NodeValue& v) const;

private:
  std::unique_ptr<Target> target_;
};

/// The NPU as an ember::Backend ("npu") for the reference description: `supports` and
/// `kindSupport` answer per node and kind; `compile` refuses, because execution needs
/// the simulator, which the compiler does not link. The executing NPU backend wraps this
/// one (`partition::createNpuBackend`, registered by the device layer).
std::unique_ptr<Backend> createNpuBackend();
/// The same for description `isa`.
std::unique_ptr<Backend> createNpuBackend(const isa::IsaDescription& isa);

} // namespace ember::npu
