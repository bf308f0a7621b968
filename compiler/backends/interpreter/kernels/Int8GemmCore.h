#pragma once
/// \file
/// The int8 matrix product of the interpreter's int8 Conv, Gemm and MatMul kernels, and
/// the per-output-channel requantization that follows it (docs/numerics.md 4.1).
///
/// The product is exact: int8 x int8 products summed in int32 over blocks of K short
/// enough not to overflow, the blocks added with two's-complement wrap-around, so the
/// result is the mathematical sum modulo 2^32 as numerics.md requires.

#include "ember/quantization/Numerics.h"

#include <cstdint>
#include <vector>

namespace ember {

/// C[M x N] = A[M x K] * B[K x N] (int8, row-major with leading dimensions lda, ldb;
/// C int32 row-major with leading dimension ldc, overwritten), modulo 2^32.
void igemm(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
           int64_t ldb, int32_t* c, int64_t ldc);

/// a + b with two's-complement wrap-around (no signed overflow).
inline int32_t wrapAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
/// a * b with two's-complement wrap-around.
inline int32_t wrapMul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

/// The requantization of one output channel: multiplier and the clamp.
struct ChannelRequant {
  std::vector<quant::Multiplier> mult; ///< one per channel (or one for all)
  int32_t zp = 0, lo = -128, hi = 127;
  quant::Multiplier of(int64_t ch) const { return mult.size() == 1 ? mult[0] : mult[size_t(ch)]; }
};

} // namespace ember
