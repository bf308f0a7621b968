// Resource bounds (issue 16): sparse DRAM, the default cycle budget, the DRAM window check
// at load time, and 64-bit overflow of the timing model. Figures come from the
// description and the formulas of docs/simulator.md, never from the simulator.
#include "SimTestUtil.h"

#include "ember/isa/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <sys/resource.h>

using namespace simtest;
using ember::isa::Binary;
using ember::platform::FaultKind;
using ember::platform::Result;
using ember::sim::Simulator;
using u64 = std::uint64_t;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Peak resident set of this process in MB (ctest runs each test in its own process).
double maxRssMb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;
}

u64 rowsOf(const ember::isa::IsaDescription& isa, const char* mem) {
  return isa.memory(mem).size_bytes / isa.memory(mem).row_bytes;
}

TEST(SimBounds, RegionAtTheTopOfTheDramWindowIsSparse) {
  // Used to copy the window densely up to the end of the memory map, twice: 8.4 GB, 14 s.
  const auto& isa = refIsa();
  const u64 top = isa.hw().dram.size_bytes;
  const u64 row = isa.memory("act").row_bytes;
  std::string text = ".isa \"ember-v1\"\n.region \"c\" const 0x0 0x100\n"
                     ".region \"top\" scratch 0x40000000 " +
                     std::to_string(top - 0x40000000) + "\n.byte 1, 2, 3, 4, 5, 6, 7, 8\n" +
                     "dma.ld sram=act sram_addr=0 dram_addr=0 size0=1 size1=1 size2=1 push_next\n"
                     "sync engine=compute pop_prev push_next\n"
                     "dma.st sram=act sram_addr=0 dram_addr=" +
                     std::to_string(top - row) + " size0=1 size1=1 size2=1 pop_prev\nfinish\n";
  Binary bin = ember::isa::assemble(text, isa, "top.s");
  Simulator sim(isa);
  auto t0 = std::chrono::steady_clock::now();
  Result r = sim.run(bin, {});
  const double seconds = secondsSince(t0);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  EXPECT_LT(seconds, 1.0);
  EXPECT_LT(maxRssMb(), 200.0);
  EXPECT_EQ(r.dram.pages(), 2u); // the constants' page and the stored row's
  std::vector<std::uint8_t> want(row, 0);
  for (int i = 0; i < 8; ++i)
    want[std::size_t(i)] = std::uint8_t(i + 1);
  EXPECT_EQ(r.dram.read(top - row, row), want);
  EXPECT_EQ(r.dram[top / 2], 0); // never written
}

TEST(SimBounds, DramImageIsCopyOnWrite) {
  ember::platform::DramImage a(std::vector<std::uint8_t>{1, 2, 3});
  ember::platform::DramImage b = a;
  b.write(1, std::vector<std::uint8_t>{9});
  EXPECT_EQ(a[1], 2);
  EXPECT_EQ(b[1], 9);
  EXPECT_NE(a, b);
  b.write(1, std::vector<std::uint8_t>{2});
  EXPECT_EQ(a, b);
  ember::platform::DramImage zeros;
  zeros.write(1u << 20, std::vector<std::uint8_t>(4, 0));
  EXPECT_EQ(zeros, ember::platform::DramImage()); // written zeros equal untouched bytes
  EXPECT_EQ(zeros.pages(), 1u);
}

TEST(SimBounds, DramImageViewsAreReadInPlaceAndCopiedOnWrite) {
  using ember::platform::DramImage;
  constexpr u64 P = DramImage::kPageBytes;
  std::vector<std::uint8_t> host(2 * P);
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = std::uint8_t(i * 7 + 1);
  DramImage v;
  v.write(5 * P + 3, std::vector<std::uint8_t>{42}); // a page of its own, replaced below
  v.view(4 * P, host.data(), 2 * P);
  EXPECT_EQ(v.pages(), 2u);
  EXPECT_EQ(v[4 * P + 10], host[10]);
  EXPECT_EQ(v[5 * P + 3], host[P + 3]);
  host[11] = 99; // a view reads the bytes as they are now
  EXPECT_EQ(v[4 * P + 11], 99);
  DramImage copy = v;
  v.write(4 * P + 12, std::vector<std::uint8_t>{7}); // copies the page; the host's stays
  EXPECT_EQ(host[12], std::uint8_t(12 * 7 + 1));
  EXPECT_EQ(v[4 * P + 12], 7);
  EXPECT_EQ(v[4 * P + 11], 99); // the rest of the page came along
  EXPECT_EQ(copy[4 * P + 12], host[12]);
  EXPECT_NE(v, copy);
  std::vector<std::uint8_t> whole(host.begin() + std::ptrdiff_t(P), host.end());
  whole[0] ^= 1;
  copy.write(5 * P, whole); // a whole page over a view: the host's bytes stay
  EXPECT_NE(host[P], whole[0]);
  EXPECT_EQ(copy[5 * P], whole[0]);
  // Equality reads through views: an image holding the same bytes is equal.
  DramImage same;
  same.write(4 * P, host.data(), P);
  same.write(5 * P, whole);
  EXPECT_EQ(same, copy);
  EXPECT_THROW(v.view(P / 2, host.data(), P), std::invalid_argument);
  EXPECT_THROW(v.view(0, host.data(), P + 1), std::invalid_argument);
}

