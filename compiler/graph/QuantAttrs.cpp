// Typed view of a QuantizeLinear / DequantizeLinear node's explicit parameters.
#include "ember/graph/attrs/QuantAttrs.h"

namespace ember {

QuantAttrs quantOf(const Attrs& a) {
  QuantAttrs r;
  if (a.has("scale"))
    r.scale = a.getFloat("scale");
  if (a.has("zero_point"))
    r.zeroPoint = a.getInt("zero_point");
  if (a.has("scales"))
    r.scales = a.getFloats("scales");
  if (a.has("zero_points"))
    r.zeroPoints = a.getInts("zero_points");
  r.axis = a.getInt("axis", 1);
  return r;
}

QuantParams QuantAttrs::params() const {
  QuantParams q;
  if (scale) {
    q.scales = {static_cast<float>(*scale)};
    q.zeroPoints = {static_cast<int32_t>(zeroPoint.value_or(0))};
  } else if (scales) {
    q.axis = static_cast<int>(axis);
    for (double s : *scales)
      q.scales.push_back(static_cast<float>(s));
    for (int64_t z : zeroPoints.value_or(std::vector<int64_t>(q.scales.size(), 0)))
      q.zeroPoints.push_back(static_cast<int32_t>(z));
  }
  return q;
}

} // namespace ember
