// Partitioned plans as package files, and back.
#include "ember/driver/Package.h"

#include "ember/driver/Estimate.h"

#include "ember/graph/Serialize.h"
#include "ember/graph/SerializeJson.h"
#include "ember/isa/binary.h"
#include "ember/isa/error.h"
#include "ember/isa/package.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <cmath>
#include <fstream>
#include <map>

namespace ember::partition {

using nlohmann::json;

namespace {

std::string entryName(size_t s, const Segment& seg) {
  return "seg" + std::to_string(s) + (seg.backend == "npu" ? ".elf" : ".graph");
}

json manifestOf(const Plan& p, const isa::IsaDescription& isa) {
  json m;
  m["format"] = "ember-package";
  m["version"] = isa::kPackageVersion;
  m["function"] = p.functionName;
  m["source"] = p.source;
  m["isa"] = p.isaName;
  json ins = json::array();
  for (const auto& [name, type] : p.inputs)
    ins.push_back({{"name", name}, {"type", typeToJson(type)}});
  m["inputs"] = ins;
  json outs = json::array();
  for (const auto& [name, i] : p.outputs)
    outs.push_back({{"name", name}, {"value", i}});
  m["outputs"] = outs;
  json values = json::array();
  for (const BoundaryValue& b : p.values) {
    if (b.constant)
      throw Error("value '" + b.key + "'",
                  "a model output that is a constant cannot be packaged (fold it away)");
    json v = {{"key", b.key}, {"type", typeToJson(b.type)}, {"producer", b.producer}};
    if (b.producer < 0)
      v["input"] = b.input;
    values.push_back(v);
  }
  m["values"] = values;
  json segs = json::array();
  for (size_t s = 0; s < p.segments.size(); ++s) {
    const Segment& seg = p.segments[s];
    json j = {{"backend", seg.backend},          {"entry", entryName(s, seg)},
              {"nodes", seg.numNodes},           {"inputs", seg.inputs},
              {"input_names", seg.inputNames},   {"outputs", seg.outputs},
              {"output_names", seg.outputNames}, {"macs", seg.macs},
              {"elements", seg.elements}};
    if (seg.npu)
      j["estimated_cycles"] = seg.npu->summary.cycles;
    // Only a segment of another description names it: single-description packages keep
    // their bytes.
    if (seg.npu && seg.isa && seg.isa->hash() != isa.hash()) {
      j["isa"] = seg.isa->name();
      j["isa_hash"] = isa::toHex(seg.isa->hash());
    }
    segs.push_back(j);
  }
  m["segments"] = segs;
  const PlanEstimate& e = p.estimate;
  if (e.hostMacsPerSecond > 0)
    m["estimate_rates"] = {{"host_macs_per_second", e.hostMacsPerSecond},
                           {"host_elements_per_second", e.hostElementsPerSecond},
                           {"boundary_bytes_per_second", e.boundaryBytesPerSecond},
                           {"npu_launch_seconds", e.npuLaunchSeconds}};
  json nodes = json::array();
  for (const NodePlacement& n : p.nodes)
    nodes.push_back({{"name", n.name},
                     {"kind", n.kind},
                     {"backend", n.backend},
                     {"reason", n.reason},
                     {"segment", n.segment},
                     {"macs", n.macs}});
  m["placement"] = nodes;
  return m;
}

std::vector<size_t> indices(const JsonReader& r, const json& j, const char* key,
                            const std::string& path, size_t limit) {
  std::vector<size_t> out;
  for (int64_t v : r.ints(r.field(j, key, path), path + "/" + key)) {
    if (v < 0 || uint64_t(v) >= limit)
      r.fail(path + "/" + key, "index " + std::to_string(v) + " is out of range");
    out.push_back(size_t(v));
  }
  return out;
}

std::vector<std::string> strings(const JsonReader& r, const json& j, const char* key,
                                 const std::string& path, size_t count) {
  const json& a = r.array(j, key, path);
  if (a.size() != count)
    r.fail(path + "/" + key,
           "has " + std::to_string(a.size()) + " names for " + std::to_string(count) + " values");
  std::vector<std::string> out;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string())
      r.fail(path + "/" + key + "/" + std::to_string(i), "not a string");
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

/// Values and inputs/outputs of the manifest.
void readValues(const JsonReader& r, const json& m, Plan& p) {
  const json& ins = r.array(m, "inputs", "");
  std::map<std::string, size_t> inputAt;
  for (size_t i = 0; i < ins.size(); ++i) {
    const std::string path = "/inputs/" + std::to_string(i);
    p.inputs.emplace_back(r.str(ins[i], "name", path),
                          r.type(r.field(ins[i], "type", path), path + "/type"));
    if (auto [it, fresh] = inputAt.emplace(p.inputs.back().first, i); !fresh)
      r.fail(path + "/name", "input '" + it->first + "' is named twice (also /inputs/" +
                                 std::to_string(it->second) + ")");
  }
  const json& vals = r.array(m, "values", "");
  const size_t segCount = r.array(m, "segments", "").size();
  for (size_t i = 0; i < vals.size(); ++i) {
    const std::string path = "/values/" + std::to_string(i);
    BoundaryValue b;
    b.key = r.str(vals[i], "key", path);
    b.type = r.type(r.field(vals[i], "type", path), path + "/type");
    const int64_t prod = r.integer(r.field(vals[i], "producer", path), path + "/producer");
    if (prod < -1 || prod >= int64_t(segCount))
      r.fail(path + "/producer", "not -1 or a segment");
    b.producer = int(prod);
    if (b.producer < 0) {
      b.input = r.str(vals[i], "input", path);
      bool known = false;
      for (const auto& [name, type] : p.inputs)
        known = known || (name == b.input && type.kind == b.type.kind && type.dims == b.type.dims);
      if (!known)
        r.fail(path + "/input", "'" + b.input + "' is not a model input of this type");
    }
    p.values.push_back(std::move(b));
  }
  const json& outs = r.array(m, "outputs", "");
  if (outs.empty())
    r.fail("/outputs", "the package has no outputs: a model computes at least one");
  std::map<std::string, size_t> outputAt;
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string path = "/outputs/" + std::to_string(i);
    const int64_t v = r.integer(r.field(outs[i], "value", path), path + "/value");
    if (v < 0 || uint64_t(v) >= p.values.size())
      r.fail(path + "/value", "not a value");
    p.outputs.emplace_back(r.str(outs[i], "name", path), size_t(v));
    if (auto [it, fresh] = outputAt.emplace(p.outputs.back().first, i); !fresh)
      r.fail(path + "/name", "output '" + it->first + "' is named twice (also /outputs/" +
                                 std::to_string(it->second) + ")");
  }
}

/// The rates the package was placed by ("estimate_rates"; packages written before it
/// are estimated with the default rates).
PartitionOptions estimateRates(const JsonReader& r, const json& m) {
  PartitionOptions o;
  if (!m.contains("estimate_rates"))
    return o;
  const json& e = m.at("estimate_rates");
  if (!e.is_object())
    r.fail("/estimate_rates", "not an object");
  auto rate = [&](const char* key, double& to, bool zeroOk) {
    const double v =
        r.number(r.field(e, key, "/estimate_rates"), std::string("/estimate_rates/") + key);
    if (!std::isfinite(v) || v < 0 || (v == 0 && !zeroOk) || v > 1e18)
      r.fail(std::string("/estimate_rates/") + key,
             zeroOk ? "not a number of seconds from 0 to 1e18" : "not a positive rate up to 1e18");
    to = v;
  };
  rate("host_macs_per_second", o.hostMacsPerSecond, false);
  rate("host_elements_per_second", o.hostElementsPerSecond, false);
  rate("boundary_bytes_per_second", o.boundaryBytesPerSecond, false);
  rate("npu_launch_seconds", o.npuLaunchSeconds, true);
  return o;
}

/// An NPU segment's own description ("isa", "isa_hash": a system of unequal devices),
/// found among `others`; null when the segment runs the package's description.
std::shared_ptr<const isa::IsaDescription>
segmentIsa(const JsonReader& r, const json& j, const std::string& path,
           const isa::IsaDescription& isa, const std::vector<isa::IsaDescription>& others,
           const std::string& entry) {
  if (!j.contains("isa_hash"))
    return nullptr;
  const std::string hash = r.str(j, "isa_hash", path);
  const std::string name = r.str(j, "isa", path);
  if (hash == isa::toHex(isa.hash()))
    return nullptr;
  for (const isa::IsaDescription& d : others)
    if (isa::toHex(d.hash()) == hash)
      return std::make_shared<const isa::IsaDescription>(d);
  r.fail(path + "/isa_hash",
         "segment " + entry + " is built for NPU description '" + name + "' (hash " +
             hash.substr(0, 16) + "...), not '" + isa.name() +
             "': this package is a pipeline over a system of unequal devices; serve it on "
             "the system it was compiled for: ember-run PKG --system SYS.json --requests N");
}

/// One segment: its manifest entry and its package entry.
Segment readSegment(const JsonReader& r, const json& j, size_t s, const Plan& p,
                    const isa::Package& pkg, const isa::IsaDescription& isa,
                    const std::vector<isa::IsaDescription>& others, const std::string& file) {
  const std::string path = "/segments/" + std::to_string(s);
  Segment seg;
  seg.backend = r.str(j, "backend", path);
  if (seg.backend != "npu" && seg.backend != "cpu" && seg.backend != "interp")
    r.fail(path + "/backend", "'" + seg.backend + "' is not npu, cpu or interp");
  const int64_t nodes = r.integer(r.field(j, "nodes", path), path + "/nodes");
  seg.numNodes = nodes < 0 ? 0 : size_t(nodes);
  seg.macs = r.integer(r.field(j, "macs", path), path + "/macs");
  // Packages written before the end-to-end estimate lack it: their host segments are
  // then estimated from their MACs alone.
  if (j.contains("elements"))
    seg.elements = r.integer(j.at("elements"), path + "/elements");
  seg.inputs = indices(r, j, "inputs", path, p.values.size());
  seg.outputs = indices(r, j, "outputs", path, p.values.size());
  seg.inputNames = strings(r, j, "input_names", path, seg.inputs.size());
  seg.outputNames = strings(r, j, "output_names", path, seg.outputs.size());
  for (size_t i : seg.inputs)
    if (p.values[i].producer >= int(s))
      r.fail(path + "/inputs", "value '" + p.values[i].key + "' is made by a later segment");
  for (size_t i : seg.outputs)
    if (p.values[i].producer != int(s))
      r.fail(path + "/outputs", "value '" + p.values[i].key + "' is not made by this segment");
  const std::string entry = r.str(j, "entry", path);
  const isa::PackageEntry* e = pkg.find(entry);
  if (!e)
    r.fail(path + "/entry", "the package has no entry '" + entry + "'");
  const std::string where = file + ":" + entry;
  if (seg.backend == "npu") {
    seg.isa = segmentIsa(r, j, path, isa, others, entry);
    seg.npu = std::make_shared<npu::CompileResult>();
    seg.npu->binary =
        isa::parseElf(e->data.data(), e->data.size(), seg.isa ? *seg.isa : isa, where);
    if (j.contains("estimated_cycles"))
      seg.npu->summary.cycles = r.number(j.at("estimated_cycles"), path + "/estimated_cycles");
    seg.npu->summary.macs = seg.macs;
    auto checkIo = [&](const std::vector<std::string>& names, const std::vector<size_t>& vals,
                       isa::IoDir dir, const char* key) {
      for (size_t k = 0; k < names.size(); ++k) {
        const isa::IoEntry* io = nullptr;
        for (const isa::IoEntry& ent : seg.npu->binary.io)
          if (ent.name == names[k] && ent.dir == dir)
            io = &ent;
        const Type& t = p.values[vals[k]].type;
        if (!io || numElements(Shape(io->shape.begin(), io->shape.end())) != t.size())
          r.fail(path + "/" + key + "/" + std::to_string(k),
                 "the segment's binary has no " + std::string(isa::toString(dir)) + " '" +
                     names[k] + "' of " + std::to_string(t.size()) + " elements");
      }
    };
    checkIo(seg.inputNames, seg.inputs, isa::IoDir::Input, "input_names");
    checkIo(seg.outputNames, seg.outputs, isa::IoDir::Output, "output_names");
  } else {
    seg.module = deserializeFunction(e->data.data(), e->data.size(), where);
    seg.function = seg.module->functions().front().get();
    for (size_t k = 0; k < seg.inputNames.size(); ++k) {
      const Node* ph = seg.module->getPlaceholder(seg.inputNames[k]);
      const Type& t = p.values[seg.inputs[k]].type;
      if (!ph || ph->resultType().kind != t.kind || ph->resultType().dims != t.dims)
        r.fail(path + "/input_names/" + std::to_string(k), "the segment's function has no input '" +
                                                               seg.inputNames[k] + "' of type " +
                                                               t.toString());
    }
    for (size_t k = 0; k < seg.outputNames.size(); ++k) {
      const Type& t = p.values[seg.outputs[k]].type;
      bool found = false;
      for (const auto& o : seg.function->outputs())
        found = found || (o.name == seg.outputNames[k] && o.value.type().kind == t.kind &&
                          o.value.dims() == t.dims);
      if (!found)
        r.fail(path + "/output_names/" + std::to_string(k),
               "the segment's function has no output '" + seg.outputNames[k] + "' of type " +
                   t.toString());
    }
  }
  return seg;
}

} // namespace

