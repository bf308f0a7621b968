// Loading an ISA description: JSON -> schema check -> typed structs -> semantic checks.
#include "ember/isa/description.h"

#include "ember/isa/error.h"
#include "ember/support/AtomicFile.h"
#include "schema_check.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#ifndef EMBER_DEFAULT_ISA
#define EMBER_DEFAULT_ISA "isa/ember-v1.json"
#endif

namespace ember::isa {

using detail::pointerKey;
using nlohmann::json;

struct IsaDescription::Data {
  std::string file, name, version, description;
  HardwareDesc hw;
  EnergyTable energy;
  EncodingDesc enc;
  std::vector<MemoryDesc> memories;
  std::vector<InstrDesc> instrs;
  std::vector<RegisterDesc> regs;
  Sha256Digest hash{};
  nlohmann::json doc;
};

// ---------------------------------------------------------------- FieldDesc / InstrDesc

std::int64_t FieldDesc::minValue() const {
  if (!is_signed)
    return 0;
  return bits.width >= 64 ? INT64_MIN : -(std::int64_t(1) << (bits.width - 1));
}

std::int64_t FieldDesc::maxValue() const {
  if (is_signed)
    return bits.width >= 64 ? INT64_MAX : (std::int64_t(1) << (bits.width - 1)) - 1;
  return bits.width >= 63 ? INT64_MAX : (std::int64_t(1) << bits.width) - 1;
}

const std::string* FieldDesc::nameOf(std::int64_t value) const {
  for (const auto& [n, v] : names)
    if (v == value)
      return &n;
  return nullptr;
}

int InstrDesc::fieldIndex(std::string_view role) const {
  // The simulator asks this for every operand of every instruction it runs (4-5 % of its
  // time on ResNet-50 went to the library's memcmp): roles are a few characters long, so
  // lengths are compared first and the characters inline.
  const std::size_t n = role.size();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::string& r = fields[i].role;
    if (r.size() != n)
      continue;
    std::size_t k = 0;
    while (k < n && r[k] == role[k])
      ++k;
    if (k == n)
      return int(i);
  }
  return -1;
}

const FieldDesc* InstrDesc::field(std::string_view role) const {
  int i = fieldIndex(role);
  return i < 0 ? nullptr : &fields[std::size_t(i)];
}

double InstrDesc::timingOf(const std::string& key) const {
  auto it = timing.find(key);
  return it == timing.end() ? 0.0 : it->second;
}

double InstrDesc::energyOf(const std::string& key) const {
  auto it = energy.find(key);
  return it == energy.end() ? 0.0 : it->second;
}

