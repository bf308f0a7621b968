// Codegen of the float elementwise family: unary maps (ember_unary_f32 with an op code
// and up to two parameters) and broadcasting binary operators (ember_binary_f32 over a
// simplified six-dimensional box), Add with its fused activation.
#include "Codegen.h"
#include "Strides.h"

#include "ember/passes/FusedActivation.h"

#include <limits>

namespace ember::cpu {

namespace {

// Op codes: the order of the enums in libjit/Elementwise.cpp.
enum UnaryOp : int {
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kErf,
  kNeg,
  kAbs,
  kReciprocal,
  kFloor,
  kCeil,
  kLeakyRelu,
  kClip,
  kHardSigmoid,
  kHardSwish,
  kSilu,
  kGelu,
  kSoftplus,
  kElu,
  kRound,
  kSign,
};
enum BinaryOp : int { kAdd, kSub, kMul, kDiv, kMax, kMin, kPow, kPRelu };

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
};

const std::pair<NodeKind, int> kBinary[] = {
    {NodeKind::Add, kAdd}, {NodeKind::Sub, kSub}, {NodeKind::Mul, kMul}, {NodeKind::Div, kDiv},
    {NodeKind::Max, kMax}, {NodeKind::Min, kMin}, {NodeKind::Pow, kPow}, {NodeKind::PRelu, kPRelu},
};

bool plainFloat(const Type& t) {
  return t.kind == ElemKind::Float32 && !t.quant.isQuantized();
}

bool allPlainFloat(const Node& n) {
  for (const NodeValue& v : n.inputs())
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

void emitUnary(const Node& n, CodegenContext& ctx) {
  const UnaryEntry& e = unaryOf(n.kind());
  const double a = *e.alpha ? n.attrs().getFloat(e.alpha, e.alphaDefault) : 0.0;
  const double b = *e.beta ? n.attrs().getFloat(e.beta, e.betaDefault) : 0.0;
  ctx.call("ember_unary_f32",
           {ctx.i32(e.op), ctx.addr(n.input(0)), ctx.result(n), ctx.i64(n.resultType().size()),
            ctx.f32(a), ctx.f32(b), ctx.tid(), ctx.nth()});
}

void emitBinary(const Node& n, CodegenContext& ctx) {
  const Shape& out = n.resultType().dims;
  const Box6<2> box = simplifyBox<2>(
      out, {broadcastStrides(n.input(0).dims(), out), broadcastStrides(n.input(1).dims(), out)});
  const FusedActivation act = FusedActivation::of(n);
  ctx.call("ember_binary_f32",
           {ctx.i32(binaryOf(n.kind())), ctx.addr(n.input(0)), ctx.addr(n.input(1)), ctx.result(n),
            ctx.int64Array(box.dims), ctx.int64Array(box.strides[0]),
            ctx.int64Array(box.strides[1]), ctx.i32(static_cast<int>(act.kind)), ctx.f32(act.lo),
            ctx.f32(act.hi), ctx.tid(), ctx.nth()});
}

bool supportsBinary(const Node& n) {
  if (!allPlainFloat(n) || n.numInputs() != 2)
    return false;
  if (n.kind() == NodeKind::PRelu && n.input(1).dims().size() > n.resultType().rank())
    return false;
  return true;
}

} // namespace

void registerElementwiseCodegen() {
  for (const UnaryEntry& e : kUnary)
    registerCodegenUnit(e.kind, {"elementwise", allPlainFloat, emitUnary});
  for (const auto& [kind, op] : kBinary)
    registerCodegenUnit(kind, {"elementwise", supportsBinary, emitBinary});
}

} // namespace ember::cpu
