// Fuzz target: the system loader (isa/systems/*.json, docs/systems.md). Device
// descriptions resolve to the reference description (paths ending in "ember-v1.json") or
// fail with an Error; an accepted system must summarise and keep its invariants (every
// device on a known DRAM, every DRAM with a device). Anything but ember::isa::Error is a bug.
#include "ember/isa/description.h"
#include "ember/isa/error.h"
#include "ember/isa/system.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#ifndef EMBER_DEFAULT_ISA_JSON
#define EMBER_DEFAULT_ISA_JSON "isa/ember-v1.json"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ember::isa;
  if (size > (1u << 20))
    return 0;
  static const IsaDescription reference = IsaDescription::loadFile(EMBER_DEFAULT_ISA_JSON);
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto resolve = [](const std::string& path) {
    const std::string tail = "ember-v1.json";
    if (path.size() >= tail.size() &&
        path.compare(path.size() - tail.size(), tail.size(), tail) == 0)
      return reference;
    throw Error(path, "", "not a description of the fuzz corpus");
  };
  try {
    SystemDescription s = SystemDescription::loadString(text, "fuzz.json", "isa", resolve);
    (void)summarizeSystem(s);
    if (s.devices().empty())
      std::abort();
    for (size_t i = 0; i < s.devices().size(); ++i)
      if (s.devices()[i].dram >= s.drams().size())
        std::abort();
    for (const SystemDram& r : s.drams())
      if (r.devices.empty())
        std::abort();
  } catch (const Error&) {
  }
  return 0;
}
