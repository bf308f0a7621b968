// The benchmark programs of bench/sim and bench/rtl: a GEMM-bound and a DMA-bound
// assembly program, long enough to time (docs/simulator.md "Speed", docs/rtl.md).
#pragma once

#include "ember/isa/assembler.h"
#include "ember/sim/Simulator.h"

#include <string>
#include <vector>

namespace ember::bench {

inline /// Double-buffered: the load engine brings 128 act rows per tile, the compute engine runs
       /// one gemm over them against `blocks` weight blocks (one per output-channel block).
    std::string
    gemmBound(int tiles, int blocks) {
  std::string p =
      "dma.ld sram=weight sram_addr=0 dram_addr=0x100000 size0=" + std::to_string(blocks) +
      " size1=1 size2=1\n";
  for (int i = 0; i < tiles; ++i) {
    const std::string buf = std::to_string((i % 2) * 128);
    p += "dma.ld sram=act sram_addr=" + buf + " dram_addr=" + std::to_string((i % 64) * 2048) +
         " size0=128 size1=1 size2=1 push_next" + (i >= 2 ? " pop_next" : "") + "\n";
    p += "gemm act_addr=" + buf +
         " acc_addr=0 wgt_addr=0 n0=128 n1=1 n2=" + std::to_string(blocks) +
         " act_s0=1 acc_s0=1 acc_s2=0 wgt_s2=1 pop_prev push_prev\n";
  }
  return p + "finish\n";
}

/// Loads and stores of 255-row boxes; the compute engine only passes tokens.
inline std::string dmaBound(int tiles) {
  std::string p;
  for (int i = 0; i < tiles; ++i) {
    const std::string buf = std::to_string((i % 2) * 256);
    p += "dma.ld sram=act sram_addr=" + buf + " dram_addr=" + std::to_string((i % 64) * 4096) +
         " size0=255 size1=1 size2=1 push_next" + (i >= 2 ? " pop_next" : "") + "\n";
    p += "sync engine=compute pop_prev push_next\n";
    p += "dma.st sram=act sram_addr=" + buf +
         " dram_addr=" + std::to_string(0x80000 + (i % 64) * 4096) +
         " size0=255 size1=1 size2=1 pop_prev push_prev\n";
    p += "sync engine=compute pop_next push_prev\n";
  }
  return p + "finish\n";
}

/// The job of a benchmark program: its code, and 2 MiB of DRAM filled with 3s.
inline ember::platform::Job benchJob(const ember::isa::IsaDescription& isa, const char* name,
                                     const std::string& text) {
  ember::isa::Binary bin = ember::isa::assemble(text, isa, name);
  ember::platform::Job job = ember::platform::makeJob(isa, bin, {}, 0);
  job.dram = ember::platform::DramImage(std::vector<std::uint8_t>(0x200000, 3));
  return job;
}

} // namespace ember::bench
