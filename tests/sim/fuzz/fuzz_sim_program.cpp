// Fuzz target: the simulator on random legal programs. The bytes choose the description
// (first byte: ember-v1 or the large variant) and drive the program generator
// (tests/progen). The program must survive the ELF container unchanged and run without
// a crash to completion, or stop with a clean cycle-budget fault (the budget is kept
// small so that every input runs fast); any other fault of a legal program is a bug.
#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/isa/error.h"
#include "ember/progen/ProgramGenerator.h"
#include "ember/sim/Simulator.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#ifndef EMBER_SOURCE_DIR
#define EMBER_SOURCE_DIR "."
#endif

namespace {

const ember::sim::Simulator& simulator(bool large) {
  static const ember::sim::Simulator ref(
      ember::isa::IsaDescription::loadFile(EMBER_SOURCE_DIR "/isa/ember-v1.json"));
  static const ember::sim::Simulator big(
      ember::isa::IsaDescription::loadFile(EMBER_SOURCE_DIR "/isa/examples/ember-v1-large.json"));
  return large ? big : ref;
}

[[noreturn]] void bug(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_sim_program: %s: %s\n", what, detail.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ember;
  const bool large = size > 0 && (data[0] & 1);
  const sim::Simulator& s = simulator(large);
  isa::Binary bin;
  try {
    bin = progen::generate(s.isa(), size ? data + 1 : data, size ? size - 1 : 0);
    std::vector<std::uint8_t> img = isa::serializeElf(bin, s.isa());
    if (!(isa::parseElf(img.data(), img.size(), s.isa(), "gen.elf") == bin))
      bug("container", "the generated binary does not survive serializeElf/parseElf");
  } catch (const isa::Error& e) {
    bug("generator", e.what()); // generated programs are legal by construction
  }
  platform::Options o;
  o.cycle_budget = 200000;
  o.record_slices = false;
  platform::Result r = s.run(bin, {}, o);
  const auto& rep = r.report;
  if (rep.fault) {
    if (rep.fault->kind != platform::FaultKind::CycleBudget || rep.fault->message().empty())
      bug("fault", rep.fault->message());
  } else if (rep.retired != rep.instructions || rep.retired != bin.code.size()) {
    bug("completion", std::to_string(rep.retired) + " of " + std::to_string(rep.instructions) +
                          " instructions retired");
  }
  return 0;
}
