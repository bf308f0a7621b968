// Cycle counts against the timing contract of docs/simulator.md section 2 (rules F1, D1-D2,
// G1-G2, V1, S1), with every parameter read from the description (nothing assumed about
// ember-v1's numbers). The formulas are written out here again, from the document, so
// that a mistake in libember_isa's timing model cannot hide in its own expectations.
#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace simtest;
using ember::platform::Result;
using u64 = std::uint64_t;

namespace {

u64 ceilDiv(u64 a, u64 b) {
  return (a + b - 1) / b;
}

/// Rule F1: the cycle the first instruction can be taken.
u64 fetchLat(const ember::isa::IsaDescription& isa) {
  return isa.hw().fetch.latency_cycles;
}

/// Rule D1: cycles a DMA of `lines` DRAM lines of `lineRows` rows of SRAM `mem` (and
/// `sramRows` SRAM rows, padding included; 0: as many as DRAM rows) holds the DRAM
/// channel: each line in whole beats and requests of r rows, the SRAM side r = min(beat /
/// row bytes, banks, widest row / row bytes) rows a cycle (at least one), Little's law.
u64 dmaTransfer(const ember::isa::IsaDescription& isa, const char* mem, u64 lineRows,
                u64 sramRows = 0, u64 lines = 1) {
  const auto& hw = isa.hw();
  const auto& m = isa.memory(mem);
  const u64 rb = m.row_bytes, rows = lineRows * lines;
  u64 widest = 0;
  for (const auto& o : isa.memories())
    widest = std::max<u64>(widest, o.row_bytes);
  const u64 perCycle =
      std::max<u64>(1, std::min<u64>({hw.dram.bytes_per_cycle / rb, u64(m.banks), widest / rb}));
  return std::max(
      {lines *
           std::max(ceilDiv(lineRows * rb, hw.dram.bytes_per_cycle), ceilDiv(lineRows, perCycle)),
       ceilDiv(sramRows ? sramRows : rows, perCycle),
       ceilDiv(rows * rb * hw.dma.latency_cycles, hw.dma.max_outstanding * hw.dma.burst_bytes)});
}

/// Rules D1-D2: such a DMA on an idle channel.
u64 dmaFormula(const ember::isa::IsaDescription& isa, const char* insn, const char* mem,
               u64 lineRows, u64 sramRows = 0, u64 lines = 1) {
  return tim(isa, insn, "issue") + tim(isa, insn, "setup") +
         dmaTransfer(isa, mem, lineRows, sramRows, lines) + isa.hw().dma.latency_cycles;
}

/// docs/simulator.md: GEMM of n rows per block and `blocks` weight blocks.
u64 gemmFormula(const ember::isa::IsaDescription& isa, u64 n, u64 blocks) {
  const auto& mac = isa.hw().mac;
  const u64 R = n * tim(isa, "gemm", "cycles_per_row"), WL = mac.weight_load_cycles;
  const u64 S = mac.weight_buffers >= 2 ? std::max(R, WL) : WL + R;
  return tim(isa, "gemm", "issue") + WL + (blocks - 1) * S + R + mac.fill_cycles + mac.drain_cycles;
}

u64 finishCycles(const ember::isa::IsaDescription& isa) {
  return tim(isa, "finish", "issue");
}

TEST(SimTiming, DmaOfNRowsIsTheFormula) {
  const auto& isa = refIsa();
  const u64 L = fetchLat(isa);
  // The DMA is instruction 0 (taken in cycle L); finish, on the compute engine, ends first.
  for (u64 rows : {1u, 4u, 64u, 255u}) {
    std::string prog = "dma.ld sram=act sram_addr=0 dram_addr=0 size0=" + std::to_string(rows) +
                       " size1=1 size2=1\nfinish\n";
    Result r = run(isa, prog);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.report.cycles, L + dmaFormula(isa, "dma.ld", "act", rows)) << rows << " rows";
  }
  // A 3-D load moves size0*size1*size2 DRAM rows and writes the padded box to the SRAM.
  Result r = run(isa, "dma.ld sram=act sram_addr=0 dram_addr=0 size0=10 size1=7 size2=3 stride1=10 "
                      "stride2=70 pad_left=1 pad_right=1 pad_top=1\nfinish\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.report.cycles, L + dmaFormula(isa, "dma.ld", "act", 10, 12 * 8 * 3, 7 * 3));
  // Weight blocks: 256-byte rows, several beats each.
  r = run(isa, "dma.ld sram=weight sram_addr=0 dram_addr=0 size0=9 size1=1 size2=1\nfinish\n");
  EXPECT_EQ(r.report.cycles, L + dmaFormula(isa, "dma.ld", "weight", 9));
  r = run(isa, "dma.st sram=acc sram_addr=0 dram_addr=0 size0=100 size1=1 size2=1\nfinish\n");
  EXPECT_EQ(r.report.cycles, L + dmaFormula(isa, "dma.st", "acc", 100));
  // ember-v1 by hand: 16-byte act rows, 32-byte beats, 16 banks: two rows a cycle, a
  // line's odd row pays a whole beat (1 + 4 issue and setup, 100 latency).
  ASSERT_EQ(isa.memory("act").row_bytes, 16u);
  ASSERT_EQ(isa.hw().dram.bytes_per_cycle, 32u);
  r = run(isa, "dma.ld sram=act sram_addr=0 dram_addr=0 size0=64 size1=1 size2=1\nfinish\n");
  EXPECT_EQ(r.report.cycles, L + 1 + 4 + 32 + 100);
  r = run(isa, "dma.ld sram=act sram_addr=0 dram_addr=0 size0=3 size1=8 size2=1 stride1=5\n"
               "finish\n");
  EXPECT_EQ(r.report.cycles, L + 1 + 4 + 8 * 2 + 100); // 8 lines of 48 bytes: 2 beats each
  r = run(isa, "dma.st sram=act sram_addr=0 dram_addr=0 size0=7 size1=1 size2=1\nfinish\n");
  EXPECT_EQ(r.report.cycles, L + 1 + 4 + 4 + 100);
  // Only padding (size0 = 0): no DRAM row, no channel, no latency; the 6 SRAM rows at
  // two a cycle.
  r = run(isa, "dma.ld sram=act sram_addr=0 dram_addr=0 size0=0 size1=2 size2=1 pad_left=3\n"
               "finish\n");
  EXPECT_EQ(r.report.cycles, L + tim(isa, "dma.ld", "issue") + tim(isa, "dma.ld", "setup") + 3);
}

TEST(SimTiming, DmaRowsACycleAreCappedByBanksAndTheWidestRow) {
  // 64-byte beats, act rows of 16 bytes in 2 banks: r = 2, so a line of 3 rows takes two
  // requests though its 48 bytes fit one beat.
  auto j = refIsa().json();
  j["hardware"]["dram"]["bytes_per_cycle"] = 64;
  j["hardware"]["memories"]["act"]["banks"] = 2;
  auto few = ember::isa::IsaDescription::loadString(j.dump(), "two-banks.json");
  const u64 head = tim(few, "dma.ld", "issue") + tim(few, "dma.ld", "setup");
  Result r = run(few, "dma.ld sram=act sram_addr=0 dram_addr=0 size0=3 size1=4 size2=1 "
                      "stride1=3\nfinish\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.report.cycles, fetchLat(few) + head + 4 * 2 + 100); // not 4 beats, not 12 / 2
  // 1024-byte beats, act rows of 16 bytes in 32 banks, Little's law out of the way: r =
  // min(64, 32, 256 / 16) = 16, the widest row (weight, 256 bytes) being the DMA's data
  // path: 64 rows in one beat but 4 requests.
  j = refIsa().json();
  j["hardware"]["dram"]["bytes_per_cycle"] = 1024;
  j["hardware"]["dma"]["max_outstanding"] = 1024;
  j["hardware"]["memories"]["act"]["banks"] = 32;
  auto wide = ember::isa::IsaDescription::loadString(j.dump(), "wide-beats.json");
  r = run(wide, "dma.ld sram=act sram_addr=0 dram_addr=0 size0=64 size1=1 size2=1\nfinish\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.report.cycles, fetchLat(wide) + head + 4 + 100);
  EXPECT_EQ(dmaTransfer(wide, "act", 64), 4u);
}

TEST(SimTiming, OutstandingRequestsLimitBandwidthByLittlesLaw) {
  // Same description with only 2 outstanding bursts: B = 2 * 64 / 100 bytes per cycle.
  auto j = refIsa().json();
  j["hardware"]["dma"]["max_outstanding"] = 2;
  auto isa = ember::isa::IsaDescription::loadString(j.dump(), "few-outstanding.json");
  Result r = run(isa, "dma.ld sram=act sram_addr=0 dram_addr=0 size0=64 size1=1 size2=1\nfinish\n");
  ASSERT_TRUE(r.ok());
  const u64 bytes = 64 * 16;
  EXPECT_EQ(r.report.cycles, fetchLat(isa) + tim(isa, "dma.ld", "issue") +
                                 tim(isa, "dma.ld", "setup") + 100 + ceilDiv(bytes * 100, 2 * 64));
}

TEST(SimTiming, LoadAndStoreShareTheDramChannel) {
  const auto& isa = refIsa();
  // The load (instruction 0) starts in cycle L, the store (instruction 1) in L + 1; the
  // load holds the channel for its transfer, the store's transfer begins when it is free.
  Result r = run(
      isa, "dma.ld sram=act sram_addr=0 dram_addr=0 size0=128 size1=1 size2=1\n"
           "dma.st sram=act sram_addr=200 dram_addr=0x10000 size0=64 size1=1 size2=1\nfinish\n");
  ASSERT_TRUE(r.ok());
  const u64 L = fetchLat(isa);
  const u64 head = tim(isa, "dma.st", "issue") + tim(isa, "dma.st", "setup");
  const u64 loadFree =
      L + tim(isa, "dma.ld", "issue") + tim(isa, "dma.ld", "setup") + dmaTransfer(isa, "act", 128);
  const u64 storeBegin = std::max(L + 1 + head, loadFree);
  EXPECT_EQ(r.report.cycles,
            storeBegin + dmaTransfer(isa, "act", 64) + isa.hw().dma.latency_cycles);
  EXPECT_EQ(r.report.engines[2].memory_stall, storeBegin - (L + 1 + head));
}

TEST(SimTiming, GemmWithWeightSwitchesIsTheFormula) {
  const auto& isa = refIsa();
  for (auto [n, blocks] :
       std::vector<std::pair<u64, u64>>{{1, 1}, {8, 5}, {16, 3}, {100, 4}, {250, 9}}) {
    std::string prog = "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=" + std::to_string(n) +
                       " n1=1 n2=" + std::to_string(blocks) +
                       " act_s0=1 acc_s0=1 wgt_s2=1\nfinish\n";
    Result r = run(isa, prog);
    ASSERT_TRUE(r.ok()) << r.report.fault->message();
    EXPECT_EQ(r.report.cycles, fetchLat(isa) + gemmFormula(isa, n, blocks) + finishCycles(isa))
        << "n=" << n << " blocks=" << blocks;
    EXPECT_EQ(r.report.macs, n * blocks * 256);
  }
  // Single-buffered weights: every block waits for its load.
  auto j = refIsa().json();
  j["hardware"]["mac_array"]["weight_buffers"] = 1;
  auto one = ember::isa::IsaDescription::loadString(j.dump(), "one-buffer.json");
  Result r = run(
      one,
      "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=40 n1=1 n2=3 act_s0=1 acc_s0=1 wgt_s2=1\nfinish\n");
  EXPECT_EQ(r.report.cycles, fetchLat(one) + gemmFormula(one, 40, 3) + finishCycles(one));
  // reset: one row per cycle, no weights.
  r = run(isa, "gemm reset acc_addr=0 n0=30 n1=2 n2=1 acc_s0=1 acc_s1=30\nfinish\n");
  EXPECT_EQ(r.report.cycles, fetchLat(isa) + tim(isa, "gemm", "issue") +
                                 60 * tim(isa, "gemm", "cycles_per_row") + finishCycles(isa));
}

// Rule E6: a background gemm holds the compute engine for its issue cycles; the vector
// unit runs the next instruction while the array works, and the next gemm (and finish)
// waits for the array.
TEST(SimTiming, BackgroundGemmOverlapsTheVectorUnit) {
  const auto& isa = refIsa();
  const std::string g = " n0=100 n1=1 n2=4 act_s0=1 acc_s0=1 wgt_s2=1\n";
  const std::string v = "vmov dst_mem=act src_mem=act dst_addr=1000 src_addr=2000 n0=50 n1=1 "
                        "dst_s0=1 src_s0=1\n";
  const std::string second = "gemm act_addr=400 acc_addr=400 wgt_addr=8" + g;
  const u64 G = gemmFormula(isa, 100, 4);
  const u64 V = tim(isa, "vmov", "issue") + 50 * tim(isa, "vmov", "cycles_per_row") +
                tim(isa, "vmov", "pipeline_latency");
  Result bg = run(isa, "gemm.bg act_addr=0 acc_addr=0 wgt_addr=0" + g + v + second + "finish\n");
  ASSERT_TRUE(bg.ok()) << bg.report.fault->message();
  // The vmov starts once gemm.bg has issued; the second gemm starts when the array is free.
  ASSERT_EQ(bg.report.slices.size(), 4u);
  const u64 s0 = fetchLat(isa);
  EXPECT_EQ(bg.report.slices[0].start, s0);
  EXPECT_EQ(bg.report.slices[0].end, s0 + tim(isa, "gemm.bg", "issue"));
  EXPECT_EQ(bg.report.slices[1].start, s0 + tim(isa, "gemm.bg", "issue"));
  EXPECT_EQ(bg.report.slices[2].start, s0 + G);
  EXPECT_EQ(bg.report.cycles, s0 + 2 * G + finishCycles(isa));
  // The same program with a plain gemm pays the vmov in between.
  Result fg = run(isa, "gemm act_addr=0 acc_addr=0 wgt_addr=0" + g + v + second + "finish\n");
  ASSERT_TRUE(fg.ok()) << fg.report.fault->message();
  EXPECT_EQ(fg.report.cycles, s0 + 2 * G + V + finishCycles(isa));
  EXPECT_EQ(bg.report.macs, fg.report.macs);
  // A sync on the compute engine joins the array; so does the end of the program.
  Result join = run(isa, "gemm.bg act_addr=0 acc_addr=0 wgt_addr=0" + g + "sync engine=compute\n");
  ASSERT_TRUE(join.ok()) << join.report.fault->message();
  EXPECT_EQ(join.report.slices[1].start, s0 + G);
  EXPECT_EQ(join.report.cycles, s0 + G + tim(isa, "sync", "issue"));
  Result tail = run(isa, "gemm.bg act_addr=0 acc_addr=0 wgt_addr=0" + g);
  ASSERT_TRUE(tail.ok()) << tail.report.fault->message();
  EXPECT_EQ(tail.report.cycles, s0 + G);
}

// Rule E6's two faults: a background gemm that pushes a token, and an instruction that
// touches the running background gemm's rows.
TEST(SimTiming, BackgroundGemmRacesAreFaults) {
  const auto& isa = refIsa();
  const std::string g = "gemm.bg act_addr=0 acc_addr=0 wgt_addr=0 n0=100 n1=1 n2=4 act_s0=1 "
                        "acc_s0=1 wgt_s2=1";
  Result push = run(isa, g + " push_next\nfinish\n");
  ASSERT_FALSE(push.ok());
  EXPECT_EQ(push.report.fault->kind, ember::platform::FaultKind::BadOperand);
  EXPECT_EQ(push.report.fault->instruction, 0);
  for (const std::string& racer :
       {std::string("vmov dst_mem=act src_mem=act dst_addr=50 src_addr=2000 n0=4 n1=1 dst_s0=1 "
                    "src_s0=1"),
        std::string("vmov dst_mem=act src_mem=acc dst_addr=2000 src_addr=99 n0=4 n1=1 dst_s0=1 "
                    "src_s0=1"),
        std::string("requant dst_addr=2000 src_addr=10 param_addr=0 zero_point=0 lo=-128 hi=127 "
                    "n0=1 n1=1 dst_s0=1 src_s0=1")}) {
    Result r = run(isa, g + "\n" + racer + "\nfinish\n");
    ASSERT_FALSE(r.ok()) << racer;
    EXPECT_EQ(r.report.fault->kind, ember::platform::FaultKind::BadOperand) << racer;
    EXPECT_EQ(r.report.fault->instruction, 1) << racer;
    EXPECT_NE(r.report.fault->message().find("background gemm"), std::string::npos)
        << r.report.fault->message();
  }
  // A background reset reads no act or weight row: writing act row 0 beside it is no race.
  Result reset = run(isa, "gemm.bg reset acc_addr=0 n0=30 n1=1 n2=1 acc_s0=1\nvmov dst_mem=act "
                          "src_mem=act dst_addr=0 src_addr=2000 n0=4 n1=1 dst_s0=1 src_s0=1\n"
                          "finish\n");
  EXPECT_TRUE(reset.ok()) << reset.report.fault->message();
  // Reading act rows the gemm reads is no race; after a join nothing is.
  Result ok = run(isa, g + "\nvmov dst_mem=act src_mem=act dst_addr=2000 src_addr=50 n0=4 n1=1 "
                           "dst_s0=1 src_s0=1\nsync engine=compute\nvmov dst_mem=act "
                           "src_mem=acc dst_addr=50 src_addr=10 n0=4 n1=1 dst_s0=1 src_s0=1\n"
                           "finish\n");
  EXPECT_TRUE(ok.ok()) << ok.report.fault->message();
  // The depthwise instruction runs in the background too; the message names its class.
  Result dw = run(isa, "dwconv act_addr=0 acc_addr=0 wgt_addr=0 n0=20 n1=2 act_s0=1 act_s1=20 "
                       "acc_s0=1 acc_s1=20 kh=3 kw=3 tap_s0=1 tap_s1=20\nvmov dst_mem=act "
                       "src_mem=acc dst_addr=2000 src_addr=5 n0=1 n1=1 dst_s0=1 src_s0=1\n"
                       "finish\n");
  ASSERT_FALSE(dw.ok());
  EXPECT_EQ(dw.report.fault->instruction, 1);
  EXPECT_NE(dw.report.fault->message().find("while the array's background depthwise uses rows"),
            std::string::npos)
      << dw.report.fault->message();
}

// Rule DW1: one output of a depthwise instruction takes as many cycles as the act bank
// holding the most of its taps needs (read_ports rows a cycle); counted here again.
TEST(SimTiming, DepthwisePaysTheBusiestActBank) {
  const auto& isa = refIsa();
  const auto& act = isa.memory("act");
  const auto& mac = isa.hw().mac;
  for (u64 tapS1 : {u64(1), u64(2), u64(3), u64(10), u64(16), u64(57)}) {
    std::vector<u64> perBank(act.banks, 0);
    for (u64 y = 0; y < 3; ++y)
      for (u64 x = 0; x < 3; ++x)
        ++perBank[(y * tapS1 + x) % act.banks];
    const u64 C = ceilDiv(*std::max_element(perBank.begin(), perBank.end()), act.read_ports);
    const u64 n = 40;
    Result r = run(isa, "dwconv act_addr=0 acc_addr=0 wgt_addr=0 n0=20 n1=2 act_s0=1 act_s1=20 "
                        "acc_s0=1 acc_s1=20 kh=3 kw=3 tap_s0=1 tap_s1=" +
                            std::to_string(tapS1) + "\nfinish\n");
    ASSERT_TRUE(r.ok()) << r.report.fault->message();
    const u64 T = tim(isa, "dwconv", "issue") + mac.weight_load_cycles +
                  n * C * tim(isa, "dwconv", "cycles_per_row") + mac.fill_cycles + mac.drain_cycles;
    // dwconv runs in the background: finish waits for the array (rule E6).
    EXPECT_EQ(r.report.cycles, fetchLat(isa) + T + finishCycles(isa)) << "tap_s1=" << tapS1;
  }
}

TEST(SimTiming, VectorOpAndPortConflict) {
  const auto& isa = refIsa();
  const u64 n = 37;
  auto vec = [&](const char* insn) {
    return tim(isa, insn, "issue") + n * tim(isa, insn, "cycles_per_row") +
           tim(isa, insn, "pipeline_latency");
  };
  Result r =
      run(isa, "vmul dst_mem=acc src_mem=acc dst_addr=100 src0_addr=0 src1_addr=1 n0=37 n1=1 "
               "dst_s0=1 src0_s0=1 src1_s0=1\nfinish\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.report.cycles, fetchLat(isa) + vec("vmul") + finishCycles(isa));
  r = run(isa, "requant dst_addr=0 src_addr=0 param_addr=0 n0=37 n1=1 dst_s0=1 src_s0=1\nfinish\n");
  // param rows are zero: S = 0 is rejected, so give S via a one-row broadcast instead.
  EXPECT_FALSE(r.ok());
  // Port conflict: both sources of vadd in one act bank (row mod banks equal) every step.
  const auto& act = isa.memory("act");
  const u64 banks = act.banks;
  std::string same =
      "vadd dst_mem=acc src_mem=act dst_addr=0 src0_addr=0 src1_addr=" + std::to_string(banks) +
      " n0=37 n1=1 dst_s0=1 src0_s0=1 src1_s0=1\nfinish\n";
  std::string other = "vadd dst_mem=acc src_mem=act dst_addr=0 src0_addr=0 src1_addr=1 n0=37 n1=1 "
                      "dst_s0=1 src0_s0=1 src1_s0=1\nfinish\n";
  Result rs = run(isa, same), ro = run(isa, other);
  ASSERT_TRUE(rs.ok() && ro.ok());
  const u64 conflict = ceilDiv(2, act.read_ports) - 1;
  EXPECT_EQ(ro.report.cycles, fetchLat(isa) + vec("vadd") + finishCycles(isa));
  EXPECT_EQ(rs.report.cycles, fetchLat(isa) + vec("vadd") + n * conflict + finishCycles(isa));
  EXPECT_EQ(rs.report.engines[1].memory_stall, n * conflict);
  EXPECT_GT(conflict, 0u); // the reference has one read port per bank
  // qadd reads two act rows a step: the same rule, with its own timing keys. Its
  // parameters arrive first (a token); the compute engine's busy time is then the qadd's
  // duration and finish's issue, its memory stalls the conflicts.
  std::vector<std::uint8_t> params(0x1000, 0);
  putI32(params, 0x408, 4); // S
  auto qadd = [&](u64 src1) {
    return run(isa,
               "dma.ld sram=param sram_addr=0 dram_addr=0x400 size0=2 size1=1 size2=1 push_next\n"
               "qadd dst_addr=200 src0_addr=0 src1_addr=" +
                   std::to_string(src1) +
                   " param_addr=0 n0=37 n1=1 dst_s0=1 src0_s0=1 src1_s0=1 pop_prev\nfinish\n",
               params);
  };
  Result qs = qadd(banks), qo = qadd(1);
  ASSERT_TRUE(qs.ok() && qo.ok());
  EXPECT_EQ(qo.report.engines[1].busy, vec("qadd") + finishCycles(isa));
  EXPECT_EQ(qo.report.engines[1].memory_stall, 0u);
  EXPECT_EQ(qs.report.engines[1].busy, vec("qadd") + finishCycles(isa));
  EXPECT_EQ(qs.report.engines[1].memory_stall, n * conflict);
  EXPECT_EQ(qs.report.cycles, qo.report.cycles + n * conflict);
}

/// A double-buffered pipeline of `tiles` tiles: load 128 act rows, gemm + requant,
/// store 128 act rows. `serial` moves the tokens so that nothing overlaps;
/// `dropPushAt` removes the requant's push_next of that tile.
std::string pipeline(int tiles, bool serial, int dropPushAt = -1) {
  std::string p = "dma.ld sram=param sram_addr=0 dram_addr=0x100000 size0=2 size1=1 size2=1\n"
                  "dma.ld sram=weight sram_addr=0 dram_addr=0x100100 size0=1 size1=1 size2=1\n";
  for (int i = 0; i < tiles; ++i) {
    const int in = (i % 2) * 128, out = 1024 + (i % 2) * 128;
    const std::string I = std::to_string(in), O = std::to_string(out);
    p += "dma.ld sram=act sram_addr=" + I + " dram_addr=" + std::to_string(i * 2048) +
         " size0=128 size1=1 size2=1 push_next" +
         ((i >= 2 || (serial && i >= 1)) ? " pop_next" : "") + "\n";
    p += "gemm reset acc_addr=0 n0=128 n1=1 n2=1 acc_s0=1 pop_prev" +
         std::string(i >= 2 && !serial ? " pop_next" : "") + "\n";
    p += "gemm act_addr=" + I + " acc_addr=0 wgt_addr=0 n0=128 n1=1 n2=1 act_s0=1 acc_s0=1" +
         (serial ? "" : " push_prev") + "\n";
    p += "requant dst_addr=" + O +
         " src_addr=0 param_addr=0 zero_point=0 lo=-128 hi=127 n0=128 n1=1 "
         "dst_s0=1 src_s0=1" +
         std::string(i == dropPushAt ? "" : " push_next") + "\n";
    if (serial)
      p += "sync engine=compute pop_next push_prev\n";
    p += "dma.st sram=act sram_addr=" + O + " dram_addr=" + std::to_string(0x80000 + i * 2048) +
         " size0=128 size1=1 size2=1 pop_prev push_prev\n";
  }
  p += serial ? "finish\n" : "finish pop_next\n";
  return p;
}

std::vector<std::uint8_t> pipelineImage() {
  std::vector<std::uint8_t> img(0x100000 + 512, 1);
  for (int l = 0; l < 16; ++l) {
    putI32(img, std::size_t(0x100000 + l * 4), 1 << 30);
    putI32(img, std::size_t(0x100040 + l * 4), 31);
  }
  return img;
}

TEST(SimTiming, DoubleBufferingOverlapsLoadComputeStore) {
  const auto& isa = refIsa();
  const int tiles = 8;
  Result par = run(isa, pipeline(tiles, false), pipelineImage());
  Result ser = run(isa, pipeline(tiles, true), pipelineImage());
  ASSERT_TRUE(par.ok()) << par.report.fault->message();
  ASSERT_TRUE(ser.ok()) << ser.report.fault->message();
  u64 load = 0, compute = 0, store = 0, sum = 0;
  for (const auto& s : par.report.slices)
    (s.engine == 0 ? load : s.engine == 1 ? compute : store) += s.end - s.start;
  for (const auto& s : ser.report.slices)
    sum += s.end - s.start;
  const u64 longest = std::max({load, compute, store});
  // Overlapped: about the busiest engine plus the fill (parameter, weight and first tile
  // loads before compute can start) and the drain (last store), with a little slack for
  // the hand-over cycles between engines.
  const u64 tileLoad = dmaFormula(isa, "dma.ld", "act", 128),
            tileStore = dmaFormula(isa, "dma.st", "act", 128);
  EXPECT_GE(par.report.cycles, longest);
  const u64 fill = fetchLat(isa) + dmaFormula(isa, "dma.ld", "param", 2) +
                   dmaFormula(isa, "dma.ld", "weight", 1) + tileLoad;
  EXPECT_LE(par.report.cycles, fill + longest + tileStore + 16);
  // Serialised: the sum of all instruction times.
  EXPECT_GE(ser.report.cycles, sum);
  EXPECT_LT(double(par.report.cycles), 0.75 * double(ser.report.cycles));
  // Same data either way.
  EXPECT_EQ(par.dram.read(0x80000, tiles * 2048), ser.dram.read(0x80000, tiles * 2048));
}

TEST(SimTiming, RemovingATokenDeadlocksAndIsReported) {
  const auto& isa = refIsa();
  // Serialised pipeline without the requant's push_next of tile 0: the store waits for
  // compute, compute (sync) waits for the store, load waits for compute.
  Result r = run(isa, pipeline(6, true, /*dropPushAt=*/0), pipelineImage());
  ASSERT_FALSE(r.ok());
  const auto& f = *r.report.fault;
  EXPECT_EQ(f.kind, ember::platform::FaultKind::Deadlock);
  EXPECT_NE(f.reason.find("store waits at instruction 7 (dma.st) for a token from compute"),
            std::string::npos)
      << f.reason;
  EXPECT_NE(f.reason.find("compute waits at instruction 6 (sync) for a token from store"),
            std::string::npos)
      << f.reason;
  EXPECT_NE(f.reason.find("load waits at instruction 8 (dma.ld) for a token from compute"),
            std::string::npos)
      << f.reason;
  EXPECT_EQ(f.engine, "compute");
  EXPECT_EQ(f.instruction, 6);
  EXPECT_NE(f.message().find("fault deadlock at cycle"), std::string::npos);
}

TEST(SimTiming, Gemm32x32VariantTakesThePredictedRatio) {
  // C = K = 64 channels, 256 pixels: 16x16 needs 4 output blocks x 4 input blocks,
  // 32x32 needs 2 x 2. One gemm instruction per output block, n2 = input blocks.
  auto program = [](int outBlocks, int inBlocks) {
    std::string p;
    for (int k = 0; k < outBlocks; ++k)
      p += "gemm act_addr=0 acc_addr=" + std::to_string(k * 256) +
           " wgt_addr=" + std::to_string(k * inBlocks) +
           " n0=128 n1=2 n2=" + std::to_string(inBlocks) +
           " act_s0=1 act_s1=128 act_s2=256 acc_s0=1 acc_s1=128 wgt_s2=1\n";
    return p + "finish\n";
  };
  const auto& small = refIsa();
  const auto& large = largeIsa();
  Result rs = run(small, program(4, 4)), rl = run(large, program(2, 2));
  ASSERT_TRUE(rs.ok()) << rs.report.fault->message();
  ASSERT_TRUE(rl.ok()) << rl.report.fault->message();
  const u64 ws = fetchLat(small) + 4 * gemmFormula(small, 256, 4) + finishCycles(small);
  const u64 wl = fetchLat(large) + 2 * gemmFormula(large, 256, 2) + finishCycles(large);
  EXPECT_EQ(rs.report.cycles, ws);
  EXPECT_EQ(rl.report.cycles, wl);
  EXPECT_DOUBLE_EQ(double(rs.report.cycles) / double(rl.report.cycles), double(ws) / double(wl));
  EXPECT_EQ(rs.report.macs, rl.report.macs);
}

} // namespace