/// docs/simulator.md section 4: one gemm's share of the default budget, its loop counts
/// limited to one pass (n0*n1 <= acc rows, n2 <= weight rows).
u64 gemmPass(const ember::isa::IsaDescription& isa, u64 n0, u64 n1, u64 n2) {
  const auto& mac = isa.hw().mac;
  const u64 R = std::min(n0 * n1, rowsOf(isa, "acc")) * tim(isa, "gemm", "cycles_per_row");
  n2 = std::min(n2, rowsOf(isa, "weight"));
  const u64 WL = mac.weight_load_cycles;
  const u64 S = mac.weight_buffers >= 2 ? std::max(R, WL) : WL + R;
  return tim(isa, "gemm", "issue") + WL + (n2 - 1) * S + R + mac.fill_cycles + mac.drain_cycles;
}

std::string maximalGemms(const ember::isa::IsaDescription& isa, int count) {
  auto* g = isa.findInstruction("gemm");
  auto maxOf = [&](const char* role) { return std::to_string(g->field(role)->maxValue()); };
  std::string line = "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=" + maxOf("n0") +
                     " n1=" + maxOf("n1") + " n2=" + maxOf("n2") + "\n";
  std::string text;
  for (int i = 0; i < count; ++i)
    text += line;
  return text + "finish\n";
}

TEST(SimBounds, HostileGemmsStopAtTheDefaultBudgetInBoundedTime) {
  // 100 maximal GEMMs (a 2.3 KB binary) used to take 55 s of host time under the default
  // budget of 2^40 cycles. The default is now the program's one-pass budget.
  const auto& isa = refIsa();
  auto* g = isa.findInstruction("gemm");
  const u64 n0 = u64(g->field("n0")->maxValue()), n1 = u64(g->field("n1")->maxValue()),
            n2 = u64(g->field("n2")->maxValue());
  Binary bin = ember::isa::assemble(maximalGemms(isa, 100), isa, "hostile.s");
  Simulator sim(isa);
  auto job = ember::platform::makeJob(isa, bin, {});
  // 2^20 + the fetch latency + per instruction one fetch cycle and its one-pass duration.
  const u64 budget = ember::platform::kBudgetSlack + isa.hw().fetch.latency_cycles +
                     100 * (1 + gemmPass(isa, n0, n1, n2)) + 1 + tim(isa, "finish", "issue");
  EXPECT_EQ(ember::platform::defaultCycleBudget(isa, job), budget);
  auto t0 = std::chrono::steady_clock::now();
  Result r = sim.run(job);
  const double seconds = secondsSince(t0);
  ASSERT_TRUE(r.report.fault.has_value());
  const auto& f = *r.report.fault;
  EXPECT_EQ(f.kind, FaultKind::CycleBudget);
  EXPECT_EQ(f.cycle, budget);
  // Each maximal gemm takes longer than its one-pass share: the ones that fit the budget
  // run, the next one stops the run before its data is computed.
  EXPECT_NE(f.reason.find("cycle budget of " + std::to_string(budget) + " cycles exceeded"),
            std::string::npos)
      << f.message();
  EXPECT_LT(r.report.retired, 100u);
  EXPECT_LT(seconds, 5.0);
  // The gemms before it retired, but for the last, which ended in the fault's cycle: the
  // NPU retires nothing in that cycle (docs/simulator.md section 4, as the RTL).
  EXPECT_EQ(r.report.retired + 1, u64(f.instruction));
}

