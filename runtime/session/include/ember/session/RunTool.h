#pragma once
/// \file
/// ember-run's application logic, for any client: a model run on the devices of the
/// device table (prepared once, compared, timed, reported), an NPU binary through the
/// runtime, or a package. A client fills RunOptions and calls runTool; the
/// command-line tool only declares its options.

#include "ember/driver/Driver.h"
#include "ember/driver/Partition.h"
#include "ember/session/ServeTool.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ember::session {

/// What to run, on which devices, and what to write (ember-run's options).
struct RunOptions {
  std::string model;
  std::string device = "interp";
  std::vector<std::pair<std::string, std::string>> inputs; // name, file
  std::optional<uint64_t> randomSeed;
  std::string outDir;
  int repeat = 1;
  int iterations = 0; ///< 0: --repeat on the first device, one run on the others.
  int warmup = 0;
  int threads = 0; ///< 0: $EMBER_NUM_THREADS or the devices' defaults.
  size_t top = 0;
  std::string compare;
  std::string precision = "float";
  std::string calibrate = "random:8";
  std::string calibration = "minmax";
  std::string reportJson, traceJson, html, isa;
  partition::PartitionOptions partition;
  driver::InputBindings modelInputs; ///< --input-shape, --bind (and --input's shapes)
  bool deviceGiven = false;
  bool quiet = false;
  std::optional<size_t> profile; ///< --profile [K]: the cpu device's operation times
  /// --cycle-budget N: the NPU devices' (sim, rtl) cycle budget per run or segment; 0: the
  /// program's default budget, as ember-sim (platform::defaultCycleBudget).
  uint64_t cycleBudget = 0;
  /// --requests N and the other serving options: serve the binary or package (ServeTool.h).
  ServeOptions serve;
};

/// Runs `o.model` (an ONNX model, NPU binary or package) as ember-run does: prints the
/// outputs, reports and comparisons to stdout and writes the requested files (every
/// path checked before any work). Returns the exit status (0, or 3 for an NPU fault);
/// throws ember::Error for anything the user can fix.
int runTool(const RunOptions& o);

/// ember-run's help after its options: what a run does with a model, binary or package,
/// examples, input shapes, exit status, and the device table.
std::string runToolHelp();

/// The device table as help text ("devices:" and one "  NAME  DESCRIPTION" line each).
std::string deviceHelp();

} // namespace ember::session
