// fuse-activation, fuse-silu-gelu, the Silu / Gelu kernels and the fused-activation
// attribute in the float kernels.
#include "PassTestUtil.h"

#include "ember/graph/attrs/FusedActivation.h"
#include "ember/support/Error.h"

namespace ember {
namespace {

using namespace passtest;

TEST(SiluGeluKernels, MatchTheirDefinitions) {
  G g;
  NodeValue x = g.input("x", {7});
  g.output("silu", g.node(NodeKind::Silu, "s", {x}));
  g.output("gelu", g.node(NodeKind::Gelu, "g", {x}));
  const std::vector<float> xs = {-6.f, -1.5f, -0.25f, 0.f, 0.3f, 1.f, 5.f};
  const TensorMap out = g.run({{"x", Tensor::fromVector<float>({7}, xs)}});
  for (size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i];
    EXPECT_NEAR(out.at("silu").data<float>()[i], v / (1 + std::exp(-v)), 1e-6);
    EXPECT_NEAR(out.at("gelu").data<float>()[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))),
                1e-6);
  }
}

TEST(FusedActivationKernels, ConvGemmMatMulAddHonourTheAttribute) {
  // Each kind computed with and without a fused clip; expected = clamp of the plain
  // result, computed here.
  struct Case {
    NodeKind kind;
    std::vector<Shape> shapes;
  };
  const Case cases[] = {{NodeKind::Conv, {{1, 2, 5, 5}, {3, 2, 3, 3}}},
                        {NodeKind::Gemm, {{4, 6}, {6, 5}, {5}}},
                        {NodeKind::MatMul, {{2, 3, 4}, {4, 5}}},
                        {NodeKind::Add, {{3, 4}, {4}}}};
  for (const Case& c : cases) {
    G g;
    std::vector<NodeValue> in;
    for (size_t i = 0; i < c.shapes.size(); ++i)
      in.push_back(g.input("in" + std::to_string(i), c.shapes[i]));
    FusedActivation clip;
    clip.kind = FusedActivation::Kind::Clip;
    clip.lo = -0.3;
    clip.hi = 0.5;
    Attrs withClip, withRelu;
    clip.writeTo(withClip);
    withRelu.set(kActivationAttr, std::string("relu"));
    g.output("plain", g.node(c.kind, "plain", in));
    g.output("clip", g.node(c.kind, "clip", in, withClip));
    g.output("relu", g.node(c.kind, "relu", in, withRelu));
    const TensorMap out = g.run(g.randomInputs());
    const Tensor &p = out.at("plain"), &cl = out.at("clip"), &re = out.at("relu");
    int clipped = 0;
    for (int64_t i = 0; i < p.size(); ++i) {
      const float v = p.data<float>()[i];
      EXPECT_EQ(cl.data<float>()[i], std::min(std::max(v, -0.3f), 0.5f)) << nodeKindName(c.kind);
      EXPECT_EQ(re.data<float>()[i], std::max(v, 0.f)) << nodeKindName(c.kind);
      clipped += v < -0.3f || v > 0.5f;
    }
    EXPECT_GT(clipped, 0) << nodeKindName(c.kind); // the test exercises the clamp
  }
}

TEST(FusedActivationKernels, UnknownActivationIsAnErrorNamingTheNode) {
  G g;
  NodeValue x = g.input("x", {2});
  Attrs a;
  a.set(kActivationAttr, std::string("swish"));
  g.output("y", g.node(NodeKind::Add, "bad_add", {x, x}, a));
  try {
    g.run(g.randomInputs());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad_add"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("swish"), std::string::npos) << e.what();
  }
}

TEST(FusedActivationKernels, IntegerResultsClampByValueQuantizedOnesInTheIntegerDomain) {
  G g;
  NodeValue a = g.m.createPlaceholder("a", Type(ElemKind::Int64, {4}))->result();
  Attrs relu;
  relu.set(kActivationAttr, std::string("relu"));
  g.output("y", g.node(NodeKind::Add, "iadd", {a, a}, relu));
  const TensorMap out = g.run({{"a", Tensor::fromVector<int64_t>({4}, {-3, -1, 0, 2})}});
  EXPECT_EQ(out.at("y").toVector<int64_t>(), (std::vector<int64_t>{0, 0, 0, 4}));

  G q;
  QuantParams qp;
  qp.scales = {0.5f};
  qp.zeroPoints = {3};
  const Type t(ElemKind::Int8, {2}, qp);
  NodeValue x = q.m.createPlaceholder("x", t)->result();
  q.output("y", q.f->create(NodeKind::Add, "qadd", {x, x}, relu, std::vector<Type>{t})->result());
  // The int8 Add kernel applies the bound to the codes (docs/numerics.md 4.9): codes 0
  // are -1.5 each, the sum -3 is cut by ReLU to 0, which is the zero point's code 3.
  Tensor in(t);
  const TensorMap qout = q.run({{"x", in}});
  EXPECT_EQ(qout.at("y").toVector<int8_t>(), (std::vector<int8_t>{3, 3}));
}

