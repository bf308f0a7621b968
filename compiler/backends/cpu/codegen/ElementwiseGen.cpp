// Codegen of the float elementwise family: unary maps (ember_unary_f32 with an op code
// and up to two parameters) and broadcasting binary operators (ember_binary_f32 over a
// simplified six-dimensional box), Add with its fused activation; comparisons of
// float32 and logic of bool values (bool results) and Where of any element kind.
#include "Codegen.h"
#include "Strides.h"
#include "libjit/OpCodes.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/attrs/FusedActivation.h"

#include <limits>

namespace ember::cpu {

namespace {

using namespace jitops;
/// The attribute (of the node's typed view) that gives a kernel parameter.
enum class Param { None, Alpha, Beta, Bias, Lambd, ClipMin, ClipMax };

struct UnaryEntry {
  NodeKind kind;
  int op;
  Param a, b; ///< The kernel's parameters a and b (None: 0).
};

/// The value of parameter `p` of node `n` (ONNX's defaults: the views').
double paramOf(const Op& n, Param p) {
  switch (p) {
  case Param::None:
    return 0.0;
  case Param::ClipMin:
    return clipOf(n.attrs()).lo();
  case Param::ClipMax:
    return clipOf(n.attrs()).hi();
  case Param::Alpha:
    return unaryOf(n.kind(), n.attrs()).alpha;
  case Param::Beta:
    return unaryOf(n.kind(), n.attrs()).beta;
  case Param::Bias:
    return unaryOf(n.kind(), n.attrs()).bias;
  case Param::Lambd:
    return unaryOf(n.kind(), n.attrs()).lambd;
  }
  return 0.0;
}

const UnaryEntry kUnary[] = {
    {NodeKind::Relu, kRelu, Param::None, Param::None},
    {NodeKind::Sigmoid, kSigmoid, Param::None, Param::None},
    {NodeKind::Tanh, kTanh, Param::None, Param::None},
    {NodeKind::Exp, kExp, Param::None, Param::None},
    {NodeKind::Log, kLog, Param::None, Param::None},
    {NodeKind::Sqrt, kSqrt, Param::None, Param::None},
    {NodeKind::Erf, kErf, Param::None, Param::None},
    {NodeKind::Neg, kNeg, Param::None, Param::None},
    {NodeKind::Abs, kAbs, Param::None, Param::None},
    {NodeKind::Reciprocal, kReciprocal, Param::None, Param::None},
    {NodeKind::Floor, kFloor, Param::None, Param::None},
    {NodeKind::Ceil, kCeil, Param::None, Param::None},
    {NodeKind::LeakyRelu, kLeakyRelu, Param::Alpha, Param::None},
    {NodeKind::Clip, kClip, Param::ClipMin, Param::ClipMax},
    {NodeKind::HardSigmoid, kHardSigmoid, Param::Alpha, Param::Beta},
    {NodeKind::HardSwish, kHardSwish, Param::None, Param::None},
    {NodeKind::Silu, kSilu, Param::None, Param::None},
    {NodeKind::Gelu, kGelu, Param::None, Param::None},
    {NodeKind::Softplus, kSoftplus, Param::None, Param::None},
    {NodeKind::Elu, kElu, Param::Alpha, Param::None},
    {NodeKind::Round, kRound, Param::None, Param::None},
    {NodeKind::Sign, kSign, Param::None, Param::None},
    {NodeKind::Sin, kSin, Param::None, Param::None},
    {NodeKind::Cos, kCos, Param::None, Param::None},
    {NodeKind::Tan, kTan, Param::None, Param::None},
    {NodeKind::Asin, kAsin, Param::None, Param::None},
    {NodeKind::Acos, kAcos, Param::None, Param::None},
    {NodeKind::Atan, kAtan, Param::None, Param::None},
    {NodeKind::Sinh, kSinh, Param::None, Param::None},
    {NodeKind::Cosh, kCosh, Param::None, Param::None},
    {NodeKind::Asinh, kAsinh, Param::None, Param::None},
    {NodeKind::Acosh, kAcosh, Param::None, Param::None},
    {NodeKind::Atanh, kAtanh, Param::None, Param::None},
    {NodeKind::Softsign, kSoftsign, Param::None, Param::None},
    {NodeKind::Celu, kCelu, Param::Alpha, Param::None},
    {NodeKind::ThresholdedRelu, kThresholdedRelu, Param::Alpha, Param::None},
    {NodeKind::Shrink, kShrink, Param::Lambd, Param::Bias},
};

const std::pair<NodeKind, int> kBinary[] = {
    {NodeKind::Add, kAdd}, {NodeKind::Sub, kSub}, {NodeKind::Mul, kMul}, {NodeKind::Div, kDiv},
    {NodeKind::Max, kMax}, {NodeKind::Min, kMin}, {NodeKind::Pow, kPow}, {NodeKind::PRelu, kPRelu},
};

bool plainFloat(const Type& t) {
  return t.kind == ElemKind::Float32 && !t.quant.isQuantized();
}

bool allPlainFloat(const Op& n) {
  for (const OpInput& v : n.inputs())
    if (v && !plainFloat(v.type()))
      return false;
  return plainFloat(n.resultType());
}

const UnaryEntry& unaryEntryOf(NodeKind k) {
  for (const UnaryEntry& e : kUnary)
    if (e.kind == k)
      return e;
  throw Error("no unary entry");
}

int binaryOf(NodeKind k) {
  for (const auto& [kind, op] : kBinary)
    if (kind == k)
      return op;
  throw Error("no binary entry");
}

void emitUnary(const Op& n, CodegenContext& ctx) {
  const UnaryEntry& e = unaryEntryOf(n.kind());
  const double a = paramOf(n, e.a), b = paramOf(n, e.b);
  ctx.call("ember_unary_f32",
           {ctx.i32(e.op), ctx.addr(n.input(0)), ctx.result(n), ctx.i64(n.resultType().size()),
            ctx.f64(a), ctx.f64(b), ctx.tid(), ctx.nth()},
           {3}); // one instance per operation, whatever the size
}

void emitBinary(const Op& n, CodegenContext& ctx) {
  const Shape& out = n.resultType().dims;
  const Box6<2> box = simplifyBox<2>(
      out, {broadcastStrides(n.input(0).dims(), out), broadcastStrides(n.input(1).dims(), out)});
  const FusedActivation act = FusedActivation::of(n.node());
  ctx.call("ember_binary_f32",
           {ctx.i32(binaryOf(n.kind())), ctx.addr(n.input(0)), ctx.addr(n.input(1)), ctx.result(n),
            ctx.int64Array(box.dims), ctx.int64Array(box.strides[0]),
            ctx.int64Array(box.strides[1]), ctx.i32(static_cast<int>(act.kind)), ctx.f32(act.lo),
            ctx.f32(act.hi), ctx.tid(), ctx.nth()});
}

bool supportsBinary(const Op& n) {
  if (!allPlainFloat(n) || n.numInputs() != 2)
    return false;
  if (n.kind() == NodeKind::PRelu && n.input(1).dims().size() > n.resultType().rank())
    return false;
  return true;
}

// ---- comparisons, logic, Where --------------------------------------------------

const std::pair<NodeKind, int> kCompare[] = {
    {NodeKind::Equal, 0},
    {NodeKind::Less, 1},
    {NodeKind::LessOrEqual, 2},
    {NodeKind::Greater, 3},
    {NodeKind::GreaterOrEqual, 4},
    {NodeKind::And, 5},
    {NodeKind::Or, 6},
    {NodeKind::Xor, 7},
};

bool supportsCompare(const Op& n) {
  if (n.numInputs() != 2 || n.resultType().kind != ElemKind::Bool)
    return false;
  const bool logic =
      n.kind() == NodeKind::And || n.kind() == NodeKind::Or || n.kind() == NodeKind::Xor;
  for (const OpInput& v : n.inputs())
    if (logic ? v.kind() != ElemKind::Bool : !plainFloat(v.type()))
      return false;
  return true;
}

void emitCompare(const Op& n, CodegenContext& ctx) {
  int op = 0;
  for (const auto& [kind, code] : kCompare)
    if (kind == n.kind())
      op = code;
  const Shape& out = n.resultType().dims;
  const Box6<2> box = simplifyBox<2>(
      out, {broadcastStrides(n.input(0).dims(), out), broadcastStrides(n.input(1).dims(), out)});
  ctx.call("ember_compare", {ctx.i32(op), ctx.addr(n.input(0)), ctx.addr(n.input(1)), ctx.result(n),
                             ctx.int64Array(box.dims), ctx.int64Array(box.strides[0]),
                             ctx.int64Array(box.strides[1]), ctx.tid(), ctx.nth()});
}

bool supportsWhere(const Op& n) {
  if (n.numInputs() != 3 || n.input(0).kind() != ElemKind::Bool)
    return false;
  const Type& y = n.resultType();
  return n.input(1).type().kind == y.kind && n.input(2).type().kind == y.kind &&
         n.input(1).type().quant == y.quant && n.input(2).type().quant == y.quant;
}

void emitWhere(const Op& n, CodegenContext& ctx) {
  const Shape& out = n.resultType().dims;
  const Box6<3> box = simplifyBox<3>(out, {broadcastStrides(n.input(0).dims(), out),
                                           broadcastStrides(n.input(1).dims(), out),
                                           broadcastStrides(n.input(2).dims(), out)});
  ctx.call("ember_where",
           {ctx.i32(int64_t(elemSize(n.resultType().kind))), ctx.addr(n.input(0)),
            ctx.addr(n.input(1)), ctx.addr(n.input(2)), ctx.result(n), ctx.int64Array(box.dims),
            ctx.int64Array(box.strides[0]), ctx.int64Array(box.strides[1]),
            ctx.int64Array(box.strides[2]), ctx.tid(), ctx.nth()});
}

} // namespace

void registerElementwiseCodegen() {
  for (const auto& [kind, op] : kCompare)
    registerCodegenUnit(kind, {"elementwise", supportsCompare, emitCompare});
  registerCodegenUnit(NodeKind::Where, {"elementwise", supportsWhere, emitWhere});
  for (const UnaryEntry& e : kUnary)
    registerCodegenUnit(e.kind, {"elementwise", allPlainFloat, emitUnary});
  for (const auto& [kind, op] : kBinary)
    registerCodegenUnit(kind, {"elementwise", supportsBinary, emitBinary});
}

} // namespace ember::cpu
