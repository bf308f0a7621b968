// RTL simulation speed: simulated cycles per host second of the Verilated NPU
// (libember_rtlsim) beside the SystemC model's, on the same GEMM-bound and DMA-bound
// programs as bench/sim, in the same run; the cycle counts must agree. Prints figures;
// never fails on time.
//   rtl_bench [--isa FILE.json] [--tiles N]
#include "ember/isa/assembler.h"
#include "ember/isa/description.h"
#include "ember/rtl/RtlSim.h"
#include "ember/sim/Simulator.h"

#include "BenchPrograms.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool bench(const ember::isa::IsaDescription& isa, const char* name, const std::string& text) {
  ember::sim::Simulator sim(isa);
  const ember::platform::Job job = ember::bench::benchJob(isa, name, text);
  ember::platform::Options opts;
  opts.record_slices = false;
  auto t0 = std::chrono::steady_clock::now();
  ember::platform::Result s = sim.run(job, opts);
  const double ts = seconds(t0);
  ember::rtl::RtlSimulator rtl(isa);
  t0 = std::chrono::steady_clock::now();
  ember::rtl::RtlRun r = rtl.run(job, opts);
  const double tr = seconds(t0);
  if (!s.ok() || !r.result.ok()) {
    std::printf("%s: a run faulted\n", name);
    return false;
  }
  const auto c = s.report.cycles;
  std::printf("%-11s %-14s %10llu cycles (RTL %s)  RTL %7.0f k cycles/s (%.2f s)  SystemC "
              "%8.2f M cycles/s (%.3f s)  SystemC/RTL %.0fx  DRAM in flight max %llu B\n",
              name, isa.name().c_str(), static_cast<unsigned long long>(c),
              r.result.report.cycles == c ? "equal" : "DIFFERENT", double(c) / tr / 1e3, tr,
              double(c) / ts / 1e6, ts, tr / ts,
              static_cast<unsigned long long>(r.max_inflight_bytes));
  return r.result.report.cycles == c;
}

} // namespace

int main(int argc, char** argv) {
  std::string isaPath;
  int tiles = 200;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--isa" && i + 1 < argc)
      isaPath = argv[++i];
    else if (a == "--tiles" && i + 1 < argc)
      tiles = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: rtl_bench [--isa FILE.json] [--tiles N]\n");
      return a == "-h" || a == "--help" ? 0 : 2;
    }
  }
  try {
    auto isa = ember::isa::IsaDescription::loadDefault(isaPath);
    bool ok = bench(isa, "gemm-bound", ember::bench::gemmBound(tiles, 16));
    ok = bench(isa, "dma-bound", ember::bench::dmaBound(tiles)) && ok;
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rtl_bench: %s\n", e.what());
    return 1;
  }
}
