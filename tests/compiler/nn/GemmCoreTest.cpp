// The blocked GEMM core against a plain triple loop in double precision, over sizes
// that cross the micro-tile (6 x 16 or 6 x 32) and packing-block (144 x 256 x 2048)
// boundaries, transposes, strided views, alpha and beta. EMBER_GEMM_ISA=generic|avx2|
// avx512 selects the micro-kernel, EMBER_NUM_THREADS the number of threads.
#include "GemmCore.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace ember;

namespace {

struct GemmShape {
  int64_t m, n, k;
  bool ta, tb;
  float alpha, beta;
};

class GemmCore : public ::testing::TestWithParam<GemmShape> {};

TEST_P(GemmCore, MatchesNaiveProduct) {
  const GemmShape s = GetParam();
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const int64_t pad = 3; // leading dimensions larger than the rows, to test strides
  const int64_t lda = (s.ta ? s.m : s.k) + pad, ldb = (s.tb ? s.k : s.n) + pad, ldc = s.n + pad;
  std::vector<float> a(static_cast<size_t>((s.ta ? s.k : s.m) * lda));
  std::vector<float> b(static_cast<size_t>((s.tb ? s.n : s.k) * ldb));
  std::vector<float> c(static_cast<size_t>(s.m * ldc));
  for (auto* v : {&a, &b, &c})
    for (float& x : *v)
      x = dist(rng);
  const std::vector<float> c0 = c;
  sgemmRowMajor(s.ta, s.tb, s.m, s.n, s.k, s.alpha, a.data(), lda, b.data(), ldb, s.beta, c.data(),
                ldc);
  int64_t bad = 0;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < s.k; ++p)
        acc += double(s.ta ? a[size_t(p * lda + i)] : a[size_t(i * lda + p)]) *
               double(s.tb ? b[size_t(j * ldb + p)] : b[size_t(p * ldb + j)]);
      const double want = s.alpha * acc + s.beta * c0[size_t(i * ldc + j)];
      const double got = c[size_t(i * ldc + j)];
      if (std::fabs(got - want) > 1e-4 * (1 + std::sqrt(double(s.k))))
        if (bad++ < 5)
          ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got << ", want " << want;
    }
  EXPECT_EQ(bad, 0);
  // The padding columns of C are never written.
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = s.n; j < ldc; ++j)
      EXPECT_EQ(c[size_t(i * ldc + j)], c0[size_t(i * ldc + j)]);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmCore,
    ::testing::Values(
        GemmShape{1, 1, 1, false, false, 1.f, 0.f}, GemmShape{5, 7, 3, false, false, 1.f, 0.f},
        GemmShape{6, 16, 8, true, false, 2.f, 0.f}, GemmShape{13, 33, 17, false, true, 1.f, 1.f},
        GemmShape{37, 29, 300, true, true, 0.5f, -0.25f},
        GemmShape{150, 70, 513, false, false, 1.f, 0.f},
        GemmShape{7, 2100, 20, false, false, 1.f, 1.f}, GemmShape{4, 3, 0, false, false, 1.f, 0.5f},
        // A read in place (few column panels), with a partial last row tile.
        GemmShape{47, 50, 300, false, true, 1.f, 0.f},
        GemmShape{300, 129, 70, false, false, 1.f, 1.f},
        // Matrix-vector paths (m == 1 or n == 1) and their fallbacks.
        GemmShape{1, 37, 50, false, true, 1.f, 0.f}, GemmShape{1, 45, 33, true, false, 2.f, 1.f},
        GemmShape{29, 1, 70, false, false, 1.f, 0.5f}, GemmShape{23, 1, 40, true, false, 1.f, 0.f},
        GemmShape{1, 1, 100, true, true, 1.f, 0.f}));

TEST(GemmCoreBeta, ZeroBetaIgnoresNaNInC) {
  std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  std::vector<float> c(4, std::nanf(""));
  sgemmRowMajor(false, false, 2, 2, 2, 1.f, a.data(), 2, b.data(), 2, 0.f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{19, 22, 43, 50}));
}

} // namespace
