// Loading a part of Ember built as a module of its own (ember/support/PluginModule.h).
#include "ember/support/PluginModule.h"

#include <dlfcn.h>
#include <unistd.h>

#include "ember/support/Error.h"

#include <climits>
#include <cstdlib>
#include <map>
#include <mutex>

namespace ember {

std::vector<std::string> pluginModuleCandidates(const PluginModuleSpec& spec) {
  if (const char* env = std::getenv(spec.envVar); env && *env)
    return {env};
  std::vector<std::string> out;
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) { // an installed program: P/bin/TOOL and P/lib/ember/
    std::string dir(exe, std::size_t(n));
    dir = dir.substr(0, dir.find_last_of('/'));
    out.push_back(dir + "/../lib/ember/" + spec.file);
  }
  if (spec.buildPath && *spec.buildPath)
    out.push_back(spec.buildPath);
  return out;
}

LoadedPluginModule loadPluginModule(const PluginModuleSpec& spec) {
  LoadedPluginModule l;
  for (const std::string& path : pluginModuleCandidates(spec)) {
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
    using Entry = const void* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(h, spec.entry));
    const void* api = entry ? entry() : nullptr;
    // Every entry's table starts with its layout number (see the header).
    if (!api || *static_cast<const unsigned long*>(api) != spec.layout) {
      l.error += "\n  " + path + ": " +
                 (api ? std::string("built by another build of Ember")
                      : "no entry " + std::string(spec.entry) + " (not " + spec.file + "?)");
      dlclose(h);
      continue;
    }
    l.api = api; // never closed: the program keeps using what the module made
    return l;
  }
  return l;
}

const void* requirePluginModule(const PluginModuleSpec& spec, const char* what) {
  static std::mutex mutex;
  static std::map<std::string, LoadedPluginModule> loaded; // by module file name
  LoadedPluginModule l;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = loaded.find(spec.file);
    if (it == loaded.end())
      it = loaded.emplace(spec.file, loadPluginModule(spec)).first;
    l = it->second;
  }
  if (!l.api)
    throw Error(what, std::string("its module ") + spec.file + " could not be loaded:" + l.error +
                          "\n(set " + spec.envVar + " to its path)");
  return l.api;
}

} // namespace ember
