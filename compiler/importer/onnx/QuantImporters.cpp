// ONNX importers of QuantizeLinear and DequantizeLinear. Scales and zero points must be
// compile-time constants; they become the node's attributes (scale + zero_point per
// tensor, scales + zero_points + axis per axis; see compiler/graph/ops/QuantOps.cpp).
// Ember is int8: uint8 zero points (also QuantizeLinear's default when the zero point
// is absent) are unsupported.
#include "ember/importer/OnnxOpImporter.h"

namespace ember {

namespace {

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
    if (zp->kind() != ElemKind::Int8 && !(zp->kind() == ElemKind::Int32 && !quantize))
      ctx.unsupported(std::string("zero point of element kind ") + elemKindName(zp->kind()) +
                      " (Ember quantizes to int8)");
    if (zp->dims() != scale->dims())
      ctx.fail("zero_point shape " + shapeToString(zp->dims()) + " differs from scale shape " +
               shapeToString(scale->dims()));
  } else if (quantize) {
    ctx.unsupported("QuantizeLinear without zero point produces uint8 (Ember is int8)");
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
