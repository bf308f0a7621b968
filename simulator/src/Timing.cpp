// Closed-form timing of every instruction class. Each formula is written out in
// docs/simulator.md, section "Timing model"; keep the two in step. All arithmetic is
// checked: a duration that does not fit 64 bits sets Timing::overflow (the engine then
// stops the run with a cycle-budget fault) instead of wrapping.
#include "Machine.h"

#include <algorithm>
#include <cmath>

namespace ember::sim::detail {

namespace {

using isa::Instruction;
using u64 = std::uint64_t;

/// uint64 arithmetic that saturates and remembers overflow.
struct Ck {
  bool overflow = false;
  u64 add(u64 a, u64 b) {
    u64 r;
    if (__builtin_add_overflow(a, b, &r)) {
      overflow = true;
      return UINT64_MAX;
    }
    return r;
  }
  u64 mul(u64 a, u64 b) {
    u64 r;
    if (__builtin_mul_overflow(a, b, &r)) {
      overflow = true;
      return UINT64_MAX;
    }
    return r;
  }
  u64 ceilDiv(u64 a, u64 b) { return b == 0 ? a : a / b + (a % b != 0); }
  /// a * b capped at `cap`; overflow counts only when there is no cap (the real duration).
  u64 mulCapped(u64 a, u64 b, u64 cap) {
    if (cap == UINT64_MAX)
      return mul(a, b);
    u64 r;
    return __builtin_mul_overflow(a, b, &r) ? cap : std::min(r, cap);
  }
  Timing done(u64 cycles, u64 stall = 0) const {
    return overflow ? Timing{UINT64_MAX, 0, true} : Timing{cycles, stall, false};
  }
};

u64 U(const Instruction& in, const char* role) {
  return static_cast<u64>(in.get(role));
}
/// A timing entry of the description (schema: at most 2^20, so llround is exact).
u64 cyclesOf(const Instruction& in, const char* key) {
  double v = in.desc().timingOf(key);
  return v <= 0 ? 0 : static_cast<u64>(std::llround(v));
}

} // namespace

Timing Machine::timing(const Instruction& insn, Cls cls, u64 start, DramBus& bus) const {
  switch (cls) {
  case Cls::DmaLoad:
  case Cls::DmaStore:
    return dmaTiming(insn, start, bus, UINT64_MAX);
  case Cls::Gemm:
    return gemmTiming(insn, UINT64_MAX);
  case Cls::VecBinary:
  case Cls::VecUnary:
  case Cls::Requant:
  case Cls::Lut:
    return vectorTiming(insn, cls, UINT64_MAX);
  case Cls::Sync:
  case Cls::Halt:
    return {cyclesOf(insn, "issue"), 0};
  }
  return {};
}

// One pass over the memories: the loop counts limited to the rows of the SRAM each loop
// walks (docs/simulator.md, "Cycle budget").
u64 Machine::passCycles(const Instruction& insn, Cls cls) const {
  DramBus bus;
  auto rowsOf = [&](const char* role) -> u64 {
    const isa::MemoryDesc* m = insn.has(role) ? isa_.memoryById(insn.get(role)) : nullptr;
    return m ? m->rows() : 1;
  };
  Timing t;
  switch (cls) {
  case Cls::DmaLoad:
  case Cls::DmaStore:
    t = dmaTiming(insn, 0, bus, rowsOf("sram"));
    break;
  case Cls::Gemm:
    t = gemmTiming(insn, isa_.memory("acc").rows());
    break;
  case Cls::VecBinary:
  case Cls::VecUnary:
  case Cls::Lut:
    t = vectorTiming(insn, cls,
                     rowsOf("dst_mem") > 1 ? rowsOf("dst_mem") : isa_.memory("act").rows());
    break;
  case Cls::Requant:
    t = vectorTiming(insn, cls, isa_.memory("act").rows());
    break;
  case Cls::Sync:
  case Cls::Halt:
    t = timing(insn, cls, 0, bus);
    break;
  }
  return t.overflow ? UINT64_MAX : t.cycles;
}

// DMA (docs/isa.md section 3): T = issue + setup + latency + X, the transfer taking
//   X = ceil(bytes / B),  B = min(dram.bytes_per_cycle, max_outstanding * burst / latency)
// (Little's law), computed in integers as max(ceil(bytes / bw), ceil(bytes * latency /
// (max_outstanding * burst))). The DRAM channel is one resource shared by the load and
// store engines: a transfer starts at max(start + issue + setup + latency, bus.free_at),
// so waiting for the other engine's transfer is a memory stall. `maxRows` caps the SRAM
// rows moved (passCycles).
Timing Machine::dmaTiming(const Instruction& insn, u64 start, DramBus& bus, u64 maxRows) const {
  const auto& hw = isa_.hw();
  Ck k;
  const u64 head = k.add(cyclesOf(insn, "issue"), cyclesOf(insn, "setup"));
  const isa::MemoryDesc* mem = isa_.memoryById(insn.get("sram"));
  const u64 B = mem ? mem->row_bytes : 1;
  const u64 rows = k.mulCapped(k.mulCapped(U(insn, "size0"), U(insn, "size1"), maxRows),
                               U(insn, "size2"), maxRows);
  const u64 bytes = k.mul(rows, B);
  if (bytes == 0)
    return k.done(head);
  const u64 lat = hw.dma.latency_cycles;
  const u64 inflight = std::max<u64>(1, k.mul(hw.dma.max_outstanding, hw.dma.burst_bytes));
  u64 X = k.ceilDiv(bytes, std::max<u64>(1, hw.dram.bytes_per_cycle));
  if (lat)
    X = std::max(X, k.ceilDiv(k.mul(bytes, lat), inflight));
  const u64 ready = k.add(k.add(start, head), lat);
  const u64 begin = std::max(ready, bus.free_at);
  const u64 end = k.add(begin, X);
  if (k.overflow)
    return k.done(0);
  bus.free_at = end;
  return k.done(end - start, begin - ready);
}

// GEMM: per outer iteration one weight block (weight_load_cycles to load) and
// R = n0 * n1 activation rows at cycles_per_row. With two weight buffers the next block
// loads while the current one computes; fill and drain of the array are paid once:
//   T = issue + WL + (n2 - 1) * S + R * cpr + fill + drain
//   S = max(R * cpr, WL) (weight_buffers >= 2), else WL + R * cpr
//   T = issue + n0 * n1 * n2 * cpr                                      (reset)
// `maxRows` caps R (and n2 at the weight SRAM's rows; passCycles).
Timing Machine::gemmTiming(const Instruction& insn, u64 maxRows) const {
  const auto& mac = isa_.hw().mac;
  Ck k;
  const u64 issue = cyclesOf(insn, "issue"), cpr = cyclesOf(insn, "cycles_per_row");
  const u64 R = k.mulCapped(U(insn, "n0"), U(insn, "n1"), maxRows);
  u64 n2 = U(insn, "n2");
  if (maxRows != UINT64_MAX)
    n2 = std::min<u64>(n2, isa_.memory("weight").rows());
  if (R == 0 || n2 == 0)
    return k.done(issue);
  if (insn.get("reset"))
    return k.done(k.add(issue, k.mul(k.mulCapped(R, n2, maxRows), cpr)));
  const u64 rows = k.mul(R, cpr), WL = mac.weight_load_cycles;
  const u64 fd = k.add(mac.fill_cycles, mac.drain_cycles);
  const u64 S = mac.weight_buffers >= 2 ? std::max(rows, WL) : k.add(WL, rows);
  return k.done(k.add(k.add(k.add(issue, WL), k.mul(n2 - 1, S)), k.add(rows, fd)));
}

// Vector unit: per row step cycles_per_row plus one cycle for each SRAM port conflict of
// that step, then the pipeline latency (parameter rows are read inside it):
//   T = issue + sum_steps (cpr + extra_step) + pipeline_latency
//   extra_step = ceil(2 / read_ports) - 1 when the two sources of a vector-binary step
//                sit in one bank of src_mem (row mod banks equal), else 0
// With `maxRows` (passCycles) the steps are capped and every step counted as a conflict.
Timing Machine::vectorTiming(const Instruction& insn, Cls cls, u64 maxRows) const {
  Ck k;
  const u64 n0 = U(insn, "n0"), n1 = U(insn, "n1");
  const u64 issue = cyclesOf(insn, "issue");
  const u64 steps = k.mulCapped(n0, n1, maxRows);
  if (steps == 0)
    return k.done(issue);
  const u64 cpr = cyclesOf(insn, "cycles_per_row");
  const u64 lat = cyclesOf(insn, "pipeline_latency");
  u64 extra = 0;
  if (cls == Cls::VecBinary) {
    const isa::MemoryDesc* m = isa_.memoryById(insn.get("src_mem"));
    if (m) {
      const u64 banks = std::max(1u, m->banks), ports = std::max(1u, m->read_ports);
      const u64 perConflict = k.ceilDiv(2, ports) - 1;
      if (maxRows != UINT64_MAX) {
        extra = k.mul(steps, perConflict);
      } else if (perConflict) {
        const u64 a = U(insn, "src0_addr"), as0 = U(insn, "src0_s0"), as1 = U(insn, "src0_s1");
        const u64 b = U(insn, "src1_addr"), bs0 = U(insn, "src1_s0"), bs1 = U(insn, "src1_s1");
        // Whether two rows share a bank depends only on i0 and i1 modulo `banks` (a power
        // of two, so wrapping arithmetic is exact modulo banks): count each residue class
        // once, so the work is at most banks^2 steps however long the loops are.
        const u64 m0 = std::min(n0, banks), m1 = std::min(n1, banks);
        auto members = [&](u64 n, u64 r) { return (n - r - 1) / banks + 1; }; // r < n
        for (u64 r1 = 0; r1 < m1; ++r1)
          for (u64 r0 = 0; r0 < m0; ++r0) {
            u64 ra = a + r0 * as0 + r1 * as1, rb = b + r0 * bs0 + r1 * bs1;
            if (ra % banks == rb % banks)
              extra = k.add(extra, k.mul(perConflict, k.mul(members(n0, r0), members(n1, r1))));
          }
      }
    }
  }
  return k.done(k.add(k.add(k.add(issue, k.mul(steps, cpr)), extra), lat), extra);
}

} // namespace ember::sim::detail
