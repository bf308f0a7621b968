// The roofline per layer (issue 46 item 5): platform::roofline on hand-computed figures,
// platform::LayerAccounts on hand-made retirements under a hand-made description, the
// columns of the table, the JSON and the HTML report, and a simulated run's layer rows.
#include "SimTestUtil.h"

#include "ember/platform/HtmlReport.h"
#include "ember/platform/Layers.h"
#include "ember/platform/Report.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace simtest;
using ember::platform::LayerAccounts;
using ember::platform::LayerReport;
using ember::platform::Report;
using ember::platform::roofline;
using ember::platform::Slice;

namespace {

/// ember-v1 with its DRAM at 8 bytes per cycle (the file has 32): the bounds must follow
/// the description's figures.
const ember::isa::IsaDescription& slowDramIsa() {
  static ember::isa::IsaDescription d = [] {
    std::ifstream f(EMBER_SOURCE_DIR "/isa/ember-v1.json");
    std::stringstream text;
    text << f.rdbuf();
    nlohmann::json j = nlohmann::json::parse(text.str());
    j["hardware"]["dram"]["bytes_per_cycle"] = 8;
    j["name"] = "ember-v1-slow-dram";
    return ember::isa::IsaDescription::loadString(j.dump(), "slow-dram.json");
  }();
  return d;
}

Slice slice(std::uint32_t index, int engine, std::uint64_t take, std::uint64_t start,
            std::uint64_t end, std::uint64_t mstall, std::uint64_t push) {
  Slice s;
  s.index = index;
  s.engine = engine;
  s.take = take;
  s.start = start;
  s.end = end;
  s.memory_stall = mstall;
  s.push_stall = push;
  return s;
}

/// Three layers: "conv" (instructions 0-2: a load and two compute), "pool" (3-4: a load
/// and a store) and "fc" (6: never retires); instruction 5 belongs to no layer.
LayerAccounts handAccounts() {
  LayerAccounts a({{0, 3, "conv"}, {3, 2, "pool"}, {6, 1, "fc"}});
  a.add(slice(0, 0, 0, 2, 10, 3, 1), 0, 64, 1.5);
  a.add(slice(1, 1, 1, 10, 40, 0, 0), 8192, 0, 2.0);
  a.add(slice(2, 1, 40, 45, 60, 5, 2), 4096, 0, 1.0);
  a.add(slice(3, 0, 10, 12, 50, 10, 0), 0, 256, 0.5);
  a.add(slice(4, 2, 5, 55, 70, 0, 4), 0, 64, 0.25);
  a.add(slice(5, 1, 70, 71, 99, 0, 0), 999999, 999999, 100.0); // outside every layer
  return a;
}

/// A report holding `layers` (what the writers need of the rest).
Report reportOf(std::vector<LayerReport> layers) {
  Report r;
  r.isa_name = "ember-v1-slow-dram";
  r.cycles = 99;
  r.clock_hz = 1000000000;
  r.peak_macs_per_cycle = 256;
  r.layers = std::move(layers);
  return r;
}

} // namespace

