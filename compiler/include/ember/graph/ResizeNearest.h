// Nearest-neighbour Resize as a whole-number upsampling: the ONNX coordinate formulas the
// interpreter's Resize kernel uses (interpreter/kernels/ResizeKernels.cpp), evaluated per
// axis to decide whether output coordinate o reads input coordinate o / f for a whole
// factor f on every axis. Such a Resize repeats every element f times along each axis,
// which backends that move whole rows (the NPU's DMA) or strided copies (the CPU) run
// exactly.
#pragma once

#include "ember/graph/AttrViews.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ember {

/// Whether `ctm` is one of ONNX Resize's coordinate_transformation_modes.
inline bool isResizeCoordinateMode(const std::string& ctm) {
  for (const char* m : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                        "tf_half_pixel_for_nn", "tf_crop_and_resize"})
    if (ctm == m)
      return true;
  return false;
}

/// The input coordinate of output coordinate `x` of one axis under ONNX Resize's
/// coordinate_transformation_mode `ctm`; `out` is the output length before flooring
/// (input * scale) when the model gave scales, `roiStart`/`roiEnd` the axis's region of
/// interest (tf_crop_and_resize only). NaN for an unknown mode. The interpreter, the cpu
/// backend and the NPU's upsampling test all use this one formula.
inline double resizeSourceCoordRoi(const std::string& ctm, double x, double scale, int64_t in,
                                   double out, double roiStart, double roiEnd) {
  if (ctm == "half_pixel")
    return (x + 0.5) / scale - 0.5;
  if (ctm == "pytorch_half_pixel")
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (ctm == "align_corners")
    return out == 1 ? 0.0 : x * double(in - 1) / (out - 1);
  if (ctm == "asymmetric")
    return x / scale;
  if (ctm == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  if (ctm == "tf_crop_and_resize")
    return out > 1
               ? roiStart * double(in - 1) + x * (roiEnd - roiStart) * double(in - 1) / (out - 1)
               : 0.5 * (roiStart + roiEnd) * double(in - 1);
  return std::nan("");
}

/// resizeSourceCoordRoi for the modes without a region of interest (NaN for
/// tf_crop_and_resize and for an unknown mode).
inline double resizeSourceCoord(const std::string& ctm, double x, double scale, int64_t in,
                                double out) {
  return ctm == "tf_crop_and_resize" ? std::nan("")
                                     : resizeSourceCoordRoi(ctm, x, scale, in, out, 0.0, 1.0);
}

/// The input index ONNX's `nearest_mode` `nm` picks for coordinate `x`, not clamped;
/// nullopt for an unknown mode.
inline std::optional<int64_t> resizeNearestPick(const std::string& nm, double x) {
  const double f = std::floor(x);
  if (nm == "floor")
    return int64_t(f);
  if (nm == "ceil")
    return int64_t(std::ceil(x));
  if (nm == "round_prefer_floor" || nm == "round_prefer_ceil")
    return x - f == 0.5 ? int64_t(nm == "round_prefer_ceil" ? f + 1 : f) : int64_t(std::round(x));
  return std::nullopt;
}

/// resizeNearestPick clamped to [0, in), or -1 for an unknown mode.
inline int64_t resizeNearestIndex(const std::string& nm, double x, int64_t in) {
  const std::optional<int64_t> i = resizeNearestPick(nm, x);
  if (!i)
    return -1;
  return *i < 0 ? 0 : (*i >= in ? in - 1 : *i);
}

/// The whole factor of every axis (output length / input length) when a Resize of
/// attributes `attrs` from `in` to `out` is nearest and output coordinate o of each axis
/// reads input coordinate o / factor; empty otherwise (linear or cubic,
/// tf_crop_and_resize, a fractional factor, or a mode that picks other neighbours).
inline std::vector<int64_t> nearestUpsampleFactors(const Attrs& attrs, const Shape& in,
                                                   const Shape& out) {
  const ResizeAttrs a = resizeOf(attrs);
  if (a.mode != "nearest" || in.size() != out.size())
    return {};
  const std::vector<double> scales = a.scales.value_or(std::vector<double>{});
  std::vector<int64_t> factors;
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] <= 0 || out[d] % in[d] != 0)
      return {};
    const int64_t f = out[d] / in[d];
    const bool given = d < scales.size();
    const double s = given ? scales[d] : double(out[d]) / double(in[d]);
    const double len = given ? double(in[d]) * s : double(out[d]);
    for (int64_t o = 0; o < out[d]; ++o) {
      const double x = resizeSourceCoord(a.coordinateTransformationMode, double(o), s, in[d], len);
      if (std::isnan(x) || resizeNearestIndex(a.nearestMode, x, in[d]) != o / f)
        return {};
    }
    factors.push_back(f);
  }
  return factors;
}

/// Whether a Resize is the int8 form every backend runs: nearest by whole factors
/// (nearestUpsampleFactors), rank at most 4 and at most two axes scaled (the CPU's one
/// strided copy of at most six axes). The quantizer makes no other int8 Resize.
inline bool isInt8Upsample(const Attrs& attrs, const Shape& in, const Shape& out) {
  const std::vector<int64_t> f = nearestUpsampleFactors(attrs, in, out);
  int scaled = 0;
  for (int64_t v : f)
    scaled += v > 1;
  return !f.empty() && f.size() <= 4 && scaled <= 2;
}

} // namespace ember
