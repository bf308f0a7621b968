// convtranspose-to-depthtospace: transposed convolutions whose kernel equals their stride
// become a 1 x 1 Conv and a DepthToSpace, checked against the unrewritten graph on the
// float interpreter; other transposed convolutions are left alone.
#include "PassTestUtil.h"

namespace ember {
namespace {

using namespace passtest;

size_t rewrite(Function& f) {
  return runConvTransposeToDepthToSpace(f);
}

NodeValue convTranspose(G& g, const std::string& p, NodeValue x, int64_t cin, int64_t cout,
                        int64_t k, const Attrs& a, bool bias) {
  std::vector<NodeValue> in = {x, g.constant(p + ".w", {cin, cout / a.getInt("group", 1), k, k})};
  if (bias)
    in.push_back(g.constant(p + ".b", {cout}));
  return g.node(NodeKind::ConvTranspose, p, in, a);
}

TEST(ConvTransposeToDepthToSpace, KernelEqualToStrideBecomesConvAndDepthToSpace) {
  // (block, input channels, output channels, bias): odd channel counts among them.
  const std::vector<std::tuple<int64_t, int64_t, int64_t, bool>> cases = {
      {2, 5, 3, true}, {2, 16, 8, false}, {3, 4, 7, true}};
  for (const auto& [b, cin, cout, bias] : cases) {
    SCOPED_TRACE("b=" + std::to_string(b) + " cin=" + std::to_string(cin) +
                 " cout=" + std::to_string(cout));
    G g;
    NodeValue x = g.input("x", {2, cin, 3, 5});
    g.output("y", convTranspose(g, "up", x, cin, cout, b,
                                attrs({{"strides", std::vector<int64_t>{b, b}}}), bias));
    EXPECT_EQ(checkPassKeepsResults(g, rewrite), 1u);
    EXPECT_EQ(g.count(NodeKind::ConvTranspose), 0u);
    const Node* up = g.f->findNode("up"); // the DepthToSpace keeps the name
    ASSERT_NE(up, nullptr);
    EXPECT_EQ(up->kind(), NodeKind::DepthToSpace);
    const Node* conv = up->input(0).node;
    ASSERT_EQ(conv->kind(), NodeKind::Conv);
    EXPECT_EQ(conv->input(1).dims(), (Shape{b * b * cout, cin, 1, 1}));
    EXPECT_EQ(conv->numInputs(), bias ? 3u : 2u);
    EXPECT_EQ(up->resultType().dims, (Shape{2, cout, 3 * b, 5 * b}));
    EXPECT_EQ(rewrite(*g.f), 0u); // a second run changes nothing
  }
}

TEST(ConvTransposeToDepthToSpace, LeavesOtherTransposedConvolutions) {
  G g;
  NodeValue x = g.input("x", {1, 4, 3, 3});
  // Overlapping taps (k = 3, s = 2), padding, output padding, groups, dilation.
  g.output("a", convTranspose(g, "a", x, 4, 4, 3, attrs({{"strides", std::vector<int64_t>{2, 2}}}),
                              true));
  g.output("b", convTranspose(g, "b", x, 4, 4, 2,
                              attrs({{"strides", std::vector<int64_t>{2, 2}},
                                     {"pads", std::vector<int64_t>{1, 1, 1, 1}}}),
                              false));
  g.output("c", convTranspose(g, "c", x, 4, 4, 2,
                              attrs({{"strides", std::vector<int64_t>{2, 2}},
                                     {"output_padding", std::vector<int64_t>{1, 1}}}),
                              false));
  g.output("d", convTranspose(
                    g, "d", x, 4, 4, 2,
                    attrs({{"strides", std::vector<int64_t>{2, 2}}, {"group", int64_t(2)}}), true));
  g.output("e", convTranspose(g, "e", x, 4, 4, 2,
                              attrs({{"strides", std::vector<int64_t>{2, 2}},
                                     {"dilations", std::vector<int64_t>{2, 2}}}),
                              false));
  EXPECT_EQ(checkPassKeepsResults(g, rewrite), 0u);
  EXPECT_EQ(g.count(NodeKind::ConvTranspose), 5u);
}

} // namespace
} // namespace ember
