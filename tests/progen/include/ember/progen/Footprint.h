// The SRAM rows and DRAM bytes an NPU instruction may touch, as bounding ranges: one
// implementation for the program generator (which keeps background array instructions
// race-free, docs/simulator.md rule E6) and the RTL co-simulation (which compares outputs
// only for race-free runs).
#pragma once

#include "ember/isa/description.h"
#include "ember/isa/instruction.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::progen {

/// The name RowRange::mem gives DRAM (every other name is one of the description's
/// memories).
inline constexpr char kDram[] = "dram";

/// A bounding range of rows (or, for DRAM, bytes) one instruction may touch in one memory,
/// read or written. Bounding: the rows inside [lo, hi] that a strided walk skips count
/// as touched, so a check built on it may report a race that is none, never miss one.
struct RowRange {
  std::string mem;  ///< "act", "acc", "weight", "param" (the description's names) or "dram"
  std::uint64_t lo; ///< First row (byte).
  std::uint64_t hi; ///< Last row (byte), inclusive.
  bool write;       ///< Written (else only read).
};

/// One walk of an array instruction (gemm or depthwise): the role of its base address,
/// its memory and how many rows past the base it reaches. Zero loop counts add nothing,
/// so an instruction whose loops are being drawn can be placed inside its memories.
struct ArrayWalk {
  const char* addr; ///< Base address role: acc_addr, act_addr or wgt_addr.
  const char* mem;  ///< acc, act or weight.
  std::uint64_t ext;
};

/// The acc, act and weight walks (in that order) of a gemm or depthwise instruction `in`:
/// gemm sums (n<l> - 1) * <p>_s<l> over l = 0..2 (the weight walk only over n2); depthwise
/// adds the taps' (kh - 1) * tap_s1 + (kw - 1) * tap_s0 to its act walk and reads one
/// weight row.
std::vector<ArrayWalk> arrayWalks(const isa::Instruction& in);

/// The ranges `in` may touch, by semantic class: a DMA its SRAM rows (padding included)
/// and its DRAM bytes; gemm and depthwise their arrayWalks() (acc written); the vector
/// classes, requantize, quantized-add and lut their destination (written) and source
/// walks plus the whole param memory (their parameters and tables, read); normalize its
/// act lines (ceil(len / lanes) rows walked by <p>_sb) and its acc parameter block.
/// Nothing for an instruction whose loops are empty, nor for sync or halt. Two
/// instructions that overlap in time and whose ranges meet in one memory with a write
/// race (the ISA leaves the outcome undefined, docs/isa/programmers-model.md section 1).
std::vector<RowRange> footprint(const isa::IsaDescription& isa, const isa::Instruction& in);

} // namespace ember::progen
