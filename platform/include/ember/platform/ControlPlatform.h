// The NPU with its control core as the host drives it, whatever implements it (the
// SystemC platform of simulator/, the Verilated RTL's register port of rtl/harness): the
// control core's bus, the job engine behind CTRL.START, and the factory a device uses to
// make its platform (docs/firmware.md section 6).
#pragma once

#include "ember/isa/description.h"
#include "ember/platform/Job.h"
#include "ember/platform/Report.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace ember::platform {

/// The control core's view of the platform while its program runs.
class CoreBus {
public:
  /// A register read: one TLM-2.0 transaction to the register block, which takes
  /// hardware.control.register_access_cycles. Throws isa::Error for an offset that names
  /// no register of the description's map (a bus error).
  virtual std::uint32_t read(std::uint32_t offset) = 0;
  /// A register write, as `read`.
  virtual void write(std::uint32_t offset, std::uint32_t value) = 0;
  /// Sleeps until the NPU's interrupt (DONE or FAULT with CTRL.IRQ_EN) or the next tick
  /// of the core's timer (hardware.control.tick_cycles), whichever comes first.
  virtual void idle() = 0;
  /// The platform clock: cycles simulated since the platform was made.
  virtual std::uint64_t now() const = 0;
  /// The core's own instructions: lets `cycles` platform cycles pass with no bus traffic
  /// (the firmware's work charged at the description's hardware.control costs).
  virtual void spend(std::uint64_t cycles) = 0;

protected:
  ~CoreBus() = default;
};

/// What runs a job that CTRL.START starts: empty for the SystemC cycle engine, live in the
/// platform's simulation; otherwise a function that runs the whole job at once (the
/// Verilated RTL), whose outcome the platform then plays back: STATUS shows BUSY and
/// CYCLES counts until the job's cycles have passed.
using JobEngine = std::function<Result(const isa::IsaDescription&, const Job&, const Options&)>;

/// Called when CTRL.START starts a job, before it runs: the host adds what the registers
/// do not carry (the debug map for per-layer reports, a progress callback, the engine's
/// own cycle budget, whether to keep slices). The window size in `opts` is the
/// registers' and is kept whatever the hook does.
using JobPrepare = std::function<void(Job& job, Options& opts)>;

/// The NPU with its control core as the runtime drives it: the SystemC platform below,
/// or the Verilated RTL's own register port (ember::rtl::RtlPlatform). Both run the same
/// control-core program through the same CoreBus and must agree cycle for cycle
/// (docs/firmware.md section 6).
class ControlPlatform {
public:
  virtual ~ControlPlatform() = default;
  /// Runs `program` as the control core until it returns; rethrows what it throws.
  /// Registers and the platform clock carry over from one call to the next (in between
  /// the core sleeps and no time passes).
  virtual void run(const std::function<void(CoreBus&)>& program) = 0;
  /// The report of the last job that ended (DONE or FAULT), handed out once.
  virtual std::optional<Report> takeReport() = 0;
  /// Jobs CTRL.START has started since the platform was made.
  virtual std::uint64_t starts() const = 0;
  /// The platform clock (cycles simulated by every run so far).
  virtual std::uint64_t cycles() const = 0;
  virtual const isa::IsaDescription& isa() const = 0;
};

/// Makes the platform of a device: its description, device DRAM (`dram`, `dram_bytes`:
/// a started job's window and text are read from it, its writes go into it) and the
/// host's hook on every started job.
using PlatformFactory = std::function<std::unique_ptr<ControlPlatform>(
    const isa::IsaDescription& isa, std::uint8_t* dram, std::uint64_t dram_bytes,
    JobPrepare prepare)>;

} // namespace ember::platform
