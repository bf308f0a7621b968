// Matrix products: batched MatMul (operands computed at run time) and Gemm in the form
// the normalize-gemm pass leaves (Y = A[M, K] B[K, N] + C, C broadcast by strides).
// Blocks of four rows by 64 (or 16) columns of Y are summed in registers over all of K,
// B's rows loaded as vectors and A's elements broadcast; threads split the rows (or, for
// a single row, blocks of columns).
#include "Libjit.h"
#include "SumTile.h"

namespace {

typedef float V16 __attribute__((vector_size(64)));
constexpr int64_t kVW = 16; ///< Floats of one vector.

/// y[MR rows, NV * 16 columns] += a[MR rows, K] b[K, NV * 16 columns]: the block's sums
/// stay in registers over all of K (row i of a at a + i * lda, row k of b at b + k * ldb).
template <int MR, int NV>
inline void gemmBlock(const float* __restrict a, int64_t lda, const float* __restrict b,
                      int64_t ldb, float* __restrict y, int64_t ldy, int64_t K) {
  V16 acc[MR][NV];
  libjit::sumTile<MR, NV, V16>(K, a, lda, 1, b, ldb, acc);
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) {
      V16 yv;
      __builtin_memcpy(&yv, y + i * ldy + j * kVW, sizeof yv);
      yv += acc[i][j];
      __builtin_memcpy(y + i * ldy + j * kVW, &yv, sizeof yv);
    }
}

/// The columns [n0, n1) of MR rows: blocks of 64, then of 16, then one at a time. B is
/// row-major (row stride N), or `packed` (a constant B, codegen/MatMulGen.cpp): the
/// columns of each of these blocks, and the last columns together, are a [K][width]
/// panel of their own at b + n * K (n its first column), so a block reads B in order.
template <int MR>
inline void gemmRowBlock(const float* a, const float* b, bool packed, float* y, int64_t n0,
                         int64_t n1, int64_t N, int64_t K) {
  int64_t n = n0;
  for (; n + 4 * kVW <= n1; n += 4 * kVW)
    gemmBlock<MR, 4>(a, K, packed ? b + n * K : b + n, packed ? 4 * kVW : N, y + n, N, K);
  for (; n + kVW <= n1; n += kVW)
    gemmBlock<MR, 1>(a, K, packed ? b + n * K : b + n, packed ? kVW : N, y + n, N, K);
  const int64_t tail = n, width = n1 - tail;
  for (; n < n1; ++n) {
    const float* bn = packed ? b + tail * K + (n - tail) : b + n;
    const int64_t ldb = packed ? width : N;
    for (int i = 0; i < MR; ++i) {
      float sum = 0.f;
      for (int64_t k = 0; k < K; ++k)
        sum += a[i * K + k] * bn[k * ldb];
      y[i * N + n] += sum;
    }
  }
}

/// y[r, n] += sum_k a[r, k] * b[k, n] for rows [r0, r1) and columns [n0, n1).
inline void gemmRows(const float* a, const float* b, bool packed, float* y, int64_t r0, int64_t r1,
                     int64_t n0, int64_t n1, int64_t N, int64_t K) {
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4)
    gemmRowBlock<4>(a + r * K, b, packed, y + r * N, n0, n1, N, K);
  for (; r < r1; ++r)
    gemmRowBlock<1>(a + r * K, b, packed, y + r * N, n0, n1, N, K);
}

/// One matrix product with its initial value c (strides cr, cc; null = 0) and activation.
inline void product(const float* a, const float* b, bool packed, const float* c, int64_t cr,
                    int64_t cc, float* y, int64_t M, int64_t N, int64_t K, int32_t act, float lo,
                    float hi, int64_t r0, int64_t r1, int64_t n0, int64_t n1) {
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t n = n0; n < n1; ++n)
      y[r * N + n] = c ? c[r * cr + n * cc] : 0.f;
  gemmRows(a, b, packed, y, r0, r1, n0, n1, N, K);
  if (act)
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t n = n0; n < n1; ++n)
        y[r * N + n] = libjit::activate(act, y[r * N + n], lo, hi);
  (void)M;
}

} // namespace

/// Y = A B + C: A [M, K], B [K, N] (`packed` non-zero: in column panels, see
/// gemmRowBlock), C read at c[r * cr + n * cc] (null: none). Threads split the rows in
/// fours or the columns in blocks of 64, so every thread's columns start a panel.
EMBER_KERNEL void ember_gemm_f32(const float* a, const float* b, int32_t packed, const float* c,
                                 int64_t cr, int64_t cc, float* y, int64_t M, int64_t N, int64_t K,
                                 int32_t act, float lo, float hi, int64_t tid, int64_t nth) {
  int64_t r0 = 0, r1 = M, n0 = 0, n1 = N;
  if (M >= 4 * nth)
    libjit::threadRangeGrain(M, 4, tid, nth, &r0, &r1);
  else
    libjit::threadRangeGrain(N, 64, tid, nth, &n0, &n1);
  if (r0 < r1 && n0 < n1)
    product(a, b, packed != 0, c, cr, cc, y, M, N, K, act, lo, hi, r0, r1, n0, n1);
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
      product(a + i * sa, b + i * sb, false, nullptr, 0, 0, y + i * M * N, M, N, K, act, lo, hi, 0,
              M, 0, N);
    return;
  }
  int64_t r0, r1;
  libjit::threadRange(M, tid, nth, &r0, &r1);
  for (int64_t i = 0; i < batch; ++i)
    if (r0 < r1)
      product(a + i * sa, b + i * sb, false, nullptr, 0, 0, y + i * M * N, M, N, K, act, lo, hi, r0,
              r1, 0, N);
}