TEST(FuseActivation, ReluAndClipFuseIntoSingleUseProducers) {
  G g;
  NodeValue x = g.input("x", {1, 3, 6, 6});
  NodeValue c = g.node(NodeKind::Conv, "conv", {x, g.constant("w", {4, 3, 3, 3})});
  NodeValue r = g.node(NodeKind::Relu, "relu", {c});
  NodeValue flat =
      g.node(NodeKind::Reshape, "flat", {r}, attrs({{"shape", std::vector<int64_t>{1, 64}}}));
  NodeValue gm = g.node(NodeKind::Gemm, "fc", {flat, g.constant("fw", {64, 8})});
  NodeValue six = g.node(NodeKind::Clip, "relu6", {gm}, attrs({{"min", 0.0}, {"max", 0.2}}));
  NodeValue mm = g.node(NodeKind::MatMul, "mm", {six, g.constant("m", {8, 8})});
  NodeValue lo = g.node(NodeKind::Clip, "min_only", {mm}, attrs({{"min", 0.0}}));
  NodeValue add = g.node(NodeKind::Add, "add", {lo, g.input("y", {1, 8})});
  g.output("out", g.node(NodeKind::Clip, "clip", {add}, attrs({{"min", -0.1}, {"max", 0.1}})));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runFuseActivation(f); }), 4u);
  EXPECT_EQ(g.count(NodeKind::Relu), 0u);
  EXPECT_EQ(g.count(NodeKind::Clip), 0u);
  EXPECT_EQ(g.f->findNode("conv")->attrs().getString(kActivationAttr), "relu");
  EXPECT_EQ(g.f->findNode("fc")->attrs().getString(kActivationAttr), "clip");
  EXPECT_EQ(g.f->findNode("fc")->attrs().getFloat(kActivationMaxAttr), 0.2);
  // Clip(min = 0): a clip with an infinite upper bound (it keeps NaN, unlike Relu).
  EXPECT_EQ(g.f->findNode("mm")->attrs().getString(kActivationAttr), "clip");
  EXPECT_EQ(g.f->findNode("mm")->attrs().getFloat(kActivationMinAttr), 0.0);
  EXPECT_TRUE(std::isinf(g.f->findNode("mm")->attrs().getFloat(kActivationMaxAttr)));
  EXPECT_EQ(g.f->findNode("add")->attrs().getFloat(kActivationMinAttr), -0.1);
}

TEST(FuseActivation, DoesNotFuseWhenTheProducerHasOtherUsesOrCannotCarryIt) {
  G g;
  NodeValue x = g.input("x", {4, 4});
  NodeValue a = g.node(NodeKind::Add, "add", {x, x});
  NodeValue r = g.node(NodeKind::Relu, "relu", {a});
  g.output("r", r);
  g.output("a", g.node(NodeKind::Exp, "second_use", {a})); // Relu's producer has 2 uses
  NodeValue s = g.node(NodeKind::Sub, "sub", {x, x});      // Sub cannot carry one
  g.output("s", g.node(NodeKind::Relu, "relu2", {s}));
  NodeValue a2 = g.node(NodeKind::Add, "add2", {x, x});
  g.output("a2", a2); // the producer itself is an output
  g.output("r2", g.node(NodeKind::Relu, "relu3", {a2}));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runFuseActivation(f); }), 0u);
  EXPECT_EQ(g.count(NodeKind::Relu), 3u);
  EXPECT_FALSE(g.f->findNode("add")->attrs().has(kActivationAttr));
}

