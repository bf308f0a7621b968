// Blocked SGEMM (see GemmCore.h): BLIS-style loops around packed panels and a 6 x 16
// register-blocked micro-kernel. The micro-kernel is written once with GCC/Clang vector
// types; on x86-64 a copy compiled for AVX2+FMA is chosen at run time when the CPU has
// them, the baseline (SSE2) copy otherwise.
#include "GemmCore.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ember {

namespace {

constexpr int64_t MR = 6;    // rows of the micro-tile
constexpr int64_t NR = 16;   // columns of the micro-tile (two 8-float vectors)
constexpr int64_t KC = 256;  // depth of a packed panel
constexpr int64_t MC = 144;  // rows of A packed at once (multiple of MR)
constexpr int64_t NC = 2048; // columns of B packed at once (multiple of NR)

typedef float v8f __attribute__((vector_size(32)));

/// out[MR x NR] = sum over p < kc of a[p * MR + i] * b[p * NR + j] (packed panels).
__attribute__((always_inline)) inline void microKernelBody(int64_t kc, const float* a,
                                                           const float* b, float* out) {
  v8f c[MR][2];
#pragma GCC unroll 6
  for (int64_t i = 0; i < MR; ++i)
    c[i][0] = c[i][1] = v8f{};
  for (int64_t p = 0; p < kc; ++p) {
    v8f b0, b1;
    std::memcpy(&b0, b + p * NR, sizeof b0);
    std::memcpy(&b1, b + p * NR + 8, sizeof b1);
#pragma GCC unroll 6
    for (int64_t i = 0; i < MR; ++i) {
      const float s = a[p * MR + i];
      const v8f ai = {s, s, s, s, s, s, s, s};
      c[i][0] += ai * b0;
      c[i][1] += ai * b1;
    }
  }
#pragma GCC unroll 6
  for (int64_t i = 0; i < MR; ++i) {
    std::memcpy(out + i * NR, &c[i][0], sizeof c[i][0]);
    std::memcpy(out + i * NR + 8, &c[i][1], sizeof c[i][1]);
  }
}

void microKernelGeneric(int64_t kc, const float* a, const float* b, float* out) {
  microKernelBody(kc, a, b, out);
}

using MicroKernel = void (*)(int64_t, const float*, const float*, float*);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#if defined(__clang__)
#define EMBER_AVX2_FMA __attribute__((target("avx2,fma")))
#else
#define EMBER_AVX2_FMA __attribute__((target("avx2,fma"), optimize("fp-contract=fast")))
#endif
EMBER_AVX2_FMA void microKernelAvx2(int64_t kc, const float* a, const float* b, float* out) {
  microKernelBody(kc, a, b, out);
}

MicroKernel selectMicroKernel() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return microKernelAvx2;
  return microKernelGeneric;
}
#else
MicroKernel selectMicroKernel() {
  return microKernelGeneric;
}
#endif

/// Packs rows [0, mc) x depth [0, kc) of A into panels of MR rows (zero-padded).
void packA(int64_t mc, int64_t kc, MatView a, float* dst) {
  for (int64_t ir = 0; ir < mc; ir += MR) {
    const int64_t mr = std::min(MR, mc - ir);
    for (int64_t i = 0; i < mr; ++i) {
      const float* src = a.data + (ir + i) * a.rowStride;
      float* d = dst + i;
      if (a.colStride == 1)
        for (int64_t p = 0; p < kc; ++p)
          d[p * MR] = src[p];
      else
        for (int64_t p = 0; p < kc; ++p)
          d[p * MR] = src[p * a.colStride];
    }
    for (int64_t i = mr; i < MR; ++i)
      for (int64_t p = 0; p < kc; ++p)
        dst[p * MR + i] = 0.f;
    dst += MR * kc;
  }
}

/// Packs depth [0, kc) x columns [0, nc) of B into panels of NR columns (zero-padded).
void packB(int64_t kc, int64_t nc, MatView b, float* dst) {
  for (int64_t jr = 0; jr < nc; jr += NR) {
    const int64_t nr = std::min(NR, nc - jr);
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = b.data + p * b.rowStride + jr * b.colStride;
      float* d = dst + p * NR;
      if (b.colStride == 1)
        std::memcpy(d, src, sizeof(float) * static_cast<size_t>(nr));
      else
        for (int64_t j = 0; j < nr; ++j)
          d[j] = src[j * b.colStride];
      for (int64_t j = nr; j < NR; ++j)
        d[j] = 0.f;
    }
    dst += NR * kc;
  }
}

/// Writes one micro-tile into C: C = alpha * acc + (first ? beta * C : C).
void storeTile(const float* acc, int64_t mr, int64_t nr, float alpha, float beta, bool first,
               float* c, int64_t ldc) {
  for (int64_t i = 0; i < mr; ++i) {
    float* row = c + i * ldc;
    const float* t = acc + i * NR;
    if (!first)
      for (int64_t j = 0; j < nr; ++j)
        row[j] += alpha * t[j];
    else if (beta == 0.f)
      for (int64_t j = 0; j < nr; ++j)
        row[j] = alpha * t[j];
    else
      for (int64_t j = 0; j < nr; ++j)
        row[j] = alpha * t[j] + beta * row[j];
  }
}

