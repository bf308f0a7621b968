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