namespace {

bool isPow2(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

/// Bits needed to represent values 0..max_value.
unsigned bitsFor(std::uint64_t max_value) {
  unsigned b = 0;
  while (b < 64 && (max_value >> b) != 0)
    ++b;
  return b == 0 ? 1 : b;
}

bool isUpper(char c) {
  return c >= 'A' && c <= 'Z';
}
bool isLower(char c) {
  return c >= 'a' && c <= 'z';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

/// Upper: [A-Z][A-Z0-9_]*; otherwise [A-Za-z][A-Za-z0-9_.-]*.
bool validIdent(const std::string& s, bool upper) {
  if (s.empty())
    return false;
  if (!(isUpper(s[0]) || (!upper && isLower(s[0]))))
    return false;
  for (char c : s) {
    bool ok = upper ? (isUpper(c) || isDigit(c) || c == '_')
                    : (isUpper(c) || isLower(c) || isDigit(c) || c == '_' || c == '.' || c == '-');
    if (!ok)
      return false;
  }
  return true;
}

/// The upper-case identifier generated headers use for a mnemonic.
std::string cIdent(const std::string& s) {
  std::string o;
  for (char c : s)
    o += isLower(c) ? char(c - 'a' + 'A') : (isUpper(c) || isDigit(c) ? c : '_');
  return o;
}

/// Loader state: the document, the checker and the description being built.
class Loader {
public:
  Loader(const json& doc, std::string file, IsaDescription::Data& d)
      : doc_(doc), ck_(file), d_(d) {}

  void run() {
    d_.name = doc_["name"].get<std::string>();
    d_.version = doc_["version"].get<std::string>();
    d_.description = doc_["description"].get<std::string>();
    if (!validIdent(d_.name, false))
      ck_.fail("/name", "name must start with a letter and use letters, digits, '.', '_', '-'");
    loadHardware();
    loadMemories();
    checkHardware();
    loadEncoding();
    loadEnergy();
    const json& list = doc_["instructions"];
    for (std::size_t i = 0; i < list.size(); ++i)
      loadInstruction(list[i], i);
    checkOpcodes();
    loadRegisters();
  }

private:
  std::uint64_t capped(const json& v, const std::string& path, std::uint64_t max) {
    auto x = v.get<std::uint64_t>();
    if (x > max)
      ck_.fail(path, std::to_string(x) + " exceeds the supported maximum " + std::to_string(max));
    return x;
  }

  void pow2(std::uint64_t v, const std::string& path, const char* why) {
    if (!isPow2(v))
      ck_.fail(path, std::to_string(v) + " is not a power of two (" + std::string(why) + ")");
  }

  void loadHardware() {
    const json& h = doc_["hardware"];
    HardwareDesc& hw = d_.hw;
    hw.clock_hz = h["clock_hz"].get<std::uint64_t>();
    const json& m = h["mac_array"];
    hw.mac.rows = unsigned(capped(m["rows"], "/hardware/mac_array/rows", 4096));
    hw.mac.cols = unsigned(capped(m["cols"], "/hardware/mac_array/cols", 4096));
    pow2(hw.mac.rows, "/hardware/mac_array/rows", "array dimensions index lanes by bit slicing");
    pow2(hw.mac.cols, "/hardware/mac_array/cols", "array dimensions index lanes by bit slicing");
    hw.mac.dataflow = m["dataflow"].get<std::string>();
    hw.mac.input_bits = m["input_bits"].get<unsigned>();
    hw.mac.acc_bits = m["acc_bits"].get<unsigned>();
    hw.mac.weight_buffers = m["weight_buffers"].get<unsigned>();
    hw.mac.weight_load_cycles = m["weight_load_cycles"].get<std::uint64_t>();
    hw.mac.fill_cycles = m["fill_cycles"].get<std::uint64_t>();
    hw.mac.drain_cycles = m["drain_cycles"].get<std::uint64_t>();
    hw.vector.lanes = unsigned(capped(h["vector"]["lanes"], "/hardware/vector/lanes", 4096));
    hw.vector.lane_bits = h["vector"]["lane_bits"].get<unsigned>();
    hw.dram.size_bytes = h["dram"]["size_bytes"].get<std::uint64_t>();
    pow2(hw.dram.size_bytes, "/hardware/dram/size_bytes", "the DRAM window is address-decoded");
    hw.dram.bytes_per_cycle = h["dram"]["bytes_per_cycle"].get<std::uint64_t>();
    const json& dma = h["dma"];
    hw.dma.latency_cycles = dma["latency_cycles"].get<std::uint64_t>();
    hw.dma.burst_bytes = dma["burst_bytes"].get<std::uint64_t>();
    pow2(hw.dma.burst_bytes, "/hardware/dma/burst_bytes", "bursts are address-aligned");
    hw.dma.max_outstanding = dma["max_outstanding"].get<std::uint64_t>();
    if (!isPow2(hw.dma.max_outstanding))
      ck_.fail("/hardware/dma/max_outstanding",
               std::to_string(hw.dma.max_outstanding) +
                   " is not a power of two (the DMA paces its requests by dividing by "
                   "max_outstanding * burst_bytes, a shift in hardware)");
    if (hw.mac.weight_buffers > 2)
      ck_.fail("/hardware/mac_array/weight_buffers",
               std::to_string(hw.mac.weight_buffers) +
                   " weight buffers: the array holds one or two weight blocks (a third "
                   "would not change the timing model)");
    hw.fetch.latency_cycles = h["fetch"]["latency_cycles"].get<std::uint64_t>();
    hw.control.register_access_cycles = h["control"]["register_access_cycles"].get<std::uint64_t>();
    hw.control.tick_cycles = h["control"]["tick_cycles"].get<std::uint64_t>();
    hw.control.job_cycles = h["control"].value("job_cycles", std::uint64_t(0));
    hw.control.check_cycles_per_instruction =
        h["control"].value("check_cycles_per_instruction", std::uint64_t(0));
    hw.host_link.bytes_per_cycle = h["host_link"]["bytes_per_cycle"].get<std::uint64_t>();
    hw.host_link.latency_cycles = h["host_link"]["latency_cycles"].get<std::uint64_t>();
    const json& q = h["queues"];
    const char* qs[] = {"load_depth", "compute_depth", "store_depth", "token_fifo_depth"};
    std::uint64_t* dst[] = {&hw.queues.load_depth, &hw.queues.compute_depth, &hw.queues.store_depth,
                            &hw.queues.token_fifo_depth};
    for (int i = 0; i < 4; ++i) {
      *dst[i] = q[qs[i]].get<std::uint64_t>();
      pow2(*dst[i], std::string("/hardware/queues/") + qs[i], "queues are ring buffers");
    }
  }

  void loadMemories() {
    const json& mems = doc_["hardware"]["memories"];
    std::set<unsigned> ids;
    for (auto it = mems.begin(); it != mems.end(); ++it) {
      const json& m = it.value();
      std::string p = "/hardware/memories/" + pointerKey(it.key());
      MemoryDesc md;
      md.name = it.key();
      md.id = m["id"].get<unsigned>();
      if (!ids.insert(md.id).second)
        ck_.fail(p + "/id", "memory id " + std::to_string(md.id) + " is used twice");
      md.size_bytes = m["size_bytes"].get<std::uint64_t>();
      md.row_bytes = m["row_bytes"].get<std::uint64_t>();
      md.elem_bits = m["elem_bits"].get<unsigned>();
      md.banks = unsigned(capped(m["banks"], p + "/banks", 1024));
      md.read_ports = unsigned(capped(m["read_ports"], p + "/read_ports", 16));
      md.write_ports = unsigned(capped(m["write_ports"], p + "/write_ports", 16));
      md.doc = m.value("doc", "");
      pow2(md.size_bytes, p + "/size_bytes", "SRAM macros are address-decoded");
      pow2(md.row_bytes, p + "/row_bytes", "rows are addressed by shifting");
      pow2(md.banks, p + "/banks", "the bank is the low bits of the row address");
      if (md.row_bytes > md.size_bytes)
        ck_.fail(p + "/row_bytes", "row of " + std::to_string(md.row_bytes) +
                                       " bytes is larger than the memory (" +
                                       std::to_string(md.size_bytes) + " bytes)");
      if (md.banks > md.rows())
        ck_.fail(p + "/banks", "more banks (" + std::to_string(md.banks) + ") than rows (" +
                                   std::to_string(md.rows()) + ")");
      d_.memories.push_back(md);
    }
    std::sort(d_.memories.begin(), d_.memories.end(),
              [](const MemoryDesc& a, const MemoryDesc& b) { return a.id < b.id; });
  }

  MemoryDesc& mem(const std::string& name) {
    for (auto& m : d_.memories)
      if (m.name == name)
        return m;
    ck_.fail("/hardware/memories", "missing memory " + name);
  }

  void expectRow(const std::string& name, std::uint64_t want, const std::string& why) {
    MemoryDesc& m = mem(name);
    if (m.row_bytes != want)
      ck_.fail("/hardware/memories/" + name + "/row_bytes", std::to_string(m.row_bytes) +
                                                                " bytes, but " + why + " needs " +
                                                                std::to_string(want));
  }

  void checkHardware() {
    const HardwareDesc& hw = d_.hw;
    if (hw.vector.lanes != hw.mac.rows || hw.vector.lanes != hw.mac.cols)
      ck_.fail("/hardware/vector/lanes",
               std::to_string(hw.vector.lanes) + " lanes, but the vector unit must match the " +
                   std::to_string(hw.mac.rows) + "x" + std::to_string(hw.mac.cols) +
                   " MAC array (square, lanes = rows = cols)");
    std::uint64_t r = hw.mac.rows, c = hw.mac.cols;
    expectRow("act", r * hw.mac.input_bits / 8, "one int8 lane per array row");
    expectRow("weight", r * c * hw.mac.input_bits / 8, "one rows x cols int8 block per row");
    expectRow("acc", c * hw.mac.acc_bits / 8, "one int32 lane per array column");
    expectRow("param", hw.vector.lanes * 4, "one int32 per vector lane");
    const char* elem_want[][2] = {{"act", "8"}, {"weight", "8"}, {"acc", "32"}, {"param", "32"}};
    for (auto& e : elem_want)
      if (std::to_string(mem(e[0]).elem_bits) != e[1])
        ck_.fail(std::string("/hardware/memories/") + e[0] + "/elem_bits",
                 std::string("must be ") + e[1] + " for the " + e[0] + " memory");
  }

  void loadEncoding() {
    const json& e = doc_["encoding"];
    d_.enc.instruction_bits = e["instruction_bits"].get<unsigned>();
    if (d_.enc.instruction_bits % 32 != 0)
      ck_.fail("/encoding/instruction_bits",
               std::to_string(d_.enc.instruction_bits) +
                   " is not a multiple of 32 (instructions are fetched in 32-bit words)");
    d_.enc.opcode.lsb = e["opcode"]["lsb"].get<unsigned>();
    d_.enc.opcode.width = e["opcode"]["width"].get<unsigned>();
    if (d_.enc.opcode.lsb + d_.enc.opcode.width > d_.enc.instruction_bits)
      ck_.fail("/encoding/opcode",
               "bits [" + std::to_string(d_.enc.opcode.lsb) + ", " +
                   std::to_string(d_.enc.opcode.lsb + d_.enc.opcode.width) + ") lie outside the " +
                   std::to_string(d_.enc.instruction_bits) + "-bit instruction");
    if (d_.enc.opcode.width > 16)
      ck_.fail("/encoding/opcode/width", "opcode wider than 16 bits is not supported");
  }

  void loadEnergy() {
    const json& e = doc_["energy"];
    d_.energy.mac_int8 = e["mac_int8"].get<double>();
    d_.energy.dram_read_per_byte = e["dram_read_per_byte"].get<double>();
    d_.energy.dram_write_per_byte = e["dram_write_per_byte"].get<double>();
    d_.energy.leakage_per_cycle = e["leakage_per_cycle"].get<double>();
    const json& s = e["sram"];
    for (auto it = s.begin(); it != s.end(); ++it)
      if (!findMem(it.key()))
        ck_.fail("/energy/sram/" + pointerKey(it.key()),
                 "energy entry for unknown memory \"" + it.key() + "\"");
    for (auto& m : d_.memories) {
      if (!s.contains(m.name))
        ck_.fail("/energy/sram", "missing energy entry for memory \"" + m.name + "\"");
      m.read_pj_per_byte = s[m.name]["read_per_byte"].get<double>();
      m.write_pj_per_byte = s[m.name]["write_per_byte"].get<double>();
    }
  }

  const MemoryDesc* findMem(const std::string& n) const {
    for (const auto& m : d_.memories)
      if (m.name == n)
        return &m;
    return nullptr;
  }

  void loadProperties(const json& j, InstrDesc& in, const std::string& p) {
    const ClassSpec& c = *in.cls;
    json props = j.value("properties", json::object());
    if (props.contains("op"))
      in.op = props["op"].get<std::string>();
    if (c.op_choices.empty() && !in.op.empty())
      ck_.fail(p + "/properties/op", "class " + c.name + " takes no op");
    if (!c.op_choices.empty()) {
      if (in.op.empty())
        ck_.fail(p + "/properties", "class " + c.name + " needs properties.op");
      if (std::find(c.op_choices.begin(), c.op_choices.end(), in.op) == c.op_choices.end()) {
        std::string ch;
        for (const auto& o : c.op_choices)
          ch += (ch.empty() ? "" : ", ") + o;
        ck_.fail(p + "/properties/op",
                 "op \"" + in.op + "\" is not one of class " + c.name + "'s ops: " + ch);
      }
    }
    if (props.contains("memories")) {
      if (!c.needs_memories)
        ck_.fail(p + "/properties/memories", "class " + c.name + " takes no memories");
      for (const auto& m : props["memories"]) {
        std::string n = m.get<std::string>();
        if (std::find(in.memories.begin(), in.memories.end(), n) != in.memories.end())
          ck_.fail(p + "/properties/memories", "memory \"" + n + "\" listed twice");
        in.memories.push_back(n);
      }
    } else if (c.needs_memories) {
      ck_.fail(p + "/properties", "class " + c.name + " needs properties.memories");
    }
    if (props.contains("table_offset")) {
      if (!c.allows_table_offset)
        ck_.fail(p + "/properties/table_offset", "class " + c.name + " takes no table_offset");
      in.table_offset = props["table_offset"].get<std::int64_t>();
    }
    if (props.contains("background")) {
      if (!c.on_array)
        ck_.fail(p + "/properties/background", "class " + c.name + " takes no background");
      in.background = props["background"].get<bool>();
    }
    if (props.contains("overwrite")) {
      if (!c.on_array)
        ck_.fail(p + "/properties/overwrite", "class " + c.name + " takes no overwrite");
      in.overwrite = props["overwrite"].get<bool>();
    }
    if (props.contains("bias")) {
      if (c.id != SemanticClass::Requantize)
        ck_.fail(p + "/properties/bias", "class " + c.name + " takes no bias");
      in.bias = props["bias"].get<bool>();
    }
  }

  void loadTimingEnergy(const json& j, InstrDesc& in, const std::string& p, const char* key,
                        const std::vector<std::string>& need, std::map<std::string, double>& out) {
    const json& t = j[key];
    for (auto it = t.begin(); it != t.end(); ++it) {
      if (std::find(need.begin(), need.end(), it.key()) == need.end()) {
        std::string want;
        for (const auto& n : need)
          want += (want.empty() ? "" : ", ") + n;
        ck_.fail(p + "/" + key + "/" + pointerKey(it.key()),
                 "unknown " + std::string(key) + " entry \"" + it.key() + "\" for class " +
                     in.cls->name + " (expected: " + want + ")");
      }
      out[it.key()] = it.value().get<double>();
      // The hardware counts whole cycles, and every instruction holds its engine for at
      // least one (docs/simulator.md, rule E3): refuse timings the RTL cannot implement.
      const double v = out[it.key()];
      const std::string where = p + "/" + key + "/" + pointerKey(it.key());
      if (std::string(key) == "timing" && v != std::floor(v))
        ck_.fail(where, "timing " + it.value().dump() + " is not a whole number of cycles");
      if (std::string(key) == "timing" && it.key() == "issue" && v < 1)
        ck_.fail(where, "issue must be at least 1 cycle: an instruction occupies its engine "
                        "for at least one cycle");
    }
    for (const auto& n : need)
      if (!out.count(n))
        ck_.fail(p + "/" + key, "missing " + std::string(key) + " entry \"" + n + "\" (class " +
                                    in.cls->name + " needs it)");
  }

  void loadInstruction(const json& j, std::size_t index) {
    std::string p = "/instructions/" + std::to_string(index);
    InstrDesc in;
    in.json_path = p;
    in.name = j["name"].get<std::string>();
    if (!validIdent(in.name, false))
      ck_.fail(p + "/name",
               "mnemonic \"" + in.name +
                   "\" must start with a letter and use letters, digits, '.', '_', '-'");
    for (const auto& o : d_.instrs) {
      if (o.name == in.name)
        ck_.fail(p + "/name", "instruction \"" + in.name + "\" defined twice");
      if (cIdent(o.name) == cIdent(in.name))
        ck_.fail(p + "/name", "mnemonic \"" + in.name + "\" and \"" + o.name +
                                  "\" map to the same generated C/SV name " + cIdent(in.name));
    }
    std::string cls = j["class"].get<std::string>();
    in.cls = ClassRegistry::global().find(cls);
    if (!in.cls) {
      std::string known;
      for (const auto& n : ClassRegistry::global().names())
        known += (known.empty() ? "" : ", ") + n;
      ck_.fail(p + "/class", "unknown semantic class \"" + cls + "\" (known: " + known + ")");
    }
    in.opcode = j["opcode"].get<std::uint64_t>();
    if (in.opcode >> d_.enc.opcode.width)
      ck_.fail(p + "/opcode", "opcode " + std::to_string(in.opcode) + " does not fit the " +
                                  std::to_string(d_.enc.opcode.width) + "-bit opcode field");
    in.doc = j.value("doc", "");
    in.encoding = d_.enc;
    loadProperties(j, in, p);
    loadTimingEnergy(j, in, p, "timing", in.cls->timing_keys, in.timing);
    loadTimingEnergy(j, in, p, "energy", in.cls->energy_keys, in.energy);
    loadFields(j["fields"], in, p + "/fields");
    checkLayout(in, p + "/fields");
    d_.instrs.push_back(std::move(in));
  }

  void loadFields(const json& f, InstrDesc& in, const std::string& p) {
    const ClassSpec& c = *in.cls;
    for (auto it = f.begin(); it != f.end(); ++it)
      if (!c.findRole(it.key())) {
        std::string roles;
        for (const auto& r : c.roles)
          roles += (roles.empty() ? "" : ", ") + r.name;
        ck_.fail(p + "/" + pointerKey(it.key()), "unknown field role \"" + it.key() +
                                                     "\" for class " + c.name +
                                                     " (roles: " + roles + ")");
      }
    for (const RoleSpec& r : c.roles) {
      if (!f.contains(r.name))
        ck_.fail(p,
                 "missing field \"" + r.name + "\" (class " + c.name + " needs it: " + r.doc + ")");
      const json& fj = f[r.name];
      FieldDesc fd;
      fd.role = r.name;
      fd.kind = r.kind;
      fd.bits.lsb = fj["lsb"].get<unsigned>();
      fd.bits.width = fj["width"].get<unsigned>();
      fd.is_signed = r.kind == RoleKind::SignedImm;
      fd.doc = fj.value("doc", r.doc);
      checkRole(fj, r, fd, in, p + "/" + r.name);
      in.fields.push_back(std::move(fd));
    }
  }

  void checkWidthReaches(const FieldDesc& fd, std::uint64_t count, const std::string& what,
                         const std::string& p) {
    unsigned need = bitsFor(count - 1);
    if (fd.bits.width < need)
      ck_.fail(p + "/width", std::to_string(fd.bits.width) + " bits cannot address " + what + " (" +
                                 std::to_string(count) + " rows/bytes need " +
                                 std::to_string(need) + " bits)");
  }

  std::vector<std::string> selectable(const RoleSpec& r, const InstrDesc& in) const {
    return r.choices.empty() ? in.memories : r.choices;
  }

  void checkRole(const json& fj, const RoleSpec& r, FieldDesc& fd, const InstrDesc& in,
                 const std::string& p) {
    if (fj.contains("enum") && r.kind != RoleKind::Enum)
      ck_.fail(p + "/enum", "field \"" + r.name + "\" takes no enum (only enumeration roles do)");
    if (fd.bits.width < r.min_width)
      ck_.fail(p + "/width", std::to_string(fd.bits.width) + " bits, but role \"" + r.name +
                                 "\" needs at least " + std::to_string(r.min_width));
    switch (r.kind) {
    case RoleKind::Flag:
      if (fd.bits.width != 1)
        ck_.fail(p + "/width", "flag \"" + r.name + "\" must be 1 bit wide");
      break;
    case RoleKind::Addr:
      if (!r.memory.empty()) {
        checkWidthReaches(fd, mem(r.memory).rows(), "every row of memory " + r.memory, p);
      } else {
        const RoleSpec* sel = in.cls->findRole(r.select_role);
        for (const auto& m : selectable(*sel, in))
          checkWidthReaches(fd, mem(m).rows(), "every row of memory " + m, p);
      }
      break;
    case RoleKind::DramAddr:
      checkWidthReaches(fd, d_.hw.dram.size_bytes, "the whole DRAM window", p);
      break;
    case RoleKind::MemSelect:
      for (const auto& m : selectable(r, in)) {
        const MemoryDesc& md = mem(m);
        if (md.id > fd.maxValue())
          ck_.fail(p + "/width", std::to_string(fd.bits.width) + " bits cannot select memory " + m +
                                     " (id " + std::to_string(md.id) + ")");
        fd.names.emplace_back(m, md.id);
      }
      break;
    case RoleKind::Enum:
      loadEnum(fj, r, fd, p);
      break;
    default:
      break;
    }
  }

  void loadEnum(const json& fj, const RoleSpec& r, FieldDesc& fd, const std::string& p) {
    if (!fj.contains("enum"))
      ck_.fail(p, "field \"" + r.name + "\" needs an enum");
    const json& e = fj["enum"];
    std::set<std::int64_t> seen;
    for (auto it = e.begin(); it != e.end(); ++it) {
      if (std::find(r.choices.begin(), r.choices.end(), it.key()) == r.choices.end())
        ck_.fail(p + "/enum/" + pointerKey(it.key()),
                 "unknown name \"" + it.key() + "\" for field \"" + r.name + "\"");
      auto v = it.value().get<std::uint64_t>();
      if (v > std::uint64_t(fd.maxValue()))
        ck_.fail(p + "/enum/" + pointerKey(it.key()),
                 std::to_string(v) + " does not fit " + std::to_string(fd.bits.width) + " bits");
      if (!seen.insert(std::int64_t(v)).second)
        ck_.fail(p + "/enum/" + pointerKey(it.key()), "value " + std::to_string(v) + " used twice");
      fd.names.emplace_back(it.key(), std::int64_t(v));
    }
    for (const auto& c : r.choices)
      if (!e.contains(c))
        ck_.fail(p + "/enum", "missing name \"" + c + "\"");
  }

  void checkLayout(const InstrDesc& in, const std::string& p) {
    unsigned bits = d_.enc.instruction_bits;
    struct Span {
      std::string name;
      unsigned lo, hi;
    };
    std::vector<Span> spans{{"opcode", d_.enc.opcode.lsb, d_.enc.opcode.lsb + d_.enc.opcode.width}};
    for (const auto& f : in.fields) {
      unsigned hi = f.bits.lsb + f.bits.width;
      if (hi > bits)
        ck_.fail(p + "/" + f.role, "bits [" + std::to_string(f.bits.lsb) + ", " +
                                       std::to_string(hi) + ") lie outside the " +
                                       std::to_string(bits) + "-bit instruction");
      for (const auto& s : spans)
        if (f.bits.lsb < s.hi && s.lo < hi)
          ck_.fail(p + "/" + f.role, "bits [" + std::to_string(f.bits.lsb) + ", " +
                                         std::to_string(hi) + ") overlap field \"" + s.name +
                                         "\" [" + std::to_string(s.lo) + ", " +
                                         std::to_string(s.hi) + ")");
      spans.push_back({f.role, f.bits.lsb, hi});
    }
  }

  void checkOpcodes() {
    for (std::size_t i = 0; i < d_.instrs.size(); ++i)
      for (std::size_t k = 0; k < i; ++k)
        if (d_.instrs[i].opcode == d_.instrs[k].opcode)
          ck_.fail(d_.instrs[i].json_path + "/opcode",
                   "opcode " + std::to_string(d_.instrs[i].opcode) + " of \"" + d_.instrs[i].name +
                       "\" clashes with \"" + d_.instrs[k].name + "\"");
  }

  void loadRegisters() {
    const json& list = doc_["registers"]["list"];
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& r = list[i];
      std::string p = "/registers/list/" + std::to_string(i);
      RegisterDesc rd;
      rd.name = r["name"].get<std::string>();
      rd.offset = r["offset"].get<std::uint32_t>();
      rd.access = r["access"].get<std::string>();
      rd.reset = r.value("reset", std::uint32_t(0));
      rd.doc = r.value("doc", "");
      if (!validIdent(rd.name, true))
        ck_.fail(p + "/name",
                 "register name \"" + rd.name + "\" must be an upper-case C identifier");
      if (rd.offset % 4 != 0)
        ck_.fail(p + "/offset", "offset " + std::to_string(rd.offset) + " is not 4-byte aligned");
      for (const auto& o : d_.regs) {
        if (o.name == rd.name)
          ck_.fail(p + "/name", "register \"" + rd.name + "\" defined twice");
        if (o.offset == rd.offset)
          ck_.fail(p + "/offset", "offset " + std::to_string(rd.offset) + " of " + rd.name +
                                      " overlaps register " + o.name);
      }
      loadRegisterFields(r, rd, p);
      d_.regs.push_back(std::move(rd));
    }
  }

  void loadRegisterFields(const json& r, RegisterDesc& rd, const std::string& p) {
    if (!r.contains("fields"))
      return;
    const json& f = r["fields"];
    for (auto it = f.begin(); it != f.end(); ++it) {
      std::string fp = p + "/fields/" + pointerKey(it.key());
      RegisterDesc::Field fd;
      fd.name = it.key();
      fd.bits.lsb = it.value()["lsb"].get<unsigned>();
      fd.bits.width = it.value()["width"].get<unsigned>();
      fd.doc = it.value().value("doc", "");
      if (!validIdent(fd.name, true))
        ck_.fail(fp, "field name \"" + fd.name + "\" must be an upper-case C identifier");
      if (fd.bits.lsb + fd.bits.width > 32)
        ck_.fail(fp, "bits [" + std::to_string(fd.bits.lsb) + ", " +
                         std::to_string(fd.bits.lsb + fd.bits.width) +
                         ") lie outside the 32-bit register");
      for (const auto& o : rd.fields)
        if (fd.bits.lsb < o.bits.lsb + o.bits.width && o.bits.lsb < fd.bits.lsb + fd.bits.width)
          ck_.fail(fp, "bits overlap field " + o.name);
      rd.fields.push_back(std::move(fd));
    }
    std::sort(rd.fields.begin(), rd.fields.end(),
              [](const auto& a, const auto& b) { return a.bits.lsb < b.bits.lsb; });
  }

  const json& doc_;
  Checker ck_;
  IsaDescription::Data& d_;
};

} // namespace

// ---------------------------------------------------------------- IsaDescription

IsaDescription IsaDescription::loadString(std::string_view text, const std::string& label) {
  auto data = std::make_shared<Data>();
  data->file = label;
  try {
    data->doc = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw jsonError(label, "not valid JSON", e);
  }
  try {
    detail::validateSchema(data->doc, detail::embeddedSchema(), label);
    Loader(data->doc, label, *data).run();
    nlohmann::json canon = data->doc;
    canon.erase("$schema");
    data->hash = sha256(canon.dump());
  } catch (const nlohmann::json::exception& e) {
    throw jsonError(label, "malformed description", e);
  }
  IsaDescription d;
  d.d_ = std::move(data);
  Checker ck(label);
  for (const auto& in : d.instructions())
    if (in.cls->extra_check)
      in.cls->extra_check(d, in, ck);
  return d;
}

IsaDescription IsaDescription::loadFile(const std::string& path) {
  std::string text;
  try {
    text = ember::readRegularFile(path, kMaxDescriptionBytes);
  } catch (const ember::Error& e) {
    throw Error(path, "", "cannot read the description: " + e.reason());
  }
  return loadString(text, path);
}

namespace {
/// An installed tree's description: share/ember/isa/<name> in a folder at most four
/// levels above the file holding this code (bin/, lib/, lib/python3/dist-packages/ember/
/// of the prefix). "" when there is none (a build tree).
std::string installedDescription() {
  namespace fs = std::filesystem;
  const std::string name = fs::path(EMBER_DEFAULT_ISA).filename().string();
  // Where this code lies: the shared object (libember.so, the Python extension) or, for
  // a program linked statically with it, the program.
  std::vector<fs::path> starts;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&installedDescription), &info) && info.dli_fname &&
      fs::path(info.dli_fname).is_absolute())
    starts.push_back(info.dli_fname);
  starts.push_back("/proc/self/exe");
  for (const fs::path& start : starts) {
    std::error_code ec;
    fs::path dir = fs::canonical(start, ec).parent_path();
    if (ec)
      continue;
    for (int up = 0; up < 5 && !dir.empty(); ++up, dir = dir.parent_path()) {
      const fs::path candidate = dir / "share" / "ember" / "isa" / name;
      std::error_code missing; // set when the file is absent: not an error here
      if (fs::is_regular_file(candidate, missing))
        return candidate.string();
      if (dir == dir.parent_path())
        break;
    }
  }
  return "";
}
} // namespace

