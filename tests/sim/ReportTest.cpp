// Reports: JSON keys, energy = action counts x the description's table, per-layer figures
// from the debug map, the Chrome trace, determinism.
#include "SimTestUtil.h"

#include "ember/isa/energy.h"
#include "ember/isa/error.h"
#include "ember/platform/HtmlReport.h"
#include "ember/platform/Report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace simtest;
using ember::platform::Result;

namespace {

const char* kTwoLayers =
    ".node \"conv\"\n"
    "dma.ld sram=act sram_addr=0 dram_addr=0 size0=64 size1=1 size2=1 push_next\n"
    "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=64 n1=1 n2=2 act_s0=1 acc_s0=1 wgt_s2=1 pop_prev\n"
    ".node \"act\"\n"
    "vmax dst_mem=acc src_mem=acc dst_addr=0 src0_addr=0 src1_addr=100 n0=64 n1=1 dst_s0=1 "
    "src0_s0=1 src1_s0=0 push_next\n"
    "dma.st sram=acc sram_addr=0 dram_addr=0x4000 size0=64 size1=1 size2=1 pop_prev push_prev\n"
    ".endnode\n"
    "finish pop_next\n";

// Issue 47 item 6: no report writes a number that is not finite (JSON would hold null):
// every writer refuses it, naming the figure; the energy sums are checked.
TEST(SimReport, NoReportWritesANonFiniteNumber) {
  const auto& isa = refIsa();
  Result r = run(isa, kTwoLayers, randomBytes(0x8000, 9));
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  EXPECT_NO_THROW(ember::platform::checkFinite(r.report));
  auto refused = [](const ember::platform::Report& rep, const std::string& what) {
    for (int w = 0; w < 4; ++w) {
      try {
        if (w == 0)
          (void)ember::platform::toJson(rep);
        else if (w == 1)
          (void)ember::platform::formatTable(rep);
        else if (w == 2)
          (void)ember::platform::toChromeTrace(rep);
        else
          (void)ember::platform::toHtml({rep});
        ADD_FAILURE() << "writer " << w << " wrote " << what;
      } catch (const ember::Error& e) {
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("not a finite number"), std::string::npos);
      }
    }
  };
  ember::platform::Report bad = r.report;
  bad.energy_total_pj = HUGE_VAL;
  refused(bad, "energy total_pj is infinite");
  bad = r.report;
  bad.energy.back().pj = std::nan("");
  refused(bad, "energy leakage is NaN");
  bad = r.report;
  bad.layers.at(0).energy_pj = -HUGE_VAL;
  refused(bad, "layer conv energy_pj is infinite");
  bad = r.report;
  bad.memories.at(0).utilization = std::nan("");
  refused(bad, "utilization is NaN");
  EXPECT_THROW(ember::isa::energy::checkedSum(1e308, 1e308, "test"), ember::isa::Error);
  EXPECT_EQ(ember::isa::energy::checkedSum(1.5, 2.0, "test"), 3.5);
}

TEST(SimReport, EnergyIsActionCountsTimesTheTable) {
  const auto& isa = refIsa();
  Result r = run(isa, kTwoLayers, randomBytes(0x8000, 9));
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  const auto& rep = r.report;
  const auto& et = isa.energy();
  auto comp = [&](const std::string& name) {
    for (const auto& e : rep.energy)
      if (e.component == name)
        return e.pj;
    ADD_FAILURE() << "no component " << name;
    return 0.0;
  };
  const double macs = 64.0 * 2 * 256;
  EXPECT_EQ(rep.macs, std::uint64_t(macs));
  EXPECT_DOUBLE_EQ(comp("mac_array"),
                   macs * et.mac_int8 + isa.findInstruction("gemm")->energyOf("issue"));
  const auto& act = isa.memory("act");
  // act: 64 rows written by DMA, 128 rows read by the gemm.
  EXPECT_DOUBLE_EQ(comp("sram.act"),
                   64.0 * 16 * act.write_pj_per_byte + 128.0 * 16 * act.read_pj_per_byte);
  EXPECT_DOUBLE_EQ(comp("dram"),
                   64.0 * 16 * et.dram_read_per_byte + 64.0 * 64 * et.dram_write_per_byte);
  EXPECT_DOUBLE_EQ(comp("leakage"), double(rep.cycles) * et.leakage_per_cycle);
  EXPECT_DOUBLE_EQ(comp("vector"),
                   isa.findInstruction("vmax")->energyOf("issue") +
                       64.0 * 16 * isa.findInstruction("vmax")->energyOf("per_lane"));
  double sum = 0;
  for (const auto& e : rep.energy)
    sum += e.pj;
  EXPECT_DOUBLE_EQ(sum, rep.energy_total_pj);
  // Engines: every cycle is accounted once.
  for (const auto& e : rep.engines)
    EXPECT_EQ(e.busy + e.token_stall + e.memory_stall + e.idle, rep.cycles) << e.name;
}

