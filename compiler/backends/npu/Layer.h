// The layer registry: one file per layer kind (layers/*.cpp), each registering the node
// kinds it lowers. A layer checks whether the NPU can run a node (and says why not) and
// emits its instructions through Program's step protocol.
#pragma once

#include "Program.h"
#include "Target.h"

#include "ember/graph/Graph.h"
#include "ember/isa/binary.h"
#include "ember/npu/Compile.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ember::npu {

/// A graph input's layout written by the host instead of Nchwc (Layer::hostLayout):
/// exactly one of the two is set.
struct HostLayout {
  isa::IoPacking packing; ///< isa::Layout::Packed: neighbouring pixels side by side.
  isa::IoPatches patches; ///< isa::Layout::Patches: each output pixel's window.
};

/// An int8 tensor in DRAM, NCHWc with channels padded to L (a rank-2 [N, C] value is
/// [N, C, 1, 1]; a rank-3 [B, T, C] value, a sequence of feature vectors as transformers
/// keep them, is [B * T, C, 1, 1]: its channels are the last axis, as MatMul reads them). Addresses
/// of a pixel row: ((n * CB + cb) * H + y) * W + x rows of L bytes.
struct DramTensor {
  uint64_t offset = 0; ///< Byte offset in the job's DRAM window.
  int64_t N = 1, C = 0, H = 1, W = 1, CB = 0;
  float scale = 1.f;
  int32_t zp = 0;
  /// A graph input the host lays out packed (isa::Layout::Packed, Layer::hostLayout):
  /// then C = pixels x the image's channels, W = the packed width, CB = 1. Else zero.
  isa::IoPacking packing;
  /// A graph input the host writes as patches (isa::Layout::Patches): then C = the image's
  /// channels x kernel taps, H x W = the convolution's output, CB = ceil(C / L). Else zero.
  isa::IoPatches patches;
  int64_t rows() const { return N * CB * H * W; }
  /// Byte address of row (n, cb, y, x).
  uint64_t at(int64_t L, int64_t n, int64_t cb, int64_t y, int64_t x) const {
    return offset + uint64_t((((n * CB + cb) * H + y) * W + x) * L);
  }
};

/// An int8 tensor of one image kept in the act SRAM between two layers (cross-layer
/// residency, docs/compiler/npu-layers.md) instead of a DRAM round trip, with the border
/// its reader's padding needs: CB blocks of lines() x width() rows, pixel (cb, y, x) of
/// the H x W image at at(cb, y, x); border rows hold the zero point, copied there from
/// one more row, zpRow(), when there is a border.
struct ActResident {
  int64_t base = 0, CB = 0, H = 0, W = 0;
  int64_t padT = 0, padL = 0, padB = 0, padR = 0;
  int64_t lines() const { return padT + H + padB; }
  int64_t width() const { return padL + W + padR; }
  bool bordered() const { return padT || padL || padB || padR; }
  int64_t rows() const { return CB * lines() * width() + (bordered() ? 1 : 0); }
  int64_t zpRow() const { return base + CB * lines() * width(); }
  int64_t at(int64_t cb, int64_t y, int64_t x) const {
    return base + (cb * lines() + y + padT) * width() + x + padL;
  }
};

/// A value the layer being emitted writes to, or reads from, the act SRAM (Compile.cpp
/// decides by emitting the pair both ways on trial): the MAC-array job producing (or
/// reading) `value`'s DRAM tensor takes it (emitConv), and says so in `applied`.
struct Residency {
  NodeValue value;
  ActResident at;
  bool applied = false; ///< Set by emitConv when a job of the layer took it.
  /// MAC-array jobs the layer emitted: residency holds only when the layer is exactly one
  /// job and it took the residency (no other part of the layer touches the value's DRAM).
  int jobs = 0;
  bool held() const { return applied && jobs == 1; }
};

/// The DramTensor of int8 value `v` (its NCHWc extents and parameters; offset 0).
DramTensor dramTensorOf(const NodeValue& v, int64_t L);

