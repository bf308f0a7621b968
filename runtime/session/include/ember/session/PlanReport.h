#pragma once
/// \file
/// The one report of a partitioned run (`ember-run --report R.json --trace T.json` on a
/// model the NPU does not run whole, or on a package): the placement, the end-to-end
/// estimate with the NPU segments' simulated cycles, and every segment — NPU segments
/// with their whole simulation report, host segments with their measured wall time — in
/// one JSON file, and every segment on one Perfetto timeline, one after another. A whole
/// plan keeps the simulator's own report (docs/simulator.md).

#include "ember/driver/Estimate.h"
#include "ember/driver/Execute.h"
#include "ember/isa/description.h"
#include "ember/platform/Report.h"
#include "ember/session/Devices.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace ember::session {

/// The plan's estimate (with the rates it was placed by) where each NPU segment's cycles
/// are the simulated ones of `runs` (one entry per segment, as PlanExecutor gives them).
partition::PlanEstimate runEstimate(const partition::Plan& plan, const isa::IsaDescription& isa,
                                    const std::vector<partition::SegmentRun>& runs);

/// The report JSON (schema in docs/simulator.md, "Partitioned runs") with `e`, the run's
/// estimate (runEstimate). `npuReports` holds the NPU segments' reports in order.
nlohmann::json planReportJson(const partition::Plan& plan, const isa::IsaDescription& isa,
                              const partition::PlanEstimate& e,
                              const std::vector<partition::SegmentRun>& runs,
                              const std::vector<platform::Report>& npuReports);

/// The Chrome / Perfetto trace: one process per segment, placed one after another on the
/// estimated end-to-end timeline (an NPU segment's engines and layers as the simulator
/// traces them, after its inbound link transfers; a host segment as one slice of its
/// estimated time, its measured wall time in the slice's arguments).
nlohmann::json planTrace(const partition::Plan& plan, const isa::IsaDescription& isa,
                         const partition::PlanEstimate& e,
                         const std::vector<partition::SegmentRun>& runs,
                         const std::vector<platform::Report>& npuReports);

/// Writes `opts.reportJson` and `opts.traceJson` (either may be empty) atomically.
void writePlanReports(const DeviceOptions& opts, const partition::Plan& plan,
                      const isa::IsaDescription& isa,
                      const std::vector<partition::SegmentRun>& runs,
                      const std::vector<platform::Report>& npuReports);

} // namespace ember::session
