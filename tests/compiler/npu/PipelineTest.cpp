// The multi-device partitioner's dynamic program (ember/driver/Pipeline.h) against an
// exhaustive search: on random chains and random DAGs of up to 11 layers over 1 to 4
// devices of unequal speeds, links, DRAM sizes and sharing, the DP's bottleneck equals the
// least bottleneck over every cut into one non-empty stage per device whose stages fit
// their DRAMs (stage figures computed directly, not by the DP's incremental sweep). Then
// the refusals: no cut fits (naming the stage, its bytes and the device's), stages on a
// shared DRAM too big together, fewer layers than devices.
#include "ember/driver/Pipeline.h"

#include "GraphBuilder.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

namespace ember {
namespace {

using partition::optimalPipeline;
using partition::PipelineDevice;
using partition::PipelineItem;
using partition::PipelineProblem;
using partition::PipelineValue;
using partition::stageComputeCycles;
using partition::stageFigures;
using partition::stageLinkCycles;

constexpr uint64_t kMiB = uint64_t(1) << 20;

/// Adds item `t` reading `inputs` (value indices) and producing one value of `bytes`.
void addItem(PipelineProblem& p, std::vector<size_t> inputs, uint64_t bytes,
             std::vector<double> cycles, uint64_t weights = 0) {
  const size_t t = p.items.size();
  PipelineItem it;
  it.name = "n" + std::to_string(t);
  it.kind = "Test";
  it.cycles = std::move(cycles);
  it.weightBytes = weights;
  it.inputs = std::move(inputs);
  for (size_t v : it.inputs) {
    p.values[v].lastReader = t;
    p.values[v].hasReader = true;
    it.workBytes += p.values[v].bytes;
  }
  PipelineValue out;
  out.key = it.name;
  out.producer = int(t);
  out.bytes = bytes;
  it.results.push_back(p.values.size());
  it.workBytes += bytes;
  p.values.push_back(out);
  p.items.push_back(std::move(it));
}

/// A model input value of `bytes`.
size_t addInput(PipelineProblem& p, uint64_t bytes) {
  PipelineValue v;
  v.key = "x";
  v.producer = -1;
  v.bytes = bytes;
  p.values.push_back(v);
  return p.values.size() - 1;
}

/// Random devices: links, DRAM sizes (sometimes tight), consecutive devices sometimes on
/// one shared DRAM (then roomy, so that only the per-stage limit binds).
void randomDevices(PipelineProblem& p, size_t k, std::mt19937& rng) {
  size_t dram = 0;
  for (size_t d = 0; d < k; ++d) {
    PipelineDevice dev;
    dev.name = "npu" + std::to_string(d);
    dev.link = {1 + rng() % 16, rng() % 50};
    const bool share = d > 0 && rng() % 3 == 0;
    if (!share && d > 0)
      ++dram;
    dev.dram = dram;
    dev.dramBytes = rng() % 2 ? 200 + rng() % 600 : 1000000;
    if (share) {
      dev.dramBytes = 1000000;
      p.devices.back().dramBytes = 1000000;
      p.devices.back().sharesWithNext = true;
      dev.sharesWithPrev = true;
    }
    p.devices.push_back(dev);
  }
}

std::vector<double> randomCycles(size_t k, std::mt19937& rng) {
  std::vector<double> c;
  for (size_t d = 0; d < k; ++d)
    c.push_back(double(rng() % 100));
  return c;
}

/// A random problem: a chain (each layer reads the previous one's value) or a DAG (each
/// layer reads one to three earlier values or the input); some values are model outputs.
PipelineProblem randomProblem(unsigned seed, bool dag) {
  std::mt19937 rng(seed);
  PipelineProblem p;
  const size_t k = 1 + rng() % 4;
  randomDevices(p, k, rng);
  const size_t n = k + rng() % (12 - k);
  addInput(p, 1 + rng() % 64);
  for (size_t t = 0; t < n; ++t) {
    std::vector<size_t> in;
    if (!dag) {
      in.push_back(p.values.size() - 1);
    } else {
      const size_t reads = 1 + rng() % 3;
      for (size_t r = 0; r < reads; ++r) {
        const size_t v = rng() % p.values.size();
        if (std::find(in.begin(), in.end(), v) == in.end())
          in.push_back(v);
      }
    }
    addItem(p, in, 1 + rng() % 64, randomCycles(k, rng), rng() % 100);
  }
  p.values.back().modelOutput = true;
  if (dag && rng() % 2)
    p.values[1 + rng() % (p.values.size() - 1)].modelOutput = true;
  return p;
}

/// The least bottleneck over every cut (infinity when none fits).
double exhaustive(const PipelineProblem& p) {
  const size_t n = p.items.size(), k = p.devices.size();
  double best = INFINITY;
  std::vector<size_t> cuts{0};
  std::function<void(size_t)> rec = [&](size_t d) {
    if (d + 1 == k) {
      cuts.push_back(n);
      double worst = 0;
      bool fits = true;
      for (size_t s = 0; s < k; ++s) {
        const auto f = stageFigures(p, cuts[s], cuts[s + 1]);
        fits = fits && f.dramBytes() <= p.devices[s].dramBytes;
        worst = std::max(worst,
                         stageComputeCycles(p, s, cuts[s], cuts[s + 1]) + stageLinkCycles(p, s, f));
      }
      if (fits)
        best = std::min(best, worst);
      cuts.pop_back();
      return;
    }
    for (size_t c = cuts.back() + 1; c + (k - 1 - d) <= n; ++c) {
      cuts.push_back(c);
      rec(d + 1);
      cuts.pop_back();
    }
  };
  rec(0);
  return best;
}

void compareWithExhaustive(bool dag) {
  int feasible = 0, refused = 0;
  for (unsigned seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const PipelineProblem p = randomProblem(seed, dag);
    const double want = exhaustive(p);
    if (std::isinf(want)) {
      EXPECT_THROW(optimalPipeline(p), Error);
      ++refused;
      continue;
    }
    const auto a = optimalPipeline(p);
    EXPECT_NEAR(a.bottleneck, want, 1e-9);
    ASSERT_EQ(a.stages.size(), p.devices.size());
    double worst = 0;
    for (size_t s = 0; s < a.stages.size(); ++s) {
      EXPECT_EQ(a.stages[s].device, s);
      EXPECT_LT(a.stages[s].begin, a.stages[s].end);
      EXPECT_EQ(a.stages[s].begin, s == 0 ? 0 : a.stages[s - 1].end);
      EXPECT_LE(a.stages[s].figures.dramBytes(), p.devices[s].dramBytes);
      worst = std::max(worst, a.stages[s].cycles());
    }
    EXPECT_EQ(a.stages.back().end, p.items.size());
    EXPECT_NEAR(worst, a.bottleneck, 1e-9);
    ++feasible;
  }
  // Both outcomes occur, so neither half of the comparison is vacuous.
  EXPECT_GT(feasible, 100);
  EXPECT_GT(refused, 3);
}

TEST(PipelineRandom, ChainsMatchExhaustiveSearch) {
  compareWithExhaustive(false);
}

TEST(PipelineRandom, DagsMatchExhaustiveSearch) {
  compareWithExhaustive(true);
}

TEST(Pipeline, ChainIsRecognised) {
  EXPECT_TRUE(randomProblem(7, false).chain());
  PipelineProblem p;
  p.devices.resize(1);
  const size_t x = addInput(p, 8);
  addItem(p, {x}, 8, {1});
  addItem(p, {1}, 8, {1});
  EXPECT_TRUE(p.chain());
  addItem(p, {1, 2}, 8, {1}); // reads n0's value two layers later: a skip edge
  EXPECT_FALSE(p.chain());
}

/// Two devices of 32 MiB and no transfers: `weights` per layer, `cycles` per layer.
PipelineProblem twoDevices(const std::vector<uint64_t>& weights, const std::vector<double>& cycles,
                           bool shared = false, uint64_t dram = 32 * kMiB) {
  PipelineProblem p;
  for (size_t d = 0; d < 2; ++d) {
    PipelineDevice dev;
    dev.name = "npu" + std::to_string(d);
    dev.link = {1, 0};
    dev.dramBytes = dram;
    dev.dram = shared ? 0 : d;
    dev.sharesWithPrev = shared && d == 1;
    dev.sharesWithNext = shared && d == 0;
    p.devices.push_back(dev);
  }
  size_t v = addInput(p, 0);
  for (size_t t = 0; t < weights.size(); ++t) {
    addItem(p, {v}, 0, {cycles[t], cycles[t]}, weights[t]);
    v = p.values.size() - 1;
  }
  return p;
}

TEST(Pipeline, UnequalDevicesShareByTheirSpeed) {
  PipelineProblem p = twoDevices(std::vector<uint64_t>(10, 0), std::vector<double>(10, 4.0));
  for (PipelineItem& it : p.items)
    it.cycles[1] = 1.0; // npu1 four times as fast
  const auto a = optimalPipeline(p);
  EXPECT_DOUBLE_EQ(a.bottleneck, 8.0); // two layers on npu0, eight on npu1
  EXPECT_EQ(a.stages[0].end, 2u);
}

TEST(Pipeline, CapacityMovesTheCut) {
  // The fastest cut puts n0 alone on npu0; n1 + n2 (40 MiB) do not fit npu1's 32 MiB.
  PipelineProblem p = twoDevices({1 * kMiB, 20 * kMiB, 20 * kMiB}, {10, 1, 1});
  p.devices[0].dramBytes = 64 * kMiB;
  const auto a = optimalPipeline(p);
  EXPECT_EQ(a.stages[0].end, 2u);
  EXPECT_DOUBLE_EQ(a.bottleneck, 11.0);
}

TEST(Pipeline, NoCutFitsNamesTheStageTheBytesAndTheDevice) {
  // Any cut of three 19.1 MiB layers over two 32 MiB devices puts two on one device.
  const uint64_t w = 20027802; // 19.1 MiB
  PipelineProblem p = twoDevices({w, w, w}, {10, 1, 1});
  try {
    optimalPipeline(p);
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stage 1 needs 38.2 MiB of DRAM, device npu1 has 32 MiB"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("layers 'n1' .. 'n2'"), std::string::npos) << e.what();
  }
}

TEST(Pipeline, SharedDramTooSmallForAllStagesTogether) {
  // Each stage fits the 32 MiB DRAM alone; both together need 40 MiB of it.
  PipelineProblem p = twoDevices({20 * kMiB, 20 * kMiB}, {1, 1}, /*shared=*/true);
  try {
    optimalPipeline(p);
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stages 0, 1 need 40 MiB of DRAM together, the DRAM "
                                         "devices npu0, npu1 share has 32 MiB"),
              std::string::npos)
        << e.what();
  }
}

