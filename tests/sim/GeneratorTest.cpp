// The random-program generator (tests/progen): its programs are legal on both shipped
// descriptions (they run to completion on the simulator), deterministic, and cover every
// instruction of the description.
#include "SimTestUtil.h"

#include "ember/isa/assembler.h"
#include "ember/progen/ProgramGenerator.h"

#include <gtest/gtest.h>

#include <set>

using namespace simtest;

namespace {

void expectLegal(const ember::isa::IsaDescription& isa, int seeds) {
  ember::sim::Simulator sim(isa);
  std::set<std::string> seen;
  std::size_t tokens = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    ember::isa::Binary bin = ember::progen::generate(isa, std::uint64_t(seed));
    for (const auto& in : bin.code) {
      seen.insert(in.name());
      for (const char* t : {"pop_prev", "pop_next", "push_prev", "push_next"})
        tokens += in.has(t) && in.get(t);
    }
    ember::platform::Options o;
    o.record_slices = false;
    ember::platform::Result r = sim.run(bin, {}, o);
    ASSERT_TRUE(r.ok()) << isa.name() << " seed " << seed << ": " << r.report.fault->message()
                        << "\n"
                        << ember::isa::disassemble(bin, isa);
    EXPECT_EQ(r.report.retired, bin.code.size());
  }
  for (const auto& d : isa.instructions())
    EXPECT_TRUE(seen.count(d.name)) << d.name << " never generated";
  EXPECT_GT(tokens, std::size_t(seeds)); // token traffic, not just independent engines
}

TEST(SimProgen, ProgramsRunToCompletionOnTheReference) {
  expectLegal(refIsa(), 150);
}

TEST(SimProgen, ProgramsRunToCompletionOnTheLargeVariant) {
  expectLegal(largeIsa(), 100);
}

TEST(SimProgen, SameSeedSameProgramAnyBytesAProgram) {
  const auto& isa = refIsa();
  EXPECT_EQ(ember::progen::generate(isa, std::uint64_t(42)),
            ember::progen::generate(isa, std::uint64_t(42)));
  EXPECT_FALSE(ember::progen::generate(isa, std::uint64_t(42)) ==
               ember::progen::generate(isa, std::uint64_t(43)));
  // No bytes at all: the prologue and the halt.
  ember::isa::Binary empty = ember::progen::generate(isa, nullptr, 0);
  EXPECT_GE(empty.code.size(), 1u);
  EXPECT_EQ(empty.code.back().desc().cls->name, "halt");
  const std::vector<std::uint8_t> ff(3000, 0xff);
  ember::isa::Binary full = ember::progen::generate(isa, ff.data(), ff.size());
  ember::sim::Simulator sim(isa);
  EXPECT_TRUE(sim.run(full, {}).ok());
}

} // namespace
