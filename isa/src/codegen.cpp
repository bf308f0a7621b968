// Generators: C header, SystemVerilog package, Markdown tables, summary.
#include "ember/isa/codegen.h"
#include "ember/isa/binary.h"
#include "ember/isa/registers.h"
#include "ember/isa/roles.h"
#include "ember/isa/semantic.h"
#include "ember/isa/timing.h"

#include "codegen_sv.h"

#include "ember/isa/error.h"

#include <cstdio>
#include <map>
#include <sstream>

namespace ember::isa {

const char* const kMdBeginMarker =
    "<!-- BEGIN GENERATED TABLES: `ember-isa gen --md-tables`; do not edit by hand -->";
const char* const kMdEndMarker = "<!-- END GENERATED TABLES -->";

namespace {

/// Upper-case C identifier part: letters/digits kept, anything else becomes '_'.
std::string ident(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c >= 'a' && c <= 'z')
      o += char(c - 'a' + 'A');
    else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
      o += c;
    else
      o += '_';
  }
  return o;
}

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::string hex32(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%08llx", static_cast<unsigned long long>(v));
  return b;
}

std::string human(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = double(bytes);
  while (v >= 1024 && u < 4 && std::uint64_t(v) % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return num(v) + " " + units[u];
}

/// (NAME, value) pairs shared by the C header and the SV package.
std::vector<std::pair<std::string, std::uint64_t>> params(const IsaDescription& isa) {
  const HardwareDesc& h = isa.hw();
  std::vector<std::pair<std::string, std::uint64_t>> p = {
      {"CLOCK_HZ", h.clock_hz},
      {"MAC_ROWS", h.mac.rows},
      {"MAC_COLS", h.mac.cols},
      {"MAC_WEIGHT_BUFFERS", h.mac.weight_buffers},
      {"MAC_WEIGHT_LOAD_CYCLES", h.mac.weight_load_cycles},
      {"MAC_FILL_CYCLES", h.mac.fill_cycles},
      {"MAC_DRAIN_CYCLES", h.mac.drain_cycles},
      {"VECTOR_LANES", h.vector.lanes},
      {"DRAM_SIZE_BYTES", h.dram.size_bytes},
      {"DRAM_BYTES_PER_CYCLE", h.dram.bytes_per_cycle},
      {"DMA_LATENCY_CYCLES", h.dma.latency_cycles},
      {"DMA_BURST_BYTES", h.dma.burst_bytes},
      {"DMA_MAX_OUTSTANDING", h.dma.max_outstanding},
      {"QUEUE_LOAD_DEPTH", h.queues.load_depth},
      {"QUEUE_COMPUTE_DEPTH", h.queues.compute_depth},
      {"QUEUE_STORE_DEPTH", h.queues.store_depth},
      {"TOKEN_FIFO_DEPTH", h.queues.token_fifo_depth},
      {"FETCH_LATENCY_CYCLES", h.fetch.latency_cycles},
      {"CONTROL_REGISTER_ACCESS_CYCLES", h.control.register_access_cycles},
      {"CONTROL_TICK_CYCLES", h.control.tick_cycles},
      {"CONTROL_JOB_CYCLES", h.control.job_cycles},
      {"CONTROL_CHECK_CYCLES_PER_INSN", h.control.check_cycles_per_instruction},
      {"INSN_BITS", isa.encoding().instruction_bits},
      {"INSN_BYTES", isa.encoding().bytes()},
      {"OPCODE_LSB", isa.encoding().opcode.lsb},
      {"OPCODE_WIDTH", isa.encoding().opcode.width},
      {"ISA_HASH_LO", isaHashWord(isa, 0)},
      {"ISA_HASH_HI", isaHashWord(isa, 1)},
  };
  for (const auto& m : isa.memories()) {
    std::string n = "MEM_" + ident(m.name) + "_";
    p.push_back({n + "ID", m.id});
    p.push_back({n + "SIZE_BYTES", m.size_bytes});
    p.push_back({n + "ROW_BYTES", m.row_bytes});
    p.push_back({n + "ROWS", m.rows()});
    p.push_back({n + "BANKS", m.banks});
    p.push_back({n + "READ_PORTS", m.read_ports});
    p.push_back({n + "WRITE_PORTS", m.write_ports});
    p.push_back({n + "DMA_ROWS", timing::dmaRowsPerCycle(isa, m)}); // rule D1's r
  }
  for (const auto& in : isa.instructions()) {
    std::string n = ident(in.name);
    p.push_back({"OP_" + n, in.opcode});
    for (const auto& f : in.fields) {
      p.push_back({"F_" + n + "_" + ident(f.role) + "_LSB", f.bits.lsb});
      p.push_back({"F_" + n + "_" + ident(f.role) + "_WIDTH", f.bits.width});
    }
  }
  for (const auto& r : isa.registers()) {
    p.push_back({"REG_" + r.name, r.offset});
    for (const auto& f : r.fields) {
      p.push_back({"REG_" + r.name + "_" + f.name + "_SHIFT", f.bits.lsb});
      std::uint64_t mask =
          ((f.bits.width >= 32 ? 0xffffffffull : ((1ull << f.bits.width) - 1)) << f.bits.lsb) &
          0xffffffffull;
      p.push_back({"REG_" + r.name + "_" + f.name + "_MASK", mask});
    }
  }
  return p;
}

/// DRAM bytes/cycle the DMA can sustain: bandwidth, or by Little's law the bytes in
/// flight (outstanding requests x burst) over the latency, whichever is smaller.
double sustainedDma(const IsaDescription& isa) {
  const HardwareDesc& h = isa.hw();
  double bw = double(h.dram.bytes_per_cycle);
  if (h.dma.latency_cycles == 0)
    return bw;
  double flight = double(h.dma.max_outstanding * h.dma.burst_bytes) / double(h.dma.latency_cycles);
  return flight < bw ? flight : bw;
}

} // namespace

