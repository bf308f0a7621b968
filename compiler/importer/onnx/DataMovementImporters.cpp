// ONNX importers of the data-movement operators, and of the import-time-only ones that
// become Constants (ConstantOfShape, Range, EyeLike). Shape-like operands (shape,
// axes, starts/ends, pads, repeats, scales/sizes) must be compile-time constants; they
// are resolved here (0 and -1 in Reshape, negative axes, Slice clamping, Resize sizes)
// so that the graph's attributes are canonical.
#include "OnnxTensor.h"
#include "ember/importer/OnnxOpImporter.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <cmath>

namespace ember {

namespace {

using Ctx = OnnxNodeContext;

std::string str(int64_t v) {
  return std::to_string(v);
}

/// Normalises an axis against `rank`, failing with the node's name when out of range.
int64_t axisIn(Ctx& ctx, int64_t axis, size_t rank, const char* what = "axis") {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    ctx.fail(std::string(what) + " " + str(axis) + " is out of range for rank " + str(r));
  return axis < 0 ? axis + r : axis;
}

/// Integer list from an attribute (before `inputOpset`) or from constant operand i.
std::vector<int64_t> intsFrom(Ctx& ctx, int64_t inputOpset, const char* name, size_t i,
                              bool* present = nullptr) {
  if (ctx.opset() < inputOpset) {
    if (present)
      *present = ctx.hasAttr(name);
    return ctx.attrInts(name);
  }
  if (present)
    *present = ctx.hasInput(i);
  return ctx.hasInput(i) ? ctx.constantInts(i, name) : std::vector<int64_t>();
}

NodeValue reshapeTo(Ctx& ctx, NodeValue x, const Shape& s, const std::string& suffix = "") {
  if (numElements(s) != x.type().size())
    ctx.fail("cannot reshape input " + shapeToString(x.dims()) + " to " + shapeToString(s) +
             ": element counts differ");
  Attrs a;
  a.set("shape", s);
  return ctx.emit(NodeKind::Reshape, {x}, std::move(a), suffix);
}

void importReshape(Ctx& ctx) {
  const NodeValue x = ctx.input(0);
  std::vector<int64_t> shape = ctx.constantInts(1, "shape");
  const bool allowZero = ctx.attrInt("allowzero", 0) != 0;
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero) {
      if (i >= x.dims().size())
        ctx.fail("shape " + shapeToString(shape) + " copies dimension " + str(int64_t(i)) +
                 " that input " + shapeToString(x.dims()) + " lacks");
      shape[i] = x.dims()[i];
    }
    if (shape[i] == -1) {
      if (inferred >= 0)
        ctx.fail("shape " + shapeToString(shape) + " has more than one -1");
      inferred = int64_t(i);
    } else if (shape[i] < 0) {
      ctx.fail("shape " + shapeToString(shape) + " has a negative dimension");
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      ctx.fail("shape " + shapeToString(shape) + " has too many elements");
    }
  }
  if (inferred >= 0) {
    if (known == 0 || x.type().size() % known != 0)
      ctx.fail("cannot infer the -1 of shape " + shapeToString(shape) + " for input " +
               shapeToString(x.dims()));
    shape[size_t(inferred)] = x.type().size() / known;
  }
  ctx.setOutput(0, reshapeTo(ctx, x, shape));
}

void importFlatten(Ctx& ctx) {
  const NodeValue x = ctx.input(0);
  const int64_t r = int64_t(x.dims().size());
  int64_t axis = ctx.attrInt("axis", 1);
  if (axis < -r || axis > r)
    ctx.fail("axis " + str(axis) + " is out of range for rank " + str(r));
  axis = axis < 0 ? axis + r : axis;
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= x.dims()[size_t(i)];
  const int64_t inner = numElements(Shape(x.dims().begin() + axis, x.dims().end()));
  ctx.setOutput(0, reshapeTo(ctx, x, {outer, inner}));
}

