#pragma once
/// \file
/// ember-run --profile: the cpu device's per-operation times as a table (slowest first,
/// with shares, then per kind), as JSON, and as a Chrome/Perfetto trace.

#include "ember/session/Devices.h"

#include <string>
#include <vector>

namespace ember::session {

/// The `top` slowest operations (all when 0) with their time, share and cumulative
/// share, then one line per kind, and the total.
std::string formatProfile(const std::vector<session::OpTime>& ops, size_t top);

/// {"total_ms": ..., "ops": [{"index", "name", "kind", "ms", "share"}, ...]} in program
/// order.
std::string profileJson(const std::vector<session::OpTime>& ops);

/// A Chrome/Perfetto trace: one complete event per operation, back to back in program
/// order on one track (microseconds).
std::string profileTrace(const std::vector<session::OpTime>& ops);

} // namespace ember::session
