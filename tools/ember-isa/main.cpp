// ember-isa: check an NPU description, generate headers and docs from it.
#include "ember/cli/Cli.h"
#include "ember/isa/codegen.h"
#include "ember/isa/description.h"
#include "ember/isa/system.h"
#include "ember/support/Error.h"

#include <iostream>
#include <string>

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

struct Args {
  std::string isa;
  GenerateRequest gen;
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
             "and the Markdown tables of docs/isa/tables.md");
  g->fallthrough();
  g->add_option("--c-header", a.gen.cHeader, "the firmware's C header")->type_name("OUT.h");
  g->add_option("--sv-package", a.gen.svPackage, "the SystemVerilog parameter package")
      ->type_name("OUT.sv");
  g->add_option("--sv-decoder", a.gen.svDecoder, "the decoder (module ember_decode)")
      ->type_name("OUT.sv");
  g->add_option("--sv-regs", a.gen.svRegs, "the register block (module ember_regs)")
      ->type_name("OUT.sv");
  g->add_option("--md-tables", a.gen.mdTables, "the Markdown tables of docs/isa/tables.md")
      ->type_name("OUT.md");
  g->add_option("--check-md", a.gen.checkMd, "exit 1 if DOC.md's generated tables differ")
      ->type_name("DOC.md");
  g->add_option("--update-md", a.gen.updateMd, "rewrite DOC.md's generated tables in place")
      ->type_name("DOC.md");
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
    const bool check = app.get_subcommands().front()->get_name() == "check";
    if (!checkFile.empty()) {
      if (!a.isa.empty())
        throw ember::UsageError("give the description as FILE.json or with --isa, not both");
      a.isa = checkFile;
    }
    // The description the run reads, $EMBER_ISA or the default when --isa is not given:
    // no output may land on it.
    const std::string description = IsaDescription::resolvedPath(a.isa);
    checkGenerateOutputs(a.gen, description);
    if (check && SystemDescription::isSystemFile(description)) {
      std::cout << summarizeSystem(SystemDescription::loadFile(description));
      return 0;
    }
    const IsaDescription isa = IsaDescription::loadDefault(description);
    if (check) {
      std::cout << summarize(isa);
      return 0;
    }
    const std::string difference = generateFiles(a.gen, isa);
    if (!difference.empty())
      std::cerr << difference << "\n";
    return difference.empty() ? 0 : 1;
  });
}