TEST(FuseSiluGelu, SiluInEitherOperandOrderButNotSqueezeExcite) {
  G g;
  NodeValue x = g.input("x", {2, 8});
  NodeValue s1 = g.node(NodeKind::Mul, "silu1", {x, g.node(NodeKind::Sigmoid, "sig1", {x})});
  NodeValue s2 = g.node(NodeKind::Mul, "silu2", {g.node(NodeKind::Sigmoid, "sig2", {s1}), s1});
  // x * sigmoid(y) with y != x: a gate, not SiLU.
  NodeValue gate = g.node(NodeKind::Mul, "gate", {s2, g.node(NodeKind::Sigmoid, "sig3", {x})});
  g.output("y", gate);
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runFuseSiluGelu(f); }), 2u);
  EXPECT_EQ(g.count(NodeKind::Silu), 2u);
  ASSERT_NE(g.f->findNode("silu1"), nullptr); // the Silu takes the Mul's name
  EXPECT_EQ(g.f->findNode("silu1")->kind(), NodeKind::Silu);
  EXPECT_EQ(g.count(NodeKind::Sigmoid), 1u);
  EXPECT_EQ(g.count(NodeKind::Mul), 1u);
}

/// torch's GELU: variant 0: ((1+erf(x/sqrt2)) * x) * 0.5 (operands swapped where odd),
/// 1: x * 0.5 * (1+erf(x*(1/sqrt2))), 2: ((1+erf) * 0.5) * x.
NodeValue geluPattern(G& g, NodeValue x, int variant, bool swap, const std::string& p) {
  NodeValue d = variant == 1
                    ? g.node(NodeKind::Mul, p + "mul_rsqrt2", {x, g.scalar(p + "r", 0.70710678f)})
                    : g.node(NodeKind::Div, p + "div", {x, g.scalar(p + "s", 1.4142135f)});
  NodeValue e = g.node(NodeKind::Erf, p + "erf", {d});
  NodeValue one = g.scalar(p + "one", 1.f), half = g.scalar(p + "half", 0.5f);
  NodeValue a = g.node(NodeKind::Add, p + "add",
                       swap ? std::vector<NodeValue>{one, e} : std::vector<NodeValue>{e, one});
  if (variant == 0) {
    NodeValue m = g.node(NodeKind::Mul, p + "mul_x",
                         swap ? std::vector<NodeValue>{a, x} : std::vector<NodeValue>{x, a});
    return g.node(NodeKind::Mul, p + "mul_half",
                  swap ? std::vector<NodeValue>{half, m} : std::vector<NodeValue>{m, half});
  }
  if (variant == 1) {
    NodeValue h = g.node(NodeKind::Mul, p + "half_x",
                         swap ? std::vector<NodeValue>{half, x} : std::vector<NodeValue>{x, half});
    return g.node(NodeKind::Mul, p + "mul",
                  swap ? std::vector<NodeValue>{a, h} : std::vector<NodeValue>{h, a});
  }
  NodeValue h = g.node(NodeKind::Mul, p + "half_a", {a, half});
  return g.node(NodeKind::Mul, p + "mul", {x, h});
}

TEST(FuseSiluGelu, GeluInEveryAssociationAndOperandOrder) {
  for (int variant = 0; variant < 3; ++variant)
    for (bool swap : {false, true}) {
      G g;
      NodeValue x = g.input("x", {3, 16});
      g.output("y", geluPattern(g, x, variant, swap, "g."));
      EXPECT_EQ(g.f->numNodes(), 5u);
      EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runFuseSiluGelu(f); }), 1u)
          << variant << swap;
      EXPECT_EQ(g.f->numNodes(), 1u) << variant << swap;
      EXPECT_EQ(g.count(NodeKind::Gelu), 1u);
    }
}

TEST(FuseSiluGelu, NoGeluWhenAConstantIsWrong) {
  G g;
  NodeValue x = g.input("x", {4});
  NodeValue d = g.node(NodeKind::Div, "div", {x, g.scalar("s", 1.5f)}); // not sqrt(2)
  NodeValue a =
      g.node(NodeKind::Add, "add", {g.node(NodeKind::Erf, "erf", {d}), g.scalar("one", 1.f)});
  NodeValue m = g.node(NodeKind::Mul, "mul", {x, a});
  g.output("y", g.node(NodeKind::Mul, "half", {m, g.scalar("h", 0.5f)}));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runFuseSiluGelu(f); }), 0u);
  EXPECT_EQ(g.count(NodeKind::Gelu), 0u);
}

