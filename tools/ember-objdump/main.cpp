// ember-objdump: Ember ELF binary -> assembly text (re-assembles with ember-as); a
// package (docs/package.md) -> its entries, segments and placement.
#include "ember/cli/Cli.h"
#include "ember/driver/Package.h"
#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "ember/isa/error.h"
#include "ember/isa/package.h"

#include <cstdio>
#include <iostream>
#include <string>

using namespace ember::isa;

namespace {
const char* kDescription =
    "ember-objdump: prints an Ember ELF binary as assembly text (re-assembles with ember-as),\n"
    "or a package's entries, segments and placement.";

const char* kFooter =
    R"(Prints sections, memory map, I/O table, constants and the disassembly with debug names
to stdout. Everything that is not an instruction or directive is a ';' comment, so the
output re-assembles with ember-as to the same bytes.
The section list shows each section's CRC-32C digest; a file whose digests do not match
is refused (each failing section named on stderr).
Given a package (emberc's output for a model the NPU cannot run whole), lists its
entries (size, CRC-32C), its segments and the placement of every node, as ';'
comments; --segment N adds the disassembly of NPU segment N.

examples:
  ember-objdump IN.elf [--isa FILE.json] [--no-encoding]
  ember-objdump PACKAGE [--isa FILE.json] [--segment N] [--no-encoding]

exit status: 0 done; 1 bad input (unreadable or malformed binary or package, a digest
that does not match, no such segment); 2 a bad command line.)";

std::string toHex32(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

/// Every line of `text` as a ';' comment.
std::string commented(const std::string& text) {
  std::string out = "; ";
  for (char c : text) {
    out += c;
    if (c == '\n')
      out += "; ";
  }
  return out.substr(0, out.size() - 2);
}

int dumpPackage(const std::vector<std::uint8_t>& data, const std::string& in,
                const IsaDescription& isa, long segment, DisasmOptions opts) {
  const Package pkg = parsePackage(data.data(), data.size(), in);
  std::printf("; package %s: format version %u, %zu entries, description hash %s\n", in.c_str(),
              kPackageVersion, pkg.entries.size(), toHex(pkg.isa_hash).c_str());
  for (const PackageEntry& e : pkg.entries)
    std::printf(";   %-20s %10zu bytes  CRC-32C %s\n", e.name.c_str(), e.data.size(),
                toHex32(crc32c(e.data.data(), e.data.size())).c_str());
  const ember::partition::Plan plan =
      ember::partition::parsePackage(data.data(), data.size(), isa, in);
  std::fputs(commented(ember::partition::formatPlacementReport(plan)).c_str(), stdout);
  if (segment < 0)
    return 0;
  if (std::size_t(segment) >= plan.segments.size() || !plan.segments[std::size_t(segment)].npu)
    throw ember::Error(in, "--segment " + std::to_string(segment) + ": no such NPU segment");
  opts.source = in + ":seg" + std::to_string(segment) + ".elf";
  std::cout << disassemble(plan.segments[std::size_t(segment)].npu->binary, isa, opts);
  return 0;
}
} // namespace

int main(int argc, char** argv) {
  CLI::App app(kDescription, "ember-objdump");
  ember::cli::setup(app, ember::cli::Description::Selectable);
  std::string in, isa_path;
  long segment = -1;
  bool noEncoding = false;
  app.add_option("IN", in, "the binary (ELF) or package")->type_name("IN.elf|PACKAGE")->required();
  app.add_option("--isa", isa_path,
                 "the NPU description (default: $EMBER_ISA, else the installed\n"
                 "or source tree's isa/ember-v1.json)")
      ->type_name("FILE.json");
  app.add_option("--segment", segment, "packages: add the disassembly of NPU segment N")
      ->type_name("N")
      ->check(ember::cli::wholeNumber(0, 999999));
  app.add_flag("--no-encoding", noEncoding,
               "leave out the comment with each instruction's index and hex word");
  app.footer(kFooter);
  return ember::cli::run(app, argc, argv, [&] {
    DisasmOptions opts;
    opts.show_encoding = !noEncoding;
    IsaDescription isa = IsaDescription::loadDefault(isa_path);
    std::vector<std::uint8_t> data = readFileBytes(in);
    if (isPackageImage(data.data(), data.size()))
      return dumpPackage(data, in, isa, segment, opts);
    if (segment >= 0)
      throw ember::UsageError("--segment is for packages; " + in + " is not one");
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