/// sum of x[i] * y[i] over n contiguous elements, with eight-lane partial sums.
float dot(const float* x, const float* y, int64_t n) {
  v8f acc0{}, acc1{};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v8f x0, x1, y0, y1;
    std::memcpy(&x0, x + i, sizeof x0);
    std::memcpy(&x1, x + i + 8, sizeof x1);
    std::memcpy(&y0, y + i, sizeof y0);
    std::memcpy(&y1, y + i + 8, sizeof y1);
    acc0 += x0 * y0;
    acc1 += x1 * y1;
  }
  acc0 += acc1;
  float s = 0.f;
  for (int j = 0; j < 8; ++j)
    s += acc0[j];
  for (; i < n; ++i)
    s += x[i] * y[i];
  return s;
}

/// Matrix-vector products (m == 1 or n == 1), where packing would cost more than the
/// arithmetic. Returns false when the layout does not suit (then the blocked path runs).
bool gemv(int64_t m, int64_t n, int64_t k, float alpha, MatView a, MatView b, float beta, float* c,
          int64_t ldc) {
  auto store = [&](float* dst, float v) { *dst = alpha * v + (beta == 0.f ? 0.f : beta * *dst); };
  std::vector<float> tmp;
  auto contiguous = [&](const float* p, int64_t stride) -> const float* {
    if (stride == 1)
      return p;
    tmp.resize(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i)
      tmp[size_t(i)] = p[i * stride];
    return tmp.data();
  };
  if (n == 1 && a.colStride == 1) {
    const float* x = contiguous(b.data, b.rowStride);
    for (int64_t i = 0; i < m; ++i)
      store(c + i * ldc, dot(a.data + i * a.rowStride, x, k));
    return true;
  }
  if (m == 1 && b.rowStride == 1) {
    const float* x = contiguous(a.data, a.colStride);
    for (int64_t j = 0; j < n; ++j)
      store(c + j, dot(b.data + j * b.colStride, x, k));
    return true;
  }
  if (m == 1 && b.colStride == 1) {
    std::vector<float> acc(static_cast<size_t>(n), 0.f);
    for (int64_t p = 0; p < k; ++p) {
      const float s = a.data[p * a.colStride];
      const float* row = b.data + p * b.rowStride;
      for (int64_t j = 0; j < n; ++j)
        acc[size_t(j)] += s * row[j];
    }
    for (int64_t j = 0; j < n; ++j)
      store(c + j, acc[size_t(j)]);
    return true;
  }
  return false;
}

/// 64-byte aligned scratch buffers, one pair per thread, grown on demand.
struct PackBuffers {
  std::vector<float> a, b;
  static float* aligned(std::vector<float>& v, size_t n) {
    if (v.size() < n + 16)
      v.resize(n + 16);
    auto addr = reinterpret_cast<uintptr_t>(v.data());
    return v.data() + ((64 - addr % 64) % 64) / sizeof(float);
  }
};

} // namespace

void sgemm(int64_t m, int64_t n, int64_t k, float alpha, MatView a, MatView b, float beta, float* c,
           int64_t ldc) {
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.f ? 0.f : beta * c[i * ldc + j];
    return;
  }
  if ((m == 1 || n == 1) && gemv(m, n, k, alpha, a, b, beta, c, ldc))
    return;
  static const MicroKernel kernel = selectMicroKernel();
  thread_local PackBuffers buffers;
  float* bp = PackBuffers::aligned(buffers.b, static_cast<size_t>(KC * NC));
  float* ap = PackBuffers::aligned(buffers.a, static_cast<size_t>(KC * MC));
  alignas(64) float acc[MR * NR];

  for (int64_t jc = 0; jc < n; jc += NC) {
    const int64_t nc = std::min(NC, n - jc);
    for (int64_t pc = 0; pc < k; pc += KC) {
      const int64_t kc = std::min(KC, k - pc);
      const bool first = pc == 0;
      packB(kc, nc, {b.data + pc * b.rowStride + jc * b.colStride, b.rowStride, b.colStride}, bp);
      for (int64_t ic = 0; ic < m; ic += MC) {
        const int64_t mc = std::min(MC, m - ic);
        packA(mc, kc, {a.data + ic * a.rowStride + pc * a.colStride, a.rowStride, a.colStride}, ap);
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const int64_t nr = std::min(NR, nc - jr);
          for (int64_t ir = 0; ir < mc; ir += MR) {
            const int64_t mr = std::min(MR, mc - ir);
            kernel(kc, ap + ir * kc, bp + jr * kc, acc);
            storeTile(acc, mr, nr, alpha, beta, first, c + (ic + ir) * ldc + jc + jr, ldc);
          }
        }
      }
    }
  }
}

void sgemmRowMajor(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                   int64_t ldc) {
  MatView av = transA ? MatView{a, 1, lda} : MatView{a, lda, 1};
  MatView bv = transB ? MatView{b, 1, ldb} : MatView{b, ldb, 1};
  sgemm(m, n, k, alpha, av, bv, beta, c, ldc);
}

} // namespace ember
