// Internal: the NPU's architectural state (SRAMs, DRAM window) and, per instruction, its
// data semantics and closed-form timing. No SystemC in here: the engines in
// Simulator.cpp decide *when*, the Machine decides *what* and *how long*.
#pragma once

#include "ember/isa/description.h"
#include "ember/isa/instruction.h"
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

/// The job's DRAM window: the initial image (flat) plus sparse 64 KiB pages beyond it,
/// so a window as large as hardware.dram.size_bytes costs only what is touched.
class Dram {
public:
  Dram(std::vector<std::uint8_t> image, std::uint64_t window);
  std::uint64_t window() const { return window_; }
  void read(std::uint64_t addr, std::uint8_t* out, std::uint64_t n) const;
  void write(std::uint64_t addr, const std::uint8_t* in, std::uint64_t n);
  /// Moves out the flat image (bytes [0, image size)).
  std::vector<std::uint8_t> takeImage() { return std::move(flat_); }

private:
  static constexpr std::uint64_t kPage = 1u << 16;
  std::vector<std::uint8_t> flat_;
  std::uint64_t window_;
  mutable std::map<std::uint64_t, std::vector<std::uint8_t>> pages_;
};

/// The DRAM data bus, shared by the load and store engines.
struct DramBus {
  std::uint64_t free_at = 0; ///< First cycle the bus is not reserved.
};

/// Duration of one instruction.
struct Timing {
  std::uint64_t cycles = 0;       ///< From start to retirement.
  std::uint64_t memory_stall = 0; ///< Part of `cycles` lost to contention / conflicts.
};

class Machine {
public:
  Machine(const isa::IsaDescription& isa, std::vector<std::uint8_t> dram, std::uint64_t window);

  /// Checks operands and applies the data effect of `insn`; fills `counts`.
  std::optional<ExecFault> execute(const isa::Instruction& insn, Cls cls, Counts& counts);
  /// Closed-form duration of `insn` (already executed successfully) starting at `start`.
  /// DMA instructions reserve the DRAM bus in `bus`.
  Timing timing(const isa::Instruction& insn, Cls cls, std::uint64_t start, DramBus& bus) const;

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

  Timing dmaTiming(const isa::Instruction& insn, bool load, std::uint64_t start,
                   DramBus& bus) const;
  Timing gemmTiming(const isa::Instruction& insn) const;
  Timing vectorTiming(const isa::Instruction& insn, Cls cls) const;

  const isa::IsaDescription& isa_;
  std::vector<Sram> srams_; ///< In memories() order.
  Sram *act_ = nullptr, *weight_ = nullptr, *acc_ = nullptr, *param_ = nullptr;
  Dram dram_;
  std::vector<std::int32_t> wblock_; ///< Current weight block, as int32 [c][k].
};

/// Rounding arithmetic shift of the NPU (docs/numerics.md, NPU part).
std::int64_t roundingShift(std::int64_t x, std::int64_t s);
/// Requantization of ARCHITECTURE section 4.
std::int32_t requantize(std::int32_t a, std::int32_t m, std::int32_t s, std::int32_t zp,
                        std::int32_t lo, std::int32_t hi);

} // namespace ember::sim::detail
