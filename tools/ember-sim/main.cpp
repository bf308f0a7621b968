// ember-sim: run an NPU binary on the cycle-accurate SystemC model.
#include "ember/runtime/Run.h"

#include "ember/isa/error.h"
#include "ember/support/ToolMain.h"

#include <iostream>
#include <string>

namespace {
const char* kUsage =
    "usage: ember-sim BIN.elf [--isa FILE.json] [--input NAME=FILE.npy]... [--out DIR]\n"
    "                 [--report R.json] [--trace T.json] [--cycle-budget N]\n"
    "                 [--dram-window BYTES] [--no-table] [--no-progress]\n"
    "       ember-sim --jobs A.elf,B.elf,... [--isa FILE.json] [--input NAME=FILE.npy]...\n"
    "                 [--out DIR] [--cycle-budget N]\n"
    "Runs an Ember NPU binary on the cycle-accurate simulator (docs/simulator.md): places\n"
    "the constants and inputs in DRAM from the binary's memory map and I/O table, runs,\n"
    "writes every output as DIR/NAME.npy, prints the report table, and writes the JSON\n"
    "report and the Chrome/Perfetto trace when asked.\n"
    "Inputs: int8 .npy in the logical shape of the I/O entry (float32 is quantized with\n"
    "the entry's scale and zero point).\n"
    "--cycle-budget N  stop with a cycle-budget fault past N cycles (N >= 1; default: the\n"
    "                  program's one-pass budget, docs/simulator.md section 4).\n"
    "--jobs            run the binaries back to back through the job ring of one device:\n"
    "                  the firmware validates each (docs/firmware.md), one line per job,\n"
    "                  outputs of job K in DIR/K/.\n"
    "Exit status: 0 done, 1 bad input, 2 bad command line, 3 the program faulted (fault\n"
    "printed; no outputs written; with --jobs: a job did not finish).\n";
}

int main(int argc, char** argv) {
  using ember::UsageError;
  return ember::toolMain("ember-sim", [&] {
    ember::runtime::RunRequest req;
    std::vector<std::string> jobs;
    for (int i = 1; i < argc; ++i) {
      std::string s = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc)
          throw UsageError(s + " needs a value");
        return argv[++i];
      };
      if (s == "-h" || s == "--help") {
        std::cout << kUsage;
        return 0;
      } else if (s == "--isa") {
        req.isa = value();
      } else if (s == "--input") {
        req.inputs.push_back(ember::runtime::parseInputArg(value()));
      } else if (s == "--out") {
        req.out_dir = value();
      } else if (s == "--report") {
        req.report_json = value();
      } else if (s == "--trace") {
        req.trace_json = value();
      } else if (s == "--cycle-budget" || s == "--dram-window") {
        std::string v = value();
        std::size_t used = 0;
        unsigned long long n = 0;
        try {
          n = std::stoull(v, &used, 0);
        } catch (const std::exception&) {
          used = 0;
        }
        if (s == "--cycle-budget" && (v[0] == '-' || (used == v.size() && n == 0)))
          throw UsageError(s, "expected a positive number, got \"" + v +
                                  "\" (omit --cycle-budget for the default budget)");
        if (used != v.size() || v.empty() || v[0] == '-' || v[0] == '+')
          throw UsageError(s, "expected a whole number of at least 0, got \"" + v + "\"");
        (s == "--cycle-budget" ? req.options.cycle_budget : req.options.dram_window_bytes) = n;
      } else if (s == "--jobs") {
        const std::string v = value();
        std::size_t start = 0;
        while (start <= v.size()) {
          const std::size_t comma = v.find(',', start);
          const std::string f =
              v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
          if (f.empty())
            throw UsageError("--jobs",
                             "expected a comma-separated list of binaries, got \"" + v + "\"");
          jobs.push_back(f);
          if (comma == std::string::npos)
            break;
          start = comma + 1;
        }
      } else if (s == "--no-table") {
        req.table = false;
      } else if (s == "--no-progress") {
        req.progress = false;
      } else if (req.binary.empty() && !s.empty() && s[0] != '-') {
        req.binary = s;
      } else {
        throw UsageError("unexpected argument \"" + s + "\"");
      }
    }
    if (!jobs.empty()) {
      if (!req.binary.empty())
        throw UsageError("give either BIN.elf or --jobs, not both");
      if (!req.report_json.empty() || !req.trace_json.empty())
        throw UsageError("--report and --trace are for one binary, not --jobs");
      return ember::runtime::runJobs(jobs, req, std::cout, std::cerr);
    }
    if (req.binary.empty()) {
      std::cerr << kUsage;
      return 2;
    }
    ember::runtime::checkOutputs(req);
    return ember::runtime::runAndPrint(req, std::cout, std::cerr);
  });
}
