// QuantizeLinear / DequantizeLinear: round half to even, int8 saturation, per axis.
#include "OpsTestUtil.h"

#include "ember/support/Error.h"

using namespace ember;
using namespace ember::test;
using K = NodeKind;

TEST(QuantKernels, QuantizeRoundsHalfToEvenAndSaturates) {
  Tensor x = F({6}, {0.5f, 1.5f, 2.5f, -0.5f, 300, -300});
  Tensor y = eval1(K::QuantizeLinear, {x}, attrs({{"scale", 1.0}, {"zero_point", int64_t(0)}}));
  expectExact<int8_t>(y, {6}, {0, 2, 2, 0, 127, -128});
  EXPECT_EQ(y.type().quant.scales, std::vector<float>{1.0f});
}

TEST(QuantKernels, QuantizeWithZeroPoint) {
  Tensor y = eval1(K::QuantizeLinear, {F({3}, {1, -1, 60})},
                   attrs({{"scale", 0.5}, {"zero_point", int64_t(10)}}));
  expectExact<int8_t>(y, {3}, {12, 8, 127});
}

TEST(QuantKernels, QuantizePerAxis) {
  Tensor y = eval1(K::QuantizeLinear, {F({2, 2}, {4, 4, -4, -4})},
                   attrs({{"scales", std::vector<double>{1, 2}},
                          {"zero_points", std::vector<int64_t>{0, 1}},
                          {"axis", int64_t(1)}}));
  expectExact<int8_t>(y, {2, 2}, {4, 3, -4, -1});
}

TEST(QuantKernels, Dequantize) {
  Tensor q = T_<int8_t>({3}, {-128, 0, 127});
  Tensor y = eval1(K::DequantizeLinear, {q}, attrs({{"scale", 0.5}, {"zero_point", int64_t(-1)}}));
  expectFloats(y, {3}, {-63.5f, 0.5f, 64});
  Tensor acc = T_<int32_t>({2, 2}, {10, 10, -10, -10});
  Tensor z = eval1(K::DequantizeLinear, {acc},
                   attrs({{"scales", std::vector<double>{0.5, 0.25}}, {"axis", int64_t(1)}}));
  expectFloats(z, {2, 2}, {5, 2.5f, -5, -2.5f});
}

TEST(QuantKernels, BadParametersAreErrors) {
  EXPECT_THROW(eval1(K::QuantizeLinear, {F({1}, {1})}, attrs({{"scale", 0.0}})), Error);
  EXPECT_THROW(eval1(K::QuantizeLinear, {F({1}, {1})},
                     attrs({{"scale", 1.0}, {"zero_point", int64_t(200)}})),
               Error);
  // Dequantizing an int8 value that carries no quantization parameters.
  EXPECT_THROW(eval1(K::DequantizeLinear, {T_<int8_t>({1}, {1})}), Error);
}
