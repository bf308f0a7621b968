// Internal (ServeTool.cpp): the serving schedule's NPU cycles with every device of a
// system in one simulation, so that devices on a shared DRAM contend for it
// (docs/systems.md sections 4 and 5).
#pragma once

#include "ember/isa/binary.h"
#include "ember/isa/system.h"
#include "ember/session/Serve.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ember::session::detail {

/// Whether any DRAM of `sys` is shared by several devices.
bool hasSharedDram(const isa::SystemDescription& sys);

/// Every device of `sys` runs, from cycle 0 and all together in one simulation
/// (sim::runTogether), the stage it serves: the first stage of `stageDevices` that lists
/// it, whose binary is `stageBinaries[k]` (its inputs zero: the NPU's cycles do not depend
/// on data). Returns each device's NPU cycles and arbitration stall for that stage.
/// Throws ember::NpuFault when a device's run faults (`label` names the program).
JointCycles jointStageCycles(const isa::SystemDescription& sys,
                             const std::vector<const isa::Binary*>& stageBinaries,
                             const std::vector<std::vector<size_t>>& stageDevices,
                             uint64_t cycleBudget, const std::string& label);

/// The contention's lines for ember-run's summary and its report entry
/// ("dram_contention"): per stage its NPU cycles alone (`alone[k]`) and on each of its
/// devices together, the loss in percent and the arbitration stall.
std::string describeContention(const isa::SystemDescription& sys, const JointCycles& joint,
                               const std::vector<std::vector<size_t>>& stageDevices,
                               const std::vector<uint64_t>& alone, nlohmann::json& j);

} // namespace ember::session::detail
