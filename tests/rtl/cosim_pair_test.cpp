// Co-simulation of two NPUs on one DRAM (docs/rtl/npu.md section 5.6): the Verilated
// ember_npu_pair against sim::runTogether (docs/systems.md section 5, rules M1-M4), both
// arbitration policies. Per device: the fault record, every instruction's dispatch, take,
// start, end and memory stall, the total cycles, every engine counter, the DRAM bytes,
// the arbitration stall (M4), the channel bookings and, for race-free programs, the whole
// DRAM window must be equal. Programs: the co-simulation corpus's seeded random programs
// (cosim_test.cpp's CosimRandom), each with itself and with the next seed's, and the two
// hand-worked contention cases of tests/sim/SystemTest.cpp.
#include "ember/isa/assembler.h"
#include "ember/isa/timing.h"
#include "ember/progen/Footprint.h"
#include "ember/progen/ProgramGenerator.h"
#include "ember/rtl/NpuPairHarness.h"
#include "ember/sim/System.h"

#include EMBER_RTL_PAIR_HEADER

#include <gtest/gtest.h>

#include "CosimJob.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace {

using ember::platform::Job;
using ember::sim::Arbitration;
using u64 = std::uint64_t;

using ember::rtltest::isa;
using ember::rtltest::jobOf;

Job asmJob(const std::string& text) {
  return jobOf(ember::isa::assemble(text, isa(), "pair.s"));
}

/// Whether two instructions of one run overlap in time and touch a common row with a
/// write (a data race: the outcome is undefined, outputs are not compared), as
/// cosim_test.cpp's racy().
bool racy(const Job& job, const std::vector<ember::platform::Slice>& slices) {
  const unsigned W = isa().instructionBytes();
  std::vector<std::vector<ember::progen::RowRange>> fp;
  std::vector<u64> until;
  for (const auto& s : slices) {
    const auto in =
        ember::isa::Instruction::decode(isa(), job.text.data() + s.index * W, "job", "insn");
    fp.push_back(ember::progen::footprint(isa(), in));
    until.push_back(in.desc().background ? s.start + ember::isa::timing::idle(isa(), in).cycles
                                         : s.end);
  }
  for (std::size_t i = 0; i < slices.size(); ++i)
    for (std::size_t j = i + 1; j < slices.size(); ++j) {
      const auto &a = slices[i], &b = slices[j];
      const bool overlap = a.engine != b.engine ? !(until[i] < b.start || until[j] < a.start)
                                                : (a.start <= b.start && b.start < until[i]) ||
                                                      (b.start <= a.start && a.start < until[j]);
      if (overlap)
        for (const auto& x : fp[i])
          for (const auto& y : fp[j])
            if (x.mem == y.mem && (x.write || y.write) && x.lo <= y.hi && y.lo <= x.hi)
              return true;
    }
  return false;
}

