// The design space of ember-dse: axes, their cross product, consistency of a description
// after an axis changed it, and seeded random descriptions (Space.h).
#include "ember/session/dse/Space.h"

#include "ember/isa/description.h"
#include "ember/isa/roles.h"
#include "ember/isa/semantic.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <set>

namespace ember::dse {

using nlohmann::json;

namespace {

/// Bits needed for the values 0..max_value (at least 1), as the validator counts them.
unsigned bitsFor(std::uint64_t max_value) {
  unsigned b = 0;
  while (b < 64 && (max_value >> b) != 0)
    ++b;
  return b == 0 ? 1 : b;
}

unsigned log2Floor(std::uint64_t v) {
  unsigned b = 0;
  while (v > 1) {
    v >>= 1;
    ++b;
  }
  return b;
}

/// Rows = cols = vector lanes = L, and every row size and array latency that follows.
void setArray(json& d, std::int64_t L) {
  json& hw = d["hardware"];
  json& mac = hw["mac_array"];
  mac["rows"] = L;
  mac["cols"] = L;
  for (const char* k : {"weight_load_cycles", "fill_cycles", "drain_cycles"})
    if (mac.contains(k))
      mac[k] = L;
  hw["vector"]["lanes"] = L;
  json& mem = hw["memories"];
  const std::pair<const char*, std::int64_t> rows[] = {{isa::mem::kAct, L},
                                                       {isa::mem::kWeight, L * L},
                                                       {isa::mem::kAcc, 4 * L},
                                                       {isa::mem::kParam, 4 * L}};
  for (const auto& [name, bytes] : rows)
    if (mem.contains(name))
      mem[name]["row_bytes"] = bytes;
}

void setAt(json& d, const char* pointer, std::int64_t v) {
  d[json::json_pointer(pointer)] = v;
}

/// A convenience axis: its name, help line and what a value does to a description.
struct NamedAxis {
  const char* name;
  const char* help;
  std::function<void(json&, std::int64_t)> apply;
};

const std::vector<NamedAxis>& namedAxes() {
  auto memSize = [](const char* m) {
    return [m](json& d, std::int64_t v) { d["hardware"]["memories"][m]["size_bytes"] = v * 1024; };
  };
  auto memBanks = [](const char* m) {
    return [m](json& d, std::int64_t v) { d["hardware"]["memories"][m]["banks"] = v; };
  };
  auto at = [](const char* p) { return [p](json& d, std::int64_t v) { setAt(d, p, v); }; };
  static const std::vector<NamedAxis> axes = {
      {"array", "MAC rows = cols = vector lanes, and the row sizes and latencies that follow",
       setArray},
      {"act_kib", "activation SRAM size in KiB", memSize(isa::mem::kAct)},
      {"weight_kib", "weight SRAM size in KiB", memSize(isa::mem::kWeight)},
      {"acc_kib", "accumulator SRAM size in KiB", memSize(isa::mem::kAcc)},
      {"param_kib", "parameter SRAM size in KiB", memSize(isa::mem::kParam)},
      {"act_banks", "banks of the activation SRAM", memBanks(isa::mem::kAct)},
      {"weight_banks", "banks of the weight SRAM", memBanks(isa::mem::kWeight)},
      {"acc_banks", "banks of the accumulator SRAM", memBanks(isa::mem::kAcc)},
      {"dram_bytes_per_cycle", "DRAM bandwidth (hardware.dram.bytes_per_cycle)",
       at("/hardware/dram/bytes_per_cycle")},
      {"dma_latency", "DRAM latency in cycles (hardware.dma.latency_cycles)",
       at("/hardware/dma/latency_cycles")},
      {"dma_outstanding", "outstanding DMA requests (hardware.dma.max_outstanding)",
       at("/hardware/dma/max_outstanding")},
      {"burst_bytes", "DMA burst size (hardware.dma.burst_bytes)", at("/hardware/dma/burst_bytes")},
      {"weight_buffers", "weight blocks held by the MAC array, 1 or 2",
       at("/hardware/mac_array/weight_buffers")},
      {"queue_depth", "depth of the load, compute and store queues",
       [](json& d, std::int64_t v) {
         for (const char* q : {"load_depth", "compute_depth", "store_depth"})
           d["hardware"]["queues"][q] = v;
       }},
      {"clock_mhz", "clock in MHz (hardware.clock_hz)",
       [](json& d, std::int64_t v) { d["hardware"]["clock_hz"] = v * 1000000; }},
  };
  return axes;
}

const NamedAxis* findNamed(const std::string& name) {
  for (const NamedAxis& a : namedAxes())
    if (name == a.name)
      return &a;
  return nullptr;
}

/// An axis name to compare: a JSON pointer in its canonical spelling, else the name.
std::string axisKey(const std::string& name) {
  if (name.empty() || name[0] != '/')
    return name;
  try {
    return json::json_pointer(name).to_string();
  } catch (const json::exception&) {
    return name;
  }
}

/// "NAME=V1,V2,..." of `a`, as given to --axis.
std::string specOf(const Axis& a) {
  std::string s = a.name + "=";
  for (std::size_t i = 0; i < a.values.size(); ++i)
    s += (i ? "," : "") + a.values[i];
  return s;
}

/// The fields (JSON pointers) axis `name` writes in `base`: a pointer axis its pointer, a
/// convenience axis every field that changes with its value (found by applying two
/// values: a field that follows the value differs from the base in one of them at least).
std::vector<std::string> fieldsOf(const json& base, const std::string& name) {
  if (!name.empty() && name[0] == '/')
    return {axisKey(name)};
  std::set<std::string> out;
  const NamedAxis* a = findNamed(name);
  for (std::int64_t v : {1, 2}) {
    if (!a)
      break;
    json d = base;
    try {
      a->apply(d, v);
    } catch (const json::exception&) {
      continue; // a base without the field: the validator names it
    }
    for (const json& op : json::diff(base, d))
      out.insert(op.value("path", std::string()));
  }
  return {out.begin(), out.end()};
}

/// Whether fields `p` and `q` are one, or one holds the other.
bool overlaps(const std::string& p, const std::string& q) {
  auto within = [](const std::string& inner, const std::string& outer) {
    return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
           inner[outer.size()] == '/';
  };
  return p == q || within(p, q) || within(q, p);
}

/// Refuses settings that name one axis twice, or two axes that write the same field
/// (array and /hardware/mac_array/rows, act_kib and /hardware/memories/act): the later
/// would overwrite the earlier and the row would be labelled with a value it does not have.
void checkDistinct(const json& base, const Settings& s) {
  std::vector<std::vector<std::string>> fields;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::string& name = s[i].first;
    fields.push_back(fieldsOf(base, name));
    for (std::size_t j = 0; j < i; ++j) {
      const std::string& other = s[j].first;
      if (axisKey(name) == axisKey(other))
        throw UsageError("--axis " + name, "axis '" + name + "' is given twice (values '" +
                                               s[j].second + "' and '" + s[i].second +
                                               "'); give its values in one --axis");
      for (const std::string& f : fields[i])
        for (const std::string& g : fields[j])
          if (overlaps(f, g))
            throw UsageError("--axis " + name, "sets " + f + ", which --axis " + other +
                                                   " sets too (" + g +
                                                   "); give one of the two axes");
    }
  }
}

bool parseWhole(const std::string& s, std::int64_t& v) {
  if (s.empty() || s.size() > 15 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  v = std::stoll(s);
  return true;
}

/// A JSON pointer axis's value: JSON if it parses (42, true, "x", [1]), else the string.
json pointerValue(const std::string& s) {
  json v = json::parse(s, nullptr, false);
  return v.is_discarded() ? json(s) : v;
}

/// The memories an address role may reach in instruction `in`.
std::vector<std::string> addrMemories(const isa::ClassSpec& c, const isa::RoleSpec& r,
                                      const json& in) {
  if (!r.memory.empty())
    return {r.memory};
  const isa::RoleSpec* sel = c.findRole(r.select_role);
  if (sel && !sel->choices.empty())
    return sel->choices;
  std::vector<std::string> out;
  if (in.contains("properties") && in["properties"].contains("memories"))
    for (const auto& m : in["properties"]["memories"])
      out.push_back(m.get<std::string>());
  return out;
}

/// The width role `r` needs in instruction `in` of description `d` (0: no rule here).
unsigned neededWidth(const json& d, const isa::ClassSpec& c, const isa::RoleSpec& r,
                     const json& in) {
  const json& mems = d["hardware"]["memories"];
  auto rowsOf = [&](const std::string& m) -> std::uint64_t {
    if (!mems.contains(m))
      return 1;
    const auto size = mems[m].value("size_bytes", std::uint64_t(1));
    const auto row = std::max<std::uint64_t>(1, mems[m].value("row_bytes", std::uint64_t(1)));
    return std::max<std::uint64_t>(1, size / row);
  };
  unsigned need = r.min_width;
  switch (r.kind) {
  case isa::RoleKind::Addr:
    for (const std::string& m : addrMemories(c, r, in))
      need = std::max(need, bitsFor(rowsOf(m) - 1));
    break;
  case isa::RoleKind::DramAddr:
    need = std::max(need, bitsFor(d["hardware"]["dram"].value("size_bytes", std::uint64_t(1)) - 1));
    break;
  case isa::RoleKind::MemSelect: {
    std::vector<std::string> choices = r.choices;
    if (choices.empty() && in.contains("properties") && in["properties"].contains("memories"))
      for (const auto& m : in["properties"]["memories"])
        choices.push_back(m.get<std::string>());
    for (const std::string& m : choices)
      if (mems.contains(m))
        need = std::max(need, bitsFor(mems[m].value("id", std::uint64_t(0))));
    break;
  }
  default:
    break;
  }
  return need;
}

/// A LUT's table field narrowed so that its highest table stays inside the param SRAM.
void fitLutTable(const json& d, json& in) {
  if (!in["fields"].contains(isa::role::kTable))
    return;
  const std::uint64_t param =
      d["hardware"]["memories"].value(isa::mem::kParam, json::object()).value("size_bytes", 0ull);
  const std::uint64_t offset =
      in.contains("properties") ? in["properties"].value("table_offset", 0ull) : 0;
  json& w = in["fields"][isa::role::kTable]["width"];
  unsigned width = w.get<unsigned>();
  while (width > 1 && width < 32 && ((std::uint64_t(1) << width) + offset) * 256 > param)
    --width;
  w = width;
}

/// True if some field of some instruction overlaps another or the opcode, or leaves the word.
bool layoutBroken(const json& d) {
  const json& enc = d["encoding"];
  const unsigned bits = enc["instruction_bits"].get<unsigned>();
  const unsigned olo = enc["opcode"]["lsb"].get<unsigned>();
  const unsigned ohi = olo + enc["opcode"]["width"].get<unsigned>();
  for (const json& in : d["instructions"]) {
    std::vector<std::pair<unsigned, unsigned>> spans{{olo, ohi}};
    for (const auto& [name, f] : in["fields"].items())
      spans.emplace_back(f["lsb"].get<unsigned>(),
                         f["lsb"].get<unsigned>() + f["width"].get<unsigned>());
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 0; i < spans.size(); ++i)
      if (spans[i].second > bits || (i > 0 && spans[i].first < spans[i - 1].second))
        return true;
  }
  return false;
}

/// Packs every instruction's fields in their present lsb order, next to each other,
/// with the opcode at the bottom (`high` false) or the top of the word; the word is the
/// next multiple of 32 bits that holds the widest instruction, and at least `minBits`.
void packFields(json& d, bool high, unsigned minBits) {
  json& enc = d["encoding"];
  const unsigned opw = enc["opcode"]["width"].get<unsigned>();
  unsigned widest = 0;
  for (json& in : d["instructions"]) {
    std::vector<std::pair<unsigned, std::string>> order;
    for (const auto& [name, f] : in["fields"].items())
      order.emplace_back(f["lsb"].get<unsigned>(), name);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    unsigned pos = high ? 0 : opw;
    for (const auto& [lsb, name] : order) {
      in["fields"][name]["lsb"] = pos;
      pos += in["fields"][name]["width"].get<unsigned>();
    }
    widest = std::max(widest, pos + (high ? opw : 0));
  }
  const unsigned bits = std::max(minBits, (widest + 31) / 32 * 32);
  enc["instruction_bits"] = bits;
  enc["opcode"]["lsb"] = high ? bits - opw : 0;
}

} // namespace

