// libember_sim: the cycle-accurate SystemC model of the Ember NPU (docs/simulator.md).
#pragma once

#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/sim/Report.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ember::sim {

/// Knobs of one run.
struct Options {
  /// Stop with a CycleBudget fault after this many cycles (0: 2^40).
  std::uint64_t cycle_budget = 0;
  /// Size of the job's DRAM window in bytes (0: hardware.dram.size_bytes, as docs/isa.md
  /// says). Accesses beyond it fault. Memory is allocated only where touched.
  std::uint64_t dram_window_bytes = 0;
  /// Keep one Slice per instruction for the trace (costs memory on long programs).
  bool record_slices = true;
  /// Called from the simulation now and then (every 1024 retired instructions) with the
  /// current cycle, the retired count and the program length; for progress lines.
  std::function<void(std::uint64_t cycle, std::uint64_t retired, std::uint64_t total)> progress;
};

/// A program ready to run: instruction words, the initial DRAM window, the debug map.
struct Job {
  std::vector<std::uint8_t> text;     ///< Instruction words, isa.instructionBytes() each.
  std::vector<std::uint8_t> dram;     ///< The DRAM window (dram_addr 0 is its byte 0).
  std::vector<isa::DebugRange> debug; ///< For per-layer reports (may be empty).
};

/// The outcome of one run.
struct Result {
  bool ok() const { return !report.fault.has_value(); }
  Report report;
  std::vector<std::uint8_t> dram; ///< The DRAM image after the run (same size as the job's).
};

/// A simulator for one NPU description. `run` may be called any number of times (each
/// run elaborates a fresh SystemC context); runs in one process are sequential.
class Simulator {
public:
  /// Throws isa::Error if the description's shapes do not fit this micro-architecture
  /// (e.g. act row lanes != MAC rows); the message names what disagrees.
  explicit Simulator(isa::IsaDescription isa);

  const isa::IsaDescription& isa() const { return isa_; }

  /// Runs a job. Never throws for anything the program does: faults end up in
  /// `Result::report.fault`.
  Result run(const Job& job, const Options& opts = {}) const;

  /// Builds the job of `bin`: encodes the code, lays out the DRAM image up to the end of the
  /// memory map (constants at the const region, every input at its I/O entry's offset;
  /// at least `dram_window_bytes` long if given). `inputs` maps input names
  /// to their bytes in DRAM layout (exactly `size_bytes`); missing inputs are zeros.
  /// Throws isa::Error for an input of the wrong size or an unknown name.
  Job makeJob(const isa::Binary& bin,
              const std::map<std::string, std::vector<std::uint8_t>>& inputs,
              std::uint64_t dram_window_bytes = 0) const;

  /// makeJob + run.
  Result run(const isa::Binary& bin, const std::map<std::string, std::vector<std::uint8_t>>& inputs,
             const Options& opts = {}) const;

private:
  isa::IsaDescription isa_;
};

} // namespace ember::sim
