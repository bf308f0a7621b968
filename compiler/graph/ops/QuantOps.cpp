// Type inference of the quantization boundary kinds (ARCHITECTURE section 4).
//
// The quantization parameters of QuantizeLinear's result come from the result type
// given to Function::create, or from attributes: scale + zero_point (per tensor) or
// scales + zero_points + axis (per axis). DequantizeLinear uses the same attributes
// when present, else the quantization parameters of its input's type.
#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/graph/OpInfo.h"

namespace ember {

namespace {

/// Quantization parameters from attributes (empty scales when there are none).
QuantParams quantFromAttrs(const Attrs& a, const Shape& dims) {
  const QuantAttrs v = quantOf(a);
  QuantParams q = v.params();
  if (v.perAxis()) {
    q.axis = static_cast<int>(normalizeAxis(v.axis, dims.size()));
    if (int64_t(q.scales.size()) != dims[size_t(q.axis)] || q.zeroPoints.size() != q.scales.size())
      inferError("per-axis scales/zero_points have " + std::to_string(q.scales.size()) + "/" +
                 std::to_string(q.zeroPoints.size()) + " values, axis " + std::to_string(q.axis) +
                 " of " + shapeToString(dims) + " has " + std::to_string(dims[size_t(q.axis)]));
  }
  for (float s : q.scales)
    if (!(s > 0))
      inferError("scale " + std::to_string(s) + " is not positive");
  return q;
}

std::vector<Type> quantizeInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  requireKind(in[0], {ElemKind::Float32}, "input");
  const QuantAttrs v = quantOf(a);
  for (int64_t z : v.zeroPoints.value_or(std::vector<int64_t>{}))
    if (z < -128 || z > 127)
      inferError("zero point " + std::to_string(z) + " is outside int8");
  if (v.zeroPoint && (*v.zeroPoint < -128 || *v.zeroPoint > 127))
    inferError("zero point " + std::to_string(*v.zeroPoint) + " is outside int8");
  return {Type(ElemKind::Int8, in[0].dims(), quantFromAttrs(a, in[0].dims()))};
}

std::vector<Type> dequantizeInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  requireKind(in[0], {ElemKind::Int8, ElemKind::Int32}, "input");
  if (!quantFromAttrs(a, in[0].dims()).isQuantized() && !in[0].type().quant.isQuantized())
    inferError("input " + in[0].type().toString() +
               " carries no quantization parameters and the node has no scale attribute");
  return {Type(ElemKind::Float32, in[0].dims())};
}

/// Lut: x int8 with per-tensor parameters, table int8 [256]; result int8 of x's shape
/// (its parameters come from the result type the creator gives).
std::vector<Type> lutInfer(const std::vector<NodeValue>& in, const Attrs&) {
  requireKind(in[0], {ElemKind::Int8}, "input");
  requireKind(in[1], {ElemKind::Int8}, "table");
  if (in[1].dims() != Shape{256})
    inferError("table has shape " + shapeToString(in[1].dims()) + ", expected [256]");
  return {Type(ElemKind::Int8, in[0].dims())};
}

/// Rescale: quantized int8 -> int8 of the same shape; the new parameters come from the
/// given result type or from attributes scale / zero_point.
std::vector<Type> rescaleInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  requireKind(in[0], {ElemKind::Int8}, "input");
  const QuantParams& q = in[0].type().quant;
  if (q.scales.size() != 1 || q.axis >= 0)
    inferError("input " + in[0].type().toString() + " needs per-tensor quantization parameters");
  return {Type(ElemKind::Int8, in[0].dims(), quantFromAttrs(a, in[0].dims()))};
}

} // namespace

void registerQuantOps() {
  registerOpInfo({NodeKind::Lut, {"input", "table"}, 2, lutInfer});
  registerOpInfo({NodeKind::Rescale, {"input"}, 1, rescaleInfer});
  registerOpInfo({NodeKind::QuantizeLinear, {"input"}, 1, quantizeInfer});
  registerOpInfo({NodeKind::DequantizeLinear, {"input"}, 1, dequantizeInfer});
}

} // namespace ember
