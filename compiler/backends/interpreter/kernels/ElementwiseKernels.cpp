// Interpreter kernels of the elementwise node kinds: unary maps, numpy-broadcasting
// binary and ternary operators, comparisons, logic, Clip and Cast.
//
// Each operator is one scalar lambda in a table; the loops, the broadcasting and the
// element-kind dispatch are written once (runUnary / runBinary below).
#include "Broadcast.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/attrs/FusedActivation.h"
#include "ember/interpreter/Kernels.h"

#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

namespace ember {

namespace {

using namespace kernels;
using Ins = std::vector<const Tensor*>;
using Outs = std::vector<Tensor>;

/// Float16 is computed in float: the type an operator sees for an element type T.
template <typename T> using Compute = std::conditional_t<std::is_same_v<T, Float16>, float, T>;
template <typename T> Compute<T> widen(T v) {
  return static_cast<Compute<T>>(v);
}
/// The stored result of an operator that returned `r` (of type R) on elements of type T:
/// a float computed for a Float16 operand is rounded back to Float16.
template <typename T, typename R>
using Stored =
    std::conditional_t<std::is_same_v<T, Float16> && std::is_same_v<R, float>, Float16, R>;
template <typename T, typename R> Stored<T, R> narrow(R r) {
  if constexpr (std::is_same_v<Stored<T, R>, Float16>)
    return Float16(static_cast<double>(r));
  else
    return r;
}

/// y[i] = op(x[i]) for the kinds in Kinds; op's return type is the result's C++ type.
template <unsigned Kinds, typename Op>
void runUnary(const Node& n, const Ins& in, Outs& out, const Op& op) {
  dispatchKind<Kinds>(in[0]->kind(), n.kindName(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = decltype(op(Compute<T>{}));
    const T* x = in[0]->data<T>();
    auto* y = out[0].data<Stored<T, R>>();
    for (int64_t i = 0, e = in[0]->size(); i < e; ++i)
      y[i] = narrow<T>(op(widen(x[i])));
  });
}

/// y = op(a, b) with numpy broadcasting, a and b of the same kind.
template <unsigned Kinds, typename Op>
void runBinary(const Node& n, const Ins& in, Outs& out, const Op& op) {
  dispatchKind<Kinds>(in[0]->kind(), n.kindName(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = decltype(op(Compute<T>{}, Compute<T>{}));
    const T* a = in[0]->data<T>();
    const T* b = in[1]->data<T>();
    auto* y = out[0].data<Stored<T, R>>();
    forEachBroadcast<2>(out[0].dims(), {&in[0]->dims(), &in[1]->dims()},
                        [&](int64_t o, const std::array<int64_t, 2>& i) {
                          y[o] = narrow<T>(op(widen(a[i[0]]), widen(b[i[1]])));
                        });
  });
}

template <unsigned Kinds, typename Op> KernelFn binaryKernel(Op op) {
  return [op](const Node& n, const Ins& in, Outs& out) { runBinary<Kinds>(n, in, out, op); };
}

template <unsigned Kinds, typename Op> KernelFn unaryKernel(Op op) {
  return [op](const Node& n, const Ins& in, Outs& out) { runUnary<Kinds>(n, in, out, op); };
}

// ---- float unary maps with attributes --------------------------------------------

/// The parameters a float unary map may read: its kind's view (ONNX defaults there).
using UnaryParams = UnaryAttrs;

struct FloatUnary {
  NodeKind kind;
  double (*fn)(double x, const UnaryParams& p);
};

double sigmoid(double x) {
  return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}

const FloatUnary kFloatUnary[] = {
    {NodeKind::Sigmoid, [](double x, const UnaryParams&) { return sigmoid(x); }},
    {NodeKind::Tanh, [](double x, const UnaryParams&) { return std::tanh(x); }},
    {NodeKind::Exp, [](double x, const UnaryParams&) { return std::exp(x); }},
    {NodeKind::Log, [](double x, const UnaryParams&) { return std::log(x); }},
    {NodeKind::Sqrt, [](double x, const UnaryParams&) { return std::sqrt(x); }},
    {NodeKind::Erf, [](double x, const UnaryParams&) { return std::erf(x); }},
    {NodeKind::Reciprocal, [](double x, const UnaryParams&) { return 1.0 / x; }},
    {NodeKind::Floor, [](double x, const UnaryParams&) { return std::floor(x); }},
    {NodeKind::Ceil, [](double x, const UnaryParams&) { return std::ceil(x); }},
    // nearbyint rounds half to even in the default rounding mode.
    {NodeKind::Round, [](double x, const UnaryParams&) { return std::nearbyint(x); }},
    {NodeKind::Sin, [](double x, const UnaryParams&) { return std::sin(x); }},
    {NodeKind::Cos, [](double x, const UnaryParams&) { return std::cos(x); }},
    {NodeKind::Tan, [](double x, const UnaryParams&) { return std::tan(x); }},
    {NodeKind::Asin, [](double x, const UnaryParams&) { return std::asin(x); }},
    {NodeKind::Acos, [](double x, const UnaryParams&) { return std::acos(x); }},
    {NodeKind::Atan, [](double x, const UnaryParams&) { return std::atan(x); }},
    {NodeKind::Sinh, [](double x, const UnaryParams&) { return std::sinh(x); }},
    {NodeKind::Cosh, [](double x, const UnaryParams&) { return std::cosh(x); }},
    {NodeKind::Asinh, [](double x, const UnaryParams&) { return std::asinh(x); }},
    {NodeKind::Acosh, [](double x, const UnaryParams&) { return std::acosh(x); }},
    {NodeKind::Atanh, [](double x, const UnaryParams&) { return std::atanh(x); }},
    {NodeKind::Softplus,
     [](double x, const UnaryParams&) {
       return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
     }},
    {NodeKind::Softsign, [](double x, const UnaryParams&) { return x / (1 + std::fabs(x)); }},
    {NodeKind::LeakyRelu, [](double x, const UnaryParams& p) { return x < 0 ? p.alpha * x : x; }},
    {NodeKind::Elu,
     [](double x, const UnaryParams& p) { return x < 0 ? p.alpha * std::expm1(x) : x; }},
    {NodeKind::Selu,
     [](double x, const UnaryParams& p) {
       return p.gamma * (x <= 0 ? p.alpha * std::expm1(x) : x);
     }},
    {NodeKind::Celu,
     [](double x, const UnaryParams& p) {
       // max(0, x) + min(0, alpha * expm1(x / alpha)), with NaN kept.
       return x > 0 ? x : p.alpha * std::expm1(x / p.alpha);
     }},
    {NodeKind::ThresholdedRelu,
     [](double x, const UnaryParams& p) { return x <= p.alpha ? 0.0 : x; }},
    {NodeKind::HardSigmoid,
     [](double x, const UnaryParams& p) {
       const double v = p.alpha * x + p.beta; // clamped to [0, 1]; NaN stays NaN
       return v < 0 ? 0.0 : (v > 1 ? 1.0 : v);
     }},
    {NodeKind::HardSwish,
     [](double x, const UnaryParams&) {
       const double v = x / 6 + 0.5;
       return x * (v < 0 ? 0.0 : (v > 1 ? 1.0 : v));
     }},
    {NodeKind::Silu, [](double x, const UnaryParams&) { return x * sigmoid(x); }},
    {NodeKind::Gelu,
     [](double x, const UnaryParams&) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }},
    {NodeKind::Shrink,
     [](double x, const UnaryParams& p) {
       return x < -p.lambd ? x + p.bias : (x > p.lambd ? x - p.bias : (x == x ? 0.0 : x));
     }},
};

KernelFn floatUnaryKernel(const FloatUnary& e) {
  return [e](const Node& n, const Ins& in, Outs& out) {
    const UnaryAttrs p = unaryOf(n);
    runUnary<kF32>(n, in, out, [&](float x) { return static_cast<float>(e.fn(x, p)); });
  };
}

// ---- numeric unary maps ---------------------------------------------------------

/// Integer arithmetic wraps around (two's complement), as in NumPy and ONNX Runtime:
/// signed overflow is undefined in C++, so integers are computed as unsigned.
template <typename T, typename Op> T wrapping(T a, T b, Op op) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // At least unsigned int, so that uint16 * uint16 is not promoted to a signed int.
    using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
    return static_cast<T>(static_cast<U>(op(static_cast<U>(a), static_cast<U>(b))));
  } else {
    return static_cast<T>(op(a, b));
  }
}

