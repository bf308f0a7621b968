// The list of backends built into Ember. A backend joins by adding one line here.
#include "ember/backend/Backend.h"
#ifdef EMBER_HAVE_CPU_BACKEND
#include "ember/cpu/CpuBackend.h"
#endif
#include "ember/interpreter/Interpreter.h"
#include "ember/support/Error.h"

#include <functional>

namespace ember {

namespace {
struct BackendEntry {
  const char* name;
  std::function<std::unique_ptr<Backend>()> create;
};

const std::vector<BackendEntry>& entries() {
  static const std::vector<BackendEntry> e = {
      {"interp", createInterpreterBackend},
#ifdef EMBER_HAVE_CPU_BACKEND
      {"cpu", [] { return createCpuBackend(); }},
#endif
  };
  return e;
}
} // namespace

std::unique_ptr<Backend> createBackend(const std::string& name) {
  for (const auto& e : entries())
    if (name == e.name)
      return e.create();
  std::string known;
  for (const auto& e : entries())
    known += std::string(known.empty() ? "" : ", ") + e.name;
  throw Error("backend '" + name + "'", "unknown (known: " + known + ")");
}

std::vector<std::string> backendNames() {
  std::vector<std::string> names;
  for (const auto& e : entries())
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

} // namespace ember
