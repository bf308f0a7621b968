// The simulator's entry points: elaborate a fresh SystemC context per run, place the
// job's DRAM image, run the NPU module (Npu.cpp: the cycle engine of the timing contract)
// and build the report.
#include "ember/sim/Simulator.h"
#include "ember/isa/roles.h"
#include "ember/platform/Io.h"

#include "Context.h"
#include "Machine.h"
#include "Npu.h"
#include "Run.h"
#include "ember/isa/error.h"
#include "ember/isa/timing.h"
#include "ember/support/Error.h"

#include <systemc>

#include "PlatformTypes.h"
#include <chrono>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

// libsystemc.so refers to sc_main (its own main() calls it). Ember's programs have their
// own main, so a weak definition satisfies the linker; a program that defines sc_main
// wins.
extern "C" __attribute__((weak)) int sc_main(int, char**) {
  return 1;
}

namespace ember::sim {

namespace {

using u64 = std::uint64_t;

void checkShapes(const isa::IsaDescription& isa) {
  const auto& hw = isa.hw();
  auto fail = [&](const std::string& why) { throw isa::Error(isa.file(), "/hardware", why); };
  for (const char* m : {isa::mem::kAct, isa::mem::kWeight, isa::mem::kAcc, isa::mem::kParam})
    if (!isa.findMemory(m))
      fail(std::string("the simulator needs an SRAM named '") + m + "'");
  const auto& act = isa.memory(isa::mem::kAct);
  const auto& acc = isa.memory(isa::mem::kAcc);
  const auto& wgt = isa.memory(isa::mem::kWeight);
  const auto& par = isa.memory(isa::mem::kParam);
  if (act.elem_bits != 8 || wgt.elem_bits != 8 || acc.elem_bits != 32 || par.elem_bits != 32)
    fail("act and weight hold 8-bit elements, acc and param 32-bit ones");
  if (act.lanes() != hw.mac.rows)
    fail("act row lanes (" + std::to_string(act.lanes()) + ") != mac_array.rows (" +
         std::to_string(hw.mac.rows) + ")");
  if (acc.lanes() != hw.mac.cols)
    fail("acc row lanes (" + std::to_string(acc.lanes()) + ") != mac_array.cols (" +
         std::to_string(hw.mac.cols) + ")");
  if (wgt.row_bytes != u64(hw.mac.rows) * hw.mac.cols)
    fail("weight row bytes != mac_array.rows * cols");
  if (hw.vector.lanes != act.lanes() || hw.vector.lanes != acc.lanes() ||
      hw.vector.lanes != par.lanes())
    fail("vector.lanes must equal the lanes of act, acc and param rows");
}

} // namespace

namespace detail {
namespace {
thread_local bool insideSystemC = false; // this thread runs a simulation
} // namespace

void inSystemC(const std::function<void()>& body) {
  if (insideSystemC)
    throw InternalError("<simulator>", "a SystemC simulation cannot start inside another (an "
                                       "engine of the platform must not use the SystemC model)");
  static std::mutex oneAtATime;
  std::lock_guard<std::mutex> turn(oneAtATime);
  static bool once = [] {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
    return true;
  }();
  (void)once;
  std::exception_ptr error;
  std::thread sim([&] {
    insideSystemC = true;
    auto* ctx = new sc_core::sc_simcontext();
    sc_core::sc_curr_simcontext = ctx;
    sc_core::sc_default_global_context = ctx;
    try {
      body();
    } catch (...) {
      error = std::current_exception();
    }
    delete ctx;
    sc_core::sc_curr_simcontext = nullptr;
    sc_core::sc_default_global_context = nullptr;
  });
  sim.join();
  if (error)
    std::rethrow_exception(error);
}
} // namespace detail

Simulator::Simulator(isa::IsaDescription isa) : isa_(std::move(isa)) {
  checkShapes(isa_);
}

Result Simulator::run(const Job& job, const Options& opts) const {
  auto t0 = std::chrono::steady_clock::now();
  Result res;
  detail::RunState st(isa_, job);
  if (opts.record_slices) // one per retired instruction: no reallocation while it runs
    st.slices.reserve(std::size_t(st.instructions));
  const u64 budget = opts.cycle_budget ? std::min(opts.cycle_budget, kMaxCycleBudget)
                                       : platform::defaultCycleBudget(isa_, job);
  detail::inSystemC([&] {
    detail::Machine machine(isa_, job.dram,
                            opts.dram_window_bytes ? opts.dram_window_bytes
                                                   : isa_.hw().dram.size_bytes);
    {
      detail::Npu npu(isa_, job, opts, budget, machine, st);
      detail::ThreadModule top("npu", [&] { npu.run(); });
      try {
        sc_core::sc_start();
      } catch (const std::exception& ex) {
        if (!st.fault)
          st.fault = Fault{FaultKind::BadOperand, npu.now(), "npu", -1,
                           std::string("internal error: ") + ex.what()};
      }
      if (st.fault)
        st.last_cycle = std::max(st.last_cycle, st.fault->cycle);
    }
    res.dram = machine.dram().takeImage();
  });
  double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.report = st.finish(isa_, host);
  return res;
}

Result Simulator::run(const isa::Binary& bin,
                      const std::map<std::string, std::vector<std::uint8_t>>& inputs,
                      const Options& opts) const {
  return run(platform::makeJob(isa_, bin, inputs, opts.dram_window_bytes, opts.binary_name), opts);
}

} // namespace ember::sim
