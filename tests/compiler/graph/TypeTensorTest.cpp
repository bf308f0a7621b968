// Types, shapes and tensors of the graph IR.
#include "ember/support/Error.h"
#include "ember/tensor/Tensor.h"

#include <gtest/gtest.h>

using namespace ember;

TEST(Type, ElemKindNamesRoundTrip) {
  for (ElemKind k :
       {ElemKind::Float32, ElemKind::Int8, ElemKind::Int32, ElemKind::Int64, ElemKind::Bool}) {
    ElemKind back;
    ASSERT_TRUE(parseElemKind(elemKindName(k), &back));
    EXPECT_EQ(back, k);
  }
  ElemKind unused;
  EXPECT_FALSE(parseElemKind("float64", &unused));
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
