// The lower pass with a backend that asks for everything (and one that asks for
// nothing), on each lowering.
#include "PassTestUtil.h"

#include "ember/graph/attrs/FusedActivation.h"

namespace ember {
namespace {

using namespace passtest;

size_t lowerAll(Function& f) {
  LowerAllBackend b;
  PassContext ctx;
  ctx.backend = &b;
  return runLower(f, ctx);
}

TEST(Lower, NothingWithoutABackendOrWithTheInterpreter) {
  G g;
  NodeValue x = g.input("x", {2, 3});
  g.output("y", g.node(NodeKind::HardSwish, "hs", {x}));
  EXPECT_EQ(runLower(*g.f), 0u);
  auto interp = createInterpreterBackend();
  PassContext ctx;
  ctx.backend = interp.get();
  EXPECT_EQ(runLower(*g.f, ctx), 0u);
  EXPECT_EQ(g.count(NodeKind::HardSwish), 1u);
}

TEST(Lower, GemmWithAlphaBetaAndTransposes) {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      G g;
      NodeValue a = g.input("a", ta ? Shape{6, 4} : Shape{4, 6});
      NodeValue b = g.constant("b", tb ? Shape{5, 6} : Shape{6, 5});
      Attrs at =
          attrs({{"alpha", 0.5}, {"beta", 2.0}, {"transA", int64_t(ta)}, {"transB", int64_t(tb)}});
      at.set(kActivationAttr, std::string("relu"));
      g.output("y", g.node(NodeKind::Gemm, "gemm", {a, b, g.constant("c", {5})}, at));
      EXPECT_EQ(checkPassKeepsResults(g, lowerAll), 1u);
      EXPECT_EQ(g.count(NodeKind::Gemm), 0u);
      EXPECT_EQ(g.count(NodeKind::MatMul), 1u);
      EXPECT_EQ(g.count(NodeKind::Transpose), size_t(ta + tb));
      // The fused ReLU moved to the final Add.
      const Node* last = g.f->outputs()[0].value.node;
      EXPECT_EQ(last->kind(), NodeKind::Add);
      EXPECT_EQ(last->attrs().getString(kActivationAttr), "relu");
    }
}

TEST(Lower, PlainGemmBecomesOneMatMulCarryingTheActivation) {
  G g;
  NodeValue a = g.input("a", {3, 4});
  Attrs at;
  FusedActivation clip;
  clip.kind = FusedActivation::Kind::Clip;
  clip.lo = 0;
  clip.hi = 0.3;
  clip.writeTo(at);
  g.output("y", g.node(NodeKind::Gemm, "gemm", {a, g.constant("b", {4, 2})}, at));
  checkPassKeepsResults(g, lowerAll);
  EXPECT_EQ(g.f->numNodes(), 1u);
  EXPECT_EQ(g.f->nodes().front()->kind(), NodeKind::MatMul);
  EXPECT_EQ(g.f->nodes().front()->attrs().getString(kActivationAttr), "clip");
}

TEST(Lower, LayerNormalizationWithAndWithoutBias) {
  for (bool bias : {true, false}) {
    G g;
    NodeValue x = g.input("x", {2, 5, 8});
    std::vector<NodeValue> in = {x, g.constant("scale", {8})};
    if (bias)
      in.push_back(g.constant("bias", {8}));
    g.output("y", g.node(NodeKind::LayerNormalization, "ln", in,
                         attrs({{"axis", int64_t(-1)}, {"epsilon", 1e-5}})));
    EXPECT_EQ(checkPassKeepsResults(g, lowerAll), 1u);
    EXPECT_EQ(g.count(NodeKind::LayerNormalization), 0u);
    EXPECT_EQ(g.count(NodeKind::ReduceMean), 2u);
    EXPECT_EQ(g.count(NodeKind::Sqrt), 1u);
    EXPECT_EQ(g.count(NodeKind::Div), 1u);
    EXPECT_EQ(g.f->numNodes(), bias ? 9u : 8u);
  }
}

TEST(Lower, LayerNormalizationOverSeveralAxes) {
  G g;
  NodeValue x = g.input("x", {2, 3, 4});
  g.output("y", g.node(NodeKind::LayerNormalization, "ln", {x, g.constant("scale", {3, 4})},
                       attrs({{"axis", int64_t(1)}})));
  EXPECT_EQ(checkPassKeepsResults(g, lowerAll), 1u);
}

TEST(Lower, StandaloneBatchNormalizationIsMulAdd) {
  G g;
  NodeValue x = g.input("x", {2, 3, 4, 4});
  g.output("y", g.node(NodeKind::BatchNormalization, "bn",
                       {x, g.constant("s", {3}), g.constant("b", {3}), g.constant("m", {3}),
                        g.constant("v", {3}, 0.2f, 2.f)}));
  EXPECT_EQ(checkPassKeepsResults(g, lowerAll), 1u);
  EXPECT_EQ(g.f->numNodes(), 2u);
  EXPECT_EQ(g.count(NodeKind::Mul), 1u);
  EXPECT_EQ(g.count(NodeKind::Add), 1u);
}

TEST(Lower, GlobalAveragePoolAndSpatialReduceMeanSwapPlaces) {
  G g;
  NodeValue x = g.input("x", {2, 3, 5, 4});
  g.output("gap", g.node(NodeKind::GlobalAveragePool, "gap", {x}));
  g.output("rm",
           g.node(NodeKind::ReduceMean, "rm", {x}, attrs({{"axes", std::vector<int64_t>{-1, 2}}})));
  g.output("other",
           g.node(NodeKind::ReduceMean, "rm1", {x}, attrs({{"axes", std::vector<int64_t>{1}}})));
  EXPECT_EQ(checkPassKeepsResults(g, lowerAll), 2u); // rm1 is not a spatial mean
  EXPECT_EQ(g.count(NodeKind::GlobalAveragePool), 1u);
  EXPECT_EQ(g.count(NodeKind::ReduceMean), 2u);
  EXPECT_EQ(g.f->outputs()[0].value.node->kind(), NodeKind::ReduceMean);
  EXPECT_EQ(g.f->outputs()[1].value.node->kind(), NodeKind::GlobalAveragePool);
}

TEST(Lower, HardSigmoidHardSwishSiluGeluBecomePrimitives) {
  G g;
  NodeValue x = g.input("x", {4, 16});
  g.output("hsig",
           g.node(NodeKind::HardSigmoid, "hsig", {x}, attrs({{"alpha", 0.3}, {"beta", 0.4}})));
  g.output("hsw", g.node(NodeKind::HardSwish, "hsw", {x}));
  g.output("silu", g.node(NodeKind::Silu, "silu", {x}));
  g.output("gelu", g.node(NodeKind::Gelu, "gelu", {x}));
  EXPECT_EQ(checkPassKeepsResults(g, lowerAll), 4u);
  for (NodeKind k : {NodeKind::HardSigmoid, NodeKind::HardSwish, NodeKind::Silu, NodeKind::Gelu})
    EXPECT_EQ(g.count(k), 0u) << nodeKindName(k);
  EXPECT_EQ(g.count(NodeKind::Clip), 2u);
  EXPECT_EQ(g.count(NodeKind::Erf), 1u);
  // And fuse-silu-gelu recognises the lowered Gelu and Silu again.
  EXPECT_EQ(runFuseSiluGelu(*g.f), 2u);
}

TEST(Lower, OnlyWhatTheBackendAsksFor) {
  G g;
  NodeValue x = g.input("x", {2, 3});
  g.output("a", g.node(NodeKind::HardSwish, "hs", {x}));
  g.output("b", g.node(NodeKind::Gemm, "gemm", {x, g.constant("w", {3, 3})}));
  LowerAllBackend onlyGemm([](const Node& n) { return n.kind() == NodeKind::Gemm; });
  PassContext ctx;
  ctx.backend = &onlyGemm;
  EXPECT_EQ(checkPassKeepsResults(g, [&](Function& f) { return runLower(f, ctx); }), 1u);
  EXPECT_EQ(g.count(NodeKind::HardSwish), 1u);
  EXPECT_EQ(g.count(NodeKind::Gemm), 0u);
}

} // namespace
} // namespace ember

