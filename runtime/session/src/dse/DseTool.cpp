// ember-dse's flow (DseTool.h): the points, their rows (child processes or Dask), the
// area, and the outputs; the tool's main only declares the options.
#include "ember/session/dse/DseTool.h"

#include "ember/session/dse/Distributed.h"
#include "ember/session/dse/Points.h"
#include "ember/session/dse/Report.h"
#include "ember/session/dse/Space.h"
#include "ember/session/dse/Sweep.h"

#include "ember/isa/description.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace ember::dse {

namespace {

const char* kFooter =
    R"(Each MODEL is imported and quantized once (random:8 calibration and minmax, as emberc and
ember-run do, so figures match `ember-run --precision int8 --device sim`); then every point
(one NPU description) is validated, each model compiled for it with fallback none and run
on the cycle-accurate simulator with random inputs (seed 1, as --random-input 1). An
invalid description, a model the NPU cannot run whole, a fault: each is a row with its
reason, not the end of the sweep. Points are the cross product of the --axis values over
--base, or --random N descriptions drawn around it. Every point's description is written
to OUT/descriptions/pN.json; the rows go to OUT/dse.csv and OUT/dse.html (one page, no
network: cycles against energy per model with the Pareto front, MAC utilisation, the
table) and to the terminal. Points run in child processes, --jobs at a time.

--area adds the NPU's area per valid point: its SystemVerilog package and decoder are
generated (as `ember-isa gen` does) and rtl/cmake/area.py runs Yosys' generic synthesis
of the hand-written NPU (rtl/src, top ember_npu, SRAMs as black boxes): generic cells,
flip-flops and SRAM bits go to the table, the CSV (and OUT/area/pN.json per point) and
the page, with the front of cycles, logic and SRAM. Seconds to minutes of Yosys per point
(--jobs at a time); results are cached by a hash of the description, the generated and
hand-written RTL, area.py and Yosys' version (--area-cache), so a sweep run again
synthesizes nothing it synthesized before.

--scheduler tcp://HOST:PORT computes the rows on a Dask cluster instead (workers started
with `python3 -m distributed.cli.dask_worker ADDR --nthreads 1`, each importing the ember
package): every (point, model) is a task, cached by a hash of the description, the model
file, the options and Ember's build in --cache (a folder every worker reads and writes);
a lost worker's tasks run again elsewhere; the CSV, page and table are those of a local
run. --scheduler local (or --cache alone) uses a local cluster of --jobs workers.
--resume OUT continues such a sweep after an interruption (rows done come from the cache).
`ember-dse search MODEL... --axis ... --trials N` runs Optuna's NSGA-II over the axes
(minimising cycles, energy and SRAM bytes) on the same engine (ember-dse search --help).

examples:
  ember-dse resnet18.onnx --axis array=8,16,32 --axis weight_kib=128,256 --out sweep/
  ember-dse m.onnx --axis /hardware/dma/latency_cycles=50,100,200 --jobs 2
  ember-dse a.onnx b.onnx --random 20 --seed 7 --check --out random/
  ember-dse m.onnx --axis array=4,8,16 --area --jobs 2 --out area/

A model the compiler refuses for a point's sizes (an SRAM too small for any tiling, or a
program over the compiler's instruction limit) is tried again on that point with its
SRAMs grown until it compiles; the row is then "too-small" and its message names the
sizes at which it compiles (each SRAM halved back while it still does).

exit status: 0 when the sweep ran (failed rows are rows); with --check, 1 when any row
is not bit-exact with the int8 interpreter or did not compile or run (each named with
its description file and a command reproducing it; "too-small" rows are refusals with
their figures, not failures); 1 on bad input (unreadable model,
invalid base description); 2 on a bad command line (unknown axis, a JSON pointer the
base lacks, a value that is not a number).
)";

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

dse::PointOptions pointOptions(const DseOptions& o) {
  dse::PointOptions p;
  p.axes = o.axes;
  p.random = o.random;
  p.seed = o.seed;
  p.minKib = o.minKib;
  p.maxKib = o.maxKib;
  p.minArray = o.minArray;
  p.maxArray = o.maxArray;
  p.keepEncoding = o.keepEncoding;
  return p;
}

/// The progress line on a terminal (stderr).
Progress progressLine(const DseOptions& o, std::chrono::steady_clock::time_point t0) {
  if (o.noProgress || !isatty(fileno(stderr)))
    return {};
  return [t0](std::size_t done, std::size_t total, std::size_t running) {
    std::fprintf(stderr, "\r[dse] %zu/%zu points done, %zu running, %.0f s", done, total, running,
                 secondsSince(t0));
    if (done == total)
      std::fprintf(stderr, "\r%60s\r", "");
    std::fflush(stderr);
  };
}

