// ember-as: NPU assembly text -> ELF binary.
#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "ember/isa/error.h"

#include <fstream>
#include <iostream>
#include <sstream>
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
  try {
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
        throw Error("ember-as", "", "unexpected argument \"" + s + "\" (see --help)");
    }
    if (in.empty() || out.empty()) {
      std::cerr << kUsage;
      return 2;
    }
    IsaDescription isa = IsaDescription::loadDefault(isa_path);
    std::ifstream f(in, std::ios::binary);
    if (!f)
      throw Error(in, "", "cannot open file");
    std::ostringstream ss;
    ss << f.rdbuf();
    Binary bin = assemble(ss.str(), isa, in);
    writeElf(out, bin, isa);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "ember-as: " << e.what() << "\n";
    return 1;
  }
}
