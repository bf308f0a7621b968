// Fuzz target: the package loader (docs/package.md) and the host-segment graph reader
// behind it. Each input is tried as a package as it is and with its checksums recomputed
// (isa::resealPackage), so mutations also reach the manifest and graph parsers, and as
// the bytes of one function. Anything but ember::Error escaping is a bug; a package that
// loads must write back to bytes that load to the same bytes again.
#include "ember/driver/Package.h"
#include "ember/graph/Serialize.h"
#include "ember/isa/package.h"
#include "ember/support/Error.h"

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

void tryPackage(const std::uint8_t* data, std::size_t size) {
  using namespace ember;
  try {
    partition::Plan p = partition::parsePackage(data, size, isa(), "fuzz.pkg");
    const std::vector<std::uint8_t> again = partition::packageBytes(p, isa());
    partition::Plan q = partition::parsePackage(again.data(), again.size(), isa(), "fuzz2.pkg");
    if (partition::packageBytes(q, isa()) != again)
      std::abort();
  } catch (const Error&) {
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tryPackage(data, size);
  std::vector<std::uint8_t> sealed(data, data + size);
  ember::isa::resealPackage(sealed);
  tryPackage(sealed.data(), sealed.size());
  try {
    std::unique_ptr<ember::Module> m = ember::deserializeFunction(data, size, "fuzz.graph");
    const auto bytes = ember::serializeFunction(*m->functions().front());
    auto m2 = ember::deserializeFunction(bytes.data(), bytes.size(), "fuzz2.graph");
    if (ember::serializeFunction(*m2->functions().front()) != bytes)
      std::abort();
  } catch (const ember::Error&) {
  }
  return 0;
}
