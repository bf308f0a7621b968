#pragma once
/// \file
/// IEEE 754 binary16 storage: the element type of ElemKind::Float16. Ember computes
/// nothing in half precision; kernels widen a Float16 to float, compute, and round the
/// result back (correctly rounded for +, -, *, / and sqrt, since float has more than
/// twice the half's precision), as docs/numerics.md says.

#include <cstdint>

namespace ember {

/// A binary16 value as its 16 bits.
struct Float16 {
  uint16_t bits = 0;

  Float16() = default;
  /// Rounds `v` to the nearest binary16 (ties to even; overflow to infinity; NaN kept).
  explicit Float16(double v) : bits(fromDouble(v)) {}
  /// The exact value.
  double toDouble() const;
  explicit operator float() const { return static_cast<float>(toDouble()); }
  explicit operator double() const { return toDouble(); }

  /// The binary16 bits nearest to `v` (round to nearest, ties to even).
  static uint16_t fromDouble(double v);
};

} // namespace ember
