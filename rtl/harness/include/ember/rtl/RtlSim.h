// libember_rtlsim: the Verilated RTL of every description this build verilated, behind
// the same job interface as the SystemC model (ember::sim::Simulator; both take platform::Job), so
// that a tool can run a binary on either and compare them (docs/rtl/npu.md section 5).
#pragma once

#include "ember/isa/description.h"
#include "ember/platform/Job.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::rtl {

/// The descriptions with a Verilated model in this build ("ember-v1", ...).
std::vector<std::string> builtModels();

/// A run of the Verilated NPU; `result.report` has the model's cycles, slices, per-engine
/// counters, fault record, DRAM traffic and energy (the simulator's energy model applied
/// to the instructions the RTL retired and its cycles, isa/energy.h); no per-layer rows.
struct RtlRun {
  platform::Result result;
  std::uint64_t max_inflight_bytes = 0; ///< Most DRAM read bytes in flight at once.
  bool overrun = false;                 ///< A datapath outlived its instruction (an RTL bug).
  bool bus_conflict = false;            ///< Both DMA engines requested in one cycle (a bug).
};

/// The RTL of one description. Throws isa::Error when this build has no Verilated model
/// whose description hash equals `isa`'s (the message says how to verilate one).
class RtlSimulator {
public:
  explicit RtlSimulator(isa::IsaDescription isa);
  const isa::IsaDescription& isa() const { return isa_; }
  /// Runs `job` (built by platform::makeJob) with the same options the SystemC
  /// model takes (cycle budget 0: platform::defaultCycleBudget).
  RtlRun run(const platform::Job& job, const platform::Options& opts = {}) const;

private:
  isa::IsaDescription isa_;
  int model_ = -1;
};

} // namespace ember::rtl
