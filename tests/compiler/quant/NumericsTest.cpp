// docs/numerics.md sections 3-4.9 against values computed by hand (in the comments).
#include "ember/quantization/Numerics.h"
#include "ember/interpreter/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ember;
using namespace ember::quant;

namespace {

QuantParams pq(float s, int32_t zp) {
  QuantParams q;
  q.scales = {s};
  q.zeroPoints = {zp};
  return q;
}

TEST(QuantNumerics, QuantizeMultiplier) {
  // 0.5 = 0.5 * 2^0: M = 2^30, S = 31.  1.0 = 0.5 * 2^1: S = 30.
  EXPECT_EQ(quantizeMultiplier(0.5), (Multiplier{1 << 30, 31}));
  EXPECT_EQ(quantizeMultiplier(1.0), (Multiplier{1 << 30, 30}));
  // 0.75 * 2^31 = 1610612736.
  EXPECT_EQ(quantizeMultiplier(0.75), (Multiplier{1610612736, 31}));
  // f * 2^31 rounds to 2^31: halved, S decremented.
  EXPECT_EQ(quantizeMultiplier(1.0 - std::ldexp(1.0, -40)), (Multiplier{1 << 30, 30}));
  // S at both ends: 2^29 needs S = 1; 2^-32 needs S = 62; 2^-33 becomes 0.
  EXPECT_EQ(quantizeMultiplier(std::ldexp(1.0, 29)), (Multiplier{1 << 30, 1}));
  EXPECT_EQ(quantizeMultiplier(std::ldexp(1.0, -32)), (Multiplier{1 << 30, 62}));
  EXPECT_EQ(quantizeMultiplier(std::ldexp(1.0, -33)).M, 0);
  EXPECT_EQ(quantizeMultiplier(0.0).M, 0);
  EXPECT_THROW(quantizeMultiplier(std::ldexp(1.0, 30)), Error);
  EXPECT_THROW(quantizeMultiplier(-0.5), Error);
  EXPECT_THROW(quantizeMultiplier(NAN), Error);
}

TEST(QuantNumerics, Requantize) {
  const Multiplier half{1 << 30, 31}; // 0.5
  EXPECT_EQ(requantize(100, half, 0, -128, 127), 50);
  EXPECT_EQ(requantize(100, half, -7, -128, 127), 43);
  // Ties round half up (toward +inf): 2.5 -> 3, -2.5 -> -2, -3.5 -> -3.
  EXPECT_EQ(requantize(5, half, 0, -128, 127), 3);
  EXPECT_EQ(requantize(-5, half, 0, -128, 127), -2);
  EXPECT_EQ(requantize(-7, half, 0, -128, 127), -3);
  EXPECT_EQ(requantize(-6, half, 0, -128, 127), -3);
  // 0.75: 3 * 0.75 = 2.25 -> 2; -2.25 -> floor(-1.75) = -2.
  const Multiplier m75{1610612736, 31};
  EXPECT_EQ(requantize(3, m75, 0, -128, 127), 2);
  EXPECT_EQ(requantize(-3, m75, 0, -128, 127), -2);
  // Saturation and narrowed bounds.
  EXPECT_EQ(requantize(1000, half, 0, -128, 127), 127);
  EXPECT_EQ(requantize(-1000, half, 0, -128, 127), -128);
  EXPECT_EQ(requantize(-10, half, 10, 10, 127), 10);
  EXPECT_EQ(requantize(30, half, 10, -128, 20), 20);
  // S = 62 with extreme accumulators: |a| * 2^-32 < 0.5 rounds to 0.
  const Multiplier tiny{1 << 30, 62};
  EXPECT_EQ(requantize(INT32_MIN, tiny, 3, -128, 127), 3);
  EXPECT_EQ(requantize(INT32_MAX, tiny, 3, -128, 127), 3);
  // S = 1 (m = 2^29): 1 -> 2^29, saturates; -1 saturates low.
  const Multiplier big{1 << 30, 1};
  EXPECT_EQ(requantize(1, big, 0, -128, 127), 127);
  EXPECT_EQ(requantize(-1, big, 0, -128, 127), -128);
  EXPECT_EQ(requantize(0, big, -4, -128, 127), -4);
}

TEST(QuantNumerics, AddMultipliers) {
  // r = 0.5, 0.25: e = 0, S = 20, M = 2^19, 2^18.
  AddMultipliers m = addMultipliers(0.5, 0.25, 1.0);
  EXPECT_EQ(m.S, 20);
  EXPECT_EQ(m.Ma, 524288);
  EXPECT_EQ(m.Mb, 262144);
  // r = 1/3, 2/3: S = 20, M = round(349525.33) = 349525, round(699050.67) = 699051.
  m = addMultipliers(0.1, 0.2, 0.3);
  EXPECT_EQ(m.S, 20);
  EXPECT_EQ(m.Ma, 349525);
  EXPECT_EQ(m.Mb, 699051);
  // Tiny ratios: e = -19 gives S = 39, clamped to 31: M = 2^-20 * 2^31 = 2^11.
  m = addMultipliers(std::ldexp(1.0, -20), std::ldexp(1.0, -21), 1.0);
  EXPECT_EQ(m.S, 31);
  EXPECT_EQ(m.Ma, 2048);
  EXPECT_EQ(m.Mb, 1024);
  // r = 2^21 (e = 22): S clamps to 1, M = 2^22 >= 2^21: a compile error.
  EXPECT_THROW(addMultipliers(std::ldexp(1.0, 21), 1.0, 1.0), Error);
  EXPECT_THROW(addMultipliers(0.0, 1.0, 1.0), Error);
}

TEST(QuantNumerics, ActivationBounds) {
  Attrs relu;
  relu.set("activation", std::string("relu"));
  Node conv(NodeKind::Conv, "c", {}, {}, relu);
  Bounds b = activationBounds(conv, pq(0.1f, -20));
  EXPECT_EQ(b.lo, -20);
  EXPECT_EQ(b.hi, 127);
  // Clip(0, 6) with s = 0.05, zp = -128: q(0) = -128, q(6) = 120 - 128 = -8.
  Attrs clip;
  clip.set("activation", std::string("clip"));
  clip.set("activation_min", 0.0);
  clip.set("activation_max", 6.0);
  Node add(NodeKind::Add, "a", {}, {}, clip);
  b = activationBounds(add, pq(0.05f, -128));
  EXPECT_EQ(b.lo, -128);
  EXPECT_EQ(b.hi, -8);
  // Ties to even: 1.25 / 0.5 = 2.5 -> 2, 1.75 / 0.5 = 3.5 -> 4 (plus zp 5).
  clip.set("activation_min", 1.25);
  clip.set("activation_max", 1.75);
  Node gemm(NodeKind::Gemm, "g", {}, {}, clip);
  b = activationBounds(gemm, pq(0.5f, 5));
  EXPECT_EQ(b.lo, 7);
  EXPECT_EQ(b.hi, 9);
  // Unbounded max saturates; a huge min saturates at 127.
  clip.set("activation_min", -INFINITY);
  clip.set("activation_max", INFINITY);
  Node gemm2(NodeKind::Gemm, "g2", {}, {}, clip);
  b = activationBounds(gemm2, pq(0.5f, 5));
  EXPECT_EQ(b.lo, -128);
  EXPECT_EQ(b.hi, 127);
  // Standalone Relu / Clip nodes use their own semantics.
  Node r(NodeKind::Relu, "r", {}, {}, {});
  EXPECT_EQ(activationBounds(r, pq(0.1f, 12)).lo, 12);
  Attrs cl;
  cl.set("min", -1.0);
  cl.set("max", 1.0);
  Node c2(NodeKind::Clip, "cl", {}, {}, cl);
  b = activationBounds(c2, pq(0.02f, 5)); // -50 + 5, 50 + 5
  EXPECT_EQ(b.lo, -45);
  EXPECT_EQ(b.hi, 55);
  // No activation: the full range; per-channel result params are refused.
  Node plain(NodeKind::Conv, "p", {}, {}, {});
  b = activationBounds(plain, pq(0.1f, 0));
  EXPECT_EQ(b.lo, -128);
  EXPECT_EQ(b.hi, 127);
  QuantParams pc = pq(0.1f, 0);
  pc.scales.push_back(0.2f);
  pc.zeroPoints.push_back(0);
  EXPECT_THROW(activationBounds(plain, pc), Error);
}

TEST(QuantNumerics, ChooseActivationParams) {
  // [-1, 3]: s = 4/255, zp = round(-128 + 63.75) = -64.
  QuantParams q = chooseActivationParams(-1.f, 3.f);
  EXPECT_FLOAT_EQ(q.scales[0], 4.f / 255.f);
  EXPECT_EQ(q.zeroPoints[0], -64);
  // Positive range widened to 0: zp = -128; negative range: zp = 127.
  q = chooseActivationParams(0.5f, 2.f);
  EXPECT_FLOAT_EQ(q.scales[0], 2.f / 255.f);
  EXPECT_EQ(q.zeroPoints[0], -128);
  q = chooseActivationParams(-2.f, -1.f);
  EXPECT_EQ(q.zeroPoints[0], 127);
  q = chooseActivationParams(0.f, 0.f);
  EXPECT_EQ(q.scales[0], 1.f);
  EXPECT_EQ(q.zeroPoints[0], -128);
  EXPECT_THROW(chooseActivationParams(1.f, -1.f), Error);
  EXPECT_THROW(chooseActivationParams(0.f, INFINITY), Error);
}

TEST(QuantNumerics, WeightsAndBias) {
  // Channel 0: s = 1/127; 0.5 -> 63.5 (just above: float 1/127 is low) -> 64, -1 -> -127,
  // 0.25 -> 31.75 -> 32. Channel 1 all zero: s = 1.
  Tensor w = Tensor::fromVector<float>({2, 3}, {0.5f, -1.f, 0.25f, 0.f, 0.f, 0.f});
  Tensor q = quantizeWeights(w, 0);
  EXPECT_EQ(q.toVector<int8_t>(), (std::vector<int8_t>{64, -127, 32, 0, 0, 0}));
  EXPECT_EQ(q.type().quant.axis, 0);
  EXPECT_FLOAT_EQ(q.type().quant.scales[0], 1.f / 127.f);
  EXPECT_EQ(q.type().quant.scales[1], 1.f);
  // Along axis 1 ([K, N] Gemm weights): columns {0.5, 0}, {-1, 0}, {0.25, 0}: each column's
  // maximum maps to +-127.
  q = quantizeWeights(w, 1);
  EXPECT_EQ(q.toVector<int8_t>(), (std::vector<int8_t>{127, -127, 127, 0, 0, 0}));
  EXPECT_THROW(quantizeWeights(w, 2), Error);
  // Bias: 1 / (0.5 * 0.25) = 8; -2.5 / 0.5 = -5; 0.3125 / 0.125 = 2.5 -> 2 (even);
  // 1e12 saturates.
  Tensor b = Tensor::fromVector<float>({4}, {1.f, -2.5f, 0.3125f, 1e12f});
  Tensor qb = quantizeBias(b, 0.5f, {0.25f, 1.f, 0.25f, 0.25f});
  EXPECT_EQ(qb.toVector<int32_t>(), (std::vector<int32_t>{8, -5, 2, INT32_MAX}));
  EXPECT_FLOAT_EQ(qb.type().quant.scales[1], 0.5f);
  EXPECT_THROW(quantizeBias(b, 0.5f, {1.f, 2.f}), Error);
}

TEST(QuantNumerics, BuildLut) {
  // Identity with equal parameters: T[i] = i - 128.
  std::vector<int8_t> t = buildLut([](double v) { return v; }, pq(1.f, 0), pq(1.f, 0));
  for (int i = 0; i < 256; ++i)
    EXPECT_EQ(t[size_t(i)], i - 128);
  // Sigmoid, x: s = 0.1, zp = 0; y: s = 1/256, zp = -128.
  //   i = 128: sigmoid(0) * 256 = 128 -> 0;  i = 255: 255.99.. -> 256 -> 128 saturates 127;
  //   i = 0: sigmoid(-12.8) * 256 = 0.0007 -> 0 -> -128;
  //   i = 138: sigmoid(1) * 256 = 187.13 -> 187 -> 59.
  t = buildLut([](double v) { return 1 / (1 + std::exp(-v)); }, pq(0.1f, 0), pq(1.f / 256, -128));
  EXPECT_EQ(t[128], 0);
  EXPECT_EQ(t[255], 127);
  EXPECT_EQ(t[0], -128);
  EXPECT_EQ(t[138], 59);
  // The kinds a LUT expresses: HardSigmoid reads its attributes.
  Attrs hs;
  hs.set("alpha", 0.5);
  hs.set("beta", 0.25);
  Node h(NodeKind::HardSigmoid, "h", {}, {}, hs);
  auto f = lutFunctionOf(h);
  ASSERT_TRUE(bool(f));
  EXPECT_DOUBLE_EQ(f(1.0), 0.75);
  EXPECT_DOUBLE_EQ(f(4.0), 1.0);
  Node sm(NodeKind::Softmax, "s", {}, {}, {});
  EXPECT_FALSE(bool(lutFunctionOf(sm)));
}

/// One int8 input placeholder x of parameters `q` and shape `dims`.
Node* int8Input(Module& m, Shape dims, QuantParams q) {
  return m.createPlaceholder("x", Type(ElemKind::Int8, std::move(dims), std::move(q)));
}

TEST(QuantNumerics, LutAndRescaleKernels) {
  Module m;
  Function* f = m.createFunction("main");
  Node* x = int8Input(m, {4}, pq(0.5f, 10));
  // Table: T[i] = 127 - i / 2 (any table; the kernel only indexes it).
  std::vector<int8_t> table(256);
  for (int i = 0; i < 256; ++i)
    table[size_t(i)] = static_cast<int8_t>(127 - i / 2);
  Node* tab = m.createConstant("table", Tensor::fromVector<int8_t>({256}, table));
  Attrs la;
  la.set("function", std::string("Test"));
  Node* lut = f->create(NodeKind::Lut, "lut", {x->result(), tab->result()}, la,
                        std::vector<Type>{Type(ElemKind::Int8, {4}, pq(0.1f, 0))});
  // Rescale 0.5/10 -> 0.25/-5: m = 2: y = 2 * (x - 10) - 5.
  Node* rs = f->create(NodeKind::Rescale, "rs", {x->result()}, {},
                       std::vector<Type>{Type(ElemKind::Int8, {4}, pq(0.25f, -5))});
  f->addOutput("lut", lut->result());
  f->addOutput("rs", rs->result());
  Tensor xin = Tensor::fromVector<int8_t>({4}, {20, -128, 127, 10});
  xin.mutableType().quant = pq(0.5f, 10);
  TensorMap out = Interpreter(*f).run({{"x", xin}});
  // x + 128 = 148, 0, 255, 138 -> 127 - 74, 127, 127 - 127, 127 - 69.
  EXPECT_EQ(out["lut"].toVector<int8_t>(), (std::vector<int8_t>{53, 127, 0, 58}));
  // 20 -> 15; -128 -> -281 -> -128; 127 -> 229 -> 127; 10 -> -5.
  EXPECT_EQ(out["rs"].toVector<int8_t>(), (std::vector<int8_t>{15, -128, 127, -5}));
}

TEST(QuantNumerics, LutNodeChecksItsTable) {
  Module m;
  Function* f = m.createFunction("main");
  Node* x = int8Input(m, {4}, pq(0.5f, 10));
  Node* tab = m.createConstant("table", Tensor::fromVector<int8_t>({2}, {1, 2}));
  EXPECT_THROW(f->create(NodeKind::Lut, "lut", {x->result(), tab->result()}), Error);
}

} // namespace

