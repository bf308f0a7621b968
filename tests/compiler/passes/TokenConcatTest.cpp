// sink-token-concat: a class token concatenated before computed tokens, moved below the
// position embedding's Add, the LayerNorms, the residual Adds and the head's Gather of one
// token, checked against the unrewritten graph on the float interpreter, plus the shape of
// the result (which LayerNorms are left, on which rows).
#include "PassTestUtil.h"

namespace ember {
namespace {

using namespace passtest;

Attrs axis(int64_t a) {
  return attrs({{"axis", a}});
}

NodeValue layerNorm(G& g, const std::string& name, NodeValue x, int64_t c) {
  return g.node(NodeKind::LayerNormalization, name,
                {x, g.constant(name + ".scale", {c}, 0.5f, 1.5f), g.constant(name + ".bias", {c})},
                axis(-1));
}

/// A pre-norm transformer layer on `x` [1, T, C]: attention (rows mixed by a MatMul of two
/// values and a Softmax), residual Add, LayerNorm, a MatMul by a constant, residual Add.
NodeValue preNormLayer(G& g, const std::string& p, NodeValue x, int64_t c) {
  NodeValue h = layerNorm(g, p + "ln_1", x, c);
  NodeValue ht = g.node(NodeKind::Transpose, p + "keys", {h},
                        attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}));
  NodeValue s = g.node(NodeKind::MatMul, p + "scores", {h, ht});
  NodeValue pr = g.node(NodeKind::Softmax, p + "softmax", {s}, axis(-1));
  NodeValue a = g.node(NodeKind::MatMul, p + "attention", {pr, h});
  NodeValue r = g.node(NodeKind::Add, p + "residual_1", {a, x});
  NodeValue m = g.node(NodeKind::MatMul, p + "mlp",
                       {layerNorm(g, p + "ln_2", r, c), g.constant(p + "mlp.w", {c, c})});
  return g.node(NodeKind::Add, p + "residual_2", {r, m});
}

/// torchvision's VisionTransformer after the patch embedding: a constant class token before
/// the patches, the position embedding, `layers` pre-norm layers, a final LayerNorm and the
/// class token's row taken for the head.
void buildVit(G& g, int64_t tokens, int64_t c, int layers, bool alsoSequence) {
  NodeValue patches = g.input("patches", {1, tokens, c});
  NodeValue cls = g.constant("class_token", {1, 1, c}, -0.05f, 0.05f);
  NodeValue seq = g.node(NodeKind::Concat, "concat", {cls, patches}, axis(1));
  NodeValue x =
      g.node(NodeKind::Add, "pos", {seq, g.constant("pos_embedding", {1, tokens + 1, c})});
  for (int l = 0; l < layers; ++l)
    x = preNormLayer(g, "layer" + std::to_string(l) + "/", x, c);
  NodeValue y = layerNorm(g, "ln", x, c);
  g.output("class", g.node(NodeKind::Gather, "head",
                           {y, g.constant("zero", Tensor::scalar<int64_t>(0))}, axis(1)));
  if (alsoSequence)
    g.output("sequence", y);
}

/// The number of LayerNormalizations, and whether one of them reads the class token's row
/// together with the patches (`tokens` + 1 rows).
std::pair<size_t, bool> layerNorms(const G& g, int64_t tokens) {
  size_t count = 0;
  bool whole = false;
  for (const auto& n : g.f->nodes())
    if (n->kind() == NodeKind::LayerNormalization) {
      ++count;
      whole = whole || n->input(0).dims()[1] == tokens + 1;
    }
  return {count, whole};
}

TEST(SinkTokenConcat, ClassTokenRowsRunApartThroughTheLayers) {
  G g;
  buildVit(g, 6, 16, 2, false);
  EXPECT_GT(checkPassKeepsResults(g, [](Function& f) { return runSinkTokenConcat(f); }), 0u);
  // Per layer: ln_1 on the patches only (the class token's row is a constant there and
  // folded, or a part of its own after the first layer), ln_2 once per part; the final
  // LayerNorm on the class token's row alone (the head reads nothing else).
  const auto [count, whole] = layerNorms(g, 6);
  EXPECT_EQ(count, 1u + 2u + 2u + 2u + 1u);
  EXPECT_FALSE(whole);
  const NodeValue head = g.f->outputs()[0].value;
  EXPECT_EQ(head.node->kind(), NodeKind::Gather);
  EXPECT_EQ(head.node->input(0).dims(), (Shape{1, 1, 16}));
  EXPECT_EQ(head.dims(), (Shape{1, 16}));
  // The LayerNorm outputs the attention reads are Concats again (a constant row and a
  // computed part in the first layer): nothing more to move.
  EXPECT_EQ(runSinkTokenConcat(*g.f), 0u);
}

TEST(SinkTokenConcat, ASequenceOutputIsTheConcatOfItsParts) {
  G g;
  buildVit(g, 5, 16, 1, true);
  EXPECT_GT(checkPassKeepsResults(g, [](Function& f) { return runSinkTokenConcat(f); }), 0u);
  const NodeValue seq = g.f->outputs()[1].value;
  EXPECT_EQ(seq.node->kind(), NodeKind::Concat);
  EXPECT_EQ(seq.dims(), (Shape{1, 6, 16}));
  EXPECT_FALSE(layerNorms(g, 5).second);
}

TEST(SinkTokenConcat, InTheDefaultPipeline) {
  G g;
  buildVit(g, 6, 16, 1, false);
  PassContext ctx;
  EXPECT_EQ(checkPassKeepsResults(g,
                                  [&](Function& f) {
                                    runPipeline(f, defaultPipeline(), ctx);
                                    return size_t(1);
                                  }),
            1u);
  EXPECT_FALSE(layerNorms(g, 6).second);
}

TEST(SinkTokenConcat, LeavesOtherConcatsAlone) {
  G g;
  NodeValue a = g.input("a", {1, 3, 8});
  NodeValue b = g.input("b", {1, 4, 8});
  // Two computed parts: no constant to fold.
  NodeValue both = g.node(NodeKind::Concat, "both", {a, b}, axis(1));
  g.output("y", layerNorm(g, "ln", both, 8));
  // A constant along the channels: the LayerNorm's line mixes it with the computed part.
  NodeValue wide = g.node(NodeKind::Concat, "wide", {a, g.constant("extra", {1, 3, 4})}, axis(2));
  g.output("z", layerNorm(g, "ln_wide", wide, 12));
  // A constant row read only by a MatMul, which mixes nothing but is not moved past.
  NodeValue rows = g.node(NodeKind::Concat, "rows", {g.constant("c", {1, 1, 8}), b}, axis(1));
  g.output("w", g.node(NodeKind::MatMul, "proj", {rows, g.constant("w", {8, 8})}));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runSinkTokenConcat(f); }), 0u);
  EXPECT_EQ(g.count(NodeKind::Concat), 3u);
  EXPECT_EQ(g.count(NodeKind::LayerNormalization), 2u);
}

} // namespace
} // namespace ember