namespace ember {
namespace {

using namespace passtest;

TEST(NormalizeGemm, EveryFlagCombinationBecomesAPlainGemm) {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (double beta : {1.0, 0.0, -1.5}) {
        G g;
        NodeValue a = g.input("a", ta ? Shape{6, 4} : Shape{4, 6});
        NodeValue b = g.constant("b", tb ? Shape{5, 6} : Shape{6, 5});
        Attrs at = attrs(
            {{"alpha", 0.75}, {"beta", beta}, {"transA", int64_t(ta)}, {"transB", int64_t(tb)}});
        at.set("activation", std::string("relu"));
        g.output("y", g.node(NodeKind::Gemm, "fc", {a, b, g.constant("c", {4, 5})}, at));
        SCOPED_TRACE(std::to_string(ta) + std::to_string(tb) + " beta " + std::to_string(beta));
        EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runNormalizeGemm(f); }), 1u);
        const Node* fc = g.f->findNode("fc");
        ASSERT_NE(fc, nullptr);
        EXPECT_EQ(fc->kind(), NodeKind::Gemm);
        for (const char* k : {"alpha", "beta", "transA", "transB"})
          EXPECT_FALSE(fc->attrs().has(k)) << k;
        EXPECT_EQ(fc->attrs().getString("activation"), "relu");
        EXPECT_EQ(fc->input(1).dims(), (Shape{6, 5}));
        EXPECT_EQ(fc->numInputs(), beta == 0.0 ? 2u : 3u);
        EXPECT_EQ(g.count(NodeKind::Transpose), size_t(ta)); // A is not constant
        EXPECT_EQ(runNormalizeGemm(*g.f), 0u);               // already normal
      }
}

