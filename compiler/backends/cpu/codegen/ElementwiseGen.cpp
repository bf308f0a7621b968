// Codegen of the float elementwise family: unary maps (ember_unary_f32 with an op code
// and up to two parameters) and broadcasting binary operators (ember_binary_f32 over a
// simplified six-dimensional box), Add with its fused activation; comparisons of
// float32 and logic of bool values (bool results) and Where of any element kind.
#include "Codegen.h"
#include "Strides.h"
#include "libjit/OpCodes.h"

#include "ember/passes/FusedActivation.h"

#include <limits>

namespace ember::cpu {

namespace {

using namespace jitops;
struct UnaryEntry {
  NodeKind kind;
  int op;
  const char* alpha; ///< attribute of parameter a ("" = none)
  double alphaDefault;
  const char* beta;
  double betaDefault;
};

constexpr double kInf = std::numeric_limits<double>::infinity();

const UnaryEntry kUnary[] = {
    {NodeKind::Relu, kRelu, "", 0, "", 0},
    {NodeKind::Sigmoid, kSigmoid, "", 0, "", 0},
    {NodeKind::Tanh, kTanh, "", 0, "", 0},
    {NodeKind::Exp, kExp, "", 0, "", 0},
    {NodeKind::Log, kLog, "", 0, "", 0},
    {NodeKind::Sqrt, kSqrt, "", 0, "", 0},
    {NodeKind::Erf, kErf, "", 0, "", 0},
    {NodeKind::Neg, kNeg, "", 0, "", 0},
    {NodeKind::Abs, kAbs, "", 0, "", 0},
    {NodeKind::Reciprocal, kReciprocal, "", 0, "", 0},
    {NodeKind::Floor, kFloor, "", 0, "", 0},
    {NodeKind::Ceil, kCeil, "", 0, "", 0},
    {NodeKind::LeakyRelu, kLeakyRelu, "alpha", 0.01, "", 0},
    {NodeKind::Clip, kClip, "min", -kInf, "max", kInf},
    {NodeKind::HardSigmoid, kHardSigmoid, "alpha", 0.2, "beta", 0.5},
    {NodeKind::HardSwish, kHardSwish, "", 0, "", 0},
    {NodeKind::Silu, kSilu, "", 0, "", 0},
    {NodeKind::Gelu, kGelu, "", 0, "", 0},
    {NodeKind::Softplus, kSoftplus, "", 0, "", 0},
    {NodeKind::Elu, kElu, "alpha", 1.0, "", 0},
    {NodeKind::Round, kRound, "", 0, "", 0},
    {NodeKind::Sign, kSign, "", 0, "", 0},
    {NodeKind::Sin, kSin, "", 0, "", 0},
    {NodeKind::Cos, kCos, "", 0, "", 0},
    {NodeKind::Tan, kTan, "", 0, "", 0},
    {NodeKind::Asin, kAsin, "", 0, "", 0},
    {NodeKind::Acos, kAcos, "", 0, "", 0},
    {NodeKind::Atan, kAtan, "", 0, "", 0},
    {NodeKind::Sinh, kSinh, "", 0, "", 0},
    {NodeKind::Cosh, kCosh, "", 0, "", 0},
    {NodeKind::Asinh, kAsinh, "", 0, "", 0},
    {NodeKind::Acosh, kAcosh, "", 0, "", 0},
    {NodeKind::Atanh, kAtanh, "", 0, "", 0},
    {NodeKind::Softsign, kSoftsign, "", 0, "", 0},
    {NodeKind::Celu, kCelu, "alpha", 1.0, "", 0},
    {NodeKind::ThresholdedRelu, kThresholdedRelu, "alpha", 1.0, "", 0},
    {NodeKind::Shrink, kShrink, "lambd", 0.5, "bias", 0.0},
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

const UnaryEntry& unaryOf(NodeKind k) {
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
  const UnaryEntry& e = unaryOf(n.kind());
  const double a = *e.alpha ? n.attrs().getFloat(e.alpha, e.alphaDefault) : 0.0;
  const double b = *e.beta ? n.attrs().getFloat(e.beta, e.betaDefault) : 0.0;
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
