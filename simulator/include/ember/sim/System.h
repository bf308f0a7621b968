// libember_sim: several NPUs in one SystemC simulation, the devices attached to one DRAM
// taking turns on its channel (docs/systems.md section 5, rules M1-M4).
#pragma once

#include "ember/isa/description.h"
#include "ember/platform/Job.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember::sim {

/// Which device's DMA books a shared DRAM channel first when several start in one cycle
/// (rule M3): `RoundRobin` from the device after the one that booked last,
/// `FixedPriority` in the order the devices are listed.
enum class Arbitration { RoundRobin, FixedPriority };

/// Parses a system file's arbitration name ("round-robin", "fixed-priority"); throws
/// std::invalid_argument naming it otherwise.
Arbitration arbitrationFromName(const std::string& name);

/// One device's job in a joint run.
struct DeviceJob {
  const isa::IsaDescription* isa = nullptr; ///< Its description (outlives the run).
  platform::Job job;
  platform::Options options; ///< cycle_budget 0: the joint default (runTogether).
  std::size_t dram = 0;      ///< Index of its DRAM in runTogether's `drams`.
};

/// One device's outcome: the report its engine alone would give, timed with the other
/// devices' DMAs on its DRAM, and its waits for them.
struct DeviceOutcome {
  platform::Result result;
  /// Cycles this device's DMAs waited for the channel while another device held it
  /// (rule M4): part of its engines' memory stall. 0 on a private DRAM.
  std::uint64_t arbitration_stall = 0;
  /// Cycles in which this device booked the DRAM channel (a load and a store booking in
  /// the same cycle count once, as the RTL pair counts them).
  std::uint64_t channel_bookings = 0;
};

/// Runs every device's job from cycle 0 in one SystemC simulation, one cycle engine per
/// device (the timing contract of docs/simulator.md section 2 each), the devices whose
/// `dram` is the same index booking one channel under `drams[index]`'s arbitration. A
/// device alone on its DRAM gives exactly Simulator::run's report. A fault ends that
/// device's run only. The DRAM windows stay the devices' own (a shared DRAM's devices
/// use disjoint windows of it): only timing is shared. Throws std::invalid_argument for
/// a `dram` index out of range or a device without a description, and isa::Error for a
/// description the simulator cannot run, like Simulator's constructor.
std::vector<DeviceOutcome> runTogether(std::vector<DeviceJob> devices,
                                       const std::vector<Arbitration>& drams);

} // namespace ember::sim
