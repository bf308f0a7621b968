// Several NPUs in one simulation (sim::runTogether, docs/systems.md section 5): a device
// alone gives exactly its single-device run; two devices on one DRAM give the cycles
// rules M1-M4 give by hand. The expected cycles are worked out in the comments from
// ember-v1's parameters (fetch latency L = 1, DMA head H = issue 1 + setup 4 = 5, DRAM
// latency 100, 32-byte beats, act rows of 16 bytes in 16 banks, 64 x 64-byte bursts in
// flight) and rules D1/D2 of docs/simulator.md; none comes from the timing code.
#include "ember/sim/System.h"
#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace simtest;
using ember::platform::Result;
using ember::sim::Arbitration;
using ember::sim::DeviceJob;
using ember::sim::DeviceOutcome;
using u64 = std::uint64_t;

namespace {

DeviceJob device(const std::string& text, std::size_t dram) {
  DeviceJob d;
  d.isa = &refIsa();
  d.job = makeJob(refIsa(), text);
  d.dram = dram;
  return d;
}

/// `k` loads of `rows` act rows in one line each, then finish.
std::string loads(int k, int rows) {
  std::string s;
  for (int i = 0; i < k; ++i)
    s += "dma.ld sram=act sram_addr=0 dram_addr=" + std::to_string(i * 0x1000) +
         " size0=" + std::to_string(rows) + " size1=1 size2=1\n";
  return s + "finish\n";
}

void expectSameReport(const Result& a, const Result& b) {
  ASSERT_EQ(a.ok(), b.ok());
  EXPECT_EQ(a.report.cycles, b.report.cycles);
  EXPECT_EQ(a.report.retired, b.report.retired);
  EXPECT_EQ(a.report.fetch_stall, b.report.fetch_stall);
  for (int e = 0; e < 3; ++e) {
    EXPECT_EQ(a.report.engines[e].busy, b.report.engines[e].busy) << e;
    EXPECT_EQ(a.report.engines[e].token_stall, b.report.engines[e].token_stall) << e;
    EXPECT_EQ(a.report.engines[e].memory_stall, b.report.engines[e].memory_stall) << e;
    EXPECT_EQ(a.report.engines[e].idle, b.report.engines[e].idle) << e;
  }
  ASSERT_EQ(a.report.slices.size(), b.report.slices.size());
  for (std::size_t i = 0; i < a.report.slices.size(); ++i) {
    EXPECT_EQ(a.report.slices[i].start, b.report.slices[i].start) << i;
    EXPECT_EQ(a.report.slices[i].end, b.report.slices[i].end) << i;
  }
}

// A load/compute/store program with DMAs on both engines, tokens and a gemm.
const char* kMixed =
    "dma.ld sram=act sram_addr=0 dram_addr=0 size0=64 size1=1 size2=1 push_next\n"
    "dma.st sram=act sram_addr=100 dram_addr=0x10000 size0=64 size1=1 size2=1\n"
    "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=64 n1=1 n2=1 act_s0=1 acc_s0=1 pop_prev push_next\n"
    "dma.st sram=acc sram_addr=0 dram_addr=0x20000 size0=64 size1=1 size2=1 pop_prev\n"
    "dma.ld sram=weight sram_addr=0 dram_addr=0x30000 size0=8 size1=1 size2=1\n"
    "finish\n";

} // namespace

TEST(SimSystem, ADeviceAloneOnASharedDramGivesItsSingleDeviceRun) {
  for (const std::string& text : {std::string(kMixed), loads(4, 250)}) {
    const Result alone = run(refIsa(), text);
    ASSERT_TRUE(alone.ok()) << alone.report.fault->message();
    for (Arbitration a : {Arbitration::RoundRobin, Arbitration::FixedPriority}) {
      std::vector<DeviceOutcome> r = ember::sim::runTogether({device(text, 0)}, {a});
      ASSERT_EQ(r.size(), 1u);
      expectSameReport(r[0].result, alone);
      EXPECT_EQ(r[0].arbitration_stall, 0u);
    }
  }
}

TEST(SimSystem, DevicesOnPrivateDramsDoNotDisturbEachOther) {
  const Result a = run(refIsa(), kMixed), b = run(refIsa(), loads(4, 250));
  std::vector<DeviceOutcome> r =
      ember::sim::runTogether({device(kMixed, 0), device(loads(4, 250), 1)},
                              {Arbitration::RoundRobin, Arbitration::RoundRobin});
  expectSameReport(r[0].result, a);
  expectSameReport(r[1].result, b);
  EXPECT_EQ(r[0].arbitration_stall + r[1].arbitration_stall, 0u);
}