/// The first difference of one device's SystemC and RTL outcomes ("" when equal).
std::string diff(const ember::sim::DeviceOutcome& s, const ember::rtl::RtlPairDevice& r,
                 const Job& job) {
  std::ostringstream d;
  const auto &sr = s.result.report, &rr = r.result.report;
  if (r.result.overrun || r.result.bus_conflict)
    d << "RTL overrun or DMA bus conflict; ";
  if (sr.fault.has_value() != rr.fault.has_value())
    return d.str() + "sim " + (sr.fault ? sr.fault->message() : "ok") + ", rtl " +
           (rr.fault ? rr.fault->message() : "ok");
  if (sr.fault && (sr.fault->kind != rr.fault->kind || sr.fault->cycle != rr.fault->cycle ||
                   sr.fault->instruction != rr.fault->instruction))
    d << "fault: sim " << sr.fault->message() << " | rtl " << rr.fault->message() << "; ";
  auto byIndex = [](std::vector<ember::platform::Slice> v) {
    std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
    return v;
  };
  const auto ss = byIndex(sr.slices), rs = byIndex(rr.slices);
  if (ss.size() != rs.size())
    d << "slices: sim " << ss.size() << ", rtl " << rs.size() << "; ";
  for (std::size_t i = 0; i < std::min(ss.size(), rs.size()); ++i) {
    const auto &a = ss[i], &b = rs[i];
    if (a.index != b.index || a.dispatch != b.dispatch || a.take != b.take || a.start != b.start ||
        a.end != b.end || a.memory_stall != b.memory_stall || a.push_stall != b.push_stall) {
      d << "instr " << a.index << ": sim " << a.dispatch << "/" << a.take << "/" << a.start << "-"
        << a.end << " (mstall " << a.memory_stall << "), rtl " << b.index << " " << b.dispatch
        << "/" << b.take << "/" << b.start << "-" << b.end << " (mstall " << b.memory_stall
        << "); ";
      break;
    }
  }
  if (sr.cycles != rr.cycles)
    d << "cycles: sim " << sr.cycles << ", rtl " << rr.cycles << "; ";
  if (sr.fetch_stall != rr.fetch_stall || sr.macs != rr.macs)
    d << "fetch stall or MACs differ; ";
  for (int e = 0; e < 3; ++e) {
    const auto &a = sr.engines[e], &b = rr.engines[e];
    if (a.instructions != b.instructions || a.busy != b.busy || a.token_stall != b.token_stall ||
        a.memory_stall != b.memory_stall || a.idle != b.idle)
      d << a.name << " counters: sim " << a.instructions << "/" << a.busy << "/" << a.token_stall
        << "/" << a.memory_stall << "/" << a.idle << ", rtl " << b.instructions << "/" << b.busy
        << "/" << b.token_stall << "/" << b.memory_stall << "/" << b.idle << "; ";
  }
  if (sr.memories.back().bytes_read != rr.memories.back().bytes_read ||
      sr.memories.back().bytes_written != rr.memories.back().bytes_written)
    d << "DRAM bytes differ; ";
  if (s.arbitration_stall != r.arbitration_stall)
    d << "arbitration stall: sim " << s.arbitration_stall << ", rtl " << r.arbitration_stall
      << "; ";
  if (s.channel_bookings != r.channel_bookings)
    d << "channel bookings: sim " << s.channel_bookings << ", rtl " << r.channel_bookings << "; ";
  if (!sr.fault && !racy(job, sr.slices) && !(s.result.dram == r.result.dram))
    d << "DRAM contents differ; ";
  return d.str();
}

struct Joint {
  std::vector<ember::sim::DeviceOutcome> sim;
  std::array<ember::rtl::RtlPairDevice, 2> rtl;
  std::string diff;
};

/// Runs jobs a and b together on one DRAM under `arb`, on both models.
Joint together(const Job& a, const Job& b, Arbitration arb) {
  ember::platform::Options opts;
  opts.record_slices = true;
  std::vector<ember::sim::DeviceJob> dj(2);
  dj[0].isa = dj[1].isa = &isa();
  dj[0].job = a;
  dj[1].job = b;
  dj[0].options = dj[1].options = opts;
  Joint j;
  j.sim = ember::sim::runTogether(dj, {arb});
  // runTogether's joint default budget (docs/systems.md section 5): the sum of the two
  // devices' default budgets.
  const u64 budget =
      std::min(ember::platform::kMaxCycleBudget, ember::platform::defaultCycleBudget(isa(), a) +
                                                     ember::platform::defaultCycleBudget(isa(), b));
  j.rtl = ember::rtl::runVerilatedPair<EMBER_RTL_PAIR_MODEL>(
      isa(), {&a, &b}, opts, {budget, budget}, arb == Arbitration::RoundRobin);
  for (int k = 0; k < 2; ++k) {
    const std::string d = diff(j.sim[k], j.rtl[k], k ? b : a);
    if (!d.empty())
      j.diff += "device " + std::to_string(k) + ": " + d;
  }
  return j;
}

const char* name(Arbitration a) {
  return a == Arbitration::RoundRobin ? "round-robin" : "fixed-priority";
}

std::string loads(int k, int rows) {
  std::string s;
  for (int i = 0; i < k; ++i)
    s += "dma.ld sram=act sram_addr=0 dram_addr=" + std::to_string(i * 0x1000) +
         " size0=" + std::to_string(rows) + " size1=1 size2=1\n";
  return s + "finish\n";
}

} // namespace

