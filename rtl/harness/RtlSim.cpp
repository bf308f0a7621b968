// libember_rtlsim: finds the Verilated model of a description by its hash (the model's
// isa_hash_o port) and runs jobs on it.
#include "ember/rtl/RtlSim.h"

#include "RtlModels.h"
#include "ember/isa/error.h"
#include "ember/isa/registers.h"

namespace ember::rtl {

std::vector<std::string> builtModels() {
  std::vector<std::string> names;
  for (const auto& m : detail::models())
    names.push_back(m.name);
  return names;
}

RtlSimulator::RtlSimulator(isa::IsaDescription isa) : isa_(std::move(isa)) {
  const auto& ms = detail::models();
  for (std::size_t i = 0; i < ms.size(); ++i)
    if (ms[i].hash() == isa::isaHash64(isa_))
      model_ = static_cast<int>(i);
  if (model_ < 0) {
    std::string built;
    for (const auto& n : builtModels())
      built += (built.empty() ? "" : ", ") + n;
    throw isa::Error("<rtl>", isa_.name(),
                     "this build has no Verilated RTL of this description (it has: " +
                         (built.empty() ? std::string("none") : built) +
                         "); a shipped one is added to the build with the CMake list "
                         "EMBER_RTL_MODELS (scripts/test.sh configures all), another one "
                         "verilated as docs/rtl/npu.md section 5.3 shows");
  }
}

RtlRun RtlSimulator::run(const platform::Job& job, const platform::Options& opts) const {
  std::uint64_t budget = opts.cycle_budget;
  if (budget == 0)
    budget = platform::defaultCycleBudget(isa_, job);
  budget = std::min(budget, platform::kMaxCycleBudget);
  RtlResult r = detail::models()[std::size_t(model_)].run(isa_, job, opts, budget);
  RtlRun out;
  out.result.report = std::move(r.report);
  out.result.dram = std::move(r.dram);
  out.max_inflight_bytes = r.max_inflight_bytes;
  out.overrun = r.overrun;
  out.bus_conflict = r.bus_conflict;
  return out;
}

} // namespace ember::rtl
