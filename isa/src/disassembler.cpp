// Binary -> assembly text that re-assembles to the same Binary.
#include "ember/isa/assembler.h"

#include "text_util.h"

#include <cstdio>
#include <sstream>

namespace ember::isa {

using detail::hexU;
using detail::quote;

std::string formatInstruction(const Instruction& insn) {
  const InstrDesc& d = insn.desc();
  std::string s = d.name, flags;
  for (std::size_t i = 0; i < d.fields.size(); ++i) {
    const FieldDesc& f = d.fields[i];
    std::int64_t v = insn.values()[i];
    if (f.kind == RoleKind::Flag) {
      if (v)
        flags += " " + f.role; // flags (tokens, reset) go last, only when set
      continue;
    }
    s += " " + f.role + "=";
    if (const std::string* n = f.nameOf(v))
      s += *n;
    else if (f.kind == RoleKind::DramAddr)
      s += hexU(std::uint64_t(v));
    else
      s += std::to_string(v);
  }
  return s + flags;
}

namespace {

std::string hexBytes(const std::vector<std::uint8_t>& b) {
  static const char* h = "0123456789abcdef";
  std::string s;
  // Most significant byte first, so the word reads like a number.
  for (std::size_t i = b.size(); i-- > 0;) {
    s += h[b[i] >> 4];
    s += h[b[i] & 15];
  }
  return s;
}

std::string formatDouble(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

void header(std::ostringstream& o, const Binary& bin, const IsaDescription& isa,
            const DisasmOptions& opts) {
  if (!opts.source.empty())
    o << "; ember-objdump of " << opts.source << "\n";
  o << "; ISA " << isa.name() << " " << isa.version() << ", sha256 " << toHex(bin.isa_hash) << "\n";
  o << "; " << isa.encoding().instruction_bits << "-bit instructions, " << bin.code.size()
    << " instructions, " << bin.constants.size() << " constant bytes\n";
  if (!opts.sections.empty()) {
    o << ";\n; Sections (crc32c: the digest .ember.digest stores, checked against the "
         "contents):\n"
         ";   idx name            type        offset      size        entsize  crc32c\n";
    int i = 1;
    for (const auto& s : opts.sections) {
      char line[200], crc[64] = "-";
      if (s.has_digest)
        std::snprintf(crc, sizeof crc, "0x%08x %s", s.digest,
                      s.digestOk() ? "ok" : "MISMATCH (contents corrupted)");
      std::snprintf(line, sizeof line, ";   %-3d %-15s 0x%08x  0x%08llx  0x%08llx  %-7llu  %s\n",
                    i++, s.name.c_str(), s.type, static_cast<unsigned long long>(s.offset),
                    static_cast<unsigned long long>(s.size),
                    static_cast<unsigned long long>(s.entsize), crc);
      o << line;
    }
  }
  o << "\n";
}

void tables(std::ostringstream& o, const Binary& bin) {
  if (!bin.memmap.empty())
    o << "; Memory map (DRAM window offsets)\n";
  for (const auto& r : bin.memmap)
    o << ".region " << quote(r.name) << " " << toString(r.kind) << " " << hexU(r.dram_offset) << " "
      << hexU(r.size_bytes) << "   ; end " << hexU(r.dram_offset + r.size_bytes) << "\n";
  if (!bin.memmap.empty())
    o << "\n";
  if (!bin.io.empty())
    o << "; I/O table\n";
  for (const auto& e : bin.io) {
    o << ".io " << toString(e.dir) << " " << quote(e.name) << " dtype=" << toString(e.dtype)
      << " layout=" << toString(e.layout) << " shape=";
    for (std::size_t i = 0; i < e.shape.size(); ++i)
      o << (i ? "x" : "") << e.shape[i];
    o << " scale=" << formatDouble(e.scale) << " zp=" << e.zero_point
      << " offset=" << hexU(e.dram_offset) << " size=" << e.size_bytes;
    if (e.layout == Layout::Packed)
      o << " pack=" << e.packing.pixels << ":" << e.packing.stride << ":" << e.packing.pad_left
        << ":" << e.packing.width;
    if (e.layout == Layout::Patches) {
      const IoPatches& p = e.patches;
      o << " patch=" << p.kernel_h << ":" << p.kernel_w << ":" << p.stride_h << ":" << p.stride_w
        << ":" << p.dilation_h << ":" << p.dilation_w << ":" << p.pad_top << ":" << p.pad_left
        << ":" << p.out_h << ":" << p.out_w;
    }
    o << "\n";
  }
  if (!bin.io.empty())
    o << "\n";
  if (!bin.constants.empty())
    o << "; Constants (" << bin.constants.size() << " bytes)\n";
  const auto& c = bin.constants;
  for (std::size_t i = 0; i < c.size();) {
    std::size_t z = i;
    while (z < c.size() && c[z] == 0)
      ++z;
    if (z - i >= 32) { // long runs of zeros print as .zero
      o << ".zero " << (z - i) << "   ; " << hexU(i) << "\n";
      i = z;
      continue;
    }
    o << ".byte ";
    for (std::size_t k = i; k < i + 16 && k < c.size(); ++k) {
      char b[8];
      std::snprintf(b, sizeof b, "%s0x%02x", k == i ? "" : ", ", c[k]);
      o << b;
    }
    o << "   ; " << hexU(i) << "\n";
    i += 16;
  }
  if (!bin.constants.empty())
    o << "\n";
}

} // namespace

std::string disassemble(const Binary& bin, const IsaDescription& isa, const DisasmOptions& opts) {
  std::ostringstream o;
  if (opts.show_summary)
    header(o, bin, isa, opts);
  o << ".isa " << quote(bin.isa_name) << "\n\n";
  tables(o, bin);
  o << "; Code\n";
  std::size_t next_range = 0;
  bool in_node = false;
  for (std::size_t i = 0; i < bin.code.size(); ++i) {
    if (in_node && next_range > 0) {
      const DebugRange& r = bin.debug[next_range - 1];
      if (i == std::size_t(r.first) + r.count) {
        in_node = false;
        if (next_range >= bin.debug.size() || bin.debug[next_range].first != i)
          o << ".endnode\n";
      }
    }
    if (next_range < bin.debug.size() && bin.debug[next_range].first == i) {
      o << ".node " << quote(bin.debug[next_range].node) << "\n";
      ++next_range;
      in_node = true;
    }
    o << "  " << formatInstruction(bin.code[i]);
    if (opts.show_encoding) {
      o << "   ; " << i << ": " << hexBytes(bin.code[i].encode()) << " ["
        << engineName(bin.code[i].engine()) << "]";
    }
    o << "\n";
  }
  return o.str();
}

} // namespace ember::isa
