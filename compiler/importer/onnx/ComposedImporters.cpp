// ONNX importers of operators Ember composes from existing node kinds (or, for the
// window functions, turns into Constants at import):
//
// - HannWindow, HammingWindow, BlackmanWindow (opset 17): the size must be known at
//   compile time; the window is a Constant computed by ONNX's formula
//   a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1.
// - MeanVarianceNormalization (opsets 9-13): ONNX's function body, (X - E[X]) /
//   (sqrt(E[X^2] - E[X]^2) + 1e-9), with ReduceMean over `axes`.
// - ReverseSequence (opset 10): sequence_lens must be known at compile time; the result
//   is a GatherElements along time_axis with a constant index map.
// - DFT (opset 17): a real or complex signal along `axis` times constant cosine and sine
//   matrices (MatMul), the inverse scaled by 1/N; onesided keeps N/2 + 1 bins;
//   dft_length must be absent or the signal's length.
#include "ember/importer/OnnxOpImporter.h"

#include <cmath>
#include <string>

namespace ember {

namespace {

using K = NodeKind;

std::string str(int64_t v) {
  return std::to_string(v);
}

constexpr double kPi = 3.14159265358979323846;

/// The window's output element type (attribute output_datatype): float32 or float64.
void importWindow(OnnxNodeContext& ctx, double a0, double a1, double a2) {
  const std::vector<int64_t> sizeV = ctx.constantInts(0, "size");
  if (sizeV.size() != 1)
    ctx.fail("operand size must be a scalar");
  const int64_t size = sizeV[0];
  if (size < 0 || size > kMaxTensorElements)
    ctx.fail("size " + str(size) + " is out of range");
  const int64_t dtype = ctx.attrInt("output_datatype", 1);
  if (dtype != 1 && dtype != 11)
    ctx.unsupported("output_datatype " + str(dtype) + " (only float32 and float64)");
  const bool periodic = ctx.attrInt("periodic", 1) != 0;
  const double n = double(periodic ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    const double angle = n == 0 ? 0.0 : 2 * kPi * double(i) / n;
    w[size_t(i)] = a0 - a1 * std::cos(angle) + a2 * std::cos(2 * angle);
  }
  if (dtype == 11) {
    ctx.setOutput(0, ctx.constant(Tensor::fromVector<double>({size}, w)));
    return;
  }
  std::vector<float> f(w.begin(), w.end());
  ctx.setOutput(0, ctx.constant(Tensor::fromVector<float>({size}, f)));
}

void requireFloat(OnnxNodeContext& ctx, size_t i) {
  if (ctx.input(i).kind() != ElemKind::Float32)
    ctx.unsupported("operand " + str(int64_t(i)) + " has element kind " +
                    elemKindName(ctx.input(i).kind()) + "; only float32 is supported");
}

void importMeanVarianceNormalization(OnnxNodeContext& ctx) {
  requireFloat(ctx, 0);
  const NodeValue x = ctx.input(0);
  const int64_t rank = int64_t(x.dims().size());
  std::vector<int64_t> axes = ctx.attrInts("axes", {0, 2, 3});
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank)
      ctx.fail("axis " + str(a) + " is out of range for rank " + str(rank));
    if (a < 0)
      a += rank;
  }
  Attrs r;
  r.set("axes", axes);
  r.set("keepdims", int64_t(1));
  const NodeValue mean = ctx.emit(K::ReduceMean, {x}, r, "_mean");
  const NodeValue meanSq = ctx.emit(K::Mul, {mean, mean}, {}, "_mean_sq");
  const NodeValue sq = ctx.emit(K::Mul, {x, x}, {}, "_sq");
  const NodeValue sqMean = ctx.emit(K::ReduceMean, {sq}, r, "_sq_mean");
  const NodeValue var = ctx.emit(K::Sub, {sqMean, meanSq}, {}, "_var");
  const NodeValue sd = ctx.emit(K::Sqrt, {var}, {}, "_std");
  const NodeValue eps = ctx.constant(Tensor::scalar<float>(1e-9f), "_eps");
  const NodeValue den = ctx.emit(K::Add, {sd, eps}, {}, "_den");
  const NodeValue centred = ctx.emit(K::Sub, {x, mean}, {}, "_centred");
  ctx.setOutput(0, ctx.emit(K::Div, {centred, den}));
}

