// The NPU's energy model (docs/simulator.md, "Energy"): what one instruction does that
// costs energy, as a function of its fields and the description only, and the sums a run
// reports. The SystemC simulator and the RTL harness both account every retired
// instruction through it, so the two report the same picojoules for the same program
// (`ember-run --compare sim,rtl` compares them); there is no second copy of the formula.
#pragma once

#include "ember/isa/description.h"
#include "ember/isa/instruction.h"

#include <cstdint>
#include <vector>

namespace ember::isa::energy {

/// The energy-relevant actions of one instruction that runs to its end.
struct Counts {
  std::uint64_t macs = 0;
  std::uint64_t dram_read = 0, dram_write = 0;      ///< Bytes.
  std::uint64_t bursts = 0;                         ///< DRAM requests (burst-aligned) of a DMA.
  std::uint64_t lane_ops = 0;                       ///< Vector-unit lane operations (rows * lanes).
  std::uint64_t elements = 0;                       ///< Codes a normalize instruction processed.
  std::vector<std::uint64_t> sram_read, sram_write; ///< Bytes, by position in memories().
};

/// The counts of `in` when it completes (an instruction that faults retires nothing): its
/// loop counts, strides, paddings and memory selects against the description. An
/// instruction with a zero loop count, or a select naming no memory, counts nothing.
Counts countsOf(const IsaDescription& isa, const Instruction& in);

/// The sums of a run: every retired instruction's dynamic energy by unit and its traffic.
/// Leakage (per cycle) and the per-memory energies (bytes x the memory's figure) are
/// added when the report is made (platform::addEnergy). All sums are checked: a figure
/// that stops being finite throws isa::Error (the schema's maximum of 1e6 pJ per event
/// keeps every total of 64-bit counts finite, so that is a broken description).
struct Meter {
  explicit Meter(const IsaDescription& isa);

  /// Adds one retired instruction; returns its dynamic energy in pJ (issue, per-action,
  /// SRAM and DRAM bytes): the per-layer figure.
  double add(const IsaDescription& isa, const Instruction& in, const Counts& c);

  double mac = 0, dma = 0, vector = 0, control = 0; ///< pJ: issue + per-action, by unit.
  std::uint64_t macs = 0, dram_read = 0, dram_write = 0;
  std::vector<std::uint64_t> sram_read, sram_write; ///< Bytes, by position in memories().
};

/// a + b, throwing isa::Error naming `what` when the sum is not finite.
double checkedSum(double a, double b, const char* what);

} // namespace ember::isa::energy
