#pragma once
/// \file
/// ember-dse on Dask (docs/dse.md): the points' rows computed by the Python package's
/// engine (python/ember/dse.py, `python3 -m ember.dse run-plan`) on a Dask cluster (a
/// scheduler's address, or a local cluster of --jobs workers), cached by content in a
/// folder every worker shares; `ember-dse search` is that module's Optuna search. The
/// rows come back as the tool's own Result JSON, so the CSV, the page and the table are
/// written by the same code as a local run's.

#include "ember/session/dse/Area.h"
#include "ember/session/dse/Sweep.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ember::dse {

/// How the rows of a sweep are computed on Dask.
struct DaskRequest {
  std::string scheduler; ///< tcp://HOST:PORT, or "" for a local cluster of `jobs` workers
  std::string cache;     ///< the shared cache folder ("" = defaultDseCache())
  unsigned jobs = 1;
  unsigned retries = 2; ///< a point's task is tried again this often (a lost worker)
  bool check = false;
  bool resume = false; ///< say how many rows came from the cache (--resume)
  bool progress = true;
  std::string calibrate = "random:8";
  std::map<std::string, std::vector<int64_t>> inputShapes;
  std::string out; ///< OUT: the plan and the rows go to OUT/.dse
  /// --area: each valid point's area synthesized on a worker (Yosys and the RTL sources
  /// found on that machine, the cache folder shared like `cache`).
  std::optional<AreaRequest> area;
};

/// $XDG_CACHE_HOME/ember/dse, else ~/.cache/ember/dse.
std::string defaultDseCache();

/// The Python that runs the engine ($EMBER_PYTHON, else the one Ember was built for) and
/// the environment it needs (PYTHONPATH with the build's python/ folder first).
std::vector<std::string> pythonCommand();

/// Rows of every (point, model) in point, then model order (Invalid rows for invalid
/// points without a task); `models` holds (ONNX path, name) pairs. With `request.area`,
/// `areas` receives every point's area (indexed like `points`; invalid points Skipped).
/// Throws ember::Error when the engine fails (its message is on stderr).
std::vector<Result> runOnDask(const std::vector<Point>& points,
                              const std::vector<std::pair<std::string, std::string>>& models,
                              const DaskRequest& request, std::vector<PointArea>* areas = nullptr);

/// Replaces this process with `python3 -m ember.dse ARGS` (ember-dse search). Throws
/// ember::Error when the Python cannot be started.
[[noreturn]] void execEngine(const std::vector<std::string>& args);

/// OUT/dse-args.json: the command line of a sweep on Dask, for --resume.
void saveSweepArgs(const std::string& out, const std::vector<std::string>& args);

/// The command line saved in OUT/dse-args.json with `--resume OUT` appended (and
/// `--scheduler ADDR` in place of the saved one when `scheduler` is not empty). Throws
/// ember::Error naming the file when OUT holds no sweep.
std::vector<std::string> resumedArgs(const std::string& out, const std::string& scheduler);

} // namespace ember::dse
