// The serving schedule's NPU cycles with every device of a system in one simulation
// (docs/systems.md section 4, "DRAM contention").
#include "ServeJoint.h"

#include "ember/platform/Job.h"
#include "ember/runtime/Runtime.h"
#include "ember/sim/System.h"
#include "ember/support/Error.h"

#include <cstdio>

namespace ember::session::detail {

bool hasSharedDram(const isa::SystemDescription& sys) {
  for (const isa::SystemDram& d : sys.drams())
    if (d.shared())
      return true;
  return false;
}

namespace {

/// The stage device `d` serves: the first that lists it (a device serves one stage in a
/// pipeline, the one stage as a replica).
size_t stageOf(const std::vector<std::vector<size_t>>& stageDevices, size_t d) {
  for (size_t k = 0; k < stageDevices.size(); ++k)
    for (size_t x : stageDevices[k])
      if (x == d)
        return k;
  return SIZE_MAX;
}

} // namespace

JointCycles jointStageCycles(const isa::SystemDescription& sys,
                             const std::vector<const isa::Binary*>& stageBinaries,
                             const std::vector<std::vector<size_t>>& stageDevices,
                             uint64_t cycleBudget, const std::string& label) {
  const size_t n = sys.devices().size();
  std::vector<sim::Arbitration> drams;
  for (const isa::SystemDram& d : sys.drams())
    drams.push_back(sim::arbitrationFromName(d.arbitration));
  std::vector<sim::DeviceJob> jobs;
  std::vector<size_t> stage(n, SIZE_MAX), index(n, SIZE_MAX);
  for (size_t d = 0; d < n; ++d) {
    stage[d] = stageOf(stageDevices, d);
    if (stage[d] == SIZE_MAX)
      continue; // serves no stage: not in the simulation
    const isa::Binary& bin = *stageBinaries.at(stage[d]);
    const isa::IsaDescription& isa = sys.devices()[d].isa;
    platform::JobInputs inputs;
    for (const isa::IoEntry& e : bin.io)
      if (e.dir == isa::IoDir::Input)
        inputs[e.name].assign(size_t(e.size_bytes), 0);
    sim::DeviceJob j;
    j.isa = &isa;
    j.options.dram_window_bytes = runtime::jobWindowBytes(bin);
    j.options.cycle_budget = cycleBudget;
    j.options.record_slices = false;
    j.job = platform::makeJob(isa, bin, inputs, j.options.dram_window_bytes, label);
    j.dram = sys.devices()[d].dram;
    index[d] = jobs.size();
    jobs.push_back(std::move(j));
  }
  const std::vector<sim::DeviceOutcome> out = sim::runTogether(std::move(jobs), drams);
  JointCycles jc;
  jc.npu.assign(n, std::vector<uint64_t>(stageDevices.size(), 0));
  jc.arbitration = jc.npu;
  for (size_t d = 0; d < n; ++d) {
    if (index[d] == SIZE_MAX)
      continue;
    const sim::DeviceOutcome& o = out[index[d]];
    if (!o.result.ok())
      throw NpuFault(label,
                     "stage " + std::to_string(stage[d]) + " on device " + sys.devices()[d].name +
                         " faulted in the joint simulation: " + o.result.report.fault->message());
    jc.npu[d][stage[d]] = o.result.report.cycles;
    jc.arbitration[d][stage[d]] = o.arbitration_stall;
  }
  return jc;
}

std::string describeContention(const isa::SystemDescription& sys, const JointCycles& joint,
                               const std::vector<std::vector<size_t>>& stageDevices,
                               const std::vector<uint64_t>& alone, nlohmann::json& j) {
  std::string out = "DRAM contention (every device's stage run together from cycle 0, one "
                    "simulation):\n";
  j = {{"model", "every device runs its stage once, all started in the same cycle"},
       {"stages", nlohmann::json::array()}};
  for (size_t k = 0; k < stageDevices.size(); ++k) {
    nlohmann::json devs = nlohmann::json::array();
    char buf[256];
    std::snprintf(buf, sizeof buf, "  stage %zu: %llu NPU cycles alone; together", k,
                  static_cast<unsigned long long>(alone.at(k)));
    out += buf;
    for (size_t d : stageDevices[k]) {
      const uint64_t c = joint.npu.at(d).at(k), w = joint.arbitration.at(d).at(k);
      const double loss = alone[k] ? 100.0 * (double(c) - double(alone[k])) / double(alone[k]) : 0;
      std::snprintf(buf, sizeof buf, " %s %llu (%+.1f%%, %llu arbitration stall)",
                    sys.devices()[d].name.c_str(), static_cast<unsigned long long>(c), loss,
                    static_cast<unsigned long long>(w));
      out += buf;
      devs.push_back({{"device", sys.devices()[d].name},
                      {"npu_cycles", c},
                      {"loss_percent", loss},
                      {"arbitration_stall_cycles", w}});
    }
    out += "\n";
    j["stages"].push_back({{"index", k}, {"alone_npu_cycles", alone[k]}, {"devices", devs}});
  }
  return out;
}

} // namespace ember::session::detail
