// Counters of one run: per-instruction accounting and the final Report.
#include "Run.h"
#include "ember/isa/roles.h"

#include "PlatformTypes.h"
#include <algorithm>
#include <utility>

namespace ember::sim::detail {

using u64 = std::uint64_t;

RunState::RunState(const isa::IsaDescription& isa, const Job& job) : meter(isa), layers(job.debug) {
  const unsigned W = isa.instructionBytes();
  instructions = W ? job.text.size() / W : 0;
}

void RunState::retire(const isa::IsaDescription& isa, const isa::Instruction& insn, const Counts& c,
                      Slice s, bool keepSlice) {
  const double e = meter.add(isa, insn, c);
  const int eng = s.engine;
  ++count[eng];
  busy[eng] += (s.end - s.start) - s.memory_stall - s.push_stall;
  memory_stall[eng] += s.memory_stall;
  token_stall[eng] += (s.start - s.take) + s.push_stall;
  last_cycle = std::max(last_cycle, s.end);
  ++retired;
  layers.add(s, c.macs, c.dram_read + c.dram_write, e);
  if (keepSlice)
    slices.push_back(std::move(s));
}

Report RunState::finish(const isa::IsaDescription& isa, double hostSeconds) {
  Report r;
  const auto& hw = isa.hw();
  r.isa_name = isa.name();
  r.cycles = last_cycle;
  r.clock_hz = hw.clock_hz;
  r.seconds = hw.clock_hz ? double(r.cycles) / double(hw.clock_hz) : 0;
  r.instructions = instructions;
  r.retired = retired;
  r.macs = meter.macs;
  r.peak_macs_per_cycle = isa.peakMacsPerCycle();
  r.mac_utilization =
      r.cycles ? double(r.macs) / (double(r.cycles) * double(r.peak_macs_per_cycle)) : 0;
  r.fetch_stall = fetch_stall;
  const char* names[3] = {"load", "compute", "store"};
  for (int e = 0; e < 3; ++e) {
    EngineReport er;
    er.name = names[e];
    er.instructions = count[e];
    er.busy = busy[e];
    er.token_stall = token_stall[e];
    er.memory_stall = memory_stall[e];
    u64 used = er.busy + er.token_stall + er.memory_stall;
    er.idle = r.cycles > used ? r.cycles - used : 0;
    r.engines.push_back(er);
  }
  platform::addEnergy(r, isa, meter);
  r.layers = layers.layers(isa);
  r.slices = std::move(slices);
  r.fault = fault;
  r.host_seconds = hostSeconds;
  return r;
}

} // namespace ember::sim::detail
