// patches-to-sequence: a vision transformer's patch embedding (Conv, Reshape to [1, C, H*W],
// Transpose(0, 2, 1)) and the way back from tokens to an image, checked against the
// unrewritten graph on the float interpreter and against the token order written out
// here (token p = pixel p in row-major order, its features the channels).
#include "PassTestUtil.h"

namespace ember {
namespace {

using namespace passtest;

Attrs shapeAttr(std::vector<int64_t> s) {
  return attrs({{"shape", std::move(s)}});
}

Attrs perm021() {
  return attrs({{"perm", std::vector<int64_t>{0, 2, 1}}});
}

/// Every Transpose left keeps the channel axis of a rank-4 value.
void expectOnlyChannelKeepingTransposes(const G& g) {
  for (const auto& n : g.f->nodes())
    if (n->kind() == NodeKind::Transpose) {
      EXPECT_EQ(n->input(0).dims().size(), 4u) << n->name();
      EXPECT_EQ(n->attrs().getInts("perm").at(1), 1) << n->name();
    }
}

TEST(PatchesToSequence, PatchEmbeddingBecomesAChannelKeepingTranspose) {
  G g;
  NodeValue x = g.input("x", {1, 3, 32, 24});
  NodeValue conv =
      g.node(NodeKind::Conv, "proj", {x, g.constant("w", {20, 3, 8, 8}), g.constant("b", {20})},
             attrs({{"kernel_shape", std::vector<int64_t>{8, 8}},
                    {"strides", std::vector<int64_t>{8, 8}}}));
  NodeValue flat = g.node(NodeKind::Reshape, "flat", {conv}, shapeAttr({1, 20, 12}));
  NodeValue seq = g.node(NodeKind::Transpose, "tokens", {flat}, perm021());
  g.output("y", g.node(NodeKind::Add, "pos", {seq, g.constant("pos", {1, 12, 20})}));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runPatchesToSequence(f); }), 1u);
  expectOnlyChannelKeepingTransposes(g);
  EXPECT_EQ(g.count(NodeKind::Transpose), 1u);
  EXPECT_EQ(g.f->outputs()[0].value.dims(), (Shape{1, 12, 20}));
  // A second run finds nothing more to do.
  EXPECT_EQ(runPatchesToSequence(*g.f), 0u);
}

TEST(PatchesToSequence, TokensAreThePixelsInRowMajorOrder) {
  G g;
  NodeValue x = g.input("x", {1, 5, 3, 4});
  NodeValue flat = g.node(NodeKind::Reshape, "flat", {x}, shapeAttr({1, 5, 12}));
  g.output("y", g.node(NodeKind::Transpose, "tokens", {flat}, perm021()));
  EXPECT_EQ(runPatchesToSequence(*g.f), 1u);
  EXPECT_TRUE(verifyFunction(*g.f).empty());
  const TensorMap in = g.randomInputs();
  const TensorMap out = g.run(in);
  const Tensor& y = out.at("y");
  const Tensor& xv = in.at("x");
  ASSERT_EQ(y.dims(), (Shape{1, 12, 5}));
  for (int64_t c = 0; c < 5; ++c)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t w = 0; w < 4; ++w)
        EXPECT_EQ(y.data<float>()[(h * 4 + w) * 5 + c], xv.data<float>()[(c * 3 + h) * 4 + w]);
}

TEST(PatchesToSequence, SequenceBackToAnImage) {
  G g;
  NodeValue s = g.input("s", {1, 15, 24});
  NodeValue t = g.node(NodeKind::Transpose, "to_first", {s}, perm021());
  NodeValue img = g.node(NodeKind::Reshape, "image", {t}, shapeAttr({1, 24, 3, 5}));
  g.output("y", g.node(NodeKind::Conv, "conv",
                       {img, g.constant("w", {8, 24, 3, 3}), g.constant("b", {8})},
                       attrs({{"kernel_shape", std::vector<int64_t>{3, 3}},
                              {"pads", std::vector<int64_t>{1, 1, 1, 1}}})));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runPatchesToSequence(f); }), 1u);
  expectOnlyChannelKeepingTransposes(g);
}

TEST(PatchesToSequence, LeavesOtherShapesAlone) {
  G g;
  // Two images (the channel-keeping form needs one), a Reshape that is not a flattening of
  // H and W, a Transpose the Reshape's value also feeds elsewhere, another permutation.
  NodeValue two = g.input("two", {2, 4, 3, 3});
  g.output("a", g.node(NodeKind::Transpose, "a.t",
                       {g.node(NodeKind::Reshape, "a.r", {two}, shapeAttr({2, 4, 9}))}, perm021()));
  NodeValue one = g.input("one", {1, 4, 3, 3});
  g.output("b",
           g.node(NodeKind::Transpose, "b.t",
                  {g.node(NodeKind::Reshape, "b.r", {one}, shapeAttr({1, 12, 3}))}, perm021()));
  NodeValue shared = g.node(NodeKind::Reshape, "c.r", {one}, shapeAttr({1, 4, 9}));
  g.output("c", g.node(NodeKind::Transpose, "c.t", {shared}, perm021()));
  g.output("c2", shared);
  g.output("d", g.node(NodeKind::Transpose, "d.t", {shared},
                       attrs({{"perm", std::vector<int64_t>{1, 0, 2}}})));
  NodeValue seq = g.input("seq", {1, 9, 4});
  g.output("e",
           g.node(NodeKind::Reshape, "e.r", {g.node(NodeKind::Transpose, "e.t", {seq}, perm021())},
                  shapeAttr({1, 2, 2, 9})));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runPatchesToSequence(f); }), 0u);
}

TEST(PatchesToSequence, DefaultPipelineKeepsAViTStem) {
  // Patch embedding, class token concatenated before the patches, positions added, one
  // LayerNorm and a head on the class token: the whole default pipeline keeps the values.
  G g;
  NodeValue x = g.input("x", {1, 3, 16, 16});
  NodeValue conv =
      g.node(NodeKind::Conv, "proj", {x, g.constant("w", {32, 3, 4, 4}), g.constant("b", {32})},
             attrs({{"kernel_shape", std::vector<int64_t>{4, 4}},
                    {"strides", std::vector<int64_t>{4, 4}}}));
  NodeValue seq =
      g.node(NodeKind::Transpose, "tokens",
             {g.node(NodeKind::Reshape, "flat", {conv}, shapeAttr({1, 32, 16}))}, perm021());
  NodeValue cat = g.node(NodeKind::Concat, "cls", {g.constant("cls.token", {1, 1, 32}), seq},
                         attrs({{"axis", int64_t(1)}}));
  NodeValue pos = g.node(NodeKind::Add, "pos", {cat, g.constant("pos", {1, 17, 32})});
  NodeValue ln = g.node(NodeKind::LayerNormalization, "ln",
                        {pos, g.constant("ln.s", {32}, 0.5f, 1.5f), g.constant("ln.b", {32})},
                        attrs({{"axis", int64_t(-1)}}));
  NodeValue first =
      g.node(NodeKind::Gather, "first", {ln, g.constant("idx", Tensor::scalar<int64_t>(0))},
             attrs({{"axis", int64_t(1)}}));
  g.output("y", g.node(NodeKind::Gemm, "head",
                       {first, g.constant("hw", {32, 10}), g.constant("hb", {10})}));
  EXPECT_GT(checkPassKeepsResults(
                g, [](Function& f) { return runPipeline(f, defaultPipeline()).size(); }),
            0u);
  expectOnlyChannelKeepingTransposes(g);
}

} // namespace
} // namespace ember
