// Helpers of the simulator tests: descriptions, assembling, running, DRAM access.
#pragma once

#include "ember/isa/assembler.h"
#include "ember/isa/description.h"
#include "ember/sim/Simulator.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace simtest {

inline const ember::isa::IsaDescription& refIsa() {
  static ember::isa::IsaDescription d =
      ember::isa::IsaDescription::loadFile(EMBER_SOURCE_DIR "/isa/ember-v1.json");
  return d;
}

inline const ember::isa::IsaDescription& largeIsa() {
  static ember::isa::IsaDescription d =
      ember::isa::IsaDescription::loadFile(EMBER_SOURCE_DIR "/isa/examples/ember-v1-large.json");
  return d;
}

/// A job from assembly text with `image` as the initial DRAM.
inline ember::platform::Job makeJob(const ember::isa::IsaDescription& isa, const std::string& text,
                                    std::vector<std::uint8_t> image = {}) {
  ember::isa::Binary bin = ember::isa::assemble(text, isa, "test.s");
  ember::platform::Job job;
  const unsigned W = isa.instructionBytes();
  job.text.resize(bin.code.size() * W);
  for (std::size_t i = 0; i < bin.code.size(); ++i)
    bin.code[i].encodeInto(job.text.data() + i * W);
  job.dram = std::move(image);
  job.debug = bin.debug;
  return job;
}

#ifdef EMBER_SIMTEST_COSIM
/// rtl.simtests.*: every program a simulator test runs through run() also runs on the
/// Verilated RTL of its description (when the build has one) and must agree.
void cosimCheck(const ember::isa::IsaDescription& isa, const ember::platform::Job& job,
                const ember::platform::Options& opts, const ember::platform::Result& r);
#endif

inline ember::platform::Result run(const ember::isa::IsaDescription& isa, const std::string& text,
                                   std::vector<std::uint8_t> image = {},
                                   const ember::platform::Options& opts = {}) {
  ember::sim::Simulator sim(isa);
  ember::platform::Job job = makeJob(isa, text, std::move(image));
  ember::platform::Result r = sim.run(job, opts);
#ifdef EMBER_SIMTEST_COSIM
  cosimCheck(isa, job, opts, r);
#endif
  return r;
}

inline std::vector<std::uint8_t> randomBytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v)
    b = static_cast<std::uint8_t>(rng());
  return v;
}

inline std::int32_t i32At(const ember::platform::DramImage& m, std::size_t byte) {
  std::int32_t v;
  m.read(byte, reinterpret_cast<std::uint8_t*>(&v), 4);
  return v;
}
inline std::int32_t i32At(const std::vector<std::uint8_t>& m, std::size_t byte) {
  std::int32_t v;
  std::memcpy(&v, m.data() + byte, 4);
  return v;
}
inline void putI32(std::vector<std::uint8_t>& m, std::size_t byte, std::int32_t v) {
  std::memcpy(m.data() + byte, &v, 4);
}

/// Integer timing value of an instruction (the description stores numbers).
inline std::uint64_t tim(const ember::isa::IsaDescription& isa, const char* insn, const char* key) {
  return static_cast<std::uint64_t>(isa.findInstruction(insn)->timingOf(key));
}

} // namespace simtest
