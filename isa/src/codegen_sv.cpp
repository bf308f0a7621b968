// SystemVerilog generators: the decoder (`ember_decode`), the register block
// (`ember_regs`) and the decode part of the package `ember_isa_pkg` (docs/rtl/generated.md).
//
// The generated text reads every package name fully qualified (`ember_isa_pkg::X`) and
// imports nothing: Debian's Yosys 0.23 parses neither a header import nor an import
// inside a module, and Verilator -Wall flags a `$unit` import.
#include "codegen_sv.h"

#include "ember/isa/codegen.h"
#include "ember/isa/error.h"
#include "ember/isa/roles.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace ember::isa {

namespace {

/// Upper-case identifier part (letters/digits kept, anything else '_').
std::string upper(const std::string& s) {
  std::string o;
  for (char c : s)
    o += (c >= 'a' && c <= 'z')                               ? char(c - 'a' + 'A')
         : ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ? c
                                                              : '_';
  return o;
}

std::string lower(const std::string& s) {
  return svLower(s);
}

/// Bits needed to hold the values 0 .. n-1 (at least 1).
unsigned bitsFor(std::uint64_t n) {
  unsigned b = 1;
  while (b < 64 && (std::uint64_t(1) << b) < n)
    ++b;
  return b;
}

/// Sized SystemVerilog literal `W'dV` (V masked to W bits).
std::string lit(unsigned width, std::uint64_t v) {
  if (width < 64)
    v &= (std::uint64_t(1) << width) - 1;
  return std::to_string(width) + "'d" + std::to_string(v);
}

/// `instr_i[msb:lsb]` (or `instr_i[b]` for one bit).
std::string slice(const std::string& sig, unsigned lsb, unsigned width) {
  if (width == 1)
    return sig + "[" + std::to_string(lsb) + "]";
  return sig + "[" + std::to_string(lsb + width - 1) + ":" + std::to_string(lsb) + "]";
}

/// Every package name the decoder adds, checked for clashes (two instruction names
/// that differ only in punctuation, an instruction called "count", ...).
class Names {
public:
  explicit Names(const IsaDescription& isa) : isa_(isa) {}
  const std::string& add(const std::string& name, const std::string& what) {
    if (!seen_.insert(name).second)
      throw Error(isa_.file(), what, "generated SystemVerilog name " + name + " is used twice");
    return name;
  }

private:
  const IsaDescription& isa_;
  std::set<std::string> seen_;
};

std::vector<std::string> vectorOps() {
  std::vector<std::string> ops;
  const ClassRegistry& reg = ClassRegistry::global();
  for (const auto& c : reg.names())
    for (const auto& op : reg.find(c)->op_choices) {
      bool dup = false;
      for (const auto& o : ops)
        dup = dup || o == op;
      if (!dup)
        ops.push_back(op);
    }
  return ops;
}

} // namespace

std::string svLower(const std::string& s) {
  std::string o = upper(s);
  for (char& c : o)
    if (c >= 'A' && c <= 'Z')
      c = char(c - 'A' + 'a');
  return o;
}

std::vector<SvRole> svRoles(const IsaDescription& isa) {
  std::vector<SvRole> roles;
  auto find = [&](const std::string& n) -> SvRole& {
    for (auto& r : roles)
      if (r.name == n)
        return r;
    roles.push_back(SvRole{n, 0, false, 0});
    return roles.back();
  };
  for (const auto& in : isa.instructions())
    for (const auto& f : in.fields) {
      SvRole& r = find(f.role);
      r.is_signed = r.is_signed || f.is_signed;
      ++r.instructions;
    }
  // An unsigned field of a role that is signed elsewhere needs one more bit, so its
  // largest value stays positive after the role's sign extension.
  for (const auto& in : isa.instructions())
    for (const auto& f : in.fields) {
      SvRole& r = find(f.role);
      unsigned w = f.bits.width + ((!f.is_signed && r.is_signed) ? 1u : 0u);
      if (w > r.width)
        r.width = w;
    }
  return roles;
}