/// Constant bytes of the binary (weights, biases, parameters, tables).
class ConstPool {
public:
  /// A pool whose first byte lands at DRAM offset `base` (the const region).
  explicit ConstPool(uint64_t base) : base_(base) {}
  /// Appends `bytes` aligned to `align` bytes; returns their DRAM offset.
  uint64_t add(const std::vector<uint8_t>& bytes, uint64_t align = 64);
  uint64_t addInt32(const std::vector<int32_t>& words, uint64_t align = 64);
  std::vector<uint8_t>& bytes() { return bytes_; }

private:
  uint64_t base_;
  std::vector<uint8_t> bytes_;
};

/// What one layer reports for the compile summary.
struct LayerInfo {
  int64_t macs = 0;     ///< Useful multiply-accumulates.
  std::string tiling;   ///< e.g. "kt=4 th=8 tw=56" (free text for the summary).
  int64_t sram[4] = {}; ///< Rows used per SRAM (act, weight, acc, param).
};

/// Rows of each SRAM a layer (or one pass of it) needs.
struct SramRows {
  int64_t act = 0, wgt = 0, acc = 0, param = 0;
  bool fits(const Target& t) const;
  /// "N act rows (has M), ..." for a refusal.
  std::string figures(const Target& t) const;
  /// Raises `info`'s SRAM figures to at least these.
  void raise(LayerInfo& info) const;
};

/// What a layer may use while emitting.
struct LayerCtx {
  const Target& t;
  Program& prog;
  ConstPool& consts;
  const CompileOptions& opts;
  std::map<NodeValue, DramTensor>& tensors;
  uint64_t temp = 0; ///< DRAM offset of the current layer's tempBytes() scratch.
  /// The residual Add fused into the layer being emitted (Compile.cpp), or nullptr: one
  /// of its inputs is the layer's result, which then never reaches DRAM; the layer
  /// writes the Add's result instead.
  const Node* residualAdd = nullptr;
  /// Nodes not emitted because their one consumer reads through them (Compile.cpp: a
  /// Transpose whose result is a MatMul's b); null for none.
  const std::set<const Node*>* absorbed = nullptr;
  /// The Lut fused into the layer being emitted (Compile.cpp), or nullptr: its input is
  /// the layer's result, which then never reaches DRAM; the layer writes the Lut's result,
  /// the table applied in its epilogue (Layer::checkEpilogueLut).
  const Node* epilogueLut = nullptr;
  /// Cross-layer residency of the layer being emitted: the resident value it reads (its
  /// input) and the one it writes (its result); null: none.
  Residency* readsResident = nullptr;
  Residency* writesResident = nullptr;
  /// The DRAM tensor of value `v`; an int8 per-tensor constant (an element-wise layer's
  /// constant operand) is placed in the constant region on first use. ember::Error if `v`
  /// has none.
  const DramTensor& tensor(const NodeValue& v) const;
};

/// A node kind the NPU runs.
class Layer {
public:
  virtual ~Layer() = default;
  /// "" when the NPU can run `n` exactly; otherwise the reason.
  virtual std::string check(const Node& n, const Target& t) const = 0;
  /// True when `n` (which check() accepts) runs only on an input the host lays out for it
  /// (hostLayout): the host does so only for a graph input that `n` alone reads
  /// (DramPlan), which the compile checks with the function at hand.
  virtual bool needsHostLayout(const Node& /*n*/, const Target& /*t*/) const { return false; }
  /// True when input `i` may be a float32 constant that the layer turns into parameters
  /// itself (LayerNormalization's scale and bias); other float operands are refused.
  virtual bool takesFloatConstant(size_t /*i*/) const { return false; }
  /// True when the result occupies the very bytes of input 0 (no instructions).
  virtual bool aliasesInput(const Node& /*n*/, const Target& /*t*/) const { return false; }
  /// Bytes of DRAM scratch the layer needs while it runs (LayerCtx::temp), e.g. for a
  /// re-layout of its input; 0 for none. Not asked when input 0 is host-packed.
  virtual uint64_t tempBytes(const Node& /*n*/, const Target& /*t*/) const { return 0; }
  /// The layout in which the layer would take input 0 were it a graph input that nothing
  /// else reads: the host's layout conversion then writes it so (pixels packed side by
  /// side or each output pixel's window, HostLayout), and emit() finds it in
  /// LayerCtx::tensor(input 0) and emits no re-layout pass of its own. nullopt: Nchwc.
  virtual std::optional<HostLayout> hostLayout(const Node& /*n*/, const Target& /*t*/,
                                               const CompileOptions& /*opts*/) const {
    return std::nullopt;
  }
  /// "" when a residual Add of `n`'s result (same shape, rescaled, ReLU / Clip fused)
  /// can be fused into `n`'s epilogue, else why not. Layers that say "" read
  /// LayerCtx::residualAdd in emit().
  virtual std::string checkResidual(const Node& /*n*/, const Target& /*t*/) const {
    return "the layer has no epilogue to fuse an Add into";
  }
  /// "" when a Lut of `n`'s result (a function of one int8 value: h-swish, SiLU, sigmoid,
  /// ...) can be applied in `n`'s epilogue, right after its requantize, else why not.
  /// Layers that say "" read LayerCtx::epilogueLut in emit().
  virtual std::string checkEpilogueLut(const Node& /*n*/, const Target& /*t*/) const {
    return "the layer has no requantize to fuse a Lut into";
  }
  /// Emits the node (between Program::beginLayer and endLayer).
  virtual LayerInfo emit(const Node& n, LayerCtx& ctx) const = 0;
};

