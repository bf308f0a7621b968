// The window walk of the pools over three spatial dimensions (libjit/Pool.cpp's float
// ember_pool3d_f32, libjit/Int8.cpp's ember_pool3d_i8): the interpreter's forEachWindow
// (interpreter/kernels/PoolKernels.cpp, Int8PoolKernels.cpp), so that the taps, their
// order and the counts are its own.
#pragma once

#include <stdint.h>

namespace libjit {

/// The window of a 3-D pool, each field three values (depth, height, width); the
/// kernels take it as an array of 21 int64 in this order (codegen/PoolGen.cpp's
/// pool3Geom).
struct Pool3 {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
};

/// The taps [*lo, *hi) of one dimension whose input position start + k * dil lies inside
/// [0, in) (the interpreter's tapRange).
inline void tapRange(int64_t start, int64_t in, int64_t k, int64_t dil, int64_t* lo, int64_t* hi) {
  *lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
  *hi = start >= in ? 0 : ((in - start + dil - 1) / dil < k ? (in - start + dil - 1) / dil : k);
  if (*lo > *hi)
    *lo = *hi;
}

/// The taps of one window: inside the input, and inside the padded input.
struct Pool3Counts {
  int64_t inside, padded;
};

/// Calls f(offset) for every tap of output o[0..2]'s window inside the input plane, in
/// (kd, kh, kw) order; returns the window's counts.
template <typename F> inline Pool3Counts pool3Window(const Pool3& g, const int64_t* o, F f) {
  int64_t st[3], lo[3], hi[3], padded = 1;
  for (int dim = 0; dim < 3; ++dim) {
    st[dim] = o[dim] * g.s[dim] - g.pb[dim];
    tapRange(st[dim], g.in[dim], g.k[dim], g.d[dim], &lo[dim], &hi[dim]);
    int64_t plo, phi;
    tapRange(st[dim] + g.pb[dim], g.in[dim] + g.pb[dim] + g.pe[dim], g.k[dim], g.d[dim], &plo,
             &phi);
    padded *= phi - plo;
  }
  for (int64_t kd = lo[0]; kd < hi[0]; ++kd) {
    const int64_t id = st[0] + kd * g.d[0];
    for (int64_t kh = lo[1]; kh < hi[1]; ++kh) {
      const int64_t row = (id * g.in[1] + st[1] + kh * g.d[1]) * g.in[2] + st[2];
      for (int64_t kw = lo[2]; kw < hi[2]; ++kw)
        f(row + kw * g.d[2]);
    }
  }
  return {(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]), padded};
}

} // namespace libjit
