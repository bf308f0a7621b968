// fold-batchnorm, sink-transpose and merge-reshape, each alone.
#include "PassTestUtil.h"

#include "ember/graph/attrs/FusedActivation.h"

namespace ember {
namespace {

using namespace passtest;

/// Conv (optionally biased, grouped) -> BatchNormalization with random statistics.
NodeValue convBn(G& g, NodeValue x, int64_t cin, int64_t cout, int64_t group, bool bias,
                 const std::string& p) {
  std::vector<NodeValue> in = {x, g.constant(p + "w", {cout, cin / group, 3, 3})};
  if (bias)
    in.push_back(g.constant(p + "b", {cout}));
  NodeValue c = g.node(NodeKind::Conv, p + "conv", in,
                       attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", group}}));
  return g.node(NodeKind::BatchNormalization, p + "bn",
                {c, g.constant(p + "s", {cout}, 0.5f, 2.f), g.constant(p + "beta", {cout}),
                 g.constant(p + "mean", {cout}), g.constant(p + "var", {cout}, 0.1f, 3.f)},
                attrs({{"epsilon", 1e-3}}));
}

TEST(FoldBatchNorm, FoldsIntoConvWithAndWithoutBiasNumerically) {
  G g;
  NodeValue x = g.input("x", {2, 4, 6, 5});
  NodeValue a = convBn(g, x, 4, 6, 1, true, "a.");
  NodeValue b = convBn(g, a, 6, 6, 3, false, "b."); // grouped, no bias
  NodeValue c = convBn(g, b, 6, 6, 6, true, "c.");  // depthwise
  g.output("y", c);
  EXPECT_EQ(g.f->numNodes(), 6u);
  const size_t changed = checkPassKeepsResults(g, [](Function& f) { return runFoldBatchNorm(f); });
  EXPECT_EQ(changed, 3u);
  EXPECT_EQ(g.f->numNodes(), 3u);
  EXPECT_EQ(g.count(NodeKind::BatchNormalization), 0u);
  for (const auto& n : g.f->nodes())
    EXPECT_EQ(n->numInputs(), 3u) << n->name(); // every folded Conv has a bias now
  EXPECT_NE(g.f->findNode("a.conv"), nullptr);  // the Conv keeps its name
}

TEST(FoldBatchNorm, FoldedWeightsMatchTheFormula) {
  G g;
  NodeValue x = g.input("x", {1, 1, 3, 3});
  NodeValue w = g.constant("w", Tensor::fromVector<float>({1, 1, 1, 1}, {2.f}));
  NodeValue c = g.node(NodeKind::Conv, "conv", {x, w});
  auto v = [&](const char* n, float f) {
    return g.constant(n, Tensor::fromVector<float>({1}, {f}));
  };
  g.output("y", g.node(NodeKind::BatchNormalization, "bn",
                       {c, v("s", 3.f), v("b", 0.5f), v("m", 1.f), v("v", 4.f)},
                       attrs({{"epsilon", 0.0}})));
  EXPECT_EQ(runFoldBatchNorm(*g.f), 1u);
  const Node& conv = *g.f->nodes().front();
  // scale 3 / sqrt(4) = 1.5: w' = 2 * 1.5 = 3; b' = (0 - 1) * 1.5 + 0.5 = -1.
  EXPECT_FLOAT_EQ(conv.input(1).node->payload().data<float>()[0], 3.f);
  EXPECT_FLOAT_EQ(conv.input(2).node->payload().data<float>()[0], -1.f);
}

TEST(FoldBatchNorm, FoldsPerChannelMulAndAddButNotOtherShapes) {
  G g;
  NodeValue x = g.input("x", {1, 3, 4, 4});
  NodeValue c = g.node(NodeKind::Conv, "conv", {x, g.constant("w", {5, 3, 1, 1})});
  NodeValue m = g.node(NodeKind::Mul, "mul", {g.constant("k", {5, 1, 1}), c});
  NodeValue a = g.node(NodeKind::Add, "add", {m, g.constant("bias", {1, 5, 1, 1})});
  NodeValue c2 = g.node(NodeKind::Conv, "conv2", {a, g.constant("w2", {5, 5, 1, 1})});
  NodeValue notPerChannel = g.node(NodeKind::Mul, "mul2", {c2, g.constant("k2", {4, 1})});
  g.output("y", notPerChannel);
  const size_t changed = checkPassKeepsResults(g, [](Function& f) { return runFoldBatchNorm(f); });
  EXPECT_EQ(changed, 2u);
  EXPECT_EQ(g.count(NodeKind::Conv), 2u);
  EXPECT_EQ(g.count(NodeKind::Mul), 1u); // mul2 stays
  EXPECT_EQ(g.count(NodeKind::Add), 0u);
}

TEST(FoldBatchNorm, LeavesConvWithOtherUsesOrNonConstantWeights) {
  G g;
  NodeValue x = g.input("x", {1, 2, 4, 4});
  NodeValue w = g.input("w", {2, 2, 3, 3}); // run-time weights
  NodeValue c = g.node(NodeKind::Conv, "conv", {x, w});
  auto bn = [&](NodeValue in, const std::string& p) {
    return g.node(NodeKind::BatchNormalization, p,
                  {in, g.constant(p + "s", {2}), g.constant(p + "b", {2}), g.constant(p + "m", {2}),
                   g.constant(p + "v", {2}, 0.5f, 1.f)});
  };
  g.output("y", bn(c, "bn1"));
  NodeValue c2 = g.node(NodeKind::Conv, "conv2", {x, g.constant("w2", {2, 2, 3, 3})});
  g.output("z", bn(c2, "bn2"));
  g.output("c2", c2); // a second use of conv2
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runFoldBatchNorm(f); }), 0u);
  EXPECT_EQ(g.count(NodeKind::BatchNormalization), 2u);
}

