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

Error jsonError(const std::string& file, const std::string& context, const std::exception& e) {
  std::string text = e.what();
  // "[json.exception.KIND.N] " opens every nlohmann::json message.
  if (text.rfind("[json.exception.", 0) == 0) {
    const std::size_t close = text.find("] ");
    text = close == std::string::npos ? std::string() : text.substr(close + 2);
  }
  std::string where;
  const std::string at = "parse error at ";
  if (text.rfind(at, 0) == 0) {
    const std::size_t colon = text.find(": ", at.size());
    if (colon != std::string::npos) {
      where = text.substr(at.size(), colon - at.size());
      text = text.substr(colon + 2);
    }
  } else if (text.rfind("parse error: ", 0) == 0) {
    text = text.substr(13);
  }
  if (text.empty())
    text = "unreadable JSON";
  return Error(file, where, context + ": " + text);
}

} // namespace ember::isa
