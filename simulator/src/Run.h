// Internal: the state one run accumulates (shared by the SystemC model and the report).
#pragma once

#include "Machine.h"
#include "ember/isa/energy.h"
#include "ember/platform/Layers.h"
#include "ember/platform/Report.h"
#include "ember/sim/Simulator.h"

#include "PlatformTypes.h"
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ember::sim::detail {

/// Everything a run measures, filled by the engines.
struct RunState {
  explicit RunState(const isa::IsaDescription& isa, const Job& job);

  std::uint64_t instructions = 0, retired = 0;
  std::uint64_t last_cycle = 0;
  std::array<std::uint64_t, 3> busy{}, token_stall{}, memory_stall{}, count{};
  std::uint64_t fetch_stall = 0;
  /// Energy and traffic of the retired instructions (the model the RTL shares).
  isa::energy::Meter meter;
  std::vector<Slice> slices;
  /// Per-layer sums (the same accounting as the RTL harness's).
  platform::LayerAccounts layers;
  std::optional<Fault> fault;

  /// Accounts one retired instruction.
  void retire(const isa::IsaDescription& isa, const isa::Instruction& insn, const Counts& c,
              Slice s, bool keepSlice);
  /// Builds the report at the end of the run; the slices move into it (one per retired
  /// instruction: too many to copy), so `slices` is empty after.
  Report finish(const isa::IsaDescription& isa, double hostSeconds);
};

} // namespace ember::sim::detail
