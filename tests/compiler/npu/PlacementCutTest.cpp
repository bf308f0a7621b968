// The minimum-cut placement (compiler/driver/PlacementCut.h) against an exhaustive search:
// on random DAGs of up to 12 nodes with random NPU, host and transfer costs, the cut's
// placement costs exactly the least total over all 2^k placements of the movable nodes
// (a value pays one transfer when any reader sits on the other side of its producer; the
// model's outputs are read by the host), and ties stay on the NPU.
#include "PlacementCut.h"

#include "GraphBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace ember {
namespace {

using partition::detail::CutCosts;
using partition::detail::nodesBetterOnHost;

struct Case {
  test::GraphBuilder g;
  std::vector<const Node*> nodes; ///< The non-placeholder nodes, in order.
  std::map<const Node*, double> host;
  std::map<const Node*, double> npu;
  double perElement = 0;
};

/// A random DAG: each node adds (or takes Relu of) one or two earlier values; a random
/// subset is fixed on the host (no NPU cost); a few values are model outputs.
void buildCase(Case& c, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> cost(0.0, 10.0);
  std::vector<NodeValue> values{c.g.input("x", {1, 4 + int64_t(seed % 5)})};
  const int n = 3 + int(rng() % 10);
  for (int i = 0; i < n; ++i) {
    const NodeValue a = values[rng() % values.size()];
    const NodeValue b = values[rng() % values.size()];
    const std::string name = "n" + std::to_string(i);
    NodeValue v =
        rng() % 2 ? c.g.node(NodeKind::Add, name, {a, b}) : c.g.node(NodeKind::Relu, name, {a});
    values.push_back(v);
    c.nodes.push_back(v.node);
    c.host[v.node] = cost(rng);
    if (rng() % 4 != 0)
      c.npu[v.node] = cost(rng);
  }
  c.g.output("y", values.back());
  if (rng() % 2)
    c.g.output("z", values[1 + rng() % (values.size() - 1)]);
  c.perElement = std::uniform_real_distribution<double>(0.0, 2.0)(rng);
}

/// The total of one placement (`onHost[i]` for c.nodes[i]), computed directly.
double totalOf(const Case& c, const std::map<const Node*, bool>& onHost) {
  const Function& f = *c.g.f;
  auto hostSide = [&](const Node* n) { return n->kind() == NodeKind::Placeholder || onHost.at(n); };
  double t = 0;
  for (const Node* n : c.nodes)
    t += onHost.at(n) ? c.host.at(n) : c.npu.at(n);
  std::map<NodeValue, std::vector<bool>> readerSides;
  for (const Node* n : c.nodes)
    for (const NodeValue& in : n->inputs())
      readerSides[in].push_back(hostSide(n));
  for (const auto& o : f.outputs())
    readerSides[o.value].push_back(true);
  for (const auto& [v, sides] : readerSides) {
    bool crosses = false;
    for (bool s : sides)
      crosses = crosses || s != hostSide(v.node);
    if (crosses)
      t += c.perElement * double(v.type().size());
  }
  return t;
}

class PlacementCutRandom : public ::testing::TestWithParam<unsigned> {};

TEST_P(PlacementCutRandom, CostsTheLeastOfEveryPlacement) {
  Case c;
  buildCase(c, GetParam());
  CutCosts costs;
  costs.npu = c.npu;
  costs.host = [&](const Node& n) { return c.host.at(&n); };
  costs.transfer = [&](const Type& t) { return c.perElement * double(t.size()); };
  std::map<const Node*, bool> cut;
  for (const Node* n : c.nodes)
    cut[n] = !c.npu.count(n);
  for (const Node* n : nodesBetterOnHost(*c.g.f, costs)) {
    ASSERT_TRUE(c.npu.count(n)) << n->name() << " is fixed on the host";
    cut[n] = true;
  }
  std::vector<const Node*> movable;
  for (const Node* n : c.nodes)
    if (c.npu.count(n))
      movable.push_back(n);
  double best = INFINITY;
  for (uint32_t mask = 0; mask < (1u << movable.size()); ++mask) {
    std::map<const Node*, bool> p;
    for (const Node* n : c.nodes)
      p[n] = !c.npu.count(n);
    for (size_t i = 0; i < movable.size(); ++i)
      p[movable[i]] = (mask >> i) & 1u;
    best = std::min(best, totalOf(c, p));
  }
  EXPECT_NEAR(totalOf(c, cut), best, 1e-9) << "seed " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Seeds, PlacementCutRandom, ::testing::Range(1u, 201u));

/// x -> a -> b -> y with a and b free: a cheap middle node between two host nodes goes to
/// the host when its two transfers cost more than its host time, and stays on the NPU
/// when the costs tie.
TEST(PlacementCut, ANodeBetweenHostNodesGoesThereWhenItsTransfersCostMore) {
  test::GraphBuilder g;
  NodeValue h1 = g.node(NodeKind::Relu, "h1", {g.input("x", {1, 10})});
  NodeValue m = g.node(NodeKind::Relu, "m", {h1});
  g.output("y", g.node(NodeKind::Relu, "h2", {m}));
  CutCosts c;
  c.npu[m.node] = 1;
  c.host = [](const Node&) { return 5.0; };
  c.transfer = [](const Type& t) { return 0.3 * double(t.size()); }; // 3 per crossing
  std::vector<const Node*> out = nodesBetterOnHost(*g.f, c);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]->name(), "m"); // 1 + 2 * 3 > 5
  c.host = [](const Node&) { return 7.0; };
  EXPECT_TRUE(nodesBetterOnHost(*g.f, c).empty()); // 1 + 6 == 7: a tie stays on the NPU
}

} // namespace
} // namespace ember