TEST(SimBounds, AnExplicitBudgetRunsWhatTheDefaultStops) {
  const auto& isa = refIsa();
  // One gemm revisiting its rows: longer than one pass over the acc SRAM.
  const u64 n0 = 255, n1 = 255, n2 = 20;
  const std::string text = "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=255 n1=255 n2=20\nfinish\n";
  Result stopped = run(isa, text);
  ASSERT_TRUE(stopped.report.fault.has_value());
  EXPECT_EQ(stopped.report.fault->kind, FaultKind::CycleBudget);
  EXPECT_EQ(stopped.report.retired, 0u); // its data effect was never computed
  ember::platform::Options o;
  o.cycle_budget = 4'000'000;
  Result r = run(isa, text, {}, o);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  const auto& mac = isa.hw().mac;
  const u64 R = n0 * n1 * tim(isa, "gemm", "cycles_per_row"), WL = mac.weight_load_cycles;
  EXPECT_EQ(r.report.cycles, isa.hw().fetch.latency_cycles + tim(isa, "gemm", "issue") + WL +
                                 (n2 - 1) * std::max(R, WL) + R + mac.fill_cycles +
                                 mac.drain_cycles + tim(isa, "finish", "issue"));
}

TEST(SimBounds, MemoryMapOutsideTheWindowIsALoadError) {
  const auto& isa = refIsa();
  Binary bin = ember::isa::assemble(
      ".isa \"ember-v1\"\n.region \"in\" input 0x10000 0x1000\nfinish\n", isa, "w.s");
  Simulator sim(isa);
  ember::platform::Options o;
  o.dram_window_bytes = 0x8000;
  o.binary_name = "w.elf";
  try {
    sim.run(bin, {}, o);
    ADD_FAILURE() << "no error";
  } catch (const ember::isa::Error& e) {
    EXPECT_EQ(e.file(), "w.elf");
    EXPECT_EQ(e.where(), "section .ember.memmap: region \"in\"");
    EXPECT_EQ(e.reason(),
              "[65536, 69632) does not fit the job's DRAM window of 32768 bytes (--dram-window)");
  }
  o.dram_window_bytes = 0x11000; // exactly enough
  EXPECT_TRUE(sim.run(bin, {}, o).ok());
}

/// The reference description with gemm's n0 and n1 widened to 62 bits (a 256-bit word),
/// so that n0 * n1 * cycles_per_row no longer fits 64 bits.
ember::isa::IsaDescription wideGemm() {
  auto j = refIsa().json();
  j["encoding"]["instruction_bits"] = 256;
  for (auto& in : j["instructions"])
    if (in["name"] == "gemm") {
      in["fields"]["n0"] = {{"lsb", 128}, {"width", 62}};
      in["fields"]["n1"] = {{"lsb", 192}, {"width", 62}};
    }
  return ember::isa::IsaDescription::loadString(j.dump(), "wide-gemm.json");
}

TEST(SimBounds, CycleCountOverflowFaultsInsteadOfWrapping) {
  auto isa = wideGemm();
  const std::string big = std::to_string(u64(1) << 33);
  // 2^66 rows: the old model wrapped to a small count and finished with exit 0.
  Result r = run(isa, "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=" + big + " n1=" + big +
                          " n2=1 reset\nfinish\n");
  ASSERT_TRUE(r.report.fault.has_value());
  EXPECT_EQ(r.report.fault->kind, FaultKind::CycleBudget);
  EXPECT_EQ(r.report.fault->instruction, 0);
  EXPECT_NE(r.report.fault->reason.find("gemm: its duration does not fit a 64-bit cycle count"),
            std::string::npos)
      << r.report.fault->message();
  // Large but representable: stopped by the budget, not by overflow.
  ember::platform::Options o;
  o.cycle_budget = ember::platform::kMaxCycleBudget;
  r = run(isa,
          "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=" + std::to_string(u64(1) << 30) +
              " n1=" + std::to_string(u64(1) << 30) + " n2=1 reset\nfinish\n",
          {}, o);
  ASSERT_TRUE(r.report.fault.has_value());
  EXPECT_NE(r.report.fault->reason.find("cycle budget of 1125899906842624 cycles exceeded"),
            std::string::npos)
      << r.report.fault->message();
}

TEST(SimBounds, BankConflictsOfLongLoopsAreCountedExactly) {
  // The timing model counts conflicts per residue class of the loop indices (bounded
  // host work); the count must equal the step-by-step one.
  const auto& isa = refIsa();
  const auto& act = isa.memory("act");
  const u64 n0 = 250, n1 = 60, a0 = 3, a1 = 7, b0 = 5, b1 = 2, A = 11, B = 100;
  u64 conflicts = 0;
  for (u64 i1 = 0; i1 < n1; ++i1)
    for (u64 i0 = 0; i0 < n0; ++i0)
      conflicts += (A + i0 * a0 + i1 * a1) % act.banks == (B + i0 * b0 + i1 * b1) % act.banks;
  ASSERT_GT(conflicts, 0u);
  ASSERT_LT(conflicts, n0 * n1);
  ember::platform::Options o;
  o.cycle_budget = ember::platform::kMaxCycleBudget;
  Result r = run(isa,
                 "vadd dst_mem=acc src_mem=act dst_addr=0 src0_addr=11 src1_addr=100 n0=250 "
                 "n1=60 dst_s0=0 dst_s1=0 src0_s0=3 src0_s1=7 src1_s0=5 src1_s1=2\nfinish\n",
                 {}, o);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  const u64 per = (2 + act.read_ports - 1) / act.read_ports - 1;
  EXPECT_EQ(r.report.cycles, isa.hw().fetch.latency_cycles + tim(isa, "vadd", "issue") +
                                 n0 * n1 * tim(isa, "vadd", "cycles_per_row") + conflicts * per +
                                 tim(isa, "vadd", "pipeline_latency") +
                                 tim(isa, "finish", "issue"));
}

