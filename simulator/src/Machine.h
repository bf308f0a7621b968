// Internal: the NPU's architectural state (SRAMs, DRAM window) and, per instruction, its
// data semantics. No SystemC in here: the cycle engine (Npu.cpp) decides *when*, with the
// durations of libember_isa's timing model (ember/isa/timing.h); the Machine decides *what*.
#pragma once

#include "Kernels.h"
#include "ember/isa/description.h"
#include "ember/isa/energy.h"
#include "ember/isa/instruction.h"
#include "ember/platform/Dram.h"
#include "ember/platform/Report.h"

#include "PlatformTypes.h"
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ember::sim::detail {

/// Semantic classes (the simulator implements every built-in one).
using Cls = isa::SemanticClass;

/// Class of `d`; throws isa::Error for a class this simulator does not implement.
Cls classOf(const isa::InstrDesc& d);

/// Action counts of one instruction (for energy and traffic counters): the energy
/// model's, computed from the instruction's fields once it has run (isa/energy.h).
using Counts = isa::energy::Counts;

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

class Machine {
public:
  Machine(const isa::IsaDescription& isa, DramImage dram, std::uint64_t window);

  /// Checks operands and applies the data effect of `insn`; fills `counts`.
  std::optional<ExecFault> execute(const isa::Instruction& insn, Cls cls, Counts& counts);

  /// E6: whether the array is still running a background gemm when the next instruction
  /// starts (the cycle engine knows; the Machine then refuses accesses to its rows).
  void setArrayBusy(bool busy) { guard_.on = busy && guard_.background; }

  Dram& dram() { return dram_; }
  std::size_t memoryCount() const { return srams_.size(); }

private:
  /// The data effect alone (execute without the counts).
  std::optional<ExecFault> apply(const isa::Instruction& insn, Cls cls);
  struct Sram {
    const isa::MemoryDesc* desc = nullptr;
    std::vector<std::uint8_t> bytes;
  };
  Sram* sramById(std::int64_t id);
  std::size_t posOf(const isa::MemoryDesc* m) const;

  std::optional<ExecFault> dma(const isa::Instruction& insn, bool load);
  std::optional<ExecFault> gemm(const isa::Instruction& insn);
  /// The depthwise class (docs/isa/instructions.md section 2.12): taps on the array's rows.
  std::optional<ExecFault> depthwise(const isa::Instruction& insn);
  /// Rule E6's checks and bookkeeping for an instruction on the array.
  std::optional<ExecFault> arrayStart(const isa::Instruction& insn);
  std::optional<ExecFault> vector(const isa::Instruction& insn, Cls cls);
  /// The quantized-add class (docs/isa/instructions.md section 2.10): two act sources, act result.
  std::optional<ExecFault> quantizedAdd(const isa::Instruction& insn);
  /// The normalize class (docs/isa/instructions.md section 2.11): Softmax or LayerNormalization of
  /// whole lines of act codes, parameters in acc rows.
  std::optional<ExecFault> normalize(const isa::Instruction& insn);

  /// Rows [first, last] of `m` that an instruction reads (`write` false) or writes: a
  /// bad-operand fault when they meet the running background gemm's rows (rule E6).
  std::optional<ExecFault> touch(const Sram* m, std::uint64_t first, std::uint64_t last,
                                 bool write) const;

  /// The rows of the last array instruction (act and weight read, acc read and written),
  /// for rule E6; a range with first > last is empty (a reset gemm reads no act or weight).
  struct Guard {
    bool on = false, background = false;
    const std::string* cls = nullptr; ///< The array instruction's class (its message).
    std::uint64_t act[2] = {1, 0}, weight[2] = {1, 0}, acc[2] = {1, 0};
  } guard_;

  const isa::IsaDescription& isa_;
  std::vector<Sram> srams_; ///< In memories() order.
  Sram *act_ = nullptr, *weight_ = nullptr, *acc_ = nullptr, *param_ = nullptr;
  Dram dram_;
  GemmKernel mac_; ///< The MAC array's data path on the host.
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
inline std::int64_t roundingShift(std::int64_t x, std::int64_t s) {
  if (s > 0) {
    s = std::min<std::int64_t>(s, 62);
    return (x + (std::int64_t(1) << (s - 1))) >> s;
  }
  if (s < 0) {
    std::int64_t l = std::min<std::int64_t>(-s, 32);
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) << l);
  }
  return x;
}
/// Requantization of ARCHITECTURE section 4 (inline: the vector unit calls it per lane).
inline std::int32_t requantize(std::int32_t a, std::int32_t m, std::int32_t s, std::int32_t zp,
                               std::int32_t lo, std::int32_t hi) {
  std::int64_t prod = static_cast<std::int64_t>(a) * static_cast<std::int64_t>(m);
  std::int64_t y = ((prod + (std::int64_t(1) << (s - 1))) >> s) + zp;
  return static_cast<std::int32_t>(std::max<std::int64_t>(lo, std::min<std::int64_t>(y, hi)));
}

} // namespace ember::sim::detail