Axis parseAxis(const std::string& spec) {
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw UsageError("--axis '" + spec + "'", "expects NAME=V1,V2,... (e.g. array=8,16,32 or "
                                              "/hardware/dma/latency_cycles=50,100)");
  Axis a;
  a.name = spec.substr(0, eq);
  const std::string list = spec.substr(eq + 1);
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string v =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (v.empty())
      throw UsageError("--axis '" + spec + "'", "empty value in '" + list + "'");
    a.values.push_back(v);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (a.name[0] == '/') {
    try {
      (void)json::json_pointer(a.name);
    } catch (const json::exception& e) {
      throw UsageError("--axis '" + spec + "'", "'" + a.name + "' is not a JSON pointer");
    }
    return a;
  }
  if (!findNamed(a.name)) {
    std::string known;
    for (const NamedAxis& n : namedAxes())
      known += std::string(known.empty() ? "" : ", ") + n.name;
    throw UsageError("--axis '" + spec + "'", "unknown axis '" + a.name + "' (known: " + known +
                                                  ", or a JSON pointer such as /hardware/...)");
  }
  for (const std::string& v : a.values) {
    std::int64_t n = 0;
    if (!parseWhole(v, n))
      throw UsageError("--axis '" + spec + "'",
                       "axis '" + a.name + "' expects whole numbers, got '" + v + "'");
  }
  return a;
}