/// The layer registered for `k`, or nullptr.
const Layer* findLayer(NodeKind k);
/// Registers the layer of kind `k` (called by the per-file registration functions).
void registerLayer(NodeKind k, std::shared_ptr<const Layer> l);
/// The layer registered so far for `k` (for a registration that wraps it), or nullptr.
std::shared_ptr<const Layer> registeredLayer(NodeKind k);

// Per-file registration functions (LayerRegistry.cpp calls each once).
void registerConvLayers();
void registerGemmLayers();
void registerAddLayers();
void registerMulLayers();
void registerRescaleLayers();
void registerLutLayers();
void registerPReluLayers();
void registerClampLayers();
void registerPoolLayers();
void registerAvgPoolLayers();
void registerGlobalAvgPoolLayers();
void registerConcatLayers();
void registerPadLayers();
void registerReshapeLayers();
void registerChannelSelectLayers();
/// Wraps the Gather layer registered before it: a Gather of rows of [R, C] (axis 0).
void registerRowGatherLayers();
void registerTransposeLayers();
void registerNormalizeLayers();
void registerUpsampleLayers();

// ---- helpers shared by the layers ----
/// "Kind 'name'".
std::string nodeRef(const Node& n);
/// "" if `v` is an int8 value with per-tensor parameters and rank 2, 3 or 4, else why not.
std::string checkActivation(const NodeValue& v, const char* what);
/// checkActivation of a one-input layer's input, then of its result.
std::string checkInputAndResult(const Node& n);
/// checkInputAndResult of a layer that moves codes unchanged (Reshape, Transpose, Slice,
/// Gather, Relu / Clip), which also needs the result's parameters to be the input's.
std::string checkCodesMove(const Node& n);
/// Per-tensor scale / zero point of a quantized value.
float scaleOf(const NodeValue& v);
int32_t zeroPointOf(const NodeValue& v);
/// Result `i` of a const node (as a NodeValue key).
inline NodeValue resultOf(const Node& n, unsigned i = 0) {
  return NodeValue(const_cast<Node*>(&n), i);
}
/// Why the constant weights (input `wIndex`) / bias (input `bIndex`) of a MAC-array node
/// cannot be used, or "".
std::string checkWeights(const Node& n, size_t wIndex, size_t bIndex);
/// Scale of output channel k of quantized weights (per tensor or per channel).
float weightScale(const NodeValue& w, int64_t k);
/// The 4-D shape of an activation (rank 2 as [N, C, 1, 1], rank 3 as [B * T, C, 1, 1]).
Shape nchwOf(const Shape& s);
/// The axis of a value of rank `rank` that is its NCHWc channels (the last for rank 3).
int64_t channelAxis(size_t rank);
/// Ceil division.
inline int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

} // namespace ember::npu
