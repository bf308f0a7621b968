// The points of a sweep from its options, and points as JSON (Points.h).
#include "ember/session/dse/Points.h"

#include "ember/isa/description.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <filesystem>

namespace ember::dse {

using nlohmann::json;

RandomRanges randomRanges(const PointOptions& o) {
  RandomRanges r;
  r.minArray = o.minArray;
  r.maxArray = o.maxArray;
  if (o.minArray > o.maxArray)
    throw UsageError("--min-array", "is larger than --max-array");
  r.maxBytes = o.maxKib * 1024;
  r.reencode = !o.keepEncoding;
  for (const std::string& arg : o.minKib) {
    const std::size_t eq = arg.find('=');
    const std::string mem = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
        value.size() > 9)
      throw UsageError("--min-kib " + arg, "expects MEM=N with N a whole number of KiB");
    if (mem != "act" && mem != "weight" && mem != "acc" && mem != "param")
      throw UsageError("--min-kib " + arg, "unknown SRAM '" + mem + "' (act, weight, acc, param)");
    r.minBytes[mem] = std::stoull(value) * 1024;
  }
  return r;
}

namespace {

/// Writes `p`'s description to its file and records the validator's refusal, if any.
void writeAndValidate(Point& p) {
  writeFileAtomic(p.file, p.description.dump(1) + "\n");
  try {
    (void)isa::IsaDescription::loadString(p.description.dump(), p.file);
  } catch (const Error& e) {
    p.invalid = e.what();
  }
}

} // namespace

std::vector<Point> makePoints(const PointOptions& o, const json& base, const std::string& out) {
  if (o.random && !o.axes.empty())
    throw UsageError("--random", "draws its own descriptions: give it or --axis, not both");
  std::vector<Point> points;
  const std::filesystem::path dir = std::filesystem::path(out) / "descriptions";
  if (o.random) {
    const RandomRanges ranges = randomRanges(o);
    for (unsigned i = 0; i < o.random; ++i) {
      Point p;
      p.index = i;
      unsigned redraws = 0;
      p.description = drawValid(base, mixSeed(o.seed, i), ranges, p.settings, redraws);
      points.push_back(std::move(p));
    }
  } else {
    std::vector<Axis> axes;
    for (const std::string& a : o.axes)
      axes.push_back(parseAxis(a));
    for (const Axis& a : axes) // a pointer the base lacks is a usage error, before any work
      (void)applySettings(base, {{a.name, a.values.front()}});
    std::size_t i = 0;
    for (Settings& s : crossProduct(axes)) {
      Point p;
      p.index = i++;
      p.description = applySettings(base, s);
      p.settings = std::move(s);
      points.push_back(std::move(p));
    }
  }
  std::filesystem::create_directories(dir);
  for (Point& p : points) {
    p.file = (dir / ("p" + std::to_string(p.index) + ".json")).string();
    writeAndValidate(p);
  }
  return points;
}

Point makePoint(const json& base, const Settings& settings, std::size_t index,
                const std::string& file) {
  Point p;
  p.index = index;
  p.settings = settings;
  p.description = applySettings(base, settings);
  p.file = file;
  const std::filesystem::path dir = std::filesystem::path(file).parent_path();
  if (!dir.empty())
    std::filesystem::create_directories(dir);
  writeAndValidate(p);
  return p;
}

json toJson(const Point& p) {
  json settings = json::array();
  for (const auto& [name, value] : p.settings)
    settings.push_back({name, value});
  return {{"index", p.index},
          {"settings", settings},
          {"file", p.file},
          {"invalid", p.invalid},
          {"description", p.description}};
}

Point pointFromJson(const json& j) {
  Point p;
  p.index = j.at("index").get<std::size_t>();
  for (const json& s : j.at("settings"))
    p.settings.emplace_back(s.at(0).get<std::string>(), s.at(1).get<std::string>());
  p.file = j.at("file").get<std::string>();
  p.invalid = j.value("invalid", std::string());
  if (j.contains("description"))
    p.description = j.at("description");
  return p;
}

} // namespace ember::dse
