// ONNX importers of QuantizeLinear and DequantizeLinear. Scales and zero points must be
// compile-time constants; they become the node's attributes (scale + zero_point per
// tensor, scales + zero_points + axis per axis; see compiler/graph/ops/QuantOps.cpp).
// Ember's quantized kinds are int8. uint8 (a uint8 zero point, also QuantizeLinear's
// default when the zero point is absent) is evaluated in float by existing kinds, with
// no quantized type: DequantizeLinear as (Cast(x) - zero point) * scale, QuantizeLinear
// as Cast<uint8>(Clip(Round(x / scale) + zero point, 0, 255)) (ONNX's definition); such
// a graph runs on the interpreter and the cpu backend's float kernels, never as int8.
#include "ember/importer/OnnxOpImporter.h"

namespace ember {

namespace {

/// The uint8 form of QuantizeLinear / DequantizeLinear in float (see the file comment).
/// `scale` and `zp` are per tensor (one value) or per `axis` of x.
void importUint8Quant(OnnxNodeContext& ctx, bool quantize, const Tensor& scale,
                      const std::optional<Tensor>& zp) {
  const NodeValue x = ctx.input(0);
  const int64_t r = int64_t(x.dims().size());
  Shape bshape; // the broadcast shape of scale and zero point
  if (scale.size() != 1) {
    int64_t axis = ctx.attrInt("axis", 1);
    if (scale.dims().size() != 1 || axis < -r || axis >= r)
      ctx.fail("scale " + shapeToString(scale.dims()) + " and axis " + std::to_string(axis) +
               " do not fit input " + shapeToString(x.dims()));
    axis = axis < 0 ? axis + r : axis;
    if (scale.size() != x.dims()[size_t(axis)])
      ctx.fail("scale has " + std::to_string(scale.size()) + " values, axis " +
               std::to_string(axis) + " of input " + shapeToString(x.dims()) + " has " +
               std::to_string(x.dims()[size_t(axis)]));
    bshape.assign(size_t(r), 1);
    bshape[size_t(axis)] = scale.size();
  }
  std::vector<float> s, z;
  for (int64_t i = 0; i < scale.size(); ++i) {
    s.push_back(float(scale.getAsDouble(i)));
    z.push_back(zp ? float(zp->getAsInt(i)) : 0.0f);
  }
  const NodeValue sc = ctx.constant(Tensor::fromVector<float>(bshape, s), "_scale");
  const NodeValue zc = ctx.constant(Tensor::fromVector<float>(bshape, z), "_zero_point");
  auto cast = [&](NodeValue v, ElemKind to, const char* suffix) {
    Attrs a;
    a.set("to", std::string(elemKindName(to)));
    return ctx.emit(NodeKind::Cast, {v}, a, suffix);
  };
  if (!quantize) {
    if (x.kind() != ElemKind::UInt8)
      ctx.unsupported(std::string("dequantizing ") + elemKindName(x.kind()) +
                      " with a uint8 zero point");
    const NodeValue centred =
        ctx.emit(NodeKind::Sub, {cast(x, ElemKind::Float32, "_float"), zc}, {}, "_centred");
    ctx.setOutput(0, ctx.emit(NodeKind::Mul, {centred, sc}));
    return;
  }
  if (x.kind() != ElemKind::Float32)
    ctx.unsupported(std::string("quantizing ") + elemKindName(x.kind()));
  const NodeValue q = ctx.emit(NodeKind::Div, {x, sc}, {}, "_div");
  const NodeValue shifted =
      ctx.emit(NodeKind::Add, {ctx.emit(NodeKind::Round, {q}, {}, "_round"), zc}, {}, "_shift");
  Attrs clip;
  clip.set("min", 0.0);
  clip.set("max", 255.0);
  ctx.setOutput(0,
                cast(ctx.emit(NodeKind::Clip, {shifted}, clip, "_saturate"), ElemKind::UInt8, ""));
}

void importQuant(OnnxNodeContext& ctx, NodeKind kind) {
  const NodeValue x = ctx.input(0);
  const bool quantize = kind == NodeKind::QuantizeLinear;
  std::optional<Tensor> scale = ctx.constantInput(1);
  if (!scale)
    ctx.unsupported("operand scale must be known at compile time");
  if (scale->kind() != ElemKind::Float32)
    ctx.fail(std::string("scale must be float32, not ") + elemKindName(scale->kind()));
  std::optional<Tensor> zp;
  if (ctx.hasInput(2)) {
    zp = ctx.constantInput(2);
    if (!zp)
      ctx.unsupported("operand zero_point must be known at compile time");
    if (zp->kind() == ElemKind::UInt8) {
      if (zp->dims() != scale->dims())
        ctx.fail("zero_point shape " + shapeToString(zp->dims()) + " differs from scale shape " +
                 shapeToString(scale->dims()));
      importUint8Quant(ctx, quantize, *scale, zp);
      return;
    }
    if (zp->kind() != ElemKind::Int8 && !(zp->kind() == ElemKind::Int32 && !quantize))
      ctx.unsupported(std::string("zero point of element kind ") + elemKindName(zp->kind()) +
                      " (Ember quantizes to int8)");
    if (zp->dims() != scale->dims())
      ctx.fail("zero_point shape " + shapeToString(zp->dims()) + " differs from scale shape " +
               shapeToString(scale->dims()));
  } else if (quantize) {
    importUint8Quant(ctx, quantize, *scale, zp); // no zero point: uint8
    return;
  }
  if (!quantize && x.kind() != ElemKind::Int8 && x.kind() != ElemKind::Int32)
    ctx.unsupported(std::string("dequantizing ") + elemKindName(x.kind()));
  Attrs a;
  if (scale->size() == 1) { // scalar or one-element: per tensor
    a.set("scale", scale->getAsDouble(0));
    a.set("zero_point", zp ? zp->getAsInt(0) : int64_t(0));
  } else {
    if (scale->dims().size() != 1)
      ctx.fail("scale must be a scalar or 1-D, has shape " + shapeToString(scale->dims()));
    const int64_t r = int64_t(x.dims().size());
    int64_t axis = ctx.attrInt("axis", 1);
    if (axis < -r || axis >= r)
      ctx.fail("axis " + std::to_string(axis) + " is out of range for input " +
               shapeToString(x.dims()));
    axis = axis < 0 ? axis + r : axis;
    if (scale->size() != x.dims()[size_t(axis)])
      ctx.fail("scale has " + std::to_string(scale->size()) + " values, axis " +
               std::to_string(axis) + " of input " + shapeToString(x.dims()) + " has " +
               std::to_string(x.dims()[size_t(axis)]));
    std::vector<double> s;
    std::vector<int64_t> z;
    for (int64_t i = 0; i < scale->size(); ++i) {
      s.push_back(scale->getAsDouble(i));
      z.push_back(zp ? zp->getAsInt(i) : 0);
    }
    a.set("scales", s);
    a.set("zero_points", z);
    a.set("axis", axis);
  }
  ctx.setOutput(0, ctx.emit(kind, {x}, std::move(a)));
}

} // namespace

void registerOnnxQuantImporters() {
  registerOnnxOp("QuantizeLinear", {"axis"},
                 [](OnnxNodeContext& c) { importQuant(c, NodeKind::QuantizeLinear); });
  registerOnnxOp("DequantizeLinear", {"axis"},
                 [](OnnxNodeContext& c) { importQuant(c, NodeKind::DequantizeLinear); });
}

} // namespace ember
