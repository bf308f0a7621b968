// The zero-padded band of input rows the direct and Winograd float convolutions read
// (libjit/ConvDirect.cpp, libjit/ConvWinograd.cpp).
#pragma once

#include "Libjit.h"

namespace libjit {

/// Copies the padded input rows [r0, r0 + rows) of channels [0, cg) of image-group `xg`
/// into `band` ([c][row][Wp], padded row r is input row r - ph), zeros outside the input;
/// then zeros the slack after the band.
inline void copyBand(const float* xg, int64_t cg, int64_t H, int64_t W, int64_t ph, int64_t pw,
                     int64_t r0, int64_t rows, int64_t Wp, int64_t slack, float* band) {
  // Columns q whose input column q - pw lies inside [0, W).
  const int64_t q0 = pw < Wp ? pw : Wp;
  const int64_t q1 = W + pw < Wp ? W + pw : Wp;
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t r = 0; r < rows; ++r) {
      float* d = band + (c * rows + r) * Wp;
      const int64_t ih = r0 + r - ph;
      if (ih < 0 || ih >= H) {
        for (int64_t q = 0; q < Wp; ++q)
          d[q] = 0.f;
        continue;
      }
      const float* s = xg + (c * H + ih) * W;
      for (int64_t q = 0; q < q0; ++q)
        d[q] = 0.f;
      for (int64_t q = q0; q < q1; ++q)
        d[q] = s[q - pw];
      for (int64_t q = q1 > q0 ? q1 : q0; q < Wp; ++q)
        d[q] = 0.f;
    }
  for (int64_t t = 0; t < slack; ++t)
    band[cg * rows * Wp + t] = 0.f;
}

} // namespace libjit
