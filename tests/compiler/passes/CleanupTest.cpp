// dce, cse and constant-fold, each alone.
#include "PassTestUtil.h"

namespace ember {
namespace {

using namespace passtest;

TEST(Dce, RemovesDeadNodesAndUnusedConstants) {
  G g;
  NodeValue x = g.input("x", {3});
  NodeValue k = g.constant("k", {3});
  g.node(NodeKind::Mul, "dead_mul", {x, k});
  NodeValue live = g.node(NodeKind::Exp, "live", {x});
  g.node(NodeKind::Neg, "dead_neg", {live});
  g.output("y", live);
  EXPECT_EQ(g.f->numNodes(), 3u);
  const size_t changed = checkPassKeepsResults(g, [](Function& f) { return runDce(f); });
  EXPECT_EQ(changed, 3u); // two nodes and the constant k
  EXPECT_EQ(g.f->numNodes(), 1u);
  EXPECT_TRUE(g.m.constants().empty());
}

TEST(Cse, MergesEqualNodesButNotDifferentAttributes) {
  G g;
  NodeValue x = g.input("x", {2, 3});
  NodeValue a1 = g.node(NodeKind::LeakyRelu, "a1", {x}, attrs({{"alpha", 0.1}}));
  NodeValue a2 = g.node(NodeKind::LeakyRelu, "a2", {x}, attrs({{"alpha", 0.1}}));
  NodeValue a3 = g.node(NodeKind::LeakyRelu, "a3", {x}, attrs({{"alpha", 0.2}}));
  // Equal after a1/a2 merge: the second round inside one pass.
  NodeValue s1 = g.node(NodeKind::Add, "s1", {a1, x});
  NodeValue s2 = g.node(NodeKind::Add, "s2", {a2, x});
  g.output("y", g.node(NodeKind::Mul, "m", {s1, s2}));
  g.output("z", a3);
  const size_t changed = checkPassKeepsResults(g, [](Function& f) { return runCse(f); });
  EXPECT_EQ(changed, 2u);
  EXPECT_EQ(g.f->numNodes(), 4u); // a1, a3, s1, m
  EXPECT_EQ(g.count(NodeKind::LeakyRelu), 2u);
}

TEST(Cse, MergesConstantsWithIdenticalContentOnly) {
  G g;
  NodeValue x = g.input("x", {4});
  Tensor t = randomTensor({4}, g.rng);
  NodeValue c1 = g.constant("c1", t), c2 = g.constant("c2", t);
  Tensor other = t;
  other.data<float>()[3] += 1.f;
  NodeValue c3 = g.constant("c3", other);
  NodeValue m1 = g.node(NodeKind::Mul, "m1", {x, c1});
  NodeValue m2 = g.node(NodeKind::Mul, "m2", {x, c2}); // same as m1 once c2 -> c1
  NodeValue m3 = g.node(NodeKind::Mul, "m3", {x, c3});
  g.output("y", g.node(NodeKind::Add, "a", {m1, m2}));
  g.output("z", m3);
  const size_t changed = checkPassKeepsResults(g, [](Function& f) { return runCse(f); });
  EXPECT_EQ(changed, 2u); // c2 and m2
  EXPECT_EQ(g.count(NodeKind::Mul), 2u);
}

TEST(Cse, KeepsNodesWithDifferentResultTypes) {
  G g;
  NodeValue x = g.input("x", {2, 3});
  NodeValue r1 = g.node(NodeKind::ReduceSum, "r1", {x}, attrs({{"axes", std::vector<int64_t>{1}}}));
  NodeValue r2 = g.node(NodeKind::ReduceSum, "r2", {x}, attrs({{"axes", std::vector<int64_t>{0}}}));
  g.output("a", r1);
  g.output("b", r2);
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runCse(f); }), 0u);
  EXPECT_EQ(g.f->numNodes(), 2u);
}

TEST(ConstantFold, FoldsChainsOfConstantsIntoOneConstant) {
  G g;
  NodeValue x = g.input("x", {2, 3});
  NodeValue a = g.constant("a", {3, 2});
  NodeValue t =
      g.node(NodeKind::Transpose, "t", {a}, attrs({{"perm", std::vector<int64_t>{1, 0}}}));
  NodeValue e = g.node(NodeKind::Exp, "e", {t});
  NodeValue s = g.node(NodeKind::Add, "s", {e, g.scalar("one", 1.f)});
  g.output("y", g.node(NodeKind::Mul, "m", {x, s}));
  const size_t changed = checkPassKeepsResults(g, [](Function& f) { return runConstantFold(f); });
  EXPECT_EQ(changed, 3u);
  EXPECT_EQ(g.f->numNodes(), 1u);
  const Node& m = *g.f->nodes().front();
  ASSERT_EQ(m.input(1).node->kind(), NodeKind::Constant);
  // exp(a^T) + 1, computed here independently.
  const Tensor& av = a.node->payload();
  const Tensor& folded = m.input(1).node->payload();
  ASSERT_EQ(folded.dims(), (Shape{2, 3}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_FLOAT_EQ(folded.data<float>()[i * 3 + j], std::exp(av.data<float>()[j * 2 + i]) + 1.f);
}

TEST(ConstantFold, RespectsTheSizeCapAndQuantizationBoundaries) {
  G g;
  NodeValue x = g.input("x", {64, 64});
  NodeValue small = g.constant("small", {1, 64});
  NodeValue big =
      g.node(NodeKind::Expand, "expand", {small}, attrs({{"shape", std::vector<int64_t>{64, 64}}}));
  g.output("y", g.node(NodeKind::Add, "add", {x, big}));
  PassContext ctx;
  ctx.foldLimitElements = 1000; // 4096 > 1000 and larger than the input: kept
  EXPECT_EQ(runConstantFold(*g.f, ctx), 0u);
  EXPECT_EQ(g.count(NodeKind::Expand), 1u);
  ctx.foldLimitElements = 4096;
  EXPECT_EQ(checkPassKeepsResults(g, [&](Function& f) { return runConstantFold(f, ctx); }), 1u);
  EXPECT_EQ(g.count(NodeKind::Expand), 0u);
}

TEST(ConstantFold, LeavesRunTimeErrorsToRunTime) {
  G g;
  NodeValue a = g.constant("a", Tensor::fromVector<int64_t>({2}, {4, 5}));
  NodeValue z = g.constant("z", Tensor::fromVector<int64_t>({2}, {1, 0}));
  NodeValue d = g.node(NodeKind::Div, "div", {a, z});
  g.output("y", d);
  EXPECT_EQ(runConstantFold(*g.f), 0u); // integer division by zero is not folded
  EXPECT_EQ(g.f->numNodes(), 1u);
}

} // namespace
} // namespace ember
