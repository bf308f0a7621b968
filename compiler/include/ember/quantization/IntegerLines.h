#pragma once
/// \file
/// The per-line integer arithmetic of int8 Softmax and LayerNormalization
/// (docs/numerics.md sections 4.10 and 4.11), written once. The interpreter's kernels
/// and the CPU backend's libjit (compiled to LLVM bitcode without the C++ standard
/// library) both include this header, so they compute the same integers by construction
/// rather than by two implementations kept in step. Only <stdint.h>: no floating point,
/// no library calls. The compile-time parameters (the exp table, the multipliers) come
/// from ember/quantization/NormNumerics.h.
#include <stdint.h>

namespace ember {
namespace qline {

/// floor(sqrt(v)), exact, digit by digit (no floating point, so every executor agrees).
inline uint64_t isqrt(uint64_t v) {
  uint64_t root = 0, bit = uint64_t(1) << 62;
  while (bit > v)
    bit >>= 2;
  while (bit != 0) {
    if (v >= root + bit) {
      v -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  return root;
}

/// Section 3's requantization of an int64 value: clamp(((t * M + 2^(S-1)) >> S) + zp,
/// lo, hi); `M` may be negative (LayerNormalization's negative scales). The callers keep
/// |t * M| below 2^62.
inline int8_t requantize64(int64_t t, int32_t M, int32_t S, int64_t zp, int32_t lo, int32_t hi) {
  const int64_t y = ((t * M + (int64_t(1) << (S - 1))) >> S) + zp;
  return static_cast<int8_t>(y < lo ? lo : (y > hi ? hi : y));
}

/// Softmax of one line of `len` int8 codes at `stride` (section 4.10): with m the
/// line's largest code and T the 2^16-scaled exp table of the input scale,
///   sum = sum over i of T[m - x_i]
///   q_i = floor(T[m - x_i] * 2^16 / sum)          (the probability in Q16, <= 2^16)
///   y_i = requantize(q_i; M, S, zp, lo, hi)       (M / 2^S = 1 / (s_y * 2^16))
inline void softmaxLine(const int8_t* x, int8_t* y, int64_t len, int64_t stride, const int32_t* T,
                        int32_t M, int32_t S, int32_t zp, int32_t lo, int32_t hi) {
  int32_t m = -128;
  for (int64_t i = 0; i < len; ++i)
    m = x[i * stride] > m ? x[i * stride] : m;
  int64_t sum = 0;
  for (int64_t i = 0; i < len; ++i)
    sum += T[m - x[i * stride]];
  for (int64_t i = 0; i < len; ++i) {
    const int64_t q = (int64_t(T[m - x[i * stride]]) << 16) / sum;
    y[i * stride] = requantize64(q, M, S, zp, lo, hi);
  }
}

/// LayerNormalization of one line of `n` int8 codes `stride` apart (1: a contiguous row;
/// a pixel's channels in NCHW: H * W) (section 4.11): with
/// u_i = x_i - zp_x, U = sum u, c_i = n * u_i - U (exactly n times the centred value),
/// V = sum c_i^2 and D = floor(V / n) + E (E: epsilon in these units), the normalised
/// value is c_i / sqrt(D). It is computed in Q16 with an exact integer square root of D
/// scaled by 4^k into [2^59, 2^62):
///   r    = isqrt(D * 4^k)                           (= sqrt(D) * 2^k, floored)
///   z_i  = round_half_away(c_i * 2^(k+16) / r)
///   y_i  = clamp(((z_i * M_i + 2^(S_i-1)) >> S_i) + B_i + zp_y, -128, 127)
/// n <= 16384 keeps every product below 2^63.
inline void layerNormLine(const int8_t* x, int8_t* y, int64_t n, int64_t stride, int32_t zpX,
                          int64_t E, const int32_t* M, const int32_t* S, const int32_t* B,
                          int32_t zpY) {
  int64_t U = 0;
  for (int64_t i = 0; i < n; ++i)
    U += x[i * stride] - zpX;
  uint64_t V = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = n * (x[i * stride] - zpX) - U;
    V += static_cast<uint64_t>(c * c);
  }
  const uint64_t D = V / static_cast<uint64_t>(n) + static_cast<uint64_t>(E);
  int bits = 0;
  while (bits < 64 && (D >> bits) != 0)
    ++bits;
  const int k = bits < 62 ? (62 - bits) / 2 : 0;
  const int64_t r = static_cast<int64_t>(isqrt(D << (2 * k)));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = n * (x[i * stride] - zpX) - U;
    int64_t z = 0;
    if (r > 0) {
      const int64_t num = (c < 0 ? -c : c) * (int64_t(1) << (k + 16));
      z = (num + r / 2) / r;
      z = c < 0 ? -z : z;
    }
    y[i * stride] = requantize64(z, M[i], S[i], int64_t(B[i]) + zpY, -128, 127);
  }
}

/// The line of `n` contiguous codes (stride 1).
inline void layerNormLine(const int8_t* x, int8_t* y, int64_t n, int32_t zpX, int64_t E,
                          const int32_t* M, const int32_t* S, const int32_t* B, int32_t zpY) {
  layerNormLine(x, y, n, 1, zpX, E, M, S, B, zpY);
}

} // namespace qline
} // namespace ember