std::string IsaDescription::defaultPath() {
  if (const char* env = std::getenv("EMBER_ISA"); env && *env)
    return env;
  if (std::string installed = installedDescription(); !installed.empty())
    return installed;
  return EMBER_DEFAULT_ISA;
}

IsaDescription IsaDescription::loadDefault(const std::string& explicit_path) {
  return loadFile(resolvedPath(explicit_path));
}

std::string IsaDescription::resolvedPath(const std::string& explicit_path) {
  return explicit_path.empty() ? defaultPath() : explicit_path;
}

const std::string& IsaDescription::name() const {
  return d_->name;
}
const std::string& IsaDescription::version() const {
  return d_->version;
}
const std::string& IsaDescription::descriptionText() const {
  return d_->description;
}
const std::string& IsaDescription::file() const {
  return d_->file;
}
const HardwareDesc& IsaDescription::hw() const {
  return d_->hw;
}
const EnergyTable& IsaDescription::energy() const {
  return d_->energy;
}
const EncodingDesc& IsaDescription::encoding() const {
  return d_->enc;
}
const std::vector<MemoryDesc>& IsaDescription::memories() const {
  return d_->memories;
}
const std::vector<InstrDesc>& IsaDescription::instructions() const {
  return d_->instrs;
}
const std::vector<RegisterDesc>& IsaDescription::registers() const {
  return d_->regs;
}
const Sha256Digest& IsaDescription::hash() const {
  return d_->hash;
}
std::string IsaDescription::hashHex() const {
  return toHex(d_->hash);
}
const nlohmann::json& IsaDescription::json() const {
  return d_->doc;
}

