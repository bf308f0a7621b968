// Type inference of the elementwise node kinds: unary, binary (broadcasting), Where.
#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/graph/OpInfo.h"

namespace ember {

namespace {

constexpr std::initializer_list<ElemKind> kNumeric = {ElemKind::Float32, ElemKind::Int8,
                                                      ElemKind::Int32, ElemKind::Int64};

std::vector<Type> floatUnary(const std::vector<NodeValue>& in, const Attrs&) {
  requireKind(in[0], {ElemKind::Float32}, "input");
  return {in[0].type()};
}

std::vector<Type> numericUnary(const std::vector<NodeValue>& in, const Attrs&) {
  // The signed kinds (unsigned ones have no Neg/Abs/Sign worth computing).
  requireKind(in[0],
              {ElemKind::Float32, ElemKind::Float64, ElemKind::Int8, ElemKind::Int16,
               ElemKind::Int32, ElemKind::Int64},
              "input");
  Type t(in[0].kind(), in[0].dims());
  return {t};
}

std::vector<Type> floatToBool(const std::vector<NodeValue>& in, const Attrs&) {
  requireKind(in[0], {ElemKind::Float32}, "input");
  return {Type(ElemKind::Bool, in[0].dims())};
}

std::vector<Type> boolUnary(const std::vector<NodeValue>& in, const Attrs&) {
  requireKind(in[0], {ElemKind::Bool}, "input");
  return {in[0].type()};
}

std::vector<Type> castInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  ElemKind to;
  const std::string name = castOf(a).to;
  if (!parseElemKind(name, &to))
    inferError("attribute 'to' names no element kind: '" + name + "'");
  return {Type(to, in[0].dims())};
}

void checkSameKind(const std::vector<NodeValue>& in, size_t first, size_t count) {
  for (size_t i = first + 1; i < first + count; ++i)
    if (in[i].kind() != in[first].kind())
      inferError(std::string("operands have different element kinds: ") +
                 elemKindName(in[first].kind()) + " and " + elemKindName(in[i].kind()));
}

std::vector<Type> arithBinary(const std::vector<NodeValue>& in, const Attrs&) {
  requireKind(in[0], wideNumericKinds(), "a");
  checkSameKind(in, 0, 2);
  return {Type(in[0].kind(), broadcastShapes(in[0].dims(), in[1].dims()))};
}

/// Max, Min and Mod also take float16 (computed in float, rounded back).
std::vector<Type> selectBinary(const std::vector<NodeValue>& in, const Attrs& a) {
  if (in[0].kind() == ElemKind::Float16) {
    checkSameKind(in, 0, 2);
    return {Type(in[0].kind(), broadcastShapes(in[0].dims(), in[1].dims()))};
  }
  return arithBinary(in, a);
}

/// PRelu: the core numeric kinds; the int8 form (docs/numerics.md section 4.12) keeps a
/// float32 slope.
std::vector<Type> preluInfer(const std::vector<NodeValue>& in, const Attrs&) {
  requireKind(in[0], kNumeric, "input");
  if (!(in[0].kind() == ElemKind::Int8 && in[1].kind() == ElemKind::Float32))
    checkSameKind(in, 0, 2);
  return {Type(in[0].kind(), broadcastShapes(in[0].dims(), in[1].dims()))};
}

std::vector<Type> powInfer(const std::vector<NodeValue>& in, const Attrs&) {
  // ONNX allows a different exponent type; the result has the base's kind.
  requireKind(in[0], wideNumericKinds(), "a");
  requireKind(in[1], wideNumericKinds(), "b");
  return {Type(in[0].kind(), broadcastShapes(in[0].dims(), in[1].dims()))};
}

std::vector<Type> compareBinary(const std::vector<NodeValue>& in, const Attrs&) {
  checkSameKind(in, 0, 2);
  return {Type(ElemKind::Bool, broadcastShapes(in[0].dims(), in[1].dims()))};
}

std::vector<Type> logicBinary(const std::vector<NodeValue>& in, const Attrs&) {
  requireKind(in[0], {ElemKind::Bool}, "a");
  requireKind(in[1], {ElemKind::Bool}, "b");
  return {Type(ElemKind::Bool, broadcastShapes(in[0].dims(), in[1].dims()))};
}

std::vector<Type> whereInfer(const std::vector<NodeValue>& in, const Attrs&) {
  requireKind(in[0], {ElemKind::Bool}, "condition");
  checkSameKind(in, 1, 2);
  Shape s = broadcastShapes(broadcastShapes(in[0].dims(), in[1].dims()), in[2].dims());
  return {Type(in[1].kind(), s)};
}

std::vector<Type> bitShiftInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  requireKind(in[0], {ElemKind::UInt8, ElemKind::UInt16, ElemKind::UInt32, ElemKind::UInt64}, "a");
  checkSameKind(in, 0, 2);
  const std::string dir = bitShiftOf(a).direction;
  if (dir != "LEFT" && dir != "RIGHT")
    inferError("attribute direction must be LEFT or RIGHT, is '" + dir + "'");
  return {Type(in[0].kind(), broadcastShapes(in[0].dims(), in[1].dims()))};
}

