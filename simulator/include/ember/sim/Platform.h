// The NPU with its control core, as one SystemC simulation (docs/firmware.md section 6):
// a control core that runs a program (the firmware, handed in by the runtime) as a
// SystemC thread, a register block that follows the description's register map and is
// reached from the core through TLM-2.0 transactions, and the NPU's cycle engine, which
// CTRL.START sets running in the same simulated time. The firmware's register traffic,
// its sleeps and the NPU's work all take simulated cycles, so the cost of going through
// the job ring is measured, not assumed. Device DRAM belongs to the caller.
#pragma once

#include "ember/isa/description.h"
#include "ember/platform/ControlPlatform.h"
#include "ember/sim/Simulator.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace ember::sim {

/// The SystemC platform (docs/firmware.md section 6).
class Platform : public platform::ControlPlatform {
public:
  /// `dram` is device DRAM of `dram_bytes`: a started job's window is read from it, a
  /// finished job's writes go back into it. Throws isa::Error if the description lacks a
  /// register the platform implements (CTRL, STATUS, ..., listed in docs/firmware.md).
  Platform(isa::IsaDescription isa, std::uint8_t* dram, std::uint64_t dram_bytes,
           platform::JobEngine engine = {}, platform::JobPrepare prepare = {});
  ~Platform() override;
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  /// Runs `program` as the control core's thread, in a SystemC simulation of its own,
  /// until it returns; rethrows what it throws. Registers and the platform clock carry
  /// over from one call to the next (in between the core sleeps and no time passes). A
  /// job still running when the program returns is stopped as by CTRL.RESET.
  void run(const std::function<void(platform::CoreBus&)>& program) override;

  std::optional<platform::Report> takeReport() override;
  std::uint64_t starts() const override;
  std::uint64_t cycles() const override;
  const isa::IsaDescription& isa() const override;

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace ember::sim