std::string svPackageDecodeParams(const IsaDescription& isa) {
  Names names(isa);
  std::ostringstream o;
  const auto& insns = isa.instructions();
  const EncodingDesc& e = isa.encoding();
  o << "  // Decoder interface (ember_decode.sv; docs/rtl.md).\n"
    << "  localparam int unsigned INSTR_BITS = 32'd" << e.instruction_bits << ";\n";
  std::vector<std::string> classes = ClassRegistry::global().names();
  unsigned cls_bits = bitsFor(classes.size());
  o << "  // Semantic classes, in class-registry order (isa/include/ember/isa/semantic.h).\n"
    << "  localparam int unsigned CLS_BITS = 32'd" << cls_bits << ";\n";
  for (std::size_t i = 0; i < classes.size(); ++i)
    o << "  localparam logic [CLS_BITS-1:0] "
      << names.add("CLS_" + upper(classes[i]), "class " + classes[i]) << " = " << lit(cls_bits, i)
      << ";\n";
  std::vector<std::string> ops = vectorOps();
  unsigned vop_bits = bitsFor(ops.size() + 1);
  o << "  // Vector ops (properties.op); VOP_NONE for instructions without one.\n"
    << "  localparam int unsigned VOP_BITS = 32'd" << vop_bits << ";\n"
    << "  localparam logic [VOP_BITS-1:0] VOP_NONE = " << lit(vop_bits, 0) << ";\n";
  names.add("VOP_NONE", "/instructions");
  for (std::size_t i = 0; i < ops.size(); ++i)
    o << "  localparam logic [VOP_BITS-1:0] " << names.add("VOP_" + upper(ops[i]), "op " + ops[i])
      << " = " << lit(vop_bits, i + 1) << ";\n";
  unsigned mem_slots = 1;
  for (const auto& m : isa.memories())
    mem_slots = std::max(mem_slots, m.id + 1);
  unsigned idx_bits = bitsFor(insns.size());
  o << "  // Instructions: index in the description (insn_o) and opcode.\n"
    << "  localparam int unsigned NUM_INSNS = 32'd" << insns.size() << ";\n"
    << "  localparam int unsigned INSN_IDX_BITS = 32'd" << idx_bits << ";\n";
  for (std::size_t i = 0; i < insns.size(); ++i) {
    const InstrDesc& in = insns[i];
    std::string n = upper(in.name);
    o << "  localparam logic [INSN_IDX_BITS-1:0] " << names.add("INSN_" + n + "_IDX", in.json_path)
      << " = " << lit(idx_bits, i) << ";\n"
      << "  localparam logic [OPCODE_WIDTH-1:0] " << names.add("OPC_" + n, in.json_path) << " = "
      << lit(e.opcode.width, in.opcode) << ";\n";
    if (!in.memories.empty()) { // bit `id` set for every memory it may select
      std::string bits(mem_slots, '0');
      for (const auto& m : in.memories)
        bits[mem_slots - 1 - isa.memory(m).id] = '1';
      o << "  localparam logic [" << mem_slots - 1 << ":0] "
        << names.add("MEMORIES_" + n, in.json_path) << " = " << mem_slots << "'b" << bits << ";\n";
    }
    if (in.cls->allows_table_offset)
      o << "  localparam int unsigned " << names.add("TABLE_OFFSET_" + n, in.json_path) << " = 32'd"
        << in.table_offset << ";\n";
    if (in.cls->on_array) { // rule E6: the array runs it in the background
      o << "  localparam bit " << names.add("BACKGROUND_" + n, in.json_path) << " = 1'b"
        << (in.background ? 1 : 0) << ";\n";
      o << "  localparam bit " << names.add("OVERWRITE_" + n, in.json_path) << " = 1'b"
        << (in.overwrite ? 1 : 0) << ";\n";
    }
    if (in.cls->id == SemanticClass::Requantize) // adds param row param_addr + 2
      o << "  localparam bit " << names.add("BIAS_" + n, in.json_path) << " = 1'b"
        << (in.bias ? 1 : 0) << ";\n";
  }
  // Structural sizes of the NPU RTL (rtl/src), derived here so that no hand-written file
  // computes with package constants (Yosys 0.23 cannot reference another package's
  // parameters from a package).
  unsigned maxRow = 1, maxBanks = 1, paramRow = 1;
  for (const auto& m : isa.memories()) {
    maxRow = std::max<unsigned>(maxRow, static_cast<unsigned>(m.row_bytes));
    maxBanks = std::max<unsigned>(maxBanks, static_cast<unsigned>(m.banks));
    if (m.name == "param")
      paramRow = static_cast<unsigned>(m.row_bytes);
  }
  o << "  // NPU RTL sizes: widest SRAM row (DMA and DRAM port width), most banks of any\n"
    << "  // SRAM (bank-conflict count), param rows of one 256-byte LUT table.\n"
    << "  localparam int unsigned MAX_ROW_BYTES = 32'd" << maxRow << ";\n"
    << "  localparam int unsigned ROW_BITS = 32'd" << 8 * maxRow << ";\n"
    << "  localparam int unsigned MAX_BANKS = 32'd" << maxBanks << ";\n"
    << "  localparam int unsigned TABLE_ROWS = 32'd" << std::max(1u, 256 / paramRow) << ";\n";
  o << "  // Field roles: width of the decoder's <role>_o port (the widest field of the role),\n"
    << "  // and whether it is sign-extended.\n";
  for (const SvRole& r : svRoles(isa)) {
    std::string n = upper(r.name);
    o << "  localparam int unsigned " << names.add("ROLE_" + n + "_BITS", "role " + r.name)
      << " = 32'd" << r.width << ";\n"
      << "  localparam bit " << names.add("ROLE_" + n + "_SIGNED", "role " + r.name) << " = 1'b"
      << (r.is_signed ? 1 : 0) << ";\n";
  }
  return o.str();
}

