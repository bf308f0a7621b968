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
  EXPECT_EQ(g.count(NodeKind::LayerNormalization), 2u);
  // Each LayerNormalization keeps its own Transpose pair (the channel LayerNorm pattern);
  // every other node works on NCHW.
  EXPECT_EQ(g.count(NodeKind::Transpose), 4u);
  for (const auto& n : g.f->nodes()) {
    if (n->kind() == NodeKind::Transpose) {
      EXPECT_TRUE(n->input(0).node->kind() == NodeKind::LayerNormalization ||
                  singleUserKind(*g.f, n.get()) == NodeKind::LayerNormalization)
          << n->name();
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
  EXPECT_EQ(g.count(NodeKind::LayerNormalization), 1u);
  EXPECT_EQ(g.count(NodeKind::Transpose), 2u);
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
  // Rewriting would put the same Transpose pair back: nothing to gain.
  G g;
  NodeValue x = g.input("x", {1, 8, 3, 3});
  NodeValue t = transpose(g, "t", x, kToLast);
  NodeValue ln = g.node(NodeKind::LayerNormalization, "ln", {t, g.constant("s", {8})},
                        attrs({{"axis", int64_t(-1)}}));
  g.output("y", transpose(g, "back", ln, kToFirst));
  expectUnchanged(g);
}

} // namespace
} // namespace ember
