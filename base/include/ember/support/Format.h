#pragma once
/// \file
/// One number through a printf format, as the text and HTML reports print their figures
/// ("%.1f", "%.3g", ...): one helper instead of a copy in every report writer.

#include <cstdio>
#include <string>

namespace ember {

/// `v` formatted by `format`, a printf format of one floating-point conversion (at most
/// 63 characters of output, which every figure of a report fits).
inline std::string formatNumber(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

} // namespace ember
