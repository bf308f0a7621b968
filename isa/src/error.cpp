#include "ember/isa/error.h"

namespace ember::isa {

namespace {
std::string location(const std::string& file, const std::string& where) {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (!where.empty())
    s += ": " + where;
  return s;
}
} // namespace

Error::Error(std::string file, std::string where, std::string reason)
    : ember::Error(location(file, where), std::move(reason)), file_(std::move(file)),
      where_(std::move(where)) {}

} // namespace ember::isa