namespace {

/// The expression of field `f` widened to `width` bits (sign- or zero-extended).
std::string extend(const FieldDesc& f, unsigned width) {
  std::string v = slice("instr_i", f.bits.lsb, f.bits.width);
  if (width == f.bits.width)
    return v;
  unsigned pad = width - f.bits.width;
  if (f.is_signed)
    return "{{" + std::to_string(pad) + "{instr_i[" +
           std::to_string(f.bits.lsb + f.bits.width - 1) + "]}}, " + v + "}";
  return "{" + lit(pad, 0) + ", " + v + "}";
}

/// unit_o and t_*_o of `in`: its engine (per instruction through an "engine" enum field,
/// as Instruction::engine() decides) and its timing entries (whole cycles, checked by the
/// loader; 0 when the class has no such key).
std::string unitAndTiming(const InstrDesc& in) {
  std::ostringstream o;
  const FieldDesc* eng = nullptr;
  for (const auto& f : in.fields)
    if (f.role == role::kEngine && f.kind == RoleKind::Enum)
      eng = &f;
  if (eng) {
    o << "        case (" << slice("instr_i", eng->bits.lsb, eng->bits.width) << ")\n";
    for (const auto& nv : eng->names) {
      unsigned u = nv.first == "load" ? 0 : nv.first == "store" ? 2 : 1;
      std::uint64_t mask =
          eng->bits.width >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << eng->bits.width) - 1;
      o << "          " << lit(eng->bits.width, std::uint64_t(nv.second) & mask) << ": unit_o = 2'd"
        << u << ";\n";
    }
    o << "          default: unit_o = 2'd1;\n        endcase\n";
  } else {
    o << "        unit_o = 2'd" << static_cast<unsigned>(in.cls->engine) << ";\n";
  }
  auto t = [&](const char* key) {
    auto it = in.timing.find(key);
    if (it == in.timing.end())
      return std::uint64_t(0);
    if (it->second > 4294967295.0)
      throw Error("<sv-decoder>", in.json_path + "/timing/" + key,
                  "a timing entry above 2^32 - 1 cycles does not fit the decoder's 32-bit port");
    return static_cast<std::uint64_t>(it->second);
  };
  o << "        t_issue_o = 32'd" << t(timing_key::kIssue) << ";\n"
    << "        t_setup_o = 32'd" << t(timing_key::kSetup) << ";\n"
    << "        t_cpr_o = 32'd" << t(timing_key::kCyclesPerRow) << ";\n"
    << "        t_pipe_o = 32'd" << t(timing_key::kPipelineLatency) << ";\n"
    << "        t_cpl_o = 32'd" << t(timing_key::kCyclesPerLine) << ";\n"
    << "        t_cpe_o = 32'd" << t(timing_key::kCyclesPerElement) << ";\n";
  if (in.cls->allows_table_offset)
    o << "        table_off_o = 32'd" << in.table_offset << ";\n";
  if (in.background)
    o << "        bg_o = 1'b1;\n";
  if (in.overwrite)
    o << "        ovw_o = 1'b1;\n";
  if (in.bias)
    o << "        bias_o = 1'b1;\n";
  return o.str();
}

