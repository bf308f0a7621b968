// Matrix products: batched MatMul (operands computed at run time) and Gemm in the form
// the normalize-gemm pass leaves (Y = A[M, K] B[K, N] + C, C broadcast by strides).
// Rows of Y are computed four at a time, k outer and n inner, so the inner loop is a
// vectorised multiply-add over contiguous rows of B; threads split the rows (or, for a
// single row, blocks of columns).
#include "Libjit.h"

namespace {

/// y[r, n] += sum_k a[r, k] * b[k, n] for rows [r0, r1) and columns [n0, n1).
inline void gemmRows(const float* a, const float* b, float* y, int64_t r0, int64_t r1, int64_t n0,
                     int64_t n1, int64_t N, int64_t K) {
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) {
    const float* a0 = a + r * K;
    float* y0 = y + r * N;
    for (int64_t k = 0; k < K; ++k) {
      const float v0 = a0[k], v1 = a0[K + k], v2 = a0[2 * K + k], v3 = a0[3 * K + k];
      const float* br = b + k * N;
      for (int64_t n = n0; n < n1; ++n) {
        const float bv = br[n];
        y0[n] += v0 * bv;
        y0[N + n] += v1 * bv;
        y0[2 * N + n] += v2 * bv;
        y0[3 * N + n] += v3 * bv;
      }
    }
  }
  for (; r < r1; ++r) {
    const float* ar = a + r * K;
    float* yr = y + r * N;
    for (int64_t k = 0; k < K; ++k) {
      const float v = ar[k];
      const float* br = b + k * N;
      for (int64_t n = n0; n < n1; ++n)
        yr[n] += v * br[n];
    }
  }
}

/// One matrix product with its initial value c (strides cr, cc; null = 0) and activation.
inline void product(const float* a, const float* b, const float* c, int64_t cr, int64_t cc,
                    float* y, int64_t M, int64_t N, int64_t K, int32_t act, float lo, float hi,
                    int64_t r0, int64_t r1, int64_t n0, int64_t n1) {
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t n = n0; n < n1; ++n)
      y[r * N + n] = c ? c[r * cr + n * cc] : 0.f;
  gemmRows(a, b, y, r0, r1, n0, n1, N, K);
  if (act)
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t n = n0; n < n1; ++n)
        y[r * N + n] = libjit::activate(act, y[r * N + n], lo, hi);
  (void)M;
}

} // namespace

/// Y = A B + C: A [M, K], B [K, N], C read at c[r * cr + n * cc] (null: none).
EMBER_KERNEL void ember_gemm_f32(const float* a, const float* b, const float* c, int64_t cr,
                                 int64_t cc, float* y, int64_t M, int64_t N, int64_t K, int32_t act,
                                 float lo, float hi, int64_t tid, int64_t nth) {
  int64_t r0 = 0, r1 = M, n0 = 0, n1 = N;
  if (M >= 4 * nth)
    libjit::threadRangeGrain(M, 4, tid, nth, &r0, &r1);
  else
    libjit::threadRangeGrain(N, 64, tid, nth, &n0, &n1);
  if (r0 < r1 && n0 < n1)
    product(a, b, c, cr, cc, y, M, N, K, act, lo, hi, r0, r1, n0, n1);
}

/// batch products Y[i] = A[i] B[i]; sa / sb: batch strides of A and B in elements (0 =
/// broadcast).
EMBER_KERNEL void ember_matmul_f32(const float* a, const float* b, float* y, int64_t batch,
                                   int64_t sa, int64_t sb, int64_t M, int64_t N, int64_t K,
                                   int32_t act, float lo, float hi, int64_t tid, int64_t nth) {
  if (batch >= nth) {
    int64_t b0, b1;
    libjit::threadRange(batch, tid, nth, &b0, &b1);
    for (int64_t i = b0; i < b1; ++i)
      product(a + i * sa, b + i * sb, nullptr, 0, 0, y + i * M * N, M, N, K, act, lo, hi, 0, M, 0,
              N);
    return;
  }
  int64_t r0, r1;
  libjit::threadRange(M, tid, nth, &r0, &r1);
  for (int64_t i = 0; i < batch; ++i)
    if (r0 < r1)
      product(a + i * sa, b + i * sb, nullptr, 0, 0, y + i * M * N, M, N, K, act, lo, hi, r0, r1, 0,
              N);
}