TEST(NormalizeGemm, LeavesAGemmWithRunTimeWeightsAndTransB) {
  G g;
  NodeValue a = g.input("a", {3, 4});
  NodeValue b = g.input("b", {5, 4});
  g.output("y", g.node(NodeKind::Gemm, "fc", {a, b}, attrs({{"transB", int64_t(1)}})));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runNormalizeGemm(f); }), 0u);
  EXPECT_EQ(g.f->findNode("fc")->attrs().getInt("transB"), 1);
}

TEST(FlattenGemmToConv, AClassifierOnAFlattenedMapBecomesAConvolution) {
  for (bool bias : {true, false}) {
    G g;
    NodeValue x = g.input("x", {2, 3, 4, 5});
    NodeValue flat = g.node(NodeKind::Reshape, "flatten", {x}, attrs({{"shape", Shape{2, 60}}}));
    std::vector<NodeValue> in = {flat, g.constant("b", {60, 7})};
    if (bias)
      in.push_back(g.constant("c", {7}));
    g.output("y", g.node(NodeKind::Gemm, "fc", in));
    SCOPED_TRACE(bias ? "bias" : "no bias");
    EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runFlattenGemmToConv(f); }), 1u);
    EXPECT_EQ(g.count(NodeKind::Gemm), 0u);
    ASSERT_EQ(g.count(NodeKind::Conv), 1u);
    const Node* fc = g.f->findNode("fc"); // the Reshape of the Conv's result keeps the name
    ASSERT_NE(fc, nullptr);
    EXPECT_EQ(fc->kind(), NodeKind::Reshape);
    const Node* conv = fc->input(0).node;
    EXPECT_EQ(conv->input(0), x);
    EXPECT_EQ(conv->input(1).dims(), (Shape{7, 3, 4, 5}));
    EXPECT_EQ(conv->attrs().getInts("kernel_shape"), (std::vector<int64_t>{4, 5}));
    EXPECT_EQ(conv->numInputs(), bias ? 3u : 2u);
  }
}