/// The legality conditions of `in` beyond its opcode, as in Instruction::decode:
/// reserved bits zero, named fields (memory selects, enums) hold a named value, and a
/// 64-bit unsigned field stays below 2^63.
std::vector<std::string> legality(const IsaDescription& isa, const InstrDesc& in) {
  const EncodingDesc& e = isa.encoding();
  std::vector<bool> used(e.instruction_bits, false);
  auto mark = [&](const BitRange& b) {
    for (unsigned i = 0; i < b.width && b.lsb + i < used.size(); ++i)
      used[b.lsb + i] = true;
  };
  mark(e.opcode);
  std::vector<std::string> c;
  for (const auto& f : in.fields) {
    mark(f.bits);
    if (!f.names.empty()) {
      std::set<std::uint64_t> values;
      std::uint64_t mask =
          f.bits.width >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << f.bits.width) - 1;
      for (const auto& nv : f.names)
        values.insert(std::uint64_t(nv.second) & mask);
      if (f.bits.width >= 64 || values.size() < (std::uint64_t(1) << f.bits.width)) {
        std::string any;
        for (std::uint64_t v : values)
          any += (any.empty() ? "" : " || ") + slice("instr_i", f.bits.lsb, f.bits.width) +
                 " == " + lit(f.bits.width, v);
        c.push_back(values.size() > 1 ? "(" + any + ")" : any);
      }
    }
    if (!f.is_signed && f.bits.width >= 64)
      c.push_back(slice("instr_i", f.bits.lsb + 63, 1) + " == 1'b0");
  }
  for (unsigned b = 0; b < used.size();) {
    if (used[b]) {
      ++b;
      continue;
    }
    unsigned end = b;
    while (end < used.size() && !used[end])
      ++end;
    c.push_back(slice("instr_i", b, end - b) + " == " + lit(end - b, 0));
    b = end;
  }
  return c;
}

} // namespace