TEST(LayerRoofline, BoundIsTheLargerOfMacAndDramBound) {
  // 4096 MACs / 256 = 16 cycles, 1024 B / 32 = 32 cycles: DRAM-bound, 32 of 64 cycles.
  auto r = roofline(4096, 1024, 64, 256, 32);
  EXPECT_EQ(r.mac_bound, 16.0);
  EXPECT_EQ(r.dram_bound, 32.0);
  EXPECT_EQ(r.bound, 32.0);
  EXPECT_STREQ(r.kind, "dram");
  EXPECT_EQ(r.efficiency, 0.5);
  // 25600 / 256 = 100 cycles against 320 / 32 = 10: MAC-bound, 100 of 200 cycles.
  r = roofline(25600, 320, 200, 256, 32);
  EXPECT_STREQ(r.kind, "mac");
  EXPECT_EQ(r.bound, 100.0);
  EXPECT_EQ(r.efficiency, 0.5);
  // A tie is MAC-bound (as bench/npu/npu_bench.cpp always counted it).
  r = roofline(256, 32, 4, 256, 32);
  EXPECT_STREQ(r.kind, "mac");
  EXPECT_EQ(r.efficiency, 0.25);
  // Fractions are kept: 100 / 256 = 0.390625 cycles, over 10 cycles.
  r = roofline(100, 0, 10, 256, 32);
  EXPECT_EQ(r.bound, 0.390625);
  EXPECT_EQ(r.efficiency, 0.0390625);
  // Neither MACs nor DRAM bytes: no bound; no cycles: no efficiency.
  r = roofline(0, 0, 10, 256, 32);
  EXPECT_STREQ(r.kind, "none");
  EXPECT_EQ(r.bound, 0.0);
  EXPECT_EQ(r.efficiency, 0.0);
  r = roofline(512, 0, 0, 256, 32);
  EXPECT_EQ(r.bound, 2.0);
  EXPECT_EQ(r.efficiency, 0.0);
}

