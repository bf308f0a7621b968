// The RTL platform: the control core's bus on the Verilated SoC (rtl/src/ember_soc.sv:
// the generated register block ember_regs in front of the hand-written NPU), the same
// interface as the SystemC platform (ember/sim/Platform.h), so the same firmware runs
// against the RTL's own register port (docs/rtl/npu.md section 5.5, docs/firmware.md
// section 6).
#pragma once

#include "ember/isa/description.h"
#include "ember/platform/ControlPlatform.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ember::rtl {

/// The descriptions with a Verilated SoC in this build ("ember-v1", ...).
std::vector<std::string> builtSocModels();

/// The Verilated SoC of one description (found by description hash), one model per
/// platform, persisting across jobs and runs. Its CoreBus: a register access drives the
/// SoC's register port in cycle now() and lets register_access_cycles pass; idle() clocks
/// until the SoC's IRQ or the next multiple of tick_cycles. A CTRL.START write first
/// loads the job's instruction words from device DRAM (INSN_BASE, INSN_COUNT) into the
/// NPU's instruction buffer through its prog_* port, a backdoor that takes no platform
/// cycles, and sets the NPU's cycle budget (`prepare`'s, else
/// platform::defaultCycleBudget). The NPU's DRAM port is served with the
/// description's latency from device DRAM at DRAM_BASE + the NPU's address; its writes go
/// straight there. A job's report (cycles, slices, counters, fault record) is handed out
/// by takeReport once DONE or FAULT shows.
class RtlPlatform : public platform::ControlPlatform {
public:
  /// Throws isa::Error when this build has no Verilated SoC of `isa`.
  RtlPlatform(isa::IsaDescription isa, std::uint8_t* dram, std::uint64_t dram_bytes,
              platform::JobPrepare prepare = {});
  ~RtlPlatform() override;
  RtlPlatform(const RtlPlatform&) = delete;
  RtlPlatform& operator=(const RtlPlatform&) = delete;

  /// Runs `program` as the control core until it returns (on the caller's thread).
  void run(const std::function<void(platform::CoreBus&)>& program) override;
  std::optional<platform::Report> takeReport() override;
  std::uint64_t starts() const override;
  std::uint64_t cycles() const override;
  const isa::IsaDescription& isa() const override;

  /// A factory for runtime::Device::Options::platform.
  static platform::PlatformFactory factory();

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace ember::rtl
