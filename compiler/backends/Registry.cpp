// The list of backends built into Ember. A backend of the compiler joins by adding one
// line to Registry::entries; one whose execution lives above the compiler (the NPU, which
// runs through the runtime) joins at run time through registerBackend().
#include "ember/backend/Backend.h"
#ifdef EMBER_HAVE_CPU_BACKEND
#include "ember/cpu/CpuPlugin.h"
#endif
#include "ember/interpreter/Interpreter.h"
#include "ember/support/Error.h"

#include <mutex>

namespace ember {

namespace {
struct BackendEntry {
  std::string name;
  BackendFactory create;
};

struct Registry {
  std::mutex mu;
  std::vector<BackendEntry> entries = {
      {"interp", createInterpreterBackend},
#ifdef EMBER_HAVE_CPU_BACKEND
      {"cpu", [] { return loadCpuBackend(CpuOptions{}); }},
#endif
  };
};

Registry& registry() {
  static Registry r;
  return r;
}
} // namespace

void registerBackend(const std::string& name, BackendFactory create) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& e : r.entries)
    if (e.name == name)
      throw InternalError("backend '" + name + "'", "registered twice");
  r.entries.push_back({name, std::move(create)});
}

bool isBackendRegistered(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& e : r.entries)
    if (e.name == name)
      return true;
  return false;
}

std::unique_ptr<Backend> createBackend(const std::string& name) {
  Registry& r = registry();
  BackendFactory create;
  std::string known;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    for (const auto& e : r.entries) {
      if (name == e.name)
        create = e.create;
      known += (known.empty() ? "" : ", ") + e.name;
    }
  }
  if (create)
    return create();
  throw Error("backend '" + name + "'", "unknown (known: " + known + ")");
}

std::vector<std::string> backendNames() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto& e : r.entries)
    names.push_back(e.name);
  return names;
}

std::vector<std::string> unsupportedNodes(const Backend& b, const Function& f) {
  std::vector<std::string> out;
  for (const auto& n : f.nodes())
    if (!b.supports(*n))
      out.push_back(std::string(n->kindName()) + " '" + n->name() + "'");
  return out;
}

void requireSupported(const Backend& b, const Function& f, const std::string& where,
                      const std::string& what) {
  const std::vector<std::string> missing = unsupportedNodes(b, f);
  if (missing.empty())
    return;
  std::string msg = "cannot run " + std::to_string(missing.size()) + " node(s) of " + what + ":";
  for (const auto& m : missing)
    msg += "\n  " + m;
  throw Unsupported(where, msg);
}

} // namespace ember