namespace {

/// Class-level tables for the firmware's static checks, so that its code never names a
/// mnemonic (a vendor renames and re-encodes instructions freely): the container format,
/// the memories, and every DMA instruction's opcode and field positions.
std::string firmwareTables(const IsaDescription& isa) {
  std::ostringstream o;
  o << "\n/* Container format of the binaries (docs/isa/assembly-binary.md section 6). */\n"
    << "#define EMBER_BINARY_FORMAT_VERSION " << elf::kFormatVersion << "u\n"
    << "#define EMBER_ELF_MACHINE 0x" << std::hex << elf::kMachine << std::dec << "u\n"
    << "\n/* X(ID, ROW_BYTES, ROWS) per SRAM. */\n#define EMBER_MEMORIES(X)";
  for (const auto& m : isa.memories())
    o << " \\\n  X(" << m.id << "u, " << m.row_bytes << "u, " << m.rows() << "u)";
  o << "\n\n/* X(OPCODE, IS_LOAD, then LSB, WIDTH of: sram, dram_addr, size0, size1, size2,\n"
    << " * stride1, stride2) per DMA instruction (classes dma-load and dma-store). */\n"
    << "#define EMBER_DMA_INSNS(X)";
  for (const auto& in : isa.instructions()) {
    const bool load = in.cls->id == SemanticClass::DmaLoad;
    if (!load && in.cls->id != SemanticClass::DmaStore)
      continue;
    o << " \\\n  X(" << in.opcode << "u, " << (load ? 1 : 0);
    for (const char* r : {role::kSram, role::kDramAddr, role::kSize0, role::kSize1, role::kSize2,
                          role::kStride1, role::kStride2}) {
      const FieldDesc* f = in.field(r);
      o << ", " << (f ? f->bits.lsb : 0) << "u, " << (f ? f->bits.width : 0) << "u";
    }
    o << ")";
  }
  o << "\n";
  return o.str();
}

} // namespace

std::string generateCHeader(const IsaDescription& isa) {
  std::ostringstream o;
  o << "/* Generated by `ember-isa gen` from " << isa.name() << " " << isa.version() << " (sha256 "
    << isa.hashHex() << ").\n"
    << " * Do not edit: change the ISA description and rebuild. Freestanding C11. */\n"
    << "#ifndef EMBER_NPU_ISA_H\n#define EMBER_NPU_ISA_H\n\n"
    << "#define EMBER_ISA_NAME \"" << isa.name() << "\"\n"
    << "#define EMBER_ISA_SHA256 {";
  for (std::size_t i = 0; i < isa.hash().size(); ++i)
    o << (i ? ", " : "") << "0x"
      << "0123456789abcdef"[isa.hash()[i] >> 4] << "0123456789abcdef"[isa.hash()[i] & 15];
  o << "}\n\n";
  for (const auto& [name, v] : params(isa)) {
    bool reg = name.rfind("REG_", 0) == 0 || name.rfind("ISA_HASH", 0) == 0;
    o << "#define EMBER_" << name << " ";
    if (reg)
      o << hex32(v) << "u\n";
    else
      o << v << (v > 0xffffffffull ? "ull" : "u") << "\n";
  }
  o << firmwareTables(isa) << "\n#endif /* EMBER_NPU_ISA_H */\n";
  return o.str();
}