void importSqueeze(Ctx& ctx) {
  const NodeValue x = ctx.input(0);
  const Shape& d = x.dims();
  std::vector<int64_t> axes = intsFrom(ctx, 13, "axes", 1);
  std::vector<bool> drop(d.size(), false);
  for (int64_t a : axes) {
    const int64_t n = axisIn(ctx, a, d.size(), "axes value");
    if (d[size_t(n)] != 1)
      ctx.fail("cannot squeeze dimension " + str(n) + " of " + shapeToString(d) + ": not 1");
    drop[size_t(n)] = true;
  }
  Shape out;
  for (size_t i = 0; i < d.size(); ++i)
    if (!(axes.empty() ? d[i] == 1 : drop[i]))
      out.push_back(d[i]);
  ctx.setOutput(0, reshapeTo(ctx, x, out));
}

void importUnsqueeze(Ctx& ctx) {
  const NodeValue x = ctx.input(0);
  const Shape& d = x.dims();
  std::vector<int64_t> axes = intsFrom(ctx, 13, "axes", 1);
  const size_t rank = d.size() + axes.size();
  std::vector<bool> ins(rank, false);
  for (int64_t a : axes) {
    const int64_t n = axisIn(ctx, a, rank, "axes value");
    if (ins[size_t(n)])
      ctx.fail("axes " + shapeToString(axes) + " repeat an axis");
    ins[size_t(n)] = true;
  }
  Shape out;
  for (size_t i = 0, k = 0; i < rank; ++i)
    out.push_back(ins[i] ? 1 : d[k++]);
  ctx.setOutput(0, reshapeTo(ctx, x, out));
}

void importTranspose(Ctx& ctx) {
  Attrs a;
  if (ctx.hasAttr("perm"))
    a.set("perm", ctx.attrInts("perm"));
  ctx.setOutput(0, ctx.emit(NodeKind::Transpose, {ctx.input(0)}, std::move(a)));
}

void importConcat(Ctx& ctx) {
  std::vector<NodeValue> in;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i))
      in.push_back(ctx.input(i));
  if (in.empty())
    ctx.fail("needs at least one operand");
  if (!ctx.hasAttr("axis"))
    ctx.fail("attribute 'axis' is required");
  Attrs a;
  a.set("axis", axisIn(ctx, ctx.attrInt("axis", 0), in[0].dims().size()));
  ctx.setOutput(0, ctx.emit(NodeKind::Concat, std::move(in), std::move(a)));
}

/// Emits a Slice of x over full-rank normalised starts/ends/steps.
NodeValue emitSlice(Ctx& ctx, NodeValue x, const std::vector<int64_t>& starts,
                    const std::vector<int64_t>& ends, const std::vector<int64_t>& steps,
                    const std::string& suffix = "") {
  Attrs a;
  a.set("starts", starts);
  a.set("ends", ends);
  a.set("steps", steps);
  return ctx.emit(NodeKind::Slice, {x}, std::move(a), suffix);
}

void importSplit(Ctx& ctx) {
  const NodeValue x = ctx.input(0);
  const Shape& d = x.dims();
  if (d.empty())
    ctx.fail("cannot split a scalar");
  const int64_t axis = axisIn(ctx, ctx.attrInt("axis", 0), d.size());
  std::vector<int64_t> sizes = intsFrom(ctx, 13, "split", 1);
  const int64_t n = int64_t(ctx.numOutputs()), extent = d[size_t(axis)];
  if (sizes.empty()) {
    if (n == 0 || extent % n != 0)
      ctx.fail("dimension " + str(axis) + " of " + shapeToString(d) + " does not split into " +
               str(n) + " equal parts");
    sizes.assign(size_t(n), extent / n);
  }
  if (int64_t(sizes.size()) != n)
    ctx.fail("split has " + str(int64_t(sizes.size())) + " sizes for " + str(n) + " outputs");
  if (ctx.constantInput(0)) { // fold: one Slice per part
    std::vector<int64_t> starts(d.size(), 0), ends = d, steps(d.size(), 1);
    int64_t at = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      starts[size_t(axis)] = at;
      ends[size_t(axis)] = at += sizes[i];
      if (sizes[i] < 0 || at > extent)
        ctx.fail("split sizes " + shapeToString(sizes) + " do not fit dimension " + str(extent));
      ctx.setOutput(i, emitSlice(ctx, x, starts, ends, steps, "_" + str(int64_t(i))));
    }
    return;
  }
  Attrs a;
  a.set("axis", axis);
  a.set("split", sizes);
  Node* s = ctx.emitNode(NodeKind::Split, {x}, std::move(a));
  for (size_t i = 0; i < sizes.size(); ++i)
    if (ctx.hasOutput(i))
      ctx.setOutput(i, NodeValue(s, unsigned(i)));
}

