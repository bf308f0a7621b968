// ember-sim: run an NPU binary on the cycle-accurate SystemC model.
#include "ember/runtime/Run.h"

#include "ember/cli/Cli.h"
#include "ember/cli/HugePageHeap.h"
#include "ember/support/Error.h"

#include <iostream>
#include <string>
#include <vector>

namespace {

const char* kDescription =
    "ember-sim: runs an Ember NPU binary on the cycle-accurate simulator (docs/simulator.md).";

const char* kFooter =
    R"(Places the constants and inputs in DRAM from the binary's memory map and I/O table, runs,
writes every output as DIR/NAME.npy, prints the report table, and writes the JSON report
and the Chrome/Perfetto trace when asked.
Inputs: int8 .npy in the logical shape of the I/O entry (float32 is quantized with the
entry's scale and zero point).

examples:
  ember-sim BIN.elf --input x=x.npy --out out/ --report r.json --trace t.json
  ember-sim --jobs A.elf,B.elf,C.elf --out out/

exit status: 0 done; 1 bad input (also a program the firmware refuses); 2 a bad command
line; 3 the program faulted (fault printed; no outputs written). With --jobs: the status
of the first job that did not finish (1 refused, 3 fault or timeout).)";

/// --cycle-budget and --dram-window: a whole number in decimal, hex (0x) or octal (0), as
/// strtoull reads it; the budget must be positive.
CLI::Validator wholeNumberAnyBase(bool positive) {
  return CLI::Validator(
      [positive](std::string& v) -> std::string {
        std::size_t used = 0;
        unsigned long long n = 0;
        try {
          n = std::stoull(v, &used, 0);
        } catch (const std::exception&) {
          used = 0;
        }
        if (positive && (v.empty() || v[0] == '-' || (used == v.size() && n == 0)))
          return "expected a positive number, got \"" + v +
                 "\" (omit --cycle-budget for the default budget)";
        if (used != v.size() || v.empty() || v[0] == '-' || v[0] == '+')
          return "expected a whole number of at least 0, got \"" + v + "\"";
        return "";
      },
      "");
}

/// --jobs A.elf,B.elf,...: every entry non-empty.
std::vector<std::string> splitJobs(const std::string& v) {
  std::vector<std::string> jobs;
  std::size_t start = 0;
  while (start <= v.size()) {
    const std::size_t comma = v.find(',', start);
    const std::string f =
        v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (f.empty())
      throw ember::UsageError("--jobs",
                              "expected a comma-separated list of binaries, got \"" + v + "\"");
    jobs.push_back(f);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return jobs;
}

} // namespace

// The heap on huge pages before SystemC's constructor zeroes its 3 MiB (HugePageHeap.h).
EMBER_CLI_HEAP_ON_HUGE_PAGES;

int main(int argc, char** argv) {
  using namespace ember;
  cli::heapOneArena(); // its threads simulate by turns (HugePageHeap.h)
  CLI::App app(kDescription, "ember-sim");
  cli::setup(app, cli::Description::Selectable);
  runtime::RunRequest req;
  std::vector<std::string> inputArgs;
  std::string jobList;
  bool noTable = false, noProgress = false;
  CLI::Option* binary =
      app.add_option("BIN", req.binary, "the NPU binary (ELF) to run")->type_name("BIN.elf");
  app.add_option("--isa", req.isa,
                 "the NPU description (default: $EMBER_ISA, else the installed\n"
                 "or source tree's isa/ember-v1.json)")
      ->type_name("FILE.json");
  app.add_option("--input", inputArgs, "value of input NAME (repeat for several inputs)")
      ->type_name("NAME=FILE.npy")
      ->check(cli::nameEqualsValue("NAME=FILE.npy"))
      ->allow_extra_args(false)
      ->take_all();
  app.add_option("--out", req.out_dir, "write every output to DIR/NAME.npy")
      ->type_name("DIR")
      ->check(cli::pathValue());
  CLI::Option* report = app.add_option("--report", req.report_json, "write the report as JSON")
                            ->type_name("R.json")
                            ->check(cli::pathValue());
  CLI::Option* trace = app.add_option("--trace", req.trace_json,
                                      "write a Chrome/Perfetto trace (one track per engine)")
                           ->type_name("T.json")
                           ->check(cli::pathValue());
  app.add_option("--cycle-budget", req.options.cycle_budget,
                 "stop with a cycle-budget fault past N cycles (N >= 1; default: the\n"
                 "program's one-pass budget, docs/simulator.md section 4)")
      ->type_name("N")
      ->check(wholeNumberAnyBase(true));
  app.add_option("--dram-window", req.options.dram_window_bytes,
                 "the job's DRAM window in bytes; accesses beyond it fault (default:\n"
                 "the memory map's extent, rounded up to 64 KiB)")
      ->type_name("BYTES")
      ->check(wholeNumberAnyBase(false));
  app.add_option("--jobs", jobList,
                 "run the binaries back to back through the job ring of one device:\n"
                 "each checked as a single run, the firmware validates each\n"
                 "(docs/firmware.md), one line per job, outputs of job K in DIR/K/")
      ->type_name("A.elf,B.elf,...")
      ->excludes(binary)
      ->excludes(report)
      ->excludes(trace);
  app.add_flag("--no-table", noTable, "do not print the report table");
  app.add_flag("--no-progress", noProgress, "no progress line on stderr");
  app.footer(kFooter);
  return cli::run(app, argc, argv, [&] {
    for (const std::string& arg : inputArgs)
      req.inputs.push_back(cli::splitNameValue(arg));
    req.table = !noTable;
    req.progress = !noProgress;
    if (!jobList.empty())
      return runtime::runJobs(splitJobs(jobList), req, std::cout, std::cerr);
    if (req.binary.empty())
      throw UsageError("no binary given (BIN.elf, or --jobs A.elf,B.elf,...)");
    runtime::checkOutputs(req);
    return runtime::runAndPrint(req, std::cout, std::cerr);
  });
}