const MemoryDesc* IsaDescription::findMemory(std::string_view name) const {
  for (const auto& m : d_->memories)
    if (m.name == name)
      return &m;
  return nullptr;
}

const MemoryDesc& IsaDescription::memory(std::string_view name) const {
  if (const MemoryDesc* m = findMemory(name))
    return *m;
  throw Error(d_->file, "/hardware/memories", "no memory named " + std::string(name));
}

const MemoryDesc* IsaDescription::memoryById(std::int64_t id) const {
  for (const auto& m : d_->memories)
    if (std::int64_t(m.id) == id)
      return &m;
  return nullptr;
}

const InstrDesc* IsaDescription::findInstruction(std::string_view name) const {
  for (const auto& i : d_->instrs)
    if (i.name == name)
      return &i;
  return nullptr;
}

const InstrDesc* IsaDescription::findOpcode(std::uint64_t opcode) const {
  for (const auto& i : d_->instrs)
    if (i.opcode == opcode)
      return &i;
  return nullptr;
}

std::uint64_t IsaDescription::peakMacsPerCycle() const {
  return std::uint64_t(d_->hw.mac.rows) * d_->hw.mac.cols;
}

double IsaDescription::dramBytesPerCycle() const {
  return double(d_->hw.dram.bytes_per_cycle);
}

double IsaDescription::ridgePoint() const {
  return double(peakMacsPerCycle()) / dramBytesPerCycle();
}

} // namespace ember::isa
