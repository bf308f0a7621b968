// Codegen of Resize (int8 bilinear upsampling by whole factors: ember_resize_bilinear_i8
// with the taps of ember/quantization/BilinearUpsample.h; float32: nearest and linear, every
// coordinate transformation and nearest mode of the interpreter). Each dimension's table of output
// coordinate -> input neighbours and weight is computed here, at compile time, by the interpreter's
// own formulas (interpreter/kernels/ResizeKernels.cpp, in double), so the coordinates are its bits;
// the kernel (libjit/Resize.cpp) then combines the corners in its order, in double.
#include "Codegen.h"
#include "Strides.h"
#include "ember/graph/AttrViews.h"
#include "ember/graph/ResizeNearest.h"
#include "ember/quantization/BilinearUpsample.h"

#include <cmath>

namespace ember::cpu {

namespace {

/// Ranks the kernel's row walk takes (libjit/Resize.cpp's kMaxRank).
constexpr size_t kMaxRank = 8;

const char* const kTransforms[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                   "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
const char* const kNearestModes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

template <size_t N> bool oneOf(const std::string& s, const char* const (&list)[N]) {
  for (const char* e : list)
    if (s == e)
      return true;
  return false;
}

/// One output coordinate of one dimension, as the interpreter's Tap.
struct Tap {
  int64_t i0 = 0, i1 = 0;
  double w1 = 0;
  bool outside = false;
};

/// The taps of dimension d (the interpreter's dimTaps).
std::vector<Tap> dimTaps(const Op& n, size_t d, int64_t in, int64_t out, double scale,
                         double outLen) {
  const ResizeAttrs a = resizeOf(n.attrs());
  const std::string& ctm = a.coordinateTransformationMode;
  const bool linear = a.mode == "linear";
  const std::string& nm = a.nearestMode;
  const std::vector<double>& roi = a.roi;
  const size_t rank = roi.size() / 2;
  const double rs = d < rank ? roi[d] : 0.0, re = d < rank ? roi[d + rank] : 1.0;
  std::vector<Tap> taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    Tap& t = taps[size_t(o)];
    const double x = resizeSourceCoordRoi(ctm, double(o), scale, in, outLen, rs, re);
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
      t.i0 = t.i1 = resizeNearestIndex(nm, x, in); // supportsResize took known modes only
    }
  }
  return taps;
}

bool supportsResize(const Op& n) {
  const Type& x = n.input(0).type();
  const Type& y = n.resultType();
  if (n.numInputs() != 1 || x.kind != ElemKind::Float32 || x.quant.isQuantized() ||
      y.kind != ElemKind::Float32 || y.quant.isQuantized() || x.rank() < 1 || x.rank() > kMaxRank ||
      y.rank() != x.rank())
    return false;
  const ResizeAttrs a = resizeOf(n.attrs());
  const std::string& mode = a.mode;
  if (mode != "nearest" && mode != "linear")
    return false;
  if (!oneOf(a.coordinateTransformationMode, kTransforms))
    return false;
  if (mode == "nearest" && !oneOf(a.nearestMode, kNearestModes))
    return false;
  const size_t scales = a.scales ? a.scales->size() : 0;
  return scales == 0 || scales == x.rank();
}

/// The kernel's tables: per dimension d and output coordinate o (at base[d] + o), the
/// input offsets of the two neighbours (off[2 i], off[2 i + 1]; -1: outside the input,
/// tf_crop_and_resize) and the weight of the second (w1[i]).
struct Tables {
  std::vector<int64_t> off;
  std::vector<double> w1;
};

Tables tablesOf(const Op& n) {
  const Shape& id = n.input(0).dims();
  const Shape& od = n.resultType().dims;
  const std::vector<double> scales = resizeOf(n.attrs()).scales.value_or(std::vector<double>{});
  const std::vector<int64_t> stride = contiguousStrides(id);
  Tables t;
  for (size_t d = 0; d < id.size(); ++d) {
    const bool given = d < scales.size();
    const double s = given ? scales[d] : double(od[d]) / double(id[d]);
    for (const Tap& tap :
         dimTaps(n, d, id[d], od[d], s, given ? double(id[d]) * s : double(od[d]))) {
      t.off.push_back(tap.outside ? -1 : tap.i0 * stride[d]);
      t.off.push_back(tap.outside ? -1 : tap.i1 * stride[d]);
      t.w1.push_back(tap.w1);
    }
  }
  return t;
}

void emitResize(const Op& n, CodegenContext& ctx) {
  const Tables t = tablesOf(n);
  const Shape& od = n.resultType().dims;
  const ResizeAttrs a = resizeOf(n.attrs());
  const bool linear = a.mode == "linear";
  const float extrapolation = static_cast<float>(a.extrapolationValue);
  ctx.call("ember_resize_f32", {ctx.addr(n.input(0)), ctx.result(n), ctx.i64(int64_t(od.size())),
                                ctx.int64Array(std::vector<int64_t>(od.begin(), od.end())),
                                ctx.keep(t.off.empty() ? std::vector<int64_t>{0} : t.off),
                                ctx.keep(t.w1.empty() ? std::vector<double>{0} : t.w1),
                                ctx.i32(linear), ctx.f32(extrapolation), ctx.tid(), ctx.nth()});
}

/// An int8 bilinear upsampling by whole factors (docs/numerics.md 4.4) with the input's
/// parameters.
bool supportsResizeBilinear8(const Op& n) {
  const Type &x = n.input(0).type(), &y = n.resultType();
  return n.numInputs() == 1 && x.isPerTensorInt8() && y.isPerTensorInt8() && x.quant == y.quant &&
         !quant::bilinearUpsampleFactors(n.attrs(), x.dims, y.dims).empty();
}

/// The taps of one axis as the kernel's table: (i0, i1, w0, w1) per output coordinate.
std::vector<int64_t> tapTable(int64_t in, int64_t f) {
  std::vector<int64_t> t;
  for (const quant::BilinearTap& tap : quant::bilinearTaps(in, f))
    t.insert(t.end(), {tap.i0, tap.i1, tap.w0, tap.w1});
  return t;
}

void emitResizeBilinear8(const Op& n, CodegenContext& ctx) {
  const Shape &x = n.input(0).dims(), &y = n.resultType().dims;
  const std::vector<int64_t> f = quant::bilinearUpsampleFactors(n.attrs(), x, y);
  const quant::Multiplier m = quant::bilinearMultiplier(f[0], f[1]);
  ctx.call("ember_resize_bilinear_i8",
           {ctx.addr(n.input(0)), ctx.result(n), ctx.i64(x[0] * x[1]), ctx.i64(x[2]), ctx.i64(x[3]),
            ctx.i64(y[2]), ctx.i64(y[3]), ctx.keep(tapTable(x[2], f[0])),
            ctx.keep(tapTable(x[3], f[1])), ctx.i32(n.resultType().quant.zeroPoints.at(0)),
            ctx.i32(m.M), ctx.i32(m.S), ctx.tid(), ctx.nth()});
}

} // namespace

void registerResizeCodegen() {
  registerCodegenUnit(NodeKind::Resize, {"resize", supportsResize, emitResize});
  registerCodegenUnit(NodeKind::Resize, {"resize", supportsResizeBilinear8, emitResizeBilinear8});
}

} // namespace ember::cpu
