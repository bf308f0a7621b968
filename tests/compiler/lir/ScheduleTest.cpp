// Scheduling: the greedy memory-minimising order against the function's own order, on a
// graph whose peaks are computed by hand.
#include "LirTestUtil.h"

#include "ember/lir/MemoryPlanner.h"
#include "ember/support/Error.h"

namespace ember {
namespace {

using namespace lirtest;

/// Two chains from x[100]: a1 = Relu(x), a2 = ReduceSum(a1); b1 = Neg(x), b2 =
/// ReduceSum(b1); out = a2 + b2. Created interleaved: a1, b1, a2, b2, add.
struct TwoChains : G {
  TwoChains() {
    NodeValue x = input("x", {100});
    const Attrs sum = attrs({{"keepdims", int64_t(0)}});
    NodeValue a1 = node(NodeKind::Relu, "a1", {x});
    NodeValue b1 = node(NodeKind::Neg, "b1", {x});
    NodeValue a2 = node(NodeKind::ReduceSum, "a2", {a1}, sum);
    NodeValue b2 = node(NodeKind::ReduceSum, "b2", {b1}, sum);
    output("out", node(NodeKind::Add, "add", {a2, b2}));
  }
};

std::vector<std::string> names(const lir::NodeOrder& order) {
  std::vector<std::string> out;
  for (const Node* n : order)
    out.push_back(n->name());
  return out;
}

TEST(LirSchedule, GreedyFinishesAChainBeforeStartingTheNext) {
  TwoChains g;
  const lir::NodeOrder topo = lir::topologicalOrder(*g.f);
  const lir::NodeOrder greedy = lir::memoryMinimizingOrder(*g.f);
  EXPECT_EQ(names(greedy), (std::vector<std::string>{"a1", "a2", "b1", "b2", "add"}));
  for (auto rule : {lir::GreedyRule::FewestBytes, lir::GreedyRule::FreeFirstThenDepth,
                    lir::GreedyRule::DepthFirst})
    EXPECT_EQ(names(lir::greedyOrder(*g.f, rule)), names(greedy));
  // Topological: a1 (400) + b1 (400) + a2 (4) live at a2. Greedy: b1 (400) + a2 (4) + b2
  // (4) at b2. The output (add) is written in place of the output: 0 bytes.
  EXPECT_EQ(lir::schedulePeakBytes(*g.f, topo), 804u);
  EXPECT_EQ(lir::schedulePeakBytes(*g.f, greedy), 408u);
  // The IR generated from each order, after the passes, has these peaks as lower bounds.
  for (const auto& [order, peak] : {std::pair{topo, size_t(804)}, std::pair{greedy, size_t(408)}}) {
    auto f = lir::generateIR(*g.f, order);
    lir::runLirPipeline(*f, lir::defaultLirPipeline());
    EXPECT_EQ(lir::liveBytesLowerBound(lir::bufferIntervals(*f)), peak);
  }
}

TEST(LirSchedule, PeakRejectsOrdersThatAreNotTopological) {
  TwoChains g;
  lir::NodeOrder order = lir::topologicalOrder(*g.f);
  std::swap(order[0], order[2]); // a2 before a1
  EXPECT_THROW(lir::schedulePeakBytes(*g.f, order), Error);
  order.pop_back();
  EXPECT_THROW(lir::schedulePeakBytes(*g.f, order), Error);
}

TEST(LirSchedule, ViewsCostNothingButKeepTheirBufferAlive) {
  // x -> r = Relu(x) [24 B] -> v = Reshape(r) -> n = Neg(v) [24 B] -> output.
  G g;
  NodeValue x = g.input("x", {2, 3});
  NodeValue r = g.node(NodeKind::Relu, "r", {x});
  NodeValue v = g.node(NodeKind::Reshape, "v", {r}, attrs({{"shape", std::vector<int64_t>{6}}}));
  NodeValue n = g.node(NodeKind::Neg, "n", {v});
  g.output("o", n);
  // r (24) alone, then n is the output (0): the view holds r until n ran.
  EXPECT_EQ(lir::schedulePeakBytes(*g.f, lir::topologicalOrder(*g.f)), 24u);
}

} // namespace
} // namespace ember
