// rtl.simtests.*: the simulator's own tests (tests/sim) rebuilt with EMBER_SIMTEST_COSIM,
// so that every program they run through simtest::run() -- the timing tests, the
// contract's directed programs, the semantics and fault tests -- also runs on the
// Verilated RTL of its description and must agree: fault record, energy, total cycles, every
// instruction's dispatch/take/start/end, the counters and the DRAM window. Descriptions
// the build has no RTL of (the tests' edited variants) run on the model only, and so do
// the programs the model rejects for touching a running background gemm's rows (rule
// E6: the program must not; the model diagnoses it, the RTL, like silicon, does not check
// it, and its outcome there is undefined).
#include "../sim/SimTestUtil.h"

#include "ember/rtl/RtlSim.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace simtest {

namespace {
/// Prints, when the tests end, how many programs ran on both models.
struct Tally {
  int both = 0, modelOnly = 0, races = 0;
  ~Tally() {
    std::printf("rtl.simtests: %d programs co-simulated, %d on edited descriptions (model only), "
                "%d background-gemm races the model reports (model only)\n",
                both, modelOnly, races);
  }
} tally;

/// The model's rule-E6 race diagnosis (simulator/src/Machine.cpp, Machine::touch).
bool backgroundRace(const ember::platform::Report& r) {
  return r.fault && r.fault->kind == ember::platform::FaultKind::BadOperand &&
         r.fault->reason.find("while the array's background ") != std::string::npos &&
         r.fault->reason.find(" uses rows") != std::string::npos;
}
/// Both models account each retired instruction through isa::energy: equal components
/// and totals, up to the rounding of sums taken in another order.
void expectEqualEnergy(const ember::platform::Report& a, const ember::platform::Report& b) {
  ASSERT_EQ(a.energy.size(), b.energy.size());
  for (std::size_t i = 0; i < a.energy.size(); ++i) {
    EXPECT_EQ(a.energy[i].component, b.energy[i].component);
    EXPECT_NEAR(a.energy[i].pj, b.energy[i].pj, 1e-9 * std::max(1.0, std::fabs(a.energy[i].pj)))
        << a.energy[i].component;
  }
  EXPECT_NEAR(a.energy_total_pj, b.energy_total_pj, 1e-9 * std::max(1.0, a.energy_total_pj));
}
} // namespace

void cosimCheck(const ember::isa::IsaDescription& isa, const ember::platform::Job& job,
                const ember::platform::Options& opts, const ember::platform::Result& s) {
  std::optional<ember::rtl::RtlSimulator> rtl;
  try {
    rtl.emplace(isa);
  } catch (const std::exception&) {
    ++tally.modelOnly;
    return; // no Verilated model of this (edited) description
  }
  if (backgroundRace(s.report)) {
    ++tally.races;
    return;
  }
  ++tally.both;
  ember::rtl::RtlRun run = rtl->run(job, opts);
  const ember::platform::Report& a = s.report;
  const ember::platform::Report& b = run.result.report;
  EXPECT_FALSE(run.overrun) << "an RTL datapath overran its instruction";
  EXPECT_FALSE(run.bus_conflict) << "both DMA engines drove the DRAM port";
  ASSERT_EQ(a.fault.has_value(), b.fault.has_value())
      << "sim " << (a.fault ? a.fault->message() : "ok") << ", rtl "
      << (b.fault ? b.fault->message() : "ok");
  if (a.fault) {
    EXPECT_EQ(a.fault->kind, b.fault->kind) << a.fault->message() << " | " << b.fault->message();
    EXPECT_EQ(a.fault->cycle, b.fault->cycle) << a.fault->message() << " | " << b.fault->message();
    EXPECT_EQ(a.fault->engine, b.fault->engine);
    EXPECT_EQ(a.fault->instruction, b.fault->instruction);
    EXPECT_EQ(a.fault->signal_cycle, b.fault->signal_cycle) << a.fault->message();
    EXPECT_EQ(a.retired, b.retired) << a.fault->message();
    expectEqualEnergy(a, b); // of what retired before the fault
    return;
  }
  expectEqualEnergy(a, b);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.fetch_stall, b.fetch_stall);
  EXPECT_EQ(a.macs, b.macs);
  for (std::size_t e = 0; e < 3; ++e) {
    EXPECT_EQ(a.engines[e].busy, b.engines[e].busy) << a.engines[e].name;
    EXPECT_EQ(a.engines[e].token_stall, b.engines[e].token_stall) << a.engines[e].name;
    EXPECT_EQ(a.engines[e].memory_stall, b.engines[e].memory_stall) << a.engines[e].name;
    EXPECT_EQ(a.engines[e].idle, b.engines[e].idle) << a.engines[e].name;
  }
  if (opts.record_slices) {
    auto sorted = [](std::vector<ember::platform::Slice> v) {
      std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
      return v;
    };
    const auto sa = sorted(a.slices), sb = sorted(b.slices);
    ASSERT_EQ(sa.size(), sb.size());
    for (std::size_t i = 0; i < sa.size(); ++i) {
      const auto &x = sa[i], &y = sb[i];
      ASSERT_TRUE(x.index == y.index && x.dispatch == y.dispatch && x.take == y.take &&
                  x.start == y.start && x.end == y.end && x.memory_stall == y.memory_stall)
          << "instr " << x.index << " " << x.name << ": sim " << x.dispatch << "/" << x.take << "/"
          << x.start << "-" << x.end << ", rtl " << y.dispatch << "/" << y.take << "/" << y.start
          << "-" << y.end;
    }
  }
  EXPECT_TRUE(s.dram == run.result.dram) << "the DRAM windows differ";
}

} // namespace simtest
