// Elementwise kernels: float unary maps (one op code per node kind, folded to one
// branch once the code is a constant), numpy-broadcasting binary operators over up to
// six coalesced dimensions, and the fused activation of Add.
#include "Libjit.h"
#include "OpCodes.h"

namespace {

using namespace ember::jitops;

/// 1 / (1 + e^-x) from e = e^-|x| (never overflows): 1 / (1 + e) for x >= 0, e / (1 + e)
/// below; without branches, so loops over it vectorise.
inline float sigmoid(float x) {
  const float e = libjit::expFast(-__builtin_fabsf(x));
  const float s = 1.f / (1.f + e);
  return x >= 0 ? s : e * s;
}

inline double unaryDouble(int32_t op, double x, double a, double b) {
  switch (op) {
  case kSin:
    return sin(x);
  case kCos:
    return cos(x);
  case kTan:
    return tan(x);
  case kAsin:
    return asin(x);
  case kAcos:
    return acos(x);
  case kAtan:
    return atan(x);
  case kSinh:
    return sinh(x);
  case kCosh:
    return cosh(x);
  case kAsinh:
    return asinh(x);
  case kAcosh:
    return acosh(x);
  case kAtanh:
    return atanh(x);
  case kSoftsign:
    return x / (1 + fabs(x));
  case kCelu: {
    return x > 0 ? x : a * expm1(x / a); // NaN stays NaN
  }
  case kThresholdedRelu:
    return x <= a ? 0.0 : x;
  case kShrink: // a = lambd, b = bias
    return x < -a ? x + b : (x > a ? x - b : (x == x ? 0.0 : x));
  default:
    return x;
  }
}

inline float unary(int32_t op, float x, float a, float b) {
  switch (op) {
  case kRelu:
    return x <= 0 ? 0.f : x; // NaN stays NaN (docs/numerics.md)
  case kSigmoid:
    return sigmoid(x);
  case kTanh:
    return tanhf(x);
  case kExp:
    return libjit::expFast(x);
  case kLog:
    return logf(x);
  case kSqrt:
    return sqrtf(x);
  case kErf:
    return erff(x);
  case kNeg:
    return -x;
  case kAbs:
    return fabsf(x);
  case kReciprocal:
    return 1.f / x;
  case kFloor:
    return floorf(x);
  case kCeil:
    return ceilf(x);
  case kLeakyRelu:
    return x < 0 ? a * x : x;
  case kClip: {
    const float y = x < a ? a : x;
    return y > b ? b : y;
  }
  case kHardSigmoid: {
    const float v = a * x + b;
    return v < 0 ? 0.f : (v > 1 ? 1.f : v);
  }
  case kHardSwish: {
    const float v = x / 6.f + 0.5f;
    return x * (v < 0 ? 0.f : (v > 1 ? 1.f : v));
  }
  case kSilu:
    return x * sigmoid(x);
  case kGelu:
    return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
  case kSoftplus:
    return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x));
  case kElu:
    return x < 0 ? a * expm1f(x) : x;
  case kRound:
    return nearbyintf(x);
  case kSign:
    return x > 0 ? 1.f : (x < 0 ? -1.f : 0.f);
  default:
    return x;
  }
}

inline float binary(int32_t op, float a, float b) {
  switch (op) {
  case kAdd:
    return a + b;
  case kSub:
    return a - b;
  case kMul:
    return a * b;
  case kDiv:
    return a / b;
  case kMax:
    return a != a || b != b ? __builtin_nanf("") : (a < b ? b : a);
  case kMin:
    return a != a || b != b ? __builtin_nanf("") : (b < a ? b : a);
  case kPow:
    return b == 2.f ? a * a : powf(a, b);
  case kPRelu:
    return a < 0 ? b * a : a;
  default:
    return a;
  }
}

} // namespace

/// y[i] = op(x[i]) for i in [0, n); `a`, `b` are the op's parameters (attributes, in
/// double as the graph stores them).
EMBER_KERNEL void ember_unary_f32(int32_t op, const float* x, float* y, int64_t n, double a,
                                  double b, int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRangeGrain(n, 64, tid, nth, &begin, &end);
  const float af = static_cast<float>(a), bf = static_cast<float>(b);
  if (op >= kSin) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = static_cast<float>(unaryDouble(op, x[i], a, b));
    return;
  }
  // Through a local block of 16: the map vectorises even when y is x (an in-place call,
  // whose pointers may alias, sent the plain loop to its scalar version: EfficientNet-B0's
  // Silu layers took 51 of its 65 ms).
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    float v[16];
    __builtin_memcpy(v, x + i, sizeof v);
    // Not unrolled here: the JIT vectorises the loop once op is a constant (unrolled
    // into 16 scalar chains, it stayed scalar).
#pragma clang loop unroll(disable)
    for (int j = 0; j < 16; ++j)
      v[j] = unary(op, v[j], af, bf);
    __builtin_memcpy(y + i, v, sizeof v);
  }
  for (; i < end; ++i)
    y[i] = unary(op, x[i], af, bf);
}

