#pragma once
/// \file
/// Text into HTML: the one escaping rule every page Ember writes (the simulator's report,
/// ember-dse's chart) uses, so that a model or layer name never breaks the markup.

#include <string>

namespace ember {

/// `s` with &, <, > and " written as character references (text and attribute values).
inline std::string htmlEscape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '&':
      o += "&amp;";
      break;
    case '<':
      o += "&lt;";
      break;
    case '>':
      o += "&gt;";
      break;
    case '"':
      o += "&quot;";
      break;
    default:
      o += c;
    }
  }
  return o;
}

} // namespace ember
