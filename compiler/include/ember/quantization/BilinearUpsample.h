// Int8 bilinear upsampling by whole factors (docs/numerics.md section 4.4), the one
// definition the interpreter's int8 Resize kernel, the cpu backend and the NPU's bilinear
// layer use. A linear Resize of an NCHW value whose H and W are scaled by whole factors
// f (1 <= f <= kMaxBilinearFactor) under half_pixel or pytorch_half_pixel reads, per
// output coordinate o = f i + r of an axis, the input coordinate
//   x = (o + 0.5) / f - 0.5 = i + d / (2 f),   d = 2 r + 1 - f,
// i.e. the neighbours (i - 1, i) with weights (-d, 2 f + d) / (2 f) when d < 0 and
// (i, i + 1) with weights (2 f - d, d) / (2 f) otherwise, neighbours outside the input
// clamped to its border (the float rule's clamping, as an edge-replicated input). The int8
// output, with the input's scale and zero point zp, is
//   y = R(sum over the 2 x 2 neighbours of wH * wW * (x - zp); 1 / (4 fH fW)) + zp
// (section 3's requantization, bounds [-128, 127]): integer weights, one requantization.
#pragma once

#include "ember/graph/ResizeNearest.h"
#include "ember/quantization/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ember::quant {

/// The largest whole factor: the NPU multiplies by the products wH * wW <= (2 f)^2, which
/// must fit an int8 weight.
constexpr int64_t kMaxBilinearFactor = 5;

/// One output coordinate of one axis: the input neighbours (clamped to the input) and
/// their integer weights, w0 + w1 = 2 f.
struct BilinearTap {
  int64_t i0 = 0, i1 = 0;
  int32_t w0 = 0, w1 = 0;
};

/// The taps of an axis of `in` coordinates upsampled by the whole factor `f`.
inline std::vector<BilinearTap> bilinearTaps(int64_t in, int64_t f) {
  std::vector<BilinearTap> taps(size_t(in * f));
  for (int64_t o = 0; o < in * f; ++o) {
    const int64_t i = o / f, d = 2 * (o % f) + 1 - f;
    BilinearTap& t = taps[size_t(o)];
    t.i0 = d < 0 ? i - 1 : i;
    t.w0 = int32_t(d < 0 ? -d : 2 * f - d);
    t.w1 = int32_t(2 * f) - t.w0;
    t.i1 = std::min(t.i0 + 1, in - 1);
    t.i0 = std::max<int64_t>(t.i0, 0);
  }
  return taps;
}

/// Whether the float rule (ResizeKernels.cpp: x clamped to [0, in - 1], neighbours
/// floor(x) and floor(x) + 1 clamped, weights 1 - frac and frac) gives every output
/// coordinate of the axis the weights of bilinearTaps, per input coordinate.
inline bool bilinearTapsMatch(const std::string& ctm, int64_t in, int64_t f, double scale,
                              double len) {
  const std::vector<BilinearTap> taps = bilinearTaps(in, f);
  for (int64_t o = 0; o < in * f; ++o) {
    const double x = resizeSourceCoord(ctm, double(o), scale, in, len);
    if (std::isnan(x))
      return false;
    const double xc = std::min(std::max(x, 0.0), double(in - 1));
    const int64_t a = int64_t(std::floor(xc)), b = std::min(a + 1, in - 1);
    const double wb = xc - double(a);
    const BilinearTap& t = taps[size_t(o)];
    for (int64_t c : {a, b, t.i0, t.i1}) {
      const double fl = (c == a ? 1 - wb : 0) + (c == b ? wb : 0);
      const double in8 = double((c == t.i0 ? t.w0 : 0) + (c == t.i1 ? t.w1 : 0)) / double(2 * f);
      if (std::fabs(fl - in8) > 1e-9)
        return false;
    }
  }
  return true;
}

/// The factors {fH, fW} of a Resize of attributes `attrs` from `in` to `out` that is an
/// int8 bilinear upsampling (rank 4, mode 'linear', half_pixel or pytorch_half_pixel, N
/// and C unscaled, H and W scaled by whole factors of at most kMaxBilinearFactor, every
/// coordinate's weights those of bilinearTaps); empty otherwise.
inline std::vector<int64_t> bilinearUpsampleFactors(const Attrs& attrs, const Shape& in,
                                                    const Shape& out) {
  const ResizeAttrs a = resizeOf(attrs);
  const std::string& ctm = a.coordinateTransformationMode;
  if (a.mode != "linear" || in.size() != 4 || out.size() != 4 ||
      (ctm != "half_pixel" && ctm != "pytorch_half_pixel") || in[0] != out[0] || in[1] != out[1])
    return {};
  const std::vector<double> scales = a.scales.value_or(std::vector<double>{});
  std::vector<int64_t> factors;
  for (size_t d = 2; d < 4; ++d) {
    if (in[d] <= 0 || out[d] % in[d] != 0 || out[d] / in[d] > kMaxBilinearFactor)
      return {};
    const int64_t f = out[d] / in[d];
    const bool given = d < scales.size();
    const double s = given ? scales[d] : double(f);
    if (!bilinearTapsMatch(ctm, in[d], f, s, given ? double(in[d]) * s : double(out[d])))
      return {};
    factors.push_back(f);
  }
  return factors;
}

/// Whether a Resize has an int8 form: a nearest upsampling by whole factors (codes picked,
/// isInt8Upsample) or a bilinear one (bilinearUpsampleFactors).
inline bool isInt8Resize(const Attrs& attrs, const Shape& in, const Shape& out) {
  return isInt8Upsample(attrs, in, out) || !bilinearUpsampleFactors(attrs, in, out).empty();
}

/// The requantization multiplier of a bilinear upsampling by fH x fW: 1 / (4 fH fW).
inline Multiplier bilinearMultiplier(int64_t fH, int64_t fW) {
  return quantizeMultiplier(1.0 / double(4 * fH * fW));
}

/// Output code of a bilinear upsampling at the taps (th, tw) of one plane `x` (W codes a
/// line) with zero point zp and multiplier m (bilinearMultiplier).
inline int8_t bilinearCode(const int8_t* x, int64_t W, const BilinearTap& th, const BilinearTap& tw,
                           int32_t zp, Multiplier m) {
  const auto line = [&](int64_t i) {
    return tw.w0 * (int32_t(x[i * W + tw.i0]) - zp) + tw.w1 * (int32_t(x[i * W + tw.i1]) - zp);
  };
  return requantize(th.w0 * line(th.i0) + th.w1 * line(th.i1), m, zp, -128, 127);
}

} // namespace ember::quant
