// One directed program per rule of the timing contract (docs/simulator.md section 2).
// Every expected cycle is worked out by hand from the rules, in the comments, with the
// description's parameters; none comes from libember_isa's timing code. The same programs
// are the directed part of the RTL co-simulation corpus.
#include "SimTestUtil.h"
#include "ember/isa/error.h"

#include <gtest/gtest.h>

#include <functional>

using namespace simtest;
using ember::platform::Result;
using ember::platform::Slice;
using u64 = std::uint64_t;

namespace {

const Slice& slice(const Result& r, std::uint32_t index) {
  for (const auto& s : r.report.slices)
    if (s.index == index)
      return s;
  ADD_FAILURE() << "no slice for instruction " << index;
  static Slice none;
  return none;
}

/// The reference description with a few hardware fields changed.
ember::isa::IsaDescription variant(const std::function<void(nlohmann::json&)>& edit,
                                   const char* label) {
  auto j = refIsa().json();
  edit(j);
  return ember::isa::IsaDescription::loadString(j.dump(), label);
}

u64 issue(const ember::isa::IsaDescription& isa, const char* insn) {
  return tim(isa, insn, "issue");
}

TEST(SimContract, F1_FetchWritesOneInstructionPerCycleAfterItsLatency) {
  for (u64 L : {1u, 7u}) {
    auto isa = variant([&](nlohmann::json& j) { j["hardware"]["fetch"]["latency_cycles"] = L; },
                       "fetch-latency.json");
    // Three syncs on three engines: written in cycles L-1, L, L+1, each taken (and, with
    // no tokens, started) the cycle after it is written (F3, E1, E2).
    Result r = run(isa, "sync engine=load\nsync engine=compute\nsync engine=store\n"
                        "finish\n");
    ASSERT_TRUE(r.ok()) << r.report.fault->message();
    for (std::uint32_t k = 0; k < 3; ++k) {
      EXPECT_EQ(slice(r, k).dispatch, L - 1 + k) << "L=" << L << " k=" << k;
      EXPECT_EQ(slice(r, k).take, L + k);
      EXPECT_EQ(slice(r, k).start, L + k);
      EXPECT_EQ(slice(r, k).end, L + k + issue(isa, "sync"));
    }
    // finish (instruction 3) is written in L+2, taken in L+3 when the compute sync has
    // retired (it ended in L+2), and DONE rises when it ends.
    EXPECT_EQ(r.report.cycles, L + 3 + issue(isa, "finish"));
  }
  // DONE: a lone finish is written in cycle 0, taken in 1, ends in 1 + issue.
  EXPECT_EQ(run(refIsa(), "finish\n").report.cycles, 1 + issue(refIsa(), "finish"));
}

TEST(SimContract, F2_AFullQueueStallsFetchAndATakeFreesItsSlotInTheSameCycle) {
  auto isa = variant([](nlohmann::json& j) { j["hardware"]["queues"]["load_depth"] = 1; },
                     "load-depth-1.json");
  const u64 L = isa.hw().fetch.latency_cycles;
  // Three loads of nothing (size0 = 0: issue + setup cycles) then a compute sync.
  const std::string ld = "dma.ld sram=act sram_addr=0 dram_addr=0 size0=0 size1=1 size2=1\n";
  Result r = run(isa, ld + ld + ld + "sync engine=compute\nfinish\n");
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  const u64 D = issue(isa, "dma.ld") + tim(isa, "dma.ld", "setup");
  // 0: written L-1, taken L, ends L+D. 1: written L (the take of 0 freed the slot in
  // that cycle), taken L+D. 2: fetch tries in L+1, the queue holds 1 until it is taken
  // in L+D, so 2 is written in L+D (stall D-1 cycles) and taken in L+2D.
  EXPECT_EQ(slice(r, 0).take, L);
  EXPECT_EQ(slice(r, 1).dispatch, L);
  EXPECT_EQ(slice(r, 1).take, L + D);
  EXPECT_EQ(slice(r, 2).dispatch, L + D);
  EXPECT_EQ(slice(r, 2).take, L + 2 * D);
  // The compute sync waits behind the stalled fetch: written in L+D+1.
  EXPECT_EQ(slice(r, 3).dispatch, L + D + 1);
  EXPECT_EQ(slice(r, 3).start, L + D + 2);
  EXPECT_EQ(r.report.fetch_stall, D - 1);
  EXPECT_EQ(r.report.cycles, L + 3 * D);
}

TEST(SimContract, E2_APushIsVisibleToAPopInTheSameCycle) {
  const auto& isa = refIsa();
  const u64 L = isa.hw().fetch.latency_cycles, S = issue(isa, "sync");
  // The load sync retires in L+S and pushes; the compute sync, taken in L+1, waits and
  // starts in L+S, the cycle of the push.
  Result r = run(isa, "sync engine=load push_next\nsync engine=compute pop_prev\nfinish\n");
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  EXPECT_EQ(slice(r, 0).end, L + S);
  EXPECT_EQ(slice(r, 1).take, L + 1);
  EXPECT_EQ(slice(r, 1).start, std::max(L + S, L + 1));
  EXPECT_EQ(r.report.engines[1].token_stall, std::max(L + S, L + 1) - (L + 1));
}

TEST(SimContract, E4_APopMakesRoomForAPushFromTheNextCycle) {
  auto isa = variant([](nlohmann::json& j) { j["hardware"]["queues"]["token_fifo_depth"] = 1; },
                     "token-depth-1.json");
  const u64 L = isa.hw().fetch.latency_cycles, S = issue(isa, "sync");
  ASSERT_EQ(S, 1u) << "the hand timeline below assumes a one-cycle sync";
  // 0: a gemm of 40 rows on compute, T_g cycles (rule G1), taken in L.
  const auto& mac = isa.hw().mac;
  const u64 R = 40 * tim(isa, "gemm", "cycles_per_row");
  const u64 Tg =
      issue(isa, "gemm") + mac.weight_load_cycles + R + mac.fill_cycles + mac.drain_cycles;
  Result r = run(isa, "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=40 n1=1 n2=1 act_s0=1 acc_s0=1\n"
                      "sync engine=load push_next\n"
                      "sync engine=load push_next\n"
                      "sync engine=compute pop_prev\n"
                      "sync engine=compute pop_prev\n"
                      "finish\n");
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  // 1: written L, taken L+1, retires L+2 and pushes (FIFO 1/1). 2: taken L+2, ends L+3,
  // but the FIFO is full until 3 pops it: 3 is taken when the gemm retires (L+Tg) and
  // pops in that cycle, so 2 retires in L+Tg+1. 4 pops that token in L+Tg+1 (E2).
  EXPECT_EQ(slice(r, 1).end, L + 2);
  EXPECT_EQ(slice(r, 2).start, L + 2);
  EXPECT_EQ(slice(r, 3).start, L + Tg);
  EXPECT_EQ(slice(r, 2).end, L + Tg + 1);
  EXPECT_EQ(slice(r, 2).push_stall, (L + Tg + 1) - (L + 3));
  EXPECT_EQ(slice(r, 4).start, L + Tg + 1);
  EXPECT_EQ(r.report.cycles, L + Tg + 2 + issue(isa, "finish"));
  // The push stall is a token stall of the load engine, and a "wait room" slice in the
  // trace right after the sync's duration.
  EXPECT_EQ(r.report.engines[0].token_stall, (L + Tg + 1) - (L + 3));
  bool waitRoom = false;
  const nlohmann::json trace = ember::platform::toChromeTrace(r.report);
  for (const auto& ev : trace["traceEvents"])
    if (ev.value("name", "") == "wait room") {
      waitRoom = true;
      EXPECT_NEAR(ev["dur"].get<double>(), double(Tg - 2) * 1e6 / double(isa.hw().clock_hz), 1e-9);
    }
  EXPECT_TRUE(waitRoom);
}

TEST(SimContract, D2_SameCycleDmaStartsBookTheChannelLoadFirst) {
  const auto& isa = refIsa();
  const auto& hw = isa.hw();
  const u64 L = hw.fetch.latency_cycles, head = issue(isa, "dma.ld") + tim(isa, "dma.ld", "setup");
  ASSERT_EQ(head, issue(isa, "dma.st") + tim(isa, "dma.st", "setup"));
  // X of 64 act rows and of 32 act rows in one line (rule D1, 16-byte rows: the line in
  // whole beats, min(beat / 16, banks) rows a cycle).
  auto X = [&](u64 rows, u64 rb) {
    const u64 beat = hw.dram.bytes_per_cycle;
    const u64 perCycle = std::max<u64>(1, std::min<u64>(beat / rb, isa.memory("act").banks));
    return std::max(
        {(rows * rb + beat - 1) / beat, (rows + perCycle - 1) / perCycle,
         (rows * rb * hw.dma.latency_cycles + hw.dma.max_outstanding * hw.dma.burst_bytes - 1) /
             (hw.dma.max_outstanding * hw.dma.burst_bytes)});
  };
  const std::string ld =
      "dma.ld sram=act sram_addr=0 dram_addr=0 size0=64 size1=1 size2=1 pop_next\n";
  const std::string st =
      "dma.st sram=act sram_addr=100 dram_addr=0x10000 size0=32 size1=1 size2=1 pop_prev\n";
  const std::string go = "sync engine=compute push_prev push_next\nfinish\n";
  // Both DMAs wait for the compute sync, written in L+1, taken L+2, retiring in
  // L+2+S and pushing to both neighbours: both start in that cycle. The load books the
  // channel first whatever the stream order; the store waits for its whole transfer.
  for (const std::string& prog : {ld + st + go, st + ld + go}) {
    Result r = run(isa, prog);
    ASSERT_TRUE(r.ok()) << r.report.fault->message();
    const u64 s = L + 2 + issue(isa, "sync");
    const auto& load = r.report.engines[0];
    const auto& store = r.report.engines[2];
    EXPECT_EQ(load.memory_stall, 0u);
    EXPECT_EQ(store.memory_stall, X(64, 16));
    EXPECT_EQ(r.report.cycles, s + head + X(64, 16) + X(32, 16) + hw.dma.latency_cycles);
  }
}

TEST(SimContract, CountersAddUpToTheTotal) {
  const auto& isa = refIsa();
  // A short pipeline with stalls of every kind.
  // Sources 0 and `banks` share an act bank (rule V1).
  const std::string banks = std::to_string(isa.memory("act").banks);
  Result r = run(isa, "dma.ld sram=act sram_addr=0 dram_addr=0 size0=64 size1=1 size2=1 push_next\n"
                      "dma.st sram=act sram_addr=100 dram_addr=0x10000 size0=64 size1=1 size2=1\n"
                      "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=64 n1=1 n2=1 act_s0=1 acc_s0=1 "
                      "pop_prev push_next\n"
                      "vadd dst_mem=acc src_mem=act dst_addr=0 src0_addr=0 src1_addr=" +
                          banks +
                          " n0=9 n1=1 "
                          "dst_s0=1 src0_s0=1 src1_s0=1\n"
                          "dma.st sram=acc sram_addr=0 dram_addr=0x20000 size0=64 size1=1 size2=1 "
                          "pop_prev\nfinish\n");
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  for (const auto& e : r.report.engines)
    EXPECT_EQ(e.busy + e.token_stall + e.memory_stall + e.idle, r.report.cycles);
  EXPECT_GT(r.report.engines[1].token_stall, 0u);
  EXPECT_GT(r.report.engines[1].memory_stall, 0u); // vadd's sources share an act bank
  EXPECT_GT(r.report.engines[2].memory_stall, 0u); // the first store waits for the load
  u64 retiredLast = 0;
  for (const auto& s : r.report.slices)
    retiredLast = std::max(retiredLast, s.end);
  EXPECT_EQ(r.report.cycles, retiredLast); // DONE: the last retirement
}

TEST(SimContract, DescriptionsTheHardwareCannotImplementAreRefused) {
  auto refuse = [](const std::function<void(nlohmann::json&)>& edit, const std::string& why) {
    auto j = refIsa().json();
    edit(j);
    try {
      ember::isa::IsaDescription::loadString(j.dump(), "bad.json");
      ADD_FAILURE() << "accepted: " << why;
    } catch (const ember::Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refuse([](nlohmann::json& j) { j["instructions"][0]["timing"]["setup"] = 2.5; },
         "/instructions/0/timing/setup: timing 2.5 is not a whole number of cycles");
  refuse([](nlohmann::json& j) { j["instructions"][0]["timing"]["issue"] = 0; },
         "/instructions/0/timing/issue: issue must be at least 1 cycle");
  refuse([](nlohmann::json& j) { j["hardware"]["dma"]["max_outstanding"] = 48; },
         "/hardware/dma/max_outstanding: 48 is not a power of two");
  refuse([](nlohmann::json& j) { j["hardware"]["fetch"]["latency_cycles"] = 0; },
         "/hardware/fetch/latency_cycles");
  refuse([](nlohmann::json& j) { j["hardware"].erase("fetch"); }, "fetch");
  refuse([](nlohmann::json& j) { j["hardware"]["mac_array"]["weight_buffers"] = 3; },
         "weight_buffers");
}

} // namespace
