#include "ember/graph/AttrViews.h"
#pragma once
/// \file
/// Spatial window geometry shared by the convolution and pooling kernels.
///
/// 1-D, 2-D and 3-D windows are all handled as 3-D ones: missing leading spatial
/// dimensions get extent 1, kernel 1, stride 1 and no padding, so each kernel is
/// written once.

#include "ember/graph/AttrViews.h"
#include "ember/graph/Node.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <cstring>

namespace ember {

/// Geometry of a window over up to three spatial dimensions (index 0 = depth).
struct Window3 {
  int64_t in[3] = {1, 1, 1};  ///< input extents
  int64_t out[3] = {1, 1, 1}; ///< output extents
  int64_t k[3] = {1, 1, 1};   ///< kernel extents
  int64_t s[3] = {1, 1, 1};   ///< strides
  int64_t d[3] = {1, 1, 1};   ///< dilations
  int64_t pb[3] = {0, 0, 0};  ///< padding at the beginning
  int64_t pe[3] = {0, 0, 0};  ///< padding at the end
  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
  int64_t kSize() const { return k[0] * k[1] * k[2]; }

  /// The range [lo, hi) of output positions o of dimension `dim` for which the input
  /// position o * s + offset lies inside [0, in).
  void validRange(int dim, int64_t offset, int64_t* lo, int64_t* hi) const {
    const int64_t st = s[dim];
    *lo = offset >= 0 ? 0 : (-offset + st - 1) / st;
    const int64_t last = in[dim] - 1 - offset; // largest o * s allowed
    *hi = last < 0 ? 0 : std::min(out[dim], last / st + 1);
    if (*lo > *hi)
      *lo = *hi;
  }
};

/// Builds the window of node `n` from its canonical attributes (ONNX defaults when
/// absent), input shape `x` (N, C, spatial...), output shape `y` and, for
/// convolutions, the filter's spatial extents. For ConvTranspose, `in`/`out` are
/// swapped by the caller as needed.
inline Window3 makeWindow3(const Node& n, const Shape& x, const Shape& y,
                           const Shape* filterSpatial) {
  const size_t nsp = x.size() - 2;
  if (nsp < 1 || nsp > 3)
    throw Error("only 1 to 3 spatial dimensions are supported");
  const WindowAttrs a = windowOf(n.attrs(), nsp, filterSpatial);
  const std::vector<int64_t>&k = a.kernel, &s = a.strides, &p = a.pads, &d = a.dilations;
  Window3 w;
  const size_t off = 3 - nsp;
  for (size_t i = 0; i < nsp; ++i) {
    w.in[off + i] = x[2 + i];
    w.out[off + i] = y[2 + i];
    w.k[off + i] = k[i];
    w.s[off + i] = s[i];
    w.d[off + i] = d[i];
    w.pb[off + i] = p[i];
    w.pe[off + i] = p[nsp + i];
  }
  return w;
}

/// Column matrix of a convolution over `channels` input planes: one row per (channel, kd,
/// kh, kw), one column per output position; positions in the padding hold `pad` (0 for
/// float, the input's zero point for int8). Shared by the float and the int8 kernels.
template <typename T> void im2col(const T* x, int64_t channels, const Window3& w, T pad, T* col) {
  const int64_t outPlane = w.outSize();
  for (int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * w.inSize();
    for (int64_t kd = 0; kd < w.k[0]; ++kd)
      for (int64_t kh = 0; kh < w.k[1]; ++kh)
        for (int64_t kw = 0; kw < w.k[2]; ++kw) {
          const int64_t offW = kw * w.d[2] - w.pb[2];
          int64_t lo, hi;
          w.validRange(2, offW, &lo, &hi);
          for (int64_t od = 0; od < w.out[0]; ++od) {
            const int64_t id = od * w.s[0] + kd * w.d[0] - w.pb[0];
            for (int64_t oh = 0; oh < w.out[1]; ++oh) {
              const int64_t ih = oh * w.s[1] + kh * w.d[1] - w.pb[1];
              T* dst = col + (od * w.out[1] + oh) * w.out[2];
              if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) {
                std::fill(dst, dst + w.out[2], pad);
                continue;
              }
              const T* src = xc + (id * w.in[1] + ih) * w.in[2] + offW;
              std::fill(dst, dst + lo, pad);
              if (w.s[2] == 1)
                std::memcpy(dst + lo, src + lo, sizeof(T) * static_cast<size_t>(hi - lo));
              else
                for (int64_t ow = lo; ow < hi; ++ow)
                  dst[ow] = src[ow * w.s[2]];
              std::fill(dst + hi, dst + w.out[2], pad);
            }
          }
          col += outPlane;
        }
  }
}

/// Calls row(tap, src, dst, lo, hi) for every kernel tap (index into a KD x KH x KW filter)
/// and every output row whose input row lies inside the input: `src` is the offset of
/// the tap's input row (shifted by the tap's W offset), `dst` that of the output row, and
/// output columns [lo, hi) read inside the input (column ow reads src + ow * s[2]). The
/// walk of direct (depthwise) convolutions, float and int8.
template <typename F> void forEachTapRow(const Window3& w, F row) {
  for (int64_t kd = 0; kd < w.k[0]; ++kd)
    for (int64_t kh = 0; kh < w.k[1]; ++kh)
      for (int64_t kw = 0; kw < w.k[2]; ++kw) {
        const int64_t tap = (kd * w.k[1] + kh) * w.k[2] + kw;
        const int64_t offW = kw * w.d[2] - w.pb[2];
        int64_t lo, hi;
        w.validRange(2, offW, &lo, &hi);
        for (int64_t od = 0; od < w.out[0]; ++od) {
          const int64_t id = od * w.s[0] + kd * w.d[0] - w.pb[0];
          if (id < 0 || id >= w.in[0])
            continue;
          for (int64_t oh = 0; oh < w.out[1]; ++oh) {
            const int64_t ih = oh * w.s[1] + kh * w.d[1] - w.pb[1];
            if (ih < 0 || ih >= w.in[1])
              continue;
            row(tap, (id * w.in[1] + ih) * w.in[2] + offW, (od * w.out[1] + oh) * w.out[2], lo, hi);
          }
        }
      }
}

} // namespace ember
