#pragma once
/// \file
/// The interpreter's blocked single-precision matrix product, used by MatMul, Gemm and
/// the convolutions (im2col per group, or directly for 1x1 filters).
///
/// Operands are addressed by a row stride and a column stride, so transposed and
/// strided views need no copy: element (i, j) of A is A[i * rsA + j * csA]. The
/// implementation follows the BLIS layout: panels of B (KC x NR) and A (MC x MR) are
/// packed into contiguous buffers and a register-blocked MR x NR micro-kernel, written
/// with compiler vector types, accumulates over KC.

#include <cstdint>

namespace ember {

/// A read-only strided matrix view: element (i, j) is data[i * rowStride + j * colStride].
struct MatView {
  const float* data;
  int64_t rowStride;
  int64_t colStride;
};

/// C[M x N] = alpha * A[M x K] * B[K x N] + beta * C, with C row-major of leading
/// dimension ldc. When beta == 0, C is not read (it may hold garbage or NaN).
void sgemm(int64_t m, int64_t n, int64_t k, float alpha, MatView a, MatView b, float beta, float* c,
           int64_t ldc);

/// Row-major convenience: A is M x K (lda), B is K x N (ldb), optionally transposed
/// (then A is stored K x M and B N x K).
void sgemmRowMajor(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                   int64_t ldc);

} // namespace ember
