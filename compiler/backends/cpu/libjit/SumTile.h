// The register-blocked inner loop every float GEMM-like kernel shares (libjit/Conv.cpp's
// convolutions, libjit/MatMul.cpp's Gemm and MatMul): an MR x (NV vectors) tile of sums
// kept in registers over all of K.
#pragma once

#include "Libjit.h"

namespace libjit {

/// acc[i][j] = sum_k a[i * ai + k * ak] * b[k * ldb + j * VW .. + VW), VW the floats of
/// one V: A's element broadcast against B's row of NV vectors. Packed convolution
/// weights are k-major (ai = 1, ak = MR); a row-major A has ai = its row length, ak = 1.
/// With init, row i's sums start from init[i] (a bias) instead of zero.
template <int MR, int NV, typename V>
__attribute__((always_inline)) inline void
sumTile(int64_t K, const float* __restrict a, int64_t ai, int64_t ak, const float* __restrict b,
        int64_t ldb, V (&acc)[MR][NV], const float* init = nullptr) {
  constexpr int VW = sizeof(V) / sizeof(float);
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j)
      acc[i][j] = V{} * 0.f + (init ? init[i] : 0.f);
  for (int64_t k = 0; k < K; ++k) {
    V bv[NV];
    for (int j = 0; j < NV; ++j)
      __builtin_memcpy(&bv[j], b + k * ldb + j * VW, sizeof(V));
    for (int i = 0; i < MR; ++i) {
      const float av = a[i * ai + k * ak];
      for (int j = 0; j < NV; ++j)
        acc[i][j] += av * bv[j];
    }
  }
}

} // namespace libjit
