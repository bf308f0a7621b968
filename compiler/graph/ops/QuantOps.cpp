// Type inference of the quantization boundary kinds (ARCHITECTURE section 4).
#include "ember/graph/InferUtil.h"
#include "ember/graph/OpInfo.h"

namespace ember {

namespace {

// QuantizeLinear: float32 -> int8. The quantization parameters come from the result
// type given to Function::create (or attributes scale/zero_point when not given).
std::vector<Type> quantizeInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  requireKind(in[0], {ElemKind::Float32}, "input");
  Type t(ElemKind::Int8, in[0].dims());
  if (a.has("scale")) {
    t.quant.scales = {static_cast<float>(a.getFloat("scale"))};
    t.quant.zeroPoints = {static_cast<int32_t>(a.getInt("zero_point", 0))};
  }
  return {t};
}

std::vector<Type> dequantizeInfer(const std::vector<NodeValue>& in, const Attrs&) {
  requireKind(in[0], {ElemKind::Int8, ElemKind::Int32}, "input");
  if (!in[0].type().quant.isQuantized())
    inferError("input " + in[0].type().toString() + " carries no quantization parameters");
  return {Type(ElemKind::Float32, in[0].dims())};
}

} // namespace

void registerQuantOps() {
  registerOpInfo({NodeKind::QuantizeLinear, {"input"}, 1, quantizeInfer});
  registerOpInfo({NodeKind::DequantizeLinear, {"input"}, 1, dequantizeInfer});
}

} // namespace ember
