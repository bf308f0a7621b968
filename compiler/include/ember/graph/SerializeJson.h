#pragma once
/// \file
/// JSON helpers shared by the function serializer (Serialize.h) and the package manifest
/// (compiler/driver): a Type as JSON, and a reader that names the file and the JSON path
/// of anything malformed.

#include "ember/graph/Node.h"
#include "ember/support/Error.h"

#include <nlohmann/json.hpp>

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace ember {

/// {"kind": "int8", "dims": [...], "scales": [...], "zero_points": [...], "axis": -1}
/// (the last three only for quantized types).
inline nlohmann::json typeToJson(const Type& t) {
  using nlohmann::json;
  json j = {{"kind", elemKindName(t.kind)}, {"dims", t.dims}};
  if (t.quant.isQuantized() || t.quant.axis >= 0) {
    j["scales"] = t.quant.scales;
    j["zero_points"] = t.quant.zeroPoints;
    j["axis"] = t.quant.axis;
  }
  return j;
}

/// Reads fields of a JSON document; every error is an ember::Error naming `where` (the
/// file) and the JSON path.
struct JsonReader {
  using json = nlohmann::json;
  std::string where;

  [[noreturn]] void fail(const std::string& path, const std::string& why) const {
    throw Error(where, path + ": " + why);
  }
  const json& field(const json& o, const char* key, const std::string& path) const {
    if (!o.is_object() || !o.contains(key))
      fail(path, std::string("missing '") + key + "'");
    return o.at(key);
  }
  std::string str(const json& o, const char* key, const std::string& path) const {
    const json& v = field(o, key, path);
    if (!v.is_string())
      fail(path + "/" + key, "not a string");
    return v.get<std::string>();
  }
  int64_t integer(const json& v, const std::string& path) const {
    if (!v.is_number_integer())
      fail(path, "not an integer");
    return v.get<int64_t>();
  }
  double number(const json& v, const std::string& path) const {
    if (!v.is_number())
      fail(path, "not a number");
    return v.get<double>();
  }
  const json& array(const json& o, const char* key, const std::string& path) const {
    const json& v = field(o, key, path);
    if (!v.is_array())
      fail(path + "/" + key, "not an array");
    return v;
  }
  std::vector<int64_t> ints(const json& v, const std::string& path) const {
    if (!v.is_array())
      fail(path, "not an array");
    std::vector<int64_t> out;
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(integer(v[i], path + "/" + std::to_string(i)));
    return out;
  }

  /// A Type written by typeToJson, checked (known kind, shape within limits, positive
  /// finite scales, zero points in range, axis inside the shape).
  Type type(const json& j, const std::string& path) const {
    Type t;
    if (!parseElemKind(str(j, "kind", path), &t.kind))
      fail(path + "/kind", "unknown element kind");
    t.dims = ints(field(j, "dims", path), path + "/dims");
    try {
      (void)numElements(t.dims);
    } catch (const Error& e) {
      fail(path + "/dims", e.what());
    }
    if (j.contains("scales")) {
      const json& s = array(j, "scales", path);
      for (size_t i = 0; i < s.size(); ++i) {
        const double d = number(s[i], path + "/scales/" + std::to_string(i));
        if (!std::isfinite(d) || d <= 0 || d > 3.0e38)
          fail(path + "/scales/" + std::to_string(i), "not a positive finite float");
        t.quant.scales.push_back(static_cast<float>(d));
      }
      for (int64_t z : ints(field(j, "zero_points", path), path + "/zero_points")) {
        if (z < INT32_MIN || z > INT32_MAX)
          fail(path + "/zero_points", "out of range");
        t.quant.zeroPoints.push_back(static_cast<int32_t>(z));
      }
      const int64_t axis = integer(field(j, "axis", path), path + "/axis");
      if (axis < -1 || axis >= int64_t(t.dims.size()))
        fail(path + "/axis", "not -1 or an axis of the value");
      t.quant.axis = static_cast<int>(axis);
      if (t.quant.scales.size() != t.quant.zeroPoints.size())
        fail(path, "scales and zero_points differ in length");
    }
    return t;
  }
};

} // namespace ember
