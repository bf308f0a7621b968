// Running an NPU binary on the simulator from .npy files: shared by ember-sim and the
// `sim` device of ember-run.
#pragma once

#include "ember/isa/description.h"
#include "ember/sim/Simulator.h"

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace ember::simrun {

/// What to run and where the results go (empty paths: not written).
struct SimRunRequest {
  std::string binary;                                      ///< BIN.elf
  std::string isa;                                         ///< Description ("": default).
  std::vector<std::pair<std::string, std::string>> inputs; ///< NAME, FILE.npy
  std::string out_dir;                                     ///< Outputs as NAME.npy.
  std::string report_json, trace_json;
  sim::Options options;
  bool progress = true; ///< Progress line on stderr when it is a terminal.
  bool table = true;    ///< Print the report table to `out`.
};

/// Loads, runs, writes outputs/report/trace and prints the table. Returns the exit
/// status: 0 done, 3 the program faulted (the fault is printed to `err`). Throws
/// isa::Error / ember::Error for bad inputs (missing file, wrong shape, ...).
int runBinaryOnSim(const SimRunRequest& req, std::ostream& out, std::ostream& err);

/// Parses "NAME=FILE" (throws isa::Error otherwise).
std::pair<std::string, std::string> parseInputArg(const std::string& arg);

} // namespace ember::simrun
