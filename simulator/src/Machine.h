// Internal: the NPU's architectural state (SRAMs, DRAM window) and, per instruction, its
// data semantics and closed-form timing. No SystemC in here: the engines in
// Simulator.cpp decide *when*, the Machine decides *what* and *how long*.
#pragma once

#include "ember/isa/description.h"
#include "ember/isa/instruction.h"
#include "ember/sim/Dram.h"
#include "ember/sim/Report.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ember::sim::detail {

/// Semantic classes the simulator implements.
enum class Cls { DmaLoad, DmaStore, Gemm, VecBinary, VecUnary, Requant, Lut, Sync, Halt };

/// Class of `d`; throws isa::Error for a class this simulator does not implement.
Cls classOf(const isa::InstrDesc& d);

/// Action counts of one instruction (for energy and traffic counters).
struct Counts {
  std::uint64_t macs = 0;
  std::uint64_t dram_read = 0, dram_write = 0;
  std::uint64_t bursts = 0;
  std::uint64_t lane_ops = 0;                       ///< Vector-unit lane operations (rows * lanes).
  std::vector<std::uint64_t> sram_read, sram_write; ///< Bytes, by position in memories().
};

/// A fault raised by executing an instruction (engine/index/cycle are added by the caller).
struct ExecFault {
  FaultKind kind;
  std::string reason;
};

/// The job's DRAM window: a sparse image (pages allocated when written) and its size.
class Dram {
public:
  Dram(DramImage image, std::uint64_t window) : image_(std::move(image)), window_(window) {}
  std::uint64_t window() const { return window_; }
  void read(std::uint64_t addr, std::uint8_t* out, std::uint64_t n) const {
    image_.read(addr, out, n);
  }
  void write(std::uint64_t addr, const std::uint8_t* in, std::uint64_t n) {
    image_.write(addr, in, n);
  }
  /// Moves out the image.
  DramImage takeImage() { return std::move(image_); }

private:
  DramImage image_;
  std::uint64_t window_;
};

/// The DRAM data bus, shared by the load and store engines.
struct DramBus {
  std::uint64_t free_at = 0; ///< First cycle the bus is not reserved.
};

/// Duration of one instruction.
struct Timing {
  std::uint64_t cycles = 0;       ///< From start to retirement.
  std::uint64_t memory_stall = 0; ///< Part of `cycles` lost to contention / conflicts.
  bool overflow = false;          ///< The duration does not fit 64 bits (cycles is then max).
};

class Machine {
public:
  Machine(const isa::IsaDescription& isa, DramImage dram, std::uint64_t window);

  /// Checks operands and applies the data effect of `insn`; fills `counts`.
  std::optional<ExecFault> execute(const isa::Instruction& insn, Cls cls, Counts& counts);
  /// Closed-form duration of `insn` (already executed successfully) starting at `start`.
  /// DMA instructions reserve the DRAM bus in `bus`.
  Timing timing(const isa::Instruction& insn, Cls cls, std::uint64_t start, DramBus& bus) const;
  /// Duration of `insn` (no contention) with its loop counts limited to one pass over the
  /// SRAM rows each loop walks: its share of the default cycle budget. UINT64_MAX on
  /// overflow.
  std::uint64_t passCycles(const isa::Instruction& insn, Cls cls) const;

  Dram& dram() { return dram_; }
  std::size_t memoryCount() const { return srams_.size(); }

private:
  struct Sram {
    const isa::MemoryDesc* desc = nullptr;
    std::vector<std::uint8_t> bytes;
  };
  Sram* sramById(std::int64_t id);
  std::size_t posOf(const isa::MemoryDesc* m) const;

  std::optional<ExecFault> dma(const isa::Instruction& insn, bool load, Counts& c);
  std::optional<ExecFault> gemm(const isa::Instruction& insn, Counts& c);
  std::optional<ExecFault> vector(const isa::Instruction& insn, Cls cls, Counts& c);

  // `maxRows` limits the rows (loop steps) counted; UINT64_MAX for the real duration.
  Timing dmaTiming(const isa::Instruction& insn, std::uint64_t start, DramBus& bus,
                   std::uint64_t maxRows) const;
  Timing gemmTiming(const isa::Instruction& insn, std::uint64_t maxRows) const;
  Timing vectorTiming(const isa::Instruction& insn, Cls cls, std::uint64_t maxRows) const;

  const isa::IsaDescription& isa_;
  std::vector<Sram> srams_; ///< In memories() order.
  Sram *act_ = nullptr, *weight_ = nullptr, *acc_ = nullptr, *param_ = nullptr;
  Dram dram_;
  std::vector<std::int32_t> wblock_; ///< Current weight block, as int32 [c][k].
};

/// Saturating uint64 arithmetic for range checks: with fields up to 64 bits wide, a
/// wrapped address could pass a bounds check.
inline std::uint64_t satAdd(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
inline std::uint64_t satMul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/// Rounding arithmetic shift of the NPU (docs/numerics.md, NPU part).
std::int64_t roundingShift(std::int64_t x, std::int64_t s);
/// Requantization of ARCHITECTURE section 4.
std::int32_t requantize(std::int32_t a, std::int32_t m, std::int32_t s, std::int32_t zp,
                        std::int32_t lo, std::int32_t hi);

} // namespace ember::sim::detail
