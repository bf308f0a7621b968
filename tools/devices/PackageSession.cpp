// Loading and running a package on an NPU device.
#include "ember/devices/PackageSession.h"

#include "ember/runtime/Run.h"
#include "ember/support/Error.h"

namespace ember::devices {

namespace {
/// The runtime engine of NPU device `device`.
runtime::RunRequest engineOf(const std::string& device) {
  runtime::RunRequest engine;
  if (device == "sim")
    return engine;
#ifdef EMBER_HAVE_RTL
  if (device == "rtl") {
    engine.engine = rtlEngine();
    engine.platform = rtlPlatform();
    return engine;
  }
#endif
  throw UsageError("device '" + device + "'", "a package's NPU segments run on sim"
#ifdef EMBER_HAVE_RTL
                                              " or rtl"
#endif
  );
}
} // namespace

PackageSession::PackageSession(const std::string& path, const isa::IsaDescription& isa,
                               const std::string& device, const DeviceOptions& opts)
    : isa_(isa), plan_(partition::loadPackage(path, isa_)) {
  executor_ = std::make_unique<partition::PlanExecutor>(
      plan_, npuSegmentRunner(device, engineOf(device), isa_, opts, path, false, reports_));
}

PackageSession::~PackageSession() = default;

TensorMap PackageSession::run(const TensorMap& inputs, std::vector<partition::SegmentRun>* runs) {
  reports_.clear();
  return executor_->run(inputs, runs);
}

} // namespace ember::devices
