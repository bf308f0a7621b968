// Fuzz target: the ELF reader. A binary it accepts must disassemble, re-assemble and
// re-serialise to an equal Binary; anything but ember::isa::Error is a bug. Each input is
// tried as is and with its digests recomputed (resealElf), so that mutations also reach
// the table decoders behind the digest check.
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
void checkOne(const std::uint8_t* data, std::size_t size);
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ember::isa;
  try {
    (void)listSections(data, size, "fuzz.elf");
  } catch (const Error&) {
  }
  checkOne(data, size);
  std::vector<std::uint8_t> sealed(data, data + size);
  try {
    resealElf(sealed);
  } catch (const Error&) {
    return 0;
  }
  checkOne(sealed.data(), sealed.size());
  return 0;
}

namespace {
void checkOne(const std::uint8_t* data, std::size_t size) {
  using namespace ember::isa;
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
}
} // namespace
