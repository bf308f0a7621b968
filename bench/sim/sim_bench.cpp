// Simulation speed: simulated cycles per host second on a long GEMM-bound program and on a
// DMA-bound one (docs/simulator.md, "Speed"). Prints figures; never fails on time.
//   sim_bench [--isa FILE.json] [--tiles N] [--repeat R]
#include "ember/isa/assembler.h"
#include "ember/isa/description.h"
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

void bench(const ember::isa::IsaDescription& isa, const char* name, const std::string& text,
           int repeat) {
  ember::sim::Simulator sim(isa);
  const ember::sim::Job job = ember::bench::benchJob(isa, name, text);
  ember::sim::Options opts;
  opts.record_slices = false;
  double best = 1e30;
  ember::sim::Result r;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    r = sim.run(job, opts);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!r.ok()) {
      std::printf("%s: %s\n", name, r.report.fault->message().c_str());
      return;
    }
  }
  const auto& rep = r.report;
  std::printf(
      "%-11s %-14s %8llu instr %11llu cycles  MAC util %5.1f%%  DRAM util %5.1f%%  host %.3f s  "
      "%.2f M simulated cycles/s\n",
      name, isa.name().c_str(), (unsigned long long)rep.instructions,
      (unsigned long long)rep.cycles, rep.mac_utilization * 100,
      rep.memories.back().utilization * 100, best, double(rep.cycles) / best / 1e6);
}

} // namespace

int main(int argc, char** argv) {
  std::string isaPath;
  int tiles = 2000, repeat = 3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--isa" && i + 1 < argc)
      isaPath = argv[++i];
    else if (a == "--tiles" && i + 1 < argc)
      tiles = std::max(1, std::atoi(argv[++i]));
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: sim_bench [--isa FILE.json] [--tiles N] [--repeat R]\n");
      return a == "-h" || a == "--help" ? 0 : 1;
    }
  }
  try {
    auto isa = ember::isa::IsaDescription::loadDefault(isaPath);
    bench(isa, "gemm-bound", gemmBound(tiles, 16), repeat);
    bench(isa, "dma-bound", dmaBound(tiles), repeat);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sim_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