void importSlice(Ctx& ctx) {
  const NodeValue x = ctx.input(0);
  const Shape& d = x.dims();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.attrInts("starts");
    ends = ctx.attrInts("ends");
    axes = ctx.attrInts("axes");
  } else {
    starts = ctx.constantInts(1, "starts");
    ends = ctx.constantInts(2, "ends");
    if (ctx.hasInput(3))
      axes = ctx.constantInts(3, "axes");
    if (ctx.hasInput(4))
      steps = ctx.constantInts(4, "steps");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(int64_t(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    ctx.fail("starts, ends, axes and steps have different lengths");
  std::vector<int64_t> s(d.size(), 0), e = d, st(d.size(), 1);
  std::vector<bool> seen(d.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t ax = size_t(axisIn(ctx, axes[i], d.size(), "axes value"));
    if (seen[ax])
      ctx.fail("axes repeat axis " + str(int64_t(ax)));
    seen[ax] = true;
    const int64_t n = d[ax], step = steps[i];
    if (step == 0)
      ctx.fail("steps must not be 0");
    int64_t b = starts[i] < 0 ? starts[i] + n : starts[i];
    int64_t en = ends[i] < 0 ? ends[i] + n : ends[i];
    if (step > 0) {
      b = std::clamp<int64_t>(b, 0, n);
      en = std::clamp<int64_t>(en, 0, n);
    } else {
      b = std::clamp<int64_t>(b, 0, std::max<int64_t>(n - 1, 0));
      en = std::clamp<int64_t>(en, -1, std::max<int64_t>(n - 1, 0));
    }
    s[ax] = b;
    e[ax] = en;
    st[ax] = step;
  }
  ctx.setOutput(0, emitSlice(ctx, x, s, e, st));
}

void importGather(Ctx& ctx, NodeKind kind) {
  const NodeValue x = ctx.input(0), idx = ctx.input(1);
  if (idx.kind() != ElemKind::Int32 && idx.kind() != ElemKind::Int64)
    ctx.fail(std::string("indices must be int32 or int64, not ") + elemKindName(idx.kind()));
  Attrs a;
  a.set("axis", axisIn(ctx, ctx.attrInt("axis", 0), x.dims().size()));
  ctx.setOutput(0, ctx.emit(kind, {x, idx}, std::move(a)));
}

void importPad(Ctx& ctx) {
  const NodeValue x = ctx.input(0);
  const size_t r = x.dims().size();
  std::vector<int64_t> pads;
  double value = 0;
  NodeValue runtimeValue;
  if (ctx.opset() < 11) {
    pads = ctx.attrInts("pads");
    value = ctx.attrFloat("value", 0.0);
  } else {
    pads = ctx.constantInts(1, "pads");
    if (ctx.hasInput(2)) {
      if (ctx.input(2).type().size() != 1)
        ctx.fail("constant_value must hold one value");
      if (std::optional<Tensor> v = ctx.constantInput(2))
        value = v->getAsDouble(0);
      else
        runtimeValue = ctx.input(2); // a run-time pad value: the Pad's second operand
    }
    if (ctx.hasInput(3)) { // opset 18 axes: scatter into full-rank pads
      std::vector<int64_t> axes = ctx.constantInts(3, "axes"), full(2 * r, 0);
      if (pads.size() != 2 * axes.size())
        ctx.fail("pads has " + str(int64_t(pads.size())) + " values for " +
                 str(int64_t(axes.size())) + " axes");
      for (size_t i = 0; i < axes.size(); ++i) {
        const size_t ax = size_t(axisIn(ctx, axes[i], r, "axes value"));
        full[ax] = pads[i];
        full[ax + r] = pads[i + axes.size()];
      }
      pads = full;
    }
  }
  if (pads.size() != 2 * r)
    ctx.fail("pads has " + str(int64_t(pads.size())) + " values, expected " + str(int64_t(2 * r)) +
             " for input " + shapeToString(x.dims()));
  const std::string mode = ctx.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    ctx.unsupported("Pad mode '" + mode + "'");
  Attrs a;
  a.set("pads", pads);
  a.set("mode", mode);
  a.set("value", value);
  std::vector<NodeValue> in = {x};
  if (runtimeValue)
    in.push_back(runtimeValue);
  ctx.setOutput(0, ctx.emit(NodeKind::Pad, std::move(in), std::move(a)));
}

void importExpand(Ctx& ctx) {
  Attrs a;
  a.set("shape", ctx.constantInts(1, "shape"));
  ctx.setOutput(0, ctx.emit(NodeKind::Expand, {ctx.input(0)}, std::move(a)));
}

void importTile(Ctx& ctx) {
  Attrs a;
  a.set("repeats", ctx.constantInts(1, "repeats"));
  ctx.setOutput(0, ctx.emit(NodeKind::Tile, {ctx.input(0)}, std::move(a)));
}

void importCumSum(Ctx& ctx) {
  const NodeValue x = ctx.input(0);
  std::vector<int64_t> axis = ctx.constantInts(1, "axis");
  if (axis.size() != 1)
    ctx.fail("axis must hold one value");
  Attrs a;
  a.set("axis", axisIn(ctx, axis[0], x.dims().size()));
  a.set("exclusive", ctx.attrInt("exclusive", 0));
  a.set("reverse", ctx.attrInt("reverse", 0));
  ctx.setOutput(0, ctx.emit(NodeKind::CumSum, {x}, std::move(a)));
}

void importTrilu(Ctx& ctx) {
  Attrs a;
  a.set("upper", ctx.attrInt("upper", 1));
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    std::vector<int64_t> kv = ctx.constantInts(1, "k");
    if (kv.size() != 1)
      ctx.fail("k must hold one value");
    k = kv[0];
  }
  a.set("k", k);
  ctx.setOutput(0, ctx.emit(NodeKind::Trilu, {ctx.input(0)}, std::move(a)));
}

void importDepthSpace(Ctx& ctx, NodeKind kind) {
  Attrs a;
  a.set("blocksize", ctx.attrInt("blocksize", 0));
  if (kind == NodeKind::DepthToSpace)
    a.set("mode", ctx.attrString("mode", "DCR"));
  ctx.setOutput(0, ctx.emit(kind, {ctx.input(0)}, std::move(a)));
}

/// Resize (opset 10: X, scales; 11+: X, roi, scales, sizes) and Upsample (opset 7:
/// attribute scales; 9: operand scales).
void importResize(Ctx& ctx) {
  const NodeValue x = ctx.input(0);
  const Shape& d = x.dims();
  const bool upsample = ctx.opType() == "Upsample";
  const bool v10 = upsample || ctx.opset() < 11;
  std::vector<double> scales, roi;
  std::vector<int64_t> sizes;
  const size_t scalesAt = v10 ? 1 : 2;
  if (upsample && ctx.opset() < 9)
    scales = ctx.attrFloats("scales");
  else if (ctx.hasInput(scalesAt))
    scales = ctx.constantFloats(scalesAt, "scales");
  if (!v10 && ctx.hasInput(3))
    sizes = ctx.constantInts(3, "sizes");
  if (!v10 && ctx.hasInput(1))
    roi = ctx.constantFloats(1, "roi");
  const std::string mode = ctx.attrString("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear" && mode != "cubic")
    ctx.fail("mode '" + mode + "' is not nearest, linear or cubic");
  if (!scales.empty() && !sizes.empty())
    ctx.fail("scales and sizes are both given");
  if (!scales.empty()) {
    if (scales.size() != d.size())
      ctx.fail("scales has " + str(int64_t(scales.size())) + " values for input " +
               shapeToString(d));
    for (size_t i = 0; i < d.size(); ++i) {
      if (!(scales[i] > 0))
        ctx.fail("scales must be positive");
      const double size = std::floor(double(d[i]) * scales[i]);
      if (!(size < double(kMaxTensorElements)))
        ctx.fail("scales " + std::to_string(scales[i]) + " makes dimension " + str(int64_t(i)) +
                 " of " + shapeToString(d) + " too large");
      sizes.push_back(int64_t(size));
    }
  } else if (sizes.size() != d.size()) {
    ctx.fail("needs scales or sizes with one value per dimension of " + shapeToString(d));
  }
  Attrs a;
  a.set("sizes", sizes);
  if (!scales.empty())
    a.set("scales", scales);
  a.set("mode", std::string(mode == "bilinear" ? "linear" : mode));
  if (v10) {
    a.set("coordinate_transformation_mode", std::string("asymmetric"));
    a.set("nearest_mode", std::string("floor"));
  } else {
    a.set("coordinate_transformation_mode",
          ctx.attrString("coordinate_transformation_mode", "half_pixel"));
    a.set("nearest_mode", ctx.attrString("nearest_mode", "round_prefer_floor"));
    a.set("extrapolation_value", ctx.attrFloat("extrapolation_value", 0.0));
    if (mode == "cubic") {
      a.set("cubic_coeff_a", ctx.attrFloat("cubic_coeff_a", -0.75));
      a.set("exclude_outside", ctx.attrInt("exclude_outside", 0));
    }
    if (!roi.empty())
      a.set("roi", roi);
  }
  ctx.setOutput(0, ctx.emit(NodeKind::Resize, {x}, std::move(a)));
}

// ---- import-time-only operators: results are Constants ----------------------------

/// Fails unless `s` has at most 2^31 elements (a Constant Ember can materialise).
void checkConstantSize(Ctx& ctx, const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0)
      ctx.fail("shape " + shapeToString(s) + " has a negative dimension");
    if (d != 0 && n > (int64_t(1) << 31) / d)
      ctx.fail("shape " + shapeToString(s) + " has more than 2^31 elements");
    n *= d;
  }
}

