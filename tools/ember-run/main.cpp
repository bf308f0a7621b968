// ember-run: import a model, run it on a device, write and summarise its outputs.
// A thin main: its options, then the application layer (ember/session/RunTool.h).
#include "ember/cli/Cli.h"
#include "ember/cli/HugePageHeap.h"
#include "ember/cli/InputOptions.h"
#include "ember/cli/PartitionOptions.h"
#include "ember/cli/ServeOptions.h"
#include "ember/session/Devices.h"
#include "ember/session/RunTool.h"

#include <filesystem>
#include <string>
#include <vector>

using namespace ember;
using namespace ember::session;

namespace {

const char* kDescription =
    "ember-run: runs an ONNX model on a device, or an NPU binary or package on the NPU.";

/// --cycle-budget: the NPU devices' budget (RunOptions::cycleBudget).
void addCycleBudget(CLI::App& app, RunOptions& o) {
  app.add_option("--cycle-budget", o.cycleBudget,
                 "(sim, rtl) stop with a cycle-budget fault (exit 3) past N NPU cycles\n"
                 "(default: the program's one-pass budget, as ember-sim)")
      ->type_name("N")
      ->check(cli::wholeNumber(1, UINT64_MAX));
}

/// Declares ember-run's command line on `app`; parsing fills `o` (and `inputArgs`, the
/// --input values, split after parsing).
void declareOptions(CLI::App& app, RunOptions& o, std::vector<std::string>& inputArgs) {
  app.add_option("MODEL", o.model, "the ONNX model, NPU binary (ELF) or package to run")
      ->type_name("")
      ->required();
  app.add_option_function<std::string>(
         "--device",
         [&o](const std::string& v) {
           o.device = v;
           o.deviceGiven = true;
         },
         "device to run on (default: interp); see the list below")
      ->type_name("NAME");
  app.add_option("--input", inputArgs, "value of model input NAME (repeat for several inputs)")
      ->type_name("NAME=FILE.npy")
      ->check(cli::nameEqualsValue("NAME=FILE.npy"))
      ->allow_extra_args(false)
      ->take_all();
  app.add_option("--random-input", o.randomSeed,
                 "inputs not given get deterministic random values from SEED\n"
                 "(float: uniform in [-1, 1); integers: [0, 16); bool: 0/1)")
      ->type_name("SEED")
      ->check(cli::wholeNumber(0, UINT64_MAX / 2));
  app.add_option("--out", o.outDir,
                 "write every output to DIR/NAME.npy (characters of NAME outside\n"
                 "[A-Za-z0-9_.-] become '_'); DIR is created if needed")
      ->type_name("DIR")
      ->check(cli::pathValue());
  app.add_option("--repeat", o.repeat, "run N times and report the median run time (default 1)")
      ->type_name("N")
      ->check(cli::wholeNumber(1, 100000));
  app.add_option("--iterations", o.iterations,
                 "with --compare: time N runs on every device (default: --repeat\n"
                 "on the first device, 1 on the others); prints per device\n"
                 "\"median latency: X ms\"")
      ->type_name("N")
      ->check(cli::wholeNumber(1, 100000));
  app.add_option("--warmup", o.warmup, "runs before the timed ones, on every device (default 0)")
      ->type_name("K")
      ->check(cli::wholeNumber(0, 100000));
  app.add_option("--threads", o.threads,
                 "threads of the host devices, interp and cpu (default:\n"
                 "$EMBER_NUM_THREADS, else 1 for cpu and up to 4 for interp)")
      ->type_name("N")
      ->check(cli::wholeNumber(1, 256));
  app.add_option("--top", o.top,
                 "also print the K largest values of each output with their\n"
                 "flat indices (e.g. the top-5 classes of a classifier)")
      ->type_name("K")
      ->check(cli::wholeNumber(0, 1000000));
  app.add_option("--compare", o.compare,
                 "run on every device of the comma-separated LIST (e.g. interp,sim;\n"
                 "a single name means --device and that one) and print one table:\n"
                 "float: every output within 1e-4 * max(1, max|reference|) of the\n"
                 "first device's; int8: bit for bit, plus cosine similarity and\n"
                 "top-1 agreement with the float interpreter, and the NPU's cycles;\n"
                 "sim and rtl together must also agree on every cycle and energy")
      ->type_name("LIST");
  app.add_option("--precision", o.precision,
                 "float (default) or int8: quantize the model first (the default\n"
                 "pass pipeline, calibration, docs/numerics.md); sim implies int8")
      ->type_name("P")
      ->check(CLI::IsMember({"float", "int8"}));
  app.add_option("--calibrate", o.calibrate,
                 "calibration inputs for int8: FILE.npy, a folder of .npy files, or\n"
                 "random:N (default random:8, as emberc)")
      ->type_name("SPEC");
  app.add_option("--calibration", o.calibration, "minmax (default), percentile or kl")
      ->type_name("METHOD");
  app.add_option("--report", o.reportJson,
                 "(sim) write the simulation report as JSON (docs/simulator.md);\n"
                 "(cpu with --profile) the operation times as JSON")
      ->type_name("R.json")
      ->check(cli::pathValue());
  app.add_option("--trace", o.traceJson,
                 "(sim) write a Chrome/Perfetto trace (one track per engine);\n"
                 "(cpu with --profile) one slice per operation")
      ->type_name("T.json")
      ->check(cli::pathValue());
  app.add_option("--profile", o.profile,
                 "(cpu) time every operation of the timed runs (their mean) and print\n"
                 "the K slowest (all when K is 0 or not given) with their share, then\n"
                 "the time per kind; each operation is run by itself on the threads\n"
                 "(one dispatch each), so the sum is a little above a plain run")
      ->type_name("[K]")
      ->expected(0, 1)
      ->default_str("0");
  app.add_option("--html", o.html,
                 "(sim, rtl) write the report as one self-contained HTML page:\n"
                 "cycles, utilisation, roofline, energy, engines, placement;\n"
                 "with --requests: the serving figures and a per-device timeline\n"
                 "(docs/simulator.md)")
      ->type_name("R.html")
      ->check(cli::pathValue());
  app.add_option("--isa", o.isa, "(sim) the NPU description (default: isa/ember-v1.json)")
      ->type_name("FILE.json");
  addCycleBudget(app, o);
  app.add_flag("--quiet", o.quiet, "print only errors and the timing line");
  cli::addPartitionOptions(app, o.partition);
  cli::addServeOptions(app, o.serve);
  cli::addInputOptions(app, o.modelInputs, cli::InputOptionSet::ShapesAndBinds);
}

/// Whether `path` is a regular file holding an NPU binary (session::isNpuBinaryFile),
/// not a model or package. Anything else is left to runTool's checks (a FIFO is not
/// opened here, so that runTool reads it whole).
bool isNpuBinaryRegularFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && session::isNpuBinaryFile(path);
}

} // namespace

// The heap on huge pages before SystemC's constructor zeroes its 3 MiB (HugePageHeap.h).
EMBER_CLI_HEAP_ON_HUGE_PAGES;

int main(int argc, char** argv) {
  CLI::App app(kDescription, "ember-run");
  cli::setup(app, cli::Description::Selectable);
  RunOptions o;
  std::vector<std::string> inputArgs;
  declareOptions(app, o, inputArgs);
  app.footer(runToolHelp);
  return cli::run(app, argc, argv, [&] {
    for (const std::string& arg : inputArgs) { // their shapes decide unknown dimensions
      o.inputs.push_back(cli::splitNameValue(arg));
      o.modelInputs.feedFiles.insert(o.inputs.back());
    }
    o.modelInputs.takesInputFiles = true;
    // A run on the NPU alone (an NPU binary: no host segment computing on threads of its
    // own; no serving of several devices at once): one heap for every thread
    // (HugePageHeap.h).
    if ((o.device == "sim" || o.device == "rtl") && o.compare.empty() && o.serve.requests == 0 &&
        isNpuBinaryRegularFile(o.model))
      cli::heapOneArena();
    return runTool(o);
  });
}
