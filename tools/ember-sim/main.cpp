// ember-sim: run an NPU binary on the cycle-accurate SystemC model.
#include "SimRun.h"

#include "ember/isa/error.h"

#include <iostream>
#include <string>

namespace {
const char* kUsage =
    "usage: ember-sim BIN.elf [--isa FILE.json] [--input NAME=FILE.npy]... [--out DIR]\n"
    "                 [--report R.json] [--trace T.json] [--cycle-budget N]\n"
    "                 [--dram-window BYTES] [--no-table] [--no-progress]\n"
    "Runs an Ember NPU binary on the cycle-accurate simulator (docs/simulator.md): places\n"
    "the constants and inputs in DRAM from the binary's memory map and I/O table, runs,\n"
    "writes every output as DIR/NAME.npy, prints the report table, and writes the JSON\n"
    "report and the Chrome/Perfetto trace when asked.\n"
    "Inputs: int8 .npy in the logical shape of the I/O entry (float32 is quantized with\n"
    "the entry's scale and zero point).\n"
    "--cycle-budget N  stop with a cycle-budget fault past N cycles (N >= 1; default: the\n"
    "                  program's one-pass budget, docs/simulator.md section 4).\n"
    "Exit status: 0 done, 1 bad input or usage, 2 bad option value, 3 the program faulted\n"
    "(fault printed).\n";
}

int main(int argc, char** argv) {
  using ember::isa::Error;
  try {
    ember::simrun::SimRunRequest req;
    for (int i = 1; i < argc; ++i) {
      std::string s = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc)
          throw Error("ember-sim", "", s + " needs a value (see --help)");
        return argv[++i];
      };
      if (s == "-h" || s == "--help") {
        std::cout << kUsage;
        return 0;
      } else if (s == "--isa") {
        req.isa = value();
      } else if (s == "--input") {
        req.inputs.push_back(ember::simrun::parseInputArg(value()));
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
        if (used != v.size() || v.empty())
          throw Error("ember-sim", s, "expected a number, got \"" + v + "\"");
        if (v[0] == '-' || (n == 0 && s == "--cycle-budget")) { // stoull accepts "-1"
          std::cerr << "ember-sim: " << s << ": expected a positive number, got \"" << v
                    << "\" (omit --cycle-budget for the default budget)\n";
          return 2;
        }
        (s == "--cycle-budget" ? req.options.cycle_budget : req.options.dram_window_bytes) = n;
      } else if (s == "--no-table") {
        req.table = false;
      } else if (s == "--no-progress") {
        req.progress = false;
      } else if (req.binary.empty() && !s.empty() && s[0] != '-') {
        req.binary = s;
      } else {
        throw Error("ember-sim", "", "unexpected argument \"" + s + "\" (see --help)");
      }
    }
    if (req.binary.empty()) {
      std::cerr << kUsage;
      return 1;
    }
    return ember::simrun::runBinaryOnSim(req, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "ember-sim: " << e.what() << "\n";
    return 1;
  }
}