void importReverseSequence(OnnxNodeContext& ctx) {
  const NodeValue x = ctx.input(0);
  const Shape& d = x.dims();
  if (d.size() < 2)
    ctx.fail("input " + shapeToString(d) + " must have rank 2 or more");
  const int64_t batchAxis = ctx.attrInt("batch_axis", 1), timeAxis = ctx.attrInt("time_axis", 0);
  if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    ctx.fail("batch_axis and time_axis must be 0 and 1 in some order");
  const std::vector<int64_t> lens = ctx.constantInts(1, "sequence_lens");
  const int64_t batch = d[size_t(batchAxis)], time = d[size_t(timeAxis)];
  if (int64_t(lens.size()) != batch)
    ctx.fail("sequence_lens has " + str(int64_t(lens.size())) + " values for batch " + str(batch));
  for (int64_t len : lens)
    if (len < 0 || len > time)
      ctx.fail("sequence_lens value " + str(len) + " is outside [0, " + str(time) + "]");
  // Index along time_axis of every element: t < len ? len - 1 - t : t.
  const int64_t n = numElements(d);
  int64_t inner = 1;
  for (size_t k = 2; k < d.size(); ++k)
    inner *= d[k];
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t e = 0; e < n; ++e) {
    const int64_t i0 = e / (d[1] * inner), i1 = (e / inner) % d[1];
    const int64_t b = batchAxis == 0 ? i0 : i1, t = batchAxis == 0 ? i1 : i0;
    const int64_t len = lens[size_t(b)];
    idx[size_t(e)] = t < len ? len - 1 - t : t;
  }
  Attrs a;
  a.set("axis", timeAxis);
  const NodeValue indices = ctx.constant(Tensor::fromVector<int64_t>(d, idx), "_indices");
  ctx.setOutput(0, ctx.emit(K::GatherElements, {x, indices}, a));
}

/// Moves axis `from` of a rank-r value to position `to` (a Transpose).
NodeValue moveAxis(OnnxNodeContext& ctx, NodeValue v, size_t from, size_t to,
                   const std::string& suffix) {
  std::vector<int64_t> perm;
  for (size_t k = 0; k < v.dims().size(); ++k)
    if (k != from)
      perm.push_back(int64_t(k));
  perm.insert(perm.begin() + long(to), int64_t(from));
  Attrs a;
  a.set("perm", perm);
  return ctx.emit(K::Transpose, {v}, a, suffix);
}

