// ember-as: NPU assembly text -> ELF binary.
#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "ember/isa/error.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/ToolMain.h"

#include <iostream>
#include <string>

using namespace ember::isa;

namespace {
const char* kUsage =
    "usage: ember-as IN.s -o OUT.elf [--isa FILE.json]\n"
    "Assembles NPU assembly (instructions and .isa/.region/.io/.byte/.word/.zero/.node\n"
    "directives, see docs/isa.md) into an Ember ELF binary.\n"
    "--isa  description to use; default $EMBER_ISA, else the source tree's isa/ember-v1.json.\n";
}

int main(int argc, char** argv) {
  return ember::toolMain("ember-as", [&] {
    std::string in, out, isa_path;
    for (int i = 1; i < argc; ++i) {
      std::string s = argv[i];
      if (s == "-h" || s == "--help") {
        std::cout << kUsage;
        return 0;
      }
      if ((s == "-o" || s == "--isa") && i + 1 < argc)
        (s == "-o" ? out : isa_path) = argv[++i];
      else if (in.empty() && !s.empty() && s[0] != '-')
        in = s;
      else
        throw ember::UsageError("unexpected argument \"" + s + "\"");
    }
    if (in.empty() || out.empty()) {
      std::cerr << kUsage;
      return 2;
    }
    ember::checkOutputFile(out, "-o");
    ember::checkNotSameFile({out}, {in, isa_path});
    IsaDescription isa = IsaDescription::loadDefault(isa_path);
    Binary bin = assemble(ember::readFileBytes(in), isa, in);
    writeElf(out, bin, isa);
    return 0;
  });
}
