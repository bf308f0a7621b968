// Data-movement kernels on hand-computed cases.
#include "OpsTestUtil.h"

#include "ember/support/Error.h"

using namespace ember;
using namespace ember::test;
using K = NodeKind;
using Ints = std::vector<int64_t>;
using S = std::string;

TEST(DataMovementKernels, Transpose) {
  expectFloats(eval1(K::Transpose, {F({2, 3}, {1, 2, 3, 4, 5, 6})}), {3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor x = I64({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  expectExact<int64_t>(eval1(K::Transpose, {x}, attrs({{"perm", Ints{1, 0, 2}}})), {2, 2, 2},
                       {0, 1, 4, 5, 2, 3, 6, 7});
}

TEST(DataMovementKernels, ConcatAlongLastAxis) {
  Tensor y = eval1(K::Concat, {F({2, 1}, {1, 2}), F({2, 2}, {3, 4, 5, 6})},
                   attrs({{"axis", int64_t(-1)}}));
  expectFloats(y, {2, 3}, {1, 3, 4, 2, 5, 6});
}

TEST(DataMovementKernels, SplitIntoSizes) {
  std::vector<Tensor> y = evalNode(K::Split, {F({2, 3}, {1, 2, 3, 4, 5, 6})},
                                   attrs({{"axis", int64_t(1)}, {"split", Ints{1, 2}}}));
  ASSERT_EQ(y.size(), 2u);
  expectFloats(y[0], {2, 1}, {1, 4});
  expectFloats(y[1], {2, 2}, {2, 3, 5, 6});
}

TEST(DataMovementKernels, SliceWithNegativeStep) {
  // Normalised form: row 1, columns 2 down to 0 (end -1 = before the first).
  Tensor y = eval1(K::Slice, {F({2, 3}, {1, 2, 3, 4, 5, 6})},
                   attrs({{"starts", Ints{1, 2}}, {"ends", Ints{2, -1}}, {"steps", Ints{1, -1}}}));
  expectFloats(y, {1, 3}, {6, 5, 4});
  Tensor z = eval1(K::Slice, {I64({5}, {0, 1, 2, 3, 4})},
                   attrs({{"starts", Ints{0}}, {"ends", Ints{5}}, {"steps", Ints{2}}}));
  expectExact<int64_t>(z, {3}, {0, 2, 4});
}

TEST(DataMovementKernels, GatherNegativeIndicesAndInnerAxis) {
  Tensor data = I64({3, 2}, {1, 2, 3, 4, 5, 6});
  expectExact<int64_t>(eval1(K::Gather, {data, I64({2}, {-1, 0})}), {2, 2}, {5, 6, 1, 2});
  expectExact<int64_t>(
      eval1(K::Gather, {data, T_<int32_t>({2, 2}, {1, 0, 0, 1})}, attrs({{"axis", int64_t(1)}})),
      {3, 2, 2}, {2, 1, 1, 2, 4, 3, 3, 4, 6, 5, 5, 6});
  // Scalar index drops the axis (Shape -> Gather -> scalar in shape arithmetic).
  expectExact<int64_t>(eval1(K::Gather, {I64({4}, {1, 3, 224, 224}), I64({}, {1})}), {}, {3});
}

TEST(DataMovementKernels, GatherIndexOutOfRangeIsAnError) {
  EXPECT_THROW(eval1(K::Gather, {F({2}, {1, 2}), I64({1}, {2})}), Error);
}

TEST(DataMovementKernels, GatherElements) {
  Tensor y = eval1(K::GatherElements, {F({2, 2}, {1, 2, 3, 4}), I64({2, 2}, {0, 0, 1, 0})},
                   attrs({{"axis", int64_t(1)}}));
  expectFloats(y, {2, 2}, {1, 1, 4, 3});
}

TEST(DataMovementKernels, PadModes) {
  Tensor x = F({3}, {1, 2, 3});
  expectFloats(eval1(K::Pad, {x}, attrs({{"pads", Ints{2, 2}}, {"value", 9.0}})), {7},
               {9, 9, 1, 2, 3, 9, 9});
  expectFloats(eval1(K::Pad, {x}, attrs({{"pads", Ints{2, 2}}, {"mode", S("reflect")}})), {7},
               {3, 2, 1, 2, 3, 2, 1});
  expectFloats(eval1(K::Pad, {x}, attrs({{"pads", Ints{2, 2}}, {"mode", S("edge")}})), {7},
               {1, 1, 1, 2, 3, 3, 3});
  expectFloats(eval1(K::Pad, {x}, attrs({{"pads", Ints{-1, 0}}})), {2}, {2, 3});
  Tensor m = F({2, 2}, {1, 2, 3, 4});
  expectFloats(eval1(K::Pad, {m}, attrs({{"pads", Ints{1, 0, 0, 1}}})), {3, 3},
               {0, 0, 0, 1, 2, 0, 3, 4, 0});
  // Reflect cannot pad by the whole extent.
  EXPECT_THROW(eval1(K::Pad, {x}, attrs({{"pads", Ints{3, 0}}, {"mode", S("reflect")}})), Error);
}

TEST(DataMovementKernels, ExpandAndTile) {
  expectFloats(eval1(K::Expand, {F({3, 1}, {1, 2, 3})}, attrs({{"shape", Ints{2, 1, 2}}})),
               {2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  expectExact<int64_t>(eval1(K::Tile, {I64({2}, {1, 2})}, attrs({{"repeats", Ints{3}}})), {6},
                       {1, 2, 1, 2, 1, 2});
  expectFloats(eval1(K::Tile, {F({2, 1}, {1, 2})}, attrs({{"repeats", Ints{2, 2}}})), {4, 2},
               {1, 1, 2, 2, 1, 1, 2, 2});
}

TEST(DataMovementKernels, CumSumVariants) {
  Tensor x = F({4}, {1, 2, 3, 4});
  expectFloats(eval1(K::CumSum, {x}), {4}, {1, 3, 6, 10});
  expectFloats(eval1(K::CumSum, {x}, attrs({{"exclusive", int64_t(1)}})), {4}, {0, 1, 3, 6});
  expectFloats(eval1(K::CumSum, {x}, attrs({{"reverse", int64_t(1)}})), {4}, {10, 9, 7, 4});
  expectFloats(eval1(K::CumSum, {x}, attrs({{"reverse", int64_t(1)}, {"exclusive", int64_t(1)}})),
               {4}, {9, 7, 4, 0});
  expectExact<int64_t>(
      eval1(K::CumSum, {I64({2, 2}, {1, 2, 3, 4})}, attrs({{"axis", int64_t(-1)}})), {2, 2},
      {1, 3, 3, 7});
}

TEST(DataMovementKernels, Trilu) {
  Tensor x = F({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expectFloats(eval1(K::Trilu, {x}), {3, 3}, {1, 2, 3, 0, 5, 6, 0, 0, 9});
  expectFloats(eval1(K::Trilu, {x}, attrs({{"upper", int64_t(0)}, {"k", int64_t(-1)}})), {3, 3},
               {0, 0, 0, 4, 0, 0, 7, 8, 0});
}

TEST(DataMovementKernels, DepthToSpaceAndBack) {
  Tensor x = F({1, 8, 1, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
  expectFloats(eval1(K::DepthToSpace, {x}, attrs({{"blocksize", int64_t(2)}})), {1, 2, 2, 2},
               {0, 2, 4, 6, 1, 3, 5, 7});
  expectFloats(eval1(K::DepthToSpace, {x}, attrs({{"blocksize", int64_t(2)}, {"mode", S("CRD")}})),
               {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor s = F({1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  expectFloats(eval1(K::SpaceToDepth, {s}, attrs({{"blocksize", int64_t(2)}})), {1, 8, 1, 1},
               {0, 4, 1, 5, 2, 6, 3, 7});
}

TEST(DataMovementKernels, ResizeNearestAndLinear) {
  Tensor x = F({1, 1, 1, 2}, {1, 2});
  const Ints sizes = {1, 1, 1, 4};
  expectFloats(eval1(K::Resize, {x},
                     attrs({{"sizes", sizes},
                            {"coordinate_transformation_mode", S("asymmetric")},
                            {"nearest_mode", S("floor")}})),
               {1, 1, 1, 4}, {1, 1, 2, 2});
  expectFloats(eval1(K::Resize, {x},
                     attrs({{"sizes", sizes},
                            {"mode", S("linear")},
                            {"coordinate_transformation_mode", S("align_corners")}})),
               {1, 1, 1, 4}, {1, 4.f / 3, 5.f / 3, 2});
  expectFloats(eval1(K::Resize, {x}, attrs({{"sizes", sizes}, {"mode", S("linear")}})),
               {1, 1, 1, 4}, {1, 1.25f, 1.75f, 2});
  // Bilinear on a 2x2 image doubled with align_corners: the centre is the mean.
  Tensor img = F({1, 1, 2, 2}, {0, 2, 4, 6});
  Tensor y = eval1(K::Resize, {img},
                   attrs({{"sizes", Ints{1, 1, 3, 3}},
                          {"mode", S("linear")},
                          {"coordinate_transformation_mode", S("align_corners")}}));
  expectFloats(y, {1, 1, 3, 3}, {0, 1, 2, 2, 3, 4, 4, 5, 6});
}

TEST(DataMovementKernels, ResizeCubic) {
  // x^2 doubled (asymmetric: input coordinate o / 2). Keys' coefficients at A = -0.75
  // for a half-way point are -3/32, 19/32, 19/32, -3/32; whole coordinates copy; taps
  // beyond the borders take the edge value.
  Tensor x = F({1, 4}, {0, 1, 4, 9});
  auto cubic = [&](int64_t exclude) {
    return eval1(K::Resize, {x},
                 attrs({{"sizes", Ints{1, 8}},
                        {"mode", S("cubic")},
                        {"coordinate_transformation_mode", S("asymmetric")},
                        {"cubic_coeff_a", -0.75},
                        {"exclude_outside", exclude}}));
  };
  expectFloats(cubic(0), {1, 8}, {0, 0.21875f, 1, 2.125f, 4, 6.78125f, 9, 9.46875f});
  // exclude_outside: taps outside get weight 0, the others are renormalised
  // (o = 1: (19/32 * 1 - 3/32 * 4) / (35/32) = 0.2).
  expectFloats(cubic(1), {1, 8}, {0, 0.2f, 1, 2.125f, 4, 7.625f / 1.09375f, 9, 4.96875f / 0.5f});
}

TEST(DataMovementKernels, ReshapeToWrongCountNamesTheNode) {
  Module m;
  Function* f = m.createFunction("t");
  Node* a = m.createConstant("a", F({2, 3}, {1, 2, 3, 4, 5, 6}));
  try {
    f->create(K::Reshape, "bad_reshape", {a}, attrs({{"shape", Ints{4}}}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("bad_reshape"), std::string::npos) << msg;
    EXPECT_NE(msg.find("6 elements"), std::string::npos) << msg;
  }
}

TEST(DataMovementKernels, IllFormedAttributesAreErrors) {
  Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW(eval1(K::Transpose, {x}, attrs({{"perm", Ints{0, 0}}})), Error);
  EXPECT_THROW(evalNode(K::Split, {x}, attrs({{"axis", int64_t(1)}, {"split", Ints{1, 1}}})),
               Error);
  EXPECT_THROW(eval1(K::Concat, {x, F({3}, {1, 2, 3})}, attrs({{"axis", int64_t(0)}})), Error);
  EXPECT_THROW(eval1(K::Slice, {x}, attrs({{"starts", Ints{0, 0}}, {"ends", Ints{2, 9}}})), Error);
  EXPECT_THROW(eval1(K::Expand, {x}, attrs({{"shape", Ints{4, 3}}})), Error);
  EXPECT_THROW(
      eval1(K::DepthToSpace, {F({1, 3, 1, 1}, {1, 2, 3})}, attrs({{"blocksize", int64_t(2)}})),
      Error);
}

TEST(DataMovementKernels, EmptyDimensionsAndHugeResults) {
  Tensor empty(ElemKind::Float32, {0, 3});
  Tensor y =
      eval1(K::Slice, {empty},
            attrs({{"starts", Ints{0, 2}}, {"ends", Ints{-1, -1}}, {"steps", Ints{-1, -1}}}));
  EXPECT_EQ(y.dims(), (Shape{0, 3}));
  EXPECT_THROW(eval1(K::Expand, {F({1}, {1})}, attrs({{"shape", Ints{1 << 20, 1 << 20}}})), Error);
  EXPECT_THROW(eval1(K::Tile, {F({2}, {1, 2})}, attrs({{"repeats", Ints{int64_t(1) << 40}}})),
               Error);
  EXPECT_THROW(eval1(K::Resize, {empty}, attrs({{"sizes", Ints{2, 3}}})), Error);
}
