// Internal: where every SystemC simulation of this library runs. SystemC has one global
// context per process, so simulations take turns; each gets a fresh context, on a thread
// of its own (docs/robustness.md section 3: SystemC's coroutines leave AddressSanitizer
// with stale stack bounds on the thread that ran them, which must end with the run).
#pragma once

#include <systemc>

#include "PlatformTypes.h"
#include <functional>

namespace ember::sim::detail {

/// Runs `body` (elaborate, sc_start, tear down) in a fresh SystemC context on a new
/// thread, after any other simulation of this process has finished; rethrows what
/// `body` throws.
void inSystemC(const std::function<void()>& body);

/// A module whose one thread calls `fn` (for engines that are not modules themselves).
class ThreadModule : public sc_core::sc_module {
public:
  SC_HAS_PROCESS(ThreadModule);
  ThreadModule(sc_core::sc_module_name name, std::function<void()> fn)
      : sc_module(name), fn_(std::move(fn)) {
    SC_THREAD(run);
  }

private:
  void run() { fn_(); }
  std::function<void()> fn_;
};

} // namespace ember::sim::detail