TEST(SinkTranspose, MergesPairsAndRemovesIdentity) {
  G g;
  NodeValue x = g.input("x", {2, 3, 4});
  auto tr = [&](NodeValue v, std::vector<int64_t> p, const std::string& n) {
    return g.node(NodeKind::Transpose, n, {v}, attrs({{"perm", p}}));
  };
  NodeValue t1 = tr(x, {1, 2, 0}, "t1");  // [3, 4, 2]
  NodeValue t2 = tr(t1, {2, 0, 1}, "t2"); // back to [2, 3, 4]: identity overall
  NodeValue t3 = tr(x, {0, 2, 1}, "t3");  // [2, 4, 3]
  NodeValue t4 = tr(t3, {1, 0, 2}, "t4"); // [4, 2, 3] = perm {2, 0, 1} of x
  g.output("a", g.node(NodeKind::Relu, "r", {t2}));
  g.output("b", t4);
  checkPassKeepsResults(g, [](Function& f) { return runSinkTranspose(f); });
  EXPECT_EQ(g.count(NodeKind::Transpose), 1u);
  const Node* t = g.f->findNode("t4");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->input(0).node->kind(), NodeKind::Placeholder);
  EXPECT_EQ(t->attrs().getInts("perm"), (std::vector<int64_t>{2, 0, 1}));
}

TEST(SinkTranspose, SinksBelowUnaryOpsSoTransposesCancel) {
  G g;
  NodeValue x = g.input("x", {2, 3, 4, 5});
  NodeValue t1 =
      g.node(NodeKind::Transpose, "t1", {x}, attrs({{"perm", std::vector<int64_t>{0, 2, 3, 1}}}));
  NodeValue s = g.node(NodeKind::Sigmoid, "sig", {t1});
  NodeValue c = g.node(NodeKind::Clip, "clip", {s}, attrs({{"min", 0.1}, {"max", 0.8}}));
  NodeValue t2 =
      g.node(NodeKind::Transpose, "t2", {c}, attrs({{"perm", std::vector<int64_t>{0, 3, 1, 2}}}));
  g.output("y", t2);
  EXPECT_GT(checkPassKeepsResults(g, [](Function& f) { return runSinkTranspose(f); }), 0u);
  EXPECT_EQ(g.count(NodeKind::Transpose), 0u);
  EXPECT_EQ(g.f->numNodes(), 2u);
  ASSERT_NE(g.f->findNode("sig"), nullptr); // sunk nodes keep their names
  EXPECT_EQ(g.f->findNode("sig")->kind(), NodeKind::Sigmoid);
}