void importConstantOfShape(Ctx& ctx) {
  const Shape shape = ctx.constantInts(0, "input");
  Tensor value = Tensor::scalar<float>(0.0f);
  if (std::optional<Tensor> v = ctx.attrTensor("value")) {
    if (v->size() != 1)
      ctx.fail("attribute value must hold one element");
    value = *v;
  }
  checkConstantSize(ctx, shape);
  Tensor t(value.kind(), shape);
  const size_t es = elemSize(value.kind());
  for (int64_t i = 0; i < t.size(); ++i)
    std::copy(value.raw(), value.raw() + es, t.raw() + size_t(i) * es);
  ctx.setOutput(0, ctx.constant(std::move(t)));
}

void importRange(Ctx& ctx) {
  std::optional<Tensor> v[3];
  const char* names[] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; ++i) {
    v[i] = ctx.constantInput(i);
    if (!v[i])
      ctx.unsupported(std::string("operand ") + names[i] + " must be known at compile time");
    if (v[i]->size() != 1)
      ctx.fail(std::string("operand ") + names[i] + " must be a scalar");
  }
  const ElemKind k = v[0]->kind();
  const double start = v[0]->getAsDouble(0), limit = v[1]->getAsDouble(0),
               delta = v[2]->getAsDouble(0);
  if (delta == 0)
    ctx.fail("delta must not be 0");
  const double count = std::ceil((limit - start) / delta);
  if (!(count < double(int64_t(1) << 31)))
    ctx.fail("the range has more than 2^31 elements (or is not finite)");
  const int64_t n = std::max<int64_t>(int64_t(count), 0);
  Tensor t(k, {n});
  if (k == ElemKind::Float32) {
    // As the ONNX reference: repeated float32 additions.
    float acc = float(start);
    for (int64_t i = 0; i < n; ++i, acc += float(delta))
      t.setFromDouble(i, acc);
  } else {
    const int64_t s = v[0]->getAsInt(0), st = v[2]->getAsInt(0);
    for (int64_t i = 0; i < n; ++i)
      t.setFromDouble(i, double(s + i * st));
  }
  ctx.setOutput(0, ctx.constant(std::move(t)));
}

