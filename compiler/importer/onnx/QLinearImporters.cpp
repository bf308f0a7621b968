// ONNX importers of QLinearConv and QLinearMatMul: the int8 Conv / MatMul of the graph
// IR (docs/numerics.md 4.1) with the operands' scales and zero points as quantization
// parameters. Scales, zero points, weights and bias must be compile-time constants
// (QLinearMatMul's b may also be a run-time int8 value). Ember is int8: uint8 operands
// are unsupported (convert a uint8 model by subtracting 128 from codes and zero points).
// The int8 input x must carry the given parameters; an int8 graph input without any
// gets them.
#include "ember/importer/OnnxOpImporter.h"

#include <algorithm>

namespace ember {

namespace {

/// Per-tensor or per-axis parameters from constant operands scale `si` and zero point
/// `zi` (absent zero point = 0); `axis` is used when there are several values.
QuantParams constParams(OnnxNodeContext& ctx, size_t si, size_t zi, int axis, const char* what) {
  std::optional<Tensor> s = ctx.constantInput(si);
  if (!s)
    ctx.unsupported(std::string(what) + " scale must be known at compile time");
  if (s->kind() != ElemKind::Float32)
    ctx.fail(std::string(what) + " scale must be float32");
  std::optional<Tensor> z;
  if (ctx.hasInput(zi)) {
    z = ctx.constantInput(zi);
    if (!z)
      ctx.unsupported(std::string(what) + " zero point must be known at compile time");
    if (z->kind() != ElemKind::Int8 && z->kind() != ElemKind::Int32)
      ctx.unsupported(std::string(what) + " zero point of kind " + elemKindName(z->kind()) +
                      " (Ember is int8)");
    if (z->size() != s->size())
      ctx.fail(std::string(what) + " scale and zero point have different sizes");
  }
  QuantParams q;
  for (int64_t i = 0; i < s->size(); ++i) {
    const float v = static_cast<float>(s->getAsDouble(i));
    if (!(v > 0))
      ctx.fail(std::string(what) + " scale " + std::to_string(v) + " is not positive");
    q.scales.push_back(v);
    q.zeroPoints.push_back(z ? static_cast<int32_t>(z->getAsInt(i)) : 0);
  }
  if (q.scales.empty())
    ctx.fail(std::string(what) + " scale is empty");
  if (q.scales.size() > 1)
    q.axis = axis;
  return q;
}

/// Operand i as an int8 value with parameters q: a constant is retyped, a graph input
/// without parameters gets them, a value that has them already is used as it is.
NodeValue int8Operand(OnnxNodeContext& ctx, size_t i, const QuantParams& q, const char* what) {
  NodeValue v = ctx.input(i);
  if (v.kind() != ElemKind::Int8)
    ctx.unsupported(std::string(what) + " of element kind " + elemKindName(v.kind()) +
                    " (Ember is int8)");
  if (std::optional<Tensor> c = ctx.constantInput(i)) {
    c->mutableType().quant = q;
    return ctx.constant(std::move(*c), std::string("_") + what);
  }
  if (v.node->kind() == NodeKind::Placeholder && !v.type().quant.isQuantized()) {
    Type t = v.type();
    t.quant = q;
    v.node->setResultType(0, t);
  }
  if (v.type().quant != q)
    ctx.unsupported(std::string(what) + " is " + v.type().toString() +
                    ", the node gives it other quantization parameters");
  return v;
}

Attrs convAttrs(OnnxNodeContext& ctx, const Shape& x, const Shape& w) {
  const size_t nsp = x.size() - 2;
  Attrs a;
  std::vector<int64_t> k(w.begin() + 2, w.end());
  if (ctx.hasAttr("kernel_shape") && ctx.attrInts("kernel_shape") != k)
    ctx.fail("kernel_shape " + shapeToString(ctx.attrInts("kernel_shape")) +
             " differs from the filter's spatial dimensions " + shapeToString(k));
  std::vector<int64_t> s = ctx.attrInts("strides", std::vector<int64_t>(nsp, 1));
  std::vector<int64_t> d = ctx.attrInts("dilations", std::vector<int64_t>(nsp, 1));
  std::vector<int64_t> p = ctx.attrInts("pads", std::vector<int64_t>(2 * nsp, 0));
  if (s.size() != nsp || d.size() != nsp || p.size() != 2 * nsp)
    ctx.fail("strides/dilations/pads do not match " + std::to_string(nsp) + " spatial dims");
  const std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    std::fill(p.begin(), p.end(), 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < nsp; ++i) {
      const int64_t in = x[i + 2], out = (in + s[i] - 1) / s[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in);
      const int64_t small = total / 2, large = total - small;
      p[i] = autoPad == "SAME_UPPER" ? small : large;
      p[i + nsp] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (autoPad != "NOTSET" && !autoPad.empty()) {
    ctx.fail("unknown auto_pad '" + autoPad + "'");
  }
  a.set("kernel_shape", k);
  a.set("strides", s);
  a.set("dilations", d);
  a.set("pads", p);
  a.set("group", ctx.attrInt("group", 1));
  return a;
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?)
void importQLinearConv(OnnxNodeContext& ctx) {
  const Shape xs = ctx.input(0).dims(), ws = ctx.input(3).dims();
  if (xs.size() < 3 || xs.size() > 5 || ws.size() != xs.size())
    ctx.fail("input " + shapeToString(xs) + " and filter " + shapeToString(ws) +
             " must be N x C x 1 to 3 spatial dimensions");
  if (!ctx.constantInput(3))
    ctx.unsupported("the filter must be known at compile time");
  const QuantParams xq = constParams(ctx, 1, 2, -1, "x");
  const QuantParams wq = constParams(ctx, 4, 5, 0, "w");
  const QuantParams yq = constParams(ctx, 6, 7, -1, "y");
  if (xq.scales.size() != 1 || yq.scales.size() != 1)
    ctx.unsupported("x and y need per-tensor quantization parameters");
  std::vector<NodeValue> ins = {int8Operand(ctx, 0, xq, "x"), int8Operand(ctx, 3, wq, "w")};
  if (ctx.hasInput(8)) {
    std::optional<Tensor> b = ctx.constantInput(8);
    if (!b || b->kind() != ElemKind::Int32)
      ctx.unsupported("the bias must be a compile-time int32 constant");
    QuantParams bq;
    bq.axis = 0;
    for (size_t k = 0; k < size_t(b->size()); ++k) {
      bq.scales.push_back(xq.scales[0] * wq.scales[wq.scales.size() == 1 ? 0 : k]);
      bq.zeroPoints.push_back(0);
    }
    b->mutableType().quant = bq;
    ins.push_back(ctx.constant(std::move(*b), "_bias"));
  }
  const Attrs a = convAttrs(ctx, xs, ws);
  Shape out = {xs[0], ws[0]};
  const std::vector<int64_t> k = a.getInts("kernel_shape"), s = a.getInts("strides"),
                             d = a.getInts("dilations"), p = a.getInts("pads");
  const size_t nsp = xs.size() - 2;
  for (size_t i = 0; i < nsp; ++i)
    out.push_back((xs[i + 2] + p[i] + p[i + nsp] - ((k[i] - 1) * d[i] + 1)) / s[i] + 1);
  Node* n = ctx.function().create(NodeKind::Conv, ctx.nodeName(), ins, a,
                                  std::vector<Type>{Type(ElemKind::Int8, out, yq)});
  ctx.setOutput(0, n->result());
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp)
void importQLinearMatMul(OnnxNodeContext& ctx) {
  const Shape as = ctx.input(0).dims(), bs = ctx.input(3).dims();
  if (as.size() < 2 || bs.size() < 2)
    ctx.unsupported("operands of rank < 2");
  const QuantParams aq = constParams(ctx, 1, 2, -1, "a");
  const QuantParams bq = constParams(ctx, 4, 5, int(bs.size()) - 1, "b");
  const QuantParams yq = constParams(ctx, 6, 7, -1, "y");
  if (aq.scales.size() != 1 || yq.scales.size() != 1)
    ctx.unsupported("a and y need per-tensor quantization parameters");
  std::vector<NodeValue> ins = {int8Operand(ctx, 0, aq, "a"), int8Operand(ctx, 3, bq, "b")};
  Shape out = as;
  out.back() = bs.back();
  Node* n = ctx.function().create(NodeKind::MatMul, ctx.nodeName(), ins, {},
                                  std::vector<Type>{Type(ElemKind::Int8, out, yq)});
  ctx.setOutput(0, n->result());
}

} // namespace

void registerOnnxQLinearImporters() {
  registerOnnxOp("QLinearConv",
                 {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"},
                 importQLinearConv);
  registerOnnxOp("QLinearMatMul", {}, importQLinearMatMul);
}

} // namespace ember
