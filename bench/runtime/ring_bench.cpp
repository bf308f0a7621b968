// The cost of going through the job ring (docs/firmware.md section 7): the same programs
// run directly on the SystemC model and as jobs through a runtime device (firmware
// validation, register programming, the watchdog's polling, completion), in the same run.
// Prints the NPU's cycles (equal both ways), the platform cycles a job takes through the
// ring split into the host link (the binary and inputs up, the outputs down), the firmware
// (its own work, the copy DMA's digest-check streams and constant copy, register traffic)
// and the NPU, and host time of both. Never fails on time.
//   ring_bench [--tiles N] [--jobs J] [MODEL.elf...]
// Each MODEL.elf (a compiled model, e.g. ResNet-18 from emberc) runs as one more row, with
// zero inputs.
#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "ember/runtime/Runtime.h"
#include "ember/sim/Simulator.h"

#include "BenchPrograms.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
} // namespace

int main(int argc, char** argv) {
  int tiles = 400, jobs = 8;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tiles" && i + 1 < argc)
      tiles = std::max(1, std::atoi(argv[++i]));
    else if (a == "--jobs" && i + 1 < argc)
      jobs = std::max(1, std::atoi(argv[++i]));
    else
      models.push_back(a);
  }
  try {
    auto isa = ember::isa::IsaDescription::loadDefault("");
    std::vector<std::pair<std::string, ember::isa::Binary>> programs;
    for (const auto& [name, text] :
         {std::pair<const char*, std::string>{"gemm-bound", ember::bench::gemmBound(tiles, 16)},
          {"dma-bound", ember::bench::dmaBound(tiles)}}) {
      ember::isa::Binary bin = ember::isa::assemble(text, isa, name);
      bin.memmap.push_back({"scratch", ember::isa::RegionKind::Scratch, 0, 0x200000});
      programs.emplace_back(name, std::move(bin));
    }
    for (const auto& m : models)
      programs.emplace_back(m.substr(m.find_last_of('/') + 1), ember::isa::readElf(m, isa));
    for (const auto& [label, bin] : programs) {
      const char* name = label.c_str();
      const int n = label.size() > 4 && label.substr(label.size() - 4) == ".elf" ? 2 : jobs;
      ember::sim::Simulator sim(isa);
      auto t0 = std::chrono::steady_clock::now();
      std::uint64_t direct = 0;
      for (int j = 0; j < n; ++j)
        direct = sim.run(bin, {}).report.cycles;
      const double td = since(t0);
      ember::runtime::Device dev(isa, {});
      ember::runtime::Session s(dev);
      t0 = std::chrono::steady_clock::now();
      std::uint64_t ring = 0, platform = 0, link = 0, firmware = 0;
      std::vector<std::uint32_t> ids;
      for (int j = 0; j < n; ++j)
        ids.push_back(s.submit(bin, {}, 0));
      for (auto id : ids) {
        auto c = s.wait(id, std::chrono::minutes(10));
        if (!c || !c->ok()) {
          std::printf("%s: a ring job did not finish (%s)\n", name,
                      c ? c->describe().c_str() : "no completion");
          return 1;
        }
        ring = c->record.cycles;
        platform = c->platform_cycles;
        link = c->link_cycles;
        firmware = c->firmware_cycles;
      }
      const double tr = since(t0);
      using ull = unsigned long long;
      std::printf("%-11s %d jobs: NPU cycles direct %llu, through the ring %llu (%s); "
                  "platform cycles per job %llu = link %llu + firmware %llu + NPU %llu "
                  "(firmware %.2f%% of the NPU's); host %.3f s direct, %.3f s ring "
                  "(ring/direct %.2fx)\n",
                  name, n, ull(direct), ull(ring), direct == ring ? "equal" : "DIFFERENT",
                  ull(platform), ull(link), ull(firmware), ull(platform - link - firmware),
                  100.0 * double(firmware) / double(ring), td, tr, tr / td);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ring_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
