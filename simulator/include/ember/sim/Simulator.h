// libember_sim: the cycle-accurate SystemC model of the Ember NPU (docs/simulator.md).
#pragma once

#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/platform/Job.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ember::sim {

/// A simulator for one NPU description. `run` may be called any number of times (each
/// run elaborates a fresh SystemC context); runs in one process are sequential.
class Simulator {
public:
  /// Throws isa::Error if the description's shapes do not fit this micro-architecture
  /// (e.g. act row lanes != MAC rows); the message names what disagrees.
  explicit Simulator(isa::IsaDescription isa);

  const isa::IsaDescription& isa() const { return isa_; }

  /// Runs a job. Never throws for anything the program does: faults end up in
  /// `Result::report.fault`. The SystemC context runs on a thread of its own, joined
  /// before this returns; `Options::progress` is called from that thread. Runs do not
  /// overlap (SystemC has one global context): calls from several threads take turns.
  platform::Result run(const platform::Job& job, const platform::Options& opts = {}) const;

  /// platform::makeJob + run.
  platform::Result run(const isa::Binary& bin,
                       const std::map<std::string, std::vector<std::uint8_t>>& inputs,
                       const platform::Options& opts = {}) const;

private:
  isa::IsaDescription isa_;
};

} // namespace ember::sim
