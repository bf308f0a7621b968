// libFuzzer target (EMBER_FUZZ=ON): any bytes given to the .npy parser must give a
// tensor or an ember::Error, never a crash, hang or sanitizer report.
#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ember::Tensor t =
        ember::parseNpy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
    (void)ember::serializeNpy(t);
  } catch (const ember::Error&) {
  }
  return 0;
}
