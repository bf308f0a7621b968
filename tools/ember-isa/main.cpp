// ember-isa: check an NPU description, generate headers and docs from it.
#include "ember/cli/Cli.h"
#include "ember/isa/binary.h"
#include "ember/isa/codegen.h"
#include "ember/isa/description.h"
#include "ember/isa/error.h"
#include "ember/isa/system.h"
#include "ember/support/AtomicFile.h"

#include <cstring>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

using namespace ember::isa;

namespace {

const char* kDescription =
    "ember-isa: checks an NPU description and generates headers, SystemVerilog and docs from it.";

const char* kFooter = R"(examples:
  ember-isa check [FILE.json] [--isa FILE.json]
  ember-isa check isa/systems/ember-v1-x4.json     (a system of NPUs, docs/systems.md)
  ember-isa gen [--isa FILE.json] [--c-header OUT.h] [--sv-package OUT.sv]
                [--sv-decoder OUT.sv] [--sv-regs OUT.sv]
                [--md-tables OUT.md] [--check-md DOC.md] [--update-md DOC.md]
`ember-isa check --help` and `ember-isa gen --help` list each command's options.

exit status: 0 done; 1 bad input (unreadable, malformed or inconsistent description, a
generator that refuses it; gen --check-md: tables that differ); 2 a bad command line.)";

/// Whether `path` holds a system of NPUs (docs/systems.md) rather than one description:
/// a readable JSON object with "devices". Anything else is left to the description loader,
/// whose errors name the file.
bool isSystemFile(const std::string& path) {
  try {
    return SystemDescription::isSystemDocument(
        nlohmann::json::parse(ember::readRegularFile(path, IsaDescription::kMaxDescriptionBytes)));
  } catch (const std::exception&) {
    return false;
  }
}

std::string readText(const std::string& path) {
  return ember::readFileBytes(path);
}

void writeText(const std::string& path, const std::string& text) {
  writeFileAtomic(path, text.data(), text.size());
}

struct Args {
  std::string cmd, isa, c_header, sv_package, sv_decoder, sv_regs, md_tables, check_md, update_md;
};

/// Declares ember-isa's commands and options on `app`; parsing fills `a`.
void declareOptions(CLI::App& app, Args& a, std::string& checkFile) {
  app.add_option("--isa", a.isa,
                 "the description to use (default: $EMBER_ISA, else the installed\n"
                 "or source tree's isa/ember-v1.json)")
      ->type_name("FILE.json");
  // At most one command; none is refused after parsing, so that an unknown argument is
  // named first.
  app.require_subcommand(0, 1);
  CLI::App* check = app.add_subcommand(
      "check", "validate a description and print a summary (peak MAC/cycle, SRAM\n"
               "sizes, DRAM bytes/cycle, roofline ridge point), or a system of NPUs\n"
               "(isa/systems/*.json: its devices, DRAMs and host links)");
  check->add_option("FILE", checkFile, "the description (instead of --isa)")
      ->type_name("FILE.json");
  check->fallthrough();
  CLI::App* g = app.add_subcommand(
      "gen", "generate the firmware C header, the SystemVerilog parameter package,\n"
             "decoder (module ember_decode) and register block (module ember_regs),\n"
             "and the Markdown tables of docs/isa.md");
  g->fallthrough();
  g->add_option("--c-header", a.c_header, "the firmware's C header")->type_name("OUT.h");
  g->add_option("--sv-package", a.sv_package, "the SystemVerilog parameter package")
      ->type_name("OUT.sv");
  g->add_option("--sv-decoder", a.sv_decoder, "the decoder (module ember_decode)")
      ->type_name("OUT.sv");
  g->add_option("--sv-regs", a.sv_regs, "the register block (module ember_regs)")
      ->type_name("OUT.sv");
  g->add_option("--md-tables", a.md_tables, "the Markdown tables of docs/isa.md")
      ->type_name("OUT.md");
  g->add_option("--check-md", a.check_md, "exit 1 if DOC.md's generated tables differ")
      ->type_name("DOC.md");
  g->add_option("--update-md", a.update_md, "rewrite DOC.md's generated tables in place")
      ->type_name("DOC.md");
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
  CLI::App app(kDescription, "ember-isa");
  ember::cli::setup(app, ember::cli::Description::Selectable);
  Args a;
  std::string checkFile;
  declareOptions(app, a, checkFile);
  app.footer(kFooter);
  return ember::cli::run(app, argc, argv, [&] {
    if (app.get_subcommands().empty())
      throw ember::UsageError("no command given (check or gen)");
    a.cmd = app.get_subcommands().front()->get_name();
    if (!checkFile.empty()) {
      if (!a.isa.empty())
        throw ember::UsageError("give the description as FILE.json or with --isa, not both");
      a.isa = checkFile;
    }
    for (const std::string* out :
         {&a.c_header, &a.sv_package, &a.sv_decoder, &a.sv_regs, &a.md_tables})
      if (!out->empty())
        ember::checkOutputFile(*out, "");
    ember::checkNotSameFile({a.c_header, a.sv_package, a.sv_decoder, a.sv_regs, a.md_tables},
                            {a.isa, a.check_md});
    if (a.cmd == "check" && !a.isa.empty() && isSystemFile(a.isa)) {
      std::cout << summarizeSystem(SystemDescription::loadFile(a.isa));
      return 0;
    }
    IsaDescription isa = IsaDescription::loadDefault(a.isa);
    if (a.cmd == "check") {
      std::cout << summarize(isa);
      return 0;
    }
    return gen(a, isa);
  });
}