template <typename T> T neg(T x) {
  return wrapping(T(0), x, std::minus<>()); // -INT64_MIN wraps to itself
}

void registerNumericUnary() {
  constexpr unsigned kSigned = kNumeric | kF64 | kI16;
  registerKernel(NodeKind::Relu,
                 unaryKernel<kSigned>([](auto x) { return x <= 0 ? decltype(x)(0) : x; }));
  registerKernel(NodeKind::Neg, unaryKernel<kSigned>([](auto x) { return neg(x); }));
  registerKernel(NodeKind::Abs, unaryKernel<kSigned>([](auto x) { return x < 0 ? neg(x) : x; }));
  registerKernel(NodeKind::Sign, unaryKernel<kSigned>([](auto x) {
                   using T = decltype(x);
                   return static_cast<T>(x > 0 ? 1 : (x < 0 ? -1 : 0));
                 }));
  registerKernel(NodeKind::IsNaN, unaryKernel<kF32>([](float x) { return std::isnan(x); }));
  registerKernel(NodeKind::Not, unaryKernel<kBool>([](bool x) { return !x; }));
  registerKernel(NodeKind::IsInf, [](const Node& n, const Ins& in, Outs& out) {
    const IsInfAttrs ii = isInfOf(n.attrs());
    const bool neg = ii.detectNegative, pos = ii.detectPositive;
    runUnary<kF32>(n, in, out,
                   [&](float x) { return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg)); });
  });
  registerKernel(NodeKind::Clip, [](const Node& n, const Ins& in, Outs& out) {
    const ClipAttrs c = clipOf(n.attrs());
    const double lo = c.lo(), hi = c.hi();
    runUnary<kNumeric>(n, in, out, [&](auto x) {
      using T = decltype(x);
      // As ONNX: max first, then min (so min > max gives max everywhere).
      const double v = static_cast<double>(x);
      const T y = v < lo ? static_cast<T>(lo) : x;
      return static_cast<double>(y) > hi ? static_cast<T>(hi) : y;
    });
  });
  registerKernel(NodeKind::Cast, [](const Node&, const Ins& in, Outs& out) {
    Tensor t = in[0]->convertTo(out[0].kind());
    std::memcpy(out[0].raw(), t.raw(), t.sizeInBytes());
  });
}

