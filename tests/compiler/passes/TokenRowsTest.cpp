// collapse-batch-axes and moves-to-gather (compiler/passes/TokenRows.cpp): a Swin-style
// block (shifted windows of [1, H, W, C] tokens, multi-head window attention with a
// relative-position bias and a window mask, an MLP with GELU, patch merging) built by hand
// with random constants, checked against the unrewritten graph on the float interpreter.
#include "PassTestUtil.h"
#include "SwinBlock.h"

#include "ember/graph/AttrViews.h"

namespace ember::passtest {
namespace {

using test::swin::buildSwin;
using test::swin::Swin;
using namespace test::swin;

/// The largest rank of any value, and the nodes of rank > 3 other than Reshapes and
/// Transposes.
int64_t maxRank(const Function& f) {
  int64_t r = 0;
  for (const auto& n : f.nodes())
    r = std::max(r, int64_t(n->resultType().dims.size()));
  return r;
}

size_t deepCompute(const Function& f) {
  size_t c = 0;
  for (const auto& n : f.nodes())
    c += n->resultType().dims.size() > 3 && n->kind() != NodeKind::Reshape &&
         n->kind() != NodeKind::Transpose;
  return c;
}

size_t count(const Function& f, NodeKind k) {
  return size_t(std::count_if(f.nodes().begin(), f.nodes().end(),
                              [k](const auto& n) { return n->kind() == k; }));
}

std::vector<int64_t> steps5() {
  return {1, 1, 1, 1, 1};
}

size_t runTokenPasses(Function& f) {
  return runPipeline(
             f, {"collapse-batch-axes", "merge-reshape", "moves-to-gather", "merge-reshape", "dce"})
      .at(2)
      .changed;
}

TEST(TokenRows, SwinBlocksBecomeRowsAndGathers) {
  G g;
  buildSwin(g, Swin{});
  const size_t gathers = checkPassKeepsResults(g, runTokenPasses);
  // Per block: the (shifted) window partition, q, k, v, the head merge and the (shifted)
  // reverse; patch merging's four slices and their Concat (one Gather); the image to
  // tokens and back.
  EXPECT_EQ(gathers, 2u * 6u + 1u + 2u);
  EXPECT_LE(maxRank(*g.f), 4); // no value of rank 5 or 6 is left
  EXPECT_EQ(deepCompute(*g.f), 0u);
  EXPECT_EQ(count(*g.f, NodeKind::Slice), 0u);
  EXPECT_EQ(count(*g.f, NodeKind::Concat), 0u);
  EXPECT_EQ(count(*g.f, NodeKind::Gather), 2u * 6u + 1u);
  // Transposes: the keys' [P, T, d] -> [P, d, T], and the image to tokens and back as
  // transposes that keep axis 1 (rows of channels moved whole).
  const std::vector<std::vector<int64_t>> perms = {{0, 2, 1}, {3, 1, 0, 2}, {2, 1, 3, 0}};
  for (const auto& n : g.f->nodes()) {
    if (n->kind() == NodeKind::Transpose) {
      EXPECT_NE(std::find(perms.begin(), perms.end(), transposeOf(n->attrs()).perm), perms.end())
          << n->name();
    }
  }
  // A second run changes nothing.
  EXPECT_EQ(runTokenPasses(*g.f), 0u);
}

TEST(TokenRows, SwinBlocksThroughTheDefaultPipeline) {
  G g;
  buildSwin(g, Swin{16, 8, 48, 4, 3, 2});
  checkPassKeepsResults(g, [](Function& f) {
    runPipeline(f, defaultPipeline());
    return size_t(0);
  });
  EXPECT_LE(maxRank(*g.f), 4);
  EXPECT_EQ(deepCompute(*g.f), 0u);
  EXPECT_EQ(count(*g.f, NodeKind::Slice), 0u);
}

TEST(TokenRows, ImagesAndSequencesAreLeftAlone) {
  // NCHW images (no LayerNorm over the last axis of rank > 3): a residual block with a
  // slice of rows and a concat along the height; and a sequence's head split.
  G g;
  NodeValue x = g.input("x", {1, 8, 6, 6});
  NodeValue a = slice(g, "s", x, {0, 0, 0, 0}, {1, 8, 3, 6}, {1, 1, 1, 1});
  NodeValue b = slice(g, "t", x, {0, 0, 3, 0}, {1, 8, 6, 6}, {1, 1, 1, 1});
  NodeValue c = g.node(NodeKind::Concat, "c", {b, a}, attrs({{"axis", int64_t(2)}}));
  NodeValue y = g.node(NodeKind::Add, "add", {c, x});
  g.output("y", g.node(NodeKind::Softmax, "sm", {y}, attrs({{"axis", int64_t(-1)}})));
  NodeValue s = g.input("s", {5, 2, 32});
  s = reshape(g, "h", layerNorm(g, "ln", s, 32), {5, 4, 16});
  g.output("z", transpose(g, "tr", s, {1, 0, 2}));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runCollapseBatchAxes(f); }), 0u);
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runMovesToGather(f); }), 0u);
}

