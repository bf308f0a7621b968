// sink-permutation: regions between a Transpose and its inverse rewritten in the layout
// before it (ConvNeXt's channels-last block), checked against the unrewritten graph on the
// float interpreter; regions that must stay as they are.
#include "PassTestUtil.h"

#include <cmath>

namespace ember {
namespace {

using namespace passtest;

const std::vector<int64_t> kToLast = {0, 2, 3, 1}, kToFirst = {0, 3, 1, 2};

NodeValue transpose(G& g, const std::string& name, NodeValue v, std::vector<int64_t> perm) {
  return g.node(NodeKind::Transpose, name, {v}, attrs({{"perm", perm}}));
}

/// torch's nn.Linear on a channels-last value: MatMul by W [C, K] + bias [K].
NodeValue linear(G& g, const std::string& p, NodeValue x, int64_t c, int64_t k) {
  NodeValue m = g.node(NodeKind::MatMul, p + "matmul", {x, g.constant(p + "w", {c, k})});
  return g.node(NodeKind::Add, p + "add", {g.constant(p + "b", {k}), m});
}

/// torch's erf GELU: x * (1 + Erf(x / sqrt 2)) * 0.5.
NodeValue gelu(G& g, const std::string& p, NodeValue x) {
  NodeValue d = g.node(NodeKind::Div, p + "div", {x, g.scalar(p + "sqrt2", std::sqrt(2.f))});
  NodeValue e = g.node(NodeKind::Erf, p + "erf", {d});
  NodeValue a = g.node(NodeKind::Add, p + "add", {e, g.scalar(p + "one", 1.f)});
  NodeValue m = g.node(NodeKind::Mul, p + "mul", {x, a});
  return g.node(NodeKind::Mul, p + "mul1", {m, g.scalar(p + "half", 0.5f)});
}

/// One ConvNeXt block as torchvision exports it (opset 17): depthwise 7x7 Conv, Transpose
/// to channels-last, LayerNormalization over C, Linear C -> 4C, GELU, Linear 4C -> C,
/// Transpose back, layer scale [C, 1, 1], residual Add.
NodeValue convNextBlock(G& g, const std::string& p, NodeValue x, int64_t c) {
  NodeValue dw = g.node(NodeKind::Conv, p + "dwconv",
                        {x, g.constant(p + "dw.w", {c, 1, 7, 7}), g.constant(p + "dw.b", {c})},
                        attrs({{"group", c}, {"pads", std::vector<int64_t>{3, 3, 3, 3}}}));
  NodeValue t = transpose(g, p + "to_last", dw, kToLast);
  NodeValue ln = g.node(NodeKind::LayerNormalization, p + "norm",
                        {t, g.constant(p + "ln.s", {c}, 0.5f, 1.5f), g.constant(p + "ln.b", {c})},
                        attrs({{"axis", int64_t(-1)}, {"epsilon", 1e-6}}));
  NodeValue h = gelu(g, p + "gelu.", linear(g, p + "fc1.", ln, c, 4 * c));
  NodeValue y = linear(g, p + "fc2.", h, 4 * c, c);
  NodeValue back = transpose(g, p + "to_first", y, kToFirst);
  NodeValue scaled = g.node(NodeKind::Mul, p + "scale", {g.constant(p + "gamma", {c, 1, 1}), back});
  return g.node(NodeKind::Add, p + "residual", {scaled, x});
}

/// The kind of the single node that reads `n`, or Constant when there is not exactly one.
NodeKind singleUserKind(const Function& f, const Node* n) {
  const Node* user = nullptr;
  for (const auto& m : f.nodes())
    for (const NodeValue& v : m->inputs())
      if (v.node == n) {
        if (user)
          return NodeKind::Constant;
        user = m.get();
      }
  return user ? user->kind() : NodeKind::Constant;
}

size_t sinkPermutation(Function& f) {
  return runSinkPermutation(f);
}

TEST(SinkPermutation, ConvNextBlockBecomesConvolutions) {
  G g;
  NodeValue x = g.input("x", {2, 16, 9, 7});
  g.output("y", convNextBlock(g, "b1.", convNextBlock(g, "b0.", x, 16), 16));
  EXPECT_EQ(checkPassKeepsResults(g, sinkPermutation), 2u);
  EXPECT_EQ(g.count(NodeKind::MatMul), 0u);
  EXPECT_EQ(g.count(NodeKind::Conv), 6u); // per block: depthwise + two 1x1
  // Each LayerNormalization over the channels-last axis became a channel LayerNorm on
  // NCHW: no Transpose is left.
  EXPECT_EQ(g.count(NodeKind::LayerNormalization), 0u);
  EXPECT_EQ(g.count(NodeKind::ChannelLayerNormalization), 2u);
  EXPECT_EQ(g.count(NodeKind::Transpose), 0u);
  for (const auto& n : g.f->nodes()) {
    if (n->kind() == NodeKind::ChannelLayerNormalization) {
      EXPECT_EQ(n->input(0).node->kind(), NodeKind::Conv) << n->name(); // the depthwise Conv
      EXPECT_EQ(n->attrs().getFloat("epsilon", 0), 1e-6);
      EXPECT_EQ(singleUserKind(*g.f, n.get()), NodeKind::Conv) << n->name();
    }
    if (n->kind() == NodeKind::Conv && n->name().find("fc") != std::string::npos) {
      EXPECT_EQ(n->numInputs(), 3u) << n->name(); // the bias Add became the Conv's bias
      EXPECT_EQ(n->input(1).dims().size(), 4u);
    }
  }
  EXPECT_NE(g.f->findNode("b0.fc1.add"), nullptr); // the Conv takes the Add's name
  EXPECT_EQ(runSinkPermutation(*g.f), 0u);         // a second run changes nothing
}

TEST(SinkPermutation, ConvNextBlockThroughTheDefaultPipeline) {
  G g;
  NodeValue x = g.input("x", {1, 32, 6, 6});
  g.output("y", convNextBlock(g, "b.", x, 32));
  checkPassKeepsResults(g, [](Function& f) { return runPipeline(f, defaultPipeline()).size(); });
  EXPECT_EQ(g.count(NodeKind::MatMul), 0u);
  EXPECT_EQ(g.count(NodeKind::Gemm), 0u);
  EXPECT_EQ(g.count(NodeKind::Reshape), 0u);
  EXPECT_EQ(g.count(NodeKind::Conv), 3u);
  EXPECT_EQ(g.count(NodeKind::Gelu), 1u);
  EXPECT_EQ(g.count(NodeKind::LayerNormalization), 0u);
  EXPECT_EQ(g.count(NodeKind::ChannelLayerNormalization), 1u);
  EXPECT_EQ(g.count(NodeKind::Transpose), 0u);
  EXPECT_EQ(g.count(NodeKind::Mul), 0u); // the layer scale folded into the second 1x1 Conv
}

TEST(SinkPermutation, TransposesAroundElementwiseOpsCancel) {
  G g;
  NodeValue x = g.input("x", {2, 5, 3, 4});
  NodeValue t = transpose(g, "t", x, kToLast);
  NodeValue a = g.node(NodeKind::Add, "bias", {t, g.constant("b", {5})});
  NodeValue m = g.node(NodeKind::Mul, "scale", {g.constant("s", {3, 1, 5}), a});
  NodeValue r = g.node(NodeKind::Relu, "relu", {m});
  NodeValue q = g.node(NodeKind::Mul, "square", {r, r});
  NodeValue sm = g.node(NodeKind::Softmax, "softmax", {q}, attrs({{"axis", int64_t(-1)}}));
  NodeValue d = g.node(NodeKind::Div, "half", {sm, g.scalar("two", 2.f)});
  g.output("y", transpose(g, "back", d, kToFirst));
  EXPECT_EQ(checkPassKeepsResults(g, sinkPermutation), 1u);
  EXPECT_EQ(g.count(NodeKind::Transpose), 0u);
  const Node* sm2 = g.f->findNode("softmax");
  ASSERT_NE(sm2, nullptr);
  EXPECT_EQ(sm2->attrs().getInt("axis", -1), 1); // the channels of NCHW
  const Node* bias = g.f->findNode("bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->input(1).dims(), (Shape{1, 5, 1, 1}));
}

TEST(SinkPermutation, SeveralEntriesAndAnExitThatKeepsAPermutation) {
  G g;
  NodeValue x = g.input("x", {1, 4, 3, 5}), z = g.input("z", {1, 4, 3, 5});
  NodeValue a = g.node(NodeKind::Add, "add",
                       {transpose(g, "tx", x, kToLast), transpose(g, "tz", z, kToLast)});
  NodeValue s = g.node(NodeKind::Sigmoid, "sig", {a});
  g.output("same", transpose(g, "back", s, kToFirst));
  g.output("other", transpose(g, "other", s, {0, 2, 1, 3})); // [1, 5, 3, 4]
  EXPECT_EQ(checkPassKeepsResults(g, sinkPermutation), 1u);
  EXPECT_EQ(g.count(NodeKind::Transpose), 1u); // only the merged (0, 3, 1, 2) o (0, 2, 1, 3)
  const Node* other = g.f->findNode("other");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->attrs().getInts("perm"), (std::vector<int64_t>{0, 3, 2, 1}));
}

/// A region that must stay: the graph is unchanged (same node count, kinds and results).
void expectUnchanged(G& g) {
  const size_t before = g.f->numNodes(), transposes = g.count(NodeKind::Transpose);
  EXPECT_EQ(checkPassKeepsResults(g, sinkPermutation), 0u);
  EXPECT_EQ(g.f->numNodes(), before);
  EXPECT_EQ(g.count(NodeKind::Transpose), transposes);
}

TEST(SinkPermutation, LeavesARegionWhoseValueEscapes) {
  G g;
  NodeValue x = g.input("x", {1, 8, 3, 3});
  NodeValue t = transpose(g, "t", x, kToLast);
  NodeValue l = linear(g, "fc.", t, 8, 8);
  NodeValue r = g.node(NodeKind::Relu, "relu", {l});
  g.output("y", transpose(g, "back", r, kToFirst));
  g.output("inside", l); // a channels-last value is a function output
  expectUnchanged(g);
}

TEST(SinkPermutation, LeavesARegionReadByAnOpWithoutANchwForm) {
  G g;
  NodeValue x = g.input("x", {1, 8, 3, 3});
  NodeValue t = transpose(g, "t", x, kToLast);
  NodeValue l = linear(g, "fc.", t, 8, 8);
  g.output("y", transpose(g, "back", l, kToFirst));
  NodeValue flat =
      g.node(NodeKind::Reshape, "flat", {l}, attrs({{"shape", std::vector<int64_t>{1, 72}}}));
  g.output("flat", flat);
  expectUnchanged(g);
}

TEST(SinkPermutation, LeavesMatMulsItCannotMakeConvolutions) {
  { // weights computed at run time
    G g;
    NodeValue x = g.input("x", {1, 8, 3, 3}), w = g.input("w", {8, 8});
    NodeValue t = transpose(g, "t", x, kToLast);
    NodeValue m = g.node(NodeKind::MatMul, "mm", {t, w});
    g.output("y", transpose(g, "back", m, kToFirst));
    expectUnchanged(g);
  }
  { // a MatMul along another axis than the channels
    G g;
    NodeValue x = g.input("x", {1, 8, 3, 5});
    NodeValue t = transpose(g, "t", x, {0, 1, 3, 2});
    NodeValue m = g.node(NodeKind::MatMul, "mm", {t, g.constant("w", {3, 4})});
    NodeValue r = g.node(NodeKind::Relu, "relu", {m});
    g.output("y", transpose(g, "back", r, {0, 1, 3, 2}));
    expectUnchanged(g);
  }
  { // a LayerNormalization over more than the last axis
    G g;
    NodeValue x = g.input("x", {1, 8, 3, 3});
    NodeValue t = transpose(g, "t", x, kToLast);
    NodeValue ln = g.node(NodeKind::LayerNormalization, "ln", {t, g.constant("s", {3, 8})},
                          attrs({{"axis", int64_t(2)}}));
    NodeValue r = g.node(NodeKind::Relu, "relu", {ln});
    g.output("y", transpose(g, "back", r, kToFirst));
    expectUnchanged(g);
  }
}

TEST(SinkPermutation, LeavesALayerNormAloneBetweenItsTransposes) {
  // The last axis after the perm is the layout's axis 2, not the channels: rewriting would
  // put the same Transpose pair back, nothing to gain.
  G g;
  NodeValue x = g.input("x", {1, 8, 3, 5});
  NodeValue t = transpose(g, "t", x, {0, 1, 3, 2});
  NodeValue ln = g.node(NodeKind::LayerNormalization, "ln", {t, g.constant("s", {3})},
                        attrs({{"axis", int64_t(-1)}}));
  g.output("y", transpose(g, "back", ln, {0, 1, 3, 2}));
  expectUnchanged(g);
}

TEST(SinkPermutation, ChannelsLastLayerNormBecomesAChannelLayerNorm) {
  // Transpose (to channels-last) -> LayerNormalization (last axis) -> Transpose back, alone,
  // on several shapes (one pixel, one row, rank 3 sequences, a scale without bias).
  struct Case {
    Shape x;
    std::vector<int64_t> toLast, back;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{1, 8, 3, 3}, kToLast, kToFirst, true},   {{2, 16, 5, 7}, kToLast, kToFirst, true},
      {{1, 3, 1, 1}, kToLast, kToFirst, false},  {{2, 5, 4, 1}, kToLast, kToFirst, true},
      {{3, 24, 1, 9}, kToLast, kToFirst, false}, {{2, 6, 11}, {0, 2, 1}, {0, 2, 1}, true}};
  for (const Case& c : cases) {
    SCOPED_TRACE(shapeToString(c.x));
    G g;
    NodeValue x = g.input("x", c.x);
    NodeValue t = transpose(g, "t", x, c.toLast);
    std::vector<NodeValue> ins = {t, g.constant("s", {c.x[1]}, -1.5f, 1.5f)};
    if (c.bias)
      ins.push_back(g.constant("b", {c.x[1]}));
    NodeValue ln = g.node(NodeKind::LayerNormalization, "ln", ins,
                          attrs({{"axis", int64_t(-1)}, {"epsilon", 1e-3}}));
    g.output("y", transpose(g, "back", ln, c.back));
    EXPECT_EQ(checkPassKeepsResults(g, sinkPermutation), 1u);
    EXPECT_EQ(g.count(NodeKind::Transpose), 0u);
    EXPECT_EQ(g.count(NodeKind::LayerNormalization), 0u);
    ASSERT_EQ(g.count(NodeKind::ChannelLayerNormalization), 1u);
    EXPECT_EQ(runSinkPermutation(*g.f), 0u); // a second run changes nothing
  }
}

} // namespace
} // namespace ember

