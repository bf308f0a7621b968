// Simulation speed: simulated cycles per host second on a long GEMM-bound program and on a
// DMA-bound one (docs/simulator.md, "Speed"). Prints figures; never fails on time.
//   sim_bench [--isa FILE.json] [--tiles N] [--repeat R] [--elf MODEL.elf [--name NAME]]
//             [--json FILE]
// With --elf it runs that binary instead (the bench_sim target passes ResNet-50 of the zoo)
// and prints its figures beside the goal of issue 15: at most 1 s, at least 20 M simulated
// cycles per second. --json also writes the figures as an array with one object per
// program (name, isa, instructions, cycles, mac_utilization, host_s (best of R),
// simulated_cycles_per_second; with --elf also load_s; on a fault: name, isa, fault), for
// bench/scoreboard/scoreboard.py.
#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/platform/Report.h"
#include "ember/sim/Simulator.h"

#include "BenchPrograms.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using ember::bench::dmaBound;
using ember::bench::gemmBound;

/// Best of `repeat` runs of `job`; prints one line. Returns the host seconds (0 on a fault).
double bench(const ember::isa::IsaDescription& isa, const char* name,
             const ember::platform::Job& job, int repeat, nlohmann::json& json) {
  ember::sim::Simulator sim(isa);
  ember::platform::Options opts;
  opts.record_slices = false;
  double best = 1e30;
  ember::platform::Result r;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    r = sim.run(job, opts);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!r.ok()) {
      std::printf("%s: %s\n", name, r.report.fault->message().c_str());
      json.push_back({{"name", name}, {"isa", isa.name()}, {"fault", r.report.fault->message()}});
      return 0;
    }
  }
  const auto& rep = r.report;
  std::printf(
      "%-11s %-14s %8llu instr %11llu cycles  MAC util %5.1f%%  DRAM util %5.1f%%  host %.3f s  "
      "%.2f M simulated cycles/s\n",
      name, isa.name().c_str(), (unsigned long long)rep.instructions,
      (unsigned long long)rep.cycles, rep.mac_utilization * 100,
      rep.memories.back().utilization * 100, best, double(rep.cycles) / best / 1e6);
  json.push_back({{"name", name},
                  {"isa", isa.name()},
                  {"instructions", rep.instructions},
                  {"cycles", rep.cycles},
                  {"mac_utilization", rep.mac_utilization},
                  {"host_s", best},
                  {"simulated_cycles_per_second", double(rep.cycles) / best}});
  return best;
}

/// A compiled model: loading (ELF, DRAM image) and the simulation, against the goal.
void benchElf(const ember::isa::IsaDescription& isa, const std::string& path,
              const std::string& name, int repeat, nlohmann::json& json) {
  auto t0 = std::chrono::steady_clock::now();
  const ember::isa::Binary bin = ember::isa::readElf(path, isa);
  const ember::platform::Job job = ember::platform::makeJob(isa, bin, {}, 0, path);
  const double load = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double run = bench(isa, name.c_str(), job, repeat, json);
  json.back()["load_s"] = load;
  if (run > 0)
    std::printf("%-11s load %.3f s + simulation %.3f s; goal: simulation <= 1 s (>= 20 M simulated "
                "cycles/s): %s\n",
                name.c_str(), load, run, run <= 1.0 ? "met" : "not met");
}

} // namespace

int main(int argc, char** argv) {
  std::string isaPath;
  std::string elf, name = "model", jsonPath;
  int tiles = 2000, repeat = 3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--isa" && i + 1 < argc)
      isaPath = argv[++i];
    else if (a == "--tiles" && i + 1 < argc)
      tiles = std::max(1, std::atoi(argv[++i]));
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--elf" && i + 1 < argc)
      elf = argv[++i];
    else if (a == "--name" && i + 1 < argc)
      name = argv[++i];
    else if (a == "--json" && i + 1 < argc)
      jsonPath = argv[++i];
    else {
      std::fprintf(stderr, "usage: sim_bench [--isa FILE.json] [--tiles N] [--repeat R] "
                           "[--elf MODEL.elf [--name NAME]] [--json FILE]\n");
      return a == "-h" || a == "--help" ? 0 : 1;
    }
  }
  try {
    auto isa = ember::isa::IsaDescription::loadDefault(isaPath);
    nlohmann::json json = nlohmann::json::array();
    if (!elf.empty()) {
      benchElf(isa, elf, name, repeat, json);
    } else {
      bench(isa, "gemm-bound", ember::bench::benchJob(isa, "gemm-bound", gemmBound(tiles, 16)),
            repeat, json);
      bench(isa, "dma-bound", ember::bench::benchJob(isa, "dma-bound", dmaBound(tiles)), repeat,
            json);
    }
    if (!jsonPath.empty())
      ember::platform::writeJsonFile(jsonPath, json);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sim_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