void importDFT(OnnxNodeContext& ctx) {
  requireFloat(ctx, 0);
  const NodeValue x = ctx.input(0);
  const Shape& d = x.dims();
  const int64_t rank = int64_t(d.size());
  if (rank < 2 || (d.back() != 1 && d.back() != 2))
    ctx.fail("input " + shapeToString(d) + " must end with a dimension of 1 (real) or 2");
  int64_t axis = ctx.attrInt("axis", 1);
  if (axis < -(rank - 1) || axis >= rank - 1)
    ctx.fail("axis " + str(axis) + " is out of range for input " + shapeToString(d));
  if (axis < 0)
    axis += rank - 1;
  const int64_t n = d[size_t(axis)];
  if (ctx.numInputs() > 1 && ctx.hasInput(1)) {
    const std::vector<int64_t> len = ctx.constantInts(1, "dft_length");
    if (len.size() != 1 || len[0] != n)
      ctx.unsupported("dft_length other than the signal's length " + str(n) +
                      " (padding or truncation)");
  }
  const bool inverse = ctx.attrInt("inverse", 0) != 0;
  const bool onesided = ctx.attrInt("onesided", 0) != 0;
  if (inverse && onesided)
    ctx.unsupported("inverse with onesided");
  const int64_t bins = onesided ? n / 2 + 1 : n;
  // cos and sin of 2 pi k m / n, [n, bins]; the inverse's 1/n folded in.
  const double scale = inverse ? 1.0 / double(n) : 1.0;
  std::vector<float> c(size_t(n * bins)), s(size_t(n * bins));
  for (int64_t m = 0; m < n; ++m)
    for (int64_t k = 0; k < bins; ++k) {
      const double angle = 2 * kPi * double((k * m) % n) / double(n);
      c[size_t(m * bins + k)] = float(scale * std::cos(angle));
      s[size_t(m * bins + k)] = float(scale * std::sin(angle));
    }
  const NodeValue cosM = ctx.constant(Tensor::fromVector<float>({n, bins}, c), "_cos");
  const NodeValue sinM = ctx.constant(Tensor::fromVector<float>({n, bins}, s), "_sin");
  // The signal as [rows, n] (its axis moved last, the complex axis dropped).
  Shape lead;
  for (int64_t k = 0; k < rank - 1; ++k)
    if (k != axis)
      lead.push_back(d[size_t(k)]);
  const int64_t rows = numElements(lead);
  auto part = [&](int64_t p, const char* name) {
    std::vector<int64_t> starts(size_t(rank), 0), ends(d.begin(), d.end()), steps(size_t(rank), 1);
    starts.back() = p;
    ends.back() = p + 1;
    Attrs a;
    a.set("starts", starts);
    a.set("ends", ends);
    a.set("steps", steps);
    NodeValue v = ctx.emit(K::Slice, {x}, a, std::string("_") + name);
    v = moveAxis(ctx, v, size_t(axis), size_t(rank - 1), std::string("_") + name + "_t");
    Attrs r;
    r.set("shape", std::vector<int64_t>{rows, n});
    return ctx.emit(K::Reshape, {v}, r, std::string("_") + name + "_2d");
  };
  const NodeValue re = part(0, "re");
  const NodeValue im = d.back() == 2 ? part(1, "im") : NodeValue();
  // Forward: Re = re cos + im sin, Im = im cos - re sin; inverse: Re = re cos - im sin,
  // Im = im cos + re sin (the 1/n is in the matrices).
  auto mm = [&](NodeValue a, NodeValue b, const char* name) {
    return ctx.emit(K::MatMul, {a, b}, {}, std::string("_") + name);
  };
  NodeValue outRe = mm(re, cosM, "re_cos");
  NodeValue outIm = mm(re, sinM, "re_sin");
  if (!inverse)
    outIm = ctx.emit(K::Neg, {outIm}, {}, "_neg_re_sin");
  if (im) {
    const NodeValue imSin = mm(im, sinM, "im_sin");
    outRe = ctx.emit(inverse ? K::Sub : K::Add, {outRe, imSin}, {}, "_out_re");
    outIm = ctx.emit(K::Add, {outIm, mm(im, cosM, "im_cos")}, {}, "_out_im");
  }
  // Back to [..., bins at axis, ..., 1], then the two parts side by side.
  auto back = [&](NodeValue v, const char* name) {
    Shape shape = lead;
    shape.push_back(bins);
    Attrs r;
    r.set("shape", shape);
    v = ctx.emit(K::Reshape, {v}, r, std::string("_") + name + "_nd");
    v = moveAxis(ctx, v, size_t(rank - 2), size_t(axis), std::string("_") + name + "_back");
    Shape withC = v.dims();
    withC.push_back(1);
    Attrs r2;
    r2.set("shape", withC);
    return ctx.emit(K::Reshape, {v}, r2, std::string("_") + name + "_c");
  };
  Attrs cat;
  cat.set("axis", rank - 1);
  ctx.setOutput(0, ctx.emit(K::Concat, {back(outRe, "re"), back(outIm, "im")}, cat));
}

} // namespace

void registerOnnxComposedImporters() {
  registerOnnxOp("HannWindow", {"output_datatype", "periodic"},
                 [](OnnxNodeContext& c) { importWindow(c, 0.5, 0.5, 0.0); });
  registerOnnxOp("HammingWindow", {"output_datatype", "periodic"},
                 [](OnnxNodeContext& c) { importWindow(c, 25.0 / 46.0, 21.0 / 46.0, 0.0); });
  registerOnnxOp("BlackmanWindow", {"output_datatype", "periodic"},
                 [](OnnxNodeContext& c) { importWindow(c, 0.42, 0.5, 0.08); });
  registerOnnxOp("MeanVarianceNormalization", {"axes"}, importMeanVarianceNormalization);
  registerOnnxOp("ReverseSequence", {"batch_axis", "time_axis"}, importReverseSequence);
  registerOnnxOp("DFT", {"axis", "inverse", "onesided"}, importDFT);
}

} // namespace ember