std::vector<Type> clipInfer(const std::vector<NodeValue>& in, const Attrs&) {
  requireKind(in[0], kNumeric, "input");
  return {in[0].type()};
}

void add(NodeKind k, InferFn fn, std::vector<std::string> operands) {
  OpInfo info;
  info.kind = k;
  info.minInputs = static_cast<unsigned>(operands.size());
  info.operandNames = std::move(operands);
  info.infer = std::move(fn);
  registerOpInfo(std::move(info));
}

} // namespace

void registerElementwiseOps() {
  using K = NodeKind;
  using T = OpTrait;
  const auto floatKinds = {
      K::Sigmoid,     K::Tanh,      K::Exp,       K::Log,  K::Sqrt,  K::Erf,   K::Reciprocal,
      K::Floor,       K::Ceil,      K::Round,     K::Sin,  K::Cos,   K::Tan,   K::Asin,
      K::Acos,        K::Atan,      K::Sinh,      K::Cosh, K::Asinh, K::Acosh, K::Atanh,
      K::Softplus,    K::Softsign,  K::LeakyRelu, K::Elu,  K::Selu,  K::Celu,  K::ThresholdedRelu,
      K::HardSigmoid, K::HardSwish, K::Shrink,    K::Silu, K::Gelu};
  for (K k : floatKinds)
    add(k, floatUnary, {"input"});
  for (K k : {K::Relu, K::Neg, K::Abs, K::Sign})
    add(k, numericUnary, {"input"});
  add(K::Clip, clipInfer, {"input"});
  add(K::IsNaN, floatToBool, {"input"});
  add(K::IsInf, floatToBool, {"input"});
  add(K::Not, boolUnary, {"input"});
  add(K::Cast, castInfer, {"input"});
  for (K k : {K::Add, K::Sub, K::Mul, K::Div})
    add(k, arithBinary, {"a", "b"});
  for (K k : {K::Max, K::Min, K::Mod})
    add(k, selectBinary, {"a", "b"});
  add(K::Pow, powInfer, {"a", "b"});
  add(K::PRelu, preluInfer, {"input", "slope"});
  for (K k : {K::Equal, K::Less, K::LessOrEqual, K::Greater, K::GreaterOrEqual})
    add(k, compareBinary, {"a", "b"});
  for (K k : {K::And, K::Or, K::Xor})
    add(k, logicBinary, {"a", "b"});
  add(K::Where, whereInfer, {"condition", "a", "b"});
  add(K::BitShift, bitShiftInfer, {"a", "b"});

  addOpTraits(floatKinds, {T::ElementwiseUnary, T::InPlaceSafe});
  addOpTraits({K::Relu, K::Neg, K::Abs, K::Sign, K::Clip}, {T::ElementwiseUnary, T::InPlaceSafe});
  // Cast changes the element size; the predicates make bool of float.
  addOpTraits({K::Cast, K::Not, K::IsNaN, K::IsInf}, {T::ElementwiseUnary});
  addOpTraits({K::Add, K::Sub, K::Mul, K::Div, K::Max, K::Min, K::Mod, K::Pow},
              {T::ElementwiseBinary, T::InPlaceSafe});
  addOpTraits(
      {K::Equal, K::Less, K::LessOrEqual, K::Greater, K::GreaterOrEqual, K::And, K::Or, K::Xor},
      {T::ElementwiseBinary});
  // PRelu's slope and Where's condition broadcast into the result: index by index, but
  // not the two-equal-operands form the layout pass moves transposes through.
  addOpTraits({K::PRelu, K::Where}, {T::InPlaceSafe});
  // Their int8 forms work on the codes (docs/numerics.md section 4).
  addOpTraits({K::Relu, K::Clip}, {T::KeepsQuantization});
}

} // namespace ember
