// The stride phases of a plane (layout in ConvScratch.h) and the copy of the flattened
// results back into rows: shared by the float depthwise convolution (libjit/Conv.cpp)
// and the max pool of small planes (libjit/Pool.cpp), which both compute a vector of
// kDwStep output positions per tap from one contiguous load of a phase.
#pragma once

#include "ConvScratch.h"
#include "Libjit.h"

namespace libjit {

/// Copies input plane `xc` (H x W) into the stride phases of `g` at `phases` (layout in
/// ConvScratch.h), `pad` where the phase reaches into the padding (zeros for a
/// convolution, -inf for a max pool); only the phases some kernel tap reads are written.
inline void buildPhases(const float* xc, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh,
                        int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                        const ember::jitops::DwGeom& g, float pad, float* phases) {
  using ember::jitops::kDwStep;
  for (int64_t a = 0; a < sh; ++a)
    for (int64_t b = 0; b < sw; ++b) {
      bool used = false;
      for (int64_t kh = 0; kh < KH && !used; ++kh)
        for (int64_t kw = 0; kw < KW && !used; ++kw)
          used = (kh * dh) % sh == a && (kw * dw) % sw == b;
      if (!used)
        continue;
      float* p = phases + (a * sw + b) * g.plane;
      // Columns j whose input column sw * j + b - pw lies inside [0, W).
      const int64_t off = b - pw;
      const int64_t j0 = off >= 0 ? 0 : (-off + sw - 1) / sw;
      int64_t j1 = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
      j1 = j1 < g.Wq ? j1 : g.Wq;
      for (int64_t i = 0; i < g.Hq; ++i) {
        float* row = p + i * g.Wq;
        const int64_t iy = sh * i + a - ph;
        if (iy < 0 || iy >= H || j0 >= j1) {
          for (int64_t j = 0; j < g.Wq; ++j)
            row[j] = pad;
          continue;
        }
        const float* src = xc + iy * W + off;
        for (int64_t j = 0; j < j0; ++j)
          row[j] = pad;
        int64_t j = j0;
        if (sw == 1)
          for (; j < j1; ++j)
            row[j] = src[j];
        else if (sw == 2)
          // Even lanes of 32 consecutive floats while they lie inside the input row.
          for (; j + kDwStep <= j1 && off + 2 * j + 2 * kDwStep <= W; j += kDwStep) {
            F16 even;
            evenLanes(src + 2 * j, even);
            __builtin_memcpy(row + j, &even, sizeof even);
          }
        for (; j < j1; ++j)
          row[j] = src[j * sw];
        for (int64_t j = j1; j < g.Wq; ++j)
          row[j] = pad;
      }
      for (int64_t t = g.Hq * g.Wq; t < g.plane; ++t)
        p[t] = pad;
    }
}

/// Copies the OH rows of OW outputs (row oh at out + oh * Wq) into the plane y (rows OW
/// apart) with the activation, a vector of kDwStep at a time: a row's last vector ends at
/// its last output (overlapping the one before), and a row narrower than a vector spills
/// into the next row, which is written after it; only the plane's last kDwStep outputs
/// are copied one by one, so nothing past the plane is written.
inline void storeRows(const float* out, int64_t Wq, int64_t OH, int64_t OW, int32_t act, float lo,
                      float hi, float* y) {
  using ember::jitops::kDwStep;
  const int64_t P = OH * OW;
  int64_t oh = 0;
  for (; oh < OH && oh * OW + kDwStep <= P; ++oh)
    for (int64_t ow = 0; ow < OW; ow += kDwStep) {
      const int64_t at = OW >= kDwStep && ow + kDwStep > OW ? OW - kDwStep : ow;
      F16 v;
      __builtin_memcpy(&v, out + oh * Wq + at, sizeof v);
      activateV(act, v, lo, hi);
      __builtin_memcpy(y + oh * OW + at, &v, sizeof v);
    }
  for (; oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow)
      y[oh * OW + ow] = activate(act, out[oh * Wq + ow], lo, hi);
}

} // namespace libjit
