// Running NPU binaries from .npy files through a device's job ring (the runtime's
// Device and Session): the run logic of ember-sim and of ember-run's `sim` and `rtl`
// devices, whose mains only parse options and call these.
#pragma once

#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/sim/Platform.h"
#include "ember/sim/Simulator.h"
#include "ember/support/ExitStatus.h"
#include "ember/tensor/Tensor.h"

#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ember::runtime {

/// What to run and where the results go (empty paths: not written).
struct RunRequest {
  std::string binary;                                      ///< BIN.elf
  std::string isa;                                         ///< Description ("": default).
  std::vector<std::pair<std::string, std::string>> inputs; ///< NAME, FILE.npy
  std::map<std::string, Tensor> input_tensors;             ///< NAME -> value already in memory.
  /// Value of an input given neither as a file nor as a tensor (`index`: its position in
  /// the I/O table). Unset: such inputs are all zeros, with a warning.
  std::function<Tensor(const isa::IoEntry&, std::size_t index)> fill_missing;
  std::string out_dir; ///< Outputs as DIR/STEM.npy, STEM = npyFileStem(name).
  std::string report_json, trace_json;
  platform::Options options;
  /// Progress line on stderr when it is a terminal, once the run has taken
  /// kProgressAfterSeconds (a short run prints none).
  bool progress = true;
  std::string device = "sim";     ///< Names the engine in the progress line ("sim", "rtl").
  bool table = true;              ///< Print the report table to `out`.
  std::string tool = "ember-sim"; ///< Names the program in warnings and fault lines.
  /// What runs the job: empty for the SystemC model; `ember-run --device rtl` sets the
  /// Verilated RTL here (the same job, options and result types).
  std::function<platform::Result(const isa::IsaDescription&, const platform::Job&,
                                 const platform::Options&)>
      engine;
  /// The platform of the device a job runs on when it goes through the job ring: empty
  /// for the SystemC platform (with `engine` behind its registers); `ember-run --device
  /// rtl` sets the Verilated RTL's SoC (ember::rtl::RtlPlatform::factory()), so the
  /// firmware runs against the RTL's own register port. `engine` still runs the binaries
  /// of descriptions without a firmware build.
  platform::PlatformFactory platform;
};

/// Host seconds a run takes before its progress line appears (RunRequest::progress); the
/// environment variable EMBER_PROGRESS_AFTER (seconds) overrides it.
inline constexpr double kProgressAfterSeconds = 2.0;

/// What one run produced.
struct RunResult {
  int status = kExitOk; ///< kExitOk (0) done, kExitNpuFault (3) the program faulted.
  platform::Report report;
  std::vector<std::pair<std::string, Tensor>> outputs; ///< In I/O-table order, binary dtype.
  std::vector<isa::IoEntry> io;                        ///< The binary's I/O table.
};

/// Loads the binary, places the inputs, runs, and writes outputs, report and trace. Every
/// run (ember-sim, each --jobs job, ember-run's sim and rtl devices, the Python package)
/// is checked by one function before it reaches a device: inputs, output files, its DRAM
/// window (jobWindowBytes: `options.dram_window_bytes`, else the memory map's extent) and
/// the memory map against it; the firmware's rules then run against the same window. An
/// input must have the entry's logical shape (a rank-2 [N, C] value may feed an entry
/// [N, C, 1, 1]) and hold float32 data or the entry's own integer type (int8 for int8,
/// int32 for int32 and for uint8 entries, whose values must lie in [0, 255]). Float32
/// data for an integer entry is quantized with the entry's scale and zero point as
/// QuantizeLinear does: out-of-range values and ±Inf saturate; NaN is refused. A fault is
/// printed to `err` and gives status kExitNpuFault (3), the tools' exit status for it. Throws
/// ember::Error for bad inputs (missing file, wrong shape or element type, NaN, out-of-range
/// integers, unknown name).
RunResult runBinary(const RunRequest& req, std::ostream& err);

/// runBinary on a binary already in memory (`req.binary` only names it in messages;
/// `req.isa` is ignored: `desc` is the description it was built for).
RunResult runLoadedBinary(const isa::Binary& bin, const isa::IsaDescription& desc,
                          const RunRequest& req, std::ostream& err);

/// ember-sim --jobs: runs `binaries` back to back through the job ring of one device (the
/// runtime: the firmware validates and starts each; docs/firmware.md), prints one line
/// per job (index, binary, status, fault or rule, the NPU's cycles and the platform's)
/// and writes the outputs of job K to `req.out_dir`/K/. Each job is checked and run as
/// runBinary runs a single binary (the same checks, window, cycle budget and firmware
/// rules, so one program gets one verdict); `req.inputs` feed every binary that has an
/// input of that name, and a name no binary has is refused. Every error names the job
/// (`job K (FILE): ...`), before the first job is submitted. Returns kExitOk (0) when
/// every job finished, else the status of the first that did not: kExitBadInput (1) for
/// a job the firmware refused, kExitNpuFault (3) for a fault or a timeout.
int runJobs(const std::vector<std::string>& binaries, const RunRequest& req, std::ostream& out,
            std::ostream& err);

/// runBinary, then the report table to `out` (if `req.table`). Returns the status.
int runAndPrint(const RunRequest& req, std::ostream& out, std::ostream& err);

/// Refuses, before any work, output paths that are folders or inputs (the binary, the
/// description, an input .npy). Output .npy files are checked once the I/O table is read.
void checkOutputs(const RunRequest& req);

/// Parses "NAME=FILE" (throws isa::Error otherwise).
std::pair<std::string, std::string> parseInputArg(const std::string& arg);

} // namespace ember::runtime
