// Elementwise kernels on small hand-computed cases: broadcasting, int64 arithmetic
// (the importer folds shape arithmetic with it), comparisons, Where, Cast, Clip, and
// the ill-formed cases that must be errors naming the node.
#include "OpsTestUtil.h"

#include "ember/support/Error.h"

#include <limits>

using namespace ember;
using namespace ember::test;
using K = NodeKind;

TEST(ElementwiseKernels, AddBroadcastsTrailingVector) {
  Tensor y = eval1(K::Add, {F({2, 3}, {1, 2, 3, 4, 5, 6}), F({3}, {10, 20, 30})});
  expectFloats(y, {2, 3}, {11, 22, 33, 14, 25, 36});
}

TEST(ElementwiseKernels, AddBroadcastsBothOperands) {
  Tensor y = eval1(K::Add, {F({2, 1}, {1, 2}), F({1, 3}, {10, 20, 30})});
  expectFloats(y, {2, 3}, {11, 21, 31, 12, 22, 32});
}

TEST(ElementwiseKernels, ScalarTimesTensor) {
  Tensor y = eval1(K::Mul, {F({}, {2}), F({2, 2}, {1, 2, 3, 4})});
  expectFloats(y, {2, 2}, {2, 4, 6, 8});
}

TEST(ElementwiseKernels, Int64ArithmeticTruncatesDivision) {
  Tensor a = I64({4}, {-7, 7, -7, 7}), b = I64({4}, {2, 2, -2, -2});
  expectExact<int64_t>(eval1(K::Div, {a, b}), {4}, {-3, 3, 3, -3});
  expectExact<int64_t>(eval1(K::Sub, {a, b}), {4}, {-9, 5, -5, 9});
  expectExact<int64_t>(eval1(K::Mul, {a, I64({}, {3})}), {4}, {-21, 21, -21, 21});
  expectExact<int64_t>(eval1(K::Add, {a, I64({1}, {1})}), {4}, {-6, 8, -6, 8});
}

// Integer overflow wraps around (two's complement) as in NumPy/ONNX Runtime; a fuzzer
// found the signed overflow (undefined behaviour) of int64 Add.
TEST(ElementwiseKernels, Int64OverflowWraps) {
  const int64_t big = std::numeric_limits<int64_t>::max(),
                small = std::numeric_limits<int64_t>::min();
  expectExact<int64_t>(eval1(K::Add, {I64({2}, {big, small}), I64({2}, {1, -1})}), {2},
                       {small, big});
  expectExact<int64_t>(eval1(K::Sub, {I64({1}, {small}), I64({1}, {1})}), {1}, {big});
  expectExact<int64_t>(eval1(K::Mul, {I64({1}, {big}), I64({1}, {2})}), {1}, {-2});
  expectExact<int64_t>(eval1(K::Neg, {I64({1}, {small})}), {1}, {small});
}

