// ember-as: NPU assembly text -> ELF binary.
#include "ember/cli/Cli.h"
#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "ember/isa/error.h"
#include "ember/support/AtomicFile.h"

#include <string>

using namespace ember::isa;

namespace {
const char* kDescription =
    "ember-as: assembles NPU assembly (instructions and .isa/.region/.io/.byte/.word/.zero/.node\n"
    "directives, see docs/isa.md) into an Ember ELF binary.";

const char* kFooter = R"(example:
  ember-as prog.s -o prog.elf && ember-sim prog.elf

exit status: 0 done; 1 bad input (unreadable or malformed source or description, an
output path that is a folder or the input); 2 a bad command line.)";
} // namespace

int main(int argc, char** argv) {
  CLI::App app(kDescription, "ember-as");
  ember::cli::setup(app, ember::cli::Description::Selectable);
  std::string in, out, isa_path;
  app.add_option("IN", in, "the assembly source")->type_name("IN.s")->required();
  app.add_option("-o", out, "the binary to write")->type_name("OUT.elf")->required();
  app.add_option("--isa", isa_path,
                 "the NPU description (default: $EMBER_ISA, else the installed\n"
                 "or source tree's isa/ember-v1.json)")
      ->type_name("FILE.json");
  app.footer(kFooter);
  return ember::cli::run(app, argc, argv, [&] {
    ember::checkOutputFile(out, "-o");
    ember::checkNotSameFile({out}, {in, IsaDescription::resolvedPath(isa_path)});
    IsaDescription isa = IsaDescription::loadDefault(isa_path);
    Binary bin = assemble(ember::readFileBytes(in), isa, in);
    writeElf(out, bin, isa);
    return 0;
  });
}
