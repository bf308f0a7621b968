// Calibration profiles: recording histograms while the float function runs, and their
// JSON form. See ember/quantization/Profile.h.
#include "ember/quantization/Profile.h"

#include "ember/interpreter/Interpreter.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace ember {
namespace quant {

namespace {

/// The bin of value v in a histogram of kBins over [-absMax, absMax].
inline int binOf(float v, float absMax) {
  const double pos = (double(v) + absMax) / (2.0 * absMax) * Profile::kBins;
  return std::min(Profile::kBins - 1, std::max(0, static_cast<int>(pos)));
}

/// Moves the counts of a histogram over [-from, from] into one over [-to, to] (to >=
/// from): each old bin's count goes to the new bin holding the old bin's centre.
void rebin(std::vector<uint64_t>& h, float from, float to) {
  std::vector<uint64_t> out(h.size(), 0);
  const double width = 2.0 * from / Profile::kBins;
  for (size_t i = 0; i < h.size(); ++i)
    if (h[i])
      out[size_t(binOf(static_cast<float>(-from + (double(i) + 0.5) * width), to))] += h[i];
  h.swap(out);
}

} // namespace

void Profile::record(const std::string& name, const Tensor& t) {
  if (t.kind() != ElemKind::Float32)
    throw Error("profile '" + name + "'",
                "only float32 tensors are profiled, got " + t.type().toString());
  const float* p = t.data<float>();
  float lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0, e = t.size(); i < e; ++i)
    if (std::isfinite(p[i])) {
      lo = std::min(lo, p[i]);
      hi = std::max(hi, p[i]);
    }
  if (lo > hi)
    return; // nothing finite
  TensorProfile& e = entries_[name];
  const float absMax = std::max(std::fabs(lo), std::fabs(hi));
  if (e.histogram.empty()) {
    e.histogram.assign(kBins, 0);
    e.min = lo;
    e.max = hi;
    e.absMax = absMax > 0 ? absMax : 1.f;
  } else {
    e.min = std::min(e.min, lo);
    e.max = std::max(e.max, hi);
    if (absMax > e.absMax) {
      rebin(e.histogram, e.absMax, absMax);
      e.absMax = absMax;
    }
  }
  for (int64_t i = 0, n = t.size(); i < n; ++i)
    if (std::isfinite(p[i])) {
      ++e.histogram[size_t(binOf(p[i], e.absMax))];
      ++e.count;
    }
}

const TensorProfile* Profile::find(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::string profileKey(const Node& n, unsigned r) {
  return r == 0 ? n.name() : n.name() + ":" + std::to_string(r);
}

Profile profileFunction(const Function& f, const std::vector<TensorMap>& inputs) {
  Profile prof;
  Interpreter interp(f);
  interp.setObserver([&](const Node& n, const std::vector<Tensor>& results) {
    for (size_t r = 0; r < results.size(); ++r)
      if (results[r].kind() == ElemKind::Float32)
        prof.record(profileKey(n, unsigned(r)), results[r]);
  });
  for (const TensorMap& in : inputs) {
    for (const auto& [name, t] : in)
      if (t.kind() == ElemKind::Float32)
        prof.record(name, t);
    interp.run(in);
    prof.addRun();
  }
  return prof;
}

void Profile::save(const std::string& path) const {
  nlohmann::json j;
  j["format"] = "ember-profile";
  j["version"] = 1;
  j["bins"] = kBins;
  j["runs"] = runs_;
  nlohmann::json tensors = nlohmann::json::object();
  for (const auto& [name, e] : entries_)
    tensors[name] = {{"min", e.min},
                     {"max", e.max},
                     {"absmax", e.absMax},
                     {"count", e.count},
                     {"histogram", e.histogram}};
  j["tensors"] = std::move(tensors);
  writeFileAtomic(path, j.dump(1) + "\n");
}

namespace {

/// Reads member `key` of object `o` (at JSON path `at`) as T; Error naming the file
/// and the path otherwise.
template <typename T>
T member(const nlohmann::json& o, const std::string& key, const std::string& file,
         const std::string& at) {
  const std::string where = file + ": " + at + "/" + key;
  if (!o.is_object() || !o.contains(key))
    throw Error(where, "missing");
  const nlohmann::json& v = o[key];
  if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string())
      throw Error(where, "expected a string");
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number())
      throw Error(where, "expected a number");
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer() || (std::is_unsigned_v<T> && v.get<int64_t>() < 0))
      throw Error(where, "expected a non-negative integer");
  }
  return v.get<T>();
}

} // namespace

Profile Profile::load(const std::string& path) {
  const std::string bytes = readFileBytes(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(bytes);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path, std::string("not valid JSON: ") + e.what());
  }
  if (member<std::string>(j, "format", path, "") != "ember-profile")
    throw Error(path + ": /format", "expected \"ember-profile\"");
  if (member<int64_t>(j, "version", path, "") != 1)
    throw Error(path + ": /version", "unsupported version (this Ember reads 1)");
  if (member<int64_t>(j, "bins", path, "") != kBins)
    throw Error(path + ": /bins", "expected " + std::to_string(kBins));
  Profile p;
  p.runs_ = member<int64_t>(j, "runs", path, "");
  if (!j.contains("tensors") || !j["tensors"].is_object())
    throw Error(path + ": /tensors", "expected an object");
  for (auto it = j["tensors"].begin(); it != j["tensors"].end(); ++it) {
    const std::string at = "/tensors/" + it.key();
    TensorProfile e;
    e.min = member<float>(it.value(), "min", path, at);
    e.max = member<float>(it.value(), "max", path, at);
    e.absMax = member<float>(it.value(), "absmax", path, at);
    e.count = member<uint64_t>(it.value(), "count", path, at);
    const nlohmann::json& h =
        it.value().contains("histogram") ? it.value()["histogram"] : nlohmann::json();
    if (!h.is_array() || h.size() != size_t(kBins))
      throw Error(path + ": " + at + "/histogram",
                  "expected an array of " + std::to_string(kBins) + " counts");
    for (size_t i = 0; i < h.size(); ++i) {
      if (!h[i].is_number_unsigned())
        throw Error(path + ": " + at + "/histogram/" + std::to_string(i),
                    "expected a non-negative integer");
      e.histogram.push_back(h[i].get<uint64_t>());
    }
    if (!(e.min <= e.max) || !(e.absMax > 0) || !std::isfinite(e.absMax) ||
        std::max(std::fabs(e.min), std::fabs(e.max)) > e.absMax * 1.0001f)
      throw Error(path + ": " + at, "min/max/absmax are inconsistent");
    p.entries_[it.key()] = std::move(e);
  }
  return p;
}

} // namespace quant
} // namespace ember