std::string generateSvPackage(const IsaDescription& isa) {
  std::ostringstream o;
  o << "// Generated by `ember-isa gen` from " << isa.name() << " " << isa.version() << ".\n"
    << "// Do not edit: change the ISA description and rebuild.\n"
    << "package ember_isa_pkg;\n"
    << "  // Every design uses a subset of these.\n"
    << "  /* verilator lint_off UNUSEDPARAM */\n"
    << "  localparam logic [255:0] ISA_SHA256 = 256'h" << isa.hashHex() << ";\n";
  for (const auto& [name, v] : params(isa)) {
    if (v > 0xffffffffull)
      o << "  localparam longint unsigned " << name << " = 64'd" << v << ";\n";
    else
      o << "  localparam int unsigned " << name << " = 32'd" << v << ";\n";
  }
  o << svPackageDecodeParams(isa) << "  /* verilator lint_on UNUSEDPARAM */\n"
    << "endpackage : ember_isa_pkg\n";
  return o.str();
}

namespace {

void mdHardware(std::ostringstream& o, const IsaDescription& isa) {
  const HardwareDesc& h = isa.hw();
  o << "### Hardware parameters (" << isa.name() << ")\n\n| Parameter | Value |\n|---|---|\n";
  o << "| clock | " << num(double(h.clock_hz) / 1e6) << " MHz |\n";
  o << "| MAC array | " << h.mac.rows << " x " << h.mac.cols << " int" << h.mac.input_bits
    << ", int" << h.mac.acc_bits << " accumulate, " << h.mac.dataflow << " |\n";
  o << "| peak MAC/cycle | " << isa.peakMacsPerCycle() << " |\n";
  o << "| weight buffers / load cycles | " << h.mac.weight_buffers << " / "
    << h.mac.weight_load_cycles << " |\n";
  o << "| array fill / drain cycles | " << h.mac.fill_cycles << " / " << h.mac.drain_cycles
    << " |\n";
  o << "| vector lanes | " << h.vector.lanes << " x int" << h.vector.lane_bits << " |\n";
  o << "| DRAM window | " << human(h.dram.size_bytes) << " |\n";
  o << "| DRAM bandwidth | " << h.dram.bytes_per_cycle << " B/cycle |\n";
  o << "| DMA latency / burst / outstanding | " << h.dma.latency_cycles << " cycles / "
    << h.dma.burst_bytes << " B / " << h.dma.max_outstanding << " |\n";
  o << "| sustained DMA bandwidth | " << num(sustainedDma(isa))
    << " B/cycle (min of bandwidth and outstanding x burst / latency) |\n";
  o << "| queue depth load / compute / store | " << h.queues.load_depth << " / "
    << h.queues.compute_depth << " / " << h.queues.store_depth << " |\n";
  o << "| token FIFO depth | " << h.queues.token_fifo_depth << " |\n";
  o << "| fetch latency | " << h.fetch.latency_cycles
    << " cycles (then one instruction per cycle) |\n";
  o << "| control core register access / timer tick | " << h.control.register_access_cycles
    << " cycles / " << h.control.tick_cycles << " cycles |\n";
  o << "| firmware work per job / per checked instruction | " << h.control.job_cycles
    << " cycles / " << h.control.check_cycles_per_instruction << " cycles |\n";
  o << "| host link bandwidth / latency | " << h.host_link.bytes_per_cycle << " B/cycle / "
    << h.host_link.latency_cycles << " cycles (a partitioned model's boundary tensors) |\n";
  o << "| roofline ridge | " << num(isa.ridgePoint()) << " MAC per DRAM byte |\n";
  o << "| instruction width | " << isa.encoding().instruction_bits << " bits, opcode bits ["
    << isa.encoding().opcode.lsb << ", " << isa.encoding().opcode.lsb + isa.encoding().opcode.width
    << ") |\n\n";
  o << "### Memories\n\n| Memory | id | Size | Row | Rows | Element | Banks | Ports R/W | "
       "Read pJ/B | Write pJ/B |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& m : isa.memories())
    o << "| " << m.name << " | " << m.id << " | " << human(m.size_bytes) << " | " << m.row_bytes
      << " B | " << m.rows() << " | int" << m.elem_bits << " | " << m.banks << " | " << m.read_ports
      << "/" << m.write_ports << " | " << num(m.read_pj_per_byte) << " | "
      << num(m.write_pj_per_byte) << " |\n";
  o << "\n";
}

/// The Markdown table of `in`'s fields: role, bits, width, kind and meaning.
std::string mdFieldTable(const InstrDesc& in) {
  std::ostringstream o;
  o << "| Field | Bits | Width | Kind | Meaning |\n|---|---|---|---|---|\n";
  for (const auto& f : in.fields) {
    static const char* kinds[] = {"flag",   "count", "stride", "address", "DRAM address",
                                  "memory", "enum",  "signed", "index"};
    std::string meaning = f.doc;
    if (!f.names.empty()) {
      meaning += " (";
      for (std::size_t i = 0; i < f.names.size(); ++i)
        meaning += (i ? ", " : "") + f.names[i].first + "=" + std::to_string(f.names[i].second);
      meaning += ")";
    }
    o << "| " << f.role << " | [" << f.bits.lsb << ", " << f.bits.lsb + f.bits.width << ") | "
      << f.bits.width << " | " << kinds[int(f.kind)] << " | " << meaning << " |\n";
  }
  return o.str();
}

void mdInstructions(std::ostringstream& o, const IsaDescription& isa) {
  o << "### Instructions\n\n| Mnemonic | Opcode | Class | Engine | Properties | Description |\n"
       "|---|---|---|---|---|---|\n";
  for (const auto& in : isa.instructions()) {
    std::string props;
    const auto add = [&props](const std::string& p) { props += (props.empty() ? "" : ", ") + p; };
    if (!in.op.empty())
      add("op=" + in.op);
    if (!in.memories.empty()) {
      std::string ms = "memories=";
      for (std::size_t i = 0; i < in.memories.size(); ++i)
        ms += (i ? "," : "") + in.memories[i];
      add(ms);
    }
    if (in.cls->allows_table_offset)
      add("table_offset=" + std::to_string(in.table_offset));
    if (in.background)
      add("background");
    if (in.overwrite)
      add("overwrite");
    if (in.bias)
      add("bias");
    std::string engine = in.field("engine") ? "(engine field)" : engineName(in.cls->engine);
    o << "| `" << in.name << "` | " << in.opcode << " | " << in.cls->name << " | " << engine
      << " | " << props << " | " << in.doc << " |\n";
  }
  o << "\n### Encodings\n\nBit 0 is the least significant bit of byte 0 of the "
    << isa.encoding().bytes() << "-byte little-endian instruction word. Bits not listed are "
    << "reserved and must be zero.\n\n";
  // An instruction whose field table equals an earlier one's (a twin such as gemm.z of
  // gemm) names that one instead of repeating the table.
  std::map<std::string, std::string> firstWithTable;
  for (const auto& in : isa.instructions()) {
    o << "#### `" << in.name << "` (opcode " << in.opcode << ", bits [" << isa.encoding().opcode.lsb
      << ", " << isa.encoding().opcode.lsb + isa.encoding().opcode.width << "))\n\n";
    const std::string table = mdFieldTable(in);
    const auto [it, first] = firstWithTable.emplace(table, in.name);
    if (first)
      o << table << "\n";
    else
      o << "The fields of `" << it->second << "`: the same roles, bits and meanings.\n\n";
  }
}

void mdTimingEnergy(std::ostringstream& o, const IsaDescription& isa) {
  o << "### Timing (cycles)\n\n| Mnemonic | issue | setup | cycles_per_row | pipeline_latency |\n"
       "|---|---|---|---|---|\n";
  auto cell = [](const std::map<std::string, double>& m, const char* k) {
    auto it = m.find(k);
    return it == m.end() ? std::string("-") : num(it->second);
  };
  for (const auto& in : isa.instructions())
    o << "| `" << in.name << "` | " << cell(in.timing, "issue") << " | " << cell(in.timing, "setup")
      << " | " << cell(in.timing, "cycles_per_row") << " | " << cell(in.timing, "pipeline_latency")
      << " |\n";
  const EnergyTable& e = isa.energy();
  o << "\n### Energy (pJ)\n\n| Action | pJ |\n|---|---|\n"
    << "| int8 MAC | " << num(e.mac_int8) << " |\n"
    << "| DRAM read / byte | " << num(e.dram_read_per_byte) << " |\n"
    << "| DRAM write / byte | " << num(e.dram_write_per_byte) << " |\n"
    << "| leakage / cycle | " << num(e.leakage_per_cycle) << " |\n";
  for (const auto& m : isa.memories())
    o << "| " << m.name << " SRAM read / write per byte | " << num(m.read_pj_per_byte) << " / "
      << num(m.write_pj_per_byte) << " |\n";
  o << "\n| Mnemonic | issue | per_burst | per_lane |\n|---|---|---|---|\n";
  for (const auto& in : isa.instructions())
    o << "| `" << in.name << "` | " << cell(in.energy, "issue") << " | "
      << cell(in.energy, "per_burst") << " | " << cell(in.energy, "per_lane") << " |\n";
  o << "\n";
}

void mdRegisters(std::ostringstream& o, const IsaDescription& isa) {
  o << "### Registers\n\n| Offset | Name | Access | Reset | Fields | Description |\n"
       "|---|---|---|---|---|---|\n";
  for (const auto& r : isa.registers()) {
    std::string fields;
    for (const auto& f : r.fields) {
      fields += (fields.empty() ? "" : "<br>") + f.name + " [" + std::to_string(f.bits.lsb);
      if (f.bits.width > 1)
        fields += ":" + std::to_string(f.bits.lsb + f.bits.width - 1);
      fields += "]";
    }
    o << "| " << hex32(r.offset) << " | " << r.name << " | " << r.access << " | " << hex32(r.reset)
      << " | " << fields << " | " << r.doc << " |\n";
  }
}

} // namespace

