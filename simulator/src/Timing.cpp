// Closed-form timing of every instruction class. Each formula is written out in
// docs/simulator.md, section "Timing model"; keep the two in step.
#include "Machine.h"

#include <algorithm>
#include <cmath>

namespace ember::sim::detail {

namespace {

using isa::Instruction;
using u64 = std::uint64_t;

u64 U(const Instruction& in, const char* role) {
  return static_cast<u64>(in.get(role));
}
u64 cyclesOf(const Instruction& in, const char* key) {
  double v = in.desc().timingOf(key);
  return v <= 0 ? 0 : static_cast<u64>(std::llround(v));
}
u64 ceilDiv(u64 a, u64 b) {
  return b == 0 ? a : (a + b - 1) / b;
}

} // namespace

Timing Machine::timing(const Instruction& insn, Cls cls, u64 start, DramBus& bus) const {
  switch (cls) {
  case Cls::DmaLoad:
    return dmaTiming(insn, true, start, bus);
  case Cls::DmaStore:
    return dmaTiming(insn, false, start, bus);
  case Cls::Gemm:
    return gemmTiming(insn);
  case Cls::VecBinary:
  case Cls::VecUnary:
  case Cls::Requant:
  case Cls::Lut:
    return vectorTiming(insn, cls);
  case Cls::Sync:
  case Cls::Halt:
    return {cyclesOf(insn, "issue"), 0};
  }
  return {};
}

// DMA (docs/isa.md section 3): T = issue + setup + latency + X, the transfer taking
//   X = ceil(bytes / B),  B = min(dram.bytes_per_cycle, max_outstanding * burst / latency)
// (Little's law), computed in integers as max(ceil(bytes / bw), ceil(bytes * latency /
// (max_outstanding * burst))). The DRAM channel is one resource shared by the load and
// store engines: a transfer starts at max(start + issue + setup + latency, bus.free_at),
// so waiting for the other engine's transfer is a memory stall.
Timing Machine::dmaTiming(const Instruction& insn, bool /*load*/, u64 start, DramBus& bus) const {
  const auto& hw = isa_.hw();
  const u64 head = cyclesOf(insn, "issue") + cyclesOf(insn, "setup");
  const isa::MemoryDesc* mem = isa_.memoryById(insn.get("sram"));
  const u64 B = mem ? mem->row_bytes : 1;
  const u64 bytes = U(insn, "size0") * U(insn, "size1") * U(insn, "size2") * B;
  if (bytes == 0)
    return {head, 0};
  const u64 lat = hw.dma.latency_cycles;
  const u64 inflight = std::max<u64>(1, hw.dma.max_outstanding * hw.dma.burst_bytes);
  u64 X = ceilDiv(bytes, std::max<u64>(1, hw.dram.bytes_per_cycle));
  if (lat)
    X = std::max(X, ceilDiv(bytes * lat, inflight));
  const u64 ready = start + head + lat;
  const u64 begin = std::max(ready, bus.free_at);
  bus.free_at = begin + X;
  return {begin + X - start, begin - ready};
}

// GEMM: per outer iteration one weight block (weight_load_cycles to load) and
// R = n0 * n1 activation rows at cycles_per_row. With two weight buffers the next block
// loads while the current one computes; fill and drain of the array are paid once:
//   T = issue + WL + (n2 - 1) * S + R * cpr + fill + drain
//   S = max(R * cpr, WL) (weight_buffers >= 2), else WL + R * cpr
//   T = issue + n0 * n1 * n2 * cpr                                      (reset)
Timing Machine::gemmTiming(const Instruction& insn) const {
  const auto& mac = isa_.hw().mac;
  const u64 n0 = U(insn, "n0"), n1 = U(insn, "n1"), n2 = U(insn, "n2");
  const u64 cpr = cyclesOf(insn, "cycles_per_row");
  if (n0 * n1 * n2 == 0)
    return {cyclesOf(insn, "issue"), 0};
  const u64 issue = cyclesOf(insn, "issue");
  if (insn.get("reset"))
    return {issue + n0 * n1 * n2 * cpr, 0};
  const u64 rows = n0 * n1 * cpr, WL = mac.weight_load_cycles;
  const u64 fd = mac.fill_cycles + mac.drain_cycles;
  const u64 T = mac.weight_buffers >= 2 ? std::max(rows, WL) : WL + rows;
  return {issue + WL + (n2 - 1) * T + rows + fd, 0};
}

// Vector unit: per row step cycles_per_row plus one cycle for each SRAM port conflict of
// that step, then the pipeline latency (parameter rows are read inside it):
//   T = issue + sum_steps (cpr + extra_step) + pipeline_latency
//   extra_step = ceil(2 / read_ports) - 1 when the two sources of a vector-binary step
//                sit in one bank of src_mem (row mod banks equal), else 0
Timing Machine::vectorTiming(const Instruction& insn, Cls cls) const {
  const u64 n0 = U(insn, "n0"), n1 = U(insn, "n1");
  const u64 issue = cyclesOf(insn, "issue");
  if (n0 * n1 == 0)
    return {issue, 0};
  const u64 cpr = cyclesOf(insn, "cycles_per_row");
  const u64 lat = cyclesOf(insn, "pipeline_latency");
  u64 extra = 0;
  if (cls == Cls::VecBinary) {
    const isa::MemoryDesc* m = isa_.memoryById(insn.get("src_mem"));
    const u64 a = U(insn, "src0_addr"), as0 = U(insn, "src0_s0"), as1 = U(insn, "src0_s1");
    const u64 b = U(insn, "src1_addr"), bs0 = U(insn, "src1_s0"), bs1 = U(insn, "src1_s1");
    if (m) {
      const u64 banks = std::max(1u, m->banks), ports = std::max(1u, m->read_ports);
      for (u64 i1 = 0; i1 < n1; ++i1)
        for (u64 i0 = 0; i0 < n0; ++i0) {
          u64 ra = a + i0 * as0 + i1 * as1, rb = b + i0 * bs0 + i1 * bs1;
          if (ra % banks == rb % banks)
            extra += ceilDiv(2, ports) - 1;
        }
    }
  }
  return {issue + n0 * n1 * cpr + extra + lat, extra};
}

} // namespace ember::sim::detail