namespace {

TEST(QuantNumerics, DataMovementMovesCodesAndKeepsParameters) {
  // x = [[1, 2, 3], [4, 5, 6]] (codes); Transpose -> [[1, 4], [2, 5], [3, 6]];
  // Slice of row 1 -> [4, 5, 6]; Concat(x, x) on axis 0; Gather rows {1, 0}.
  Module m;
  Function* f = m.createFunction("main");
  const QuantParams q = pq(0.25f, -7);
  Node* x = int8Input(m, {2, 3}, q);
  auto t8 = [&](Shape d) { return std::vector<Type>{Type(ElemKind::Int8, std::move(d), q)}; };
  Attrs ta;
  ta.set("perm", std::vector<int64_t>{1, 0});
  Node* tr = f->create(NodeKind::Transpose, "tr", {x->result()}, ta, t8({3, 2}));
  Attrs sa;
  sa.set("starts", std::vector<int64_t>{1, 0});
  sa.set("ends", std::vector<int64_t>{2, 3});
  sa.set("steps", std::vector<int64_t>{1, 1});
  Node* sl = f->create(NodeKind::Slice, "sl", {x->result()}, sa, t8({1, 3}));
  Attrs ca;
  ca.set("axis", int64_t(0));
  Node* cat = f->create(NodeKind::Concat, "cat", {x->result(), x->result()}, ca, t8({4, 3}));
  Node* idx = m.createConstant("idx", Tensor::fromVector<int64_t>({2}, {1, 0}));
  Attrs ga;
  ga.set("axis", int64_t(0));
  Node* ga_ = f->create(NodeKind::Gather, "ga", {x->result(), idx->result()}, ga, t8({2, 3}));
  for (Node* n : {tr, sl, cat, ga_})
    f->addOutput(n->name(), n->result());
  Tensor xin = Tensor::fromVector<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  xin.mutableType().quant = q;
  TensorMap out = Interpreter(*f).run({{"x", xin}});
  EXPECT_EQ(out["tr"].toVector<int8_t>(), (std::vector<int8_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(out["sl"].toVector<int8_t>(), (std::vector<int8_t>{4, 5, 6}));
  EXPECT_EQ(out["cat"].toVector<int8_t>(),
            (std::vector<int8_t>{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(out["ga"].toVector<int8_t>(), (std::vector<int8_t>{4, 5, 6, 1, 2, 3}));
  EXPECT_EQ(out["tr"].type().quant, q);
}

} // namespace
