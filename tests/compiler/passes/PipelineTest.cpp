// The pass registry, the default pipeline and the runner.
#include "PassTestUtil.h"

#include "ember/support/Error.h"

#include <sstream>

namespace ember {
namespace {

using namespace passtest;

TEST(Pipeline, DefaultPipelineNamesAreRegistered) {
  const std::vector<std::string> pipe = defaultPipeline();
  ASSERT_FALSE(pipe.empty());
  for (const std::string& n : pipe)
    EXPECT_NE(findPass(n), nullptr) << n;
  for (const char* want : {"dce", "cse", "constant-fold", "fold-batchnorm", "sink-transpose",
                           "merge-reshape", "fuse-activation", "fuse-silu-gelu", "lower"})
    EXPECT_NE(std::find(pipe.begin(), pipe.end(), want), pipe.end()) << want;
  // Activations are fused after everything that could still rewrite their producers.
  EXPECT_EQ(std::find(pipe.begin(), pipe.end(), "fuse-activation") > pipe.begin() + 6, true);
}

TEST(Pipeline, PrintListsEveryPassWithItsDescription) {
  std::ostringstream os;
  printPipeline(os);
  const std::string text = os.str();
  size_t lines = std::count(text.begin(), text.end(), '\n');
  EXPECT_EQ(lines, defaultPipeline().size());
  EXPECT_NE(text.find("fold-batchnorm"), std::string::npos);
  EXPECT_NE(text.find(findPass("fold-batchnorm")->description), std::string::npos);
  EXPECT_NE(text.find("  1. "), std::string::npos) << text;
}

TEST(Pipeline, UnknownPassIsAnErrorListingKnownOnes) {
  G g;
  NodeValue x = g.input("x", {2});
  g.output("y", g.node(NodeKind::Relu, "r", {x}));
  try {
    runPipeline(*g.f, {"dce", "no-such-pass"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no-such-pass"), std::string::npos) << msg;
    EXPECT_NE(msg.find("fold-batchnorm"), std::string::npos) << msg;
  }
  EXPECT_EQ(g.f->numNodes(), 1u); // nothing ran
}

TEST(Pipeline, StatisticsCountNodesPerPass) {
  G g;
  NodeValue x = g.input("x", {4});
  NodeValue a = g.node(NodeKind::Relu, "a", {x});
  NodeValue b = g.node(NodeKind::Relu, "b", {x}); // duplicate of a
  g.node(NodeKind::Neg, "dead", {x});
  g.output("y", g.node(NodeKind::Add, "sum", {a, b}));
  const std::vector<PassStats> stats = runPipeline(*g.f, {"dce", "cse"});
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].pass, "dce");
  EXPECT_EQ(stats[0].nodesBefore, 4u);
  EXPECT_EQ(stats[0].nodesAfter, 3u);
  EXPECT_EQ(stats[0].removed(), 1);
  EXPECT_EQ(stats[1].nodesAfter, 2u);
  EXPECT_EQ(stats[1].changed, 1u);
  std::ostringstream os;
  printPassStats(os, stats);
  EXPECT_NE(os.str().find("cse"), std::string::npos);
}

TEST(Pipeline, CustomPassCanRegisterAndTheVerifierCatchesBrokenRewrites) {
  registerPass({"test-break", "makes the function invalid", [](Function& f, const PassContext&) {
                  // Types that disagree with inference: the verifier must notice.
                  f.nodes().front()->setResultType(0, Type(ElemKind::Float32, {7}));
                  return size_t(1);
                }});
  G g;
  NodeValue x = g.input("x", {2});
  g.output("y", g.node(NodeKind::Relu, "r", {x}));
  try {
    runPipeline(*g.f, {"test-break"});
    FAIL() << "expected a verifier error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test-break"), std::string::npos) << e.what();
  }
}

TEST(Pipeline, TheVerifierChecksTheFusedActivationContract) {
  registerPass(
      {"test-bad-activation", "puts an activation on a Sub", [](Function& f, const PassContext&) {
         f.nodes().front()->attrs().set("activation", std::string("relu"));
         return size_t(1);
       }});
  G g;
  NodeValue x = g.input("x", {2});
  g.output("y", g.node(NodeKind::Sub, "the_sub", {x, x}));
  try {
    runPipeline(*g.f, {"test-bad-activation"});
    FAIL() << "expected a verifier error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the_sub"), std::string::npos) << e.what();
  }
}

TEST(Pipeline, AnInvalidInputFunctionIsAnErrorBeforeAnyPassRuns) {
  G g;
  NodeValue x = g.input("x", {2});
  NodeValue r = g.node(NodeKind::Relu, "r", {x});
  g.output("y", g.node(NodeKind::Neg, "n", {r}));
  g.f->nodes().front()->setResultType(0, Type(ElemKind::Float32, {3})); // wrong type
  try {
    runPipeline(*g.f, defaultPipeline());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input is invalid"), std::string::npos) << e.what();
  }
  EXPECT_EQ(g.f->numNodes(), 2u);
}

TEST(Pipeline, DefaultPipelineKeepsResultsOnAMixedGraph) {
  G g;
  NodeValue x = g.input("x", {1, 3, 8, 8});
  NodeValue c =
      g.node(NodeKind::Conv, "conv", {x, g.constant("w", {4, 3, 3, 3}), g.constant("b", {4})},
             attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  Tensor mean = randomTensor({4}, g.rng), var = randomTensor({4}, g.rng, 0.5f, 2.f);
  NodeValue bn = g.node(NodeKind::BatchNormalization, "bn",
                        {c, g.constant("s", {4}), g.constant("bb", {4}), g.constant("m", mean),
                         g.constant("v", var)});
  NodeValue r = g.node(NodeKind::Relu, "relu", {bn});
  NodeValue s = g.node(NodeKind::Mul, "silu", {r, g.node(NodeKind::Sigmoid, "sig", {r})});
  NodeValue t1 =
      g.node(NodeKind::Transpose, "t1", {s}, attrs({{"perm", std::vector<int64_t>{0, 2, 3, 1}}}));
  NodeValue t2 =
      g.node(NodeKind::Transpose, "t2", {t1}, attrs({{"perm", std::vector<int64_t>{0, 3, 1, 2}}}));
  g.output("y", g.node(NodeKind::GlobalAveragePool, "gap", {t2}));
  const size_t before = g.f->numNodes();
  checkPassKeepsResults(g, [](Function& f) { return runPipeline(f, defaultPipeline()).size(); });
  EXPECT_EQ(g.count(NodeKind::BatchNormalization), 0u);
  EXPECT_EQ(g.count(NodeKind::Transpose), 0u);
  EXPECT_EQ(g.count(NodeKind::Relu), 0u);
  EXPECT_EQ(g.count(NodeKind::Silu), 1u);
  EXPECT_EQ(g.f->numNodes(), 3u) << "before: " << before; // Conv(relu), Silu, GAP
}

} // namespace
} // namespace ember