namespace ember {
namespace {

using namespace passtest;

TEST(SinkPermutation, MatMulWithoutBiasBecomesAConvWithoutBias) {
  G g;
  NodeValue x = g.input("x", {1, 8, 4, 4});
  NodeValue t = transpose(g, "t", x, kToLast);
  NodeValue m = g.node(NodeKind::MatMul, "mm", {t, g.constant("w", {8, 12})});
  g.output("y", transpose(g, "back", g.node(NodeKind::Relu, "relu", {m}), kToFirst));
  EXPECT_EQ(checkPassKeepsResults(g, sinkPermutation), 1u);
  const Node* conv = g.f->findNode("mm");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->kind(), NodeKind::Conv);
  EXPECT_EQ(conv->numInputs(), 2u);
  EXPECT_EQ(conv->input(1).dims(), (Shape{12, 8, 1, 1}));
  EXPECT_EQ(g.count(NodeKind::Transpose), 0u);
}

/// A random region after a Transpose of [2, 8, 3, 5] (ConvNeXt's perm half the time): unary
/// and binary ops, constants of several broadcast shapes, MatMuls, Softmax, LayerNorm; then
/// the inverse Transpose, sometimes another exit, sometimes a value that escapes.
void buildRandomRegion(G& g, std::mt19937& rng) {
  NodeValue x = g.input("x", {2, 8, 3, 5});
  std::vector<int64_t> perm = {0, 1, 2, 3};
  if (rng() % 2)
    perm = kToLast;
  else
    std::shuffle(perm.begin(), perm.end(), rng);
  NodeValue v = transpose(g, "entry", x, perm);
  std::vector<NodeValue> vals = {v};
  const NodeKind unary[] = {NodeKind::Relu, NodeKind::Sigmoid, NodeKind::Tanh, NodeKind::Erf};
  const NodeKind binary[] = {NodeKind::Add, NodeKind::Mul, NodeKind::Sub, NodeKind::Div};
  const int steps = 2 + int(rng() % 6);
  for (int i = 0; i < steps; ++i) {
    const std::string p = "n" + std::to_string(i);
    const Shape d = v.dims();
    switch (rng() % 7) {
    case 0:
      v = g.node(unary[rng() % 4], p, {v});
      break;
    case 1: { // a constant of one of the shapes that broadcast onto v
      const std::vector<Shape> shapes = {{}, {d[3]}, {d[2], d[3]}, {1, d[1], 1, d[3]}, d};
      const Shape s = shapes[rng() % shapes.size()];
      NodeValue c = g.constant(p + ".c", s, 0.5f, 1.5f);
      const bool first = rng() % 2;
      v = g.node(binary[rng() % 4], p, first ? std::vector<NodeValue>{c, v} : std::vector{v, c});
      break;
    }
    case 2: { // two values of the region
      NodeValue o = vals[rng() % vals.size()];
      v = g.node(binary[rng() % 3], p, {o.dims() == d ? o : v, v});
      break;
    }
    case 3: {
      const int64_t k = int64_t(4) << (rng() % 3);
      v = g.node(NodeKind::MatMul, p, {v, g.constant(p + ".w", {d[3], k})});
      if (rng() % 2)
        v = g.node(NodeKind::Add, p + ".bias", {v, g.constant(p + ".b", {k})});
      break;
    }
    case 4:
      v = g.node(NodeKind::Softmax, p, {v}, attrs({{"axis", int64_t(rng() % 5) - 1}}));
      break;
    case 5:
      v = g.node(NodeKind::LayerNormalization, p,
                 {v, g.constant(p + ".s", {d[3]}), g.constant(p + ".b", {d[3]})},
                 attrs({{"axis", int64_t(-1)}}));
      break;
    default:
      v = g.node(NodeKind::Mul, p, {v, v});
      break;
    }
    vals.push_back(v);
  }
  std::vector<int64_t> inv(4);
  for (size_t i = 0; i < 4; ++i)
    inv[size_t(perm[i])] = int64_t(i);
  g.output("y", transpose(g, "exit", v, inv));
  if (rng() % 4 == 0) {
    std::vector<int64_t> q = {0, 1, 2, 3};
    std::shuffle(q.begin(), q.end(), rng);
    g.output("other", transpose(g, "exit2", vals[rng() % vals.size()], q));
  }
  if (rng() % 6 == 0)
    g.output("escape", vals[rng() % vals.size()]);
}

TEST(SinkPermutation, RandomRegionsKeepResults) {
  std::mt19937 rng(20261206);
  size_t rewritten = 0;
  for (int trial = 0; trial < 200; ++trial) {
    for (int mode = 0; mode < 2; ++mode) {
      G g;
      std::mt19937 graphRng(rng());
      buildRandomRegion(g, graphRng);
      SCOPED_TRACE("trial " + std::to_string(trial) + " mode " + std::to_string(mode));
      const size_t matmuls = g.count(NodeKind::MatMul);
      if (mode == 0)
        rewritten += checkPassKeepsResults(g, sinkPermutation);
      else
        checkPassKeepsResults(g,
                              [](Function& f) { return runPipeline(f, defaultPipeline()).size(); });
      EXPECT_LE(g.count(NodeKind::MatMul), matmuls);
      if (HasFailure())
        return;
    }
  }
  EXPECT_GT(rewritten, 50u); // most regions have a form in the layout before the perm
}

} // namespace
} // namespace ember