std::vector<uint8_t> packageBytes(const Plan& p, const isa::IsaDescription& isa) {
  if (p.whole)
    throw InternalError("package", "a model the NPU runs whole is written as an NPU binary");
  isa::Package pkg;
  pkg.isa_hash = isa.hash();
  const std::string manifest = manifestOf(p, isa).dump(1);
  pkg.entries.push_back({"manifest.json", std::vector<uint8_t>(manifest.begin(), manifest.end())});
  for (size_t s = 0; s < p.segments.size(); ++s) {
    const Segment& seg = p.segments[s];
    const isa::IsaDescription& d = seg.isa ? *seg.isa : isa;
    pkg.entries.push_back({entryName(s, seg), seg.npu ? isa::serializeElf(seg.npu->binary, d)
                                                      : serializeFunction(*seg.function)});
  }
  return isa::serializePackage(pkg);
}

void writePackage(const std::string& path, const Plan& p, const isa::IsaDescription& isa) {
  const std::vector<uint8_t> bytes = packageBytes(p, isa);
  writeFileAtomic(path, bytes.data(), bytes.size());
}

bool isPackageFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  return in.gcount() == 8 &&
         isa::isPackageImage(reinterpret_cast<const uint8_t*>(magic), sizeof magic);
}

Plan parsePackage(const uint8_t* data, size_t size, const isa::IsaDescription& isa,
                  const std::string& file, const std::vector<isa::IsaDescription>& others) {
  const isa::Package pkg = isa::parsePackage(data, size, file);
  if (pkg.isa_hash != isa.hash())
    throw Error(file, "built for another NPU description (hash " +
                          isa::toHex(pkg.isa_hash).substr(0, 16) + "..., this is '" + isa.name() +
                          "' " + isa::toHex(isa.hash()).substr(0, 16) +
                          "...): compile it again with --isa, or run it with the description it "
                          "was built for");
  const isa::PackageEntry* me = pkg.find("manifest.json");
  if (!me)
    throw Error(file, "the package has no manifest.json");
  JsonReader r;
  r.where = file + ":manifest.json";
  json m;
  try {
    m = json::parse(me->data.begin(), me->data.end());
  } catch (const json::exception& e) {
    throw isa::jsonError(r.where, "not valid JSON", e);
  }
  if (!m.is_object())
    r.fail("/", "not a JSON object");
  if (r.str(m, "format", "") != "ember-package")
    r.fail("/format", "not 'ember-package'");
  if (const int64_t v = r.integer(r.field(m, "version", ""), "/version"); v != isa::kPackageVersion)
    r.fail("/version", "manifest version " + std::to_string(v) + ", this Ember reads " +
                           std::to_string(isa::kPackageVersion) +
                           ": rebuild the package with this emberc");
  Plan p;
  p.functionName = r.str(m, "function", "");
  p.source = r.str(m, "source", "");
  p.isaName = r.str(m, "isa", "");
  readValues(r, m, p);
  const json& segs = r.array(m, "segments", "");
  for (size_t s = 0; s < segs.size(); ++s)
    p.segments.push_back(readSegment(r, segs[s], s, p, pkg, isa, others, file));
  for (size_t i = 0; i < p.values.size(); ++i)
    if (p.values[i].producer >= 0) {
      const Segment& seg = p.segments[size_t(p.values[i].producer)];
      if (std::find(seg.outputs.begin(), seg.outputs.end(), i) == seg.outputs.end())
        r.fail("/values/" + std::to_string(i), "its producer segment does not output it");
    }
  const json& nodes = r.array(m, "placement", "");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string path = "/placement/" + std::to_string(i);
    NodePlacement n;
    n.name = r.str(nodes[i], "name", path);
    n.kind = r.str(nodes[i], "kind", path);
    n.backend = r.str(nodes[i], "backend", path);
    n.reason = r.str(nodes[i], "reason", path);
    n.segment = int(r.integer(r.field(nodes[i], "segment", path), path + "/segment"));
    n.macs = r.integer(r.field(nodes[i], "macs", path), path + "/macs");
    p.nodes.push_back(std::move(n));
  }
  p.estimate = estimatePlan(p, isa, estimateRates(r, m));
  return p;
}

Plan loadPackage(const std::string& path, const isa::IsaDescription& isa,
                 const std::vector<isa::IsaDescription>& others) {
  const std::string bytes = readFileBytes(path);
  return parsePackage(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), isa, path,
                      others);
}

} // namespace ember::partition
