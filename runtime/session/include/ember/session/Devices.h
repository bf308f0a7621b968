#pragma once
/// \file
/// The devices `ember-run` can run a model on, as a table: a device is a name, a
/// one-line description and a function that runs a function of the imported model on
/// inputs. Every registered compiler backend that executes (interp, cpu when built) is a
/// row; `sim` compiles the quantized function for the NPU and runs the binary on the
/// cycle-accurate simulator. `--compare` works for any list of rows.

#include "ember/backend/Backend.h"
#include "ember/driver/Execute.h"
#include "ember/driver/NpuBackend.h"
#include "ember/driver/Partition.h"
#include "ember/platform/Report.h"
#include "ember/runtime/Run.h"
#include "ember/sim/Platform.h"
#include "ember/sim/Simulator.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ember::session {

/// Settings some devices read (the NPU's description, report files).
struct DeviceOptions {
  std::string isa;        ///< NPU description ("" = isa/ember-v1.json).
  std::string reportJson; ///< sim: write the JSON report here ("" = not written).
  std::string traceJson;  ///< sim: write the Chrome trace here ("" = not written).
  /// sim/rtl: how the model is split between the NPU and the host.
  partition::PartitionOptions partition;
  /// cpu: time every operation (DeviceTiming::profile; CpuOptions::profile).
  bool profile = false;
  /// Runs before the timed ones (left out of DeviceTiming::profile).
  int warmup = 0;
  /// sim/rtl: the NPU's cycle budget per segment (0: the program's default budget,
  /// platform::defaultCycleBudget); past it the run faults with cycle-budget.
  std::uint64_t cycleBudget = 0;
};

/// One operation of a profiled host run.
struct OpTime {
  std::string name, kind;
  double seconds = 0; ///< mean wall time over the runs after the warm-up ones
};

/// Timing of one device run (seconds), filled by the device.
struct DeviceTiming {
  double prepareSeconds = 0;           ///< compile / load / lower for the device
  std::vector<double> runSeconds;      ///< wall time, one entry per repetition
  std::vector<double> runCpuSeconds;   ///< process CPU time, one entry per repetition
  std::optional<platform::Report> npu; ///< sim: the simulation report of the last run
  std::string compileSummary;          ///< sim: the NPU compiler's summary table (whole plans)
  std::string placement;               ///< sim: the placement's one-line summary
  std::string placementReport;         ///< sim: the placement, node by node
  std::string segmentTable;            ///< sim: per-segment figures (partitioned plans)
  std::vector<platform::Report> npuSegments; ///< sim: every NPU segment's report, in order
  std::vector<OpTime> profile;               ///< cpu with DeviceOptions::profile, program order
};

/// One row of the device table.
struct Device {
  std::string name;
  std::string description;
  bool int8Only = false; ///< Runs only quantized functions (the NPU).
  /// Prepares `f` for the device, runs it `repeat` (>= 1) times on `inputs` and returns
  /// the outputs of the last run (float32 outputs of a quantized function are dequantized
  /// exactly as its DequantizeLinear nodes do). Throws ember::Error for anything the
  /// user can fix (unsupported nodes are all listed at once).
  std::function<TensorMap(const Function& f, const TensorMap& inputs, int repeat,
                          const DeviceOptions& opts, DeviceTiming& timing)>
      run;
};

/// What runs an NPU job on device `device`: an empty request for "sim" (the SystemC model
/// and platform), the RTL's engine and SoC platform for "rtl" (builds with the RTL);
/// UsageError for any other name.
runtime::RunRequest npuEngine(const std::string& device);

/// True if `path` starts with the ELF magic: an NPU binary rather than a model or package.
bool isNpuBinaryFile(const std::string& path);

/// Runs NPU segments' binaries through the runtime on `engine` (sim: an empty request;
/// rtl: the RTL's engine and platform; its progress flag and tool name are kept too),
/// appending each segment's report to `reports`
/// (which must outlive the runner). `label` names the model in messages. Only a whole
/// plan's run writes `opts.reportJson` / `traceJson` here; a partitioned plan's one
/// report is writePlanReports' (PlanReport.h), after every segment ran. A segment with
/// its own description (Segment::isa: a system of unequal devices) runs on that one,
/// every other on `desc`.
partition::NpuRunner npuSegmentRunner(const std::string& device, const runtime::RunRequest& engine,
                                      const isa::IsaDescription& desc, const DeviceOptions& opts,
                                      const std::string& label, bool whole,
                                      std::vector<platform::Report>& reports);

#ifdef EMBER_HAVE_RTL
/// The job runner of the `rtl` device (the Verilated NPU), for binaries too.
std::function<platform::Result(const isa::IsaDescription&, const platform::Job&,
                               const platform::Options&)>
rtlEngine();
/// The platform of the `rtl` device's runtime devices: the Verilated SoC, whose register
/// port the firmware drives (ember::rtl::RtlPlatform).
platform::PlatformFactory rtlPlatform();
#endif

/// Registers the executing NPU backend with the compiler's registry as "npu" (the first
/// call; later calls do nothing): it compiles whole functions for the description
/// `EMBER_ISA` names (else isa/ember-v1.json) and runs the binaries through the runtime
/// on the SystemC platform. After it, `createBackend("npu")` works like "interp" and
/// "cpu"; devices() calls it.
void registerNpuBackend();

/// Every device of this build, in the order `--help` lists them.
const std::vector<Device>& devices();

/// The device called `name`; throws ember::Error listing the known names.
const Device& findDevice(const std::string& name);

} // namespace ember::session