void importEyeLike(Ctx& ctx) {
  const NodeValue x = ctx.input(0);
  if (x.dims().size() != 2)
    ctx.fail("input must be 2-D, has shape " + shapeToString(x.dims()));
  ElemKind k = x.kind();
  if (ctx.hasAttr("dtype")) {
    // Any element type Ember has (float64, float16, the unsigned ones, ...).
    const auto dtype = static_cast<int32_t>(ctx.attrInt("dtype", 1));
    try {
      k = onnxElemKind(dtype, ctx.nodeName());
    } catch (const Unsupported&) {
      ctx.unsupported("EyeLike dtype " + onnxElemTypeName(dtype));
    }
  }
  const int64_t kk = ctx.attrInt("k", 0), rows = x.dims()[0], cols = x.dims()[1];
  Tensor t(k, x.dims());
  for (int64_t i = 0; i < rows; ++i)
    if (i + kk >= 0 && i + kk < cols)
      t.setFromDouble(i * cols + i + kk, 1.0);
  ctx.setOutput(0, ctx.constant(std::move(t)));
}

} // namespace

void registerOnnxDataMovementImporters() {
  registerOnnxOp("Reshape", {"allowzero"}, importReshape);
  registerOnnxOp("Flatten", {"axis"}, importFlatten);
  registerOnnxOp("Squeeze", {"axes"}, importSqueeze);
  registerOnnxOp("Unsqueeze", {"axes"}, importUnsqueeze);
  registerOnnxOp("Transpose", {"perm"}, importTranspose);
  registerOnnxOp("Concat", {"axis"}, importConcat);
  registerOnnxOp("Split", {"axis", "split"}, importSplit);
  registerOnnxOp("Slice", {"axes", "ends", "starts"}, importSlice);
  registerOnnxOp("Gather", {"axis"}, [](Ctx& c) { importGather(c, NodeKind::Gather); });
  registerOnnxOp("GatherElements", {"axis"},
                 [](Ctx& c) { importGather(c, NodeKind::GatherElements); });
  registerOnnxOp("Pad", {"mode", "pads", "value"}, importPad);
  registerOnnxOp("Expand", {}, importExpand);
  registerOnnxOp("Tile", {}, importTile);
  registerOnnxOp("CumSum", {"exclusive", "reverse"}, importCumSum);
  registerOnnxOp("Trilu", {"upper"}, importTrilu);
  registerOnnxOp("DepthToSpace", {"blocksize", "mode"},
                 [](Ctx& c) { importDepthSpace(c, NodeKind::DepthToSpace); });
  registerOnnxOp("SpaceToDepth", {"blocksize"},
                 [](Ctx& c) { importDepthSpace(c, NodeKind::SpaceToDepth); });
  registerOnnxOp("Resize",
                 {"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
                  "extrapolation_value", "mode", "nearest_mode"},
                 importResize);
  registerOnnxOp("Upsample", {"mode", "scales"}, importResize);
  registerOnnxOp("ConstantOfShape", {"value"}, importConstantOfShape);
  registerOnnxOp("Range", {}, importRange);
  registerOnnxOp("EyeLike", {"dtype", "k"}, importEyeLike);
}

} // namespace ember
