#pragma once
/// \file
/// The compile-time parameters of int8 Softmax and LayerNormalization (docs/numerics.md
/// sections 4.10 and 4.11): derived from the operand types (and LayerNormalization's
/// float scale and bias) in double, by these functions only, so every executor that
/// runs the lines of ember/quantization/IntegerLines.h gets the same integers. Inline,
/// like the rest of the run-time numerics, because the interpreter sits below
/// ember_quant in the dependency order.
#include "ember/graph/InferUtil.h"
#include "ember/quantization/Numerics.h"

#include <array>

namespace ember {
namespace quant {

/// Softmax's table: T[d] = round_half_even(2^16 * exp(-s_x * d)) for d = 0..255 (T[0] =
/// 2^16), the exponential of a code difference from the line's maximum.
inline std::array<int32_t, 256> softmaxExpTable(float sX) {
  std::array<int32_t, 256> t{};
  for (int d = 0; d < 256; ++d)
    t[size_t(d)] =
        static_cast<int32_t>(std::nearbyint(65536.0 * std::exp(-double(sX) * double(d))));
  return t;
}

/// Softmax's output multiplier 1 / (s_y * 2^16) (the probability is in Q16).
inline Multiplier softmaxMultiplier(float sY) {
  return quantizeMultiplier(1.0 / (double(sY) * 65536.0));
}

/// The most a Softmax result's range is narrowed: [0, 2^-16].
constexpr int kMaxSoftmaxRangeHalvings = 16;

/// The parameters the quantizer gives a Softmax result whose calibrated largest value is
/// `maxProbability`: the range [0, 2^-k] (s = 2^-k / 255, zp = -128) with the largest k
/// (at most kMaxSoftmaxRangeHalvings) for which it still holds that value. A certain class
/// (a largest probability above 1/2) keeps [0, 1], so it is code 127; the near-uniform
/// attention of a long sequence (probabilities about 1/T) gets steps up to 2^k times finer;
/// the range is the smallest such power of two at or above the calibrated largest value, so
/// a larger probability at run time saturates (docs/numerics.md 4.10). Without a calibrated value
/// (1 by default, or not a positive number): [0, 1].
inline QuantParams softmaxResultParams(double maxProbability = 1.0) {
  // 1e-6: the float rounding of the calibrated scale maxProbability may come from.
  const double hold = maxProbability * (1 - 1e-6);
  double range = 1.0;
  for (int k = 0; hold > 0 && k < kMaxSoftmaxRangeHalvings && range / 2 >= hold; ++k)
    range /= 2;
  QuantParams q;
  q.scales = {static_cast<float>(range / 255.0)};
  q.zeroPoints = {-128};
  return q;
}

/// The largest row LayerNormalization's integer form accepts (IntegerLines.h bounds).
constexpr int64_t kMaxLayerNormRow = 16384;

/// LayerNormalization's per-element tables over a row of n elements.
struct LayerNormTables {
  int64_t E = 0;                ///< round(n^2 * epsilon / s_x^2), at most 2^60
  std::vector<int32_t> M, S, B; ///< gamma_i / (s_y * 2^16) as (M, S), M signed; beta_i / s_y
};

/// Section 4.11's tables from s_x, s_y, epsilon and the float scale (gamma) and bias
/// (beta; null = 0), each of n values or one broadcast. ember::Error when n is outside
/// 1..16384, a count is neither n nor 1, or a multiplier is out of range.
inline LayerNormTables layerNormTables(float sX, float sY, int64_t n, double eps,
                                       const float* gamma, size_t gammaCount, const float* beta,
                                       size_t betaCount) {
  if (n < 1 || n > kMaxLayerNormRow)
    throw Error("an int8 LayerNormalization normalises 1.." + std::to_string(kMaxLayerNormRow) +
                " elements, not " + std::to_string(n));
  auto checkCount = [n](const char* what, size_t count) {
    if (count != size_t(n) && count != 1)
      throw Error(std::string("the ") + what + " has " + std::to_string(count) +
                  " values; an int8 LayerNormalization of " + std::to_string(n) +
                  " elements takes " + std::to_string(n) + " or one");
  };
  checkCount("scale", gammaCount);
  if (beta)
    checkCount("bias", betaCount);
  LayerNormTables t;
  const double e = std::nearbyint(double(n) * double(n) * eps / (double(sX) * double(sX)));
  t.E = static_cast<int64_t>(std::min(e, std::ldexp(1.0, 60)));
  for (int64_t i = 0; i < n; ++i) {
    const double g = double(gamma[gammaCount == 1 ? 0 : size_t(i)]);
    const Multiplier m = quantizeMultiplier(std::fabs(g) / (double(sY) * 65536.0));
    t.M.push_back(g < 0 ? -m.M : m.M);
    t.S.push_back(m.S);
    const double b = beta ? std::nearbyint(double(beta[betaCount == 1 ? 0 : size_t(i)]) / sY) : 0.0;
    t.B.push_back(static_cast<int32_t>(std::max(-2147483648.0, std::min(2147483647.0, b))));
  }
  return t;
}

} // namespace quant
} // namespace ember
