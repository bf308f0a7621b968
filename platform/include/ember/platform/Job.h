// What a job is to every engine that runs one (the SystemC model, the Verilated RTL): the
// program and its DRAM window going in, the report and the window coming out, and the
// knobs of a run. Engine-neutral, so the runtime and the RTL harness share it with the
// simulator without depending on each other.
#pragma once

#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/platform/Dram.h"
#include "ember/platform/Report.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ember::platform {

/// Knobs of one run.
struct Options {
  /// Stop with a CycleBudget fault when an instruction would end after this many cycles
  /// (before its data effect is computed). 0: defaultCycleBudget(isa, job). At most
  /// kMaxCycleBudget (larger values are clamped).
  std::uint64_t cycle_budget = 0;
  /// Size of the job's DRAM window in bytes (0: hardware.dram.size_bytes, as
  /// docs/isa/programmers-model.md says). Accesses beyond it fault; a memory map that does not fit
  /// it is refused when the job is made. Memory is allocated only where written (DramImage).
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

/// Inputs of a job by name, each in DRAM layout (exactly its I/O entry's size_bytes).
using JobInputs = std::map<std::string, std::vector<std::uint8_t>>;

/// The checks of makeJob (same errors, same order) without building the job's DRAM:
/// isa::Error (naming `file`) for a memory-map region outside the DRAM window
/// (`dram_window_bytes`, 0: the description's), an input of the wrong size or an unknown
/// name. Every engine's run of a binary starts here, so one program gets one verdict.
void checkJob(const isa::IsaDescription& isa, const isa::Binary& bin, const JobInputs& inputs,
              std::uint64_t dram_window_bytes = 0, const std::string& file = "<binary>");

/// The job of `bin`: the code encoded and the constants at the const region and every
/// input at its I/O entry's offset, in a sparse DRAM image (nothing else is allocated);
/// missing inputs are zeros. Throws as checkJob.
Job makeJob(const isa::IsaDescription& isa, const isa::Binary& bin, const JobInputs& inputs,
            std::uint64_t dram_window_bytes = 0, const std::string& file = "<binary>");

/// The cycle budget of `job` when Options::cycle_budget is 0, the same for every engine
/// (SystemC model, Verilated RTL): kBudgetSlack plus, per instruction, its duration with
/// each loop count limited to the rows of the SRAM the loop walks (one pass over the
/// memories; docs/simulator.md "Cycle budget"), at most kMaxCycleBudget. A program whose
/// instructions each touch an SRAM row at most once never reaches it; one that loops
/// over the same rows for long stops early.
std::uint64_t defaultCycleBudget(const isa::IsaDescription& isa, const Job& job);

} // namespace ember::platform
