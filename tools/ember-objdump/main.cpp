// ember-objdump: Ember ELF binary -> assembly text (re-assembles with ember-as).
#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "ember/isa/error.h"
#include "ember/support/ToolMain.h"

#include <cstdio>
#include <iostream>
#include <string>

using namespace ember::isa;

namespace {
const char* kUsage =
    "usage: ember-objdump IN.elf [--isa FILE.json] [--no-encoding]\n"
    "Prints sections, memory map, I/O table, constants and the disassembly with debug names\n"
    "to stdout. Everything that is not an instruction or directive is a ';' comment, so the\n"
    "output re-assembles with ember-as to the same bytes.\n"
    "--isa  description to use; default $EMBER_ISA, else the source tree's isa/ember-v1.json.\n"
    "The section list shows each section's CRC-32C digest; a file whose digests do not\n"
    "match is refused (each failing section named on stderr), exit status 1.\n";

std::string toHex32(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}
} // namespace

int main(int argc, char** argv) {
  return ember::toolMain("ember-objdump", [&] {
    std::string in, isa_path;
    DisasmOptions opts;
    for (int i = 1; i < argc; ++i) {
      std::string s = argv[i];
      if (s == "-h" || s == "--help") {
        std::cout << kUsage;
        return 0;
      }
      if (s == "--isa" && i + 1 < argc)
        isa_path = argv[++i];
      else if (s == "--no-encoding")
        opts.show_encoding = false;
      else if (in.empty() && !s.empty() && s[0] != '-')
        in = s;
      else
        throw ember::UsageError("unexpected argument \"" + s + "\"");
    }
    if (in.empty()) {
      std::cerr << kUsage;
      return 2;
    }
    IsaDescription isa = IsaDescription::loadDefault(isa_path);
    std::vector<std::uint8_t> data = readFileBytes(in);
    opts.sections = listSections(data.data(), data.size(), in);
    opts.source = in;
    // Name every section whose digest fails before the reader refuses the file.
    for (const auto& s : opts.sections)
      if (s.has_digest && !s.digestOk())
        std::cerr << "ember-objdump: " << in << ": section " << s.name << ": CRC-32C "
                  << toHex32(s.computed) << ", .ember.digest says " << toHex32(s.digest)
                  << ": digest check FAILED\n";
    Binary bin = parseElf(data.data(), data.size(), isa, in);
    std::cout << disassemble(bin, isa, opts);
    return 0;
  });
}