std::string generateMarkdownTables(const IsaDescription& isa) {
  std::ostringstream o;
  o << "*Generated from `" << isa.name() << "` " << isa.version() << " (sha256 `"
    << isa.hashHex().substr(0, 16) << "...`).*\n\n";
  mdHardware(o, isa);
  mdInstructions(o, isa);
  mdTimingEnergy(o, isa);
  mdRegisters(o, isa);
  return o.str();
}

std::string summarize(const IsaDescription& isa) {
  std::ostringstream o;
  const HardwareDesc& h = isa.hw();
  double ghz = double(h.clock_hz) / 1e9;
  o << isa.name() << " " << isa.version() << ": OK (" << isa.file() << ")\n"
    << "  sha256            " << isa.hashHex() << "\n"
    << "  clock             " << num(ghz) << " GHz\n"
    << "  MAC array         " << h.mac.rows << "x" << h.mac.cols << " " << h.mac.dataflow
    << ", peak " << isa.peakMacsPerCycle()
    << " MAC/cycle = " << num(double(isa.peakMacsPerCycle()) * ghz) << " GMAC/s\n";
  std::uint64_t total = 0;
  for (const auto& m : isa.memories()) {
    o << "  SRAM " << m.name << std::string(13 - std::min<std::size_t>(12, m.name.size()), ' ')
      << human(m.size_bytes) << " (" << m.rows() << " rows x " << m.row_bytes << " B, " << m.banks
      << " banks, " << m.read_ports << "R/" << m.write_ports << "W)\n";
    total += m.size_bytes;
  }
  o << "  SRAM total        " << human(total) << "\n"
    << "  DRAM              " << h.dram.bytes_per_cycle
    << " B/cycle = " << num(double(h.dram.bytes_per_cycle) * ghz) << " GB/s, latency "
    << h.dma.latency_cycles << " cycles, " << h.dma.burst_bytes << " B bursts, "
    << h.dma.max_outstanding << " outstanding\n"
    << "  roofline ridge    " << num(isa.ridgePoint()) << " MAC per DRAM byte\n"
    << "  instructions      " << isa.instructions().size() << " x "
    << isa.encoding().instruction_bits << " bits:";
  for (const auto& in : isa.instructions())
    o << " " << in.name;
  o << "\n  registers         " << isa.registers().size() << "\n";
  return o.str();
}

std::string extractMarkdown(const std::string& doc, const std::string& file) {
  auto b = doc.find(kMdBeginMarker);
  auto e = doc.find(kMdEndMarker);
  if (b == std::string::npos || e == std::string::npos || e < b)
    throw Error(file, "",
                "generated-table markers not found (" + std::string(kMdBeginMarker) + ")");
  b += std::string(kMdBeginMarker).size();
  if (b < doc.size() && doc[b] == '\n')
    ++b;
  return doc.substr(b, e - b);
}

std::string spliceMarkdown(const std::string& doc, const std::string& tables,
                           const std::string& file) {
  extractMarkdown(doc, file);
  auto b = doc.find(kMdBeginMarker) + std::string(kMdBeginMarker).size();
  auto e = doc.find(kMdEndMarker);
  return doc.substr(0, b) + "\n" + tables + doc.substr(e);
}

} // namespace ember::isa
