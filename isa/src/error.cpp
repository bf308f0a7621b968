#include "ember/isa/error.h"

namespace ember::isa {

namespace {
std::string format(const std::string& file, const std::string& where, const std::string& reason) {
  std::string s = file.empty() ? std::string("<input>") : file;
  s += ": ";
  if (!where.empty()) {
    s += where;
    s += ": ";
  }
  s += reason;
  return s;
}
} // namespace

Error::Error(std::string file, std::string where, std::string reason)
    : std::runtime_error(format(file, where, reason)), file_(std::move(file)),
      where_(std::move(where)), reason_(std::move(reason)) {}

} // namespace ember::isa
