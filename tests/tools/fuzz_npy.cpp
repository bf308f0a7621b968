// libFuzzer target (EMBER_FUZZ=ON) and replay entry point: any bytes given to the .npy
// reader must give a tensor or an ember::Error, never a crash, hang or sanitizer report.
// Both readers run: parseNpy (bytes in memory) and readNpy (the file reader, which reads
// the header first and then only the bytes it implies); they must agree.
#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace {

/// The outcome of one reader: the serialized tensor, or "error".
std::string outcome(const std::function<ember::Tensor()>& read) {
  try {
    return ember::serializeNpy(read());
  } catch (const ember::Error&) {
    return std::string("error");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::string fromBytes = outcome([&] { return ember::parseNpy(bytes, "fuzz.npy"); });
  // The same bytes as a file (an anonymous in-memory file, reached through /proc).
  int fd = ::memfd_create("fuzz.npy", 0);
  if (fd < 0)
    return 0;
  if (size && ::write(fd, data, size) != static_cast<ssize_t>(size)) {
    ::close(fd);
    return 0;
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const std::string fromFile = outcome([&] { return ember::readNpy(path); });
  ::close(fd);
  if (fromBytes != fromFile) {
    std::fprintf(stderr, "parseNpy and readNpy disagree: %s vs %s\n",
                 fromBytes.rfind("error", 0) == 0 ? "error" : "tensor",
                 fromFile.rfind("error", 0) == 0 ? "error" : "tensor");
    std::abort();
  }
  return 0;
}