TEST(FlattenGemmToConv, LeavesOtherFullyConnectedLayers) {
  G g;
  // A 1x1 map: the flatten moves no data, the Gemm stays (the zoo's classifiers).
  NodeValue p = g.input("p", {1, 8, 1, 1});
  NodeValue pf = g.node(NodeKind::Reshape, "pf", {p}, attrs({{"shape", Shape{1, 8}}}));
  g.output("y1", g.node(NodeKind::Gemm, "fc1", {pf, g.constant("b1", {8, 3})}));
  // Run-time weights, and a bias of another shape: no Conv form.
  NodeValue x = g.input("x", {1, 2, 2, 2});
  NodeValue xf = g.node(NodeKind::Reshape, "xf", {x}, attrs({{"shape", Shape{1, 8}}}));
  g.output("y2", g.node(NodeKind::Gemm, "fc2", {xf, g.input("w", {8, 3})}));
  g.output("y3",
           g.node(NodeKind::Gemm, "fc3", {xf, g.constant("b3", {8, 3}), g.input("c", {1, 3})}));
  // Not a flatten of a rank-4 value.
  NodeValue v = g.input("v", {2, 6});
  g.output("y4", g.node(NodeKind::Gemm, "fc4", {v, g.constant("b4", {6, 3})}));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runFlattenGemmToConv(f); }), 0u);
  EXPECT_EQ(g.count(NodeKind::Gemm), 4u);
}

TEST(MatMulBiasToGemm, ALinearLayerOnASequenceBecomesOneGemm) {
  // (bias first, Relu after, rank of x)
  for (int form = 0; form < 6; ++form) {
    const bool biasFirst = form & 1, relu = form >= 2;
    const Shape xd = form >= 4 ? Shape{6, 4} : Shape{2, 3, 4};
    G g;
    NodeValue x = g.input("x", xd);
    NodeValue mm = g.node(NodeKind::MatMul, "mm", {x, g.constant("w", {4, 5})});
    NodeValue b = g.constant("b", form == 1 ? Shape{1, 1, 5} : Shape{5});
    NodeValue add =
        g.node(NodeKind::Add, "add",
               biasFirst ? std::vector<NodeValue>{b, mm} : std::vector<NodeValue>{mm, b});
    g.output("y", relu ? g.node(NodeKind::Relu, "relu", {add}) : add);
    SCOPED_TRACE("form " + std::to_string(form));
    EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runMatMulBiasToGemm(f); }), 1u);
    EXPECT_EQ(g.count(NodeKind::MatMul), 0u);
    EXPECT_EQ(g.count(NodeKind::Add), 0u);
    ASSERT_EQ(g.count(NodeKind::Gemm), 1u);
    EXPECT_EQ(g.count(NodeKind::Reshape), xd.size() > 2 ? 2u : 0u);
    const Node* last = g.f->outputs()[0].value.node;
    EXPECT_EQ(last->name(), relu ? "relu" : "add");
    if (xd.size() > 2) {
      // [2, 3, 4] -> [6, 4] -> Gemm (-> Relu) -> [2, 3, 5]
      EXPECT_EQ(last->kind(), NodeKind::Reshape);
      const Node* beforeReshape = last->input(0).node;
      EXPECT_EQ(beforeReshape->kind(), relu ? NodeKind::Relu : NodeKind::Gemm);
    }
    // fuse-activation then finds the Relu on the Gemm.
    if (relu) {
      runFuseActivation(*g.f);
      EXPECT_EQ(g.count(NodeKind::Relu), 0u);
    }
  }
}

