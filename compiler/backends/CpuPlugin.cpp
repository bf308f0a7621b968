// The loader of the cpu backend's module (ember/cpu/CpuPlugin.h).
#include "ember/cpu/CpuPlugin.h"

#include "ember/support/Error.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace ember {

// Null unless the program links the backend itself: a weak reference pulls nothing from
// libember_cpu, so a program that only reaches the backend through here links no LLVM.
__attribute__((weak)) std::unique_ptr<Backend> createCpuBackend(const CpuOptions& opts);

namespace {

constexpr const char* kModule = "libember_cpu_plugin.so";

/// Where the module may be, in the order tried.
std::vector<std::string> candidates() {
  if (const char* env = std::getenv("EMBER_CPU_PLUGIN"); env && *env)
    return {env};
  std::vector<std::string> out;
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) { // an installed program: P/bin/TOOL and P/lib/ember/
    std::string dir(exe, std::size_t(n));
    dir = dir.substr(0, dir.find_last_of('/'));
    out.push_back(dir + "/../lib/ember/" + kModule);
  }
#ifdef EMBER_CPU_PLUGIN_BUILD_PATH
  out.push_back(EMBER_CPU_PLUGIN_BUILD_PATH);
#endif
  return out;
}

struct Loaded {
  const CpuPluginApi* api = nullptr;
  std::string error; ///< Why no module loaded.
};

Loaded load() {
  Loaded l;
  for (const std::string& path : candidates()) {
    if (access(path.c_str(), F_OK) != 0) {
      l.error += "\n  " + path + ": no such file";
      continue;
    }
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror();
      l.error += "\n  " + path + ": " + (why ? why : "cannot be loaded");
      continue;
    }
    using Entry = const CpuPluginApi* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(h, kCpuPluginEntry));
    const CpuPluginApi* api = entry ? entry() : nullptr;
    if (!api || api->layout != cpuPluginLayout()) {
      l.error +=
          "\n  " + path + ": " +
          (api ? "built by another build of Ember" : "no entry " + std::string(kCpuPluginEntry));
      dlclose(h);
      continue;
    }
    l.api = api; // loaded for the life of the process
    return l;
  }
  return l;
}

} // namespace

std::unique_ptr<Backend> loadCpuBackend(const CpuOptions& opts) {
  using Create = std::unique_ptr<Backend> (*)(const CpuOptions&);
  if (const Create linked = &createCpuBackend) // null unless linked in
    return linked(opts);
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.api)
    throw Error("the cpu backend", std::string("its module ") + kModule + " could not be loaded:" +
                                       loaded.error + "\n(set EMBER_CPU_PLUGIN to its path)");
  return loaded.api->create(opts);
}

} // namespace ember
