// Random chains of Transpose / Reshape / elementwise unary ops / Relu-after-Add (seeded,
// so failures reproduce): the layout passes and the whole default pipeline must keep
// the interpreter's results, and never add a Transpose or Reshape.
#include "PassTestUtil.h"

#include <numeric>

namespace ember {
namespace {

using namespace passtest;

/// A random graph of `steps` nodes over one input of shape [2, 3, 4, 5].
void buildRandomChain(G& g, std::mt19937& rng, int steps) {
  NodeValue v = g.input("x", {2, 3, 4, 5});
  NodeValue x = v;
  const NodeKind unary[] = {NodeKind::Relu, NodeKind::Sigmoid, NodeKind::Neg, NodeKind::Tanh,
                            NodeKind::Abs};
  for (int i = 0; i < steps; ++i) {
    const std::string name = "n" + std::to_string(i);
    switch (rng() % 5) {
    case 0: { // random permutation
      std::vector<int64_t> perm(v.dims().size());
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      v = g.node(NodeKind::Transpose, name, {v}, attrs({{"perm", perm}}));
      break;
    }
    case 1: { // reshape to a random grouping of 120 elements
      const std::vector<std::vector<int64_t>> shapes = {
          {120}, {2, 60}, {6, 20}, {2, 3, 4, 5}, {5, 4, 3, 2}, {10, 12}, {2, 3, 20}};
      v = g.node(NodeKind::Reshape, name, {v}, attrs({{"shape", shapes[rng() % shapes.size()]}}));
      break;
    }
    case 2:
    case 3:
      v = g.node(unary[rng() % 5], name, {v});
      break;
    default: // Add of the chain and itself, followed by Relu (fusable)
      v = g.node(NodeKind::Relu, name + "_relu", {g.node(NodeKind::Add, name, {v, v})});
      break;
    }
  }
  // Keep the output's shape fixed so that the comparison is simple.
  if (v.dims() != x.dims())
    v = g.node(NodeKind::Reshape, "out_shape", {v}, attrs({{"shape", x.dims()}}));
  g.output("y", v);
}

TEST(RandomGraphs, LayoutPassesAndPipelineKeepResults) {
  std::mt19937 rng(20261123);
  size_t removed = 0;
  for (int trial = 0; trial < 150; ++trial) {
    for (int mode = 0; mode < 2; ++mode) {
      G g;
      std::mt19937 graphRng(rng());
      buildRandomChain(g, graphRng, 3 + trial % 12);
      const size_t transposes = g.count(NodeKind::Transpose);
      const size_t reshapes = g.count(NodeKind::Reshape);
      const size_t before = g.f->numNodes();
      SCOPED_TRACE("trial " + std::to_string(trial) + " mode " + std::to_string(mode));
      if (mode == 0)
        checkPassKeepsResults(g, [](Function& f) {
          return runSinkTranspose(f) + runMergeReshape(f) + runSinkTranspose(f);
        });
      else
        checkPassKeepsResults(g,
                              [](Function& f) { return runPipeline(f, defaultPipeline()).size(); });
      EXPECT_LE(g.count(NodeKind::Transpose), transposes);
      EXPECT_LE(g.count(NodeKind::Reshape), reshapes);
      EXPECT_LE(g.f->numNodes(), before);
      removed += before - g.f->numNodes();
      if (HasFailure())
        return;
    }
  }
  EXPECT_GT(removed, 100u); // the passes did something on these graphs
}

} // namespace
} // namespace ember
