#include "Layer.h"

#include "ember/support/Error.h"

#include <algorithm>
#include <mutex>

namespace ember::npu {

namespace {
std::vector<std::shared_ptr<const Layer>>& table() {
  static std::vector<std::shared_ptr<const Layer>> t(numNodeKinds());
  return t;
}

/// Every per-file registration function, in one list.
void registerAll() {
  registerConvLayers();
  registerGemmLayers();
  registerAddLayers();
  registerMulLayers();
  registerRescaleLayers();
  registerLutLayers();
  registerPReluLayers();
  registerClampLayers();
  registerPoolLayers();
  registerAvgPoolLayers();
  registerGlobalAvgPoolLayers();
  registerConcatLayers();
  registerPadLayers();
  registerReshapeLayers();
  registerChannelSelectLayers();
  registerRowGatherLayers(); // after the channel selection, which it wraps
  registerTransposeLayers();
  registerNormalizeLayers();
  registerUpsampleLayers();
}
} // namespace

void registerLayer(NodeKind k, std::shared_ptr<const Layer> l) {
  table().at(static_cast<size_t>(k)) = std::move(l);
}

std::shared_ptr<const Layer> registeredLayer(NodeKind k) {
  return table().at(static_cast<size_t>(k));
}

const Layer* findLayer(NodeKind k) {
  static std::once_flag once;
  std::call_once(once, registerAll);
  return table().at(static_cast<size_t>(k)).get();
}

uint64_t ConstPool::add(const std::vector<uint8_t>& bytes, uint64_t align) {
  while (bytes_.size() % align)
    bytes_.push_back(0);
  const uint64_t off = bytes_.size();
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  return base_ + off;
}

uint64_t ConstPool::addInt32(const std::vector<int32_t>& words, uint64_t align) {
  std::vector<uint8_t> b(words.size() * 4);
  for (size_t i = 0; i < words.size(); ++i) {
    const uint32_t w = static_cast<uint32_t>(words[i]);
    for (int j = 0; j < 4; ++j)
      b[i * 4 + size_t(j)] = static_cast<uint8_t>(w >> (8 * j));
  }
  return add(b, align);
}

bool SramRows::fits(const Target& t) const {
  return act <= t.rows(Mem::Act) && wgt <= t.rows(Mem::Weight) && acc <= t.rows(Mem::Acc) &&
         param <= t.rows(Mem::Param);
}

std::string SramRows::figures(const Target& t) const {
  return std::to_string(act) + " act rows (has " + std::to_string(t.rows(Mem::Act)) + "), " +
         std::to_string(wgt) + " weight rows (has " + std::to_string(t.rows(Mem::Weight)) + "), " +
         std::to_string(acc) + " acc rows (has " + std::to_string(t.rows(Mem::Acc)) + ") and " +
         std::to_string(param) + " param rows (has " + std::to_string(t.rows(Mem::Param)) + ")";
}

void SramRows::raise(LayerInfo& info) const {
  const int64_t r[4] = {act, wgt, acc, param};
  for (int m = 0; m < 4; ++m)
    info.sram[m] = std::max(info.sram[m], r[m]);
}

DramTensor dramTensorOf(const NodeValue& v, int64_t L) {
  const Shape s = nchwOf(v.dims());
  DramTensor d;
  d.N = s[0];
  d.C = s[1];
  d.H = s[2];
  d.W = s[3];
  d.CB = ceilDiv(d.C, L);
  d.scale = scaleOf(v);
  d.zp = zeroPointOf(v);
  return d;
}

const DramTensor& LayerCtx::tensor(const NodeValue& v) const {
  auto it = tensors.find(v);
  if (it != tensors.end())
    return it->second;
  if (v.node->kind() != NodeKind::Constant || !checkActivation(v, "the value").empty())
    throw Error(nodeRef(*v.node), "NPU backend: value has no DRAM tensor (not an int8 value)");
  // A constant operand of an element-wise layer (a positional embedding added to a
  // sequence): its NCHWc bytes in the constant region, the padding lanes zero.
  const int64_t L = t.lanes();
  DramTensor d = dramTensorOf(v, L);
  const Tensor& c = v.node->payload();
  std::vector<uint8_t> bytes(size_t(d.rows() * L), 0);
  for (int64_t n = 0; n < d.N; ++n)
    for (int64_t ch = 0; ch < d.C; ++ch)
      for (int64_t y = 0; y < d.H; ++y)
        for (int64_t x = 0; x < d.W; ++x)
          bytes[size_t((((n * d.CB + ch / L) * d.H + y) * d.W + x) * L + ch % L)] =
              static_cast<uint8_t>(c.getAsInt(((n * d.C + ch) * d.H + y) * d.W + x));
  d.offset = consts.add(bytes);
  return tensors.emplace(v, d).first->second;
}

std::string nodeRef(const Node& n) {
  return std::string(n.kindName()) + " '" + n.name() + "'";
}

std::string checkActivation(const NodeValue& v, const char* what) {
  const Type& t = v.type();
  if (t.kind != ElemKind::Int8 || !t.quant.isQuantized())
    return std::string(what) + " is " + elemKindName(t.kind) +
           ", the NPU runs quantized int8 values only";
  if (t.quant.scales.size() != 1 || t.quant.zeroPoints.size() != 1)
    return std::string(what) + " has per-channel parameters; activations must be per tensor";
  if (t.rank() < 2 || t.rank() > 4)
    return std::string(what) + " has rank " + std::to_string(t.rank()) +
           "; the NPU keeps rank-2 [N, C], rank-3 [B, T, C] and rank-4 (NCHW) values";
  return "";
}

std::string checkInputAndResult(const Node& n) {
  if (auto r = checkActivation(n.input(0), "the input"); !r.empty())
    return r;
  return checkActivation(resultOf(n), "the result");
}

std::string checkCodesMove(const Node& n) {
  if (auto r = checkInputAndResult(n); !r.empty())
    return r;
  if (n.input(0).type().quant != n.resultType(0).quant)
    return "input and result quantization parameters differ (insert a Rescale)";
  return "";
}

float scaleOf(const NodeValue& v) {
  return v.type().quant.scales.at(0);
}

int32_t zeroPointOf(const NodeValue& v) {
  return v.type().quant.zeroPoints.at(0);
}

/// Why the constant operands of a Conv/Gemm/MatMul cannot be used, or "".
std::string checkWeights(const Node& n, size_t wIndex, size_t bIndex) {
  const NodeValue w = n.input(wIndex);
  if (w.node->kind() != NodeKind::Constant)
    return "the weights are not a constant (the NPU keeps weights in its constant region)";
  const Type& wt = w.type();
  if (wt.kind != ElemKind::Int8 || !wt.quant.isQuantized())
    return "the weights are " + wt.toString() + ", expected quantized int8";
  for (int32_t z : wt.quant.zeroPoints)
    if (z != 0)
      return "the weights have a non-zero zero point (expected symmetric weights)";
  const NodeValue b = n.optionalInput(bIndex);
  if (b) {
    if (b.node->kind() != NodeKind::Constant)
      return "the bias is not a constant";
    if (b.type().kind != ElemKind::Int32)
      return "the bias is " + b.type().toString() + ", expected int32";
  }
  return "";
}

/// The per-output-channel weight scale of channel k.
float weightScale(const NodeValue& w, int64_t k) {
  const auto& s = w.type().quant.scales;
  return s.size() == 1 ? s[0] : s.at(size_t(k));
}

Shape nchwOf(const Shape& s) {
  if (s.size() == 2)
    return {s[0], s[1], 1, 1};
  if (s.size() == 3)
    return {s[0] * s[1], s[2], 1, 1};
  return s;
}

int64_t channelAxis(size_t rank) {
  return rank == 3 ? 2 : 1;
}

} // namespace ember::npu
