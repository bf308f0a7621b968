// Host kernels of the MAC array (Kernels.h). The VNNI path computes each lane's dot
// product with vpdpbusd, which multiplies unsigned by signed bytes: the activations enter
// as a + 128 (a XOR 0x80) and the lane starts from -128 * sum_c W[k][c], so every lane
// gets the exact sum_c a[c] * W[k][c] modulo 2^32, as the portable loop does.
#include "Kernels.h"
#include "Machine.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EMBER_SIM_X86 1
#include "PlatformTypes.h"
#include <immintrin.h>
#define EMBER_SIM_VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))
#else
#define EMBER_SIM_X86 0
#endif

namespace ember::sim::detail {

namespace {

using u64 = std::uint64_t;

#if EMBER_SIM_X86

/// Activation bytes 4j..4j+3 as unsigned (a + 128), broadcast to every lane.
EMBER_SIM_VNNI inline __m512i quad(const std::uint8_t* a, unsigned j) {
  std::uint32_t v;
  std::memcpy(&v, a + 4 * j, 4);
  return _mm512_set1_epi32(static_cast<int>(v ^ 0x80808080u));
}

/// An n x n array with n = 4 * J = 16 * B, the whole block held in registers.
template <unsigned J, unsigned B>
EMBER_SIM_VNNI void vnniFixed(const std::int32_t* wq, const std::int32_t* corr,
                              const std::uint8_t* act, std::size_t as0, std::size_t as1,
                              std::uint8_t* acc, std::size_t cs0, std::size_t cs1, u64 n0, u64 n1) {
  constexpr unsigned n = 4 * J;
  __m512i w[J][B], c[B];
  for (unsigned b = 0; b < B; ++b) {
    c[b] = _mm512_loadu_si512(corr + 16 * b);
    for (unsigned j = 0; j < J; ++j)
      w[j][b] = _mm512_loadu_si512(wq + j * n + 16 * b);
  }
  for (u64 i1 = 0; i1 < n1; ++i1)
    for (u64 i0 = 0; i0 < n0; ++i0) {
      const std::uint8_t* a = act + i0 * as0 + i1 * as1;
      std::uint8_t* r = acc + i0 * cs0 + i1 * cs1;
      __m512i s[B];
      for (unsigned b = 0; b < B; ++b)
        s[b] = _mm512_add_epi32(_mm512_loadu_si512(r + 64 * b), c[b]);
      for (unsigned j = 0; j < J; ++j) {
        const __m512i x = quad(a, j);
        for (unsigned b = 0; b < B; ++b)
          s[b] = _mm512_dpbusd_epi32(s[b], x, w[j][b]);
      }
      for (unsigned b = 0; b < B; ++b)
        _mm512_storeu_si512(r + 64 * b, s[b]);
    }
}

/// Any n that is a multiple of 16: the block is read from memory (L1) per row.
EMBER_SIM_VNNI void vnniAny(unsigned n, const std::int32_t* wq, const std::int32_t* corr,
                            const std::uint8_t* act, std::size_t as0, std::size_t as1,
                            std::uint8_t* acc, std::size_t cs0, std::size_t cs1, u64 n0, u64 n1) {
  for (u64 i1 = 0; i1 < n1; ++i1)
    for (u64 i0 = 0; i0 < n0; ++i0) {
      const std::uint8_t* a = act + i0 * as0 + i1 * as1;
      std::uint8_t* r = acc + i0 * cs0 + i1 * cs1;
      for (unsigned b = 0; b < n / 16; ++b) {
        __m512i s =
            _mm512_add_epi32(_mm512_loadu_si512(r + 64 * b), _mm512_loadu_si512(corr + 16 * b));
        for (unsigned j = 0; j < n / 4; ++j)
          s = _mm512_dpbusd_epi32(s, quad(a, j), _mm512_loadu_si512(wq + j * n + 16 * b));
        _mm512_storeu_si512(r + 64 * b, s);
      }
    }
}

/// Requantize 8 lanes a step: y = ((a * M + 2^(S-1)) >> S) + zp, clamped to [lo, hi] (min
/// first, as requantize() does), then saturated to int8 (vpmovsqb). The zero-masking forms
/// (all lanes kept) spare GCC's unmasked ones their undefined pass-through operand.
EMBER_SIM_VNNI void requantAvx512(unsigned n, const std::int64_t* m, const std::int64_t* r,
                                  const std::int64_t* s, std::int32_t zp, std::int32_t lo,
                                  std::int32_t hi, const std::uint8_t* acc, std::uint8_t* act) {
  const __mmask8 all = 0xFF;
  const __m512i z = _mm512_set1_epi64(zp), l = _mm512_set1_epi64(lo), h = _mm512_set1_epi64(hi);
  for (unsigned j = 0; j < n; j += 8) {
    const __m512i a = _mm512_maskz_cvtepi32_epi64(
        all, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + 4 * std::size_t(j))));
    __m512i y = _mm512_mullo_epi64(a, _mm512_loadu_si512(m + j));
    y = _mm512_maskz_srav_epi64(all, _mm512_add_epi64(y, _mm512_loadu_si512(r + j)),
                                _mm512_loadu_si512(s + j));
    y = _mm512_maskz_max_epi64(all, l, _mm512_maskz_min_epi64(all, _mm512_add_epi64(y, z), h));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(act + j), _mm512_maskz_cvtsepi64_epi8(all, y));
  }
}

