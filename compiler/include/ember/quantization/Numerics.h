#pragma once
/// \file
/// The integer arithmetic of docs/numerics.md, written once for every executor.
///
/// Two groups:
///  - run-time primitives (requantization, the rescaled-add multipliers, activation
///    bounds): inline here, because the interpreter's int8 kernels (library
///    ember_interp, below ember_quant in the dependency order) and the NPU backend must
///    share one definition without a link cycle;
///  - compile-time parameter choice (activation scale/zero point, weight and bias
///    quantization, LUT tables): Numerics.cpp, used by the quantizer.
/// Nothing else in Ember rounds an int8 value: a kernel that needs a requantization
/// calls `requantize`, a pass that needs parameters calls the functions below.

#include "ember/graph/Graph.h"
#include "ember/graph/attrs/ElementwiseAttrs.h"
#include "ember/graph/attrs/FusedActivation.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace ember {
namespace quant {

/// A real multiplier m ~= M / 2^S (docs/numerics.md section 3): 0 <= M < 2^31, S in 1..62.
struct Multiplier {
  int32_t M = 0;
  int S = 1;
  bool operator==(const Multiplier& o) const { return M == o.M && S == o.S; }
};

/// Chooses (M, S) for a real multiplier m >= 0 (section 3): S = 31 - e with
/// m = f * 2^e, f in [0.5, 1), M = round(f * 2^31) (2^31 is halved and S decremented).
/// A multiplier needing S > 62 (m < 2^-32: every int32 accumulator rounds to 0) becomes
/// M = 0, S = 62. ember::Error for a negative or non-finite m, or one too large for
/// S >= 1 (m >= 2^30).
inline Multiplier quantizeMultiplier(double m) {
  if (!(m >= 0) || !std::isfinite(m))
    throw Error("requantization multiplier " + std::to_string(m) +
                " is not a finite non-negative number");
  if (m == 0)
    return {0, 62};
  int e = 0;
  const double f = std::frexp(m, &e);
  int64_t M = static_cast<int64_t>(std::llround(f * 2147483648.0));
  int S = 31 - e;
  if (M == (int64_t(1) << 31)) {
    M /= 2;
    --S;
  }
  if (S > 62)
    return {0, 62};
  if (S < 1)
    throw Error("requantization multiplier " + std::to_string(m) +
                " is too large (needs a shift below 1; the maximum is 2^30)");
  return {static_cast<int32_t>(M), S};
}

/// Requantizes an int32 accumulator to int8 (section 3):
///   y = clamp(((int64) acc * M + 2^(S-1)) >> S + zp, lo, hi)
/// with an arithmetic shift (rounding half up).
inline int8_t requantize(int32_t acc, Multiplier m, int32_t zp, int32_t lo, int32_t hi) {
  const int64_t prod = static_cast<int64_t>(acc) * m.M;
  const int64_t shifted = (prod + (int64_t(1) << (m.S - 1))) >> m.S;
  const int64_t y = shifted + zp;
  return static_cast<int8_t>(y < lo ? lo : (y > hi ? hi : y));
}

/// The multiplier of a product (Conv, Gemm, MatMul: s_x * s_w[k] / s_y; Mul: s_a * s_b /
/// s_y), evaluated as (double(s_1) * double(s_2)) / double(s_y), in that order, so that
/// every executor derives the same (M, S).
inline Multiplier productMultiplier(float s1, float s2, float sY) {
  return quantizeMultiplier(static_cast<double>(s1) * static_cast<double>(s2) /
                            static_cast<double>(sY));
}

/// The multiplier of an average over `count` elements (section 4.5): double(s_x) /
/// (double(s_y) * count). Also Rescale's s_x / s_y with count = 1 (section 4.7).
inline Multiplier averageMultiplier(float sX, float sY, int64_t count) {
  return quantizeMultiplier(static_cast<double>(sX) /
                            (static_cast<double>(sY) * static_cast<double>(count)));
}

/// The multipliers of a rescaled Add (section 4.2): t = (a - zp_a) * Ma + (b - zp_b) * Mb,
/// y = clamp(((t + 2^(S-1)) >> S) + zp_y, lo, hi) = requantize(t, {1, S}, ...).
struct AddMultipliers {
  int32_t Ma = 0, Mb = 0;
  int S = 1;
};

/// Section 4.2: r_a = s_a / s_y, r_b = s_b / s_y (double), e the exponent of
/// max(r_a, r_b) = f * 2^e, S = clamp(20 - e, 1, 31), M = round(r * 2^S) (half away from
/// zero). ember::Error when a multiplier reaches 2^21 or a scale is not positive.
inline AddMultipliers addMultipliers(double sA, double sB, double sY) {
  if (!(sA > 0) || !(sB > 0) || !(sY > 0) || !std::isfinite(sA) || !std::isfinite(sB) ||
      !std::isfinite(sY))
    throw Error("rescaled add: scales " + std::to_string(sA) + ", " + std::to_string(sB) + ", " +
                std::to_string(sY) + " must be finite and positive");
  const double ra = sA / sY, rb = sB / sY;
  int e = 0;
  std::frexp(std::max(ra, rb), &e);
  AddMultipliers r;
  r.S = std::min(31, std::max(1, 20 - e));
  const double ma = std::round(std::ldexp(ra, r.S)), mb = std::round(std::ldexp(rb, r.S));
  if (ma >= double(1 << 21) || mb >= double(1 << 21))
    throw Error("rescaled add: input/output scale ratio " + std::to_string(std::max(ra, rb)) +
                " is too large (multiplier >= 2^21)");
  r.Ma = static_cast<int32_t>(ma);
  r.Mb = static_cast<int32_t>(mb);
  return r;
}

/// The multipliers of an int8 PRelu (section 4.12): with d = x - zp_x,
/// t = max(d, 0) * Mp + min(d, 0) * Mn[c], y = requantize(t, {1, S}, zp_y, lo, hi).
struct PReluMultipliers {
  int32_t Mp = 0;          ///< Multiplier of the positive part (s_x / s_y).
  std::vector<int32_t> Mn; ///< Multiplier of the negative part per channel (a_c s_x / s_y).
  int S = 1;               ///< The shared shift.
};

/// Section 4.12: r_p = s_x / s_y, r_n[c] = (a_c * s_x) / s_y (double, in that order), e
/// the exponent of max(r_p, max |r_n[c]|) = f * 2^e, S = clamp(20 - e, 1, 31), M =
/// round(r * 2^S) (half away from zero; Mn[c] has the sign of a_c). ember::Error when a
/// scale is not finite and positive, a slope is not finite, or |M| reaches 2^21.
inline PReluMultipliers preluMultipliers(double sX, double sY, const std::vector<float>& slopes) {
  if (!(sX > 0) || !(sY > 0) || !std::isfinite(sX) || !std::isfinite(sY))
    throw Error("PRelu: scales " + std::to_string(sX) + ", " + std::to_string(sY) +
                " must be finite and positive");
  const double rp = sX / sY;
  double big = rp;
  for (size_t c = 0; c < slopes.size(); ++c) {
    if (!std::isfinite(slopes[c]))
      throw Error("PRelu: slope " + std::to_string(c) + " is not finite");
    big = std::max(big, std::fabs(double(slopes[c]) * sX / sY));
  }
  int e = 0;
  std::frexp(big, &e);
  PReluMultipliers r;
  r.S = std::min(31, std::max(1, 20 - e));
  auto toM = [&](double v) {
    const double m = std::round(std::ldexp(v, r.S));
    if (std::fabs(m) >= double(1 << 21))
      throw Error("PRelu: input/output scale ratio " + std::to_string(big) +
                  " is too large (multiplier >= 2^21)");
    return static_cast<int32_t>(m);
  };
  r.Mp = toM(rp);
  for (float a : slopes)
    r.Mn.push_back(toM(double(a) * sX / sY));
  return r;
}

/// The slope of each of the `x` dims' channels (axis 1) when the PRelu slope of shape
/// `slopeDims` (broadcast to `x` from the right) varies along axis 1 only; empty
/// otherwise (x of rank below 2, or a slope that varies along another axis). `at(i)`
/// reads slope element i.
template <class At>
std::vector<float> preluChannelSlopes(const Shape& x, const Shape& slopeDims, At at) {
  if (x.size() < 2 || slopeDims.size() > x.size())
    return {};
  const size_t k = x.size() - slopeDims.size();
  int64_t along = 1; // the slope's extent on axis 1
  for (size_t j = 0; j < slopeDims.size(); ++j) {
    if (k + j == 1)
      along = slopeDims[j];
    else if (slopeDims[j] != 1)
      return {};
  }
  if (along != 1 && along != x[1])
    return {};
  std::vector<float> s(static_cast<size_t>(x[1]));
  for (int64_t c = 0; c < x[1]; ++c)
    s[size_t(c)] = at(along == 1 ? 0 : c);
  return s;
}

/// preluChannelSlopes of a float32 slope tensor (empty for another element kind).
inline std::vector<float> preluChannelSlopes(const Shape& x, const Tensor& slope) {
  if (slope.kind() != ElemKind::Float32)
    return {};
  const float* p = slope.data<float>();
  return preluChannelSlopes(x, slope.dims(), [p](int64_t i) { return p[i]; });
}

/// An int8 clamp range [lo, hi].
struct Bounds {
  int32_t lo = -128, hi = 127;
};

/// q(v) = saturate_int8(round_half_to_even(v / s) + zp) of section 4.9 (double
/// arithmetic; infinities saturate).
inline int32_t quantizeBound(double v, const QuantParams& y) {
  const double s = static_cast<double>(y.scales.at(0));
  const double r = std::nearbyint(v / s) + static_cast<double>(y.zeroPoints.at(0));
  return static_cast<int32_t>(std::min(127.0, std::max(-128.0, r)));
}

/// The requantization clamp of node `n` producing a value of parameters `y` (section
/// 4.9). For Relu and Clip nodes it is their own activation (Clip: attributes min/max,
/// absent = unbounded); for Conv, Gemm, MatMul and Add the fused activation attribute
/// (ember/graph/attrs/FusedActivation.h); [-128, 127] otherwise. `y` must be per tensor.
inline Bounds activationBounds(const Node& n, const QuantParams& y) {
  if (y.scales.size() != 1 || y.zeroPoints.size() != 1)
    throw Error(std::string(n.kindName()) + " '" + n.name() + "'",
                "the result must have per-tensor quantization parameters");
  FusedActivation a;
  if (n.kind() == NodeKind::Relu) {
    a.kind = FusedActivation::Kind::Relu;
  } else if (n.kind() == NodeKind::Clip) {
    a.kind = FusedActivation::Kind::Clip;
    const ClipAttrs c = clipOf(n.attrs());
    a.lo = c.lo(a.lo);
    a.hi = c.hi(a.hi);
  } else if (canCarryActivation(n.kind())) {
    a = FusedActivation::of(n);
  }
  Bounds b;
  if (a.kind == FusedActivation::Kind::Relu) {
    b.lo = std::max(b.lo, y.zeroPoints[0]);
  } else if (a.kind == FusedActivation::Kind::Clip) {
    b.lo = std::max(b.lo, quantizeBound(a.lo, y));
    b.hi = std::min(b.hi, quantizeBound(a.hi, y));
  }
  return b;
}

// ---- compile-time parameter choice (Numerics.cpp) -----------------------------------

/// Per-tensor int8 parameters for a calibrated range (section 4.8): the range is widened
/// to contain 0, s = (hi - lo) / 255 (computed in double, stored as float32; a zero
/// range gives s = 1), zp = clamp(round_half_even(-128 - lo / s), -128, 127) with the
/// stored s. ember::Error for a non-finite or inverted range.
QuantParams chooseActivationParams(float min, float max);

/// Symmetric per-channel int8 weights (section 4.8) along `axis`: s_w[k] = max|W[k]| / 127
/// (a zero channel gives 1), w = clamp(round_half_even(W / s_w), -127, 127). The result
/// is an int8 tensor whose type carries the per-channel parameters (zero points 0).
Tensor quantizeWeights(const Tensor& w, int axis);

/// Int32 bias (section 4.8): b[k] = saturate_int32(round_half_even(B[k] / (s_x * s_w[k])))
/// in double. `bias` is float32 of shape [K]; `weightScales` has K values (or one, used
/// for every k). The result type carries scales s_x * s_w[k] (axis 0) and zero points 0.
Tensor quantizeBias(const Tensor& bias, float inputScale, const std::vector<float>& weightScales);

/// QuantizeLinear at compile time: an int8 tensor of `q` (per tensor) holding
/// saturate_int8(round_half_even(x / s) + zp) of the float tensor `x` (docs/numerics.md
/// section 2), typed with `q`.
Tensor quantizeTensor(const Tensor& x, const QuantParams& q);

/// The 256-entry table of a LUT activation (section 4.6): entry i is
/// saturate_int8(round_half_even(f(s_x * (i - 128 - zp_x)) / s_y) + zp_y), f in double
/// (a NaN result maps to zp_y). x and y must be per tensor.
std::vector<int8_t> buildLut(const std::function<double(double)>& f, const QuantParams& x,
                             const QuantParams& y);

/// The real function of a unary node kind that a Lut can express (Sigmoid, Tanh,
/// HardSigmoid, HardSwish, Silu, Gelu, Erf, Exp, Softplus, Softsign, LeakyRelu, Elu, Selu,
/// Celu, Neg, Abs, ...), reading the node's attributes; an empty function for other kinds.
std::function<double(double)> lutFunctionOf(const Node& n);
/// Whether int8 quantization turns nodes of kind `k` into a Lut (lutFunctionOf has a
/// function for it).
bool hasLutForm(NodeKind k);

} // namespace quant
} // namespace ember