TEST(SimBounds, WrappingAddressesAreOutOfRange) {
  // 63-bit strides: 4 * 2^62 wraps to 0, which passed the range check and then wrote far
  // outside the SRAM.
  auto j = refIsa().json();
  j["encoding"]["instruction_bits"] = 256;
  for (auto& in : j["instructions"]) {
    if (in["name"] == "vmov")
      in["fields"]["dst_s0"] = {{"lsb", 128}, {"width", 63}};
    if (in["name"] == "gemm")
      in["fields"]["act_s0"] = {{"lsb", 128}, {"width", 63}};
  }
  auto isa = ember::isa::IsaDescription::loadString(j.dump(), "wide-strides.json");
  const std::string s = std::to_string(u64(1) << 62);
  Result r = run(isa, "vmov dst_mem=act src_mem=act dst_addr=0 src_addr=0 n0=5 n1=1 dst_s0=" + s +
                          "\nfinish\n");
  ASSERT_TRUE(r.report.fault.has_value());
  EXPECT_EQ(r.report.fault->kind, FaultKind::SramOutOfRange) << r.report.fault->message();
  r = run(isa, "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=5 n1=1 n2=1 act_s0=" + s + "\nfinish\n");
  ASSERT_TRUE(r.report.fault.has_value());
  EXPECT_EQ(r.report.fault->kind, FaultKind::SramOutOfRange) << r.report.fault->message();
}

TEST(SimBounds, ExtremeButLegalDescriptionGivesTheClosedForm) {
  // Every latency at the schema's maximum of 2^20 cycles.
  auto j = refIsa().json();
  const u64 M = u64(1) << 20;
  for (const char* k : {"weight_load_cycles", "fill_cycles", "drain_cycles"})
    j["hardware"]["mac_array"][k] = M;
  j["hardware"]["dma"]["latency_cycles"] = M;
  for (auto& in : j["instructions"])
    for (auto& [key, value] : in["timing"].items())
      value = M;
  auto isa = ember::isa::IsaDescription::loadString(j.dump(), "extreme.json");
  ember::platform::Options o;
  o.cycle_budget = ember::platform::kMaxCycleBudget;
  // DMA of the whole act SRAM, taken in cycle L (rule F1): issue + setup + latency +
  // max(lines * ceil(line bytes / bw), rows / rows a cycle, bytes * lat / (outstanding *
  // burst)) (D1).
  const auto& hw = isa.hw();
  const u64 bytes = isa.memory("act").size_bytes, rows = rowsOf(isa, "act");
  Result r =
      run(isa,
          "dma.ld sram=act sram_addr=0 dram_addr=0 size0=128 size1=" + std::to_string(rows / 128) +
              " size2=1 stride1=128\nfinish\n",
          {}, o);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  const u64 L = hw.fetch.latency_cycles, rb = isa.memory("act").row_bytes;
  const u64 beat = hw.dram.bytes_per_cycle;
  const u64 perCycle = std::max<u64>(1, std::min<u64>(beat / rb, isa.memory("act").banks));
  u64 X = std::max({rows / 128 * ((128 * rb + beat - 1) / beat), rows / perCycle,
                    (bytes * M + hw.dma.max_outstanding * hw.dma.burst_bytes - 1) /
                        (hw.dma.max_outstanding * hw.dma.burst_bytes)});
  EXPECT_EQ(r.report.cycles, L + M + M + M + X); // finish (M) runs alongside on compute
  // GEMM: issue + WL + (n2 - 1) * max(R, WL) + R + fill + drain, R = n0 * n1 * cpr; then
  // finish on the same engine.
  r = run(isa, "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=255 n1=255 n2=2\nfinish\n", {}, o);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  const u64 R = 255 * 255 * M;
  EXPECT_EQ(r.report.cycles, L + M + M + std::max(R, M) + R + M + M + M);
  EXPECT_EQ(r.report.cycles, L + u64(136367308800) + 5 * M); // 2 * 65025 * 2^20 + 5 * 2^20
}

} // namespace
