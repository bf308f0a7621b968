#pragma once
/// \file
/// The points of a sweep from its options (the cross product of axes over a base, or
/// seeded random descriptions), written to OUT/descriptions/pN.json and validated; and a
/// point as JSON, so that the Python package's distributed sweeps and searches
/// (python/ember/dse.py) work on the points ember-dse makes, not on a copy of its rules.

#include "ember/session/dse/Space.h"
#include "ember/session/dse/Sweep.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ember::dse {

/// What decides the points (ember-dse's --axis, --random and its ranges).
struct PointOptions {
  std::vector<std::string> axes; ///< "NAME=V1,V2,..." each.
  unsigned random = 0;           ///< > 0: that many random descriptions instead of axes.
  std::uint64_t seed = 1;
  std::vector<std::string> minKib; ///< "MEM=N" each.
  std::uint64_t maxKib = 4096;
  int minArray = 4, maxArray = 64;
  bool keepEncoding = false;
};

/// The random ranges of `o` (--min-kib, --max-kib, --min-array, --max-array,
/// --keep-encoding). Throws ember::UsageError naming a bad option.
RandomRanges randomRanges(const PointOptions& o);

/// The points of `o` over `base`, each description written to OUT/descriptions/pN.json
/// and validated (`invalid` holds the validator's message). Throws ember::UsageError for
/// an unknown axis or a JSON pointer the base lacks.
std::vector<Point> makePoints(const PointOptions& o, const nlohmann::json& base,
                              const std::string& out);

/// One point: `settings` applied to `base` (applySettings), written to `file` and
/// validated, as makePoints does for each of its points.
Point makePoint(const nlohmann::json& base, const Settings& settings, std::size_t index,
                const std::string& file);

/// {"index", "settings": [[name, value], ...], "file", "invalid", "description"}.
nlohmann::json toJson(const Point& p);
Point pointFromJson(const nlohmann::json& j);

} // namespace ember::dse
