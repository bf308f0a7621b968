// Interpreter kernel of Resize (ONNX opset 11+ semantics, nearest, linear and cubic).
//
// Attributes (set by the importer): sizes (output shape), scales (per dimension, as
// given in the model, or output/input when the model gave sizes), mode,
// coordinate_transformation_mode, nearest_mode, roi (tf_crop_and_resize: starts then
// ends), extrapolation_value, cubic_coeff_a and exclude_outside (cubic). Each dimension
// gets a table mapping output coordinates to (up to four) input coordinates and
// weights; the output combines one tap per dimension in every way, skipping zero
// weights (linear: the 2^rank corners; cubic: 4^rank, separable as ONNX's reference).
#include "Broadcast.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/ResizeNearest.h"
#include "ember/interpreter/Kernels.h"

#include <cmath>

namespace ember {

namespace {

using namespace kernels;

/// One output coordinate of one dimension: up to four input coordinates with weights
/// (nearest: one, linear: two, cubic: four).
struct Tap {
  int n = 0;
  int64_t i[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
  bool outside = false; // tf_crop_and_resize outside the input: extrapolation value
};

/// The input coordinate of output coordinate x (ember/graph/ResizeNearest.h's formula).
double originalCoord(const std::string& ctm, double x, double scale, int64_t in, double out,
                     double roiStart, double roiEnd) {
  if (!isResizeCoordinateMode(ctm))
    throw Error("Resize: coordinate_transformation_mode '" + ctm + "' is not supported");
  return resizeSourceCoordRoi(ctm, x, scale, in, out, roiStart, roiEnd);
}

int64_t nearestIndex(const std::string& nm, double x) {
  const std::optional<int64_t> i = resizeNearestPick(nm, x);
  if (!i)
    throw Error("Resize: nearest_mode '" + nm + "' is not supported");
  return *i;
}

/// Cubic taps as ONNX's reference computes them: the four inputs around x (edge values
/// beyond the borders), Keys' coefficients with parameter A for the distances 1 + r, r,
/// 1 - r, 2 - r (r = x - floor(x), taken as 1 when 0); with exclude_outside the taps
/// outside the input get weight 0 and the others are renormalised.
Tap cubicTap(double x, int64_t in, double A, bool excludeOutside) {
  const double xi = std::floor(x);
  double r = x - xi;
  if (r == 0)
    r = 1;
  auto near = [A](double s) { return ((A + 2) * s - (A + 3)) * s * s + 1; };
  auto far = [A](double s) { return ((A * s - 5 * A) * s + 8 * A) * s - 4 * A; };
  const double c[4] = {far(r + 1), near(r), near(1 - r), far(2 - r)};
  // r == 1 means x was whole: the taps start one lower (x - 2 .. x + 1).
  const int64_t first = int64_t(xi) - (x - xi == 0 ? 2 : 1);
  Tap t;
  t.n = 4;
  double sum = 0;
  for (int k = 0; k < 4; ++k) {
    const int64_t idx = first + k;
    const bool inside = idx >= 0 && idx < in;
    t.i[k] = std::min(std::max<int64_t>(idx, 0), in - 1);
    t.w[k] = excludeOutside && !inside ? 0.0 : c[k];
    sum += t.w[k];
  }
  if (excludeOutside && sum != 0)
    for (double& w : t.w)
      w /= sum;
  return t;
}

std::vector<Tap> dimTaps(const Node& n, size_t d, int64_t in, int64_t out, double scale,
                         double outLen) {
  const ResizeAttrs a = resizeOf(n.attrs());
  const std::string& ctm = a.coordinateTransformationMode;
  const std::string& mode = a.mode;
  const std::string& nm = a.nearestMode;
  const double A = a.cubicCoeffA;
  const bool excludeOutside = a.excludeOutside;
  const std::vector<double>& roi = a.roi;
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
    if (mode == "cubic") {
      t = cubicTap(x, in, A, excludeOutside);
    } else if (mode == "linear") {
      const double xc = std::min(std::max(x, 0.0), double(in - 1));
      t.n = 2;
      t.i[0] = int64_t(std::floor(xc));
      t.i[1] = std::min(t.i[0] + 1, in - 1);
      t.w[1] = xc - double(t.i[0]);
      t.w[0] = 1 - t.w[1];
    } else {
      t.n = 1;
      t.i[0] = std::min(std::max<int64_t>(nearestIndex(nm, x), 0), in - 1);
      t.w[0] = 1;
    }
  }
  return taps;
}

void resizeKernel(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const Shape& id = in[0]->dims();
  const Shape& od = out[0].dims();
  const size_t rank = id.size();
  const ResizeAttrs ra = resizeOf(n.attrs());
  const std::vector<double> scales = ra.scales.value_or(std::vector<double>{});
  std::vector<std::vector<Tap>> taps(rank);
  for (size_t d = 0; d < rank; ++d) {
    const bool given = d < scales.size();
    const double s = given ? scales[d] : double(od[d]) / double(id[d]);
    taps[d] = dimTaps(n, d, id[d], od[d], s, given ? double(id[d]) * s : double(od[d]));
  }
  const double extrapolation = ra.extrapolationValue;
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
      // Every combination of one tap per dimension (k: the tap of each, odometer order).
      std::vector<int> k(rank, 0);
      for (bool more = true; more;) {
        double w = 1;
        int64_t src = 0;
        for (size_t d = 0; d < rank && w != 0; ++d) {
          const Tap& t = taps[d][size_t(mi[d])];
          w *= t.w[k[d]];
          src += t.i[k[d]] * st[d];
        }
        if (w != 0)
          v += w * in[0]->getAsDouble(src);
        more = false;
        for (size_t d = rank; d-- > 0 && !more;) {
          if (++k[d] < taps[d][size_t(mi[d])].n)
            more = true;
          else
            k[d] = 0;
        }
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
