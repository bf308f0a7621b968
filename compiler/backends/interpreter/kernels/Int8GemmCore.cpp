// The int8 matrix product (see Int8GemmCore.h). B is walked in blocks of kKc x kNc
// (128 KiB, kept in the L2 cache while every row of A passes over it); four rows of A at
// a time stream over the block: each loaded B row feeds four int32 accumulator rows that
// stay in the L1 cache, a loop the compiler vectorises (int8 -> int32 widening
// multiply-add). A block sums at most kKc products of at most 2^14 (no overflow); block
// sums are added into C with wrap-around.
#include "Int8GemmCore.h"

#include <algorithm>
#include <cstring>

namespace ember {

namespace {

constexpr int64_t kNc = 256; // columns of C per block (4 x 1 KiB accumulators)
constexpr int64_t kKc = 512; // K per block

/// Four accumulator rows over nc columns: sixteen columns at a time in an inner loop of
/// constant length (which the compiler vectorises at -O2), then the remainder.
void fourRows(int64_t nc, int64_t kc, const int8_t* a, int64_t lda, const int8_t* b, int64_t ldb,
              int32_t (*acc)[kNc]) {
  int32_t* __restrict c0 = acc[0];
  int32_t* __restrict c1 = acc[1];
  int32_t* __restrict c2 = acc[2];
  int32_t* __restrict c3 = acc[3];
  const int64_t full = nc / 16 * 16;
  for (int64_t kk = 0; kk < kc; ++kk) {
    const int8_t* __restrict br = b + kk * ldb;
    const int32_t a0 = a[kk], a1 = a[lda + kk], a2 = a[2 * lda + kk], a3 = a[3 * lda + kk];
    for (int64_t j0 = 0; j0 < full; j0 += 16)
      for (int64_t j = j0; j < j0 + 16; ++j) {
        const int32_t v = br[j];
        c0[j] += a0 * v;
        c1[j] += a1 * v;
        c2[j] += a2 * v;
        c3[j] += a3 * v;
      }
    for (int64_t j = full; j < nc; ++j) {
      const int32_t v = br[j];
      c0[j] += a0 * v;
      c1[j] += a1 * v;
      c2[j] += a2 * v;
      c3[j] += a3 * v;
    }
  }
}

/// acc[r][0..nc) = sum over kk < kc of a[r][kk] * b[kk][0..nc), rows r < rows (<= 4).
void block(int64_t rows, int64_t nc, int64_t kc, const int8_t* a, int64_t lda, const int8_t* b,
           int64_t ldb, int32_t (*acc)[kNc]) {
  for (int64_t r = 0; r < 4; ++r)
    std::fill(acc[r], acc[r] + nc, 0);
  if (rows == 4) {
    fourRows(nc, kc, a, lda, b, ldb, acc);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    int32_t* __restrict c = acc[r];
    for (int64_t kk = 0; kk < kc; ++kk) {
      const int8_t* __restrict br = b + kk * ldb;
      const int32_t av = a[r * lda + kk];
      if (av == 0)
        continue;
      const int64_t full = nc / 16 * 16;
      for (int64_t j0 = 0; j0 < full; j0 += 16)
        for (int64_t j = j0; j < j0 + 16; ++j)
          c[j] += av * br[j];
      for (int64_t j = full; j < nc; ++j)
        c[j] += av * br[j];
    }
  }
}

} // namespace

void igemm(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
           int64_t ldb, int32_t* c, int64_t ldc) {
  alignas(64) int32_t acc[4][kNc];
  for (int64_t i = 0; i < m; ++i)
    std::fill(c + i * ldc, c + i * ldc + n, 0);
  for (int64_t j0 = 0; j0 < n; j0 += kNc) {
    const int64_t nc = std::min(kNc, n - j0);
    for (int64_t k0 = 0; k0 < k; k0 += kKc) {
      const int64_t kc = std::min(kKc, k - k0);
      for (int64_t i0 = 0; i0 < m; i0 += 4) {
        const int64_t rows = std::min<int64_t>(4, m - i0);
        block(rows, nc, kc, a + i0 * lda + k0, lda, b + k0 * ldb + j0, ldb, acc);
        for (int64_t r = 0; r < rows; ++r) {
          int32_t* cr = c + (i0 + r) * ldc + j0;
          for (int64_t j = 0; j < nc; ++j)
            cr[j] = wrapAdd(cr[j], acc[r][j]);
        }
      }
    }
  }
}

} // namespace ember
