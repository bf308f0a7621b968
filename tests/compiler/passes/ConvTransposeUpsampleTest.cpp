// convtranspose-to-depthtospace: transposed convolutions of stride s >= 2 (any kernel,
// pads, output padding; one group, dilation 1, constant weights) become a Conv, a
// DepthToSpace and, when an output length is not a multiple of s, a crop Slice, checked
// against the unrewritten graph on the float interpreter; other transposed convolutions
// are left alone.
#include "PassTestUtil.h"

namespace ember {
namespace {

using namespace passtest;

size_t rewrite(Function& f) {
  return runConvTransposeToDepthToSpace(f);
}

NodeValue convTranspose(G& g, const std::string& p, NodeValue x, int64_t cin, int64_t cout,
                        int64_t kh, int64_t kw, const Attrs& a, bool bias) {
  std::vector<NodeValue> in = {x, g.constant(p + ".w", {cin, cout / a.getInt("group", 1), kh, kw})};
  if (bias)
    in.push_back(g.constant(p + ".b", {cout}));
  return g.node(NodeKind::ConvTranspose, p, in, a);
}

NodeValue convTranspose(G& g, const std::string& p, NodeValue x, int64_t cin, int64_t cout,
                        int64_t k, const Attrs& a, bool bias) {
  return convTranspose(g, p, x, cin, cout, k, k, a, bias);
}

Attrs window(int64_t s, std::vector<int64_t> pads, std::vector<int64_t> outputPadding) {
  return attrs({{"strides", std::vector<int64_t>{s, s}},
                {"pads", std::move(pads)},
                {"output_padding", std::move(outputPadding)}});
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

// The two common upsampling forms need no crop: k = 4, s = 2, pads 1 (DCGAN / pix2pix
// U-Net) is a 3 x 3 Conv with pads 1; k = 3, s = 2, pads 1, output_padding 1 a 2 x 2 Conv
// with pads (0, 1). Taps per phase, worked by hand from y[2q + a] = sum x[i] W[t], 2i + t
// = 2q + a + 1: phase 0 has t = 1 (i = q) and t = 3 (i = q - 1), phase 1 t = 0 (i = q + 1)
// and t = 2 (i = q), so the window is x[q - 1 .. q + 1].
TEST(ConvTransposeToDepthToSpace, CommonUpsamplingNeedsNoCrop) {
  struct Case {
    int64_t k, op, tc;
    std::vector<int64_t> convPads;
  };
  for (const Case& c : {Case{4, 0, 3, {1, 1, 1, 1}}, Case{3, 1, 2, {0, 0, 1, 1}}}) {
    SCOPED_TRACE("k=" + std::to_string(c.k));
    G g;
    NodeValue x = g.input("x", {1, 5, 4, 6});
    g.output("y",
             convTranspose(g, "up", x, 5, 3, c.k, window(2, {1, 1, 1, 1}, {c.op, c.op}), true));
    EXPECT_EQ(checkPassKeepsResults(g, rewrite), 1u);
    EXPECT_EQ(g.count(NodeKind::Slice), 0u);
    const Node* up = g.f->findNode("up");
    ASSERT_NE(up, nullptr);
    ASSERT_EQ(up->kind(), NodeKind::DepthToSpace);
    EXPECT_EQ(up->resultType().dims, (Shape{1, 3, 8, 12}));
    const Node* conv = up->input(0).node;
    ASSERT_EQ(conv->kind(), NodeKind::Conv);
    EXPECT_EQ(conv->input(1).dims(), (Shape{12, 5, c.tc, c.tc}));
    EXPECT_EQ(conv->attrs().getInts("pads"), c.convPads);
  }
}

// k = 3, s = 2, pads 1 without output padding gives 2 L - 1 pixels: the Conv makes 2 L and
// a Slice keeps the first 2 L - 1.
TEST(ConvTransposeToDepthToSpace, OddOutputLengthIsCropped) {
  G g;
  NodeValue x = g.input("x", {1, 3, 4, 5});
  g.output("y", convTranspose(g, "up", x, 3, 5, 3, window(2, {1, 1, 1, 1}, {0, 0}), false));
  EXPECT_EQ(checkPassKeepsResults(g, rewrite), 1u);
  const Node* up = g.f->findNode("up");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->kind(), NodeKind::Slice);
  EXPECT_EQ(up->resultType().dims, (Shape{1, 5, 7, 9}));
  EXPECT_EQ(up->input(0).node->resultType().dims, (Shape{1, 5, 8, 10}));
}

// Random shapes (seeded): kernels 2..5 per axis, strides 2 and 3, every pad and output
// padding ONNX allows (pads < kernel, output padding < stride), odd channel counts, bias or
// not; each rewritten graph against the unrewritten one on the float interpreter.
TEST(ConvTransposeToDepthToSpace, RandomShapesKeepResults) {
  std::mt19937 rng(20261207);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  size_t tried = 0, rewritten = 0;
  while (tried < 150) {
    const int64_t s = pick(2, 3), kh = pick(2, 5), kw = pick(2, 5), h = pick(1, 5), w = pick(1, 5);
    const std::vector<int64_t> pads = {pick(0, kh - 1), pick(0, kw - 1), pick(0, kh - 1),
                                       pick(0, kw - 1)};
    const std::vector<int64_t> op = {pick(0, s - 1), pick(0, s - 1)};
    if (s * (h - 1) + kh + op[0] - pads[0] - pads[2] < 1 ||
        s * (w - 1) + kw + op[1] - pads[1] - pads[3] < 1)
      continue;
    ++tried;
    const int64_t cin = pick(1, 7), cout = pick(1, 7);
    const bool bias = pick(0, 1);
    SCOPED_TRACE("s=" + std::to_string(s) + " k=" + std::to_string(kh) + "x" + std::to_string(kw) +
                 " x=" + std::to_string(h) + "x" + std::to_string(w) +
                 " pads=" + std::to_string(pads[0]) + "," + std::to_string(pads[1]) + "," +
                 std::to_string(pads[2]) + "," + std::to_string(pads[3]) +
                 " op=" + std::to_string(op[0]) + "," + std::to_string(op[1]));
    G g;
    NodeValue x = g.input("x", {2, cin, h, w});
    g.output("y", convTranspose(g, "up", x, cin, cout, kh, kw, window(s, pads, op), bias));
    const size_t n = checkPassKeepsResults(g, rewrite);
    rewritten += n;
    if (pads[0] + pads[2] < kh && pads[1] + pads[3] < kw) { // a Conv no wider than k
      EXPECT_EQ(n, 1u);
    }
  }
  EXPECT_GE(rewritten, 120u);
}

TEST(ConvTransposeToDepthToSpace, LeavesOtherTransposedConvolutions) {
  G g;
  NodeValue x = g.input("x", {1, 4, 3, 3});
  // Groups, dilation, stride 1, unequal strides, weights that are not constant.
  g.output("d", convTranspose(
                    g, "d", x, 4, 4, 2,
                    attrs({{"strides", std::vector<int64_t>{2, 2}}, {"group", int64_t(2)}}), true));
  g.output("e", convTranspose(g, "e", x, 4, 4, 2,
                              attrs({{"strides", std::vector<int64_t>{2, 2}},
                                     {"dilations", std::vector<int64_t>{2, 2}}}),
                              false));
  g.output("f", convTranspose(g, "f", x, 4, 4, 3, attrs({}), false));
  g.output("h", convTranspose(g, "h", x, 4, 4, 3, attrs({{"strides", std::vector<int64_t>{2, 3}}}),
                              false));
  NodeValue wIn = g.input("w", {4, 4, 3, 3});
  g.output("i", g.node(NodeKind::ConvTranspose, "i", {x, wIn},
                       attrs({{"strides", std::vector<int64_t>{2, 2}}})));
  EXPECT_EQ(checkPassKeepsResults(g, rewrite), 0u);
  EXPECT_EQ(g.count(NodeKind::ConvTranspose), 5u);
}

} // namespace
} // namespace ember
