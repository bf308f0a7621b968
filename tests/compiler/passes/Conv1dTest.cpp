// conv1d-to-conv2d and split-to-slices: a Conformer-style convolution module (Transpose to
// channels-first, pointwise Conv1d, GLU as Split + Sigmoid + Mul, depthwise Conv1d,
// BatchNormalization, SiLU as x * Sigmoid(x), pointwise Conv1d, Transpose back) checked
// against the unrewritten graph on the float interpreter.
#include "PassTestUtil.h"

namespace ember {
namespace {

using namespace passtest;

NodeValue conv1d(G& g, const std::string& p, NodeValue x, int64_t c, int64_t k, int64_t kw,
                 int64_t group, int64_t pad) {
  return g.node(NodeKind::Conv, p,
                {x, g.constant(p + ".w", {k, c / group, kw}), g.constant(p + ".b", {k})},
                attrs({{"group", group},
                       {"kernel_shape", std::vector<int64_t>{kw}},
                       {"pads", std::vector<int64_t>{pad, pad}}}));
}

/// The Conformer convolution module on x [B, T, C].
NodeValue convModule(G& g, NodeValue x, int64_t c) {
  NodeValue t = g.node(NodeKind::Transpose, "to_first", {x},
                       attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}));
  NodeValue pw1 = conv1d(g, "pw1", t, c, 2 * c, 1, 1, 0);
  Node* split = g.multi(NodeKind::Split, "glu.split", {pw1},
                        attrs({{"axis", int64_t(1)}, {"split", std::vector<int64_t>{c, c}}}));
  NodeValue gate = g.node(NodeKind::Sigmoid, "glu.sigmoid", {split->result(1)});
  NodeValue glu = g.node(NodeKind::Mul, "glu.mul", {split->result(0), gate});
  NodeValue dw = conv1d(g, "dw", glu, c, c, 7, c, 3);
  NodeValue bn = g.node(NodeKind::BatchNormalization, "bn",
                        {dw, g.constant("bn.s", {c}, 0.5f, 1.5f), g.constant("bn.b", {c}),
                         g.constant("bn.m", {c}), g.constant("bn.v", {c}, 0.5f, 2.f)});
  NodeValue silu = g.node(NodeKind::Mul, "silu", {bn, g.node(NodeKind::Sigmoid, "silu.s", {bn})});
  NodeValue pw2 = conv1d(g, "pw2", silu, c, c, 1, 1, 0);
  return g.node(NodeKind::Transpose, "to_last", {pw2},
                attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}));
}

size_t conv1dAndSplit(Function& f) {
  return runConv1dToConv2d(f) + runSplitToSlices(f);
}

TEST(Conv1dToConv2d, ConformerModuleOfOneSequenceKeepsChannelsInPlace) {
  G g;
  NodeValue x = g.input("x", {1, 24, 20});
  g.output("y", g.node(NodeKind::Add, "residual", {x, convModule(g, x, 20)}));
  EXPECT_GT(checkPassKeepsResults(g, conv1dAndSplit), 0u);
  EXPECT_EQ(g.count(NodeKind::Split), 0u);
  EXPECT_EQ(g.count(NodeKind::Slice), 2u);
  for (const auto& n : g.f->nodes()) {
    if (n->kind() == NodeKind::Conv) {
      EXPECT_EQ(n->input(0).dims().size(), 4u) << n->name();
    }
    if (n->kind() == NodeKind::Transpose) { // only the channel-keeping pair
      EXPECT_EQ(n->input(0).dims().size(), 4u) << n->name();
      EXPECT_EQ(n->attrs().getInts("perm").at(1), 1) << n->name();
    }
    if (n->kind() == NodeKind::Sigmoid || n->kind() == NodeKind::Mul) {
      EXPECT_EQ(n->resultType().dims, (Shape{1, 20, 1, 24})) << n->name();
    }
  }
  EXPECT_EQ(g.count(NodeKind::Transpose), 2u);
  EXPECT_EQ(runConv1dToConv2d(*g.f), 0u); // a second run changes nothing
}

TEST(Conv1dToConv2d, ABatchOfSequencesEntersAndLeavesByReshapes) {
  G g;
  NodeValue x = g.input("x", {3, 8, 10});
  NodeValue c = conv1d(g, "c", x, 8, 12, 3, 1, 1);
  NodeValue r = g.node(NodeKind::Relu, "relu", {c});
  g.output("y", conv1d(g, "d", r, 12, 12, 3, 4, 2));
  g.output("mid", r); // a value of the region that is an output
  EXPECT_EQ(checkPassKeepsResults(g, conv1dAndSplit), 3u);
  EXPECT_EQ(g.count(NodeKind::Transpose), 0u);
  EXPECT_EQ(g.count(NodeKind::Reshape), 3u); // x in; relu and d out
}

TEST(Conv1dToConv2d, StridedDilatedAndPerChannelConstants) {
  G g;
  NodeValue x = g.input("x", {1, 6, 17});
  NodeValue c = g.node(NodeKind::Conv, "c", {x, g.constant("w", {8, 6, 3}), g.constant("b", {8})},
                       attrs({{"strides", std::vector<int64_t>{2}},
                              {"dilations", std::vector<int64_t>{2}},
                              {"pads", std::vector<int64_t>{2, 1}}}));
  NodeValue m = g.node(NodeKind::Mul, "scale", {c, g.constant("s", {8, 1})});
  NodeValue p = g.node(NodeKind::PRelu, "prelu", {m, g.constant("slope", {8, 1})});
  g.output("y", p);
  EXPECT_EQ(checkPassKeepsResults(g, conv1dAndSplit), 3u);
  EXPECT_EQ(g.f->findNode("scale.2d")->input(1).dims(), (Shape{8, 1, 1}));
}

} // namespace
} // namespace ember