/// torch's decomposed LayerNorm over the last `axes` axes of x: variant 0 squares with
/// Pow(d, 2) and has scale and bias; 1 squares with d * d, eps first in the Add, scale
/// only; 2 has neither.
NodeValue layerNormPattern(G& g, NodeValue x, int variant, int64_t axes, const Shape& inner,
                           const std::string& p = "") {
  std::vector<int64_t> ax;
  for (int64_t i = 0; i < axes; ++i)
    ax.push_back(-axes + i);
  const Attrs r = attrs({{"axes", ax}, {"keepdims", int64_t(1)}});
  NodeValue mean = g.node(NodeKind::ReduceMean, p + "mean", {x}, r);
  NodeValue d = g.node(NodeKind::Sub, p + "sub", {x, mean});
  NodeValue sq = variant == 1 ? g.node(NodeKind::Mul, p + "sq", {d, d})
                              : g.node(NodeKind::Pow, p + "pow", {d, g.scalar(p + "two", 2.f)});
  NodeValue var = g.node(NodeKind::ReduceMean, p + "var", {sq}, r);
  NodeValue eps = g.scalar(p + "eps", 1e-5f);
  NodeValue ve =
      g.node(NodeKind::Add, p + "add_eps",
             variant == 1 ? std::vector<NodeValue>{eps, var} : std::vector<NodeValue>{var, eps});
  NodeValue y = g.node(NodeKind::Div, p + "div", {d, g.node(NodeKind::Sqrt, p + "sqrt", {ve})});
  if (variant < 2)
    y = g.node(NodeKind::Mul, p + "scale", {y, g.constant(p + "gamma", inner, 0.5f, 1.5f)});
  if (variant == 0)
    y = g.node(NodeKind::Add, p + "shift", {g.constant(p + "beta", inner), y});
  return y;
}

TEST(FuseLayerNorm, TorchDecompositionsBecomeOneNode) {
  for (int variant = 0; variant < 3; ++variant)
    for (int64_t axes : {1, 2}) {
      G g;
      NodeValue x = g.input("x", {2, 5, 12});
      const Shape inner = axes == 1 ? Shape{12} : Shape{1, 12}; // broadcast over axis -2
      g.output("y", layerNormPattern(g, x, variant, axes, inner));
      EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runFuseLayerNorm(f); }), 1u)
          << variant << " " << axes;
      EXPECT_EQ(g.f->numNodes(), 1u) << variant;
      const Node* ln = g.f->outputs()[0].value.node;
      ASSERT_EQ(ln->kind(), NodeKind::LayerNormalization);
      EXPECT_EQ(ln->attrs().getInt("axis"), 3 - axes);
      EXPECT_EQ(ln->numInputs() > 2 && ln->input(2), variant == 0);
      EXPECT_EQ(ln->input(1).dims(), Shape(axes == 1 ? Shape{12} : Shape{5, 12}));
    }
}

TEST(FuseLayerNorm, TwoInOneFunctionBothFuse) {
  // Each fusion erases the pattern's nodes; the pass must not walk them afterwards (it
  // did once: a use-after-free that ASan found).
  G g;
  NodeValue x = g.input("x", {3, 10});
  NodeValue y = layerNormPattern(g, x, 0, 1, {10});
  NodeValue z = layerNormPattern(g, g.node(NodeKind::Relu, "relu", {y}), 1, 1, {10}, "second.");
  g.output("z", z);
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runFuseLayerNorm(f); }), 2u);
  EXPECT_EQ(g.count(NodeKind::LayerNormalization), 2u);
  EXPECT_EQ(g.f->numNodes(), 3u);
}

TEST(FuseLayerNorm, NoFusionWhenTheMeansDifferOrTheCentredValueEscapes) {
  {
    G g; // the variance over another axis than the mean
    NodeValue x = g.input("x", {3, 8});
    const Attrs last = attrs({{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t(1)}});
    const Attrs first = attrs({{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t(1)}});
    NodeValue d = g.node(NodeKind::Sub, "sub", {x, g.node(NodeKind::ReduceMean, "m", {x}, last)});
    NodeValue v = g.node(NodeKind::ReduceMean, "v", {g.node(NodeKind::Mul, "sq", {d, d})}, first);
    NodeValue s =
        g.node(NodeKind::Sqrt, "s", {g.node(NodeKind::Add, "a", {v, g.scalar("e", 1e-5f)})});
    g.output("y", g.node(NodeKind::Div, "div", {d, s}));
    EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runFuseLayerNorm(f); }), 0u);
  }
  {
    G g; // a scale that varies along a non-normalised axis is not a LayerNorm scale
    NodeValue x = g.input("x", {3, 8});
    NodeValue y = layerNormPattern(g, x, 2, 1, {8});
    g.output("y", g.node(NodeKind::Mul, "scale", {y, g.constant("gamma", {3, 1})}));
    EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runFuseLayerNorm(f); }), 1u);
    EXPECT_EQ(g.count(NodeKind::LayerNormalization), 1u);
    EXPECT_EQ(g.count(NodeKind::Mul), 1u); // stays outside
  }
}

} // namespace
} // namespace ember
