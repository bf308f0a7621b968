#pragma once
/// \file
/// What the co-simulation tests (cosim_test.cpp, cosim_pair_test.cpp) share: the
/// description their Verilated model was generated from (EMBER_RTL_ISA_JSON) and a
/// program as the job the harnesses run.

#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/platform/Job.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::rtltest {

/// The description of this executable's Verilated model, loaded once.
inline const isa::IsaDescription& isa() {
  static isa::IsaDescription d = isa::IsaDescription::loadFile(EMBER_RTL_ISA_JSON);
  return d;
}

/// `bin` as a job: a compiled binary (one with a memory map) with its constants placed as
/// the runtime places them; a bare instruction stream as its encoded words alone.
inline platform::Job jobOf(const isa::Binary& bin) {
  if (!bin.memmap.empty())
    return platform::makeJob(isa(), bin, {});
  platform::Job job;
  const unsigned W = isa().instructionBytes();
  job.text.resize(bin.code.size() * W);
  for (std::size_t i = 0; i < bin.code.size(); ++i)
    bin.code[i].encodeInto(job.text.data() + i * W);
  return job;
}

/// Runs `job` on the SystemC model and on this executable's Verilated model and reports
/// the first difference ("" when equal): fault record, every instruction's cycles, the
/// counters, the layer rows, and for a race-free program (`*raced` says whether it was
/// one) the DRAM window (cosim_test.cpp).
std::string cosim(platform::Job job, std::uint64_t budget = 0, bool* raced = nullptr);
/// cosim() of the assembly program `text`, DRAM starting with `image`.
std::string cosimAsm(const std::string& text, std::vector<std::uint8_t> image = {});
/// `n` pseudo-random bytes (xorshift from `seed`).
std::vector<std::uint8_t> randomBytes(std::size_t n, unsigned seed);

} // namespace ember::rtltest
