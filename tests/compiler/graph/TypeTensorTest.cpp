// Types, shapes and tensors of the graph IR.
#include "ember/support/Error.h"
#include "ember/tensor/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ember;

TEST(Type, ElemKindNamesRoundTrip) {
  for (ElemKind k : numericElemKinds()) {
    ElemKind back;
    ASSERT_TRUE(parseElemKind(elemKindName(k), &back));
    EXPECT_EQ(back, k);
  }
  EXPECT_EQ(numericElemKinds().size(), 11u);
  ElemKind unused;
  EXPECT_FALSE(parseElemKind("bfloat16", &unused));
  EXPECT_EQ(elemSize(ElemKind::Float64), 8u);
  EXPECT_EQ(elemSize(ElemKind::Float16), 2u);
  EXPECT_EQ(elemSize(ElemKind::UInt16), 2u);
  EXPECT_TRUE(isCoreElemKind(ElemKind::Bool));
  EXPECT_FALSE(isCoreElemKind(ElemKind::Float64));
  EXPECT_EQ(elemSize(ElemKind::Float32), 4u);
  EXPECT_EQ(elemSize(ElemKind::Int64), 8u);
  EXPECT_EQ(elemSize(ElemKind::Bool), 1u);
}

TEST(Type, ShapeArithmeticAndPrinting) {
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({2, 3, 4}), 24);
  EXPECT_EQ(numElements({2, 0, 4}), 0);
  Type t(ElemKind::Float32, {1, 3, 224, 224});
  EXPECT_EQ(t.toString(), "float32[1, 3, 224, 224]");
  EXPECT_EQ(t.sizeInBytes(), 1u * 3 * 224 * 224 * 4);
}

TEST(Type, QuantizationIsPartOfTheType) {
  Type a(ElemKind::Int8, {4}, QuantParams{{0.5f}, {-3}, -1});
  Type b(ElemKind::Int8, {4}, QuantParams{{0.5f}, {-2}, -1});
  EXPECT_NE(a, b);
  EXPECT_TRUE(a.quant.isQuantized());
  EXPECT_FALSE(a.quant.isPerChannel());
  EXPECT_EQ(a.toString(), "int8[4]{s=0.5,zp=-3}");
  Type w(ElemKind::Int8, {8, 3},
         QuantParams{std::vector<float>(8, 0.1f), std::vector<int32_t>(8), 0});
  EXPECT_TRUE(w.quant.isPerChannel());
}

TEST(Tensor, TypedAccessIsChecked) {
  Tensor t = Tensor::fromVector<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(t.data<float>()[3], 4.0f);
  EXPECT_THROW(t.data<int32_t>(), Error);
  EXPECT_THROW((Tensor::fromVector<float>({3}, {1, 2})), Error);
}

TEST(Tensor, ConversionsFollowCpp) {
  Tensor f = Tensor::fromVector<float>({4}, {-1.7f, 0.0f, 2.9f, 127.0f});
  Tensor i = f.convertTo(ElemKind::Int64);
  EXPECT_EQ(i.toVector<int64_t>(), (std::vector<int64_t>{-1, 0, 2, 127}));
  Tensor b = f.convertTo(ElemKind::Bool);
  EXPECT_EQ(b.raw()[0], 1);
  EXPECT_EQ(b.raw()[1], 0);
  Tensor big = Tensor::fromVector<int64_t>({1}, {int64_t(1) << 40});
  EXPECT_EQ(big.convertTo(ElemKind::Int64).data<int64_t>()[0], int64_t(1) << 40);
}

TEST(Tensor, ReshapeKeepsBytes) {
  Tensor t = Tensor::fromVector<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r = t.reshaped({3, 2});
  EXPECT_EQ(r.dims(), (Shape{3, 2}));
  EXPECT_EQ(r.toVector<int32_t>(), t.toVector<int32_t>());
  EXPECT_THROW(t.reshaped({4}), Error);
}

// Expected bits from NumPy: np.array([v], np.float64).astype(np.float16).view(np.uint16).
TEST(Float16, RoundsToNearestEvenAsNumPy) {
  const std::pair<double, uint16_t> cases[] = {
      {0.1, 0x2e66},
      {1.0, 0x3c00},
      {65504.0, 0x7bff},
      {65519.99, 0x7bff},
      {65520.0, 0x7c00},                // the tie above the largest finite value goes to infinity
      {5.960464477539063e-08, 0x0001},  // 2^-24, the smallest subnormal
      {8.940696716308594e-08, 0x0002},  // 1.5 * 2^-24: a tie, to even
      {2.9802322387695312e-08, 0x0000}, // 0.5 * 2^-24: a tie, to even (zero)
      {6.103515625e-05, 0x0400},        // 2^-14, the smallest normal
      {1.0 / 3.0, 0x3555},
      {-2.5, 0xc100},
      {1e-08, 0x0000},
      {1.0009765625, 0x3c01},
      {1.00048828125, 0x3c00}, // a tie between 0x3c00 and 0x3c01: even
      {1.00146484375, 0x3c02}, // a tie between 0x3c01 and 0x3c02: even
  };
  for (const auto& [v, bits] : cases) {
    EXPECT_EQ(Float16::fromDouble(v), bits) << v;
    EXPECT_EQ(Float16(v).toDouble(), Float16(Float16(v).toDouble()).toDouble()) << v;
  }
  EXPECT_EQ(Float16::fromDouble(-1e6), 0xfc00);
  EXPECT_TRUE(std::isnan(Float16(std::nan("")).toDouble()));
  EXPECT_EQ(Float16(1.0 / 3.0).toDouble(), 0.333251953125);
}

TEST(Tensor, ConvertsBetweenAllKinds) {
  Tensor f = Tensor::fromVector<float>({4}, {-1.5f, 0.f, 2.75f, 300.f});
  EXPECT_EQ(f.convertTo(ElemKind::Float64).toVector<double>(),
            (std::vector<double>{-1.5, 0, 2.75, 300}));
  // Integer to integer wraps to the new width (ONNX Cast; NumPy astype).
  Tensor i = Tensor::fromVector<int64_t>({3}, {-1, 256, 65537});
  EXPECT_EQ(i.convertTo(ElemKind::UInt8).toVector<uint8_t>(), (std::vector<uint8_t>{255, 0, 1}));
  EXPECT_EQ(i.convertTo(ElemKind::UInt16).toVector<uint16_t>(),
            (std::vector<uint16_t>{65535, 256, 1}));
  EXPECT_EQ(i.convertTo(ElemKind::UInt64).toVector<uint64_t>()[0], UINT64_MAX);
  Tensor h = f.convertTo(ElemKind::Float16);
  EXPECT_EQ(h.data<Float16>()[2].bits, 0x4180); // 2.75
  EXPECT_EQ(h.convertTo(ElemKind::Float32).toVector<float>(), f.toVector<float>());
}
