#include "text_util.h"

#include <cstdio>

namespace ember::isa::detail {

namespace {
int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',';
}

/// Reads a quoted string starting at s[i] == '"'; advances i past the closing quote.
bool readQuoted(std::string_view s, std::size_t& i, std::string& out, std::string& err) {
  ++i;
  while (i < s.size()) {
    char c = s[i++];
    if (c == '"')
      return true;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i >= s.size())
      break;
    char e = s[i++];
    if (e == '"' || e == '\\') {
      out += e;
    } else if (e == 'x' && i + 1 < s.size() && hexDigit(s[i]) >= 0 && hexDigit(s[i + 1]) >= 0) {
      out += char(hexDigit(s[i]) * 16 + hexDigit(s[i + 1]));
      i += 2;
    } else {
      err = "bad escape in string";
      return false;
    }
  }
  if (err.empty())
    err = "unterminated string";
  return false;
}
} // namespace

std::vector<Token> tokenize(std::string_view s, std::string& err) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (isSpace(c)) {
      ++i;
      continue;
    }
    if (c == ';' || c == '#')
      break;
    Token t;
    if (c == '"') {
      t.quoted = true;
      if (!readQuoted(s, i, t.text, err))
        return {};
      out.push_back(std::move(t));
      continue;
    }
    std::string word;
    while (i < s.size() && !isSpace(s[i]) && s[i] != ';' && s[i] != '#' && s[i] != '"') {
      word += s[i++];
      if (word.back() == '=' && !t.has_key) {
        t.has_key = true;
        t.key = word.substr(0, word.size() - 1);
        word.clear();
        if (i < s.size() && s[i] == '"') {
          t.quoted = true;
          if (!readQuoted(s, i, word, err))
            return {};
          break;
        }
      }
    }
    t.text = word;
    out.push_back(std::move(t));
  }
  return out;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", u);
      out += b;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::optional<std::uint64_t> parseUint(std::string_view s) {
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
    base = 2;
    s.remove_prefix(2);
  }
  if (s.empty())
    return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c == '_')
      continue;
    int d = hexDigit(c);
    if (d < 0 || unsigned(d) >= base)
      return std::nullopt;
    if (v > (UINT64_MAX - unsigned(d)) / base)
      return std::nullopt;
    v = v * base + unsigned(d);
  }
  return v;
}

std::optional<std::int64_t> parseInt(std::string_view s) {
  bool neg = !s.empty() && s[0] == '-';
  if (neg || (!s.empty() && s[0] == '+'))
    s.remove_prefix(1);
  auto u = parseUint(s);
  if (!u)
    return std::nullopt;
  if (neg) {
    if (*u > std::uint64_t(INT64_MAX) + 1)
      return std::nullopt;
    return *u == std::uint64_t(INT64_MAX) + 1 ? INT64_MIN : -std::int64_t(*u);
  }
  if (*u > std::uint64_t(INT64_MAX))
    return std::nullopt;
  return std::int64_t(*u);
}

std::string hexU(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

} // namespace ember::isa::detail
