// Co-simulation of the Verilated RTL against the SystemC model (docs/rtl/npu.md section 5.3):
// outputs (the whole DRAM window), total cycles, every instruction's dispatch, take,
// start and end cycle, the per-engine counters, the per-layer rows and the fault record must be
// equal. One executable per description (its Verilated model is EMBER_RTL_MODEL).
#include "ember/isa/assembler.h"
#include "ember/isa/roles.h"
#include "ember/isa/semantic.h"
#include "ember/isa/timing.h"
#include "ember/platform/Layers.h"
#include "ember/progen/Footprint.h"
#include "ember/progen/ProgramGenerator.h"
#include "ember/rtl/NpuHarness.h"
#include "ember/sim/Simulator.h"

#include EMBER_RTL_MODEL_HEADER

#include <gtest/gtest.h>

#include "CosimJob.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>

namespace {

using ember::platform::Job;
using u64 = std::uint64_t;

using ember::rtltest::isa;
using ember::rtltest::jobOf;

/// The cycle until which an instruction's data path works: its end, or for a background
/// array instruction (docs/simulator.md rule E6) the array's end, start + T.
u64 workEnd(const ember::isa::Instruction& in, const ember::platform::Slice& s) {
  return in.desc().background ? s.start + ember::isa::timing::idle(isa(), in).cycles : s.end;
}

/// True when two instructions overlap in time and touch a common row (progen::footprint(),
/// shared with the generator) with at least one write: a data race, whose outcome the ISA
/// leaves undefined (tokens order every access, docs/isa/programmers-model.md section 1).
/// Instructions of different engines overlap when their [start, work end] intervals meet (the
/// model's slices; a background gemm's array until start + T); one engine runs one instruction at a
/// time, but a background gemm's array works on in [start, start + T) while the compute engine
/// starts the next ones (rule E6).
bool racy(const Job& job, const std::vector<ember::platform::Slice>& slices) {
  const unsigned W = isa().instructionBytes();
  std::vector<std::vector<ember::progen::RowRange>> fp;
  std::vector<u64> until;
  for (const auto& s : slices) {
    const ember::isa::Instruction in =
        ember::isa::Instruction::decode(isa(), job.text.data() + s.index * W, "job", "insn");
    fp.push_back(ember::progen::footprint(isa(), in));
    until.push_back(workEnd(in, s));
  }
  for (std::size_t i = 0; i < slices.size(); ++i)
    for (std::size_t j = i + 1; j < slices.size(); ++j) {
      const auto &a = slices[i], &b = slices[j];
      const bool overlap = a.engine != b.engine ? !(until[i] < b.start || until[j] < a.start)
                                                : (a.start <= b.start && b.start < until[i]) ||
                                                      (b.start <= a.start && a.start < until[j]);
      if (!overlap)
        continue;
      for (const auto& x : fp[i])
        for (const auto& y : fp[j])
          if (x.mem == y.mem && (x.write || y.write) && x.lo <= y.hi && y.lo <= x.hi)
            return true;
    }
  return false;
}

/// A debug map for a job that has none: layers of 4 instructions every 5 (instructions
/// 4, 9, ... belong to none), so every program also compares per-layer rows.
std::vector<ember::isa::DebugRange> everyFifthOutside(const Job& job) {
  std::vector<ember::isa::DebugRange> d;
  const std::size_t n = job.text.size() / isa().instructionBytes();
  for (std::uint32_t first = 0; first < n; first += 5)
    d.push_back({first, 4, "l" + std::to_string(first / 5)});
  return d;
}

/// The first difference of two reports' layer rows ("" when equal; energy to 1e-9).
std::string layerDiff(const std::vector<ember::platform::LayerReport>& a,
                      const std::vector<ember::platform::LayerReport>& b) {
  if (a.size() != b.size())
    return "layers: sim " + std::to_string(a.size()) + ", rtl " + std::to_string(b.size()) + "; ";
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto &x = a[i], &y = b[i];
    bool same = x.name == y.name && x.start == y.start && x.end == y.end && x.cycles == y.cycles &&
                x.macs == y.macs && x.dram_bytes == y.dram_bytes && x.bound == y.bound &&
                x.bound_cycles == y.bound_cycles &&
                x.roofline_efficiency == y.roofline_efficiency &&
                std::fabs(x.energy_pj - y.energy_pj) <= 1e-9 * std::fabs(x.energy_pj);
    for (std::size_t e = 0; e < 3; ++e)
      same = same && x.engines[e].instructions == y.engines[e].instructions &&
             x.engines[e].busy == y.engines[e].busy &&
             x.engines[e].token_stall == y.engines[e].token_stall &&
             x.engines[e].memory_stall == y.engines[e].memory_stall;
    if (!same)
      return "layer " + x.name + ": sim " + std::to_string(x.start) + "-" + std::to_string(x.end) +
             " " + x.bound + " " + ember::platform::layerStall(x) + ", rtl " +
             std::to_string(y.start) + "-" + std::to_string(y.end) + " " + y.bound + " " +
             ember::platform::layerStall(y) + "; ";
  }
  return "";
}

} // namespace

// Shared with the other directed programs of this executable (CosimJob.h).
namespace ember::rtltest {

std::string cosim(Job job, u64 budget, bool* raced) {
  if (job.debug.empty())
    job.debug = everyFifthOutside(job);
  ember::sim::Simulator sim(isa());
  ember::platform::Options opts;
  opts.cycle_budget = budget;
  const u64 b = budget ? budget : ember::platform::defaultCycleBudget(isa(), job);
  ember::platform::Result s = sim.run(job, opts);
  // EMBER_RTL_RAND_SEED: the seed of a model with random initial state (rtl.xrand.*).
  const char* seed = std::getenv("EMBER_RTL_RAND_SEED");
  ember::rtl::RtlResult r = ember::rtl::runVerilated<EMBER_RTL_MODEL>(
      isa(), job, opts, b, seed ? std::strtoull(seed, nullptr, 10) : 0);
  std::ostringstream d;
  if (r.overrun)
    d << "an RTL datapath overran its instruction's duration; ";
  if (r.bus_conflict)
    d << "both DMA engines requested the DRAM port in one cycle; ";
  const auto& sf = s.report.fault;
  const auto& rf = r.report.fault;
  if (sf.has_value() != rf.has_value()) {
    d << "sim " << (sf ? sf->message() : "ok") << ", rtl " << (rf ? rf->message() : "ok");
    return d.str();
  }
  if (sf) {
    if (sf->kind != rf->kind || sf->cycle != rf->cycle || sf->engine != rf->engine ||
        sf->instruction != rf->instruction)
      d << "fault: sim " << sf->message() << " | rtl " << rf->message();
    else if (sf->signal_cycle != rf->signal_cycle) // when FAULT shows on the platforms
      d << "fault signalled in cycle " << sf->signal_cycle << " (sim), " << rf->signal_cycle
        << " (rtl): " << sf->message();
    return d.str();
  }
  // Per instruction, in stream order: the first diverging one.
  auto byIndex = [](std::vector<ember::platform::Slice> v) {
    std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
    return v;
  };
  const auto ss = byIndex(s.report.slices);
  const auto rs = byIndex(r.report.slices);
  for (std::size_t i = 0; i < std::min(ss.size(), rs.size()); ++i) {
    const auto &a = ss[i], &b2 = rs[i];
    if (a.index != b2.index || a.dispatch != b2.dispatch || a.take != b2.take ||
        a.start != b2.start || a.end != b2.end || a.memory_stall != b2.memory_stall ||
        a.push_stall != b2.push_stall) {
      d << "instr " << a.index << " " << a.name << ": sim " << a.dispatch << "/" << a.take << "/"
        << a.start << "-" << a.end << " (mstall " << a.memory_stall << "), rtl " << b2.index << " "
        << b2.dispatch << "/" << b2.take << "/" << b2.start << "-" << b2.end << " (mstall "
        << b2.memory_stall << ")";
      return d.str();
    }
  }
  if (ss.size() != rs.size())
    d << "slices: sim " << ss.size() << ", rtl " << rs.size() << "; ";
  if (s.report.cycles != r.report.cycles)
    d << "cycles: sim " << s.report.cycles << ", rtl " << r.report.cycles << "; ";
  if (s.report.fetch_stall != r.report.fetch_stall)
    d << "fetch_stall: sim " << s.report.fetch_stall << ", rtl " << r.report.fetch_stall << "; ";
  if (s.report.macs != r.report.macs)
    d << "macs: sim " << s.report.macs << ", rtl " << r.report.macs << "; ";
  for (int e = 0; e < 3; ++e) {
    const auto &a = s.report.engines[e], &b2 = r.report.engines[e];
    if (a.instructions != b2.instructions || a.busy != b2.busy || a.token_stall != b2.token_stall ||
        a.memory_stall != b2.memory_stall || a.idle != b2.idle)
      d << a.name << " counters: sim " << a.instructions << "/" << a.busy << "/" << a.token_stall
        << "/" << a.memory_stall << "/" << a.idle << ", rtl " << b2.instructions << "/" << b2.busy
        << "/" << b2.token_stall << "/" << b2.memory_stall << "/" << b2.idle << "; ";
  }
  const auto& dm = s.report.memories.back();
  if (dm.bytes_read != r.report.memories.back().bytes_read ||
      dm.bytes_written != r.report.memories.back().bytes_written)
    d << "DRAM bytes differ; ";
  d << layerDiff(s.report.layers, r.report.layers);
  const bool race = racy(job, s.report.slices);
  if (raced)
    *raced = race;
  if (!race && !(s.dram == r.dram)) {
    const u64 end = std::max(s.dram.extent(), r.dram.extent());
    for (u64 a = 0; a < end; ++a)
      if (s.dram[a] != r.dram[a]) {
        d << "DRAM contents differ, first at byte " << a << " (sim " << int(s.dram[a]) << ", rtl "
          << int(r.dram[a]) << "); ";
        break;
      }
  }
  return d.str();
}

std::string cosimAsm(const std::string& text, std::vector<std::uint8_t> image) {
  ember::isa::Binary bin = ember::isa::assemble(text, isa(), "cosim.s");
  Job job = jobOf(bin);
  if (!image.empty())
    job.dram.write(0, image);
  return cosim(job);
}

std::vector<std::uint8_t> randomBytes(std::size_t n, unsigned seed) {
  std::vector<std::uint8_t> v(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<std::uint8_t>(x);
  }
  return v;
}

} // namespace ember::rtltest

