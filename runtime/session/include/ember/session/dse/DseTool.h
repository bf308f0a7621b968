#pragma once
/// \file
/// ember-dse's application logic, for any client: the points of a sweep (axes over a base
/// description, or seeded random ones) run over ONNX models locally (child processes) or
/// on Dask, their area from the RTL, and the outputs (CSV, HTML page, table). A client
/// fills DseOptions and calls dseTool; the command-line tool only declares its options.

#include "ember/driver/Driver.h"
#include "ember/session/dse/Area.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::dse {

/// What to sweep, how, and where to write it (ember-dse's options).
struct DseOptions {
  std::vector<std::string> models;
  std::string base; ///< The base description ("" = the default description).
  std::vector<std::string> axes;
  unsigned random = 0;
  std::uint64_t seed = 1;
  std::vector<std::string> minKib;
  std::uint64_t maxKib = 4096;
  int minArray = 4, maxArray = 64;
  bool keepEncoding = false;
  bool check = false;
  std::string out = "dse-out";
  unsigned jobs = 1;
  std::string calibrate = "random:8";
  bool noTable = false, noProgress = false;
  bool area = false;
  AreaRequest areaRequest;
  driver::InputBindings inputs; ///< --input-shape, for every model
  std::string scheduler;        ///< --scheduler: rows on that Dask cluster ("local": a local one)
  std::string cache;            ///< --cache: the rows' cache (implies the Dask engine)
  std::string resume;           ///< --resume OUT
  unsigned retries = 2;
};

/// Runs the sweep `o` as ember-dse does: writes OUT/descriptions, OUT/dse.csv and
/// OUT/dse.html (and OUT/area with --area), prints the table and a summary. `args` is the
/// command line as given, saved with a Dask sweep for --resume. Returns the exit status;
/// throws ember::Error for anything the user can fix (UsageError for the command line),
/// and with `check` when a row is not bit-exact or did not compile or run.
int dseTool(const DseOptions& o, const std::vector<std::string>& args);

/// `--resume OUT [--scheduler ADDR]` in `args`: OUT's saved command line instead (with
/// that scheduler); other arguments beside --resume are a UsageError. `args` unchanged
/// without --resume.
std::vector<std::string> resumeIfAsked(const std::vector<std::string>& args);

/// ember-dse's help after its options: how a sweep runs, examples, exit status, axes.
std::string dseHelp();

} // namespace ember::dse