TEST(TokenRows, AnImageAfterTheTokensIsLeftAlone) {
  // Channels-last LayerNorm between two Transposes, then an NCHW residual Add and a Softmax
  // along W: only the LayerNorm is collapsed; the Transpose back to NCHW ends the region.
  G g;
  NodeValue x = g.input("x", {1, 8, 5, 6});
  NodeValue t = transpose(g, "last", x, {0, 2, 3, 1});
  NodeValue y = transpose(g, "first", layerNorm(g, "ln", t, 8), {0, 3, 1, 2});
  y = g.node(NodeKind::Add, "res", {y, x});
  g.output("y", g.node(NodeKind::Softmax, "sm", {y}, attrs({{"axis", int64_t(-1)}})));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runCollapseBatchAxes(f); }), 1u);
  for (const auto& n : g.f->nodes()) {
    if (n->kind() == NodeKind::Add || n->kind() == NodeKind::Softmax) {
      EXPECT_EQ(n->resultType().dims, (Shape{1, 8, 5, 6})) << n->name();
    }
  }
}

TEST(TokenRows, RandomChainsOfRowMovesBecomeOneGather) {
  // 60 seeded chains from x [a*b*c, C] through [1, a, b, c, C]: a Transpose of the three
  // middle axes, a Slice (step 1 or 2) and a roll (two Slices and a Concat) along random
  // middle axes, back to [rows, C]: one Gather (or a Reshape) each, no value of rank > 3.
  std::mt19937 rng(42);
  auto pick = [&rng](int64_t n) { return int64_t(rng() % uint64_t(n)); };
  for (int iter = 0; iter < 60; ++iter) {
    SCOPED_TRACE(iter);
    G g;
    const int64_t C = 16 * (1 + pick(3));
    Shape d = {1, 2 + pick(3), 2 + pick(3), 2 + pick(3), C};
    NodeValue x = g.input("x", {d[1] * d[2] * d[3], C});
    NodeValue y = reshape(g, "r5", x, {d.begin(), d.end()});
    std::vector<int64_t> perm = {1, 2, 3};
    std::shuffle(perm.begin(), perm.end(), rng);
    y = transpose(g, "t", y, {0, perm[0], perm[1], perm[2], 4});
    d = {1, d[size_t(perm[0])], d[size_t(perm[1])], d[size_t(perm[2])], C};
    const size_t ax = size_t(1 + pick(3));
    std::vector<int64_t> starts(5, 0), ends(d.begin(), d.end()), steps(5, 1);
    starts[ax] = pick(2);
    steps[ax] = 1 + pick(2);
    y = slice(g, "s", y, starts, ends, steps);
    d = y.dims();
    const size_t rx = size_t(1 + pick(3));
    const int64_t k = d[rx] > 1 ? 1 + pick(d[rx] - 1) : 0;
    if (k > 0) {
      std::vector<int64_t> s0(5, 0), e0(d.begin(), d.end()), s1(5, 0), e1(d.begin(), d.end());
      s0[rx] = k;
      e1[rx] = k;
      y = g.node(NodeKind::Concat, "roll",
                 {slice(g, "a", y, s0, e0, steps5()), slice(g, "b", y, s1, e1, steps5())},
                 attrs({{"axis", int64_t(rx)}}));
    }
    const int64_t rows = y.type().size() / C;
    g.output("y", g.node(NodeKind::Relu, "relu", {reshape(g, "r2", y, {rows, C})}));
    EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runMovesToGather(f); }), 1u);
    runPipeline(*g.f, {"merge-reshape", "dce"});
    EXPECT_LE(maxRank(*g.f), 3);
    EXPECT_LE(count(*g.f, NodeKind::Gather), 1u);
  }
}

TEST(TokenRows, AChainThatMovesValuesWithinRowsKeepsItsTranspose) {
  // [4, 6, 8] -> [1, 4, 6, 8] -> Transpose (0, 1, 3, 2) -> [4, 8, 6]: no whole row of 8
  // stays together, so no Gather (a unit below 8 is not taken).
  G g;
  NodeValue x = g.input("x", {4, 6, 8});
  NodeValue y = transpose(g, "t", reshape(g, "r", x, {1, 4, 6, 8}), {0, 1, 3, 2});
  g.output("y", g.node(NodeKind::Relu, "relu", {reshape(g, "b", y, {4, 8, 6})}));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runMovesToGather(f); }), 0u);
  EXPECT_EQ(count(*g.f, NodeKind::Gather), 0u);
}

} // namespace
} // namespace ember::passtest
