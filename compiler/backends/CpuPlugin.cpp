// The loader of the cpu backend's module (ember/cpu/CpuPlugin.h).
#include "ember/cpu/CpuPlugin.h"

#include "ember/support/PluginModule.h"

#include <string>

namespace ember {

// Null unless the program links the backend itself: a weak reference pulls nothing from
// libember_cpu, so a program that only reaches the backend through here links no LLVM.
__attribute__((weak)) std::unique_ptr<Backend> createCpuBackend(const CpuOptions& opts);

namespace {
constexpr const char* kModule = "libember_cpu_plugin.so";
#ifdef EMBER_CPU_PLUGIN_BUILD_PATH
constexpr const char* kBuildPath = EMBER_CPU_PLUGIN_BUILD_PATH;
#else
constexpr const char* kBuildPath = nullptr;
#endif
} // namespace

std::unique_ptr<Backend> loadCpuBackend(const CpuOptions& opts) {
  using Create = std::unique_ptr<Backend> (*)(const CpuOptions&);
  if (const Create linked = &createCpuBackend) // null unless linked in
    return linked(opts);
  const void* api = requirePluginModule(
      {kModule, "EMBER_CPU_PLUGIN", kCpuPluginEntry, kBuildPath, cpuPluginLayout()},
      "the cpu backend");
  return static_cast<const CpuPluginApi*>(api)->create(opts);
}

} // namespace ember
