// The version the build was configured with (base/CMakeLists.txt defines it).
#include "ember/support/Version.h"

namespace ember {

const char* versionString() {
  return EMBER_VERSION_STRING;
}

} // namespace ember
