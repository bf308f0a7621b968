// Running plans and packages on an NPU device.
#include "ember/session/PackageSession.h"

#include "ember/runtime/Run.h"
#include "ember/session/PlanReport.h"

namespace ember::session {

PlanSession::PlanSession(const partition::Plan& plan, const isa::IsaDescription& isa,
                         const std::string& device, const DeviceOptions& opts,
                         const std::string& label)
    : plan_(plan), isa_(isa), opts_(opts) {
  executor_ = std::make_unique<partition::PlanExecutor>(
      plan, npuSegmentRunner(device, npuEngine(device), isa_, opts, label, plan.whole, reports_));
}

PlanSession::~PlanSession() = default;

TensorMap PlanSession::run(const TensorMap& inputs, std::vector<partition::SegmentRun>* runs) {
  reports_.clear();
  std::vector<partition::SegmentRun> own;
  std::vector<partition::SegmentRun>& r = runs ? *runs : own;
  r.clear();
  TensorMap out = executor_->run(inputs, &r);
  if (!plan_.whole)
    writePlanReports(opts_, plan_, isa_, r, reports_);
  return out;
}

PackageSession::PackageSession(const std::string& path, const isa::IsaDescription& isa,
                               const std::string& device, const DeviceOptions& opts)
    : plan_(partition::loadPackage(path, isa)), session_(plan_, isa, device, opts, path) {}

} // namespace ember::session