/// The area phase's progress line on a terminal (stderr).
AreaProgress areaProgressLine(const DseOptions& o, std::chrono::steady_clock::time_point t0) {
  if (o.noProgress || !isatty(fileno(stderr)))
    return {};
  return [t0](std::size_t done, std::size_t total, std::size_t cached, std::size_t running) {
    std::fprintf(stderr,
                 "\r[dse] area: %zu/%zu points done (%zu from the cache), %zu in Yosys, %.0f s",
                 done, total, cached, running, secondsSince(t0));
    if (done == total)
      std::fprintf(stderr, "\r%78s\r", "");
    std::fflush(stderr);
  };
}

/// --area: OUT/area/pN.json of every point written, one summary line printed (`where`:
/// the cache and who synthesized).
void reportArea(const DseOptions& o, const std::vector<Point>& points,
                const std::vector<PointArea>& area, const std::string& where,
                std::chrono::steady_clock::time_point t0) {
  const std::filesystem::path out(o.out);
  std::filesystem::create_directories(out / "area");
  std::size_t synthesized = 0, cached = 0, failed = 0;
  double yosys = 0;
  for (std::size_t i = 0; i < area.size(); ++i) {
    const PointArea& a = area[i];
    writeFileAtomic((out / "area" / ("p" + std::to_string(points[i].index) + ".json")).string(),
                    toJson(a).dump(1) + "\n");
    failed += a.state == PointArea::State::Failed;
    if (a.state == PointArea::State::Ok) {
      cached += a.cached;
      synthesized += !a.cached;
      yosys += a.cached ? 0 : a.seconds;
    }
  }
  std::printf("area: %zu points synthesized (%.1f s of Yosys), %zu from the cache %s, %zu "
              "failed; %.1f s\n",
              synthesized, yosys, cached, where.c_str(), failed, secondsSince(t0));
}

/// --area on this machine: every point's area by ember-dse's own process pool.
std::vector<PointArea> runArea(const DseOptions& o, const AreaTools& tools,
                               const std::vector<Point>& points) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string scratch = (std::filesystem::path(o.out) / ".area").string();
  std::vector<PointArea> area =
      synthesizeAreas(points, tools, o.jobs, scratch, areaProgressLine(o, t0));
  std::filesystem::remove_all(scratch);
  reportArea(o, points, area, tools.cacheDir, t0);
  return area;
}

/// --check: every failed row as one message (exit status 1), naming the description and
/// a command that reproduces it.
void throwFailures(const DseOptions& o, const SweepData& d,
                   const std::map<std::string, std::string>& modelPaths) {
  std::string msg;
  std::size_t n = 0;
  for (const Result& r : d.rows) {
    if (r.status == Status::Ok || r.status == Status::TooSmall)
      continue;
    ++n;
    const std::string file = d.points.at(r.point).file;
    msg += "\n  point " + std::to_string(r.point) + " (" + file + ") " + r.model + ": " +
           statusName(r.status) + ": " + shortMessage(r.message) + "\n    reproduce: ember-run " +
           modelPaths.at(r.model) + " --isa " + file +
           " --compare interp,sim --precision int8 --random-input 1 --fallback none";
  }
  if (n)
    throw Error("ember-dse --check", std::to_string(n) + " of " + std::to_string(d.rows.size()) +
                                         " runs failed (descriptions in " + o.out + "):" + msg);
}

/// The Dask engine's request of `o` (--scheduler 'local' is a local cluster).
DaskRequest daskRequest(const DseOptions& o) {
  DaskRequest r;
  r.scheduler = o.scheduler == "local" ? "" : o.scheduler;
  r.cache = o.cache;
  r.jobs = o.jobs;
  r.retries = o.retries;
  r.check = o.check;
  r.resume = !o.resume.empty();
  r.progress = !o.noProgress && isatty(fileno(stderr));
  r.calibrate = o.calibrate;
  for (const auto& [name, dims] : o.inputs.shapes)
    r.inputShapes[name] = std::vector<int64_t>(dims.begin(), dims.end());
  return r;
}

} // namespace