TEST(MatMulBiasToGemm, LeavesWhatIsNotALinearLayer) {
  G g;
  NodeValue x = g.input("x", {2, 3, 4});
  // Run-time weights.
  NodeValue m1 = g.node(NodeKind::MatMul, "m1", {x, g.input("w1", {4, 5})});
  g.output("y1", g.node(NodeKind::Add, "a1", {m1, g.constant("b1", {5})}));
  // A bias that varies along the rows, not the features.
  NodeValue m2 = g.node(NodeKind::MatMul, "m2", {x, g.constant("w2", {4, 5})});
  g.output("y2", g.node(NodeKind::Add, "a2", {m2, g.constant("b2", {3, 1})}));
  // An addend computed at run time.
  NodeValue m3 = g.node(NodeKind::MatMul, "m3", {x, g.constant("w3", {4, 5})});
  g.output("y3", g.node(NodeKind::Add, "a3", {m3, g.input("r", {2, 3, 5})}));
  // The MatMul's result is also used elsewhere.
  NodeValue m4 = g.node(NodeKind::MatMul, "m4", {x, g.constant("w4", {4, 5})});
  g.output("y4", g.node(NodeKind::Add, "a4", {m4, g.constant("b4", {5})}));
  g.output("m4", m4);
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runMatMulBiasToGemm(f); }), 0u);
  EXPECT_EQ(g.count(NodeKind::MatMul), 4u);
  EXPECT_EQ(g.count(NodeKind::Gemm), 0u);
}

/// A ReduceMean or ReduceSum over `axes` of a [2, 3, 4, 5] input: the pass rewrites it
/// (GlobalAveragePool, times the area for a sum, a Reshape without keepdims) and the
/// result is the mean or sum written out here.
void expectSpatialReductionRewritten(NodeKind kind, const std::vector<int64_t>& axes,
                                     int64_t keep) {
  G g;
  NodeValue x = g.input("x", {2, 3, 4, 5});
  g.output("y", g.node(kind, "reduce", {x}, attrs({{"axes", axes}, {"keepdims", keep}})));
  SCOPED_TRACE("keepdims " + std::to_string(keep));
  const TensorMap in = g.randomInputs();
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runSpatialMeanToPool(f); }), 1u);
  const bool sum = kind == NodeKind::ReduceSum;
  EXPECT_EQ(g.count(kind), 0u);
  EXPECT_EQ(g.count(NodeKind::GlobalAveragePool), 1u);
  EXPECT_EQ(g.count(NodeKind::Mul), sum ? 1u : 0u);
  EXPECT_EQ(g.count(NodeKind::Reshape), keep ? 0u : 1u);
  const Node* out = g.f->findNode("reduce"); // the last node keeps the name
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->resultType(0).dims, keep ? (Shape{2, 3, 1, 1}) : (Shape{2, 3}));
  const Tensor& xt = in.at("x");
  const Tensor y = g.run(in).at("y");
  for (int64_t c = 0; c < 6; ++c) {
    double total = 0;
    for (int64_t i = 0; i < 20; ++i)
      total += xt.data<float>()[c * 20 + i];
    EXPECT_NEAR(y.data<float>()[c], sum ? total : total / 20, sum ? 1e-5 : 1e-6) << "channel " << c;
  }
}

TEST(SpatialMeanToPool, AMeanOverHeightAndWidthBecomesGlobalPooling) {
  // (axes, keepdims): both orders, negative axes, with and without the kept axes.
  const std::pair<std::vector<int64_t>, int64_t> forms[] = {
      {{2, 3}, 1}, {{3, 2}, 0}, {{-2, -1}, 0}, {{-1, 2}, 1}};
  for (const auto& [axes, keep] : forms)
    expectSpatialReductionRewritten(NodeKind::ReduceMean, axes, keep);
}

TEST(SpatialMeanToPool, ASumOverHeightAndWidthBecomesPoolingTimesTheArea) {
  for (const int64_t keep : {1, 0})
    expectSpatialReductionRewritten(NodeKind::ReduceSum, {2, 3}, keep);
}