std::string axisHelp() {
  std::string s;
  for (const NamedAxis& a : namedAxes()) {
    std::string n = a.name;
    s += "  " + n + std::string(n.size() < 22 ? 22 - n.size() : 1, ' ') + a.help + "\n";
  }
  return s;
}

std::vector<Settings> crossProduct(const std::vector<Axis>& axes) {
  for (std::size_t i = 0; i < axes.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (axisKey(axes[i].name) == axisKey(axes[j].name)) {
        std::vector<std::string> all = axes[j].values;
        for (const std::string& v : axes[i].values)
          if (std::find(all.begin(), all.end(), v) == all.end())
            all.push_back(v);
        throw UsageError("--axis '" + specOf(axes[i]) + "'",
                         "axis '" + axes[i].name + "' is given twice (also --axis '" +
                             specOf(axes[j]) + "'); give its values once: --axis " +
                             specOf(Axis{axes[j].name, all}));
      }
  std::vector<Settings> points{Settings{}};
  for (const Axis& a : axes) {
    std::vector<Settings> next;
    for (const Settings& p : points)
      for (const std::string& v : a.values) {
        Settings s = p;
        s.emplace_back(a.name, v);
        next.push_back(std::move(s));
      }
    points = std::move(next);
  }
  return points;
}

json applySettings(const json& base, const Settings& s) {
  checkDistinct(base, s);
  json d = base;
  for (const auto& [name, value] : s) {
    if (!name.empty() && name[0] == '/') {
      const json::json_pointer p(name);
      if (!d.contains(p))
        throw UsageError("--axis " + name, "the base description has no value at " + name);
      d[p] = pointerValue(value);
      continue;
    }
    const NamedAxis* a = findNamed(name);
    std::int64_t v = 0;
    if (!a || !parseWhole(value, v))
      throw UsageError("--axis " + name + "=" + value, "not a known axis with a whole number");
    a->apply(d, v);
  }
  conformDescription(d);
  return d;
}

void conformDescription(json& d) {
  if (!d.contains("instructions") || !d["instructions"].is_array() || !d.contains("encoding") ||
      !d.contains("hardware"))
    return; // the validator names what is missing
  try {
    for (json& in : d["instructions"]) {
      const isa::ClassSpec* c = isa::ClassRegistry::global().find(in.value("class", ""));
      if (!c || !in.contains("fields"))
        continue;
      json& f = in["fields"];
      std::map<std::string, unsigned> grown; // address role -> bits added
      for (const isa::RoleSpec& r : c->roles) {
        if (!f.contains(r.name))
          continue;
        const unsigned need = neededWidth(d, *c, r, in);
        const unsigned width = f[r.name]["width"].get<unsigned>();
        if (width < need && r.kind != isa::RoleKind::Flag) {
          f[r.name]["width"] = need;
          grown[r.name] = need - width;
        }
      }
      // The strides through a memory ("act_s1" for "act_addr") grow with its address.
      for (const auto& [role, bits] : grown) {
        const std::size_t at = role.rfind("_addr");
        if (at == std::string::npos || at + 5 != role.size())
          continue;
        const std::string prefix = role.substr(0, at) + "_s";
        for (auto& [name, field] : f.items())
          if (name.rfind(prefix, 0) == 0)
            field["width"] = field["width"].get<unsigned>() + bits;
      }
      if (c->name == isa::cls::kLut)
        fitLutTable(d, in);
    }
    if (layoutBroken(d)) {
      const json& enc = d["encoding"];
      packFields(d, enc["opcode"]["lsb"].get<unsigned>() != 0,
                 enc["instruction_bits"].get<unsigned>());
    }
  } catch (const json::exception&) {
    // A malformed document (a width that is not a number, ...): left as it is, for the
    // validator to name the place.
  }
}

std::uint64_t mixSeed(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

namespace {

/// A uniform integer in [lo, hi] from `rng` (hi < lo: lo).
std::int64_t pick(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  if (hi <= lo)
    return lo;
  return lo + std::int64_t(rng() % std::uint64_t(hi - lo + 1));
}

std::string kib(std::uint64_t bytes) {
  char buf[32];
  if (bytes % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(bytes / 1024));
  else
    std::snprintf(buf, sizeof buf, "%g", double(bytes) / 1024.0);
  return buf;
}

/// A new encoding: fields shuffled within each instruction, counts, strides and
/// addresses widened by up to two bits, the opcode 1-3 bits wider than it must be, at
/// the bottom or the top of the word.
void reencode(json& d, std::mt19937_64& rng, Settings& drawn) {
  std::int64_t maxOpcode = 0;
  for (const json& in : d["instructions"])
    maxOpcode = std::max<std::int64_t>(maxOpcode, in.value("opcode", 0));
  json& enc = d["encoding"];
  const unsigned opw =
      unsigned(std::min<std::int64_t>(16, bitsFor(std::uint64_t(maxOpcode)) + pick(rng, 0, 3)));
  enc["opcode"]["width"] = opw;
  const bool high = pick(rng, 0, 1) == 1;
  for (json& in : d["instructions"]) {
    const isa::ClassSpec* c = isa::ClassRegistry::global().find(in.value("class", ""));
    json& f = in["fields"];
    std::vector<std::string> names;
    for (const auto& [name, field] : f.items())
      names.push_back(name);
    std::sort(names.begin(), names.end()); // items() order is the map's; fix it anyway
    std::shuffle(names.begin(), names.end(), rng);
    for (std::size_t i = 0; i < names.size(); ++i) {
      json& field = f[names[i]];
      field["lsb"] = i; // the order packFields keeps
      const isa::RoleSpec* r = c ? c->findRole(names[i]) : nullptr;
      if (r && (r->kind == isa::RoleKind::Count || r->kind == isa::RoleKind::Stride ||
                r->kind == isa::RoleKind::Addr))
        field["width"] = field["width"].get<unsigned>() + unsigned(pick(rng, 0, 2));
    }
  }
  packFields(d, high, 32);
  drawn.emplace_back("instr_bits", std::to_string(enc["instruction_bits"].get<unsigned>()));
  drawn.emplace_back("opcode", std::string(high ? "high" : "low") + "/" + std::to_string(opw));
}

} // namespace

json drawRandom(const json& base, std::uint64_t seed, const RandomRanges& ranges, Settings& drawn) {
  std::mt19937_64 rng(seed);
  json d = base;
  drawn.clear();
  const unsigned lo = log2Floor(std::uint64_t(std::max(1, ranges.minArray)));
  const unsigned hi = log2Floor(std::uint64_t(std::max(ranges.minArray, ranges.maxArray)));
  const std::int64_t L = std::int64_t(1) << pick(rng, lo, hi);
  setArray(d, L);
  drawn.emplace_back("array", std::to_string(L));
  json& mems = d["hardware"]["memories"];
  std::string banks;
  for (const char* m : {isa::mem::kAct, isa::mem::kWeight, isa::mem::kAcc, isa::mem::kParam}) {
    if (!mems.contains(m))
      continue;
    const std::uint64_t row = mems[m]["row_bytes"].get<std::uint64_t>();
    const std::uint64_t nb = std::uint64_t(1) << pick(rng, 0, std::string(m) == "param" ? 0 : 3);
    std::uint64_t smallest = row * nb;
    // The LUTs (16 tables of 256 bytes) live in the param SRAM: it holds them at least.
    if (std::string(m) == isa::mem::kParam)
      smallest = std::max<std::uint64_t>(smallest, 4096);
    const auto it = ranges.minBytes.find(m);
    if (it != ranges.minBytes.end())
      smallest = std::max(smallest, it->second);
    const unsigned a = log2Floor(smallest) + (smallest & (smallest - 1) ? 1 : 0);
    const unsigned b = std::max(a, log2Floor(ranges.maxBytes));
    const std::uint64_t size = std::uint64_t(1) << pick(rng, a, b);
    mems[m]["size_bytes"] = size;
    mems[m]["banks"] = nb;
    drawn.emplace_back(std::string(m) + "_kib", kib(size));
    banks += (banks.empty() ? "" : "/") + std::to_string(nb);
  }
  drawn.emplace_back("banks", banks);
  json& hw = d["hardware"];
  hw["dram"]["bytes_per_cycle"] = std::int64_t(1) << pick(rng, 3, 7);
  hw["dma"]["latency_cycles"] = pick(rng, 10, 400);
  hw["dma"]["burst_bytes"] = std::int64_t(1) << pick(rng, 5, 7);
  hw["dma"]["max_outstanding"] = std::int64_t(1) << pick(rng, 2, 7);
  const std::int64_t depth = std::int64_t(1) << pick(rng, 3, 6);
  for (const char* q : {"load_depth", "compute_depth", "store_depth"})
    hw["queues"][q] = depth;
  hw["mac_array"]["weight_buffers"] = pick(rng, 1, 2);
  drawn.emplace_back("dram_bpc", std::to_string(hw["dram"]["bytes_per_cycle"].get<int>()));
  drawn.emplace_back("dma_latency", std::to_string(hw["dma"]["latency_cycles"].get<int>()));
  drawn.emplace_back("burst", std::to_string(hw["dma"]["burst_bytes"].get<int>()));
  drawn.emplace_back("outstanding", std::to_string(hw["dma"]["max_outstanding"].get<int>()));
  drawn.emplace_back("queue_depth", std::to_string(depth));
  drawn.emplace_back("weight_buffers",
                     std::to_string(hw["mac_array"]["weight_buffers"].get<int>()));
  conformDescription(d);
  if (ranges.reencode) {
    reencode(d, rng, drawn);
    conformDescription(d);
  }
  if (!ranges.reencode)
    drawn.emplace_back("instr_bits",
                       std::to_string(d["encoding"]["instruction_bits"].get<unsigned>()));
  d["name"] = base.value("name", std::string("npu")) + "-random-" + std::to_string(seed);
  return d;
}

json drawValid(const json& base, std::uint64_t seed, const RandomRanges& ranges, Settings& drawn,
               unsigned& redraws) {
  std::string last;
  for (redraws = 0; redraws < kMaxRedraws; ++redraws) {
    json d = drawRandom(base, mixSeed(seed, redraws), ranges, drawn);
    try {
      (void)isa::IsaDescription::loadString(d.dump(), d.value("name", std::string("random")));
      return d;
    } catch (const Error& e) {
      last = e.what();
    }
  }
  throw Error("random description (seed " + std::to_string(seed) + ")",
              "no valid description in " + std::to_string(kMaxRedraws) +
                  " draws; the last was refused: " + last);
}

namespace {

/// "512 B", "4 KiB", "2 MiB" (sizes are powers of two).
std::string bytesText(std::uint64_t b) {
  if (b >= (std::uint64_t(1) << 20) && b % (std::uint64_t(1) << 20) == 0)
    return std::to_string(b >> 20) + " MiB";
  if (b >= 1024 && b % 1024 == 0)
    return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

/// `d` with SRAM `sizes` (name -> bytes), made consistent.
json withSizes(const json& d, const std::vector<std::pair<std::string, std::uint64_t>>& sizes) {
  json g = d;
  for (const auto& [name, bytes] : sizes)
    g["hardware"]["memories"][name]["size_bytes"] = bytes;
  conformDescription(g);
  return g;
}

} // namespace

std::vector<GrownSram> grownSramSizes(const json& d,
                                      const std::function<bool(const json&)>& compiles) {
  std::vector<std::pair<std::string, std::uint64_t>> had;
  for (const auto& [name, m] : d.at("hardware").at("memories").items())
    if (m.contains("size_bytes") && m["size_bytes"].is_number_integer())
      had.emplace_back(name, m["size_bytes"].get<std::uint64_t>());
  // Double every SRAM below the largest size until the model compiles; stop when none
  // can grow any more.
  std::vector<std::pair<std::string, std::uint64_t>> sizes = had;
  do {
    const auto last = sizes;
    for (auto& [name, bytes] : sizes)
      if (bytes < kMaxGrownBytes)
        bytes = std::min(kMaxGrownBytes, bytes * 2);
    if (sizes == last)
      return {};
  } while (!compiles(withSizes(d, sizes)));
  for (std::size_t i = 0; i < sizes.size(); ++i)
    while (sizes[i].second / 2 >= had[i].second) {
      auto fewer = sizes;
      fewer[i].second /= 2;
      if (!compiles(withSizes(d, fewer)))
        break;
      sizes = std::move(fewer);
    }
  std::vector<GrownSram> out;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i].second != had[i].second)
      out.push_back({sizes[i].first, sizes[i].second, had[i].second});
  return out;
}

std::string formatGrown(const std::vector<GrownSram>& g) {
  std::string s;
  for (const GrownSram& m : g)
    s += (s.empty() ? "" : ", ") + m.name + " " + bytesText(m.bytes) + " (has " + bytesText(m.had) +
         ")";
  return s;
}

} // namespace ember::dse