TEST(Pipeline, SharedDramCarriesBoundaryValuesWithoutTheLink) {
  PipelineProblem priv = twoDevices({0, 0}, {1, 1});
  PipelineProblem shared = twoDevices({0, 0}, {1, 1}, true);
  for (PipelineProblem* p : {&priv, &shared}) {
    p->values[1].bytes = 1000; // n0 -> n1
    for (PipelineDevice& d : p->devices)
      d.link = {10, 5};
  }
  EXPECT_DOUBLE_EQ(optimalPipeline(priv).bottleneck, 1 + 5 + 100.0);
  EXPECT_DOUBLE_EQ(optimalPipeline(shared).bottleneck, 1.0);
}

TEST(Pipeline, FewerLayersThanDevicesIsRefused) {
  PipelineProblem p = twoDevices({0}, {1});
  EXPECT_THROW(optimalPipeline(p), Error);
}

TEST(Pipeline, FormatBytes) {
  EXPECT_EQ(partition::formatBytes(512), "512 bytes");
  EXPECT_EQ(partition::formatBytes(32 * kMiB), "32 MiB");
  EXPECT_EQ(partition::formatBytes(20027802 * 2), "38.2 MiB");
}

TEST(PipelineProblem, BuiltFromAFunctionAndItsCompileSummaries) {
  // x -> a = Relu(x) -> b = Add(a, w) -> c = Add(b, a) (a skip edge) -> output.
  test::GraphBuilder g;
  const NodeValue x = g.input("x", {1, 16});
  const NodeValue a = g.node(NodeKind::Relu, "a", {x});
  const NodeValue b = g.node(NodeKind::Add, "b", {a, g.constant("w", {1, 16})});
  g.output("y", g.node(NodeKind::Add, "c", {b, a}));
  npu::CompileSummary s;
  s.cycles = 700; // 600 named, 100 no layer names: 100 / 3 to each (equal result elements)
  s.layers = {{"a", "Relu", 1, 1, 100, 0, ""},
              {"b", "Add", 1, 1, 200, 0, ""},
              {"c", "Add", 1, 1, 300, 0, ""}};
  for (const char* file : {"ember-v1-x4", "ember-v1-x4-shared"}) {
    const auto sys = isa::SystemDescription::loadFile(std::string(EMBER_SOURCE_DIR) +
                                                      "/isa/systems/" + file + ".json");
    const PipelineProblem p = partition::pipelineProblem(*g.f, sys, {&s, &s, &s, &s});
    ASSERT_EQ(p.items.size(), 3u);
    EXPECT_EQ(p.items[1].name, "b");
    EXPECT_NEAR(p.items[0].cycles[3], 100 + 100.0 / 3, 1e-9);
    EXPECT_NEAR(p.items[2].cycles[0], 300 + 100.0 / 3, 1e-9);
    EXPECT_EQ(p.items[1].weightBytes, 64u); // w: 16 floats
    EXPECT_EQ(p.items[0].weightBytes, 0u);
    ASSERT_EQ(p.values.size(), 4u); // x, a, b, c
    EXPECT_EQ(p.values[0].producer, -1);
    EXPECT_EQ(p.values[0].bytes, 16u); // a float input crosses as its int8 codes
    EXPECT_EQ(p.values[1].lastReader, 2u);
    EXPECT_TRUE(p.values[3].modelOutput);
    EXPECT_FALSE(p.chain());
    // Layers 1..2 read a (layer 0's) and produce the output.
    const auto f = stageFigures(p, 1, 3);
    EXPECT_EQ(f.inFromStages, 16u);
    EXPECT_EQ(f.outToHost, 16u);
    EXPECT_EQ(f.weightBytes, 64u);
    ASSERT_EQ(p.devices.size(), 4u);
    EXPECT_EQ(p.devices[2].name, "npu2");
    EXPECT_EQ(p.devices[2].link.bytes_per_cycle, 8u);
    const bool shared = std::string(file) == "ember-v1-x4-shared";
    EXPECT_EQ(p.devices[1].sharesWithPrev, shared);
    EXPECT_EQ(p.devices[3].sharesWithNext, false);
    EXPECT_EQ(p.devices[0].dramBytes, uint64_t(shared ? 4 : 1) << 30);
  }
}

