// A function as bytes: "EMBERFN1", the JSON description's length (8 bytes, little
// endian), the JSON, then the constants' bytes (each at the offset the JSON gives).
#include "ember/graph/Serialize.h"
#include "ember/graph/SerializeJson.h"

#include "ember/support/Error.h"

#include <cmath>
#include <cstring>
#include <map>

namespace ember {

using nlohmann::json;

namespace {

constexpr char kMagic[8] = {'E', 'M', 'B', 'E', 'R', 'F', 'N', '1'};

json attrToJson(const std::string& node, const std::string& name, const AttrValue& v) {
  auto finite = [&](double d) {
    if (!std::isfinite(d))
      throw Error("node '" + node + "'", "attribute '" + name +
                                             "' is not finite, which the package format "
                                             "cannot carry");
    return d;
  };
  if (auto* i = std::get_if<int64_t>(&v))
    return {{"i", *i}};
  if (auto* d = std::get_if<double>(&v))
    return {{"f", finite(*d)}};
  if (auto* s = std::get_if<std::string>(&v))
    return {{"s", *s}};
  if (auto* is = std::get_if<std::vector<int64_t>>(&v))
    return {{"ints", *is}};
  const auto& ds = std::get<std::vector<double>>(v);
  for (double d : ds)
    finite(d);
  return {{"floats", ds}};
}

json ref(const NodeValue& v) {
  if (!v)
    return nullptr;
  return json::array({v.node->name(), v.resNo});
}

/// JsonReader plus the attribute form.
struct Reader : JsonReader {
  AttrValue attr(const json& j, const std::string& path) const {
    if (!j.is_object() || j.size() != 1)
      fail(path, "not an object with one of i, f, s, ints, floats");
    const std::string& k = j.begin().key();
    const json& v = j.begin().value();
    if (k == "i")
      return integer(v, path + "/i");
    if (k == "f")
      return number(v, path + "/f");
    if (k == "s") {
      if (!v.is_string())
        fail(path + "/s", "not a string");
      return v.get<std::string>();
    }
    if (k == "ints")
      return ints(v, path + "/ints");
    if (k == "floats") {
      if (!v.is_array())
        fail(path + "/floats", "not an array");
      std::vector<double> out;
      for (size_t i = 0; i < v.size(); ++i)
        out.push_back(number(v[i], path + "/floats/" + std::to_string(i)));
      return out;
    }
    fail(path, "unknown attribute form '" + k + "'");
  }
};

} // namespace

std::vector<uint8_t> serializeFunction(const Function& f) {
  const Module& m = f.module();
  json j;
  j["function"] = f.name();
  j["source"] = m.source();
  json phs = json::array();
  for (const Node* p : f.inputs())
    phs.push_back({{"name", p->name()}, {"type", typeToJson(p->resultType())}});
  j["placeholders"] = phs;
  // Constants the function reads, in module order; their bytes after the JSON.
  std::map<const Node*, bool> used;
  for (const auto& n : f.nodes())
    for (const NodeValue& v : n->inputs())
      if (v && v.node->kind() == NodeKind::Constant)
        used[v.node] = true;
  for (const auto& o : f.outputs())
    if (o.value.node->kind() == NodeKind::Constant)
      used[o.value.node] = true;
  std::vector<uint8_t> blob;
  json consts = json::array();
  for (const auto& c : m.constants()) {
    if (!used.count(c.get()))
      continue;
    const Tensor& t = c->payload();
    consts.push_back({{"name", c->name()},
                      {"type", typeToJson(t.type())},
                      {"offset", blob.size()},
                      {"bytes", t.sizeInBytes()}});
    blob.insert(blob.end(), t.raw(), t.raw() + t.sizeInBytes());
  }
  j["constants"] = consts;
  json nodes = json::array();
  for (const auto& n : f.nodes()) {
    json ins = json::array(), attrs = json::object(), results = json::array();
    for (const NodeValue& v : n->inputs())
      ins.push_back(ref(v));
    for (const auto& [name, v] : n->attrs().all())
      attrs[name] = attrToJson(n->name(), name, v);
    for (const Type& t : n->resultTypes())
      results.push_back(typeToJson(t));
    nodes.push_back({{"kind", n->kindName()},
                     {"name", n->name()},
                     {"inputs", ins},
                     {"attrs", attrs},
                     {"results", results}});
  }
  j["nodes"] = nodes;
  json outs = json::array();
  for (const auto& o : f.outputs())
    outs.push_back({{"name", o.name}, {"value", ref(o.value)}});
  j["outputs"] = outs;
  const std::string text = j.dump();
  std::vector<uint8_t> out(kMagic, kMagic + 8);
  const uint64_t len = text.size();
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<uint8_t>(len >> (8 * i)));
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), blob.begin(), blob.end());
  return out;
}