int dseTool(const DseOptions& o, const std::vector<std::string>& args) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!o.area && (!o.areaRequest.cacheDir.empty() || !o.areaRequest.rtlDir.empty() ||
                  o.areaRequest.yosys != AreaRequest{}.yosys))
    throw UsageError("--area-cache, --yosys and --rtl", "are options of --area: give --area too");
  checkRunPaths({{o.out, "--out", true}}, o.models);
  const std::string basePath = o.base.empty() ? isa::IsaDescription::defaultPath() : o.base;
  const isa::IsaDescription base = isa::IsaDescription::loadFile(basePath);
  const bool dask = !o.scheduler.empty() || !o.cache.empty() || !o.resume.empty();
  // Found before any work, so a missing tool stops the sweep; on Dask each worker finds
  // its own (a worker without them gives its points a failed area).
  std::optional<AreaTools> areaTools;
  if (o.area && !dask)
    areaTools = findAreaTools(o.areaRequest);
  std::vector<Point> points = makePoints(pointOptions(o), base.json(), o.out);
  std::vector<Model> models;
  std::map<std::string, std::string> modelPaths;
  std::vector<std::pair<std::string, std::string>> named; // (path, name)
  for (const std::string& path : o.models) {
    if (!dask)
      models.push_back(loadModel(path, o.calibrate, o.check, o.inputs));
    std::string name = modelName(path);
    for (int k = 2; modelPaths.count(name); ++k)
      name = modelName(path) + "#" + std::to_string(k);
    if (!dask)
      models.back().name = name;
    modelPaths[name] = path;
    named.emplace_back(path, name);
  }
  const double loadSeconds = secondsSince(t0);
  SweepData d;
  d.title = "ember-dse: " + std::to_string(points.size()) + " points over " + basePath;
  if (dask) {
    if (o.resume.empty())
      saveSweepArgs(o.out, args);
    DaskRequest request = daskRequest(o);
    if (o.area) // synthesized on the workers, in the cache folder of --area-cache
      request.area = o.areaRequest;
    d.rows = runOnDask(points, named, request, &d.area);
    if (o.area)
      reportArea(o, points, d.area,
                 (o.areaRequest.cacheDir.empty() ? std::string("(the workers' default)")
                                                 : o.areaRequest.cacheDir) +
                     ", on the Dask workers",
                 t0);
  } else {
    const std::string scratch = (std::filesystem::path(o.out) / ".rows").string();
    d.rows = runPoints(points, models, o.check, o.jobs, scratch, progressLine(o, t0));
    std::filesystem::remove_all(scratch);
  }
  markPareto(d.rows);
  if (o.area) {
    if (areaTools)
      d.area = runArea(o, *areaTools, points);
    markAreaPareto(d.rows, d.area);
  }
  d.columns = settingColumns(points);
  d.points = std::move(points);
  const std::string csv = (std::filesystem::path(o.out) / "dse.csv").string();
  const std::string html = (std::filesystem::path(o.out) / "dse.html").string();
  writeFileAtomic(csv, toCsv(d));
  writeFileAtomic(html, toHtml(d));
  if (!o.noTable)
    std::fputs(formatTable(d).c_str(), stdout);
  std::size_t ok = 0, small = 0;
  for (const Result& r : d.rows) {
    ok += r.status == Status::Ok;
    small += r.status == Status::TooSmall;
  }
  const std::string smallText = small ? ", " + std::to_string(small) +
                                            " refused as too small (with the SRAM sizes at "
                                            "which they compile)"
                                      : "";
  std::printf("ember-dse: %zu points x %zu models: %zu of %zu runs ok%s; wrote %s and %s\n",
              d.points.size(), named.size(), ok, d.rows.size(), smallText.c_str(), csv.c_str(),
              html.c_str());
  if (dask)
    std::printf("time: %.1f s wall (points on Dask %s, import and quantize on the workers)\n",
                secondsSince(t0), o.scheduler.empty() ? "(a local cluster)" : o.scheduler.c_str());
  else
    std::printf("time: %.1f s wall (import and quantize %.1f s, points %.1f s, --jobs %u)\n",
                secondsSince(t0), loadSeconds, secondsSince(t0) - loadSeconds, o.jobs);
  if (o.check)
    throwFailures(o, d, modelPaths);
  return 0;
}

std::vector<std::string> resumeIfAsked(const std::vector<std::string>& args) {
  std::string out, scheduler;
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--resume")
      out = args[i + 1];
    if (args[i] == "--scheduler")
      scheduler = args[i + 1];
  }
  if (out.empty())
    return args;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i] != "--resume" && args[i] != "--scheduler" && args[i].rfind("--", 0) == 0)
      throw UsageError("--resume", "takes its sweep's saved command line: give it alone (or "
                                   "with --scheduler), not with " +
                                       args[i]);
  return resumedArgs(out, scheduler);
}

std::string dseHelp() {
  return std::string(kFooter) + "\naxes (--axis NAME=...):\n" + axisHelp();
}

} // namespace ember::dse
