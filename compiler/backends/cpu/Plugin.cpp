// libember_cpu_plugin.so: the cpu backend as a module (ember/cpu/CpuPlugin.h). Only the
// entry is exported; libember_cpu and the libraries beneath it are linked into the module
// with their symbols hidden, so the module keeps its own copies and never takes the
// program's.
#include "ember/cpu/CpuPlugin.h"

namespace {
std::unique_ptr<ember::Backend> create(const ember::CpuOptions& opts) {
  return ember::createCpuBackend(opts);
}
} // namespace

extern "C" __attribute__((visibility("default"))) const ember::CpuPluginApi* ember_cpu_plugin_v1() {
  static const ember::CpuPluginApi api{ember::cpuPluginLayout(), &create};
  return &api;
}
