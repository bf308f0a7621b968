#pragma once
/// \file
/// The host runtime of a package (docs/package.md): load the file once, checking it
/// against the NPU's description, prepare its host segments (cpu or interp) and run it
/// as often as wanted, its NPU segments through the runtime (job ring, firmware) on the
/// SystemC platform or the Verilated RTL. ember-run is a thin main over it; a program that
/// embeds Ember does the same.

#include "ember/devices/Devices.h"
#include "ember/driver/Execute.h"
#include "ember/driver/Package.h"
#include "ember/isa/description.h"
#include "ember/sim/Report.h"

#include <memory>
#include <string>
#include <vector>

namespace ember::devices {

/// One package loaded for one NPU device.
class PackageSession {
public:
  /// Loads `path` for description `isa` (ember::Error naming the file, entry and JSON
  /// path when it is not a valid package for it) to run on `device` ("sim", or "rtl" in
  /// builds with the RTL). `opts.reportJson` / `traceJson` get one file per NPU segment
  /// (".segN" before the extension).
  PackageSession(const std::string& path, const isa::IsaDescription& isa,
                 const std::string& device = "sim", const DeviceOptions& opts = {});
  ~PackageSession();
  PackageSession(const PackageSession&) = delete;
  PackageSession& operator=(const PackageSession&) = delete;

  /// The segments, values and placement the package holds.
  const partition::Plan& plan() const { return plan_; }
  /// Runs every segment on the model's inputs (by name) and returns its outputs; `runs`
  /// (optional) receives one entry per segment.
  TensorMap run(const TensorMap& inputs, std::vector<partition::SegmentRun>* runs = nullptr);
  /// The simulation reports of the last run's NPU segments, in order.
  const std::vector<sim::Report>& reports() const { return reports_; }

private:
  isa::IsaDescription isa_;
  partition::Plan plan_;
  std::vector<sim::Report> reports_;
  std::unique_ptr<partition::PlanExecutor> executor_;
};

} // namespace ember::devices
