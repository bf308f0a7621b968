// Seeded random graphs (elementwise chains with branches, views, in-place candidates,
// several outputs) through both schedules, IRGen, the IR passes, the memory planner and
// the LIR interpreter, against the graph interpreter: bit-identical results, valid
// plans, and the planner's arena between the lower bound and the sum of buffers.
#include "LirTestUtil.h"

#include "ember/lir/MemoryPlanner.h"

#include <iostream>

namespace ember {
namespace {

using namespace lirtest;

/// A random graph over values of shape [2, 3, 4] (and views of them).
void buildRandomGraph(G& g, std::mt19937& rng) {
  const Shape full = {2, 3, 4};
  std::vector<NodeValue> pool = {g.input("x", full), g.input("y", full)};
  auto pick = [&]() { return pool[rng() % pool.size()]; };
  const NodeKind unary[] = {NodeKind::Relu, NodeKind::Neg, NodeKind::Sigmoid, NodeKind::Tanh,
                            NodeKind::Abs};
  const NodeKind binary[] = {NodeKind::Add, NodeKind::Mul, NodeKind::Sub, NodeKind::Max};
  const int steps = 3 + int(rng() % 12);
  for (int i = 0; i < steps; ++i) {
    const std::string name = "n" + std::to_string(i);
    switch (rng() % 7) {
    case 0:
    case 1:
      pool.push_back(g.node(unary[rng() % 5], name, {pick()}));
      break;
    case 2:
    case 3:
      pool.push_back(g.node(binary[rng() % 4], name, {pick(), pick()}));
      break;
    case 4: { // reshape to [6, 4], an op on it, and back: views around a computation
      NodeValue r = g.node(NodeKind::Reshape, name + "r", {pick()},
                           attrs({{"shape", std::vector<int64_t>{6, 4}}}));
      NodeValue s = g.node(NodeKind::Softmax, name + "s", {r});
      pool.push_back(
          g.node(NodeKind::Reshape, name, {s}, attrs({{"shape", std::vector<int64_t>{2, 3, 4}}})));
      break;
    }
    case 5: { // a view of one outer slice, broadcast against a whole value
      NodeValue v = pick();
      NodeValue row = g.node(NodeKind::Slice, name + "row", {v},
                             attrs({{"starts", std::vector<int64_t>{1, 0, 0}},
                                    {"ends", std::vector<int64_t>{2, 3, 4}}}));
      pool.push_back(g.node(binary[rng() % 4], name, {rng() % 2 ? v : pick(), row}));
      break;
    }
    default: { // split into two views along the outer axis, recombine
      Node* sp = g.multi(NodeKind::Split, name + "sp", {pick()},
                         attrs({{"axis", int64_t(0)}, {"split", std::vector<int64_t>{1, 1}}}));
      NodeValue a = g.node(unary[rng() % 5], name + "a", {NodeValue(sp, 0)});
      pool.push_back(
          g.node(NodeKind::Concat, name, {a, NodeValue(sp, 1)}, attrs({{"axis", int64_t(0)}})));
      break;
    }
    }
  }
  const size_t outputs = 1 + rng() % 3;
  for (size_t o = 0; o < outputs; ++o)
    g.output("out" + std::to_string(o), o == 0 ? pool.back() : pick());
}

TEST(LirRandomPrograms, MatchTheGraphInterpreterBitForBit) {
  std::mt19937 rng(2024);
  size_t shared = 0, concats = 0, copiesLeft = 0;
  for (int trial = 0; trial < 150; ++trial) {
    G g;
    buildRandomGraph(g, rng);
    const TensorMap in = g.randomInputs();
    const TensorMap ref = Interpreter(*g.f).run(in);
    const lir::NodeOrder topo = lir::topologicalOrder(*g.f);
    const lir::NodeOrder greedy = lir::memoryMinimizingOrder(*g.f);
    // The chosen order peaks no higher than any rule's or the function's own.
    const size_t chosen = lir::schedulePeakBytes(*g.f, greedy);
    EXPECT_LE(chosen, lir::schedulePeakBytes(*g.f, topo));
    for (auto rule : {lir::GreedyRule::FewestBytes, lir::GreedyRule::FreeFirstThenDepth,
                      lir::GreedyRule::DepthFirst})
      EXPECT_LE(chosen, lir::schedulePeakBytes(*g.f, lir::greedyOrder(*g.f, rule)));
    for (const lir::NodeOrder* order : {&topo, &greedy}) {
      for (bool optimize : {false, true}) {
        auto f = lir::generateIR(*g.f, *order);
        if (optimize) {
          const auto stats = lir::runLirPipeline(*f, lir::defaultLirPipeline());
          shared += stats[1].changed;
          concats += stats[2].changed;
        }
        copiesLeft += f->count(lir::ValueKind::Copy);
        lir::MemoryPlanOptions opts;
        opts.alignment = size_t(1) << (rng() % 7);
        opts.fit =
            rng() % 2 ? lir::MemoryPlanOptions::Fit::First : lir::MemoryPlanOptions::Fit::Best;
        lir::LirInterpreter run(*f, opts); // plans and checks the plan
        const lir::MemoryPlan& p = run.memoryPlan().plan;
        EXPECT_TRUE(lir::checkPlan(lir::bufferIntervals(*f), p, opts.alignment).empty());
        EXPECT_GE(p.arenaBytes, p.lowerBound);
        EXPECT_EQ(p.sumBytes, f->allocatedBytes());
        const std::string diff = bitDifference(run.run(in), ref);
        ASSERT_EQ(diff, "") << "trial " << trial << (optimize ? " optimised" : "") << "\n"
                            << lir::dump(*f);
      }
    }
  }
  // The generator does produce in-place and copy situations.
  EXPECT_GT(shared, 20u);
  EXPECT_GT(concats, 0u);
  std::cout << "[random programs] " << shared << " buffers shared, " << concats
            << " concats into views, " << copiesLeft << " copies left\n";
  EXPECT_GT(copiesLeft, 0u);
}

TEST(LirRandomPrograms, TheVerifierCatchesBrokenLiveRanges) {
  // Valid optimised programs, then one deallocation moved right after its allocation
  // (before the buffer's first use): the verifier must report a use after deallocation.
  std::mt19937 rng(99);
  size_t broken = 0;
  for (int trial = 0; trial < 60; ++trial) {
    G g;
    buildRandomGraph(g, rng);
    auto f = lir::compileToLir(*g.f);
    ASSERT_TRUE(lir::verify(*f).empty());
    std::vector<lir::Instruction*> deallocs;
    for (const auto& in : f->instructions())
      if (in->valueKind() == lir::ValueKind::Dealloc)
        deallocs.push_back(in.get());
    if (deallocs.empty())
      continue;
    lir::Instruction* d = deallocs[rng() % deallocs.size()];
    auto* a = static_cast<lir::Instruction*>(d->operand(0).value);
    lir::InstrList& list = f->instructions();
    list.splice(std::next(f->find(a)), list, f->find(d));
    const auto problems = lir::verify(*f);
    ASSERT_FALSE(problems.empty()) << lir::dump(*f);
    EXPECT_NE(problems[0].find("uses %" + a->name() + " after its dealloc"), std::string::npos)
        << problems[0];
    ++broken;
  }
  EXPECT_GT(broken, 40u);
}

} // namespace
} // namespace ember