TEST(SpatialMeanToPool, LeavesOtherReductions) {
  G g;
  NodeValue x = g.input("x", {2, 3, 4, 5});
  g.output("a",
           g.node(NodeKind::ReduceMean, "c_axis", {x}, attrs({{"axes", std::vector<int64_t>{1}}})));
  g.output("b", g.node(NodeKind::ReduceMean, "hwc", {x},
                       attrs({{"axes", std::vector<int64_t>{1, 2, 3}}})));
  g.output("c",
           g.node(NodeKind::ReduceSum, "hsum", {x}, attrs({{"axes", std::vector<int64_t>{2}}})));
  NodeValue v = g.input("v", {2, 3, 4});
  g.output("d",
           g.node(NodeKind::ReduceMean, "rank3", {v}, attrs({{"axes", std::vector<int64_t>{2}}})));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runSpatialMeanToPool(f); }), 0u);
  EXPECT_EQ(g.count(NodeKind::GlobalAveragePool), 0u);
}

TEST(ChannelShuffleToGather, ReshapeTransposeReshapeBecomesOneGather) {
  G g;
  NodeValue x = g.input("x", {2, 6, 3, 4});
  NodeValue r5 = g.node(NodeKind::Reshape, "split", {x}, attrs({{"shape", Shape{2, 2, 3, 3, 4}}}));
  NodeValue t = g.node(NodeKind::Transpose, "swap", {r5},
                       attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}}));
  g.output("y", g.node(NodeKind::Reshape, "merge", {t}, attrs({{"shape", Shape{2, 6, 3, 4}}})));
  const TensorMap in = g.randomInputs();
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runChannelShuffleToGather(f); }), 1u);
  EXPECT_EQ(g.count(NodeKind::Transpose), 0u);
  EXPECT_EQ(g.count(NodeKind::Reshape), 0u);
  ASSERT_EQ(g.count(NodeKind::Gather), 1u);
  // ShuffleNet's order with 2 groups of 3: channels 0, 3, 1, 4, 2, 5 (written out here).
  const Tensor y = g.run(in).at("y");
  const int64_t order[6] = {0, 3, 1, 4, 2, 5};
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 6; ++c)
      for (int64_t p = 0; p < 12; ++p)
        EXPECT_EQ(y.data<float>()[(n * 6 + c) * 12 + p],
                  in.at("x").data<float>()[(n * 6 + order[c]) * 12 + p]);
}

TEST(ChannelShuffleToGather, LeavesOtherReshapesAndTransposes) {
  G g;
  NodeValue x = g.input("x", {1, 6, 3, 4});
  NodeValue r5 = g.node(NodeKind::Reshape, "split", {x}, attrs({{"shape", Shape{1, 2, 3, 3, 4}}}));
  // Another permutation, and a shuffle whose rank-5 value is also an output.
  NodeValue t = g.node(NodeKind::Transpose, "other", {r5},
                       attrs({{"perm", std::vector<int64_t>{0, 1, 2, 4, 3}}}));
  g.output("y", g.node(NodeKind::Reshape, "m1", {t}, attrs({{"shape", Shape{1, 6, 4, 3}}})));
  NodeValue r5b =
      g.node(NodeKind::Reshape, "split2", {x}, attrs({{"shape", Shape{1, 2, 3, 3, 4}}}));
  NodeValue t2 = g.node(NodeKind::Transpose, "swap2", {r5b},
                        attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}}));
  g.output("t2", t2);
  g.output("z", g.node(NodeKind::Reshape, "m2", {t2}, attrs({{"shape", Shape{1, 6, 3, 4}}})));
  EXPECT_EQ(checkPassKeepsResults(g, [](Function& f) { return runChannelShuffleToGather(f); }), 0u);
  EXPECT_EQ(g.count(NodeKind::Gather), 0u);
}

} // namespace
} // namespace ember
