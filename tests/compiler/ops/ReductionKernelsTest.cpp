// Reduction kernels on hand-computed cases (x = [[1, 2, 3], [4, 5, 6]]).
#include "OpsTestUtil.h"

#include "ember/support/Error.h"

using namespace ember;
using namespace ember::test;
using K = NodeKind;
using Ints = std::vector<int64_t>;

namespace {
Tensor x23() {
  return F({2, 3}, {1, 2, 3, 4, 5, 6});
}
} // namespace

TEST(ReductionKernels, SumOverNegativeAxisWithoutKeepdims) {
  Tensor y = eval1(K::ReduceSum, {x23()}, attrs({{"axes", Ints{-1}}, {"keepdims", int64_t(0)}}));
  expectFloats(y, {2}, {6, 15});
}

TEST(ReductionKernels, MeanOverAllAxesKeepsDims) {
  expectFloats(eval1(K::ReduceMean, {x23()}), {1, 1}, {3.5f});
}

TEST(ReductionKernels, MaxMinOverAxisZero) {
  expectFloats(eval1(K::ReduceMax, {x23()}, attrs({{"axes", Ints{0}}})), {1, 3}, {4, 5, 6});
  expectFloats(eval1(K::ReduceMin, {x23()}, attrs({{"axes", Ints{0}}})), {1, 3}, {1, 2, 3});
}

TEST(ReductionKernels, NormsAndLogs) {
  const Attrs a = attrs({{"axes", Ints{1}}});
  expectFloats(eval1(K::ReduceL1, {F({2, 2}, {-1, 2, 3, -4})}, a), {2, 1}, {3, 7});
  expectFloats(eval1(K::ReduceL2, {x23()}, a), {2, 1}, {3.74165739f, 8.77496439f});
  expectFloats(eval1(K::ReduceSumSquare, {x23()}, a), {2, 1}, {14, 77});
  expectFloats(eval1(K::ReduceLogSum, {x23()}, a), {2, 1}, {1.79175947f, 2.70805020f});
  expectFloats(eval1(K::ReduceLogSumExp, {x23()}, a), {2, 1}, {3.40760596f, 6.40760596f});
}

TEST(ReductionKernels, Int64ProductAndSum) {
  Tensor x = I64({2, 3}, {1, 2, 3, 4, 5, 6});
  expectExact<int64_t>(eval1(K::ReduceProd, {x}, attrs({{"axes", Ints{1}}})), {2, 1}, {6, 120});
  expectExact<int64_t>(eval1(K::ReduceSum, {x}, attrs({{"keepdims", int64_t(0)}})), {}, {21});
}

TEST(ReductionKernels, NoopWithEmptyAxesIsIdentity) {
  Tensor y = eval1(K::ReduceSum, {x23()}, attrs({{"noop_with_empty_axes", int64_t(1)}}));
  expectFloats(y, {2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST(ReductionKernels, ArgMaxFirstAndLastIndex) {
  Tensor x = F({4}, {1, 3, 3, 2});
  expectExact<int64_t>(eval1(K::ArgMax, {x}), {1}, {1});
  expectExact<int64_t>(eval1(K::ArgMax, {x}, attrs({{"select_last_index", int64_t(1)}})), {1}, {2});
}

TEST(ReductionKernels, ArgMinAlongNegativeAxis) {
  Tensor x = I64({2, 3}, {3, 1, 1, 0, 5, 0});
  const Attrs a = attrs({{"axis", int64_t(-1)}, {"keepdims", int64_t(0)}});
  expectExact<int64_t>(eval1(K::ArgMin, {x}, a), {2}, {1, 0});
  Attrs last = a;
  last.set("select_last_index", int64_t(1));
  expectExact<int64_t>(eval1(K::ArgMin, {x}, last), {2}, {2, 2});
}

TEST(ReductionKernels, AxisOutOfRangeIsAnError) {
  EXPECT_THROW(eval1(K::ReduceSum, {x23()}, attrs({{"axes", Ints{2}}})), Error);
  EXPECT_THROW(eval1(K::ArgMax, {x23()}, attrs({{"axis", int64_t(-3)}})), Error);
}
