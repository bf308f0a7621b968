// The loader of the cpu backend's module (ember/cpu/CpuPlugin.h).
#include "ember/cpu/CpuPlugin.h"

#include "ember/support/Error.h"
#include "ember/support/PluginModule.h"

#include <mutex>
#include <string>

namespace ember {

// Null unless the program links the backend itself: a weak reference pulls nothing from
// libember_cpu, so a program that only reaches the backend through here links no LLVM.
__attribute__((weak)) std::unique_ptr<Backend> createCpuBackend(const CpuOptions& opts);

namespace {
constexpr const char* kModule = "libember_cpu_plugin.so";
} // namespace

std::unique_ptr<Backend> loadCpuBackend(const CpuOptions& opts) {
  using Create = std::unique_ptr<Backend> (*)(const CpuOptions&);
  if (const Create linked = &createCpuBackend) // null unless linked in
    return linked(opts);
  static std::once_flag once;
  static LoadedPluginModule loaded;
  std::call_once(once, [] {
#ifdef EMBER_CPU_PLUGIN_BUILD_PATH
    const char* build = EMBER_CPU_PLUGIN_BUILD_PATH;
#else
    const char* build = nullptr;
#endif
    loaded =
        loadPluginModule({kModule, "EMBER_CPU_PLUGIN", kCpuPluginEntry, build, cpuPluginLayout()});
  });
  if (!loaded.api)
    throw Error("the cpu backend", std::string("its module ") + kModule + " could not be loaded:" +
                                       loaded.error + "\n(set EMBER_CPU_PLUGIN to its path)");
  return static_cast<const CpuPluginApi*>(loaded.api)->create(opts);
}

} // namespace ember
