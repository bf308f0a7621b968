// The static memory planner: hand-computed plans, the checker, and seeded random
// interval sets (validity, bounds, and the lower bound against a brute-force count).
#include "ember/lir/MemoryPlanner.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <random>

namespace ember {
namespace {

using lir::BufferInterval;
using lir::MemoryPlanOptions;

MemoryPlanOptions options(size_t alignment, MemoryPlanOptions::Fit fit) {
  MemoryPlanOptions o;
  o.alignment = alignment;
  o.fit = fit;
  return o;
}

TEST(LirPlanner, HandComputedPlan) {
  // Live bytes per time: 100, 150, 150, 150, 120, 120, 20 -> lower bound 150.
  const std::vector<BufferInterval> b = {{100, 0, 2}, {50, 1, 3}, {100, 3, 5}, {20, 4, 6}};
  const lir::MemoryPlan p = lir::planIntervals(b, options(1, MemoryPlanOptions::Fit::Best));
  EXPECT_EQ(p.offsets, (std::vector<size_t>{0, 100, 0, 100}));
  EXPECT_EQ(p.arenaBytes, 150u);
  EXPECT_EQ(p.sumBytes, 270u);
  EXPECT_EQ(p.lowerBound, 150u);
  EXPECT_TRUE(lir::checkPlan(b, p, 1).empty());
  // With 64-byte alignment the 50-byte buffer starts at 128.
  const lir::MemoryPlan q = lir::planIntervals(b, options(64, MemoryPlanOptions::Fit::Best));
  EXPECT_EQ(q.offsets, (std::vector<size_t>{0, 128, 0, 128}));
  EXPECT_EQ(q.arenaBytes, 178u);
}

TEST(LirPlanner, BestFitTakesTheSmallestGap) {
  // Placed by size: G1@0, S1@100, G2@180, S2@250. T (live 1..9) sees the gaps [0,100)
  // and [180,250) (G1, G2 are dead by then).
  const std::vector<BufferInterval> b = {
      {100, 0, 0}, {80, 0, 9}, {70, 0, 0}, {60, 0, 9}, {50, 1, 9}};
  const lir::MemoryPlan first = lir::planIntervals(b, options(1, MemoryPlanOptions::Fit::First));
  const lir::MemoryPlan best = lir::planIntervals(b, options(1, MemoryPlanOptions::Fit::Best));
  EXPECT_EQ(first.offsets, (std::vector<size_t>{0, 100, 180, 250, 0}));
  EXPECT_EQ(best.offsets, (std::vector<size_t>{0, 100, 180, 250, 180}));
  EXPECT_EQ(first.arenaBytes, 310u);
  EXPECT_EQ(best.arenaBytes, 310u);
}

TEST(LirPlanner, CheckerFindsOverlapsAndMisalignment) {
  const std::vector<BufferInterval> b = {{16, 0, 3}, {16, 2, 5}, {16, 4, 6}};
  lir::MemoryPlan p = lir::planIntervals(b, options(8, MemoryPlanOptions::Fit::Best));
  ASSERT_TRUE(lir::checkPlan(b, p, 8).empty());
  p.offsets[1] = p.offsets[0] + 8;
  p.arenaBytes = 64;
  const auto problems = lir::checkPlan(b, p, 8);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("buffers 0 and 1 are live together and overlap"), std::string::npos);
  p.offsets[1] = 36;
  EXPECT_NE(lir::checkPlan(b, p, 8)[0].find("is not aligned to 8"), std::string::npos);
  EXPECT_THROW(lir::planIntervals(b, options(6, MemoryPlanOptions::Fit::Best)), Error);
  EXPECT_THROW(lir::planIntervals({{4, 3, 1}}), Error);
}

TEST(LirPlanner, RandomIntervalSetsGetValidPlans) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 400; ++trial) {
    const size_t n = 1 + rng() % 40, horizon = 1 + rng() % 60;
    std::vector<BufferInterval> b(n);
    for (BufferInterval& i : b) {
      i.size = rng() % 5 == 0 ? rng() % 8 : rng() % 5000;
      i.begin = rng() % horizon;
      i.end = i.begin + rng() % (horizon - i.begin + 1);
    }
    // Brute-force lower bound, and the sum of sizes rounded to the alignment.
    size_t bound = 0;
    for (size_t t = 0; t <= horizon; ++t) {
      size_t live = 0;
      for (const BufferInterval& i : b)
        live += (i.begin <= t && t <= i.end) ? i.size : 0;
      bound = std::max(bound, live);
    }
    const size_t alignment = size_t(1) << (rng() % 8);
    for (auto fit : {MemoryPlanOptions::Fit::First, MemoryPlanOptions::Fit::Best}) {
      const lir::MemoryPlan p = lir::planIntervals(b, options(alignment, fit));
      const auto problems = lir::checkPlan(b, p, alignment);
      ASSERT_TRUE(problems.empty()) << "trial " << trial << ": " << problems[0];
      size_t rounded = 0;
      for (const BufferInterval& i : b)
        rounded += (i.size + alignment - 1) / alignment * alignment;
      EXPECT_EQ(p.lowerBound, bound) << "trial " << trial;
      EXPECT_GE(p.arenaBytes, bound) << "trial " << trial;
      EXPECT_LE(p.arenaBytes, rounded) << "trial " << trial;
    }
  }
}

} // namespace
} // namespace ember
