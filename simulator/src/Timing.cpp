// Closed-form timing of every instruction class. Each formula is written out in
// docs/simulator.md, section "Timing model"; keep the two in step.
#include "Machine.h"

#include <algorithm>
#include <cmath>
#include <map>

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

/// Cycles to serve `rows` accesses of one kind to memory `m` in one cycle: the busiest
/// bank's accesses divided by its ports, rounded up.
u64 portCycles(const isa::MemoryDesc& m, const std::vector<u64>& rows, unsigned ports) {
  std::map<u64, u64> perBank;
  u64 worst = 0;
  for (u64 r : rows)
    worst = std::max(worst, ++perBank[r % std::max(1u, m.banks)]);
  return ceilDiv(worst, std::max(1u, ports));
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
    return {};
  }
  return {};
}

// DMA: after `setup` cycles the engine issues burst requests (one burst = up to
// burst_bytes of one contiguous DRAM line), at most `max_outstanding` in flight. Burst j:
//   q_j = max(q_{j-1}, c_{j-O})            request (needs a free outstanding slot)
//   x_j = max(q_j + latency, c_{j-1})      data on the shared bus (first: >= bus.free_at)
//   c_j = x_j + ceil(b_j / rate)           rate = min(DRAM B/cycle, SRAM port B/cycle)
// The instruction retires at c_last; the bus is reserved until then.
Timing Machine::dmaTiming(const Instruction& insn, bool load, u64 start, DramBus& bus) const {
  const auto& hw = isa_.hw();
  const u64 setup = cyclesOf(insn, "setup");
  const isa::MemoryDesc* mem = isa_.memoryById(insn.get("sram"));
  const u64 B = mem ? mem->row_bytes : 1;
  const u64 s0 = U(insn, "size0"), s1 = U(insn, "size1"), s2 = U(insn, "size2");
  const u64 lines = s1 * s2, lineBytes = s0 * B;
  if (lines == 0 || lineBytes == 0)
    return {setup, 0};
  const u64 ports = mem ? (load ? mem->write_ports : mem->read_ports) : 1;
  const u64 sramRate = mem ? u64(mem->banks) * ports * mem->row_bytes : hw.dram.bytes_per_cycle;
  const u64 rate = std::max<u64>(1, std::min<u64>(hw.dram.bytes_per_cycle, sramRate));
  const u64 burst = std::max<u64>(1, hw.dma.burst_bytes);
  const u64 O = std::max<u64>(1, hw.dma.max_outstanding);
  const u64 lat = hw.dma.latency_cycles;
  auto simulate = [&](u64 busFree) {
    std::vector<u64> done(O, 0); // completion times, ring of the last O bursts
    u64 q = start + setup, prevEnd = busFree, j = 0;
    for (u64 l = 0; l < lines; ++l) {
      for (u64 off = 0; off < lineBytes; off += burst, ++j) {
        u64 b = std::min(burst, lineBytes - off);
        if (j >= O)
          q = std::max(q, done[j % O]);
        u64 x = std::max(q + lat, prevEnd);
        u64 c = x + ceilDiv(b, rate);
        done[j % O] = c;
        prevEnd = c;
      }
    }
    return prevEnd;
  };
  const u64 end = simulate(bus.free_at);
  const u64 alone = simulate(0);
  bus.free_at = end;
  return {end - start, end - alone};
}

// GEMM: per outer iteration one weight block (weight_load_cycles to load) and
// R = n0 * n1 activation rows at cycles_per_row. With two weight buffers the next block
// loads while the current one computes; fill and drain of the array are paid once:
//   T = WL + (n2 - 1) * max(R * cpr, WL) + R * cpr + fill + drain      (buffers >= 2)
//   T = n2 * (WL + R * cpr + fill + drain)                              (one buffer)
//   T = n0 * n1 * n2 * cpr                                              (reset)
Timing Machine::gemmTiming(const Instruction& insn) const {
  const auto& mac = isa_.hw().mac;
  const u64 n0 = U(insn, "n0"), n1 = U(insn, "n1"), n2 = U(insn, "n2");
  const u64 cpr = cyclesOf(insn, "cycles_per_row");
  if (n0 * n1 * n2 == 0)
    return {};
  if (insn.get("reset"))
    return {n0 * n1 * n2 * cpr, 0};
  const u64 rows = n0 * n1 * cpr, WL = mac.weight_load_cycles;
  const u64 fd = mac.fill_cycles + mac.drain_cycles;
  if (mac.weight_buffers >= 2)
    return {WL + (n2 - 1) * std::max(rows, WL) + rows + fd, 0};
  return {n2 * (WL + rows + fd), 0};
}

// Vector unit: `pre` cycles to read the parameter rows (requantize: M and S; lut: the
// 256-byte table), then per row step cpr cycles plus one cycle for each SRAM port
// conflict of that step, then the pipeline latency:
//   T = pre + sum_steps (cpr + extra_step) + pipeline_latency
//   extra_step = max over (memory, bank, read|write) of ceil(accesses / ports) - 1
Timing Machine::vectorTiming(const Instruction& insn, Cls cls) const {
  const u64 n0 = U(insn, "n0"), n1 = U(insn, "n1");
  if (n0 * n1 == 0)
    return {};
  const u64 cpr = cyclesOf(insn, "cycles_per_row");
  const u64 lat = cyclesOf(insn, "pipeline_latency");
  const auto& pd = isa_.memory("param");
  u64 pre = 0;
  if (cls == Cls::Requant) {
    u64 r = U(insn, "param_addr");
    pre = portCycles(pd, {r, r + 1}, pd.read_ports);
  } else if (cls == Cls::Lut) {
    u64 off = (U(insn, "table") + static_cast<u64>(insn.desc().table_offset)) * 256;
    std::vector<u64> rows;
    for (u64 r = off / pd.row_bytes; r <= (off + 255) / pd.row_bytes; ++r)
      rows.push_back(r);
    pre = portCycles(pd, rows, pd.read_ports);
  }
  // Reads that share one memory in the same step (only vector-binary has two).
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
  return {pre + n0 * n1 * cpr + extra + lat, extra};
}

} // namespace ember::sim::detail
