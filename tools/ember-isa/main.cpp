// ember-isa: check an NPU description, generate headers and docs from it.
#include "ember/isa/binary.h"
#include "ember/isa/codegen.h"
#include "ember/isa/description.h"
#include "ember/isa/error.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/ToolMain.h"

#include <cstring>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

using namespace ember::isa;

namespace {

const char* kUsage =
    "usage: ember-isa check [FILE.json] [--isa FILE.json]\n"
    "       ember-isa gen [--isa FILE.json] [--c-header OUT.h] [--sv-package OUT.sv]\n"
    "                     [--sv-decoder OUT.sv] [--sv-regs OUT.sv]\n"
    "                     [--md-tables OUT.md] [--check-md DOC.md] [--update-md DOC.md]\n"
    "\n"
    "check      validate a description and print a summary (peak MAC/cycle, SRAM sizes,\n"
    "           DRAM bytes/cycle, roofline ridge point).\n"
    "gen        generate the firmware C header, the SystemVerilog parameter package, decoder\n"
    "           (module ember_decode) and register block (module ember_regs), and the\n"
    "           Markdown tables of docs/isa.md; --check-md fails if DOC.md's generated\n"
    "           tables differ, --update-md rewrites them in place.\n"
    "--isa      description to use; default $EMBER_ISA, else the source tree's\n"
    "           isa/ember-v1.json.\n";

std::string readText(const std::string& path) {
  return ember::readFileBytes(path);
}

void writeText(const std::string& path, const std::string& text) {
  writeFileAtomic(path, text.data(), text.size());
}

struct Args {
  std::string cmd, isa, c_header, sv_package, sv_decoder, sv_regs, md_tables, check_md, update_md;
};

bool parseArgs(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc)
        throw ember::UsageError(s + " needs a value");
      out = argv[++i];
    };
    if (s == "-h" || s == "--help") {
      std::cout << kUsage;
      return false;
    }
    if (s == "--isa")
      value(a.isa);
    else if (s == "--c-header")
      value(a.c_header);
    else if (s == "--sv-package")
      value(a.sv_package);
    else if (s == "--sv-decoder")
      value(a.sv_decoder);
    else if (s == "--sv-regs")
      value(a.sv_regs);
    else if (s == "--md-tables")
      value(a.md_tables);
    else if (s == "--check-md")
      value(a.check_md);
    else if (s == "--update-md")
      value(a.update_md);
    else if (a.cmd.empty() && s[0] != '-')
      a.cmd = s;
    else if (a.cmd == "check" && a.isa.empty() && s[0] != '-')
      a.isa = s;
    else
      throw ember::UsageError("unexpected argument \"" + s + "\"");
  }
  return true;
}

int gen(const Args& a, const IsaDescription& isa) {
  // Everything is generated before the first file is written, so a generator that
  // rejects the description leaves no output behind.
  std::vector<std::pair<std::string, std::string>> outs;
  if (!a.c_header.empty())
    outs.emplace_back(a.c_header, generateCHeader(isa));
  if (!a.sv_package.empty())
    outs.emplace_back(a.sv_package, generateSvPackage(isa));
  if (!a.sv_decoder.empty())
    outs.emplace_back(a.sv_decoder, generateSvDecoder(isa));
  if (!a.sv_regs.empty())
    outs.emplace_back(a.sv_regs, generateSvRegs(isa));
  for (const auto& [path, text] : outs)
    writeText(path, text);
  std::string tables = generateMarkdownTables(isa);
  if (!a.md_tables.empty())
    writeText(a.md_tables, tables);
  if (!a.update_md.empty()) {
    std::string doc = readText(a.update_md);
    std::string out = spliceMarkdown(doc, tables, a.update_md);
    if (out != doc)
      writeText(a.update_md, out);
  }
  if (!a.check_md.empty()) {
    std::string committed = extractMarkdown(readText(a.check_md), a.check_md);
    if (committed != tables) {
      std::cerr << a.check_md << ": the generated tables differ from " << isa.file()
                << "; run: ember-isa gen --isa " << isa.file() << " --update-md " << a.check_md
                << "\n";
      return 1;
    }
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  return ember::toolMain("ember-isa", [&] {
    Args a;
    if (!parseArgs(argc, argv, a))
      return 0;
    if (a.cmd != "check" && a.cmd != "gen") {
      std::cerr << kUsage;
      return 2;
    }
    for (const std::string* out :
         {&a.c_header, &a.sv_package, &a.sv_decoder, &a.sv_regs, &a.md_tables})
      if (!out->empty())
        ember::checkOutputFile(*out, "");
    ember::checkNotSameFile({a.c_header, a.sv_package, a.sv_decoder, a.sv_regs, a.md_tables},
                            {a.isa, a.check_md});
    IsaDescription isa = IsaDescription::loadDefault(a.isa);
    if (a.cmd == "check") {
      std::cout << summarize(isa);
      return 0;
    }
    return gen(a, isa);
  });
}
