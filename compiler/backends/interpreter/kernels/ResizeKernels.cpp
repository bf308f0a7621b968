// Interpreter kernel of Resize (ONNX opset 11+ semantics, nearest and linear).
//
// Attributes (set by the importer): sizes (output shape), scales (per dimension, as
// given in the model, or output/input when the model gave sizes), mode,
// coordinate_transformation_mode, nearest_mode, roi (tf_crop_and_resize: starts then
// ends), extrapolation_value. Each dimension gets a table mapping output coordinates
// to (up to two) input coordinates and weights; linear mode combines the 2^rank
// corners, skipping zero weights.
#include "Broadcast.h"

#include "ember/interpreter/Kernels.h"

#include <cmath>

namespace ember {

namespace {

using namespace kernels;

/// One output coordinate of one dimension: input coordinates i0, i1 with weights.
struct Tap {
  int64_t i0 = 0, i1 = 0;
  double w1 = 0;        // weight of i1 (i0 gets 1 - w1)
  bool outside = false; // tf_crop_and_resize outside the input: extrapolation value
};

/// The input coordinate of output coordinate x. `out` is the output length before
/// flooring (input * scale) when the model gave scales, as ONNX's reference uses it.
double originalCoord(const std::string& ctm, double x, double scale, int64_t in, double out,
                     double roiStart, double roiEnd) {
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
  throw Error("Resize: coordinate_transformation_mode '" + ctm + "' is not supported");
}

int64_t nearestIndex(const std::string& nm, double x) {
  if (nm == "floor")
    return int64_t(std::floor(x));
  if (nm == "ceil")
    return int64_t(std::ceil(x));
  const double f = std::floor(x);
  if (x - f == 0.5)
    return int64_t(nm == "round_prefer_ceil" ? f + 1 : f);
  if (nm == "round_prefer_floor" || nm == "round_prefer_ceil")
    return int64_t(std::round(x));
  throw Error("Resize: nearest_mode '" + nm + "' is not supported");
}

std::vector<Tap> dimTaps(const Node& n, size_t d, int64_t in, int64_t out, double scale,
                         double outLen) {
  const Attrs& a = n.attrs();
  const std::string ctm = a.getString("coordinate_transformation_mode", "half_pixel");
  const bool linear = a.getString("mode", "nearest") == "linear";
  const std::string nm = a.getString("nearest_mode", "round_prefer_floor");
  const std::vector<double> roi = a.getFloats("roi");
  const size_t rank = roi.size() / 2;
  const double rs = d < rank ? roi[d] : 0.0, re = d < rank ? roi[d + rank] : 1.0;
  std::vector<Tap> taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    Tap& t = taps[size_t(o)];
    const double x = originalCoord(ctm, double(o), scale, in, outLen, rs, re);
    if (ctm == "tf_crop_and_resize" && (x < 0 || x > double(in - 1))) {
      t.outside = true;
      continue;
    }
    if (linear) {
      const double xc = std::min(std::max(x, 0.0), double(in - 1));
      t.i0 = int64_t(std::floor(xc));
      t.i1 = std::min(t.i0 + 1, in - 1);
      t.w1 = xc - double(t.i0);
    } else {
      t.i0 = t.i1 = std::min(std::max<int64_t>(nearestIndex(nm, x), 0), in - 1);
    }
  }
  return taps;
}

void resizeKernel(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const Shape& id = in[0]->dims();
  const Shape& od = out[0].dims();
  const size_t rank = id.size();
  const std::vector<double> scales = n.attrs().getFloats("scales");
  std::vector<std::vector<Tap>> taps(rank);
  for (size_t d = 0; d < rank; ++d) {
    const bool given = d < scales.size();
    const double s = given ? scales[d] : double(od[d]) / double(id[d]);
    taps[d] = dimTaps(n, d, id[d], od[d], s, given ? double(id[d]) * s : double(od[d]));
  }
  const double extrapolation = n.attrs().getFloat("extrapolation_value", 0.0);
  const std::vector<int64_t> st = stridesOf(id);
  std::vector<int64_t> mi;
  for (int64_t o = 0, e = out[0].size(); o < e; ++o) {
    unravel(o, od, mi);
    bool outside = false;
    for (size_t d = 0; d < rank; ++d)
      outside = outside || taps[d][size_t(mi[d])].outside;
    double v = extrapolation;
    if (!outside) {
      v = 0;
      for (uint64_t corner = 0; corner < (uint64_t(1) << rank); ++corner) {
        double w = 1;
        int64_t src = 0;
        for (size_t d = 0; d < rank && w != 0; ++d) {
          const Tap& t = taps[d][size_t(mi[d])];
          const bool hi = (corner >> d) & 1;
          w *= hi ? t.w1 : 1 - t.w1;
          src += (hi ? t.i1 : t.i0) * st[d];
        }
        if (w != 0)
          v += w * in[0]->getAsDouble(src);
      }
    }
    out[0].setFromDouble(o, v);
  }
}

} // namespace

void registerResizeKernels() {
  registerKernel(NodeKind::Resize, resizeKernel);
}

} // namespace ember
