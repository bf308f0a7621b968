// Shared helpers of the libjit kernels (compiled to LLVM bitcode by clang, never by the
// host compiler). Every kernel is an extern "C" function whose shape arguments the
// generated code passes as constants, so that after inlining LLVM specialises it on the
// model's static shapes. The last two arguments of every kernel, `tid` and `nth`, are the
// part of the node that the call computes and the node's number of parts (ThreadTeam.h:
// whichever thread takes a part): a kernel computes that share of the output (a
// contiguous range of an outer loop), so results never depend on the part count nor on
// the thread. A kernel's `scratch` is the calling thread's own, used from its start.
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define EMBER_KERNEL extern "C"

namespace libjit {

/// The part [*begin, *end) of [0, n) that part `tid` of `nth` computes.
inline void threadRange(int64_t n, int64_t tid, int64_t nth, int64_t* begin, int64_t* end) {
  const int64_t chunk = n / nth, rest = n % nth;
  *begin = tid * chunk + (tid < rest ? tid : rest);
  *end = *begin + chunk + (tid < rest ? 1 : 0);
}

/// The panel GEMMs (convolutions) split work items of (image, group, panel of output
/// positions) over threads; with fewer than four items per thread (the late layers of a
/// CNN) each item's weight blocks are split into this many chunks too, so that every
/// thread gets about the same share. Each output is computed by the same arithmetic.
inline int64_t weightChunks(int64_t units, int64_t mblocks, int64_t nth) {
  const int64_t want = 4 * nth;
  if (units >= want)
    return 1;
  const int64_t c = (want + units - 1) / units;
  return c < mblocks ? c : (mblocks > 0 ? mblocks : 1);
}

/// The parameters of every float convolution kernel except the depthwise one (codegen/
/// ConvGen.cpp passes them in this order): `addend` is the other operand of a residual
/// Add fused into the convolution (null when none); act, lo and hi are then the Add's
/// activation.
#define EMBER_CONV_ARGS                                                                            \
  const float *x, const float *wp, const float *bias, float *y, int64_t N, int64_t C, int64_t H,   \
      int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,            \
      int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t group, int32_t act,      \
      float lo, float hi, const float *addend, float *scratch, int64_t tid, int64_t nth

/// The parameters of the depthwise kernels (ember_dwconv_f32 and _c16): the same call.
#define EMBER_DWCONV_ARGS                                                                          \
  const float *x, const float *w, const float *bias, float *y, int64_t N, int64_t C, int64_t H,    \
      int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,            \
      int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int32_t act, float lo, float hi, \
      float *scratch, int64_t tid, int64_t nth

/// Calls f(offset) with the offset ih * W + iw of every tap of output (oh, ow)'s pooling
/// window that lies inside the H x W plane, in the window loop's order (kh, then kw).
template <typename F>
inline void forEachTap(int64_t oh, int64_t ow, int64_t H, int64_t W, int64_t KH, int64_t KW,
                       int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                       F f) {
  for (int64_t kh = 0; kh < KH; ++kh) {
    const int64_t ih = oh * sh - ph + kh * dh;
    if (ih < 0 || ih >= H)
      continue;
    for (int64_t kw = 0; kw < KW; ++kw) {
      const int64_t iw = ow * sw - pw + kw * dw;
      if (iw >= 0 && iw < W)
        f(ih * W + iw);
    }
  }
}

/// The element count of a six-dimensional box of extents `d`.
inline int64_t boxSize(const int64_t* d) {
  return d[0] * d[1] * d[2] * d[3] * d[4] * d[5];
}

/// The offset, for strides `s`, of the element with row-major index `i` in a
/// six-dimensional box of extents `d` (the reductions' kept and reduced boxes).
inline int64_t boxOffset(int64_t i, const int64_t* d, const int64_t* s) {
  int64_t off = 0;
  for (int k = 5; k >= 0; --k) {
    off += (i % d[k]) * s[k];
    i /= d[k];
  }
  return off;
}

/// The five outer indices of row `r` of a six-dimensional box `d` whose last dimension is
/// the row (the boxes of broadcasting and strided kernels).
struct Row5 {
  int64_t i[5];
  /// Offset of the row's first element for the strides `s` of the five outer dimensions.
  int64_t offset(const int64_t* s) const {
    return i[0] * s[0] + i[1] * s[1] + i[2] * s[2] + i[3] * s[3] + i[4] * s[4];
  }
};
inline Row5 decodeRow(int64_t r, const int64_t* d) {
  Row5 x;
  for (int k = 4; k > 0; --k) {
    x.i[k] = r % d[k];
    r /= d[k];
  }
  x.i[0] = r;
  return x;
}

/// The same in units of `grain` elements (the last unit may be partial).
inline void threadRangeGrain(int64_t n, int64_t grain, int64_t tid, int64_t nth, int64_t* begin,
                             int64_t* end) {
  const int64_t units = (n + grain - 1) / grain;
  int64_t b, e;
  threadRange(units, tid, nth, &b, &e);
  *begin = b * grain;
  *end = e * grain < n ? e * grain : n;
}

/// Fused activation of Conv/Gemm/MatMul/Add (ember/graph/attrs/FusedActivation.h):
/// 0 none, 1 relu, 2 clip(lo, hi) with Clip's semantics (max first, then min).
inline float activate(int32_t act, float x, float lo, float hi) {
  if (act == 1)
    return x <= 0 ? 0.f : x; // NaN stays NaN
  if (act == 2) {
    const float y = x < lo ? lo : x;
    return y > hi ? hi : y;
  }
  return x;
}

/// The fused activation of libjit::activate on a vector, in place (the same comparisons,
/// so NaN stays NaN under relu and clip alike).
template <typename V> inline void activateV(int32_t act, V& x, float lo, float hi) {
  if (act == 1) {
    x = x <= V{} * 0.f ? V{} * 0.f : x;
  } else if (act == 2) {
    const V l = V{} * 0.f + lo, h = V{} * 0.f + hi;
    x = x < l ? l : x;
    x = x > h ? h : x;
  }
}

/// Six-dimensional index walk helpers: strides are in elements.
struct Dims6 {
  int64_t d[6];
};

/// e^x in float without branches, so that loops over it vectorise (Cephes' expf: 2^n
/// times a degree-6 polynomial of x - n ln 2, n = round(x / ln 2)): within a few ulp of
/// exp on [-87.3, 88.7], 0 below (where exp is below FLT_MIN), +inf above, NaN for NaN.
inline float expFast(float x) {
  const float lo = -87.3365447f, hi = 88.7228317f;
  float xc = x < lo ? lo : x;
  xc = xc > hi ? hi : xc;
  const float n = __builtin_floorf(xc * 1.44269504088896341f + 0.5f);
  float r = xc - n * 0.693359375f;
  r -= n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  // 2^n as two normal powers (n is in [-126, 128]).
  const int32_t n1 = static_cast<int32_t>(n) >> 1, n2 = static_cast<int32_t>(n) - n1;
  const uint32_t b1 = static_cast<uint32_t>(n1 + 127) << 23, b2 = static_cast<uint32_t>(n2 + 127)
                                                                  << 23;
  float s1, s2;
  memcpy(&s1, &b1, sizeof s1);
  memcpy(&s2, &b2, sizeof s2);
  const float y = p * s1 * s2;
  return x != x ? x : (x < lo ? 0.f : (x > hi ? __builtin_inff() : y));
}

typedef double D8 __attribute__((vector_size(64)));
typedef float F8 __attribute__((vector_size(32)));
typedef float F16 __attribute__((vector_size(64)));

/// out = src[0], src[2], ..., src[30]: the even lanes of 32 consecutive floats (the
/// inputs of 16 outputs at stride 2), read as two vectors and joined by one shuffle.
inline void evenLanes(const float* src, F16& out) {
  F16 lo, hi;
  memcpy(&lo, src, sizeof lo);
  memcpy(&hi, src + 16, sizeof hi);
  out = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}

/// sum f(x[i * stride]) for i < n in double, with eight partial sums (a vectorised
/// reduction: plain loops keep the sequential order and do not vectorise); `f` maps, in
/// place, a vector of eight doubles and a single double alike (references, not values:
/// vectors passed by value change the ABI).
template <typename F> inline double sumAsDouble(const float* x, int64_t n, int64_t stride, F f) {
  D8 acc = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  if (stride == 1)
    for (; i + 8 <= n; i += 8) {
      F8 v;
      memcpy(&v, x + i, sizeof v);
      D8 d = __builtin_convertvector(v, D8);
      f(d);
      acc += d;
    }
  double s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) {
    double d = x[i * stride];
    f(d);
    s += d;
  }
  return s;
}

/// sum x[i * stride] for i < n, in double (sumAsDouble).
inline double sumAsDouble(const float* x, int64_t n, int64_t stride = 1) {
  return sumAsDouble(x, n, stride, [](auto&) {});
}

/// sum (x[i * stride] - mean)^2 for i < n, in double (sumAsDouble).
inline double sumSquaredDeviations(const float* x, int64_t n, double mean, int64_t stride = 1) {
  return sumAsDouble(x, n, stride, [mean](auto& v) { v = (v - mean) * (v - mean); });
}

} // namespace libjit
