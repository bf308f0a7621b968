// ember-dse: sweeps NPU descriptions (axes over a base, or seeded random ones) over ONNX
// models and writes a CSV, an HTML page and a table. A thin main: its options, then the
// application layer (ember/session/dse/DseTool.h).
#include "ember/cli/Cli.h"
#include "ember/cli/InputOptions.h"
#include "ember/session/dse/Distributed.h"
#include "ember/session/dse/DseTool.h"
#include "ember/support/Error.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace ember;
using namespace ember::dse;

namespace {

const char* kDescription = "ember-dse: sweeps NPU descriptions over ONNX models (cycles, energy, "
                           "MAC utilisation, SRAM peaks, Pareto front).";

void declareOptions(CLI::App& app, DseOptions& o) {
  app.add_option("MODEL", o.models, "ONNX models to sweep")->type_name("")->required();
  app.add_option("--base,--isa", o.base,
                 "the description the points start from (default: "
                 "$EMBER_ISA, else isa/ember-v1.json)")
      ->type_name("FILE.json");
  app.add_option("--axis", o.axes,
                 "an axis: NAME=V1,V2,... with a NAME listed below or a JSON pointer\n"
                 "into the description (/hardware/dma/latency_cycles=50,100);\n"
                 "repeat for more axes (the points are their cross product)")
      ->type_name("NAME=VALUES")
      ->allow_extra_args(false);
  app.add_option("--random", o.random,
                 "instead of axes: N seeded random valid descriptions around --base")
      ->type_name("N")
      ->check(cli::wholeNumber(1, 100000));
  app.add_option("--seed", o.seed, "seed of --random (default 1)")
      ->type_name("S")
      ->check(cli::wholeNumber(0, UINT64_MAX / 2));
  app.add_option("--min-kib", o.minKib,
                 "--random: smallest size of SRAM MEM in KiB (act, weight, acc,\n"
                 "param; default: one row per bank, 4 KiB for param's LUTs)")
      ->type_name("MEM=N")
      ->check(cli::nameEqualsValue("MEM=N"))
      ->allow_extra_args(false);
  app.add_option("--max-kib", o.maxKib, "--random: largest size of any SRAM in KiB (default 4096)")
      ->type_name("N")
      ->check(cli::wholeNumber(1, 1u << 22));
  app.add_option("--min-array", o.minArray, "--random: smallest MAC array side (default 4)")
      ->type_name("N")
      ->check(cli::wholeNumber(1, 4096));
  app.add_option("--max-array", o.maxArray, "--random: largest MAC array side (default 64)")
      ->type_name("N")
      ->check(cli::wholeNumber(1, 4096));
  app.add_flag("--keep-encoding", o.keepEncoding,
               "--random: keep the base's field order (fields still widen as needed)");
  app.add_flag("--check", o.check,
               "also run the int8 interpreter once per model: every point must\n"
               "compile and give bit-identical outputs (else exit status 1)");
  app.add_option("--out", o.out, "output folder (default dse-out)")->type_name("DIR");
  app.add_option("--jobs", o.jobs, "points evaluated at once, each in its own process (default 1)")
      ->type_name("N")
      ->check(cli::wholeNumber(1, 256));
  app.add_option("--calibrate", o.calibrate, "calibration inputs (default random:8, as emberc)")
      ->type_name("SPEC");
  cli::addInputOptions(app, o.inputs, cli::InputOptionSet::Shapes);
  app.add_flag("--area", o.area,
               "also synthesize each valid point's NPU with Yosys\n"
               "(rtl/cmake/area.py): generic cells, flip-flops, SRAM bits and\n"
               "the front of cycles against area; cached (--area-cache)");
  app.add_option("--area-cache", o.areaRequest.cacheDir,
                 "--area: cache folder (default $XDG_CACHE_HOME/ember/area,\n"
                 "else ~/.cache/ember/area)")
      ->type_name("DIR");
  app.add_option("--yosys", o.areaRequest.yosys,
                 "--area: the Yosys binary (default: yosys on PATH)")
      ->type_name("FILE");
  app.add_option("--rtl", o.areaRequest.rtlDir,
                 "--area: the rtl/ folder of the sources (default: the one\n"
                 "ember-dse was built from)")
      ->type_name("DIR");
  app.add_option("--scheduler", o.scheduler,
                 "compute the rows on a Dask cluster: a scheduler's address\n"
                 "(tcp://HOST:PORT) or scheduler file (dask-scheduler\n"
                 "--scheduler-file, as Slurm jobs start it), or 'local' for a\n"
                 "local cluster of --jobs workers (python3 -m ember.dse;\n"
                 "docs/dse.md)")
      ->type_name("ADDR");
  app.add_option("--cache", o.cache,
                 "the Dask engine's cache of rows, shared by its workers (default\n"
                 "$XDG_CACHE_HOME/ember/dse, else ~/.cache/ember/dse); giving it\n"
                 "alone runs the sweep on a local Dask cluster")
      ->type_name("DIR");
  app.add_option("--resume", o.resume,
                 "continue the sweep of OUT (run with --scheduler or --cache) after\n"
                 "an interruption: its command line again, the rows done before\n"
                 "from the cache (with --scheduler: on that cluster instead)")
      ->type_name("OUT");
  app.add_option("--retries", o.retries,
                 "Dask engine: times a point's task is tried again when its worker\n"
                 "is lost (default 2)")
      ->type_name("N")
      ->check(cli::wholeNumber(0, 100));
  app.add_flag("--no-table", o.noTable, "do not print the table");
  app.add_flag("--no-progress", o.noProgress, "no progress line on stderr");
}

} // namespace

int main(int argc, char** argv) {
  // Points run in forked children: the interpreter's thread pool must not exist in the
  // parent when it forks (a child would wait for threads it does not have).
  setenv("EMBER_NUM_THREADS", "1", 1);
  const std::vector<std::string> given(argv + 1, argv + argc);
  if (!given.empty() && given.front() == "search") { // the Optuna search: all in Python
    try {
      execEngine(given);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ember-dse: %s\n", e.what());
      return 1;
    }
  }
  CLI::App app(kDescription, "ember-dse");
  cli::setup(app, cli::Description::Selectable);
  DseOptions o;
  declareOptions(app, o);
  app.footer(dseHelp);
  std::vector<std::string> args;
  try {
    args = resumeIfAsked(given);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember-dse: %s\n", e.what());
    return dynamic_cast<const UsageError*>(&e) ? 2 : 1;
  }
  std::vector<char*> av{argv[0]};
  for (std::string& a : args)
    av.push_back(a.data());
  return cli::run(app, int(av.size()), av.data(), [&] { return dseTool(o, given); });
}