/// y = act(op(a, b)) over the output dims d[0..5] (coalesced; d[5] innermost); as[] and
/// bs[] are the operands' strides in elements (0 where broadcast).
EMBER_KERNEL void ember_binary_f32(int32_t op, const float* a, const float* b, float* y,
                                   const int64_t* d, const int64_t* as, const int64_t* bs,
                                   int32_t act, float lo, float hi, int64_t tid, int64_t nth) {
  const int64_t rows = d[0] * d[1] * d[2] * d[3] * d[4];
  const int64_t inner = d[5];
  int64_t begin, end;
  libjit::threadRange(rows, tid, nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    const libjit::Row5 row = libjit::decodeRow(r, d);
    const float* ar = a + row.offset(as);
    const float* br = b + row.offset(bs);
    float* yr = y + r * inner;
    const int64_t sa = as[5], sb = bs[5];
    // Contiguous operands go through local blocks of 16, as in ember_unary_f32, so that
    // the loop vectorises when y is one of them (an in-place call).
    if (sa <= 1 && sb <= 1) {
      int64_t i = 0;
      for (; i + 16 <= inner; i += 16) {
        float av[16], bv[16];
        for (int j = 0; j < 16; ++j) {
          av[j] = ar[sa * (i + j)];
          bv[j] = br[sb * (i + j)];
        }
#pragma clang loop unroll(disable)
        for (int j = 0; j < 16; ++j)
          av[j] = libjit::activate(act, binary(op, av[j], bv[j]), lo, hi);
        __builtin_memcpy(yr + i, av, sizeof av);
      }
      for (; i < inner; ++i)
        yr[i] = libjit::activate(act, binary(op, ar[sa * i], br[sb * i]), lo, hi);
    } else {
      for (int64_t i = 0; i < inner; ++i)
        yr[i] = libjit::activate(act, binary(op, ar[i * sa], br[i * sb]), lo, hi);
    }
  }
}

namespace {

/// Calls f(o, i0, i1, i2) for every output element o of the box d (row-major) with the
/// operands' element offsets i_k = sum idx[j] * s_k[j]; threads split the rows.
template <typename F>
inline void walkBox(const int64_t* d, const int64_t* s0, const int64_t* s1, const int64_t* s2,
                    int64_t tid, int64_t nth, F f) {
  const int64_t rows = d[0] * d[1] * d[2] * d[3] * d[4];
  int64_t begin, end;
  libjit::threadRange(rows, tid, nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    int64_t rem = r, o0 = 0, o1 = 0, o2 = 0;
    for (int k = 4; k >= 0; --k) {
      const int64_t i = rem % d[k];
      rem /= d[k];
      o0 += i * s0[k];
      o1 += i * s1[k];
      o2 += i * s2[k];
    }
    for (int64_t i = 0; i < d[5]; ++i)
      f(r * d[5] + i, o0 + i * s0[5], o1 + i * s1[5], o2 + i * s2[5]);
  }
}

} // namespace

/// Comparisons of float32 operands and logic on bool operands (one byte each), numpy
/// broadcasting over the box d; bool results.
EMBER_KERNEL void ember_compare(int32_t op, const void* a, const void* b, uint8_t* y,
                                const int64_t* d, const int64_t* as, const int64_t* bs, int64_t tid,
                                int64_t nth) {
  const float* fa = static_cast<const float*>(a);
  const float* fb = static_cast<const float*>(b);
  const uint8_t* ba = static_cast<const uint8_t*>(a);
  const uint8_t* bb = static_cast<const uint8_t*>(b);
  walkBox(d, as, bs, as, tid, nth, [&](int64_t o, int64_t i, int64_t j, int64_t) {
    bool r = false;
    switch (op) {
    case kEqual:
      r = fa[i] == fb[j];
      break;
    case kLess:
      r = fa[i] < fb[j];
      break;
    case kLessOrEqual:
      r = fa[i] <= fb[j];
      break;
    case kGreater:
      r = fa[i] > fb[j];
      break;
    case kGreaterOrEqual:
      r = fa[i] >= fb[j];
      break;
    case kAnd:
      r = ba[i] && bb[j];
      break;
    case kOr:
      r = ba[i] || bb[j];
      break;
    default:
      r = (ba[i] != 0) != (bb[j] != 0);
      break;
    }
    y[o] = r;
  });
}

/// Where: y = cond ? a : b with broadcasting; elements of `elemBytes` (1, 4 or 8) bytes.
EMBER_KERNEL void ember_where(int32_t elemBytes, const uint8_t* cond, const void* a, const void* b,
                              void* y, const int64_t* d, const int64_t* cs, const int64_t* as,
                              const int64_t* bs, int64_t tid, int64_t nth) {
  const uint8_t* pa = static_cast<const uint8_t*>(a);
  const uint8_t* pb = static_cast<const uint8_t*>(b);
  uint8_t* py = static_cast<uint8_t*>(y);
  const size_t es = static_cast<size_t>(elemBytes);
  walkBox(d, cs, as, bs, tid, nth, [&](int64_t o, int64_t c, int64_t i, int64_t j) {
    memcpy(py + o * elemBytes, cond[c] ? pa + i * elemBytes : pb + j * elemBytes, es);
  });
}
