// libember_sim: the cycle-accurate SystemC model of the Ember NPU (docs/simulator.md).
#pragma once

#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/sim/Dram.h"
#include "ember/sim/Report.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ember::sim {

/// Knobs of one run.
struct Options {
  /// Stop with a CycleBudget fault when an instruction would end after this many cycles
  /// (before its data effect is computed). 0: Simulator::defaultCycleBudget(job). At most
  /// kMaxCycleBudget (larger values are clamped).
  std::uint64_t cycle_budget = 0;
  /// Size of the job's DRAM window in bytes (0: hardware.dram.size_bytes, as docs/isa.md
  /// says). Accesses beyond it fault; a memory map that does not fit it is refused when
  /// the job is made. Memory is allocated only where written (DramImage).
  std::uint64_t dram_window_bytes = 0;
  /// Names the binary in load errors (run(bin, ...)).
  std::string binary_name = "<binary>";
  /// Keep one Slice per instruction for the trace (costs memory on long programs).
  bool record_slices = true;
  /// Called from the simulation now and then (every 1024 retired instructions) with the
  /// current cycle, the retired count and the program length; for progress lines.
  std::function<void(std::uint64_t cycle, std::uint64_t retired, std::uint64_t total)> progress;
};

/// A program ready to run: instruction words, the initial DRAM window, the debug map.
struct Job {
  std::vector<std::uint8_t> text;     ///< Instruction words, isa.instructionBytes() each.
  DramImage dram;                     ///< The DRAM window (dram_addr 0 is its byte 0).
  std::vector<isa::DebugRange> debug; ///< For per-layer reports (may be empty).
};

/// The outcome of one run.
struct Result {
  bool ok() const { return !report.fault.has_value(); }
  Report report;
  DramImage dram; ///< The DRAM window after the run.
};

/// Cycles added to the instructions' share in the default cycle budget.
constexpr std::uint64_t kBudgetSlack = std::uint64_t(1) << 20;
/// Largest cycle budget (about 13 days at 1 GHz; keeps SystemC time in range).
constexpr std::uint64_t kMaxCycleBudget = std::uint64_t(1) << 50;

/// A simulator for one NPU description. `run` may be called any number of times (each
/// run elaborates a fresh SystemC context); runs in one process are sequential.
class Simulator {
public:
  /// Throws isa::Error if the description's shapes do not fit this micro-architecture
  /// (e.g. act row lanes != MAC rows); the message names what disagrees.
  explicit Simulator(isa::IsaDescription isa);

  const isa::IsaDescription& isa() const { return isa_; }

  /// Runs a job. Never throws for anything the program does: faults end up in
  /// `Result::report.fault`. The SystemC context runs on a thread of its own, joined
  /// before this returns; `Options::progress` is called from that thread. Runs do not
  /// overlap (SystemC has one global context): calls from several threads take turns.
  Result run(const Job& job, const Options& opts = {}) const;

  /// Builds the job of `bin`: encodes the code and writes the constants at the const
  /// region and every input at its I/O entry's offset into a sparse DRAM image (nothing
  /// else is allocated). `inputs` maps input names to their bytes in DRAM layout (exactly
  /// `size_bytes`); missing inputs are zeros. Throws isa::Error (naming `file`) for a
  /// memory-map region outside the DRAM window (`dram_window_bytes`, 0: the
  /// description's), an input of the wrong size or an unknown name.
  Job makeJob(const isa::Binary& bin,
              const std::map<std::string, std::vector<std::uint8_t>>& inputs,
              std::uint64_t dram_window_bytes = 0, const std::string& file = "<binary>") const;
  /// The checks of makeJob (same errors, same order) without building the job's DRAM.
  void checkJob(const isa::Binary& bin,
                const std::map<std::string, std::vector<std::uint8_t>>& inputs,
                std::uint64_t dram_window_bytes = 0, const std::string& file = "<binary>") const;

  /// The cycle budget of `job` when Options::cycle_budget is 0: kBudgetSlack plus, per
  /// instruction, its duration with each loop count limited to the rows of the SRAM the
  /// loop walks (one pass over the memories; docs/simulator.md "Cycle budget"), at most
  /// kMaxCycleBudget. A program whose instructions each touch an SRAM row at most once
  /// never reaches it; one that loops over the same rows for long stops early.
  std::uint64_t defaultCycleBudget(const Job& job) const;

  /// makeJob + run.
  Result run(const isa::Binary& bin, const std::map<std::string, std::vector<std::uint8_t>>& inputs,
             const Options& opts = {}) const;

private:
  /// defaultCycleBudget's computation.
  std::uint64_t onePassBudget(const Job& job) const;

  isa::IsaDescription isa_;
};

} // namespace ember::sim
