// SystemVerilog generator of the register block `ember_regs` (docs/rtl/generated.md).
#include "codegen_sv.h"
#include "ember/isa/codegen.h"
#include "ember/isa/error.h"

#include <cstdio>
#include <set>
#include <sstream>
#include <vector>

namespace ember::isa {

namespace {

/// One port-sized piece of a register: a field, or the whole register when it has none.
struct Slot {
  std::string port; ///< Port stem: `<reg>` or `<reg>_<field>` in lower case.
  unsigned lsb = 0, width = 32;
  std::uint32_t reset = 0; ///< The register's reset value, bits of this slot.
};

std::vector<Slot> slots(const RegisterDesc& r) {
  std::vector<Slot> s;
  auto piece = [&](std::string port, unsigned lsb, unsigned width) {
    std::uint32_t mask = width >= 32 ? 0xffffffffu : (std::uint32_t(1) << width) - 1;
    s.push_back(Slot{std::move(port), lsb, width, (r.reset >> lsb) & mask});
  };
  if (r.fields.empty())
    piece(svLower(r.name), 0, 32);
  for (const auto& f : r.fields)
    piece(svLower(r.name) + "_" + svLower(f.name), f.bits.lsb, f.bits.width);
  return s;
}

std::string range(unsigned width) {
  return width == 1 ? "" : "[" + std::to_string(width - 1) + ":0] ";
}

std::string bits(const std::string& sig, unsigned lsb, unsigned width) {
  if (width == 1)
    return sig + "[" + std::to_string(lsb) + "]";
  return sig + "[" + std::to_string(lsb + width - 1) + ":" + std::to_string(lsb) + "]";
}

std::string hex32(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "32'h%08x", v);
  return b;
}

bool stored(const std::string& access) {
  return access == "rw" || access == "wo" || access == "w1c";
}

/// One line of a comment (newlines of a JSON doc string become spaces).
std::string oneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r')
      c = ' ';
  return s;
}

/// Port list of the register block; throws Error on an unknown access or a clash.
void ports(std::ostringstream& o, const IsaDescription& isa) {
  std::set<std::string> seen = {"clk_i",   "rst_ni", "req_i", "we_i",   "addr_i",
                                "wdata_i", "ack_o",  "err_o", "rdata_o"};
  // Declarations and comment lines ("//" first), commas added when joined.
  std::vector<std::string> lines = {
      "input  logic clk_i", "input  logic rst_ni",        "input  logic req_i",
      "input  logic we_i",  "input  logic [31:0] addr_i", "input  logic [31:0] wdata_i",
      "output logic ack_o", "output logic err_o",         "output logic [31:0] rdata_o"};
  auto port = [&](const RegisterDesc& r, const std::string& dir, unsigned width,
                  const std::string& name) {
    if (!seen.insert(name).second)
      throw Error(isa.file(), "/registers",
                  "register " + r.name + ": generated port " + name + " is used twice");
    lines.push_back(dir + " logic " + range(width) + name);
  };
  for (const auto& r : isa.registers()) {
    if (!stored(r.access) && r.access != "ro")
      throw Error(isa.file(), "/registers", "register " + r.name + ": unknown access " + r.access);
    lines.push_back("// " + r.name + " (" + r.access + ", " + hex32(r.offset) +
                    "): " + oneLine(r.doc));
    for (const Slot& s : slots(r)) {
      if (r.access == "ro")
        port(r, "input ", s.width, s.port + "_i");
      else if (r.access == "w1c")
        port(r, "input ", s.width, s.port + "_set_i");
      if (stored(r.access))
        port(r, "output", s.width, s.port + "_o");
    }
    if (r.access == "rw" || r.access == "wo")
      port(r, "output", 1, svLower(r.name) + "_wr_o");
  }
  std::size_t last = 0;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind("//", 0) != 0)
      last = i;
  o << "module ember_regs (\n";
  for (std::size_t i = 0; i < lines.size(); ++i)
    o << "    " << lines[i] << (i < last && lines[i].rfind("//", 0) != 0 ? "," : "") << "\n";
  o << ");\n\n";
}

/// Read multiplexer (combinational): rdata_d / hit_d for addr_i.
void readMux(std::ostringstream& o, const IsaDescription& isa) {
  o << "  // Read multiplexer; the response is registered (1-cycle latency).\n"
    << "  logic [31:0] rdata_d;\n  logic hit_d;\n"
    << "  always_comb begin\n    rdata_d = 32'd0;\n    hit_d = 1'b0;\n    case (addr_i)\n";
  for (const auto& r : isa.registers()) {
    o << "      " << hex32(r.offset) << ": begin  // " << r.name << "\n        hit_d = 1'b1;\n";
    if (r.access != "wo")
      for (const Slot& s : slots(r))
        o << "        " << (s.width == 32 ? "rdata_d" : bits("rdata_d", s.lsb, s.width)) << " = "
          << s.port << (r.access == "ro" ? "_i" : "_q") << ";\n";
    o << "      end\n";
  }
  o << "      default: ;\n    endcase\n  end\n\n";
}

