#include "ember/tensor/Float16.h"

#include <cmath>

namespace ember {

double Float16::toDouble() const {
  const bool neg = (bits & 0x8000u) != 0;
  const int exp = (bits >> 10) & 0x1f;
  const int mant = bits & 0x3ff;
  double v;
  if (exp == 0x1f)
    v = mant ? std::nan("") : INFINITY;
  else if (exp == 0)
    v = std::ldexp(static_cast<double>(mant), -24); // subnormal: mant * 2^-24
  else
    v = std::ldexp(1.0 + mant / 1024.0, exp - 15);
  return neg ? -v : v;
}

uint16_t Float16::fromDouble(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000u : 0u;
  if (std::isnan(v))
    return static_cast<uint16_t>(sign | 0x7e00u);
  const double a = std::fabs(v);
  // 65520 is half-way between the largest finite half (65504) and 2^16: ties go to the
  // even neighbour, which is infinity.
  if (a >= 65520.0)
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (a < std::ldexp(1.0, -14)) {
    // Subnormal (or zero): a multiple of 2^-24; a rounded count of 1024 is the smallest
    // normal number, whose encoding is that same 0x400.
    const double q = std::nearbyint(std::ldexp(a, 24));
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(q));
  }
  int e;
  const double m = std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1)
  int exp = e - 1 + 15;
  double mant = std::nearbyint((m * 2.0 - 1.0) * 1024.0);
  if (mant >= 1024.0) {
    mant = 0;
    ++exp;
  }
  if (exp >= 31)
    return static_cast<uint16_t>(sign | 0x7c00u);
  return static_cast<uint16_t>(sign | (exp << 10) | static_cast<uint16_t>(mant));
}

} // namespace ember
