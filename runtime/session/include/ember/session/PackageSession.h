#pragma once
/// \file
/// The host runtime of partitioned programs (docs/package.md): a plan's host segments
/// prepared once (cpu or interp) and its NPU segments run through the runtime (job ring,
/// firmware) on the SystemC platform or the Verilated RTL, as often as wanted. A
/// PackageSession loads the plan from a package file first. ember-run and the Python
/// package are thin layers over these; a program that embeds Ember does the same.

#include "ember/driver/Execute.h"
#include "ember/driver/Package.h"
#include "ember/isa/description.h"
#include "ember/platform/Report.h"
#include "ember/session/Devices.h"

#include <memory>
#include <string>
#include <vector>

namespace ember::session {

/// A plan (whole or partitioned) prepared for one NPU device. The plan must outlive it.
class PlanSession {
public:
  /// Prepares `plan`, built for `isa`, to run on `device` ("sim", or "rtl" in builds with
  /// the RTL; UsageError otherwise). `opts.reportJson` / `traceJson` are written at
  /// every run (a partitioned plan: one report and one trace for all its segments,
  /// PlanReport.h). `label` names the program in messages.
  PlanSession(const partition::Plan& plan, const isa::IsaDescription& isa,
              const std::string& device = "sim", const DeviceOptions& opts = {},
              const std::string& label = "<program>");
  ~PlanSession();
  PlanSession(const PlanSession&) = delete;
  PlanSession& operator=(const PlanSession&) = delete;

  /// Runs every segment on the model's inputs (by name) and returns its outputs; `runs`
  /// (optional) receives one entry per segment.
  TensorMap run(const TensorMap& inputs, std::vector<partition::SegmentRun>* runs = nullptr);
  /// The simulation reports of the last run's NPU segments, in order.
  const std::vector<platform::Report>& reports() const { return reports_; }

private:
  const partition::Plan& plan_;
  isa::IsaDescription isa_;
  DeviceOptions opts_;
  std::vector<platform::Report> reports_;
  std::unique_ptr<partition::PlanExecutor> executor_;
};

/// One package file loaded for one NPU device.
class PackageSession {
public:
  /// Loads `path` for description `isa` (ember::Error naming the file, entry and JSON
  /// path when it is not a valid package for it) to run on `device` (as PlanSession).
  PackageSession(const std::string& path, const isa::IsaDescription& isa,
                 const std::string& device = "sim", const DeviceOptions& opts = {});

  /// The segments, values and placement the package holds.
  const partition::Plan& plan() const { return plan_; }
  TensorMap run(const TensorMap& inputs, std::vector<partition::SegmentRun>* runs = nullptr) {
    return session_.run(inputs, runs);
  }
  const std::vector<platform::Report>& reports() const { return session_.reports(); }

private:
  partition::Plan plan_; // before session_, which refers to it
  PlanSession session_;
};

} // namespace ember::session
