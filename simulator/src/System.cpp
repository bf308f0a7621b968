// Several NPUs in one SystemC simulation (docs/systems.md section 5): one thread steps
// every device's cycle engine (Npu.cpp) in the same simulated time; the engines of the
// devices attached to one DRAM book a single channel, in the order of rule M3 when
// several evaluate the same cycle.
#include "ember/sim/System.h"

#include "Context.h"
#include "Machine.h"
#include "Npu.h"
#include "Run.h"
#include "ember/isa/timing.h"
#include "ember/sim/Simulator.h"

#include <systemc>

#include "PlatformTypes.h"
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>

namespace ember::sim {

namespace {

using u64 = std::uint64_t;

/// One device of the joint run: its state, machine and engine.
struct Device {
  Device(const DeviceJob& j, u64 budget)
      : job(j), st(*j.isa, j.job),
        machine(*j.isa, job.job.dram,
                j.options.dram_window_bytes ? j.options.dram_window_bytes
                                            : j.isa->hw().dram.size_bytes),
        npu(*j.isa, job.job, job.options, budget, machine, st) {}
  const DeviceJob& job;
  detail::RunState st;
  detail::Machine machine;
  detail::Npu npu;
  std::optional<u64> next; ///< The next cycle it evaluates, none once ended.
  u64 bookings = 0;
};

/// One DRAM: its channel, its devices in their listed order, the round-robin pointer.
struct Dram {
  Arbitration policy = Arbitration::RoundRobin;
  isa::timing::Channel channel;
  std::vector<std::size_t> devices;
  std::size_t pointer = 0; ///< M3: the position that goes first (round-robin).
};

u64 budgetOf(const DeviceJob& d) {
  return d.options.cycle_budget ? std::min(d.options.cycle_budget, platform::kMaxCycleBudget)
                                : platform::defaultCycleBudget(*d.isa, d.job);
}

/// Evaluates cycle `c` of every device of `dram` that has an event in it, in the order
/// of rule M3, and moves the round-robin pointer past the last one that booked.
void stepDram(Dram& dram, std::vector<std::unique_ptr<Device>>& devs, u64 c) {
  const std::size_t n = dram.devices.size();
  const std::size_t first = dram.policy == Arbitration::RoundRobin ? dram.pointer : 0;
  std::optional<std::size_t> lastBooker;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t pos = (first + k) % n;
    Device& d = *devs[dram.devices[pos]];
    if (!d.next || *d.next != c)
      continue;
    d.next = d.npu.step(c);
    if (d.npu.bookedChannel()) {
      ++d.bookings;
      lastBooker = pos;
    }
  }
  if (lastBooker)
    dram.pointer = (*lastBooker + 1) % n;
}

void simulate(std::vector<std::unique_ptr<Device>>& devs, std::vector<Dram>& drams) {
  const u64 unit = sc_core::sc_time(1, sc_core::SC_NS).value();
  for (auto& d : devs)
    d->next = d->npu.begin();
  u64 at = 0;
  for (;;) {
    std::optional<u64> c;
    for (auto& d : devs)
      if (d->next)
        c = c ? std::min(*c, *d->next) : *d->next;
    if (!c)
      return;
    if (*c > at)
      sc_core::wait(sc_core::sc_time::from_value((*c - at) * unit));
    at = *c;
    for (Dram& dram : drams)
      stepDram(dram, devs, at);
  }
}

} // namespace

Arbitration arbitrationFromName(const std::string& name) {
  if (name == "round-robin")
    return Arbitration::RoundRobin;
  if (name == "fixed-priority")
    return Arbitration::FixedPriority;
  throw std::invalid_argument("unknown DRAM arbitration '" + name +
                              "' (round-robin or fixed-priority)");
}

std::vector<DeviceOutcome> runTogether(std::vector<DeviceJob> jobs,
                                       const std::vector<Arbitration>& policies) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Dram> drams(policies.size());
  for (std::size_t i = 0; i < policies.size(); ++i)
    drams[i].policy = policies[i];
  std::vector<u64> budgets(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].isa)
      throw std::invalid_argument("runTogether: device " + std::to_string(i) +
                                  " has no description");
    if (jobs[i].dram >= drams.size())
      throw std::invalid_argument("runTogether: device " + std::to_string(i) + " names DRAM " +
                                  std::to_string(jobs[i].dram) + " of " +
                                  std::to_string(drams.size()));
    Simulator check(*jobs[i].isa); // refuses a description this model cannot run
    drams[jobs[i].dram].devices.push_back(i);
    budgets[i] = budgetOf(jobs[i]);
  }
  // A device waits at most for the others' transfers on its DRAM, each within its own
  // budget: the joint default budget is their sum (an explicit budget is kept).
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (!jobs[i].options.cycle_budget)
      for (std::size_t j : drams[jobs[i].dram].devices)
        if (j != i)
          budgets[i] = std::min(platform::kMaxCycleBudget, budgets[i] + budgetOf(jobs[j]));
  std::vector<DeviceOutcome> out(jobs.size());
  std::vector<std::unique_ptr<Device>> devs;
  detail::inSystemC([&] {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      devs.push_back(std::make_unique<Device>(jobs[i], budgets[i]));
      devs.back()->npu.shareChannel(drams[jobs[i].dram].channel);
    }
    detail::ThreadModule top("system", [&] { simulate(devs, drams); });
    try {
      sc_core::sc_start();
    } catch (const std::exception& ex) {
      for (auto& d : devs)
        if (!d->st.fault && d->next)
          d->st.fault = Fault{FaultKind::BadOperand, d->npu.now(), "npu", -1,
                              std::string("internal error: ") + ex.what()};
    }
    for (std::size_t i = 0; i < devs.size(); ++i) {
      Device& d = *devs[i];
      if (d.st.fault)
        d.st.last_cycle = std::max(d.st.last_cycle, d.st.fault->cycle);
      out[i].arbitration_stall = d.npu.arbitrationStall();
      out[i].channel_bookings = d.bookings;
      out[i].result.dram = d.machine.dram().takeImage();
    }
    const double host =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (std::size_t i = 0; i < devs.size(); ++i)
      out[i].result.report = devs[i]->st.finish(*jobs[i].isa, host);
    devs.clear();
  });
  return out;
}

} // namespace ember::sim