std::string generateSvDecoder(const IsaDescription& isa) {
  const EncodingDesc& e = isa.encoding();
  std::vector<SvRole> roles = svRoles(isa);
  const std::size_t n = isa.instructions().size();
  const char* P = "ember_isa_pkg::";
  std::ostringstream o;
  o << "// Generated by `ember-isa gen --sv-decoder` from " << isa.name() << " " << isa.version()
    << ".\n// Do not edit: change the ISA description and rebuild. Interface: docs/rtl.md.\n"
    << "//\n// Combinational instruction decoder. valid_o is 1 exactly for the words\n"
    << "// isa::Instruction::decode accepts: a known opcode, every reserved bit zero, memory\n"
    << "// selects and enums naming an allowed value. known_o is 1 for a known opcode (so a\n"
    << "// fault unit can tell a bad opcode from bad reserved bits). For a known opcode,\n"
    << "// cls_o/insn_o/op_o and the field ports are driven even when valid_o is 0; for an\n"
    << "// unknown one every output is 0. A field port carries its role's field of the decoded\n"
    << "// instruction, sign-extended (signed roles) or zero-extended to ROLE_<ROLE>_BITS, and\n"
    << "// 0 when the instruction has no such role (has_<role>_o = 0). unit_o is the engine\n"
    << "// whose queue takes the instruction (0 load, 1 compute, 2 store: the class's, or\n"
    << "// the engine field's), t_*_o its timing entries (docs/simulator.md section 2.2),\n"
    << "// table_off_o a lut's table_offset, bg_o an array instruction's\n"
    << "// properties.background (rule E6), ovw_o its properties.overwrite (its first\n"
    << "// accumulation into each acc row writes the products), bias_o a requantize's\n"
    << "// properties.bias (param row param_addr + 2 added to the accumulators).\n"
    << "module ember_decode (\n"
    << "    input  logic [" << P << "INSTR_BITS-1:0] instr_i,\n"
    << "    output logic valid_o,\n"
    << "    output logic known_o,\n"
    << "    output logic [" << P << "CLS_BITS-1:0] cls_o,\n"
    << "    output logic [" << P << "INSN_IDX_BITS-1:0] insn_o,\n"
    << "    output logic [" << P << "VOP_BITS-1:0] op_o,\n"
    << "    output logic [1:0] unit_o,\n"
    << "    output logic [31:0] t_issue_o,\n"
    << "    output logic [31:0] t_setup_o,\n"
    << "    output logic [31:0] t_cpr_o,\n"
    << "    output logic [31:0] t_pipe_o,\n"
    << "    output logic [31:0] t_cpl_o,\n"
    << "    output logic [31:0] t_cpe_o,\n"
    << "    output logic [31:0] table_off_o,\n"
    << "    output logic bg_o,\n"
    << "    output logic ovw_o,\n"
    << "    output logic bias_o";
  for (const SvRole& r : roles) {
    o << ",\n    output logic [" << P << "ROLE_" << upper(r.name) << "_BITS-1:0] " << lower(r.name)
      << "_o";
    if (r.instructions < n)
      o << ",\n    output logic has_" << lower(r.name) << "_o";
  }
  o << "\n);\n\n  always_comb begin\n"
    << "    valid_o = 1'b0;\n    known_o = 1'b0;\n"
    << "    cls_o = '0;\n    insn_o = '0;\n    op_o = " << P << "VOP_NONE;\n"
    << "    unit_o = 2'd1;\n    t_issue_o = '0;\n    t_setup_o = '0;\n    t_cpr_o = '0;\n"
    << "    t_pipe_o = '0;\n    t_cpl_o = '0;\n    t_cpe_o = '0;\n    table_off_o = '0;\n"
    << "    bg_o = 1'b0;\n    ovw_o = 1'b0;\n    bias_o = 1'b0;\n";
  for (const SvRole& r : roles) {
    o << "    " << lower(r.name) << "_o = '0;\n";
    if (r.instructions < n)
      o << "    has_" << lower(r.name) << "_o = 1'b0;\n";
  }
  o << "    case (" << slice("instr_i", e.opcode.lsb, e.opcode.width) << ")\n";
  for (const InstrDesc& in : isa.instructions()) {
    std::string u = upper(in.name);
    o << "      " << P << "OPC_" << u << ": begin  // " << in.name << " (" << in.cls->name << ")\n"
      << "        known_o = 1'b1;\n";
    std::vector<std::string> legal = legality(isa, in);
    o << "        valid_o = ";
    if (legal.empty())
      o << "1'b1";
    for (std::size_t i = 0; i < legal.size(); ++i)
      o << (i ? "\n            && " : "") << legal[i];
    o << ";\n"
      << "        cls_o = " << P << "CLS_" << upper(in.cls->name) << ";\n"
      << "        insn_o = " << P << "INSN_" << u << "_IDX;\n";
    if (!in.op.empty())
      o << "        op_o = " << P << "VOP_" << upper(in.op) << ";\n";
    o << unitAndTiming(in);
    for (const FieldDesc& f : in.fields) {
      const SvRole* r = nullptr;
      for (const SvRole& x : roles)
        if (x.name == f.role)
          r = &x;
      o << "        " << lower(f.role) << "_o = " << extend(f, r->width) << ";\n";
      if (r->instructions < n)
        o << "        has_" << lower(f.role) << "_o = 1'b1;\n";
    }
    o << "      end\n";
  }
  o << "      default: ;\n    endcase\n  end\n\nendmodule : ember_decode\n";
  return o.str();
}

} // namespace ember::isa