// ---- binary operators -----------------------------------------------------------

/// Integer division by zero is an error, not a trap.
template <typename T> void checkDivisor(T b, const char* what) {
  if constexpr (std::is_integral_v<T>)
    if (b == 0)
      throw Error(std::string(what) + ": integer division by zero");
}

/// a / b and a % b for integers without the x86 trap of MIN / -1 (two's-complement wrap).
template <typename T> T safeDiv(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    checkDivisor(b, "Div");
    if constexpr (std::is_signed_v<T>)
      if (b == -1)
        return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
  }
  return static_cast<T>(a / b);
}
template <typename T> T safeRem(T a, T b) {
  checkDivisor(b, "Mod");
  if constexpr (std::is_signed_v<T>)
    if (b == -1)
      return T(0);
  return static_cast<T>(a % b);
}

template <typename T> T pythonMod(T a, T b) {
  if constexpr (std::is_unsigned_v<T>) {
    return safeRem(a, b);
  } else if constexpr (std::is_integral_v<T>) {
    T r = safeRem(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
  } else {
    T r = std::fmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
}

template <typename T> T cMod(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return safeRem(a, b);
  } else {
    return std::fmod(a, b);
  }
}

void registerBinary() {
  using K = NodeKind;
  // Add may carry a fused activation (ember/graph/attrs/FusedActivation.h).
  registerKernel(K::Add, [](const Node& n, const Ins& in, Outs& out) {
    runBinary<kWideNumeric>(n, in, out,
                            [](auto a, auto b) { return wrapping(a, b, std::plus<>()); });
    applyFusedActivation(n, out[0]);
  });
  registerKernel(K::Sub, binaryKernel<kWideNumeric>(
                             [](auto a, auto b) { return wrapping(a, b, std::minus<>()); }));
  registerKernel(K::Mul, binaryKernel<kWideNumeric>(
                             [](auto a, auto b) { return wrapping(a, b, std::multiplies<>()); }));
  registerKernel(K::Div, binaryKernel<kWideNumeric>([](auto a, auto b) { return safeDiv(a, b); }));
  registerKernel(K::Max, binaryKernel<kWideNumeric | kF16>([](auto a, auto b) {
                   if constexpr (std::is_floating_point_v<decltype(a)>)
                     if (std::isnan(a) || std::isnan(b))
                       return std::numeric_limits<decltype(a)>::quiet_NaN();
                   return a < b ? b : a;
                 }));
  registerKernel(K::Min, binaryKernel<kWideNumeric | kF16>([](auto a, auto b) {
                   if constexpr (std::is_floating_point_v<decltype(a)>)
                     if (std::isnan(a) || std::isnan(b))
                       return std::numeric_limits<decltype(a)>::quiet_NaN();
                   return b < a ? b : a;
                 }));
  registerKernel(K::PRelu, binaryKernel<kNumeric>(
                               [](auto a, auto s) { return a < 0 ? decltype(a)(s * a) : a; }));
  registerKernel(K::Mod, [](const Node& n, const Ins& in, Outs& out) {
    if (modOf(n.attrs()).fmod)
      runBinary<kWideNumeric | kF16>(n, in, out, [](auto a, auto b) { return cMod(a, b); });
    else
      runBinary<kWideNumeric | kF16>(n, in, out, [](auto a, auto b) { return pythonMod(a, b); });
  });
  registerKernel(K::Equal, binaryKernel<kWideAll | kF16>([](auto a, auto b) { return a == b; }));
  registerKernel(K::Less, binaryKernel<kWideAll | kF16>([](auto a, auto b) { return a < b; }));
  registerKernel(K::LessOrEqual,
                 binaryKernel<kWideAll | kF16>([](auto a, auto b) { return a <= b; }));
  registerKernel(K::Greater, binaryKernel<kWideAll | kF16>([](auto a, auto b) { return a > b; }));
  registerKernel(K::GreaterOrEqual,
                 binaryKernel<kWideAll | kF16>([](auto a, auto b) { return a >= b; }));
  registerKernel(K::And, binaryKernel<kBool>([](bool a, bool b) { return a && b; }));
  registerKernel(K::Or, binaryKernel<kBool>([](bool a, bool b) { return a || b; }));
  registerKernel(K::Xor, binaryKernel<kBool>([](bool a, bool b) { return a != b; }));
  // A shift by the width or more gives 0 (C++ leaves it undefined).
  registerKernel(K::BitShift, [](const Node& n, const Ins& in, Outs& out) {
    const bool left = bitShiftOf(n.attrs()).left();
    runBinary<kU8 | kU16 | kU32 | kU64>(n, in, out, [left](auto a, auto b) {
      using T = decltype(a);
      if (b >= sizeof(T) * 8)
        return T(0);
      using W = std::common_type_t<T, unsigned>;
      return static_cast<T>(left ? static_cast<W>(a) << b : static_cast<W>(a) >> b);
    });
  });
}

/// Pow: the exponent may have another kind than the base; the result has the base's.
void powKernel(const Node&, const Ins& in, Outs& out) {
  dispatchKind<kWideNumeric>(in[0]->kind(), "Pow", [&](auto tb) {
    using T = typename decltype(tb)::type;
    dispatchKind<kWideNumeric>(in[1]->kind(), "Pow", [&](auto te) {
      using E = typename decltype(te)::type;
      const T* a = in[0]->data<T>();
      const E* b = in[1]->data<E>();
      T* y = out[0].data<T>();
      forEachBroadcast<2>(out[0].dims(), {&in[0]->dims(), &in[1]->dims()},
                          [&](int64_t o, const std::array<int64_t, 2>& i) {
                            const double r = std::pow(double(a[i[0]]), double(b[i[1]]));
                            y[o] = std::is_integral_v<T> ? static_cast<T>(std::llround(r))
                                                         : static_cast<T>(r);
                          });
    });
  });
}

void whereKernel(const Node& n, const Ins& in, Outs& out) {
  const bool* c = in[0]->data<bool>();
  dispatchKind<kWideAll | kF16>(in[1]->kind(), n.kindName(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = in[1]->data<T>();
    const T* b = in[2]->data<T>();
    T* y = out[0].data<T>();
    forEachBroadcast<3>(
        out[0].dims(), {&in[0]->dims(), &in[1]->dims(), &in[2]->dims()},
        [&](int64_t o, const std::array<int64_t, 3>& i) { y[o] = c[i[0]] ? a[i[1]] : b[i[2]]; });
  });
}

} // namespace

void registerElementwiseKernels() {
  for (const FloatUnary& e : kFloatUnary)
    registerKernel(e.kind, floatUnaryKernel(e));
  registerNumericUnary();
  registerBinary();
  registerKernel(NodeKind::Pow, powKernel);
  registerKernel(NodeKind::Where, whereKernel);
}

} // namespace ember
