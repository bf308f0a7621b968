// The partitioner (compiler/driver): seeded random chains with random nodes forced to the
// host run segment by segment (NPU segments on the simulator, the rest on the fallback
// backend) and must equal the int8 interpreter on the whole function bit for bit; a
// model the NPU runs whole gives one segment and npu::compile's binary; placements are
// reproducible and name every node the NPU does not take with the reason.
#include "PartitionTestUtil.h"

#include "ember/driver/Execute.h"
#include "ember/isa/binary.h"

namespace ember::npu::test {
namespace {

using partition::Fallback;
using partition::Plan;

std::vector<std::vector<uint8_t>> npuImages(const Plan& p, const isa::IsaDescription& isa) {
  std::vector<std::vector<uint8_t>> out;
  for (const auto& s : p.segments)
    if (s.npu)
      out.push_back(isa::serializeElf(s.npu->binary, isa));
  return out;
}

class PartitionRandom : public ::testing::TestWithParam<unsigned> {};

TEST_P(PartitionRandom, ForcedFallbacksEqualTheInterpreter) {
  const unsigned seed = GetParam();
  Chain ch(seed);
  buildRandomChain(ch);
  const Function& f = *ch.g.f;
  std::mt19937 rng(seed * 7919u);
  std::vector<const Node*> layers;
  for (const auto& n : f.nodes())
    if (n->kind() != NodeKind::QuantizeLinear && n->kind() != NodeKind::DequantizeLinear)
      layers.push_back(n.get());
  partition::PartitionOptions o;
  o.costModel = false;
  o.fallback = seed % 2 ? Fallback::Interp : partition::defaultFallback();
  o.hostNodes.insert(
      layers[std::uniform_int_distribution<size_t>(0, layers.size() - 1)(rng)]->name());
  for (const Node* n : layers)
    if (std::uniform_int_distribution<int>(0, 3)(rng) == 0)
      o.hostNodes.insert(n->name());
  const isa::IsaDescription& isa = seed % 3 == 0 ? largeIsa() : refIsa();
  Plan p = partition::partition(f, isa, o);
  EXPECT_FALSE(p.whole);
  const std::string host = partition::fallbackName(o.fallback);
  for (const Node* n : layers)
    if (o.hostNodes.count(n->name())) {
      EXPECT_EQ(p.placementOf(n->name()).backend, host) << n->name();
      EXPECT_NE(p.placementOf(n->name()).reason.find("--host-node"), std::string::npos);
    }
  const auto codes = randomCodes(f, seed);
  partition::PlanExecutor ex(p, simRunner(isa));
  std::vector<partition::SegmentRun> runs;
  const TensorMap got = ex.run(floatFeeds(f, codes), &runs);
  EXPECT_EQ(runs.size(), p.segments.size());
  std::printf("seed %u: %s\n", seed, partition::placementSummaryLine(p).c_str());
  EXPECT_EQ(mismatches(outputCodes(f, got).at("y"), interpret(f, codes).at("y")), 0u)
      << "seed " << seed << "\n"
      << partition::formatPlacementReport(p);
  // The same partition again: the same segments and the same NPU binaries, byte for byte.
  Plan again = partition::partition(f, isa, o);
  EXPECT_EQ(partition::formatPlacementReport(again), partition::formatPlacementReport(p));
  EXPECT_EQ(npuImages(again, isa), npuImages(p, isa));
}

INSTANTIATE_TEST_SUITE_P(Seeds, PartitionRandom, ::testing::Range(1u, 17u));

TEST(Partition, WholeModelIsOneSegmentWithTheCompilersBinary) {
  Chain ch(5);
  buildRandomChain(ch);
  Plan p = partition::partition(*ch.g.f, refIsa());
  ASSERT_TRUE(p.whole);
  ASSERT_EQ(p.segments.size(), 1u);
  EXPECT_EQ(p.npuNodes(), ch.g.f->numNodes());
  EXPECT_EQ(isa::serializeElf(p.segments[0].npu->binary, refIsa()),
            isa::serializeElf(compile(*ch.g.f, refIsa()).binary, refIsa()));
  EXPECT_NE(partition::placementSummaryLine(p).find("100.0%"), std::string::npos);
}

/// conv -> Expand (no NPU form) -> conv: three segments, the reason named.
TEST(Partition, UnsupportedNodeGoesToTheHostWithItsReason) {
  G g;
  NodeValue x = g.input("x", {1, 16, 8, 8}, 0.05f, 3);
  g.output("y", conv16(g, "c2", hostOnly(g, "t", conv16(g, "c1", x, 0.1f, 2)), 0.08f, -1));
  partition::PartitionOptions o;
  o.costModel = false;
  o.fallback = Fallback::Interp;
  Plan p = partition::partition(*g.f, refIsa(), o);
  EXPECT_EQ(p.placementOf("t").backend, "interp");
  const std::string why = "no NPU layer for this kind";
  EXPECT_EQ(p.placementOf("t").reason, why);
  EXPECT_EQ(p.placementOf("c1").backend, "npu");
  EXPECT_EQ(p.placementOf("c2").backend, "npu");
  EXPECT_EQ(p.npuSegments(), 2u);
  const std::string report = partition::formatPlacementReport(p);
  EXPECT_NE(report.find("Expand"), std::string::npos) << report;
  const auto codes = randomCodes(*g.f, 3);
  partition::PlanExecutor ex(p, simRunner(refIsa()));
  EXPECT_EQ(mismatches(outputCodes(*g.f, ex.run(floatFeeds(*g.f, codes))).at("y"),
                       interpret(*g.f, codes).at("y")),
            0u);
  // --fallback none refuses, naming the node, its kind and the reason.
  o.fallback = Fallback::None;
  try {
    partition::partition(*g.f, refIsa(), o);
    ADD_FAILURE() << "--fallback none accepted an Expand";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("Expand 't': " + why), std::string::npos) << e.what();
  }
  // A region too small for --min-region goes to the host.
  o.fallback = Fallback::Interp;
  o.minRegionNodes = 2;
  Plan small = partition::partition(*g.f, refIsa(), o);
  EXPECT_EQ(small.npuNodes(), 0u);
  EXPECT_NE(small.placementOf("c1").reason.find("--min-region 2"), std::string::npos);
}

/// conv -> Expand -> Relu -> Expand -> conv: the lone Relu region costs an NPU job
/// and two boundary crossings for 1,024 elements, so the cost model gives it to the host;
/// with a host assumed 1,000 times slower it stays on the NPU.
TEST(Partition, CostModelKeepsOnlyRegionsWorthTheirBoundary) {
  G g;
  NodeValue x = g.input("x", {1, 16, 8, 8}, 0.05f, 3);
  NodeValue t1 = hostOnly(g, "t1", conv16(g, "c1", x, 0.1f, 2));
  NodeValue r = g.node(NodeKind::Relu, "r", {t1}, {}, {1, 16, 8, 8}, 0.1f, 2);
  g.output("y", conv16(g, "c2", hostOnly(g, "t2", r), 0.08f, -1));
  partition::PartitionOptions o;
  o.fallback = Fallback::Interp;
  Plan p = partition::partition(*g.f, refIsa(), o);
  EXPECT_EQ(p.placementOf("r").backend, "interp");
  EXPECT_NE(p.placementOf("r").reason.find("is estimated at"), std::string::npos)
      << p.placementOf("r").reason;
  o.hostMacsPerSecond /= 1000;
  o.hostElementsPerSecond /= 1000;
  Plan slow = partition::partition(*g.f, refIsa(), o);
  EXPECT_EQ(slow.placementOf("r").backend, "npu") << partition::formatPlacementReport(slow);
  o = partition::PartitionOptions();
  o.fallback = Fallback::Interp;
  o.costModel = false;
  EXPECT_EQ(partition::partition(*g.f, refIsa(), o).placementOf("r").backend, "npu");
}

/// x -> Expand -> Relu -> Expand -> y2 beside x -> conv -> conv -> y1: the Relu
/// shares the convolutions' NPU region (the region as a whole is worth the NPU), but on
/// its own it costs two host-link transfers for 16,384 elements, so the minimum cut puts
/// it on the host; the plan's end-to-end estimate is the sum of its terms, the link's
/// in closed form from the description (latency + bytes / bytes per cycle per transfer).
TEST(Partition, MinimumCutMovesANodeWhoseTransfersCostMoreThanItsWork) {
  G g;
  NodeValue x = g.input("x", {1, 16, 32, 32}, 0.05f, 3);
  NodeValue t1 = hostOnly(g, "t1", x);
  auto conv3x3 = [&](const std::string& name, NodeValue in, int64_t cin) {
    Attrs a;
    a.set("kernel_shape", std::vector<int64_t>{3, 3});
    a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    return g.node(NodeKind::Conv, name,
                  {in, g.weights(name + "_w", {64, cin, 3, 3}, 0), g.bias(name + "_b", 64)}, a,
                  {1, 64, 32, 32}, 0.1f, 2);
  };
  NodeValue c = conv3x3("c2", conv3x3("c1", x, 16), 64);
  NodeValue r = g.node(NodeKind::Relu, "r", {t1}, {}, {1, 16, 32, 32}, 0.05f, 3);
  g.output("y1", c);
  g.output("y2", hostOnly(g, "t2", r));
  partition::PartitionOptions o;
  o.fallback = Fallback::Interp;
  Plan p = partition::partition(*g.f, refIsa(), o);
  EXPECT_EQ(p.placementOf("c1").backend, "npu");
  EXPECT_EQ(p.placementOf("c2").backend, "npu");
  EXPECT_EQ(p.placementOf("r").backend, "interp") << partition::formatPlacementReport(p);
  EXPECT_NE(p.placementOf("r").reason.find("least estimated time"), std::string::npos)
      << p.placementOf("r").reason;
  EXPECT_EQ(p.npuSegments(), 1u);
  const auto codes = randomCodes(*g.f, 5);
  partition::PlanExecutor ex(p, simRunner(refIsa()));
  const TensorMap got = ex.run(floatFeeds(*g.f, codes));
  const auto want = interpret(*g.f, codes);
  for (const char* y : {"y1", "y2"})
    EXPECT_EQ(mismatches(outputCodes(*g.f, got).at(y), want.at(y)), 0u) << y;

  // The estimate: one NPU job, whose binary's inputs and outputs cross the link.
  const partition::PlanEstimate& e = p.estimate;
  ASSERT_EQ(e.segments.size(), p.segments.size());
  const isa::IsaDescription& isa = refIsa();
  double link = 0;
  uint64_t bytes = 0;
  size_t transfers = 0;
  for (const auto& s : p.segments)
    if (s.npu)
      for (const isa::IoEntry& io : s.npu->binary.io) {
        const uint64_t perCycle = isa.hw().host_link.bytes_per_cycle;
        link +=
            double(isa.hw().host_link.latency_cycles + (io.size_bytes + perCycle - 1) / perCycle);
        bytes += io.size_bytes;
        ++transfers;
      }
  EXPECT_NEAR(e.link, link / double(isa.hw().clock_hz), 1e-15);
  EXPECT_EQ(e.linkBytes, bytes);
  EXPECT_EQ(e.linkTransfers, transfers);
  EXPECT_NEAR(e.launch, o.npuLaunchSeconds, 1e-15);
  EXPECT_NEAR(e.total(), e.npu + e.host + e.link + e.launch, 1e-15);
  EXPECT_NE(partition::formatPlacementReport(p).find("end to end (estimated)"), std::string::npos);

  // Without the cost model, or with a host 1,000 times slower, the Relu stays.
  o.costModel = false;
  EXPECT_EQ(partition::partition(*g.f, refIsa(), o).placementOf("r").backend, "npu");
  o.costModel = true;
  o.hostMacsPerSecond /= 1000;
  o.hostElementsPerSecond /= 1000;
  EXPECT_EQ(partition::partition(*g.f, refIsa(), o).placementOf("r").backend, "npu");
}

} // namespace
} // namespace ember::npu::test
