// Random legal NPU programs for any ISA description, for fuzzing the simulator and for
// co-simulation against the RTL (both sides run the same generated binary).
#pragma once

#include "ember/isa/binary.h"
#include "ember/isa/description.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::progen {

/// Size limits of a generated program.
struct GenOptions {
  std::size_t max_instructions = 48;      ///< Body instructions (plus prologue and finish).
  std::uint64_t max_count = 8;            ///< Largest loop count / DMA size of one loop.
  std::uint64_t max_stride = 3;           ///< Largest SRAM row stride.
  std::uint64_t scratch_bytes = 1u << 20; ///< DRAM scratch region the DMAs use.
};

/// A random *legal* program for `isa`, decided by `entropy` (any bytes; when they run
/// out, zeros are read, so every input gives a program). Legal means: every field fits
/// its encoding; every SRAM row an instruction touches lies inside its memory; every DRAM
/// byte inside the scratch region of the memory map; memory selects are ones the
/// instruction allows; vector shifts are in -31..31; requantize finds valid
/// multipliers and shifts (the prologue loads the param SRAM from the constants, every
/// int32 lane in 1..62); and the dependency tokens are balanced in program order (a pop
/// only consumes a token pushed earlier, at most token_fifo_depth outstanding per FIFO),
/// so the program cannot deadlock, underflow or overflow a FIFO. It ends with the halt
/// instruction. Everything (instruction set, fields, memories, sizes) comes from `isa`:
/// instructions are chosen by semantic class, so a vendor's description works unchanged.
isa::Binary generate(const isa::IsaDescription& isa, const std::uint8_t* entropy, std::size_t size,
                     const GenOptions& opts = {});

/// generate() from a seed (the entropy is a std::mt19937_64 stream of the seed).
isa::Binary generate(const isa::IsaDescription& isa, std::uint64_t seed,
                     const GenOptions& opts = {});

} // namespace ember::progen