// --stage-cycles: a simulation report's layers (a fused name summed as given), its total
// and its description; a file without them is refused with its name and the key.
TEST(PipelineProblem, MeasuredCyclesFromAReport) {
  const std::string dir = std::string(EMBER_BINARY_DIR) + "/tests/compiler/npu";
  const std::string good = dir + "/measured_report.json", bad = dir + "/measured_bad.json";
  writeFileAtomic(good, R"({"isa": "ember-v1", "cycles": 650, "layers": [)"
                        R"({"name": "a", "cycles": 100}, {"name": "b + c", "cycles": 500},)"
                        R"({"name": "a", "cycles": 7}]})");
  const partition::MeasuredCycles m = partition::readMeasuredCycles(good);
  EXPECT_EQ(m.isaName, "ember-v1");
  EXPECT_EQ(m.total, 650);
  EXPECT_EQ(m.layers.at("a"), 107);
  EXPECT_EQ(m.layers.at("b + c"), 500);
  writeFileAtomic(bad, R"({"isa": "ember-v1", "cycles": 650})");
  try {
    partition::readMeasuredCycles(bad);
    FAIL() << "a report without layers was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("measured_bad.json: not a simulation report: no valid "
                                         "'layers'"),
              std::string::npos)
        << e.what();
  }
}

