#pragma once
/// \file
/// The end-to-end time of a partitioned model as one figure: the NPU's cycles at its
/// clock, the host's work at the rates of PartitionOptions (`--host-gmacs`), the values
/// that cross between host and NPU over the description's host link
/// (`hardware.host_link`), and the fixed cost of each NPU job. The partitioner weighs the
/// same terms when it places nodes (docs/compiler/partitioning.md), and the reports of
/// emberc and ember-run print them, so a placement can be judged by the number it was
/// chosen by.

#include "ember/driver/Partition.h"
#include "ember/isa/description.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::partition {

/// Estimates `p` on `isa` with the host rates and job cost of `o`. `npuCycles`, when not
/// empty, holds one figure per segment (simulated cycles of the NPU segments; the others
/// ignored) and replaces the compiler's estimate. A whole plan moves the model's inputs
/// in and its outputs out; a plan loaded from a package has no nodes, so its host
/// segments are estimated from the MACs and element counts the package records.
PlanEstimate estimatePlan(const Plan& p, const isa::IsaDescription& isa, const PartitionOptions& o,
                          const std::vector<uint64_t>& npuCycles = {});

/// Seconds one transfer of `bytes` costs between host and NPU: the host link's latency
/// and bandwidth at the NPU's clock, plus the host's conversion at
/// `o.boundaryBytesPerSecond`. 0 bytes cost nothing.
double transferSeconds(const isa::IsaDescription& isa, const PartitionOptions& o, uint64_t bytes);

/// Seconds the host takes for `macs` multiply-accumulates and `elements` other results.
double hostSeconds(const PartitionOptions& o, int64_t macs, int64_t elements);

/// One line: the end-to-end time, its terms and the host's share, e.g.
/// "end to end (estimated): 1.234 ms = NPU 1.100 ms + host 0.080 ms + host link 0.050 ms
/// (12 transfer(s), 1200000 bytes) + 3 NPU job(s) 0.030 ms; host share 6.5%".
std::string formatEstimate(const PlanEstimate& e);

} // namespace ember::partition
