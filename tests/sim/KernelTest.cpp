// The simulator's host kernels (simulator/src/Kernels.h): the portable loops and the
// host's best kernels (AVX-512 where the host has it) against references written here:
// the MAC array on random blocks of every array size up to 128, with extreme values and
// acc rows that repeat (stride 0), and requantize on every lane count, with extremes.
#include "Kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <random>
#include <vector>

using ember::sim::detail::bestHostKernels;
using ember::sim::detail::GemmKernel;
using ember::sim::detail::HostKernels;
using ember::sim::detail::RequantKernel;

namespace {

struct Case {
  unsigned n;
  std::uint64_t n0, n1;
  std::size_t actStep0, actStep1; ///< In rows.
  std::size_t accStep0, accStep1;
};

/// acc rows += act rows x W, one row after another, modulo 2^32.
void reference(const Case& k, const std::vector<std::int8_t>& w,
               const std::vector<std::uint8_t>& act, std::vector<std::uint8_t>& acc) {
  for (std::uint64_t i1 = 0; i1 < k.n1; ++i1)
    for (std::uint64_t i0 = 0; i0 < k.n0; ++i0) {
      const auto* a = reinterpret_cast<const std::int8_t*>(act.data()) +
                      (i0 * k.actStep0 + i1 * k.actStep1) * k.n;
      std::uint8_t* r = acc.data() + (i0 * k.accStep0 + i1 * k.accStep1) * k.n * 4;
      for (unsigned o = 0; o < k.n; ++o) {
        std::uint32_t v;
        std::memcpy(&v, r + 4 * o, 4);
        for (unsigned c = 0; c < k.n; ++c)
          v += static_cast<std::uint32_t>(std::int32_t(a[c]) * std::int32_t(w[o * k.n + c]));
        std::memcpy(r + 4 * o, &v, 4);
      }
    }
}

void check(const Case& k, HostKernels kernels, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::size_t actRows = (k.n0 - 1) * k.actStep0 + (k.n1 - 1) * k.actStep1 + 1;
  const std::size_t accRows = (k.n0 - 1) * k.accStep0 + (k.n1 - 1) * k.accStep1 + 1;
  std::vector<std::int8_t> w(std::size_t(k.n) * k.n);
  std::vector<std::uint8_t> act(actRows * k.n), acc(accRows * k.n * 4);
  for (auto& v : w)
    v = static_cast<std::int8_t>(byte(rng));
  for (auto& v : act)
    v = static_cast<std::uint8_t>(byte(rng));
  for (auto& v : acc)
    v = static_cast<std::uint8_t>(byte(rng));
  if (seed % 2 == 0) { // the extremes: every product is (-128)(-128) or (-128)(127)
    for (std::size_t i = 0; i < w.size(); ++i)
      w[i] = static_cast<std::int8_t>(i % 3 ? -128 : 127);
    std::fill(act.begin(), act.end(), std::uint8_t(0x80));
  }
  std::vector<std::uint8_t> want = acc;
  reference(k, w, act, want);
  GemmKernel kernel(k.n, kernels);
  kernel.load(w.data());
  kernel.rows(act.data(), k.actStep0 * k.n, k.actStep1 * k.n, acc.data(), k.accStep0 * k.n * 4,
              k.accStep1 * k.n * 4, k.n0, k.n1);
  EXPECT_EQ(acc, want) << "n " << k.n << ", seed " << seed << ", kernels "
                       << (kernel.kernels() == HostKernels::Vnni ? "vnni" : "portable");
}

} // namespace

TEST(SimKernels, GemmMatchesTheReferenceOnEveryArraySize) {
  const Case cases[] = {{1, 3, 2, 1, 3, 1, 3},  {2, 4, 1, 1, 4, 1, 4},  {4, 5, 3, 1, 5, 1, 5},
                        {8, 7, 2, 2, 14, 1, 7}, {16, 9, 4, 1, 9, 1, 9}, {16, 6, 3, 1, 6, 0, 1},
                        {32, 5, 5, 3, 1, 1, 5}, {32, 4, 2, 1, 4, 0, 0}, {64, 3, 3, 1, 3, 1, 3},
                        {128, 2, 2, 1, 2, 1, 2}};
  unsigned seed = 1;
  for (const Case& k : cases)
    for (int rep = 0; rep < 2; ++rep, ++seed) {
      check(k, HostKernels::Portable, seed);
      check(k, HostKernels::Vnni, seed);
    }
}

TEST(SimKernels, VnniIsUsedWhenTheHostHasIt) {
  // The simulator asks for Vnni; it must get it exactly when the host runs it, and never
  // for an array whose rows are not a multiple of 16.
  EXPECT_EQ(GemmKernel(16, HostKernels::Vnni).kernels(), bestHostKernels(16));
  EXPECT_EQ(GemmKernel(8, HostKernels::Vnni).kernels(), HostKernels::Portable);
  EXPECT_EQ(GemmKernel(16, HostKernels::Portable).kernels(), HostKernels::Portable);
}

TEST(SimKernels, RequantizeMatchesTheReferenceOnEveryLaneCount) {
  // Reference: ARCHITECTURE section 4, then int8 saturation as the act memory stores it.
  auto want = [](std::int32_t a, std::int32_t m, std::int32_t s, std::int32_t zp, std::int32_t lo,
                 std::int32_t hi) {
    std::int64_t y = ((std::int64_t(a) * m + (std::int64_t(1) << (s - 1))) >> s) + zp;
    y = std::max<std::int64_t>(lo, std::min<std::int64_t>(y, hi)); // lo wins when lo > hi
    return static_cast<std::int8_t>(std::max<std::int64_t>(-128, std::min<std::int64_t>(y, 127)));
  };
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int32_t> any(INT32_MIN, INT32_MAX), shift(1, 62),
      small(-300, 300);
  const std::int32_t bounds[][2] = {{-128, 127}, {0, 127}, {-20, 90}, {50, -50}, {-1000, 1000}};
  for (unsigned n : {1u, 8u, 16u, 32u, 64u})
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<std::int32_t> M(n), S(n), acc(n);
      for (unsigned j = 0; j < n; ++j) {
        M[j] = rep % 4 == 0 ? (j % 2 ? INT32_MIN : INT32_MAX) : any(rng);
        S[j] = rep % 4 == 1 ? (j % 2 ? 1 : 62) : shift(rng);
        acc[j] = rep % 4 == 0 ? (j % 3 ? INT32_MIN : INT32_MAX) : any(rng);
      }
      const auto& b = bounds[rep % 5];
      const std::int32_t zp = small(rng);
      for (HostKernels kernels : {HostKernels::Portable, HostKernels::Vnni}) {
        RequantKernel k(n, kernels, M.data(), S.data(), zp, b[0], b[1]);
        std::vector<std::uint8_t> out(n, 0xAA);
        k.row(reinterpret_cast<const std::uint8_t*>(acc.data()), out.data());
        for (unsigned j = 0; j < n; ++j)
          ASSERT_EQ(static_cast<std::int8_t>(out[j]), want(acc[j], M[j], S[j], zp, b[0], b[1]))
              << "lanes " << n << ", lane " << j << ", rep " << rep << ", kernels "
              << (k.kernels() == HostKernels::Vnni ? "vnni" : "portable");
      }
    }
}
