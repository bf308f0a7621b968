// Per-layer figures of a run: the roofline of a layer (the one definition the report and
// bench/npu/npu_bench.cpp use) and the per-layer sums that the SystemC model and the RTL
// harness both take from each retired instruction, so their layer rows are equal by
// construction whenever their instruction timings are.
#pragma once

#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/platform/Report.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ember::platform {

/// What bounds a piece of work on the NPU from below: the array doing only its MACs at
/// peak, or DRAM moving only its bytes at full bandwidth.
struct Roofline {
  double mac_bound = 0;      ///< MACs / peak MACs per cycle (cycles).
  double dram_bound = 0;     ///< DRAM bytes / DRAM bytes per cycle (cycles).
  double bound = 0;          ///< The larger of the two.
  double efficiency = 0;     ///< bound / cycles; 0 when cycles is 0.
  const char* kind = "none"; ///< "mac" (mac_bound >= dram_bound, not both 0), "dram", "none".
};

/// The roofline of `macs` MACs and `dramBytes` DRAM bytes done in `cycles` cycles on an
/// array of `peakMacsPerCycle` and a DRAM of `dramBytesPerCycle` (the description's
/// figures: IsaDescription::peakMacsPerCycle and dramBytesPerCycle). Throws ember::Error
/// when a peak is not a positive finite number or a count is negative or not finite.
Roofline roofline(double macs, double dramBytes, double cycles, double peakMacsPerCycle,
                  double dramBytesPerCycle);

/// "compute token 1234": the largest stall counter (token or memory) of the engines that
/// carry the layer's bound (compute for "mac"; load and store for "dram"; all three for
/// "none"), or "-" when they never stalled. Ties go to the earlier engine, token first.
std::string layerStall(const LayerReport& l);

/// The per-layer sums of one run over the job's debug map.
class LayerAccounts {
public:
  /// `debug`: the job's debug map (sorted by `first`, ranges disjoint; may be empty).
  explicit LayerAccounts(std::vector<isa::DebugRange> debug);

  /// Accounts retired instruction `s` with its MACs, DRAM bytes (read + written) and
  /// dynamic energy to the layer whose range holds `s.index` (none: nothing).
  void add(const Slice& s, std::uint64_t macs, std::uint64_t dramBytes, double energyPj);

  /// One LayerReport per debug-map entry (in its order): cycles, MACs, MAC use, DRAM
  /// bytes, energy (with leakage over its cycles), the per-engine sums and the roofline
  /// from `isa`'s peak MACs and DRAM bytes per cycle.
  std::vector<LayerReport> layers(const isa::IsaDescription& isa) const;

private:
  struct Acc {
    std::uint64_t start = UINT64_MAX, end = 0, macs = 0, dram_bytes = 0;
    double energy_pj = 0;
    std::array<LayerEngineReport, 3> engines{};
  };
  int layerOf(std::uint32_t index) const;

  std::vector<isa::DebugRange> debug_;
  std::vector<Acc> acc_;
};

} // namespace ember::platform