TEST(LayerRoofline, RefusesFiguresThatAreNoRates) {
  auto refused = [](double macs, double bytes, double cycles, double peak, double bw,
                    const std::string& what) {
    try {
      (void)roofline(macs, bytes, cycles, peak, bw);
      ADD_FAILURE() << "accepted " << what;
    } catch (const ember::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused(1, 1, 1, 0, 32, "peak MACs per cycle is 0");
  refused(1, 1, 1, 256, -8, "DRAM bytes per cycle is -8");
  refused(std::nan(""), 1, 1, 256, 32, "MACs is");
  refused(1, HUGE_VAL, 1, 256, 32, "DRAM bytes is");
  refused(1, 1, -1, 256, 32, "cycles is -1");
}

TEST(LayerRoofline, AccountsSumPerLayerAndEngineUnderTheDescription) {
  const auto& isa = slowDramIsa();
  ASSERT_EQ(isa.peakMacsPerCycle(), 256u); // 16 x 16 array (the file's)
  ASSERT_EQ(isa.dramBytesPerCycle(), 8.0); // set above
  const auto layers = handAccounts().layers(isa);
  ASSERT_EQ(layers.size(), 3u);
  const LayerReport& conv = layers[0];
  EXPECT_EQ(conv.name, "conv");
  EXPECT_EQ(conv.start, 2u);
  EXPECT_EQ(conv.end, 60u);
  EXPECT_EQ(conv.cycles, 58u);
  EXPECT_EQ(conv.macs, 12288u);
  EXPECT_EQ(conv.dram_bytes, 64u);
  EXPECT_DOUBLE_EQ(conv.mac_utilization, 12288.0 / (58.0 * 256));
  EXPECT_DOUBLE_EQ(conv.energy_pj, 4.5 + 58 * isa.energy().leakage_per_cycle);
  // 12288 / 256 = 48 cycles against 64 / 8 = 8: MAC-bound, 48 of 58 cycles.
  EXPECT_EQ(conv.bound, "mac");
  EXPECT_EQ(conv.mac_bound_cycles, 48.0);
  EXPECT_EQ(conv.dram_bound_cycles, 8.0);
  EXPECT_EQ(conv.bound_cycles, 48.0);
  EXPECT_DOUBLE_EQ(conv.roofline_efficiency, 48.0 / 58.0);
  // load: busy (10 - 2) - 3 - 1 = 4, token 2 + 1 = 3, memory 3; compute: busy 30 + 8 = 38,
  // token 9 + (5 + 2) = 16, memory 5.
  EXPECT_EQ(conv.engines[0].instructions, 1u);
  EXPECT_EQ(conv.engines[0].busy, 4u);
  EXPECT_EQ(conv.engines[0].token_stall, 3u);
  EXPECT_EQ(conv.engines[0].memory_stall, 3u);
  EXPECT_EQ(conv.engines[1].instructions, 2u);
  EXPECT_EQ(conv.engines[1].busy, 38u);
  EXPECT_EQ(conv.engines[1].token_stall, 16u);
  EXPECT_EQ(conv.engines[1].memory_stall, 5u);
  EXPECT_EQ(conv.engines[2].instructions, 0u);
  EXPECT_EQ(ember::platform::layerStall(conv), "compute token 16");
  const LayerReport& pool = layers[1];
  EXPECT_EQ(pool.cycles, 58u); // 12 .. 70
  EXPECT_EQ(pool.dram_bytes, 320u);
  // 320 / 8 = 40 cycles, no MACs: DRAM-bound, 40 of 58 cycles.
  EXPECT_EQ(pool.bound, "dram");
  EXPECT_EQ(pool.bound_cycles, 40.0);
  EXPECT_DOUBLE_EQ(pool.roofline_efficiency, 40.0 / 58.0);
  // load: token 2, memory 10; store: token 50 + 4 = 54, busy 15 - 4 = 11.
  EXPECT_EQ(pool.engines[0].memory_stall, 10u);
  EXPECT_EQ(pool.engines[2].token_stall, 54u);
  EXPECT_EQ(pool.engines[2].busy, 11u);
  EXPECT_EQ(ember::platform::layerStall(pool), "store token 54");
  const LayerReport& fc = layers[2];
  EXPECT_EQ(fc.cycles, 0u);
  EXPECT_EQ(fc.bound, "none");
  EXPECT_EQ(fc.roofline_efficiency, 0.0);
  EXPECT_EQ(ember::platform::layerStall(fc), "-");
  // The same retirements on ember-v1-large (32 x 32 array, 64 B/cycle): 12288 / 1024 = 12
  // cycles against 64 / 64 = 1; 320 / 64 = 5 cycles.
  const auto large = handAccounts().layers(largeIsa());
  EXPECT_EQ(large[0].bound_cycles, 12.0);
  EXPECT_EQ(large[0].dram_bound_cycles, 1.0);
  EXPECT_EQ(large[1].bound_cycles, 5.0);
  EXPECT_EQ(large[1].bound, "dram");
}

TEST(LayerRoofline, TableJsonTraceAndHtmlShowIt) {
  const Report r = reportOf(handAccounts().layers(slowDramIsa()));
  const std::string t = ember::platform::formatTable(r);
  EXPECT_NE(t.find("bound  bound cyc   eff.  most stalled"), std::string::npos) << t;
  auto line = [&](const std::string& name) {
    const auto at = t.find("\n  " + name + " ");
    return at == std::string::npos ? std::string() : t.substr(at + 1, t.find('\n', at + 1) - at);
  };
  EXPECT_NE(line("conv").find("   mac         48  82.8%  compute token 16"), std::string::npos)
      << line("conv");
  EXPECT_NE(line("pool").find("  dram         40  69.0%  store token 54"), std::string::npos)
      << line("pool");
  EXPECT_NE(line("fc").find("  none          0   0.0%  -"), std::string::npos) << line("fc");

  const nlohmann::json j = ember::platform::toJson(r);
  const auto& conv = j["layers"][0];
  EXPECT_EQ(conv["bound"], "mac");
  EXPECT_EQ(conv["mac_bound_cycles"].get<double>(), 48.0);
  EXPECT_EQ(conv["dram_bound_cycles"].get<double>(), 8.0);
  EXPECT_EQ(conv["bound_cycles"].get<double>(), 48.0);
  EXPECT_DOUBLE_EQ(conv["roofline_efficiency"].get<double>(), 48.0 / 58.0);
  EXPECT_EQ(conv["engines"]["compute"]["token_stall"].get<std::uint64_t>(), 16u);
  EXPECT_EQ(conv["engines"]["compute"]["busy"].get<std::uint64_t>(), 38u);
  EXPECT_EQ(conv["engines"]["load"]["memory_stall"].get<std::uint64_t>(), 3u);
  EXPECT_EQ(j["layers"][1]["bound"], "dram");
  EXPECT_EQ(j["layers"][1]["engines"]["store"]["token_stall"].get<std::uint64_t>(), 54u);

  bool traced = false;
  const nlohmann::json trace = ember::platform::toChromeTrace(r);
  for (const auto& e : trace["traceEvents"])
    if (e.value("cat", "") == "layer" && e["name"] == "pool") {
      traced = true;
      EXPECT_EQ(e["args"]["bound"], "dram");
      EXPECT_EQ(e["args"]["bound_cycles"].get<double>(), 40.0);
    }
  EXPECT_TRUE(traced);

  const std::string h = ember::platform::toHtml({r});
  for (const char* s : {"Roofline efficiency per layer", "most stalled", "<td>conv</td>",
                        "<td>mac</td><td>48</td><td>8</td><td>82.8%</td><td>compute token 16</td>"
                        "<td>3 / 3</td><td>16 / 5</td><td>0 / 0</td>",
                        "<td>dram</td><td>0</td><td>40</td><td>69.0%</td><td>store token 54</td>",
                        "82.8% of its mac bound"})
    EXPECT_NE(h.find(s), std::string::npos) << s;
}

TEST(LayerRoofline, ASimulatedRunCarriesItsLayersBounds) {
  // conv: a 64-row load (1 KiB) and a gemm of 64 x 2 rows of 256 MACs; act: a vmax and a
  // 64-row store of 64-byte acc rows (4 KiB).
  const char* text =
      ".node \"conv\"\n"
      "dma.ld sram=act sram_addr=0 dram_addr=0 size0=64 size1=1 size2=1 push_next\n"
      "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=64 n1=1 n2=2 act_s0=1 acc_s0=1 wgt_s2=1 "
      "pop_prev\n"
      ".node \"act\"\n"
      "vmax dst_mem=acc src_mem=acc dst_addr=0 src0_addr=0 src1_addr=100 n0=64 n1=1 dst_s0=1 "
      "src0_s0=1 src1_s0=0 push_next\n"
      "dma.st sram=acc sram_addr=0 dram_addr=0x4000 size0=64 size1=1 size2=1 pop_prev "
      "push_prev\n"
      ".endnode\n"
      "finish pop_next\n";
  ember::platform::Result res = run(refIsa(), text, randomBytes(0x8000, 9));
  ASSERT_TRUE(res.ok()) << res.report.fault->message();
  const auto& l = res.report.layers;
  ASSERT_EQ(l.size(), 2u);
  // ember-v1: 256 MACs and 32 DRAM bytes per cycle. conv: 32768 / 256 = 128 cycles against
  // 1024 / 32 = 32; act: no MACs, 4096 / 32 = 128 cycles.
  EXPECT_EQ(l[0].bound, "mac");
  EXPECT_EQ(l[0].bound_cycles, 128.0);
  EXPECT_EQ(l[0].dram_bound_cycles, 32.0);
  ASSERT_GT(l[0].cycles, 0u);
  EXPECT_DOUBLE_EQ(l[0].roofline_efficiency, 128.0 / double(l[0].cycles));
  EXPECT_EQ(l[1].bound, "dram");
  EXPECT_EQ(l[1].bound_cycles, 128.0);
  EXPECT_EQ(l[1].mac_bound_cycles, 0.0);
  // The layers' instructions on each engine: conv a load and a gemm, act a vmax and a store.
  EXPECT_EQ(l[0].engines[0].instructions, 1u);
  EXPECT_EQ(l[0].engines[1].instructions, 1u);
  EXPECT_EQ(l[1].engines[1].instructions, 1u);
  EXPECT_EQ(l[1].engines[2].instructions, 1u);
  // Every layer instruction's cycles are busy or stalled: per engine, the layers' sums
  // are at most the run's.
  for (std::size_t e = 0; e < 3; ++e) {
    const auto& run = res.report.engines[e];
    EXPECT_LE(l[0].engines[e].busy + l[1].engines[e].busy, run.busy) << run.name;
    EXPECT_LE(l[0].engines[e].token_stall + l[1].engines[e].token_stall, run.token_stall);
  }
}
