#pragma once
/// \file
/// Typed view of the explicit quantization parameters a QuantizeLinear or
/// DequantizeLinear node may carry as attributes (ARCHITECTURE section 4): either
/// `scale` (+ `zero_point`) per tensor, or `scales` (+ `zero_points`, `axis`) per axis.
/// Without either, the node takes its parameters from its result (Quantize) or input
/// (Dequantize) type.

#include "ember/graph/Node.h"
#include "ember/tensor/Type.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace ember {

/// The quantization attributes of a QuantizeLinear / DequantizeLinear node, as written.
struct QuantAttrs {
  std::optional<double> scale;                    ///< Per tensor.
  std::optional<int64_t> zeroPoint;               ///< Per tensor, as written.
  std::optional<std::vector<double>> scales;      ///< Per axis.
  std::optional<std::vector<int64_t>> zeroPoints; ///< Per axis, as written.
  int64_t axis = 1;                               ///< Per axis, as written (may be negative).

  bool perTensor() const { return scale.has_value(); }
  bool perAxis() const { return !scale && scales.has_value(); }
  /// The parameters the attributes give (per tensor wins over per axis): absent zero
  /// points are 0, the axis is as written. Empty (not quantized) when neither is given.
  QuantParams params() const;
};
/// Reads the quantization attributes of `a` (none of them required).
QuantAttrs quantOf(const Attrs& a);

} // namespace ember