TEST(ElementwiseKernels, IntegerDivisionByZeroIsAnError) {
  try {
    eval1(K::Div, {I64({1}, {1}), I64({1}, {0})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("division by zero"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'node'"), std::string::npos) << e.what();
  }
}

TEST(ElementwiseKernels, ModPythonAndC) {
  Tensor a = T_<int32_t>({4}, {-7, 7, -7, 7}), b = T_<int32_t>({4}, {3, 3, -3, -3});
  expectExact<int32_t>(eval1(K::Mod, {a, b}), {4}, {2, 1, -1, -2});
  expectExact<int32_t>(eval1(K::Mod, {a, b}, attrs({{"fmod", int64_t(1)}})), {4}, {-1, 1, -1, 1});
  expectFloats(
      eval1(K::Mod, {F({2}, {-5.5f, 5.5f}), F({2}, {2, 2})}, attrs({{"fmod", int64_t(1)}})), {2},
      {-1.5f, 1.5f});
}

TEST(ElementwiseKernels, ComparisonsGiveBool) {
  Tensor a = I64({3}, {1, 2, 3}), b = I64({1}, {2});
  expectExact<bool>(eval1(K::Equal, {a, b}), {3}, {false, true, false});
  expectExact<bool>(eval1(K::Less, {a, b}), {3}, {true, false, false});
  expectExact<bool>(eval1(K::GreaterOrEqual, {a, b}), {3}, {false, true, true});
  Tensor t = T_<bool>({2}, {true, false}), u = T_<bool>({2}, {true, true});
  expectExact<bool>(eval1(K::Xor, {t, u}), {2}, {false, true});
  expectExact<bool>(eval1(K::Not, {t}), {2}, {false, true});
}

TEST(ElementwiseKernels, WhereBroadcastsThreeOperands) {
  Tensor y = eval1(K::Where, {T_<bool>({2, 1}, {true, false}), F({3}, {1, 2, 3}), F({}, {9})});
  expectFloats(y, {2, 3}, {1, 2, 3, 9, 9, 9});
  Tensor yi = eval1(K::Where, {T_<bool>({2}, {false, true}), I64({2}, {1, 2}), I64({2}, {7, 8})});
  expectExact<int64_t>(yi, {2}, {7, 2});
}

TEST(ElementwiseKernels, CastTruncatesTowardZero) {
  Tensor x = F({3}, {1.7f, -1.7f, 0});
  expectExact<int64_t>(eval1(K::Cast, {x}, attrs({{"to", std::string("int64")}})), {3}, {1, -1, 0});
  expectExact<bool>(eval1(K::Cast, {x}, attrs({{"to", std::string("bool")}})), {3},
                    {true, true, false});
  expectFloats(eval1(K::Cast, {I64({2}, {-3, 5})}, attrs({{"to", std::string("float32")}})), {2},
               {-3, 5});
}

TEST(ElementwiseKernels, PowWithExponentOfAnotherKind) {
  expectExact<int64_t>(eval1(K::Pow, {I64({2}, {2, 3}), F({2}, {3, 2})}), {2}, {8, 9});
  expectFloats(eval1(K::Pow, {F({2}, {4, 2}), F({}, {0.5f})}), {2}, {2, 1.41421356f});
}

TEST(ElementwiseKernels, ClipBoundsAndMinAboveMax) {
  expectExact<int32_t>(
      eval1(K::Clip, {T_<int32_t>({3}, {-5, 0, 5})}, attrs({{"min", -1.0}, {"max", 1.0}})), {3},
      {-1, 0, 1});
  // ONNX: when min > max every value becomes max.
  expectFloats(eval1(K::Clip, {F({3}, {-5, 0, 5})}, attrs({{"min", 5.0}, {"max", 2.0}})), {3},
               {2, 2, 2});
  expectFloats(eval1(K::Clip, {F({2}, {-5, 5})}, attrs({{"max", 1.0}})), {2}, {-5, 1});
}

TEST(ElementwiseKernels, UnaryMapsAndTheirAttributes) {
  expectExact<int32_t>(eval1(K::Relu, {T_<int32_t>({2}, {-2, 3})}), {2}, {0, 3});
  expectExact<int64_t>(eval1(K::Abs, {I64({2}, {-2, 3})}), {2}, {2, 3});
  expectExact<int64_t>(eval1(K::Sign, {I64({3}, {-9, 0, 4})}), {3}, {-1, 0, 1});
  expectFloats(eval1(K::Sigmoid, {F({1}, {0})}), {1}, {0.5f});
  expectFloats(eval1(K::LeakyRelu, {F({2}, {-100, 3})}), {2}, {-1, 3});
  expectFloats(eval1(K::LeakyRelu, {F({1}, {-10})}, attrs({{"alpha", 0.5}})), {1}, {-5});
  expectFloats(eval1(K::Round, {F({5}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f})}), {5}, {0, 2, 2, 0, -2});
  expectFloats(eval1(K::HardSigmoid, {F({3}, {-10, 0, 10})}), {3}, {0, 0.5f, 1});
  expectFloats(eval1(K::HardSwish, {F({3}, {-4, 1, 4})}), {3}, {0, 1 * (1 / 6.f + 0.5f), 4});
  expectFloats(eval1(K::Shrink, {F({3}, {-2, 0.2f, 2})}, attrs({{"bias", 0.5}, {"lambd", 1.0}})),
               {3}, {-1.5f, 0, 1.5f});
  expectExact<bool>(
      eval1(K::IsInf, {F({3}, {INFINITY, -INFINITY, 1})}, attrs({{"detect_negative", int64_t(0)}})),
      {3}, {true, false, false});
}

TEST(ElementwiseKernels, ShapesThatDoNotBroadcastNameTheNode) {
  Module m;
  Function* f = m.createFunction("t");
  Node* a = m.createConstant("a", F({2, 3}, {1, 2, 3, 4, 5, 6}));
  Node* b = m.createConstant("b", F({4}, {1, 2, 3, 4}));
  try {
    f->create(K::Add, "bad_add", {a, b});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("bad_add"), std::string::npos) << msg;
    EXPECT_NE(msg.find("do not broadcast"), std::string::npos) << msg;
  }
}

TEST(ElementwiseKernels, MixedKindsAreRejected) {
  Module m;
  Function* f = m.createFunction("t");
  Node* a = m.createConstant("a", F({2}, {1, 2}));
  Node* b = m.createConstant("b", I64({2}, {1, 2}));
  EXPECT_THROW(f->create(K::Add, "mixed", {a, b}), Error);
}

TEST(ElementwiseKernels, MinimumDividedByMinusOneWrapsInsteadOfTrapping) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  expectExact<int64_t>(eval1(K::Div, {I64({1}, {lo}), I64({1}, {-1})}), {1}, {lo});
  expectExact<int64_t>(eval1(K::Mod, {I64({1}, {lo}), I64({1}, {-1})}), {1}, {0});
  expectExact<int8_t>(eval1(K::Div, {T_<int8_t>({1}, {-128}), T_<int8_t>({1}, {-1})}), {1}, {-128});
}