/// Flip-flops: response, write pulses, stored slots.
void flops(std::ostringstream& o, const IsaDescription& isa) {
  o << "  logic ack_q, err_q;\n  logic [31:0] rdata_q;\n";
  for (const auto& r : isa.registers()) {
    if (!stored(r.access))
      continue;
    std::string reg = svLower(r.name);
    o << "  logic " << reg << "_wen;\n"
      << "  assign " << reg << "_wen = req_i & we_i & (addr_i == " << hex32(r.offset) << ");\n";
    if (r.access != "w1c")
      o << "  logic " << reg << "_wr_q;\n  assign " << reg << "_wr_o = " << reg << "_wr_q;\n";
    for (const Slot& s : slots(r))
      o << "  logic " << range(s.width) << s.port << "_q;\n  assign " << s.port << "_o = " << s.port
        << "_q;\n";
  }
  o << "\n  always_ff @(posedge clk_i or negedge rst_ni) begin\n    if (!rst_ni) begin\n"
    << "      ack_q <= 1'b0;\n      err_q <= 1'b0;\n      rdata_q <= 32'd0;\n";
  for (const auto& r : isa.registers()) {
    if (!stored(r.access))
      continue;
    if (r.access != "w1c")
      o << "      " << svLower(r.name) << "_wr_q <= 1'b0;\n";
    for (const Slot& s : slots(r))
      o << "      " << s.port << "_q <= " << s.width << "'d" << s.reset << ";\n";
  }
  o << "    end else begin\n      ack_q <= req_i;\n      err_q <= req_i & ~hit_d;\n"
    << "      rdata_q <= (req_i & ~we_i) ? rdata_d : 32'd0;\n";
  for (const auto& r : isa.registers()) {
    if (!stored(r.access))
      continue;
    std::string reg = svLower(r.name);
    if (r.access == "w1c") {
      // Write 1 clears; a set from hardware in the same cycle wins.
      for (const Slot& s : slots(r))
        o << "      " << s.port << "_q <= (" << s.port << "_q & ~({" << s.width << "{" << reg
          << "_wen}} & " << bits("wdata_i", s.lsb, s.width) << ")) | " << s.port << "_set_i;\n";
      continue;
    }
    o << "      " << reg << "_wr_q <= " << reg << "_wen;\n      if (" << reg << "_wen) begin\n";
    for (const Slot& s : slots(r))
      o << "        " << s.port << "_q <= " << bits("wdata_i", s.lsb, s.width) << ";\n";
    o << "      end\n";
  }
  o << "    end\n  end\n\n"
    << "  assign ack_o = ack_q;\n  assign err_o = err_q;\n  assign rdata_o = rdata_q;\n";
}

} // namespace

std::string generateSvRegs(const IsaDescription& isa) {
  std::ostringstream o;
  o << "// Generated by `ember-isa gen --sv-regs` from " << isa.name() << " " << isa.version()
    << ".\n// Do not edit: change the ISA description and rebuild. Interface: docs/rtl.md.\n"
    << "//\n// MMIO register block. A request (req_i) is one whole 32-bit word at byte offset\n"
    << "// addr_i; writes have no byte strobes. Every request is answered the next cycle:\n"
    << "// ack_o = 1, err_o = 1 when addr_i is no register's offset, rdata_o = the word read\n"
    << "// (0 for writes, wo registers and unmapped offsets). rw/wo registers drive their\n"
    << "// value on <reg>[_<field>]_o and pulse <reg>_wr_o in the cycle the written value\n"
    << "// first shows there; ro registers read <reg>[_<field>]_i; w1c bits are set by\n"
    << "// <reg>[_<field>]_set_i (set wins over a same-cycle clear), cleared by writing 1.\n"
    << "// A register with fields has one port per field (other bits read 0, writes to them\n"
    << "// are dropped); one without has a 32-bit port. Writes to ro registers are ignored.\n";
  ports(o, isa);
  readMux(o, isa);
  flops(o, isa);
  // wdata_i bits that no writable slot takes (Verilator -Wall: UNUSEDSIGNAL).
  std::vector<bool> used(32, false);
  for (const auto& r : isa.registers())
    if (stored(r.access))
      for (const Slot& s : slots(r))
        for (unsigned b = s.lsb; b < s.lsb + s.width && b < 32; ++b)
          used[b] = true;
  std::string unused;
  for (unsigned b = 0; b < 32; ++b)
    if (!used[b])
      unused += (unused.empty() ? "" : ", ") + bits("wdata_i", b, 1);
  if (!unused.empty())
    o << "\n  // wdata_i bits no writable register takes.\n  logic unused_wdata;\n"
      << "  assign unused_wdata = ^{" << unused << "};\n";
  o << "\nendmodule : ember_regs\n";
  return o.str();
}

} // namespace ember::isa