// A layer the compiler fused ("b + c": the producer b with the Add c after it) counts for
// its producer; only the cycles no layer names are spread (50 / 3 each).
TEST(PipelineProblem, AFusedLayerCountsForItsProducer) {
  test::GraphBuilder g;
  const NodeValue x = g.input("x", {1, 16});
  const NodeValue a = g.node(NodeKind::Relu, "a", {x});
  const NodeValue b = g.node(NodeKind::Relu, "b", {a});
  g.output("y", g.node(NodeKind::Add, "c", {b, a}));
  npu::CompileSummary s;
  s.cycles = 650;
  s.layers = {{"a", "Relu", 1, 1, 100, 0, ""}, {"b + c", "Relu", 1, 1, 500, 0, ""}};
  const auto sys = isa::SystemDescription::loadFile(std::string(EMBER_SOURCE_DIR) +
                                                    "/isa/systems/ember-v1-x4.json");
  const PipelineProblem p = partition::pipelineProblem(*g.f, sys, {&s, &s, &s, &s});
  ASSERT_EQ(p.items.size(), 3u);
  EXPECT_NEAR(p.items[0].cycles[0], 100 + 50.0 / 3, 1e-9);
  EXPECT_NEAR(p.items[1].cycles[0], 500 + 50.0 / 3, 1e-9);
  EXPECT_NEAR(p.items[2].cycles[0], 50.0 / 3, 1e-9);
}

} // namespace
} // namespace ember
