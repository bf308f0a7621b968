// A JSON Schema subset validator: enough for isa/schema.json, with exact error paths.
#include "schema_check.h"

#include "ember/isa/error.h"

#include <cstdint>
#include <sstream>

namespace ember::isa::detail {

using nlohmann::json;

std::string pointerKey(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

namespace {

const char* typeName(const json& v) {
  switch (v.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "integer";
  case json::value_t::number_float:
    return "number";
  case json::value_t::string:
    return "string";
  case json::value_t::array:
    return "array";
  case json::value_t::object:
    return "object";
  default:
    return "value";
  }
}

bool hasType(const json& v, const std::string& t) {
  if (t == "object")
    return v.is_object();
  if (t == "array")
    return v.is_array();
  if (t == "string")
    return v.is_string();
  if (t == "integer")
    return v.is_number_integer();
  if (t == "number")
    return v.is_number();
  if (t == "boolean")
    return v.is_boolean();
  if (t == "null")
    return v.is_null();
  return false;
}

std::string shortDump(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60)
    s = s.substr(0, 57) + "...";
  return s;
}

/// -1, 0, 1 comparing two JSON numbers without losing 64-bit integer precision.
int compareNumbers(const json& a, const json& b) {
  if (a.is_number_integer() && b.is_number_integer()) {
    bool an = a.is_number_unsigned() ? false : a.get<std::int64_t>() < 0;
    bool bn = b.is_number_unsigned() ? false : b.get<std::int64_t>() < 0;
    if (an != bn)
      return an ? -1 : 1;
    if (an) {
      auto x = a.get<std::int64_t>(), y = b.get<std::int64_t>();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    auto x = a.get<std::uint64_t>(), y = b.get<std::uint64_t>();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  double x = a.get<double>(), y = b.get<double>();
  return x < y ? -1 : (x > y ? 1 : 0);
}

class Validator {
public:
  Validator(const json& root, std::string file) : root_(root), file_(std::move(file)) {}

  void check(const json& v, const json& s, const std::string& path, int depth) {
    if (depth > 64)
      fail(path, "schema nesting too deep");
    if (!s.is_object())
      return;
    if (auto it = s.find("$ref"); it != s.end())
      check(v, resolve(it->get<std::string>()), path, depth + 1);
    checkType(v, s, path);
    checkEnum(v, s, path);
    if (v.is_number())
      checkRange(v, s, path);
    if (v.is_string())
      checkLength(v, s, path);
    if (v.is_array())
      checkArray(v, s, path, depth);
    if (v.is_object())
      checkObject(v, s, path, depth);
  }

private:
  [[noreturn]] void fail(const std::string& path, const std::string& reason) const {
    throw Error(file_, path.empty() ? "/" : path, reason);
  }

  const json& resolve(const std::string& ref) const {
    if (ref.rfind("#", 0) != 0)
      throw Error("<schema>", ref, "only local $ref supported");
    return root_.at(json::json_pointer(ref.substr(1)));
  }

  void checkType(const json& v, const json& s, const std::string& path) const {
    auto it = s.find("type");
    if (it == s.end())
      return;
    std::vector<std::string> types;
    if (it->is_string())
      types.push_back(it->get<std::string>());
    else
      for (const auto& t : *it)
        types.push_back(t.get<std::string>());
    for (const auto& t : types)
      if (hasType(v, t))
        return;
    std::string want;
    for (const auto& t : types)
      want += (want.empty() ? "" : " or ") + t;
    fail(path, "expected " + want + ", got " + typeName(v) + " " + shortDump(v));
  }

  void checkEnum(const json& v, const json& s, const std::string& path) const {
    if (auto it = s.find("const"); it != s.end() && v != *it)
      fail(path, "must be " + it->dump() + ", got " + shortDump(v));
    auto it = s.find("enum");
    if (it == s.end())
      return;
    for (const auto& c : *it)
      if (c == v && c.type() == v.type())
        return;
    for (const auto& c : *it)
      if (c.is_number() && v.is_number() && compareNumbers(c, v) == 0)
        return;
    std::string choices;
    for (const auto& c : *it)
      choices += (choices.empty() ? "" : ", ") + c.dump();
    fail(path, shortDump(v) + " is not one of: " + choices);
  }

  void checkRange(const json& v, const json& s, const std::string& path) const {
    if (auto it = s.find("minimum"); it != s.end() && compareNumbers(v, *it) < 0)
      fail(path, shortDump(v) + " is below the minimum " + it->dump());
    if (auto it = s.find("maximum"); it != s.end() && compareNumbers(v, *it) > 0)
      fail(path, shortDump(v) + " is above the maximum " + it->dump());
  }

  void checkLength(const json& v, const json& s, const std::string& path) const {
    auto n = v.get_ref<const std::string&>().size();
    if (auto it = s.find("minLength"); it != s.end() && n < it->get<std::size_t>())
      fail(path, "string shorter than " + it->dump() + " characters");
    if (auto it = s.find("maxLength"); it != s.end() && n > it->get<std::size_t>())
      fail(path, "string longer than " + it->dump() + " characters");
  }

  void checkArray(const json& v, const json& s, const std::string& path, int depth) {
    if (auto it = s.find("minItems"); it != s.end() && v.size() < it->get<std::size_t>())
      fail(path, "needs at least " + it->dump() + " items, has " + std::to_string(v.size()));
    if (auto it = s.find("maxItems"); it != s.end() && v.size() > it->get<std::size_t>())
      fail(path, "allows at most " + it->dump() + " items, has " + std::to_string(v.size()));
    if (auto it = s.find("items"); it != s.end())
      for (std::size_t i = 0; i < v.size(); ++i)
        check(v[i], *it, path + "/" + std::to_string(i), depth + 1);
  }

  void checkObject(const json& v, const json& s, const std::string& path, int depth) {
    if (auto it = s.find("required"); it != s.end())
      for (const auto& k : *it)
        if (!v.contains(k.get<std::string>()))
          fail(path, "missing required key \"" + k.get<std::string>() + "\"");
    const json* props = nullptr;
    if (auto it = s.find("properties"); it != s.end())
      props = &*it;
    auto add = s.find("additionalProperties");
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string sub = path + "/" + pointerKey(it.key());
      if (props && props->contains(it.key())) {
        check(it.value(), (*props)[it.key()], sub, depth + 1);
      } else if (add != s.end()) {
        if (add->is_boolean() && !add->get<bool>()) {
          std::string allowed;
          if (props)
            for (auto p = props->begin(); p != props->end(); ++p)
              allowed += (allowed.empty() ? "" : ", ") + p.key();
          fail(sub, "unknown key \"" + it.key() + "\"" +
                        (allowed.empty() ? "" : " (allowed: " + allowed + ")"));
        }
        if (add->is_object())
          check(it.value(), *add, sub, depth + 1);
      }
    }
  }

  const json& root_;
  std::string file_;
};

} // namespace

void validateSchema(const json& doc, const json& schema, const std::string& file) {
  Validator(schema, file).check(doc, schema, "", 0);
}

} // namespace ember::isa::detail