#endif

} // namespace

HostKernels bestHostKernels(unsigned n) {
#if EMBER_SIM_X86
  __builtin_cpu_init();
  if (n % 16 == 0 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512vnni"))
    return HostKernels::Vnni;
#else
  (void)n;
#endif
  return HostKernels::Portable;
}

GemmKernel::GemmKernel(unsigned n, HostKernels kernels)
    : n_(n), kernels_(kernels == HostKernels::Vnni ? bestHostKernels(n) : HostKernels::Portable),
      w_(std::size_t(n) * n, 0), corr_(n, 0), scratch_(n, 0) {}

void GemmKernel::load(const std::int8_t* w) {
  const unsigned n = n_;
  if (kernels_ == HostKernels::Portable) {
    for (unsigned k = 0; k < n; ++k)
      for (unsigned c = 0; c < n; ++c)
        w_[std::size_t(c) * n + k] = w[std::size_t(k) * n + c];
    return;
  }
  for (unsigned k = 0; k < n; ++k) {
    std::int32_t sum = 0;
    for (unsigned c = 0; c < n; ++c)
      sum += w[std::size_t(k) * n + c];
    corr_[k] = -128 * sum;
    for (unsigned j = 0; j < n / 4; ++j)
      std::memcpy(&w_[std::size_t(j) * n + k], w + std::size_t(k) * n + 4 * j, 4);
  }
}

void GemmKernel::rows(const std::uint8_t* act, std::size_t actStep0, std::size_t actStep1,
                      std::uint8_t* acc, std::size_t accStep0, std::size_t accStep1, u64 n0,
                      u64 n1) const {
#if EMBER_SIM_X86
  if (kernels_ == HostKernels::Vnni) {
    const std::int32_t *wq = w_.data(), *c = corr_.data();
    if (n_ == 16)
      return vnniFixed<4, 1>(wq, c, act, actStep0, actStep1, acc, accStep0, accStep1, n0, n1);
    if (n_ == 32)
      return vnniFixed<8, 2>(wq, c, act, actStep0, actStep1, acc, accStep0, accStep1, n0, n1);
    return vnniAny(n_, wq, c, act, actStep0, actStep1, acc, accStep0, accStep1, n0, n1);
  }
#endif
  rowsPortable(act, actStep0, actStep1, acc, accStep0, accStep1, n0, n1);
}

void GemmKernel::rowsPortable(const std::uint8_t* act, std::size_t actStep0, std::size_t actStep1,
                              std::uint8_t* acc, std::size_t accStep0, std::size_t accStep1, u64 n0,
                              u64 n1) const {
  const unsigned n = n_;
  std::uint32_t* s = scratch_.data();
  const std::int32_t* wt = w_.data();
  for (u64 i1 = 0; i1 < n1; ++i1)
    for (u64 i0 = 0; i0 < n0; ++i0) {
      const auto* a = reinterpret_cast<const std::int8_t*>(act + i0 * actStep0 + i1 * actStep1);
      std::uint8_t* r = acc + i0 * accStep0 + i1 * accStep1;
      std::memcpy(s, r, std::size_t(n) * 4);
      for (unsigned c = 0; c < n; ++c) {
        const std::int32_t x = a[c];
        const std::int32_t* wr = wt + std::size_t(c) * n;
        for (unsigned k = 0; k < n; ++k)
          s[k] += static_cast<std::uint32_t>(x * wr[k]);
      }
      std::memcpy(r, s, std::size_t(n) * 4);
    }
}

RequantKernel::RequantKernel(unsigned lanes, HostKernels kernels, const std::int32_t* M,
                             const std::int32_t* S, std::int32_t zp, std::int32_t lo,
                             std::int32_t hi)
    : n_(lanes),
      kernels_(kernels == HostKernels::Vnni ? bestHostKernels(lanes) : HostKernels::Portable),
      zp_(zp), lo_(lo), hi_(hi), m32_(M, M + lanes), s32_(S, S + lanes) {
  if (kernels_ == HostKernels::Vnni)
    for (unsigned j = 0; j < lanes; ++j) {
      m_.push_back(M[j]);
      r_.push_back(std::int64_t(1) << (S[j] - 1));
      s_.push_back(S[j]);
    }
}

void RequantKernel::row(const std::uint8_t* acc, std::uint8_t* act) const {
#if EMBER_SIM_X86
  if (kernels_ == HostKernels::Vnni)
    return requantAvx512(n_, m_.data(), r_.data(), s_.data(), zp_, lo_, hi_, acc, act);
#endif
  for (unsigned j = 0; j < n_; ++j) {
    std::int32_t a;
    std::memcpy(&a, acc + 4 * std::size_t(j), 4);
    const std::int32_t y = requantize(a, m32_[j], s32_[j], zp_, lo_, hi_);
    act[j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp(y, -128, 127)));
  }
}

} // namespace ember::sim::detail
