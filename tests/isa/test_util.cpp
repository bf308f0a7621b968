#include "test_util.h"

#include <atomic>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace ember::isa::test {

std::string sourcePath(const std::string& rel) {
  return std::string(EMBER_SOURCE_DIR) + "/" + rel;
}

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string tempPath(const std::string& name) {
  static std::atomic<int> n{0};
  return std::string(EMBER_TEST_TMP) + "/tmp_" + std::to_string(::getpid()) + "_" +
         std::to_string(n++) + "_" + name;
}

const IsaDescription& reference() {
  static const IsaDescription d = IsaDescription::loadFile(sourcePath("isa/ember-v1.json"));
  return d;
}

const IsaDescription& large() {
  static const IsaDescription d =
      IsaDescription::loadFile(sourcePath("isa/examples/ember-v1-large.json"));
  return d;
}

nlohmann::json referenceJson() {
  return nlohmann::json::parse(readText(sourcePath("isa/ember-v1.json")));
}

} // namespace ember::isa::test