namespace {

/// A serialized function's parts: its JSON and the constants' bytes after it.
struct Container {
  json j;
  const uint8_t* blob = nullptr;
  uint64_t blobSize = 0;
};

/// The magic, the JSON's length and the JSON object (r.fail naming the part otherwise).
Container readContainer(const Reader& r, const uint8_t* data, size_t size) {
  if (size < 16 || std::memcmp(data, kMagic, 8) != 0)
    r.fail("header", "not an Ember function (no EMBERFN1 magic)");
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i)
    len |= uint64_t(data[8 + i]) << (8 * i);
  if (len > size - 16)
    r.fail("header", "the JSON length " + std::to_string(len) + " runs past the end");
  Container c;
  c.j = json::parse(data + 16, data + 16 + len, nullptr, false);
  if (c.j.is_discarded() || !c.j.is_object())
    r.fail("json", "not a JSON object");
  c.blob = data + 16 + len;
  c.blobSize = size - 16 - len;
  return c;
}

} // namespace

std::unique_ptr<Module> deserializeFunction(const uint8_t* data, size_t size,
                                            const std::string& where) {
  Reader r;
  r.where = where;
  const Container c = readContainer(r, data, size);
  const json& j = c.j;
  const uint8_t* blob = c.blob;
  const uint64_t blobSize = c.blobSize;

  auto m = std::make_unique<Module>();
  m->setSource(r.str(j, "source", ""));
  Function* f = m->createFunction(r.str(j, "function", ""));
  std::map<std::string, Node*> byName;
  auto define = [&](const std::string& path, const std::string& name, Node* n) {
    if (!byName.emplace(name, n).second)
      r.fail(path, "the name '" + name + "' is defined twice");
  };
  const json& phs = r.array(j, "placeholders", "");
  for (size_t i = 0; i < phs.size(); ++i) {
    const std::string path = "/placeholders/" + std::to_string(i);
    const std::string name = r.str(phs[i], "name", path);
    define(path, name,
           m->createPlaceholder(name, r.type(r.field(phs[i], "type", path), path + "/type")));
  }
  const json& cs = r.array(j, "constants", "");
  for (size_t i = 0; i < cs.size(); ++i) {
    const std::string path = "/constants/" + std::to_string(i);
    const std::string name = r.str(cs[i], "name", path);
    Type t = r.type(r.field(cs[i], "type", path), path + "/type");
    const int64_t off = r.integer(r.field(cs[i], "offset", path), path + "/offset");
    const int64_t bytes = r.integer(r.field(cs[i], "bytes", path), path + "/bytes");
    if (t.size() > kMaxTensorElements || bytes < 0 || uint64_t(bytes) != t.sizeInBytes())
      r.fail(path + "/bytes", "does not match the type " + t.toString());
    if (off < 0 || uint64_t(off) > blobSize || uint64_t(bytes) > blobSize - uint64_t(off))
      r.fail(path + "/offset", "the bytes run past the end of the data");
    Tensor payload(t);
    if (bytes)
      std::memcpy(payload.raw(), blob + off, size_t(bytes));
    define(path, name, m->createConstant(name, std::move(payload)));
  }
  auto resolve = [&](const json& v, const std::string& path) -> NodeValue {
    if (v.is_null())
      return NodeValue();
    if (!v.is_array() || v.size() != 2 || !v[0].is_string())
      r.fail(path, "not [name, result] or null");
    auto it = byName.find(v[0].get<std::string>());
    if (it == byName.end())
      r.fail(path, "'" + v[0].get<std::string>() + "' is not defined before it is used");
    const int64_t res = r.integer(v[1], path + "/1");
    if (res < 0 || uint64_t(res) >= it->second->numResults())
      r.fail(path, "'" + it->first + "' has no result " + std::to_string(res));
    return NodeValue(it->second, unsigned(res));
  };
  const json& nodes = r.array(j, "nodes", "");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string path = "/nodes/" + std::to_string(i);
    const json& n = nodes[i];
    NodeKind kind;
    const std::string kindName = r.str(n, "kind", path);
    if (!parseNodeKind(kindName, &kind) || kind == NodeKind::Placeholder ||
        kind == NodeKind::Constant)
      r.fail(path + "/kind", "'" + kindName + "' is not an operator kind");
    const std::string name = r.str(n, "name", path);
    std::vector<NodeValue> ins;
    const json& jin = r.array(n, "inputs", path);
    for (size_t k = 0; k < jin.size(); ++k)
      ins.push_back(resolve(jin[k], path + "/inputs/" + std::to_string(k)));
    Attrs attrs;
    const json& ja = r.field(n, "attrs", path);
    if (!ja.is_object())
      r.fail(path + "/attrs", "not an object");
    for (auto it = ja.begin(); it != ja.end(); ++it)
      attrs.set(it.key(), r.attr(it.value(), path + "/attrs/" + it.key()));
    std::vector<Type> results;
    const json& jr = r.array(n, "results", path);
    for (size_t k = 0; k < jr.size(); ++k)
      results.push_back(r.type(jr[k], path + "/results/" + std::to_string(k)));
    Node* made = nullptr;
    try {
      made = f->create(kind, name, std::move(ins), std::move(attrs), std::move(results));
    } catch (const Error& e) {
      r.fail(path, e.what());
    }
    define(path, name, made);
  }
  const json& outs = r.array(j, "outputs", "");
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string path = "/outputs/" + std::to_string(i);
    NodeValue v = resolve(r.field(outs[i], "value", path), path + "/value");
    if (!v)
      r.fail(path + "/value", "null");
    f->addOutput(r.str(outs[i], "name", path), v);
  }
  return m;
}

} // namespace ember
