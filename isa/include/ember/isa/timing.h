// The per-class cycle formulas of the NPU: the one timing model that the SystemC
// simulator, the NPU compiler's cost model and (through the contract in
// docs/simulator.md section 2) the RTL all follow. Every figure comes from the
// description; all arithmetic is checked, so a duration that does not fit 64 bits is
// reported as overflow rather than wrapped.
#pragma once

#include "ember/isa/description.h"
#include "ember/isa/instruction.h"

#include <cstdint>

namespace ember::isa::timing {

/// "No limit" for the `maxRows` arguments below.
inline constexpr std::uint64_t kNoCap = UINT64_MAX;

/// Duration of one instruction, from its start (tokens popped) to its end.
struct Duration {
  std::uint64_t cycles = 0;       ///< start .. end.
  std::uint64_t memory_stall = 0; ///< Part of `cycles` lost to the DRAM channel or banks.
  bool overflow = false;          ///< Does not fit 64 bits (`cycles` is then UINT64_MAX).
};

/// The phases of a DMA instruction (docs/simulator.md, rule D1-D3): `head` cycles before
/// its first DRAM request, `transfer` cycles holding the DRAM channel, then `latency`
/// cycles until the last response (0 when it moves no DRAM row).
struct DmaPhases {
  std::uint64_t head = 0;
  std::uint64_t transfer = 0;
  std::uint64_t latency = 0;
  bool uses_channel = false; ///< Moves at least one DRAM row.
  bool overflow = false;
};

/// The DRAM channel shared by the two DMA engines: reserved per DMA instruction.
struct Channel {
  std::uint64_t free_at = 0; ///< First cycle the channel is not reserved.
};

/// SRAM rows of `m` a DMA moves per cycle (rule D1): as many as fill a DRAM beat
/// (`dram.bytes_per_cycle / row_bytes`), at most one per bank and as many as the widest
/// SRAM row holds (the DMA's data path), at least one.
std::uint64_t dmaRowsPerCycle(const IsaDescription& isa, const MemoryDesc& m);
/// Phases of a DMA of `lines` DRAM lines of `lineRows` contiguous rows each and
/// `sramRows` SRAM rows (padding included) of memory `m`, for instruction `d` (its issue
/// and setup).
DmaPhases dmaPhases(const IsaDescription& isa, const InstrDesc& d, const MemoryDesc& m,
                    std::uint64_t lines, std::uint64_t lineRows, std::uint64_t sramRows);
/// Phases of a dma-load / dma-store instance; `maxRows` caps each row count (budget).
DmaPhases dmaPhases(const IsaDescription& isa, const Instruction& in,
                    std::uint64_t maxRows = kNoCap);
/// A DMA starting at `start`: reserves the channel in `ch` (when it moves DRAM rows) from
/// max(start + head, ch.free_at) for `transfer` cycles; the wait is its memory stall.
Duration dmaOnChannel(const DmaPhases& p, std::uint64_t start, Channel& ch);

/// A gemm of `R` activation rows per weight block (n0 * n1) and `n2` blocks, or a reset
/// of R * n2 rows.
Duration gemm(const IsaDescription& isa, const InstrDesc& d, std::uint64_t R, std::uint64_t n2,
              bool reset);
/// A gemm instance; `maxRows` caps R and R * n2 (reset), and n2 at the weight SRAM rows.
Duration gemm(const IsaDescription& isa, const Instruction& in, std::uint64_t maxRows = kNoCap);

/// Bank-conflict cycles of a vector-binary or quantized-add instance: for each row step
/// whose two source rows sit in one bank of their memory, ceil(2 / read_ports) - 1. 0 for
/// other classes.
/// DW1: cycles the depthwise array spends on one output: each act bank delivers
/// `read_ports` rows a cycle, so the taps' rows (y * tap_s1 + x * tap_s0, y < kh, x < kw)
/// take ceil(max over banks of the taps in that bank / read_ports) cycles.
std::uint64_t depthwiseTapCycles(const IsaDescription& isa, std::uint64_t kh, std::uint64_t kw,
                                 std::uint64_t tapS0, std::uint64_t tapS1);
/// DW1: a depthwise instruction of R = n0 * n1 outputs, C cycles each (depthwiseTapCycles):
/// issue + WL + R * C * cycles_per_row + fill + drain.
Duration depthwise(const IsaDescription& isa, const InstrDesc& d, std::uint64_t R, std::uint64_t C);
Duration depthwise(const IsaDescription& isa, const Instruction& in,
                   std::uint64_t maxRows = kNoCap);
std::uint64_t bankConflicts(const IsaDescription& isa, const Instruction& in);
/// A vector-binary, vector-unary, requantize, quantized-add or lut instruction of `steps`
/// row steps and
/// `conflicts` bank-conflict cycles.
Duration vector(const InstrDesc& d, std::uint64_t steps, std::uint64_t conflicts);
/// A vector-class instance; with `maxRows` the steps are capped and every two-source
/// step counted as a conflict (budget).
Duration vector(const IsaDescription& isa, const Instruction& in, std::uint64_t maxRows = kNoCap);

/// A normalize (Softmax / LayerNormalization) instruction of `lines` lines of `len` codes
/// on `lanes` lanes (rule N1).
Duration normalize(const InstrDesc& d, std::uint64_t len, std::uint64_t lines, unsigned lanes);
/// A normalize instance; `maxRows` caps the lines and the codes per line (budget).
Duration normalize(const IsaDescription& isa, const Instruction& in,
                   std::uint64_t maxRows = kNoCap);

/// Duration of any instance on an idle DRAM channel (DMA: head + transfer + latency).
Duration idle(const IsaDescription& isa, const Instruction& in);

/// NPU cycles one transfer of `bytes` bytes over the host link takes (hardware.host_link:
/// latency_cycles + ceil(bytes / bytes_per_cycle)); 0 bytes cost nothing. Saturates at
/// UINT64_MAX.
std::uint64_t hostLinkCycles(const IsaDescription& isa, std::uint64_t bytes);

/// Rule E6 (docs/simulator.md): whether an instruction of `d` on the compute engine
/// starts only once the MAC array has finished its last instruction: an instruction that
/// runs on the array, a sync and a halt. The simulator's issue logic and the compiler's
/// cost model both ask this, so the two cannot disagree on what waits.
bool waitsForArray(const InstrDesc& d);

/// Rule E6: the cycles an instruction of `d` that runs for `cycles` holds its engine. A
/// background array instruction holds it for its issue cycles (at most `cycles`) while
/// the array goes on alone; every other instruction holds it to its end.
std::uint64_t engineCycles(const InstrDesc& d, std::uint64_t cycles);

/// The instance's share of the default cycle budget: its idle duration with each loop
/// count limited to one pass over the SRAM rows it walks (docs/simulator.md, "Cycle
/// budget"). UINT64_MAX on overflow.
std::uint64_t onePass(const IsaDescription& isa, const Instruction& in);

} // namespace ember::isa::timing