TEST(SinkTranspose, SinksBelowBinaryOpsAndConcatWhenAllOperandsAgree) {
  G g;
  const std::vector<int64_t> nhwc = {0, 2, 3, 1}, nchw = {0, 3, 1, 2};
  auto tr = [&](NodeValue v, const std::vector<int64_t>& p, const std::string& n) {
    return g.node(NodeKind::Transpose, n, {v}, attrs({{"perm", p}}));
  };
  NodeValue a = g.input("a", {1, 3, 4, 5}), b = g.input("b", {1, 3, 4, 5});
  NodeValue c = g.input("c", {1, 2, 4, 5});
  NodeValue sum = g.node(NodeKind::Add, "sum", {tr(a, nhwc, "ta"), tr(b, nhwc, "tb")});
  NodeValue cat = g.node(NodeKind::Concat, "cat", {sum, tr(c, nhwc, "tc")},
                         attrs({{"axis", int64_t(-1)}})); // channels last: [1, 4, 5, 5]
  g.output("y", tr(g.node(NodeKind::Relu, "relu", {cat}), nchw, "back"));
  EXPECT_GT(checkPassKeepsResults(g, [](Function& f) { return runSinkTranspose(f); }), 0u);
  EXPECT_EQ(g.count(NodeKind::Transpose), 0u); // every transpose met its inverse
  EXPECT_EQ(g.f->findNode("cat")->attrs().getInt("axis"), 1);
}

TEST(SinkTranspose, KeepsBinaryOpsWithDifferentPermsOrBroadcasting) {
  G g;
  auto tr = [&](NodeValue v, const std::vector<int64_t>& p, const std::string& n) {
    return g.node(NodeKind::Transpose, n, {v}, attrs({{"perm", p}}));
  };
  NodeValue a = g.input("a", {2, 3, 4}), b = g.input("b", {2, 4, 3}), c = g.input("c", {1, 3, 4});
  g.output("x", g.node(NodeKind::Add, "perms", {tr(a, {0, 2, 1}, "ta"), tr(b, {0, 1, 2}, "tb")}));
  g.output("y", g.node(NodeKind::Mul, "bcast", {tr(a, {0, 2, 1}, "ta2"), tr(c, {0, 2, 1}, "tc")}));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runSinkTranspose(f); }), 1u);
  EXPECT_EQ(g.count(NodeKind::Transpose), 3u); // only the identity "tb" went away
}

TEST(SinkTranspose, DoesNotSinkATransposeWithOtherUses) {
  G g;
  NodeValue x = g.input("x", {2, 3});
  NodeValue t =
      g.node(NodeKind::Transpose, "t", {x}, attrs({{"perm", std::vector<int64_t>{1, 0}}}));
  g.output("a", g.node(NodeKind::Exp, "e", {t}));
  g.output("b", t);
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runSinkTranspose(f); }), 0u);
  EXPECT_EQ(g.f->numNodes(), 2u);
}

TEST(MergeReshape, MergesChainsAndDropsNoOps) {
  G g;
  NodeValue x = g.input("x", {2, 3, 4});
  auto rs = [&](NodeValue v, std::vector<int64_t> s, const std::string& n) {
    return g.node(NodeKind::Reshape, n, {v}, attrs({{"shape", s}}));
  };
  NodeValue r1 = rs(x, {6, 4}, "r1");
  NodeValue r2 = rs(r1, {24}, "r2");
  NodeValue r3 = rs(r2, {4, 6}, "r3");
  NodeValue same = rs(r3, {4, 6}, "same");
  NodeValue back = rs(g.node(NodeKind::Exp, "e", {same}), {4, 6}, "noop");
  g.output("y", back);
  const size_t changed = checkPassKeepsResults(g, [](Function& f) { return runMergeReshape(f); });
  EXPECT_GT(changed, 0u);
  EXPECT_EQ(g.f->numNodes(), 2u); // one Reshape [2,3,4] -> [4,6], then Exp
  EXPECT_EQ(g.count(NodeKind::Reshape), 1u);
  EXPECT_EQ(g.f->nodes().front()->input(0).node->kind(), NodeKind::Placeholder);
}

TEST(MergeReshape, ReshapeBackToTheInputShapeDisappears) {
  G g;
  NodeValue x = g.input("x", {2, 6});
  NodeValue r1 =
      g.node(NodeKind::Reshape, "r1", {x}, attrs({{"shape", std::vector<int64_t>{3, 4}}}));
  NodeValue r2 =
      g.node(NodeKind::Reshape, "r2", {r1}, attrs({{"shape", std::vector<int64_t>{2, 6}}}));
  g.output("y", g.node(NodeKind::Relu, "relu", {r2}));
  checkPassKeepsResults(g, [](Function& f) { return runMergeReshape(f); });
  EXPECT_EQ(g.count(NodeKind::Reshape), 0u);
  EXPECT_EQ(g.f->numNodes(), 1u);
}

} // namespace
} // namespace ember