// Two devices, each K = 4 loads of 250 act rows. D1: X = max(ceil(250 * 16 / 32),
// ceil(250 / 2), ceil(250 * 16 * 100 / (64 * 64))) = max(125, 125, 98) = 125 cycles.
// Alone: a load starts when the previous retires (E1), so each takes H + X + 100 = 230 and
// the run is L + 4 * 230 = 921 cycles. Together both start their first load in cycle
// L = 1 (a tie: A first under both policies, M3); B waits X for A's transfer. Since X = 125
// exceeds H + 100 = 105, the channel then never idles: A's k-th transfer begins at
// L + H + 2kX, B's at L + H + (2k + 1)X; each later load waits X - H - 100 = 20 cycles.
// A ends at L + H + 7X + 100 = 981, B at L + H + 8X + 100 = 1106; A's arbitration stall is
// 3 * 20 = 60, B's 125 + 60 = 185 (the totals over 921 exactly).
TEST(SimSystem, TwoDevicesOnOneDramShareTheChannelInClosedForm) {
  ASSERT_EQ(run(refIsa(), loads(4, 250)).report.cycles, 921u);
  for (Arbitration a : {Arbitration::RoundRobin, Arbitration::FixedPriority}) {
    std::vector<DeviceOutcome> r =
        ember::sim::runTogether({device(loads(4, 250), 0), device(loads(4, 250), 0)}, {a});
    ASSERT_TRUE(r[0].result.ok() && r[1].result.ok());
    EXPECT_EQ(r[0].result.report.cycles, 981u);
    EXPECT_EQ(r[1].result.report.cycles, 1106u);
    EXPECT_EQ(r[0].arbitration_stall, 60u);
    EXPECT_EQ(r[1].arbitration_stall, 185u);
    EXPECT_EQ(r[0].result.report.engines[0].memory_stall, 60u);
    EXPECT_EQ(r[1].result.report.engines[0].memory_stall, 185u);
    EXPECT_EQ(r[0].channel_bookings, 4u);
    EXPECT_EQ(r[1].channel_bookings, 4u);
    for (const DeviceOutcome& d : r) {
      const auto& e = d.result.report.engines;
      for (int k = 0; k < 3; ++k)
        EXPECT_EQ(e[k].busy + e[k].token_stall + e[k].memory_stall + e[k].idle,
                  d.result.report.cycles);
    }
  }
}

// M3 decides a tie only. A: a load of 16 rows (X1 = max(8, 8, 7) = 8) then one of 200
// rows (X = max(100, 100, 79) = 100). B: a load of no DRAM rows, only padding (size0 =
// size1 = 0, three pad rows on each side: 6 * 6 * 6 = 216 act rows written, r = 2 a
// cycle: e = s + H + 108, the channel not booked, D2), then the same 200-row load.
// Cycle 1: only A books (its 16 rows), so round-robin now starts from B. A's second load
// starts when its first retires, 1 + H + 8 + 100 = 114; B's when its padding load
// retires, 1 + H + 108 = 114: a tie, both ready at 119.
//   round-robin: B first, 119 .. 219, ends 319; A waits 100 (219 .. 319), ends 419.
//   fixed-priority (A listed first): A ends 319, B waits 100 and ends 419.
TEST(SimSystem, RoundRobinAndFixedPriorityDecideATie) {
  const std::string a = "dma.ld sram=act sram_addr=0 dram_addr=0 size0=16 size1=1 size2=1\n"
                        "dma.ld sram=act sram_addr=0 dram_addr=0x1000 size0=200 size1=1 "
                        "size2=1\nfinish\n";
  const std::string b = "dma.ld sram=act sram_addr=0 dram_addr=0 size0=0 size1=0 size2=6 "
                        "pad_left=3 pad_right=3 pad_top=3 pad_bottom=3\n"
                        "dma.ld sram=act sram_addr=0 dram_addr=0x1000 size0=200 size1=1 "
                        "size2=1\nfinish\n";
  ASSERT_EQ(run(refIsa(), a).report.cycles, 319u); // alone: 114 + H + 100 + 100
  ASSERT_EQ(run(refIsa(), b).report.cycles, 319u);
  std::vector<DeviceOutcome> rr =
      ember::sim::runTogether({device(a, 0), device(b, 0)}, {Arbitration::RoundRobin});
  EXPECT_EQ(rr[0].result.report.cycles, 419u);
  EXPECT_EQ(rr[1].result.report.cycles, 319u);
  EXPECT_EQ(rr[0].arbitration_stall, 100u);
  EXPECT_EQ(rr[1].arbitration_stall, 0u);
  EXPECT_EQ(rr[1].channel_bookings, 1u); // the padding load books nothing
  std::vector<DeviceOutcome> fp =
      ember::sim::runTogether({device(a, 0), device(b, 0)}, {Arbitration::FixedPriority});
  EXPECT_EQ(fp[0].result.report.cycles, 319u);
  EXPECT_EQ(fp[1].result.report.cycles, 419u);
  EXPECT_EQ(fp[0].arbitration_stall, 0u);
  EXPECT_EQ(fp[1].arbitration_stall, 100u);
}

TEST(SimSystem, BadArgumentsAreRefused) {
  EXPECT_THROW(ember::sim::runTogether({device(kMixed, 1)}, {Arbitration::RoundRobin}),
               std::invalid_argument);
  EXPECT_EQ(ember::sim::arbitrationFromName("fixed-priority"), Arbitration::FixedPriority);
  try {
    ember::sim::arbitrationFromName("lottery");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'lottery'"), std::string::npos);
  }
}