// tests/sim/SystemTest.cpp's closed form (worked by hand there from M1-M4 and ember-v1's
// parameters): two devices each loading 4 x 250 act rows end at 981 and 1,106 cycles,
// with arbitration stalls of 60 and 185, under either policy.
TEST(CosimPair, TwoDevicesShareTheChannelInClosedForm) {
  if (isa().name() != "ember-v1")
    GTEST_SKIP() << "the figures are ember-v1's";
  const Job j = asmJob(loads(4, 250));
  for (Arbitration arb : {Arbitration::RoundRobin, Arbitration::FixedPriority}) {
    const Joint r = together(j, j, arb);
    EXPECT_EQ(r.diff, "") << name(arb);
    EXPECT_EQ(r.rtl[0].result.report.cycles, 981u) << name(arb);
    EXPECT_EQ(r.rtl[1].result.report.cycles, 1106u) << name(arb);
    EXPECT_EQ(r.rtl[0].arbitration_stall, 60u) << name(arb);
    EXPECT_EQ(r.rtl[1].arbitration_stall, 185u) << name(arb);
    EXPECT_EQ(r.rtl[0].channel_bookings, 4u) << name(arb);
  }
}

// SystemTest.cpp's tie: round robin gives it to the second device (the first booked
// last), fixed priority to the first: 419 / 319 cycles, then 319 / 419.
TEST(CosimPair, RoundRobinAndFixedPriorityDecideATie) {
  if (isa().name() != "ember-v1")
    GTEST_SKIP() << "the figures are ember-v1's";
  const Job a = asmJob("dma.ld sram=act sram_addr=0 dram_addr=0 size0=16 size1=1 size2=1\n"
                       "dma.ld sram=act sram_addr=0 dram_addr=0x1000 size0=200 size1=1 "
                       "size2=1\nfinish\n");
  const Job b = asmJob("dma.ld sram=act sram_addr=0 dram_addr=0 size0=0 size1=0 size2=6 "
                       "pad_left=3 pad_right=3 pad_top=3 pad_bottom=3\n"
                       "dma.ld sram=act sram_addr=0 dram_addr=0x1000 size0=200 size1=1 "
                       "size2=1\nfinish\n");
  const Joint rr = together(a, b, Arbitration::RoundRobin);
  EXPECT_EQ(rr.diff, "");
  EXPECT_EQ(rr.rtl[0].result.report.cycles, 419u);
  EXPECT_EQ(rr.rtl[1].result.report.cycles, 319u);
  EXPECT_EQ(rr.rtl[0].arbitration_stall, 100u);
  EXPECT_EQ(rr.rtl[1].channel_bookings, 1u);
  const Joint fp = together(a, b, Arbitration::FixedPriority);
  EXPECT_EQ(fp.diff, "");
  EXPECT_EQ(fp.rtl[0].result.report.cycles, 319u);
  EXPECT_EQ(fp.rtl[1].result.report.cycles, 419u);
  EXPECT_EQ(fp.rtl[1].arbitration_stall, 100u);
}

// The corpus's seeded random programs, each with itself and with the next seed's, under
// both policies: equal on every per-device figure (the arbitration stall each seed's runs
// met is printed; the two tests above are the ones that contend for certain).
class CosimPairRandom : public ::testing::TestWithParam<int> {};

TEST_P(CosimPairRandom, Programs) {
  const int s = GetParam();
  const Job a = jobOf(ember::progen::generate(isa(), std::uint64_t(s)));
  const Job b = jobOf(ember::progen::generate(isa(), std::uint64_t(s + 1)));
  u64 stall = 0;
  for (Arbitration arb : {Arbitration::RoundRobin, Arbitration::FixedPriority})
    for (const Job* other : {&a, &b}) {
      const Joint r = together(a, *other, arb);
      EXPECT_EQ(r.diff, "") << "seeds " << s << " and " << (other == &a ? s : s + 1) << ", "
                            << name(arb);
      stall += r.sim[0].arbitration_stall + r.sim[1].arbitration_stall;
    }
  std::printf("seed %d: arbitration stall %llu cycles over its four joint runs\n", s,
              static_cast<unsigned long long>(stall));
}

INSTANTIATE_TEST_SUITE_P(Seeds, CosimPairRandom, ::testing::Range(1, 25));
