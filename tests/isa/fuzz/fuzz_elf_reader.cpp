// Fuzz target: the ELF reader. A binary it accepts must disassemble, re-assemble and
// re-serialise to an equal Binary; anything but ember::isa::Error is a bug.
#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/isa/error.h"

#include <cstdint>
#include <cstdlib>

#ifndef EMBER_DEFAULT_ISA_JSON
#define EMBER_DEFAULT_ISA_JSON "isa/ember-v1.json"
#endif

namespace {
const ember::isa::IsaDescription& isa() {
  static const ember::isa::IsaDescription d =
      ember::isa::IsaDescription::loadFile(EMBER_DEFAULT_ISA_JSON);
  return d;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ember::isa;
  try {
    (void)listSections(data, size, "fuzz.elf");
  } catch (const Error&) {
  }
  try {
    Binary b = parseElf(data, size, isa(), "fuzz.elf");
    Binary again = assemble(disassemble(b, isa()), isa(), "fuzz.s");
    if (!(again == b))
      std::abort();
    std::vector<std::uint8_t> img = serializeElf(b, isa());
    if (!(parseElf(img.data(), img.size(), isa(), "fuzz2.elf") == b))
      std::abort();
  } catch (const Error&) {
  }
  return 0;
}
