// ONNX importers of the elementwise operators: unary maps (with their attributes),
// binary and logic operators, Where, the variadic Sum/Mean/Max/Min (a chain of
// binaries), Clip, Cast and CastLike. All of them fold into Constants when their
// operands are constants (OnnxNodeContext::emit), which is how shape arithmetic in
// int64 disappears at import time.
#include "OnnxTensor.h"

#include "ember/importer/OnnxOpImporter.h"
#include "ember/support/Error.h"

#include "ember/tensor/Tensor.h"

#include <limits>
#include <string>

namespace ember {

namespace {

/// An ONNX op that maps 1:1 onto the node kind of the same name, with the attributes
/// it forwards (float or int valued, ONNX names).
struct Direct {
  const char* op;
  NodeKind kind;
  std::vector<const char*> floatAttrs;
  std::vector<const char*> intAttrs;
};

const std::vector<Direct>& directOps() {
  using K = NodeKind;
  static const std::vector<Direct> ops = {
      {"Relu", K::Relu, {}, {}},
      {"Sigmoid", K::Sigmoid, {}, {}},
      {"Tanh", K::Tanh, {}, {}},
      {"Exp", K::Exp, {}, {}},
      {"Log", K::Log, {}, {}},
      {"Sqrt", K::Sqrt, {}, {}},
      {"Erf", K::Erf, {}, {}},
      {"Neg", K::Neg, {}, {}},
      {"Abs", K::Abs, {}, {}},
      {"Reciprocal", K::Reciprocal, {}, {}},
      {"Floor", K::Floor, {}, {}},
      {"Ceil", K::Ceil, {}, {}},
      {"Round", K::Round, {}, {}},
      {"Sign", K::Sign, {}, {}},
      {"Sin", K::Sin, {}, {}},
      {"Cos", K::Cos, {}, {}},
      {"Tan", K::Tan, {}, {}},
      {"Asin", K::Asin, {}, {}},
      {"Acos", K::Acos, {}, {}},
      {"Atan", K::Atan, {}, {}},
      {"Sinh", K::Sinh, {}, {}},
      {"Cosh", K::Cosh, {}, {}},
      {"Asinh", K::Asinh, {}, {}},
      {"Acosh", K::Acosh, {}, {}},
      {"Atanh", K::Atanh, {}, {}},
      {"Softplus", K::Softplus, {}, {}},
      {"Softsign", K::Softsign, {}, {}},
      {"Not", K::Not, {}, {}},
      {"IsNaN", K::IsNaN, {}, {}},
      {"IsInf", K::IsInf, {}, {"detect_negative", "detect_positive"}},
      {"LeakyRelu", K::LeakyRelu, {"alpha"}, {}},
      {"Elu", K::Elu, {"alpha"}, {}},
      {"Selu", K::Selu, {"alpha", "gamma"}, {}},
      {"Celu", K::Celu, {"alpha"}, {}},
      {"ThresholdedRelu", K::ThresholdedRelu, {"alpha"}, {}},
      {"HardSigmoid", K::HardSigmoid, {"alpha", "beta"}, {}},
      {"HardSwish", K::HardSwish, {}, {}},
      {"Shrink", K::Shrink, {"bias", "lambd"}, {}},
      {"Add", K::Add, {}, {}},
      {"Sub", K::Sub, {}, {}},
      {"Mul", K::Mul, {}, {}},
      {"Div", K::Div, {}, {}},
      {"Pow", K::Pow, {}, {}},
      {"Mod", K::Mod, {}, {"fmod"}},
      {"PRelu", K::PRelu, {}, {}},
      {"Equal", K::Equal, {}, {}},
      {"Less", K::Less, {}, {}},
      {"LessOrEqual", K::LessOrEqual, {}, {}},
      {"Greater", K::Greater, {}, {}},
      {"GreaterOrEqual", K::GreaterOrEqual, {}, {}},
      {"And", K::And, {}, {}},
      {"Or", K::Or, {}, {}},
      {"Xor", K::Xor, {}, {}},
      {"Where", K::Where, {}, {}},
  };
  return ops;
}

void importDirect(OnnxNodeContext& ctx, const Direct& d) {
  Attrs attrs;
  for (const char* a : d.floatAttrs)
    if (ctx.hasAttr(a))
      attrs.set(a, ctx.attrFloat(a, 0.0));
  for (const char* a : d.intAttrs)
    if (ctx.hasAttr(a))
      attrs.set(a, ctx.attrInt(a, 0));
  if (ctx.opType() == "Mod" && isFloatElemKind(ctx.input(0).kind()) && ctx.attrInt("fmod", 0) == 0)
    ctx.fail("Mod of floating-point operands requires fmod = 1");
  std::vector<NodeValue> in;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    in.push_back(ctx.input(i));
  ctx.setOutput(0, ctx.emit(d.kind, std::move(in), std::move(attrs)));
}

/// Sum, Mean, Max, Min over any number of operands: a left-to-right chain.
void importVariadic(OnnxNodeContext& ctx, NodeKind kind, bool mean) {
  if (ctx.numInputs() == 0)
    ctx.fail("needs at least one operand");
  NodeValue acc = ctx.input(0);
  for (size_t i = 1; i < ctx.numInputs(); ++i)
    acc = ctx.emit(kind, {acc, ctx.input(i)}, {}, "_" + std::to_string(i));
  if (mean && ctx.numInputs() > 1) {
    Tensor n(acc.kind(), {});
    n.setFromDouble(0, double(ctx.numInputs()));
    acc = ctx.emit(NodeKind::Div, {acc, ctx.constant(std::move(n), "_count")}, {}, "_mean");
  }
  ctx.setOutput(0, acc);
}

/// Clip: attributes min/max before opset 11, optional operands from 11 on. A constant
/// bound becomes an attribute; a run-time bound becomes Max(x, min) / Min(x, max).
void importClip(OnnxNodeContext& ctx) {
  Attrs attrs;
  NodeValue x = ctx.input(0);
  if (ctx.opset() < 11) {
    if (ctx.hasAttr("min"))
      attrs.set("min", ctx.attrFloat("min", 0));
    if (ctx.hasAttr("max"))
      attrs.set("max", ctx.attrFloat("max", 0));
  } else {
    const char* names[] = {"", "min", "max"};
    for (size_t i = 1; i < 3; ++i) {
      if (!ctx.hasInput(i))
        continue;
      if (ctx.input(i).type().size() != 1)
        ctx.fail(std::string("operand ") + names[i] + " must be a scalar, has shape " +
                 shapeToString(ctx.input(i).dims()));
      if (std::optional<Tensor> t = ctx.constantInput(i))
        attrs.set(names[i], t->getAsDouble(0));
      else
        x = ctx.emit(i == 1 ? NodeKind::Max : NodeKind::Min, {x, ctx.input(i)}, {},
                     std::string("_") + names[i]);
    }
  }
  ctx.setOutput(0, ctx.emit(NodeKind::Clip, {x}, std::move(attrs)));
}

/// ONNX TensorProto::DataType -> ElemKind for Cast's 'to'.
ElemKind castTarget(OnnxNodeContext& ctx, int64_t to) {
  try {
    return onnxElemKind(static_cast<int32_t>(to), ctx.nodeName());
  } catch (const Unsupported&) {
    ctx.unsupported("cast to element type " + onnxElemTypeName(static_cast<int32_t>(to)));
  }
  return ElemKind::Float32; // not reached
}

void emitCast(OnnxNodeContext& ctx, ElemKind to) {
  Attrs attrs;
  attrs.set("to", std::string(elemKindName(to)));
  ctx.setOutput(0, ctx.emit(NodeKind::Cast, {ctx.input(0)}, std::move(attrs)));
}

} // namespace

void registerOnnxElementwiseImporters() {
  for (const Direct& d : directOps()) {
    std::vector<std::string> attrs(d.floatAttrs.begin(), d.floatAttrs.end());
    attrs.insert(attrs.end(), d.intAttrs.begin(), d.intAttrs.end());
    registerOnnxOp(d.op, attrs, [&d](OnnxNodeContext& ctx) { importDirect(ctx, d); });
  }
  registerOnnxOp("Sum", {}, [](OnnxNodeContext& c) { importVariadic(c, NodeKind::Add, false); });
  registerOnnxOp("Mean", {}, [](OnnxNodeContext& c) { importVariadic(c, NodeKind::Add, true); });
  registerOnnxOp("Max", {}, [](OnnxNodeContext& c) { importVariadic(c, NodeKind::Max, false); });
  registerOnnxOp("Min", {}, [](OnnxNodeContext& c) { importVariadic(c, NodeKind::Min, false); });
  registerOnnxOp("Clip", {"max", "min"}, importClip);
  registerOnnxOp("Cast", {"to"}, [](OnnxNodeContext& c) {
    if (!c.hasAttr("to"))
      c.fail("attribute 'to' is required");
    emitCast(c, castTarget(c, c.attrInt("to", 0)));
  });
  registerOnnxOp("CastLike", {}, [](OnnxNodeContext& c) { emitCast(c, c.input(1).kind()); });
  registerOnnxOp("BitShift", {"direction"}, [](OnnxNodeContext& c) {
    const std::string dir = c.attrString("direction", "");
    if (dir != "LEFT" && dir != "RIGHT")
      c.fail("attribute 'direction' must be \"LEFT\" or \"RIGHT\", is \"" + dir + "\"");
    Attrs attrs;
    attrs.set("direction", dir);
    c.setOutput(0, c.emit(NodeKind::BitShift, {c.input(0), c.input(1)}, std::move(attrs)));
  });
}

} // namespace ember