namespace {

using ember::rtltest::cosim;
using ember::rtltest::cosimAsm;
using ember::rtltest::randomBytes;

// ---- Directed programs: one per rule of the contract (docs/simulator.md section 2) ----

TEST(Cosim, F1_Fetch) {
  EXPECT_EQ(cosimAsm("finish\n"), "");
  EXPECT_EQ(cosimAsm("sync engine=load\nsync engine=compute\nsync engine=store\nfinish\n"), "");
}

TEST(Cosim, F2_FullQueue) {
  std::string p;
  for (int i = 0; i < 40; ++i)
    p += "dma.ld sram=act sram_addr=0 dram_addr=0 size0=0 size1=1 size2=1\n";
  EXPECT_EQ(cosimAsm(p + "sync engine=compute\nfinish\n"), "");
}

TEST(Cosim, E2_PushVisibleToPopSameCycle) {
  EXPECT_EQ(cosimAsm("sync engine=load push_next\nsync engine=compute pop_prev\nfinish\n"), "");
}

TEST(Cosim, E4_PopMakesRoomNextCycle) {
  std::string p = "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=40 n1=1 n2=1 act_s0=1 acc_s0=1\n";
  for (int i = 0; i < 12; ++i)
    p += "sync engine=load push_next\n";
  for (int i = 0; i < 12; ++i)
    p += "sync engine=compute pop_prev\n";
  EXPECT_EQ(cosimAsm(p + "finish\n"), "");
}

TEST(Cosim, D2_ChannelBookedLoadFirst) {
  // Loads and stores competing for the channel (the store reads rows an earlier load
  // wrote, ordered by tokens, so a random initial SRAM state cannot show).
  EXPECT_EQ(cosimAsm("dma.ld sram=act sram_addr=100 dram_addr=12288 size0=8 size1=1 size2=1 "
                     "push_next\n"
                     "sync engine=compute pop_prev push_next\n"
                     "dma.st pop_prev sram=act sram_addr=100 dram_addr=20480 size0=1 size1=1 "
                     "size2=1\n"
                     "dma.ld sram=act sram_addr=0 dram_addr=0 size0=8 size1=2 size2=1 "
                     "stride1=8\n"
                     "dma.st sram=act sram_addr=100 dram_addr=4096 size0=8 size1=1 size2=1\n"
                     "dma.ld sram=acc sram_addr=0 dram_addr=8192 size0=4 size1=1 size2=1\n"
                     "finish\n",
                     randomBytes(16384, 1)),
            "");
}

// ---- Rule E6: the array in the background ----

/// G1-G2 by hand (docs/simulator.md section 2.2) for a gemm instruction `name` of n0 x n1
/// x n2 steps without reset.
u64 gemmCycles(const char* name, u64 n0, u64 n1, u64 n2) {
  const auto& d = *isa().findInstruction(name);
  const auto& mac = isa().hw().mac;
  const u64 issue = u64(d.timingOf("issue")), R = n0 * n1 * u64(d.timingOf("cycles_per_row"));
  const u64 WL = mac.weight_load_cycles;
  const u64 block = mac.weight_buffers == 2 ? std::max(R, WL) : WL + R;
  return issue + WL + (n2 - 1) * block + R + mac.fill_cycles + mac.drain_cycles;
}
/// V1 by hand for n row steps (`conflicts` bank-conflict cycles).
u64 vectorCycles(const char* name, u64 n, u64 conflicts = 0) {
  const auto& d = *isa().findInstruction(name);
  return u64(d.timingOf("issue")) + n * u64(d.timingOf("cycles_per_row")) + conflicts +
         u64(d.timingOf("pipeline_latency"));
}
u64 issueOf(const char* name) {
  return u64(isa().findInstruction(name)->timingOf("issue"));
}

ember::platform::Result simRun(const std::string& text,
                               const std::vector<std::uint8_t>& image = {}) {
  Job job = jobOf(ember::isa::assemble(text, isa(), "e6.s"));
  if (!image.empty())
    job.dram.write(0, image);
  return ember::sim::Simulator(isa()).run(job);
}

TEST(Cosim, E6_BackgroundGemmOverlapsVector) {
  // Two gemm.bg, each followed by requantize, vector and normalize instructions on rows
  // it does not use (acc rows apart; act rows it reads are only read), then a compute
  // sync (the join) and requantizes of both gemms' results, all stored: data and timing
  // equal on both models, and the cycles of the contract by hand.
  if (!isa().findInstruction("gemm.bg"))
    GTEST_SKIP() << "no background gemm in this description";
  const u64 ab = isa().memory("act").row_bytes, wb = isa().memory("weight").row_bytes;
  const u64 cb = isa().memory("acc").row_bytes, pb = isa().memory("param").row_bytes;
  const unsigned L = isa().hw().vector.lanes;
  // DRAM: act rows 0..511 (0..127 random, the rest 0), two weight blocks, acc rows
  // 0..255 (random: softmax reads rows 120.. as its parameter block), the requantize
  // parameters (M in 1..2^16, S = 40), then the outputs.
  const u64 wgtAt = 512 * ab, accAt = wgtAt + 2 * wb, parAt = accAt + 256 * cb;
  const u64 outAt = parAt + 2 * pb, out2At = outAt + 194 * ab;
  std::vector<std::uint8_t> img = randomBytes(128 * ab, 61);
  img.resize(wgtAt, 0);
  for (std::uint8_t b : randomBytes(2 * wb + 256 * cb, 62))
    img.push_back(b);
  img.resize(parAt + 2 * pb, 0);
  for (unsigned l = 0; l < L; ++l) {
    const std::int32_t M = std::int32_t(1 + (l * 40503u) % 65536u), S = 40;
    std::memcpy(img.data() + parAt + 4 * l, &M, 4);
    std::memcpy(img.data() + parAt + pb + 4 * l, &S, 4);
  }
  auto n = [](u64 v) { return std::to_string(v); };
  const std::string p =
      "dma.ld sram=act sram_addr=0 dram_addr=0 size0=128 size1=4 size2=1 stride1=128\n"
      "dma.ld sram=weight sram_addr=0 dram_addr=" +
      n(wgtAt) +
      " size0=2 size1=1 size2=1\n"
      "dma.ld sram=acc sram_addr=0 dram_addr=" +
      n(accAt) +
      " size0=128 size1=2 size2=1 "
      "stride1=128\n"
      "dma.ld sram=param sram_addr=0 dram_addr=" +
      n(parAt) +
      " size0=2 size1=1 size2=1 "
      "push_next\n"
      "sync engine=compute pop_prev\n" // 4
      // 5: acc rows 0..99 over two weight blocks, act rows 0..107
      "gemm.bg act_addr=0 acc_addr=0 wgt_addr=0 n0=100 n1=1 n2=2 act_s0=1 act_s2=8 acc_s0=1 "
      "wgt_s2=1\n"
      // 6, 7, 8: acc 200..215 -> act 300..315; act 0..15 (read by the gemm too) -> act
      // 320..335; softmax of act rows 0 and 1 (a line of L codes each) -> act 492, 493,
      // its parameter block acc rows 120..
      "requant dst_addr=300 src_addr=200 param_addr=0 zero_point=3 lo=-100 hi=100 n0=16 n1=1 "
      "dst_s0=1 src_s0=1\n"
      "vshr dst_mem=act src_mem=act dst_addr=320 src_addr=0 n0=16 n1=1 dst_s0=1 src_s0=1 "
      "imm0=1\n"
      "softmax block_addr=120 len=" +
      n(L) +
      " n1=2 dst_addr=492 dst_sb=1 dst_s1=1 "
      "src_addr=0 src_sb=1 src_s1=1\n"
      // 9: waits for the array; acc rows 160..191, act 16..47, weight block 1
      "gemm.bg act_addr=16 acc_addr=160 wgt_addr=1 n0=32 n1=1 n2=1 act_s0=1 acc_s0=1\n"
      // 10, 11: acc 216..231 -> act 340..355; acc 200..215 + 216..231 -> acc 100..115
      "requant dst_addr=340 src_addr=216 param_addr=0 zero_point=-5 lo=-128 hi=127 n0=16 "
      "n1=1 dst_s0=1 src_s0=1\n"
      "vadd dst_mem=acc src_mem=acc dst_addr=100 src0_addr=200 src1_addr=216 n0=16 n1=1 "
      "dst_s0=1 src0_s0=1 src1_s0=1\n"
      "sync engine=compute\n" // 12: the join
      // 13, 14: the gemms' results, acc 0..99 -> act 360..459, 160..191 -> act 460..491
      "requant dst_addr=360 src_addr=0 param_addr=0 zero_point=0 lo=-128 hi=127 n0=100 n1=1 "
      "dst_s0=1 src_s0=1\n"
      "requant dst_addr=460 src_addr=160 param_addr=0 zero_point=1 lo=-128 hi=127 n0=32 "
      "n1=1 dst_s0=1 src_s0=1\n"
      "sync engine=compute push_next\n"
      "dma.st pop_prev sram=act sram_addr=300 dram_addr=" +
      n(outAt) +
      " size0=194 size1=1 "
      "size2=1\n"
      "dma.st sram=acc sram_addr=0 dram_addr=" +
      n(out2At) +
      " size0=200 size1=1 size2=1\n"
      "finish\n";
  Job job = jobOf(ember::isa::assemble(p, isa(), "e6.s"));
  job.dram.write(0, img);
  bool raced = true;
  EXPECT_EQ(cosim(job, 0, &raced), "");
  EXPECT_FALSE(raced) << "the program is race-free: its outputs must be compared";

  // The contract by hand, from the end r4 of the sync that waits for the loads.
  const ember::platform::Result s = simRun(p, img);
  ASSERT_TRUE(s.ok()) << s.report.fault->message();
  std::vector<ember::platform::Slice> sl = s.report.slices;
  std::sort(sl.begin(), sl.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
  ASSERT_EQ(sl.size(), 19u);
  auto at = [&](std::size_t i, u64 take, u64 start, u64 end) {
    EXPECT_EQ(sl[i].take, take) << "instr " << i << " " << sl[i].name;
    EXPECT_EQ(sl[i].start, start) << "instr " << i << " " << sl[i].name;
    EXPECT_EQ(sl[i].end, end) << "instr " << i << " " << sl[i].name;
  };
  const u64 r4 = sl[4].end, bgIssue = issueOf("gemm.bg");
  // 5: taken when the sync retires, started at once (no gemm before: a = 0), holds the
  // compute engine for its issue cycles; the array works until a5 = s5 + T.
  const u64 s5 = r4, a5 = s5 + gemmCycles("gemm.bg", 100, 1, 2);
  at(5, r4, s5, s5 + bgIssue);
  // 6, 7, 8: the vector and normalize units run while the array works (E1: each taken
  // as the previous one retires). softmax (N1): n1 lines of R = 1 row, len = L codes.
  const auto& sm = *isa().findInstruction("softmax");
  const u64 smCycles =
      u64(sm.timingOf("issue")) +
      2 * (u64(sm.timingOf("cycles_per_line")) + u64(sm.timingOf("cycles_per_row")) +
           L * u64(sm.timingOf("cycles_per_element"))) +
      u64(sm.timingOf("pipeline_latency"));
  const u64 s6 = s5 + bgIssue, s7 = s6 + vectorCycles("requant", 16);
  const u64 s8 = s7 + vectorCycles("vshr", 16), e8 = s8 + smCycles;
  at(6, s6, s6, s7);
  at(7, s7, s7, s8);
  at(8, s8, s8, e8);
  EXPECT_LT(s6, a5) << "the vector instruction overlaps the array";
  ASSERT_LT(e8, a5) << "the vector work must end before the array for the checks below";
  // 9: taken at e8, starts when the array is free: s9 = s5 + T (the wait is token stall).
  const u64 s9 = a5, a9 = s9 + gemmCycles("gemm.bg", 32, 1, 1);
  at(9, e8, s9, s9 + bgIssue);
  // 10, 11: vadd's two acc source rows share a bank when 16 rows apart is a multiple of
  // the banks: ceil(2 / read_ports) - 1 cycles a step (V1).
  const auto& acc = isa().memory("acc");
  const u64 conflicts =
      16 % acc.banks == 0 ? 16 * ((2 + acc.read_ports - 1) / acc.read_ports - 1) : 0;
  const u64 s10 = s9 + bgIssue, s11 = s10 + vectorCycles("requant", 16);
  const u64 e11 = s11 + vectorCycles("vadd", 16, conflicts);
  at(10, s10, s10, s11);
  at(11, s11, s11, e11);
  ASSERT_LT(e11, a9);
  // 12: the compute sync joins the array: it starts at a9 = s9 + T; then 13 at its end.
  const u64 e12 = a9 + issueOf("sync");
  at(12, e11, a9, e12);
  at(13, e12, e12, e12 + vectorCycles("requant", 100));
  // MACs at retire, rows x cols a step (G1).
  const auto& mac = isa().hw().mac;
  EXPECT_EQ(s.report.macs, u64(mac.rows) * mac.cols * (100 * 2 + 32));

  // The same program with plain gemms: the same outputs, later.
  std::string plain = p;
  for (std::size_t k; (k = plain.find("gemm.bg ")) != std::string::npos;)
    plain.replace(k, 8, "gemm ");
  EXPECT_EQ(cosimAsm(plain, img), "");
  const ember::platform::Result sp = simRun(plain, img);
  ASSERT_TRUE(sp.ok());
  EXPECT_TRUE(sp.dram == s.dram) << "gemm.bg computes what gemm computes";
  EXPECT_GT(sp.report.cycles, s.report.cycles);
  EXPECT_EQ(sp.report.macs, s.report.macs);
}

// ---- Rule D1: a line's rows packed into DRAM beats, r SRAM rows a cycle ----

/// D1 by hand (docs/simulator.md section 2.2) for a DMA of `lines` DRAM lines of `s0`
/// rows and `S` SRAM rows of memory `mem`, started on an idle channel: its duration
/// head + X + latency (D > 0), else head + ceil(S / r).
u64 dmaCycles(const char* insn, const char* mem, u64 s0, u64 lines, u64 S) {
  const auto& d = *isa().findInstruction(insn);
  const auto& m = isa().memory(mem);
  const auto& hw = isa().hw();
  const u64 bpc = hw.dram.bytes_per_cycle, rb = m.row_bytes;
  u64 widest = rb; // the DMA's data path: one widest SRAM row
  for (const auto& o : isa().memories())
    widest = std::max<u64>(widest, o.row_bytes);
  const u64 r = std::max<u64>(1, std::min<u64>({bpc / rb, m.banks, widest / rb}));
  auto cdiv = [](u64 a, u64 b) { return (a + b - 1) / b; };
  const u64 head = u64(d.timingOf("issue")) + u64(d.timingOf("setup"));
  const u64 D = s0 * lines;
  if (D == 0)
    return head + cdiv(S, r);
  // A line's rows: whole beats, and at least ceil(s0 / r) requests.
  const u64 perLine = std::max(cdiv(s0 * rb, bpc), cdiv(s0, r));
  const u64 X =
      std::max({lines * perLine, cdiv(S, r),
                cdiv(D * rb * hw.dma.latency_cycles, hw.dma.max_outstanding * hw.dma.burst_bytes)});
  return head + X + hw.dma.latency_cycles;
}

/// ember-v1's parameters, for the literal figures of docs/simulator.md (act rows of 16
/// bytes in 16 banks, weight 256, acc 64, 32 bytes a cycle, 100 cycles, 64 x 64 bytes
/// in flight, dma issue 1 and setup 4).
bool isEmberV1() {
  const auto& hw = isa().hw();
  const auto& ld = *isa().findInstruction("dma.ld");
  const auto& st = *isa().findInstruction("dma.st");
  return hw.dram.bytes_per_cycle == 32 && isa().memory("act").row_bytes == 16 &&
         isa().memory("act").banks == 16 && isa().memory("weight").row_bytes == 256 &&
         isa().memory("acc").row_bytes == 64 && hw.dma.latency_cycles == 100 &&
         hw.dma.max_outstanding * hw.dma.burst_bytes == 4096 && ld.timingOf("issue") == 1 &&
         ld.timingOf("setup") == 4 && st.timingOf("issue") == 1 && st.timingOf("setup") == 4;
}

/// One DMA instance of a run: slice `slice` lasts dmaCycles(insn, mem, s0, lines, S), and
/// on ember-v1 exactly `v1` cycles (docs/simulator.md's literal figure).
struct DmaSlice {
  std::size_t slice;
  const char *insn, *mem;
  u64 s0, lines, S, v1;
};
void expectDmaSlices(const std::vector<ember::platform::Slice>& sl,
                     std::initializer_list<DmaSlice> want, bool literal) {
  for (const DmaSlice& w : want) {
    const u64 t = sl.at(w.slice).end - sl.at(w.slice).start;
    EXPECT_EQ(t, dmaCycles(w.insn, w.mem, w.s0, w.lines, w.S)) << "slice " << w.slice;
    if (literal) {
      EXPECT_EQ(t, w.v1) << "slice " << w.slice << " on ember-v1";
    }
  }
}

/// The model's slices of `text` by stream index (it must run without a fault).
std::vector<ember::platform::Slice> slicesOf(const std::string& text,
                                             const std::vector<std::uint8_t>& image) {
  const ember::platform::Result s = simRun(text, image);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.report.fault->message());
  std::vector<ember::platform::Slice> sl = s.report.slices;
  std::sort(sl.begin(), sl.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
  return sl;
}

/// The RTL's DRAM window after `text` (the model's is the same when cosim() passes).
ember::platform::DramImage rtlDram(const std::string& text,
                                   const std::vector<std::uint8_t>& image) {
  Job job = jobOf(ember::isa::assemble(text, isa(), "d1.s"));
  job.dram.write(0, image);
  ember::sim::Simulator sim(isa());
  ember::rtl::RtlResult r = ember::rtl::runVerilated<EMBER_RTL_MODEL>(
      isa(), job, ember::platform::Options{}, ember::platform::defaultCycleBudget(isa(), job));
  EXPECT_FALSE(r.overrun);
  return r.dram;
}

std::string num(u64 v) {
  return std::to_string(v);
}

/// A dma.st of act rows [0, rows) to DRAM byte `at`, as size1 lines of size0 <= 255 rows
/// (the field's range in the shipped descriptions).
std::string storeActRows(u64 rows, u64 at, const char* flags = "") {
  u64 lines = (rows + 254) / 255;
  while (rows % lines != 0)
    ++lines;
  return std::string("dma.st ") + flags + " sram=act sram_addr=0 dram_addr=" + num(at) +
         " size0=" + num(rows / lines) + " size1=" + num(lines) +
         " size2=1 stride1=" + num(rows / lines) + "\n";
}

/// The end of a program of loads: a one-row load into act row `row` that hands the
/// token on, a compute sync, the store of act rows [0, rows) to DRAM byte `at`, finish.
std::string storeAfterLoads(u64 row, u64 rows, u64 at) {
  return "dma.ld sram=act sram_addr=" + num(row) +
         " dram_addr=0 size0=1 size1=1 size2=1 push_next\n"
         "sync engine=compute pop_prev push_next\n" +
         storeActRows(rows, at, "pop_prev") + "finish\n";
}

TEST(Cosim, D1_ActLoadOfOneLine) {
  // Loads of N act rows in one line, one after the other (each on an idle channel),
  // then stored back: ember-v1 moves 2 act rows a cycle, 1 + 4 + ceil(N / 2) + 100.
  const u64 ab = isa().memory("act").row_bytes;
  const std::vector<u64> ns = {1, 2, 3, 15, 16, 17, 64, 253};
  std::string p;
  u64 row = 0;
  for (u64 n : ns) {
    p += "dma.ld sram=act sram_addr=" + num(row) + " dram_addr=" + num(row * ab) +
         " size0=" + num(n) + " size1=1 size2=1\n";
    row += n;
  }
  p += storeAfterLoads(0, row, row * ab);
  const auto img = randomBytes(row * ab, 71);
  EXPECT_EQ(cosimAsm(p, img), "");
  const auto sl = slicesOf(p, img);
  ASSERT_EQ(sl.size(), ns.size() + 4);
  for (std::size_t i = 0; i < ns.size(); ++i) {
    const u64 n = ns[i], t = sl[i].end - sl[i].start;
    EXPECT_EQ(sl[i].memory_stall, 0u) << "load " << i;
    EXPECT_EQ(t, dmaCycles("dma.ld", "act", n, 1, n)) << "N = " << n;
    if (isEmberV1()) {
      EXPECT_EQ(t, 1 + 4 + (n + 1) / 2 + 100) << "N = " << n;
    }
  }
  const auto dram = rtlDram(p, img);
  for (u64 a = 0; a < row * ab; ++a)
    ASSERT_EQ(dram[row * ab + a], img[a]) << "byte " << a << " stored back";
}

TEST(Cosim, D1_OddLinesPayAPartialBeat) {
  // 2-D act loads whose line is not a whole number of beats: each line pays its partial
  // beat (lines * ceil(size0 * rb / bytes_per_cycle)), so 6 lines of 5 rows take 18
  // beats on ember-v1, not ceil(30 / 2) = 15; 8 lines of 1 row take 8.
  const u64 ab = isa().memory("act").row_bytes;
  const std::string p =
      "dma.ld sram=act sram_addr=0 dram_addr=0 size0=5 size1=6 size2=1 stride1=8\n"
      "dma.ld sram=act sram_addr=30 dram_addr=" +
      num(64 * ab) +
      " size0=1 size1=4 size2=2 stride1=3 stride2=16\n"
      "dma.ld sram=act sram_addr=38 dram_addr=" +
      num(128 * ab) +
      " size0=7 size1=3 size2=1 stride1=7 push_next\n"
      "sync engine=compute pop_prev push_next\n"
      "dma.st pop_prev sram=act sram_addr=0 dram_addr=" +
      num(256 * ab) +
      " size0=5 size1=3 size2=2 stride1=5 stride2=16\n"
      "dma.st sram=act sram_addr=0 dram_addr=" +
      num(320 * ab) + " size0=59 size1=1 size2=1\nfinish\n";
  const auto img = randomBytes(256 * ab, 72);
  EXPECT_EQ(cosimAsm(p, img), "");
  const auto sl = slicesOf(p, img);
  ASSERT_EQ(sl.size(), 7u);
  expectDmaSlices(
      sl,
      {{0, "dma.ld", "act", 5, 6, 30, 1 + 4 + 6 * 3 + 100}, // 3 beats a line of 80 bytes
       {1, "dma.ld", "act", 1, 8, 8, 1 + 4 + 8 * 1 + 100},  // a beat a line of 16 bytes
       {2, "dma.ld", "act", 7, 3, 21, 1 + 4 + 3 * 4 + 100}, // 112 bytes: 4 beats a line
       {4, "dma.st", "act", 5, 6, 30, 1 + 4 + 6 * 3 + 100}},
      isEmberV1());
  // The rows landed where the walks say (checked on the RTL's DRAM).
  const auto dram = rtlDram(p, img);
  auto act = [&](u64 row, u64 b) { return dram[320 * ab + row * ab + b]; };
  for (u64 b = 0; b < ab; ++b) {
    for (u64 l = 0; l < 6; ++l)
      for (u64 x = 0; x < 5; ++x)
        ASSERT_EQ(act(l * 5 + x, b), img[(l * 8 + x) * ab + b]) << "load 0 line " << l;
    for (u64 p2 = 0; p2 < 2; ++p2)
      for (u64 l = 0; l < 4; ++l)
        ASSERT_EQ(act(30 + p2 * 4 + l, b), img[(64 + p2 * 16 + l * 3) * ab + b]) << "load 1";
    for (u64 i = 0; i < 21; ++i)
      ASSERT_EQ(act(38 + i, b), img[(128 + i) * ab + b]) << "load 2";
    for (u64 pl = 0; pl < 2; ++pl)
      for (u64 l = 0; l < 3; ++l)
        for (u64 x = 0; x < 5; ++x)
          ASSERT_EQ(dram[256 * ab + (pl * 16 + l * 5 + x) * ab + b],
                    dram[320 * ab + (pl * 15 + l * 5 + x) * ab + b])
              << "the 2-D store";
  }
}

TEST(Cosim, D1_PaddedLoadsEndOnTimeAndWriteThePad) {
  // Padded act loads (all four sides; top and bottom only, so whole data blocks are
  // skipped; right only; padding only, D = 0): each ends at the contract's cycle with
  // every SRAM row written, the pad rows with the pad value, checked by storing the
  // SRAM rows back.
  struct Ld {
    u64 s0, s1, s2, st1, st2, pl, pr, pt, pb;
    int pv;
  };
  const std::vector<Ld> lds = {{5, 3, 2, 5, 15, 1, 2, 1, 2, -7},
                               {4, 3, 2, 4, 12, 0, 0, 2, 1, 5},
                               {3, 2, 1, 3, 0, 0, 1, 0, 0, 100},
                               {0, 4, 1, 0, 0, 3, 0, 0, 0, -128},
                               {2, 1, 3, 2, 2, 3, 3, 3, 3, 1}};
  const u64 ab = isa().memory("act").row_bytes;
  std::string p;
  u64 row = 0, src = 0;
  std::vector<u64> rows, srcs, sizes;
  for (const Ld& l : lds) {
    const u64 S = (l.pl + l.s0 + l.pr) * (l.pt + l.s1 + l.pb) * l.s2;
    rows.push_back(row);
    srcs.push_back(src);
    sizes.push_back(S);
    p += "dma.ld sram=act sram_addr=" + num(row) + " dram_addr=" + num(src * ab) +
         " size0=" + num(l.s0) + " size1=" + num(l.s1) + " size2=" + num(l.s2) +
         " stride1=" + num(l.st1) + " stride2=" + num(l.st2) + " pad_left=" + num(l.pl) +
         " pad_right=" + num(l.pr) + " pad_top=" + num(l.pt) + " pad_bottom=" + num(l.pb) +
         " pad_value=" + std::to_string(l.pv) + "\n";
    row += S;
    src += 64;
  }
  const u64 out = src;
  p += storeAfterLoads(row, row, out * ab);
  const auto img = randomBytes(out * ab, 73);
  EXPECT_EQ(cosimAsm(p, img), "");
  const auto sl = slicesOf(p, img);
  ASSERT_EQ(sl.size(), lds.size() + 4);
  for (std::size_t i = 0; i < lds.size(); ++i) {
    const Ld& l = lds[i];
    EXPECT_EQ(sl[i].end - sl[i].start, dmaCycles("dma.ld", "act", l.s0, l.s1 * l.s2, sizes[i]))
        << "load " << i;
  }
  if (isEmberV1()) {
    // 5 x 3 x 2 in 8 x 6 x 2 rows: X = max(6 lines x 3 beats, ceil(96 / 2), ceil(30 x 16 x
    // 100 / 4096)) = 48.
    EXPECT_EQ(sl[0].end - sl[0].start, 1 + 4 + 48 + 100u);
    // padding only: 12 rows, 2 a cycle, no DRAM: head + 6.
    EXPECT_EQ(sl[3].end - sl[3].start, 1 + 4 + 6u);
  }
  const auto dram = rtlDram(p, img);
  for (std::size_t i = 0; i < lds.size(); ++i) {
    const Ld& l = lds[i];
    const u64 line = l.pl + l.s0 + l.pr, plane = l.pt + l.s1 + l.pb;
    for (u64 pp = 0; pp < l.s2; ++pp)
      for (u64 y = 0; y < plane; ++y)
        for (u64 x = 0; x < line; ++x) {
          const bool data = y >= l.pt && y < l.pt + l.s1 && x >= l.pl && x < l.pl + l.s0;
          const u64 at = (out + rows[i] + (pp * plane + y) * line + x) * ab;
          const u64 from = (srcs[i] + pp * l.st2 + (y - l.pt) * l.st1 + (x - l.pl)) * ab;
          for (u64 b = 0; b < ab; ++b)
            ASSERT_EQ(dram[at + b], data ? img[from + b] : std::uint8_t(l.pv))
                << "load " << i << " plane " << pp << " line " << y << " row " << x;
        }
  }
}

TEST(Cosim, D1_ActStore) {
  // Stores of N act rows in one line read 2 rows a cycle on ember-v1:
  // 1 + 4 + ceil(N / 2) + 100.
  const u64 ab = isa().memory("act").row_bytes;
  const std::vector<u64> ns = {1, 2, 7, 64, 129};
  std::string p = "dma.ld sram=act sram_addr=0 dram_addr=0 size0=128 size1=2 size2=1 "
                  "stride1=128 push_next\n"
                  "sync engine=compute pop_prev push_next\n"
                  "sync engine=store pop_prev\n";
  u64 at = 256;
  for (u64 n : ns) {
    p += "dma.st sram=act sram_addr=" + num(at - 256) + " dram_addr=" + num(at * ab) +
         " size0=" + num(n) + " size1=1 size2=1\n";
    at += n;
  }
  p += "finish\n";
  const auto img = randomBytes(256 * ab, 74);
  EXPECT_EQ(cosimAsm(p, img), "");
  const auto sl = slicesOf(p, img);
  ASSERT_EQ(sl.size(), ns.size() + 4);
  for (std::size_t i = 0; i < ns.size(); ++i) {
    const auto& s = sl[3 + i];
    EXPECT_EQ(s.end - s.start, dmaCycles("dma.st", "act", ns[i], 1, ns[i])) << "N = " << ns[i];
    if (isEmberV1()) {
      EXPECT_EQ(s.end - s.start, 1 + 4 + (ns[i] + 1) / 2 + 100) << "N = " << ns[i];
    }
  }
  const auto dram = rtlDram(p, img);
  at = 256;
  for (u64 n : ns) {
    for (u64 a = 0; a < n * ab; ++a)
      ASSERT_EQ(dram[at * ab + a], img[(at - 256) * ab + a]) << "store of " << n;
    at += n;
  }
}

TEST(Cosim, D1_WideRowsStillPayTheirBeats) {
  // Rows wider than a beat move one a cycle in whole beats: a weight row (256 bytes) is 8
  // beats on ember-v1, an acc row (64 bytes) 2: 1 + 4 + 8N + 100 and 1 + 4 + 2N + 100.
  // (The weight rows' data reaches the array in DataPathsEndToEnd and E6_*.)
  const u64 wb = isa().memory("weight").row_bytes, cb = isa().memory("acc").row_bytes;
  const std::string p = "dma.ld sram=weight sram_addr=0 dram_addr=0 size0=3 size1=1 size2=1\n"
                        "dma.ld sram=weight sram_addr=3 dram_addr=" +
                        num(4 * wb) +
                        " size0=1 size1=2 size2=1 stride1=2\n"
                        "dma.ld sram=acc sram_addr=0 dram_addr=" +
                        num(8 * wb) +
                        " size0=5 size1=2 size2=1 stride1=6 push_next\n"
                        "sync engine=compute pop_prev push_next\n"
                        "dma.st pop_prev sram=acc sram_addr=0 dram_addr=" +
                        num(8 * wb + 12 * cb) + " size0=10 size1=1 size2=1\nfinish\n";
  const auto img = randomBytes(8 * wb + 12 * cb, 75);
  EXPECT_EQ(cosimAsm(p, img), "");
  const auto sl = slicesOf(p, img);
  ASSERT_EQ(sl.size(), 6u);
  expectDmaSlices(sl,
                  {{0, "dma.ld", "weight", 3, 1, 3, 1 + 4 + 8 * 3 + 100},
                   {1, "dma.ld", "weight", 1, 2, 2, 1 + 4 + 8 * 2 + 100},
                   {2, "dma.ld", "acc", 5, 2, 10, 1 + 4 + 2 * 10 + 100},
                   {4, "dma.st", "acc", 10, 1, 10, 1 + 4 + 2 * 10 + 100}},
                  isEmberV1());
  const auto dram = rtlDram(p, img);
  for (u64 l = 0; l < 2; ++l)
    for (u64 a = 0; a < 5 * cb; ++a)
      ASSERT_EQ(dram[8 * wb + 12 * cb + l * 5 * cb + a], img[8 * wb + l * 6 * cb + a]);
}

TEST(Cosim, E6_DoneWaitsForTheArray) {
  // A background gemm as the last instruction, with and without the halt after it: DONE
  // comes when the array has finished, not when the gemm retires.
  if (!isa().findInstruction("gemm.bg"))
    GTEST_SKIP() << "no background gemm in this description";
  const u64 FL = isa().hw().fetch.latency_cycles, T = gemmCycles("gemm.bg", 40, 1, 1);
  const std::string g =
      "gemm.bg act_addr=0 acc_addr=0 wgt_addr=0 n0=40 n1=1 n2=1 act_s0=1 acc_s0=1 reset\n";
  // Reset: no MACs, T = issue + n * cycles_per_row (G2).
  const u64 TR =
      issueOf("gemm.bg") + 40 * u64(isa().findInstruction("gemm.bg")->timingOf("cycles_per_row"));
  for (const bool halt : {true, false})
    for (const bool reset : {false, true}) {
      std::string p = reset ? g : g.substr(0, g.size() - 7) + "\n";
      // Taken and started at FL (written at FL - 1); the halt starts at the array's end.
      const u64 end = FL + (reset ? TR : T);
      p += halt ? "finish\n" : "";
      EXPECT_EQ(cosimAsm(p), "") << p;
      const ember::platform::Result s = simRun(p);
      ASSERT_TRUE(s.ok()) << s.report.fault->message();
      EXPECT_EQ(s.report.cycles, end + (halt ? issueOf("finish") : 0)) << p;
    }
}

// ---- The depthwise class (docs/isa/instructions.md section 2.12, rule DW1) ----

/// DW1 by hand: the cycles of one output, the taps of its busiest act bank in read-port
/// cycles.
u64 dwTapCycles(u64 kh, u64 kw, u64 tapS0, u64 tapS1) {
  const auto& act = isa().memory("act");
  std::vector<u64> perBank(act.banks, 0);
  for (u64 y = 0; y < kh; ++y)
    for (u64 x = 0; x < kw; ++x)
      ++perBank[(y * tapS1 + x * tapS0) % act.banks];
  const u64 most = *std::max_element(perBank.begin(), perBank.end());
  return (most + act.read_ports - 1) / act.read_ports;
}
/// DW1's T of `n` outputs of C cycles each.
u64 dwCycles(u64 n, u64 C) {
  const auto& d = *isa().findInstruction("dwconv");
  const auto& mac = isa().hw().mac;
  return u64(d.timingOf("issue")) + mac.weight_load_cycles +
         n * C * u64(d.timingOf("cycles_per_row")) + mac.fill_cycles + mac.drain_cycles;
}

TEST(Cosim, DW1_DepthwiseBankCycles) {
  // Four dwconv, in the background (rule E6): windows whose tap lines lie 10, 8 and 16
  // act rows apart (on ember-v1's 16 banks C = 1, 2 and 3 cycles an output), one of them
  // with stride 2, and a 1 x 5 line of dilation 2 whose outputs of a line add into one acc
  // row; requantize, vshr and vadd on other rows beside them (the vshr reading act rows
  // the array reads), a compute sync joining the array, the results requantized and
  // everything stored. Race-free: data and timing equal on both models, and on the model
  // the take, start and end cycles of the contract by hand.
  if (!isa().findInstruction("dwconv"))
    GTEST_SKIP() << "no depthwise instruction in this description";
  const auto& mac = isa().hw().mac;
  const u64 ab = isa().memory("act").row_bytes, wb = isa().memory("weight").row_bytes;
  const u64 cb = isa().memory("acc").row_bytes, pb = isa().memory("param").row_bytes;
  const unsigned L = isa().hw().vector.lanes;
  // A 3 x 3 window on an array of at least 9 rows, else 2 x 4.
  const u64 kh = mac.rows >= 9 ? 3 : 2, kw = mac.rows >= 9 ? 3 : 4;
  const u64 kl = std::min<u64>(5, mac.rows);
  struct Dw {
    u64 act, acc, wgt, n0, n1, as0, as1, cs0, cs1, kh, kw, t0, t1;
  };
  const Dw dws[] = {
      {0, 0, 0, 6, 3, 1, 10, 1, 6, kh, kw, 1, 10},    // acc rows 0..17, act 0..47
      {40, 20, 1, 5, 2, 2, 16, 1, 5, kh, kw, 1, 8},   // stride 2: acc 20..29, act 40..82
      {100, 32, 2, 4, 2, 1, 16, 1, 4, kh, kw, 1, 16}, // acc 32..39, act 100..153
      {160, 48, 3, 3, 2, 1, 12, 0, 1, 1, kl, 2, 0},   // acc 48 and 49, act 160..182
  };
  auto n = [](u64 v) { return std::to_string(v); };
  auto dw = [&](const Dw& d) {
    return "dwconv act_addr=" + n(d.act) + " acc_addr=" + n(d.acc) + " wgt_addr=" + n(d.wgt) +
           " n0=" + n(d.n0) + " n1=" + n(d.n1) + " act_s0=" + n(d.as0) + " act_s1=" + n(d.as1) +
           " acc_s0=" + n(d.cs0) + " acc_s1=" + n(d.cs1) + " kh=" + n(d.kh) + " kw=" + n(d.kw) +
           " tap_s0=" + n(d.t0) + " tap_s1=" + n(d.t1) + "\n";
  };
  // DRAM: act rows 0..255, four weight blocks, acc rows 0..127 (all random), the
  // requantize parameters (M in 1..2^16, S = 40), then the outputs.
  const u64 wgtAt = 256 * ab, accAt = wgtAt + 4 * wb, parAt = accAt + 128 * cb;
  const u64 outAt = parAt + 2 * pb, out2At = outAt + 82 * ab;
  std::vector<std::uint8_t> img = randomBytes(parAt, 71);
  img.resize(parAt + 2 * pb, 0);
  for (unsigned l = 0; l < L; ++l) {
    const std::int32_t M = std::int32_t(1 + (l * 40503u) % 65536u), S = 40;
    std::memcpy(img.data() + parAt + 4 * l, &M, 4);
    std::memcpy(img.data() + parAt + pb + 4 * l, &S, 4);
  }
  const std::string p =
      "dma.ld sram=act sram_addr=0 dram_addr=0 size0=128 size1=2 size2=1 stride1=128\n"
      "dma.ld sram=weight sram_addr=0 dram_addr=" +
      n(wgtAt) +
      " size0=4 size1=1 size2=1\n"
      "dma.ld sram=acc sram_addr=0 dram_addr=" +
      n(accAt) +
      " size0=128 size1=1 size2=1\n"
      "dma.ld sram=param sram_addr=0 dram_addr=" +
      n(parAt) +
      " size0=2 size1=1 size2=1 "
      "push_next\n"
      "sync engine=compute pop_prev\n" + // 4
      dw(dws[0]) +                       // 5
      // 6, 7: acc 64..79 -> act 300..315; act 0..15 (the array reads them too) -> 316..331
      "requant dst_addr=300 src_addr=64 param_addr=0 zero_point=3 lo=-100 hi=100 n0=16 n1=1 "
      "dst_s0=1 src_s0=1\n"
      "vshr dst_mem=act src_mem=act dst_addr=316 src_addr=0 n0=16 n1=1 dst_s0=1 src_s0=1 "
      "imm0=1\n" +
      dw(dws[1]) + // 8: waits for the array
      // 9: acc 80..95 + 96..111 -> acc 112..127
      "vadd dst_mem=acc src_mem=acc dst_addr=112 src0_addr=80 src1_addr=96 n0=16 n1=1 "
      "dst_s0=1 src0_s0=1 src1_s0=1\n" +
      dw(dws[2]) + dw(dws[3]) + // 10, 11
      "sync engine=compute\n"   // 12: the join
      // 13: the results, acc 0..49 -> act 332..381
      "requant dst_addr=332 src_addr=0 param_addr=0 zero_point=0 lo=-128 hi=127 n0=50 n1=1 "
      "dst_s0=1 src_s0=1\n"
      "sync engine=compute push_next\n"
      "dma.st pop_prev sram=act sram_addr=300 dram_addr=" +
      n(outAt) +
      " size0=82 size1=1 "
      "size2=1\n"
      "dma.st sram=acc sram_addr=0 dram_addr=" +
      n(out2At) +
      " size0=128 size1=1 size2=1\n"
      "finish\n";
  Job job = jobOf(ember::isa::assemble(p, isa(), "dw1.s"));
  job.dram.write(0, img);
  bool raced = true;
  EXPECT_EQ(cosim(job, 0, &raced), "");
  EXPECT_FALSE(raced) << "the program is race-free: its outputs must be compared";

  // DW1 by hand: C of each window; ember-v1 (16 banks, one read port) has C = 1, 2, 3.
  u64 C[4], T[4], macs = 0;
  for (int i = 0; i < 4; ++i) {
    C[i] = dwTapCycles(dws[i].kh, dws[i].kw, dws[i].t0, dws[i].t1);
    T[i] = dwCycles(dws[i].n0 * dws[i].n1, C[i]);
    macs += dws[i].n0 * dws[i].n1 * dws[i].kh * dws[i].kw * mac.cols;
  }
  if (isa().memory("act").banks == 16 && isa().memory("act").read_ports == 1 && kh == 3) {
    EXPECT_EQ(C[0], 1u);
    EXPECT_EQ(C[1], 2u);
    EXPECT_EQ(C[2], 3u);
  }
  // The contract by hand, from the end r4 of the sync that waits for the loads.
  const ember::platform::Result s = simRun(p, img);
  ASSERT_TRUE(s.ok()) << s.report.fault->message();
  std::vector<ember::platform::Slice> sl = s.report.slices;
  std::sort(sl.begin(), sl.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
  ASSERT_EQ(sl.size(), 18u);
  auto at = [&](std::size_t i, u64 take, u64 start, u64 end) {
    EXPECT_EQ(sl[i].take, take) << "instr " << i << " " << sl[i].name;
    EXPECT_EQ(sl[i].start, start) << "instr " << i << " " << sl[i].name;
    EXPECT_EQ(sl[i].end, end) << "instr " << i << " " << sl[i].name;
  };
  const u64 r4 = sl[4].end, iss = issueOf("dwconv");
  // 5: taken when the sync retires and started at once (the array is idle); it holds the
  // compute engine for its issue cycles, the array until a5 = s5 + T.
  const u64 s5 = r4, a5 = s5 + T[0];
  at(5, r4, s5, s5 + iss);
  // 6, 7: the vector unit beside the array.
  const u64 s6 = s5 + iss, s7 = s6 + vectorCycles("requant", 16);
  const u64 e7 = s7 + vectorCycles("vshr", 16);
  at(6, s6, s6, s7);
  at(7, s7, s7, e7);
  ASSERT_LT(e7, a5) << "the vector work must end before the array for the checks below";
  // 8: taken at e7, started at the array's end (the wait is token stall).
  const u64 a8 = a5 + T[1];
  at(8, e7, a5, a5 + iss);
  // 9: vadd's two acc source rows share a bank when 16 rows apart is a multiple of the
  // banks (V1).
  const auto& acc = isa().memory("acc");
  const u64 conflicts =
      16 % acc.banks == 0 ? 16 * ((2 + acc.read_ports - 1) / acc.read_ports - 1) : 0;
  const u64 s9 = a5 + iss, e9 = s9 + vectorCycles("vadd", 16, conflicts);
  at(9, s9, s9, e9);
  ASSERT_LT(e9, a8);
  // 10, 11: each waits for the one before; 12, the join, for the last; 13 at its end.
  const u64 a10 = a8 + T[2], a11 = a10 + T[3];
  at(10, e9, a8, a8 + iss);
  at(11, a8 + iss, a10, a10 + iss);
  const u64 e12 = a11 + issueOf("sync");
  at(12, a10 + iss, a11, e12);
  at(13, e12, e12, e12 + vectorCycles("requant", 50));
  // MACs: n0 * n1 * kh * kw * cols each.
  EXPECT_EQ(s.report.macs, macs);
}

TEST(Cosim, DW1_Faults) {
  // A window of more taps than the array has rows is a bad operand (7 x 7 = 49: more than
  // any shipped array's rows), checked before the ranges and after the background push
  // check; then acc's last row, act's last row with its taps, the weight row; no loop, no
  // check.
  if (!isa().findInstruction("dwconv"))
    GTEST_SKIP() << "no depthwise instruction in this description";
  const u64 actRows = isa().memory("act").rows(), accRows = isa().memory("acc").rows();
  const u64 wgtRows = isa().memory("weight").rows();
  auto n = [](u64 v) { return std::to_string(v); };
  auto fault = [&](const std::string& text) {
    EXPECT_EQ(cosimAsm(text), "") << text;
    const ember::platform::Result s = simRun(text);
    return s.report.fault ? std::optional<ember::platform::FaultKind>(s.report.fault->kind)
                          : std::nullopt;
  };
  using ember::platform::FaultKind;
  const std::string big = "dwconv act_addr=0 acc_addr=" + n(accRows - 1) +
                          " wgt_addr=0 n0=2 n1=1 acc_s0=1 kh=7 kw=7 tap_s0=1 tap_s1=7\nfinish\n";
  EXPECT_EQ(fault(big), FaultKind::BadOperand);
  EXPECT_EQ(fault("dwconv act_addr=0 acc_addr=0 wgt_addr=0 n0=0 n1=1 kh=7 kw=7\nfinish\n"),
            std::nullopt);
  // acc: outputs at accRows - 2 and - 1, then one beyond.
  for (u64 a : {accRows - 2, accRows - 3})
    EXPECT_EQ(fault("dwconv act_addr=0 acc_addr=" + n(a) +
                    " wgt_addr=0 n0=3 n1=1 acc_s0=1 kh=1 kw=1\nfinish\n"),
              a + 2 >= accRows ? std::optional(FaultKind::SramOutOfRange) : std::nullopt);
  // act: a 2 x 2 window, lines 3 rows apart: its last tap at a + 1 + 3.
  for (u64 a : {actRows - 4, actRows - 5})
    EXPECT_EQ(fault("dwconv act_addr=" + n(a) +
                    " acc_addr=0 wgt_addr=0 n0=1 n1=1 kh=2 kw=2 tap_s0=1 tap_s1=3\nfinish\n"),
              a + 4 >= actRows ? std::optional(FaultKind::SramOutOfRange) : std::nullopt);
  // weight: the block's row, where the field can name a row beyond.
  const auto* wf = isa().findInstruction("dwconv")->field("wgt_addr");
  if (std::int64_t(wgtRows) <= wf->maxValue()) {
    EXPECT_EQ(fault("dwconv act_addr=0 acc_addr=0 wgt_addr=" + n(wgtRows) +
                    " n0=1 n1=1 kh=1 kw=2 tap_s0=1\nfinish\n"),
              FaultKind::SramOutOfRange);
  }
  // A background dwconv that pushes a token: a bad operand in the cycle it would start,
  // after waiting for the array (the assembler may refuse the flag: set the bit).
  if (isa().findInstruction("dwconv")->background) {
    const u64 FL = isa().hw().fetch.latency_cycles;
    for (const char* role : {"push_next", "push_prev"}) {
      ember::isa::Binary b = ember::isa::assemble(
          "dwconv act_addr=0 acc_addr=0 wgt_addr=0 n0=8 n1=1 act_s0=1 acc_s0=1 kh=1 kw=2 "
          "tap_s0=1\n"
          "dwconv act_addr=0 acc_addr=64 wgt_addr=0 n0=0 n1=1 kh=7 kw=7\nfinish\n",
          isa(), "dwbg.s");
      b.code[1].set(role, 1);
      EXPECT_EQ(cosim(jobOf(b)), "") << role;
      const ember::platform::Result s = ember::sim::Simulator(isa()).run(jobOf(b));
      ASSERT_TRUE(s.report.fault.has_value()) << role;
      EXPECT_EQ(s.report.fault->kind, FaultKind::BadOperand) << role;
      EXPECT_EQ(s.report.fault->cycle, FL + dwCycles(8, dwTapCycles(1, 2, 1, 0))) << role;
      EXPECT_EQ(s.report.fault->instruction, 1) << role;
    }
  }
  // The cycle budget: a program ending in a dwconv, the halt at the array's end; the
  // budget one cycle short of it (a fault by the clock) and exactly it.
  const std::string last = "dwconv act_addr=0 acc_addr=0 wgt_addr=0 n0=5 n1=2 act_s0=1 "
                           "act_s1=5 acc_s0=1 acc_s1=5 kh=2 kw=2 tap_s0=1 tap_s1=5\nfinish\n";
  Job job = jobOf(ember::isa::assemble(last, isa(), "dwb.s"));
  const ember::platform::Result ok = ember::sim::Simulator(isa()).run(job);
  ASSERT_TRUE(ok.ok()) << ok.report.fault->message();
  EXPECT_EQ(cosim(job, ok.report.cycles), "");
  EXPECT_EQ(cosim(job, ok.report.cycles - 1), "");
}

TEST(Cosim, DataPathsEndToEnd) {
  // Loads with padding, a gemm, requantize, vector ops and a lut, stored back.
  std::string p =
      "dma.ld sram=act sram_addr=0 dram_addr=0 size0=4 size1=4 size2=1 stride1=4 pad_left=1 "
      "pad_right=1 pad_top=1 pad_bottom=1 pad_value=-3\n"
      "dma.ld sram=weight sram_addr=0 dram_addr=4096 size0=2 size1=1 size2=1\n"
      "dma.ld sram=acc sram_addr=0 dram_addr=8192 size0=64 size1=1 size2=1\n"
      "dma.ld sram=param sram_addr=0 dram_addr=16384 size0=8 size1=1 size2=1 push_next\n"
      "gemm pop_prev act_addr=0 acc_addr=0 wgt_addr=0 n0=6 n1=6 n2=2 act_s0=1 act_s1=6 "
      "acc_s0=1 acc_s1=6 wgt_s2=1\n"
      "gemm act_addr=3 acc_addr=40 wgt_addr=1 n0=4 n1=1 n2=1 act_s0=1 acc_s0=1 reset\n"
      "vadd dst_mem=acc src_mem=acc dst_addr=50 src0_addr=0 src1_addr=4 n0=8 n1=1 dst_s0=1 "
      "src0_s0=1 src1_s0=1\n"
      "vshr dst_mem=act src_mem=act dst_addr=100 src_addr=0 n0=16 n1=1 dst_s0=1 src_s0=1 imm0=2\n"
      "vmul dst_mem=act src_mem=act dst_addr=120 src0_addr=0 src1_addr=1 n0=16 n1=1 dst_s0=1 "
      "src0_s0=1 src1_s0=1\n"
      "lut dst_addr=140 src_addr=0 n0=16 n1=1 dst_s0=1 src_s0=1 table=1\n"
      "vclamp dst_mem=act src_mem=act dst_addr=160 src_addr=120 n0=16 n1=1 dst_s0=1 src_s0=1 "
      "imm0=-20 imm1=30 push_next\n"
      "dma.st pop_prev sram=act sram_addr=100 dram_addr=32768 size0=80 size1=1 size2=1\n"
      "dma.st sram=acc sram_addr=0 dram_addr=40960 size0=60 size1=1 size2=1\n"
      "finish\n";
  std::vector<std::uint8_t> img = randomBytes(32768, 7);
  // requantize-safe params are not needed here (no requant in this program).
  EXPECT_EQ(cosimAsm(p, img), "");
}

TEST(Cosim, QuantizedAddExtremes) {
  // qadd (docs/isa/instructions.md section 2.10) with extreme scalars: products and sums beyond 64
  // bits (M0 = M1 = INT32_MAX, zp0 = zp1 = INT32_MIN), S at both ends of 1..62, int32
  // zero points and bounds, lo > hi; a stride-0 (broadcast) source, an in-place
  // destination, two loop levels; then its operand faults.
  if (!isa().findInstruction("qadd"))
    GTEST_SKIP() << "no qadd in this description";
  const auto& par = isa().memory("param");
  const unsigned pb = static_cast<unsigned>(par.row_bytes);
  const std::int32_t kMin = INT32_MIN, kMax = INT32_MAX;
  // Parameter sets, two param rows each: {M0, M1, S, zp}, {zp0, zp1, lo, hi}.
  const std::int32_t sets[][8] = {
      {kMax, kMax, 62, 0, kMin, kMin, kMin, kMax},  // t near 2^63: exact, not wrapped
      {kMax, kMax, 55, -5, kMin, kMin, kMin, kMax}, // saturates to int8 both ways
      {kMin, kMax, 1, kMax, kMax, kMin, -100, 50},  // clamps on the int32 bounds
      {kMin, kMin, 33, kMin, kMax, kMax, kMin, kMax},
      {1 << 20, -(3 << 18), 21, -3, 5, -7, -128, 127}, // an ordinary rescaled Add
      {12345, 6789, 8, 0, 0, 0, 10, -10},              // lo > hi: lo
  };
  const std::size_t nsets = sizeof(sets) / sizeof(sets[0]);
  std::vector<std::uint8_t> img = randomBytes(16384, 11);
  img.resize(16384 + 2 * nsets * pb, 0);
  for (std::size_t k = 0; k < nsets; ++k)
    for (int v = 0; v < 8; ++v)
      std::memcpy(img.data() + 16384 + (2 * k + v / 4) * pb + 4 * (v % 4), &sets[k][v], 4);
  std::string p = "dma.ld sram=act sram_addr=0 dram_addr=0 size0=64 size1=1 size2=1\n"
                  "dma.ld sram=param sram_addr=0 dram_addr=16384 size0=" +
                  std::to_string(2 * nsets) +
                  " size1=1 size2=1 push_next\n"
                  "sync engine=compute pop_prev\n";
  for (std::size_t k = 0; k < nsets; ++k) {
    const std::string pa = " param_addr=" + std::to_string(2 * k);
    const std::string d = std::to_string(64 + 8 * k); // rows 64..111, all written
    // src1 broadcast (stride 0 along i0), two rows of 4 steps.
    p += "qadd dst_addr=" + d + " src0_addr=" + std::to_string(k) +
         " src1_addr=" + std::to_string(40 + k) + pa +
         " n0=4 n1=2 dst_s0=1 dst_s1=4 src0_s0=1 src0_s1=5 src1_s0=0 src1_s1=3\n";
    // in place: the destination is src0's row of the same step.
    p += "qadd dst_addr=" + d + " src0_addr=" + d + " src1_addr=" + std::to_string(20 + k) + pa +
         " n0=8 n1=1 dst_s0=1 src0_s0=1 src1_s0=2\n";
  }
  p += "sync engine=compute push_next\n"
       "dma.st pop_prev sram=act sram_addr=0 dram_addr=32768 size0=112 size1=1 size2=1\n"
       "finish\n";
  EXPECT_EQ(cosimAsm(p, img), "");
  {
    // The program itself is meaningful: no fault, and its results span the int8 range.
    Job job = jobOf(ember::isa::assemble(p, isa(), "qadd.s"));
    job.dram.write(0, img);
    const ember::platform::Result s = ember::sim::Simulator(isa()).run(job);
    ASSERT_TRUE(s.ok()) << s.report.fault->message();
    const u64 rb = isa().memory("act").row_bytes;
    bool lo = false, hi = false, mid = false;
    for (u64 a = 32768 + 64 * rb; a < 32768 + 112 * rb; ++a) {
      const auto v = static_cast<std::int8_t>(s.dram[a]);
      lo |= v == -128;
      hi |= v == 127;
      mid |= v != -128 && v != 127 && v != 10;
    }
    EXPECT_TRUE(lo && hi && mid);
  }
  // Faults: S = 0 and S = 63 (bad operand), param_addr + 1 beyond the param SRAM, a source
  // beyond act (sram-out-of-range), and n0 = 0 (no fault, no parameter check).
  const std::string load = "dma.ld sram=param sram_addr=0 dram_addr=0 size0=2 size1=1 size2=1 "
                           "push_next\nsync engine=compute pop_prev\n";
  for (std::int32_t s : {0, 63, -1}) {
    std::vector<std::uint8_t> f(2 * pb, 0);
    std::memcpy(f.data() + 8, &s, 4);
    EXPECT_EQ(cosimAsm(load + "qadd dst_addr=0 src0_addr=0 src1_addr=0 param_addr=0 n0=1 "
                              "n1=1\nfinish\n",
                       f),
              "")
        << "S = " << s;
    EXPECT_EQ(cosimAsm(load + "qadd dst_addr=0 src0_addr=0 src1_addr=0 param_addr=0 n0=0 "
                              "n1=1\nfinish\n",
                       f),
              "")
        << "S = " << s << ", n0 = 0";
  }
  EXPECT_EQ(cosimAsm("qadd dst_addr=0 src0_addr=0 src1_addr=0 param_addr=" +
                     std::to_string(par.rows() - 1) + " n0=1 n1=1\nfinish\n"),
            "");
  const std::uint64_t actRows = isa().memory("act").rows();
  EXPECT_EQ(cosimAsm("qadd dst_addr=0 src0_addr=0 src1_addr=" + std::to_string(actRows - 2) +
                     " param_addr=0 n0=3 n1=1 src1_s0=1\nfinish\n"),
            "");
}

TEST(Cosim, NormalizeExtremes) {
  // softmax and lnorm (docs/isa/instructions.md section 2.11): lines of len a multiple of L and
  // not, len = 1, several lines with strides, in place, a stride-0 source; extreme parameters (M =
  // INT32_MAX and INT32_MIN, S outside 1..62, table entries negative and above 2^16, an all-zero
  // table (sum 0), zp_x beyond int8, epsilon negative and above 2^60, zero variance, lo > hi, int32
  // zero points); then the range faults.
  const ember::isa::InstrDesc* sm = isa().findInstruction("softmax");
  if (!sm || !isa().findInstruction("lnorm"))
    GTEST_SKIP() << "no normalize class in this description";
  const unsigned L = isa().hw().vector.lanes;
  const u64 ab = isa().memory("act").row_bytes, cb = isa().memory("acc").row_bytes;
  const u64 accRows = isa().memory("acc").rows(), actRows = isa().memory("act").rows();
  const std::int32_t kMin = INT32_MIN, kMax = INT32_MAX;
  const u64 tableRows = (256 + L - 1) / L;
  // The acc image: parameter blocks one after another.
  std::vector<std::int32_t> acc;
  auto row = [&](std::vector<std::int32_t> v) {
    v.resize(cb / 4, 0);
    acc.insert(acc.end(), v.begin(), v.end());
  };
  std::uint32_t rnd = 12345;
  auto next = [&] {
    rnd ^= rnd << 13;
    rnd ^= rnd >> 17;
    rnd ^= rnd << 5;
    return rnd;
  };
  // softmax blocks: {zp_x, zp_y, lo, hi}, {M, S}, then the table T[0..255].
  auto softmaxBlock = [&](std::int32_t zpy, std::int32_t lo, std::int32_t hi, std::int32_t M,
                          std::int32_t S, int table) {
    const u64 at = acc.size() / (cb / 4);
    row({7, zpy, lo, hi});
    row({M, S});
    std::vector<std::int32_t> T(tableRows * L, 0);
    for (int d = 0; d < 256; ++d)
      T[d] = table == 0   ? std::int32_t(65536.0 * std::exp(-0.04 * d) + 0.5)
             : table == 1 ? std::int32_t(next() % (1u << 21)) - (1 << 20) // both sides
                          : 0;
    for (u64 r = 0; r < tableRows; ++r)
      row(std::vector<std::int32_t>(T.begin() + r * L, T.begin() + (r + 1) * L));
    return at;
  };
  // lnorm blocks for lines of up to `rows` rows: {zp_x, zp_y, lo, hi}, {E_lo, E_hi}, then
  // per row M, S, B.
  auto lnormBlock = [&](std::int32_t zpx, std::int32_t zpy, std::int32_t lo, std::int32_t hi,
                        std::int64_t E, u64 rows, int kind) {
    const u64 at = acc.size() / (cb / 4);
    row({zpx, zpy, lo, hi});
    row({std::int32_t(std::uint32_t(std::uint64_t(E))), std::int32_t(std::uint64_t(E) >> 32)});
    for (u64 r = 0; r < rows; ++r) {
      std::vector<std::int32_t> M(L), S(L), B(L);
      for (unsigned l = 0; l < L; ++l) {
        if (kind == 0) {
          M[l] = std::int32_t(1 + next() % 3);
          S[l] = 11;
          B[l] = std::int32_t(next() % 21) - 10;
        } else {
          const std::int32_t ms[] = {kMax, kMin, 1 << 20, -(1 << 24)};
          const std::int32_t ss[] = {0, 63, -5, 100, 1, 62, 40, 20};
          const std::int32_t bs[] = {kMax, kMin, 0, -100};
          M[l] = ms[next() % 4];
          S[l] = ss[next() % 8];
          B[l] = bs[next() % 4];
        }
      }
      row(M);
      row(S);
      row(B);
    }
    return at;
  };
  const u64 smPlain = softmaxBlock(-128, -128, 127, 1, 8, 0);
  const u64 smWild = softmaxBlock(kMin, kMin, kMax, kMax, 70, 1);
  const u64 smNeg = softmaxBlock(5, -128, 127, kMin, 0, 1);
  const u64 smZero = softmaxBlock(3, 10, -10, 12345, 9, 2); // sum 0, lo > hi
  const u64 smHuge = softmaxBlock(kMax, -128, 127, 1 << 30, 40, 0);
  const u64 lnPlain = lnormBlock(3, 0, -128, 127, 1000, 4, 0);
  const u64 lnWild = lnormBlock(0x12345680, kMax, kMin, kMax, -5, 4, 1); // zp_x low byte -128
  const u64 lnBigEps = lnormBlock(-7, 0, -128, 127, (std::int64_t(1) << 61) + 3, 4, 1);
  const u64 lnEps60 = lnormBlock(200, -3, -100, 100, std::int64_t(1) << 60, 4, 0);
  const u64 lnLoHi = lnormBlock(0, 0, 20, -20, 0, 4, 0);
  const u64 lnEps1 = lnormBlock(0, 0, -128, 127, 1, 4, 0); // D = 1: k = 30, the longest line
  const u64 accUsed = acc.size() / (cb / 4);
  ASSERT_LE(accUsed, accRows);
  // act rows 0..127 random codes, rows 128..135 constant (zero variance); the image's
  // acc part at 65536.
  std::vector<std::uint8_t> img = randomBytes(128 * ab, 23);
  img.resize(136 * ab, 0x35);
  img.resize(65536, 0);
  const std::size_t accAt = img.size();
  img.resize(accAt + acc.size() * 4);
  std::memcpy(img.data() + accAt, acc.data(), acc.size() * 4);
  // Every act row the program stores is loaded first (rows 136 and up as zeros), so that
  // none holds the RTL's initial contents (rtl.xrand randomises them).
  std::string p = "dma.ld sram=act sram_addr=0 dram_addr=0 size0=214 size1=1 size2=1\n"
                  "dma.ld sram=acc sram_addr=0 dram_addr=65536 size0=" +
                  std::to_string(accUsed) + " size1=1 size2=1 push_next\n" +
                  "sync engine=compute pop_prev\n";
  auto norm = [&](const char* op, u64 par, u64 len, u64 n1, u64 dst, u64 dsb, u64 ds1, u64 src,
                  u64 ssb, u64 ss1) {
    p += std::string(op) + " block_addr=" + std::to_string(par) + " len=" + std::to_string(len) +
         " n1=" + std::to_string(n1) + " dst_addr=" + std::to_string(dst) +
         " dst_sb=" + std::to_string(dsb) + " dst_s1=" + std::to_string(ds1) +
         " src_addr=" + std::to_string(src) + " src_sb=" + std::to_string(ssb) +
         " src_s1=" + std::to_string(ss1) + "\n";
  };
  // Destinations: rows 140..; sources 0..135 (several lines with strides).
  norm("softmax", smPlain, 2 * L, 3, 140, 1, 2, 0, 1, 5);
  norm("softmax", smPlain, L + 3, 2, 146, 2, 1, 10, 3, 1);
  norm("softmax", smWild, 3 * L + 5, 2, 150, 1, 4, 20, 1, 4);
  norm("softmax", smNeg, L - 1, 3, 158, 1, 1, 30, 1, 1);
  norm("softmax", smZero, L + 1, 1, 161, 1, 0, 40, 1, 0);
  norm("softmax", smHuge, 1, 4, 163, 0, 1, 50, 0, 1);
  norm("softmax", smPlain, 2 * L + 1, 1, 167, 1, 0, 60, 0, 0); // one source row thrice
  norm("lnorm", lnPlain, 2 * L, 3, 170, 1, 2, 0, 1, 5);
  norm("lnorm", lnPlain, L + 3, 2, 176, 2, 1, 10, 3, 1);
  norm("lnorm", lnWild, 3 * L + 5, 2, 180, 1, 4, 20, 1, 4);
  norm("lnorm", lnBigEps, 4 * L, 1, 188, 1, 0, 30, 1, 0);
  norm("lnorm", lnEps60, L - 1, 3, 192, 1, 1, 40, 1, 1);
  norm("lnorm", lnPlain, 2 * L + 3, 2, 195, 1, 3, 128, 1, 3); // zero variance, epsilon 1000
  norm("lnorm", lnLoHi, 1, 2, 201, 0, 1, 50, 0, 1);           // len = 1: c = 0
  norm("lnorm", lnLoHi, L + 2, 1, 203, 1, 0, 60, 1, 0);
  norm("lnorm", lnWild, 2 * L, 1, 205, 1, 0, 131, 1, 0); // zero variance, epsilon < 0: r = 0
  norm("lnorm", lnEps1, 4 * L, 2, 206, 1, 2, 128, 1, 4); // zero variance, epsilon 1
  // In place (dst == src), both ops, over lines.
  norm("softmax", smPlain, 2 * L + 2, 2, 70, 1, 3, 70, 1, 3);
  norm("lnorm", lnPlain, 2 * L + 2, 2, 80, 1, 3, 80, 1, 3);
  p += "sync engine=compute push_next\n"
       "dma.st pop_prev sram=act sram_addr=0 dram_addr=131072 size0=214 size1=1 size2=1\n"
       "finish\n";
  EXPECT_EQ(cosimAsm(p, img), "");
  {
    // The program is meaningful: no fault, and both ops' results take many values.
    Job job = jobOf(ember::isa::assemble(p, isa(), "norm.s"));
    job.dram.write(0, img);
    const ember::platform::Result s = ember::sim::Simulator(isa()).run(job);
    ASSERT_TRUE(s.ok()) << s.report.fault->message();
    std::set<int> smv, lnv;
    for (u64 a = 131072 + 140 * ab; a < 131072 + 170 * ab; ++a)
      smv.insert(static_cast<std::int8_t>(s.dram[a]));
    for (u64 a = 131072 + 170 * ab; a < 131072 + 207 * ab; ++a)
      lnv.insert(static_cast<std::int8_t>(s.dram[a]));
    EXPECT_GE(smv.size(), 20u);
    EXPECT_GE(lnv.size(), 20u);
    EXPECT_TRUE(smv.count(-128) && smv.count(127) && lnv.count(-128) && lnv.count(127));
  }
  // Faults: a destination and a source row beyond act, the parameter block's last row
  // beyond acc (softmax: 2 + ceil(256 / L) rows, lnorm: 2 + 3R), len beyond 16384 where
  // the field holds it (ember-v1-shifted); len = 0 checks nothing.
  const std::string last = std::to_string(actRows - 1);
  EXPECT_EQ(cosimAsm("softmax block_addr=0 len=" + std::to_string(L + 1) +
                     " n1=1 dst_addr=" + last + " dst_sb=1 src_addr=0 src_sb=1\nfinish\n"),
            "");
  EXPECT_EQ(
      cosimAsm("lnorm block_addr=0 len=1 n1=2 dst_addr=0 src_addr=" + last + " src_s1=1\nfinish\n"),
      "");
  EXPECT_EQ(cosimAsm("softmax block_addr=" + std::to_string(accRows - 2 - tableRows) +
                     " len=1 n1=1 dst_addr=0 src_addr=0\nfinish\n"),
            "");
  EXPECT_EQ(cosimAsm("softmax block_addr=" + std::to_string(accRows - tableRows) +
                     " len=1 n1=1 dst_addr=0 src_addr=0\nfinish\n"),
            "");
  EXPECT_EQ(cosimAsm("lnorm block_addr=" + std::to_string(accRows - 7) +
                     " len=" + std::to_string(2 * L) + " n1=1 dst_addr=0 src_addr=0\nfinish\n"),
            "");
  EXPECT_EQ(cosimAsm("lnorm block_addr=" + std::to_string(accRows - 8) +
                     " len=" + std::to_string(2 * L) + " n1=1 dst_addr=0 src_addr=0\nfinish\n"),
            "");
  EXPECT_EQ(cosimAsm("lnorm block_addr=" + std::to_string(accRows - 1) +
                     " len=0 n1=1 dst_addr=" + last + " src_addr=" + last + " dst_s1=5\nfinish\n"),
            "");
  if (sm->field("len")->bits.width >= 15) {
    EXPECT_EQ(
        cosimAsm("softmax block_addr=0 len=16385 n1=1 dst_addr=" + last + " src_addr=0\nfinish\n"),
        "");
    EXPECT_EQ(cosimAsm("lnorm block_addr=0 len=16384 n1=1 dst_addr=0 src_addr=0 src_sb=" +
                       std::to_string(actRows) + "\nfinish\n"),
              "");
  }
}

TEST(Cosim, Faults) {
  // sram-out-of-range, dram-out-of-range, bad operand, token underflow / overflow,
  // deadlock, cycle budget, illegal opcode.
  EXPECT_EQ(cosimAsm("dma.ld sram=act sram_addr=16383 dram_addr=0 size0=4 size1=1 size2=1\n"
                     "finish\n"),
            "");
  EXPECT_EQ(cosimAsm("dma.ld sram=act sram_addr=0 dram_addr=4294967295 size0=4 size1=1 "
                     "size2=1\nfinish\n"),
            "");
  EXPECT_EQ(cosimAsm("vshr dst_mem=act src_mem=act dst_addr=0 src_addr=0 n0=1 n1=1 imm0=40\n"
                     "finish\n"),
            "");
  EXPECT_EQ(cosimAsm("sync engine=compute pop_prev\nfinish\n"), "");
  std::string over;
  for (int i = 0; i < 10; ++i)
    over += "sync engine=load push_next\n";
  EXPECT_EQ(cosimAsm(over + "finish\n"), "");
  EXPECT_EQ(cosimAsm("sync engine=load pop_next\nsync engine=compute pop_prev\nfinish\n"), "");
  // Tokens towards a missing neighbour (the assembler refuses them: set the bits).
  for (const char* role : {"pop_prev", "push_prev"}) {
    ember::isa::Binary b = ember::isa::assemble("sync engine=load\nfinish\n", isa(), "t.s");
    b.code[0].set(role, 1);
    EXPECT_EQ(cosim(jobOf(b)), "") << role;
  }
  for (const char* role : {"pop_next", "push_next"}) {
    ember::isa::Binary b = ember::isa::assemble("sync engine=store\nfinish\n", isa(), "t.s");
    b.code[0].set(role, 1);
    EXPECT_EQ(cosim(jobOf(b)), "") << role;
  }
  ember::isa::Binary bin = ember::isa::assemble(
      "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=200 n1=1 n2=1 act_s0=1\nfinish\n", isa(), "b.s");
  EXPECT_EQ(cosim(jobOf(bin), 100), "");
  EXPECT_EQ(cosim(jobOf(bin), 1), "");
  Job bad = jobOf(ember::isa::assemble("sync engine=load\nfinish\n", isa(), "x.s"));
  for (std::size_t i = 0; i < isa().instructionBytes(); ++i)
    bad.text[i] = 0xff;
  EXPECT_EQ(cosim(bad), "");
  // A program longer than the instruction buffer (ember_npu's IMEM_WORDS) is refused.
  Job huge = jobOf(ember::isa::assemble("finish\n", isa(), "h.s"));
  huge.text.resize(std::size_t(131073) * isa().instructionBytes());
  try {
    ember::rtl::runVerilated<EMBER_RTL_MODEL>(isa(), huge, {}, 1000);
    ADD_FAILURE() << "a program of 131073 instructions ran";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("holds 131072 instructions; the program has 131073"),
              std::string::npos)
        << e.what();
  }
  // E6: a background gemm that pushes a token is a bad operand, raised in the cycle it
  // would start, before its loops are looked at (n0 = 0): here it waits for the array
  // until the first one's end, fetch latency + T (the assembler may refuse the flag: set
  // the bit).
  if (isa().findInstruction("gemm.bg")) {
    const u64 FL = isa().hw().fetch.latency_cycles;
    for (const char* role : {"push_next", "push_prev"}) {
      ember::isa::Binary b = ember::isa::assemble(
          "gemm.bg act_addr=0 acc_addr=0 wgt_addr=0 n0=40 n1=1 n2=1 act_s0=1 acc_s0=1\n"
          "gemm.bg act_addr=0 acc_addr=64 wgt_addr=0 n0=0 n1=1 n2=1\nfinish\n",
          isa(), "bg.s");
      b.code[1].set(role, 1);
      EXPECT_EQ(cosim(jobOf(b)), "") << role;
      const ember::platform::Result s = ember::sim::Simulator(isa()).run(jobOf(b));
      ASSERT_TRUE(s.report.fault.has_value()) << role;
      EXPECT_EQ(s.report.fault->kind, ember::platform::FaultKind::BadOperand) << role;
      EXPECT_EQ(s.report.fault->cycle, FL + gemmCycles("gemm.bg", 40, 1, 1)) << role;
      EXPECT_EQ(s.report.fault->instruction, 1) << role;
    }
  }
}

// ---- Seeded random legal programs (the fuzzers' generator) ----

class CosimRandom : public ::testing::TestWithParam<int> {};

TEST_P(CosimRandom, Program) {
  // Timing and counters on every program; outputs on the race-free ones.
  ember::isa::Binary bin = ember::progen::generate(isa(), std::uint64_t(GetParam()));
  bool raced = false;
  EXPECT_EQ(cosim(jobOf(bin), 0, &raced), "") << "seed " << GetParam();
  if (raced)
    std::printf("seed %d: a data race between engines: outputs not compared\n", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Seeds, CosimRandom, ::testing::Range(1, 121));

/// Whether a compute instruction other than an array one starts while a background
/// instruction's array works (rule E6): the overlap the random programs must exercise.
bool overlapsArray(const Job& job, const std::vector<ember::platform::Slice>& slices) {
  const unsigned W = isa().instructionBytes();
  auto decode = [&](const ember::platform::Slice& s) {
    return ember::isa::Instruction::decode(isa(), job.text.data() + s.index * W, "job", "insn");
  };
  for (const auto& g : slices) {
    const ember::isa::Instruction gi = decode(g);
    if (!gi.desc().background)
      continue;
    const u64 until = workEnd(gi, g);
    for (const auto& x : slices)
      if (x.engine == g.engine && x.start > g.start && x.start < until &&
          decode(x).desc().cls->id != ember::isa::SemanticClass::Gemm &&
          decode(x).desc().cls->id != ember::isa::SemanticClass::Depthwise)
        return true;
  }
  return false;
}

TEST(Cosim, AtLeastFiftyRaceFreeRandomPrograms) {
  int clean = 0, background = 0, overlapped = 0, depthwise = 0;
  for (int seed = 1; seed <= 120; ++seed) {
    Job job = jobOf(ember::progen::generate(isa(), std::uint64_t(seed)));
    ember::platform::Result s = ember::sim::Simulator(isa()).run(job);
    const bool ok = s.ok() && !racy(job, s.report.slices);
    clean += ok;
    const unsigned W = isa().instructionBytes();
    bool bg = false, dw = false;
    for (std::size_t i = 0; i * W < job.text.size(); ++i) {
      const ember::isa::Instruction in =
          ember::isa::Instruction::decode(isa(), job.text.data() + i * W, "job", "insn");
      bg = bg || in.desc().background;
      // A depthwise instruction with work: outputs and taps (rule DW1).
      dw = dw || (in.desc().cls->id == ember::isa::SemanticClass::Depthwise &&
                  !ember::progen::footprint(isa(), in).empty());
    }
    background += bg;
    overlapped += ok && overlapsArray(job, s.report.slices);
    depthwise += ok && dw;
  }
  std::printf("%d of 120 random programs are race-free (outputs compared); %d have a background "
              "array instruction, %d race-free ones run compute instructions beside its array, "
              "%d race-free ones a depthwise instruction with taps\n",
              clean, background, overlapped, depthwise);
  EXPECT_GE(clean, 50);
  if (isa().findInstruction("gemm.bg")) {
    EXPECT_GE(overlapped, 10) << "the random programs must exercise rule E6";
  }
  if (isa().findInstruction("dwconv")) {
    EXPECT_GE(depthwise, 10) << "the random programs must exercise the depthwise class";
  }
}

} // namespace

namespace {
// Simulated cycles per host second of both models on a GEMM-bound and a DMA-bound
// program, printed (never asserted: performance is measured, not tested).
TEST(Cosim, SpeedFigures) {
  std::string gemm, dma;
  for (int i = 0; i < 40; ++i) {
    gemm += "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=200 n1=4 n2=8 act_s0=1 act_s1=200 "
            "acc_s0=1 acc_s1=0 wgt_s2=1\n";
    dma += "dma.ld sram=act sram_addr=0 dram_addr=0 size0=200 size1=8 size2=1 stride1=200\n";
  }
  for (const auto& [what, text] :
       {std::pair<const char*, std::string>{"gemm-bound", gemm}, {"dma-bound", dma}}) {
    Job job = jobOf(ember::isa::assemble(text + "finish\n", isa(), "speed.s"));
    ember::sim::Simulator sim(isa());
    ember::platform::Options o;
    ember::platform::Result s = sim.run(job, o);
    ember::rtl::RtlResult r = ember::rtl::runVerilated<EMBER_RTL_MODEL>(
        isa(), job, o, ember::platform::defaultCycleBudget(isa(), job));
    ASSERT_TRUE(s.ok()) << s.report.fault->message();
    ASSERT_EQ(r.report.cycles, s.report.cycles);
    std::printf("%s: %llu cycles; RTL %.0f cycles/s, SystemC model %.0f cycles/s\n", what,
                static_cast<unsigned long long>(s.report.cycles),
                double(r.report.cycles) / r.host_seconds,
                double(s.report.cycles) / s.report.host_seconds);
  }
}
} // namespace