TEST(SimReport, JsonHasTheDocumentedKeysAndLayers) {
  const auto& isa = refIsa();
  Result r = run(isa, kTwoLayers, randomBytes(0x8000, 9));
  ASSERT_TRUE(r.ok());
  auto j = ember::platform::toJson(r.report);
  for (const char* k :
       {"cycles", "clock_hz", "mac_utilization", "energy", "layers", "engines", "memories"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["cycles"].get<std::uint64_t>(), r.report.cycles);
  EXPECT_EQ(j["clock_hz"].get<std::uint64_t>(), isa.hw().clock_hz);
  EXPECT_TRUE(j["energy"].contains("total_pj"));
  for (const char* c : {"mac_array", "sram.act", "sram.weight", "sram.acc", "sram.param", "dram",
                        "vector", "leakage"})
    EXPECT_TRUE(j["energy"].contains(c)) << c;
  ASSERT_EQ(j["layers"].size(), 2u);
  const auto& conv = j["layers"][0];
  EXPECT_EQ(conv["name"], "conv");
  for (const char* k : {"cycles", "macs", "mac_utilization", "dram_bytes", "energy_pj"})
    EXPECT_TRUE(conv.contains(k)) << k;
  EXPECT_EQ(conv["macs"].get<std::uint64_t>(), 64u * 2 * 256);
  EXPECT_EQ(conv["dram_bytes"].get<std::uint64_t>(), 64u * 16);
  EXPECT_EQ(j["layers"][1]["name"], "act");
  EXPECT_EQ(j["layers"][1]["dram_bytes"].get<std::uint64_t>(), 64u * 64);
  EXPECT_TRUE(j["fault"].is_null());
  // The table names the same figures.
  std::string t = ember::platform::formatTable(r.report);
  for (const char* s :
       {"cycles", "MACs", "load", "compute", "store", "token-stall", "leakage", "conv", "dram"})
    EXPECT_NE(t.find(s), std::string::npos) << s;
}

TEST(SimReport, ChromeTraceHasOneSlicePerInstructionAndLayer) {
  const auto& isa = refIsa();
  Result r = run(isa, kTwoLayers, randomBytes(0x8000, 9));
  ASSERT_TRUE(r.ok());
  auto t = ember::platform::toChromeTrace(r.report);
  ASSERT_TRUE(t.contains("traceEvents"));
  int insnSlices = 0, layerSlices = 0;
  std::set<int> tids;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "X")
      continue;
    if (e["cat"] == "instruction") {
      ++insnSlices;
      tids.insert(e["tid"].get<int>());
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    } else if (e["cat"] == "layer") {
      ++layerSlices;
      EXPECT_EQ(e["tid"], 4);
    }
  }
  EXPECT_EQ(insnSlices, 5);
  EXPECT_EQ(layerSlices, 2);
  EXPECT_EQ(tids, (std::set<int>{1, 2, 3}));
}

TEST(SimReport, RunsAreDeterministic) {
  const auto& isa = refIsa();
  auto img = randomBytes(0x8000, 10);
  Result a = run(isa, kTwoLayers, img), b = run(isa, kTwoLayers, img);
  EXPECT_EQ(a.report.cycles, b.report.cycles);
  EXPECT_EQ(a.dram, b.dram);
  EXPECT_EQ(ember::platform::toJson(a.report)["energy"],
            ember::platform::toJson(b.report)["energy"]);
}

TEST(SimReport, DescriptionsThatDoNotFitAreRejected) {
  auto j = refIsa().json();
  j["hardware"]["vector"]["lanes"] = 8;
  // The ISA validator may already refuse it; either way the simulator never runs it.
  try {
    auto isa = ember::isa::IsaDescription::loadString(j.dump(), "bad.json");
    EXPECT_THROW(ember::sim::Simulator{isa}, ember::isa::Error);
  } catch (const ember::isa::Error&) {
  }
}

} // namespace
