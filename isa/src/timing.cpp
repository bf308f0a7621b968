// The per-class cycle formulas (docs/simulator.md section 2, rules D, G and V). Keep the
// two in step: the simulator, the compiler's cost model and the RTL co-simulation tests
// all read these.
#include "ember/isa/timing.h"

#include "ember/isa/roles.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ember::isa::timing {

namespace {

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
  static u64 ceilDiv(u64 a, u64 b) { return b == 0 ? a : a / b + (a % b != 0); }
  /// a * b capped at `cap`; overflow counts only without a cap (a real duration).
  u64 mulCapped(u64 a, u64 b, u64 cap) {
    if (cap == kNoCap)
      return mul(a, b);
    u64 r;
    return __builtin_mul_overflow(a, b, &r) ? cap : std::min(r, cap);
  }
  Duration done(u64 cycles, u64 stall = 0) const {
    return overflow ? Duration{UINT64_MAX, 0, true} : Duration{cycles, stall, false};
  }
};

u64 U(const Instruction& in, const char* r) {
  return in.has(r) ? static_cast<u64>(in.get(r)) : 0;
}
/// A timing entry of the description (schema: whole cycles, at most 2^20).
u64 cyclesOf(const InstrDesc& d, const char* key) {
  double v = d.timingOf(key);
  return v <= 0 ? 0 : static_cast<u64>(std::llround(v));
}
/// Rows of the SRAM selected by role `r`, or 1 when it names none.
u64 rowsOf(const IsaDescription& isa, const Instruction& in, const char* r) {
  const MemoryDesc* m = in.has(r) ? isa.memoryById(in.get(r)) : nullptr;
  return m ? m->rows() : 1;
}

} // namespace

u64 dmaRowsPerCycle(const IsaDescription& isa, const MemoryDesc& m) {
  const u64 bpc = std::max<u64>(1, isa.hw().dram.bytes_per_cycle);
  const u64 rb = std::max<u64>(1, m.row_bytes);
  u64 widest = rb; // the DMA's data path: one widest SRAM row
  for (const MemoryDesc& o : isa.memories())
    widest = std::max<u64>(widest, o.row_bytes);
  return std::max<u64>(1, std::min({bpc / rb, std::max<u64>(1, m.banks), widest / rb}));
}

DmaPhases dmaPhases(const IsaDescription& isa, const InstrDesc& d, const MemoryDesc& m, u64 lines,
                    u64 lineRows, u64 sramRows) {
  const auto& hw = isa.hw();
  Ck k;
  DmaPhases p;
  p.head = k.add(cyclesOf(d, timing_key::kIssue), cyclesOf(d, timing_key::kSetup));
  // D1: a line's rows are contiguous in DRAM and move in whole beats of
  // dram.bytes_per_cycle, at most r rows a request (r = dmaRowsPerCycle); the SRAM side
  // takes r rows a cycle. D2: Little's law, at most max_outstanding bursts in flight.
  const u64 rb = m.row_bytes, r = dmaRowsPerCycle(isa, m);
  const u64 dramRows = k.mul(lines, lineRows);
  const u64 lineBytes = k.mul(lineRows, rb);
  const u64 perLine = std::max(Ck::ceilDiv(lineBytes, std::max<u64>(1, hw.dram.bytes_per_cycle)),
                               Ck::ceilDiv(lineRows, r));
  const u64 beats = k.mul(lines, perLine);
  const u64 sramCycles = Ck::ceilDiv(sramRows, r);
  const u64 inflight = std::max<u64>(1, k.mul(hw.dma.max_outstanding, hw.dma.burst_bytes));
  const u64 little = Ck::ceilDiv(k.mul(k.mul(dramRows, rb), hw.dma.latency_cycles), inflight);
  p.transfer = std::max({beats, sramCycles, little});
  p.uses_channel = dramRows > 0;
  p.latency = p.uses_channel ? hw.dma.latency_cycles : 0;
  p.overflow = k.overflow;
  return p;
}

DmaPhases dmaPhases(const IsaDescription& isa, const Instruction& in, u64 maxRows) {
  Ck k;
  const MemoryDesc* mem = isa.memoryById(in.get(role::kSram));
  MemoryDesc one;
  one.row_bytes = 1;
  const MemoryDesc& m = mem ? *mem : one;
  const u64 cap = maxRows == kNoCap ? kNoCap : std::min(maxRows, mem ? mem->rows() : 1);
  const u64 size0 = std::min(U(in, role::kSize0), cap);
  u64 lines = k.mulCapped(U(in, role::kSize1), U(in, role::kSize2), cap);
  if (cap != kNoCap && size0 > 0) // the budget: at most `cap` DRAM rows
    lines = std::min(lines, Ck::ceilDiv(cap, size0));
  u64 sram = k.mulCapped(size0, lines, cap);
  if (in.desc().cls->id == SemanticClass::DmaLoad) {
    const u64 line =
        k.add(k.add(U(in, role::kPadLeft), U(in, role::kSize0)), U(in, role::kPadRight));
    const u64 plane =
        k.add(k.add(U(in, role::kPadTop), U(in, role::kSize1)), U(in, role::kPadBottom));
    sram = k.mulCapped(k.mulCapped(line, plane, cap), U(in, role::kSize2), cap);
  }
  DmaPhases p = dmaPhases(isa, in.desc(), m, lines, size0, sram);
  p.overflow = p.overflow || k.overflow;
  return p;
}

Duration dmaOnChannel(const DmaPhases& p, u64 start, Channel& ch) {
  Ck k;
  if (p.overflow)
    return Duration{UINT64_MAX, 0, true};
  const u64 ready = k.add(start, p.head);
  if (!p.uses_channel)
    return k.done(k.add(p.head, p.transfer));
  // D3: the channel is reserved for the whole transfer of one instruction.
  const u64 begin = std::max(ready, ch.free_at);
  const u64 released = k.add(begin, p.transfer);
  const u64 end = k.add(released, p.latency);
  if (k.overflow)
    return k.done(0);
  ch.free_at = released;
  return k.done(end - start, begin - ready);
}

Duration gemm(const IsaDescription& isa, const InstrDesc& d, u64 R, u64 n2, bool reset) {
  const auto& mac = isa.hw().mac;
  Ck k;
  const u64 issue = cyclesOf(d, timing_key::kIssue), cpr = cyclesOf(d, timing_key::kCyclesPerRow);
  if (R == 0 || n2 == 0)
    return k.done(issue);
  if (reset)
    return k.done(k.add(issue, k.mul(k.mul(R, n2), cpr)));
  // G1: T = issue + WL + (n2 - 1) * S + R * cpr + fill + drain,
  //     S = max(R * cpr, WL) with two weight buffers, WL + R * cpr with one.
  const u64 rows = k.mul(R, cpr), WL = mac.weight_load_cycles;
  const u64 fd = k.add(mac.fill_cycles, mac.drain_cycles);
  const u64 S = mac.weight_buffers >= 2 ? std::max(rows, WL) : k.add(WL, rows);
  return k.done(k.add(k.add(k.add(issue, WL), k.mul(n2 - 1, S)), k.add(rows, fd)));
}

Duration gemm(const IsaDescription& isa, const Instruction& in, u64 maxRows) {
  Ck k;
  const bool reset = in.get(role::kReset) != 0;
  u64 R = k.mulCapped(U(in, role::kN0), U(in, role::kN1), maxRows);
  u64 n2 = U(in, role::kN2);
  if (maxRows != kNoCap) {
    if (reset) { // a reset walks R * n2 acc rows: cap their product
      R = k.mulCapped(R, n2, maxRows);
      n2 = 1;
    } else {
      n2 = std::min<u64>(n2, isa.memory(mem::kWeight).rows());
    }
  }
  Duration t = gemm(isa, in.desc(), R, n2, reset);
  return k.overflow ? Duration{UINT64_MAX, 0, true} : t;
}

u64 depthwiseTapCycles(const IsaDescription& isa, u64 kh, u64 kw, u64 tapS0, u64 tapS1) {
  const MemoryDesc& act = isa.memory(mem::kAct);
  const u64 banks = std::max(1u, act.banks), ports = std::max(1u, act.read_ports);
  std::vector<u64> taps(banks, 0);
  for (u64 y = 0; y < kh; ++y)
    for (u64 x = 0; x < kw; ++x)
      ++taps[((y % banks) * (tapS1 % banks) + (x % banks) * (tapS0 % banks)) % banks];
  const u64 most = *std::max_element(taps.begin(), taps.end());
  return (most + ports - 1) / ports;
}

Duration depthwise(const IsaDescription& isa, const InstrDesc& d, u64 R, u64 C) {
  const auto& mac = isa.hw().mac;
  Ck k;
  const u64 issue = cyclesOf(d, timing_key::kIssue), cpr = cyclesOf(d, timing_key::kCyclesPerRow);
  if (R == 0 || C == 0)
    return k.done(issue);
  // DW1: the weight block loads once, then C cycles per output, then fill and drain.
  const u64 fd = k.add(mac.fill_cycles, mac.drain_cycles);
  return k.done(k.add(k.add(issue, mac.weight_load_cycles), k.add(k.mul(k.mul(R, C), cpr), fd)));
}

Duration depthwise(const IsaDescription& isa, const Instruction& in, u64 maxRows) {
  Ck k;
  const u64 R = k.mulCapped(U(in, role::kN0), U(in, role::kN1), maxRows);
  const u64 kh = std::min<u64>(U(in, role::kKh), 64), kw = std::min<u64>(U(in, role::kKw), 64);
  const u64 C =
      kh * kw == 0 ? 0 : depthwiseTapCycles(isa, kh, kw, U(in, role::kTapS0), U(in, role::kTapS1));
  Duration t = depthwise(isa, in.desc(), R, C);
  return k.overflow ? Duration{UINT64_MAX, 0, true} : t;
}

u64 bankConflicts(const IsaDescription& isa, const Instruction& in) {
  const SemanticClass cls = in.desc().cls->id;
  if (cls != SemanticClass::VectorBinary && cls != SemanticClass::QuantizedAdd)
    return 0;
  // A quantized add reads both sources from act; a vector-binary from its src_mem.
  const MemoryDesc* m = cls == SemanticClass::QuantizedAdd ? &isa.memory(mem::kAct)
                                                           : isa.memoryById(in.get(role::kSrcMem));
  if (!m)
    return 0;
  Ck k;
  const u64 banks = std::max(1u, m->banks), ports = std::max(1u, m->read_ports);
  const u64 perConflict = Ck::ceilDiv(2, ports) - 1;
  if (perConflict == 0)
    return 0;
  const u64 n0 = U(in, role::kN0), n1 = U(in, role::kN1);
  const u64 a = U(in, role::kSrc0Addr), as0 = U(in, role::kSrc0S0), as1 = U(in, role::kSrc0S1);
  const u64 b = U(in, role::kSrc1Addr), bs0 = U(in, role::kSrc1S0), bs1 = U(in, role::kSrc1S1);
  // Whether two rows share a bank depends only on i0 and i1 modulo `banks` (a power of
  // two, so wrapping arithmetic is exact modulo banks): count each residue class once,
  // so the work is at most banks^2 steps however long the loops are.
  const u64 m0 = std::min(n0, banks), m1 = std::min(n1, banks);
  auto members = [&](u64 n, u64 r) { return (n - r - 1) / banks + 1; }; // r < n
  u64 extra = 0;
  for (u64 r1 = 0; r1 < m1; ++r1)
    for (u64 r0 = 0; r0 < m0; ++r0) {
      const u64 ra = a + r0 * as0 + r1 * as1, rb = b + r0 * bs0 + r1 * bs1;
      if (ra % banks == rb % banks)
        extra = k.add(extra, k.mul(perConflict, k.mul(members(n0, r0), members(n1, r1))));
    }
  return extra;
}

Duration vector(const InstrDesc& d, u64 steps, u64 conflicts) {
  Ck k;
  const u64 issue = cyclesOf(d, timing_key::kIssue);
  if (steps == 0)
    return k.done(issue);
  // V1: T = issue + steps * cycles_per_row + conflicts + pipeline_latency.
  const u64 cpr = cyclesOf(d, timing_key::kCyclesPerRow);
  const u64 lat = cyclesOf(d, timing_key::kPipelineLatency);
  return k.done(k.add(k.add(k.add(issue, k.mul(steps, cpr)), conflicts), lat), conflicts);
}

Duration vector(const IsaDescription& isa, const Instruction& in, u64 maxRows) {
  Ck k;
  const u64 steps = k.mulCapped(U(in, role::kN0), U(in, role::kN1), maxRows);
  u64 conflicts = 0;
  const SemanticClass cls = in.desc().cls->id;
  if (cls == SemanticClass::VectorBinary || cls == SemanticClass::QuantizedAdd) {
    const MemoryDesc* m = cls == SemanticClass::QuantizedAdd
                              ? &isa.memory(mem::kAct)
                              : isa.memoryById(in.get(role::kSrcMem));
    if (maxRows == kNoCap)
      conflicts = bankConflicts(isa, in);
    else if (m)
      conflicts = k.mul(steps, Ck::ceilDiv(2, std::max(1u, m->read_ports)) - 1);
  }
  Duration t = vector(in.desc(), steps, conflicts);
  return k.overflow ? Duration{UINT64_MAX, 0, true} : t;
}

Duration normalize(const InstrDesc& d, u64 len, u64 lines, unsigned lanes) {
  Ck k;
  const u64 issue = cyclesOf(d, timing_key::kIssue);
  if (len == 0 || lines == 0)
    return k.done(issue);
  // N1: T = issue + n1 * (cycles_per_line + R * cycles_per_row + n0 * cycles_per_element)
  //         + pipeline_latency, R = ceil(n0 / L) rows per line.
  const u64 R = Ck::ceilDiv(len, std::max(1u, lanes));
  const u64 line = k.add(k.add(cyclesOf(d, timing_key::kCyclesPerLine),
                               k.mul(R, cyclesOf(d, timing_key::kCyclesPerRow))),
                         k.mul(len, cyclesOf(d, timing_key::kCyclesPerElement)));
  return k.done(k.add(k.add(issue, k.mul(lines, line)), cyclesOf(d, timing_key::kPipelineLatency)));
}

Duration normalize(const IsaDescription& isa, const Instruction& in, u64 maxRows) {
  u64 len = U(in, role::kLen), lines = U(in, role::kN1);
  const unsigned L = isa.hw().vector.lanes;
  if (maxRows != kNoCap) { // one pass: at most every act row once
    const u64 rows = isa.memory(mem::kAct).rows();
    lines = std::min(lines, rows);
    len = std::min(len, rows * std::max(1u, L));
  }
  return normalize(in.desc(), len, lines, L);
}

namespace {
Duration durationOf(const IsaDescription& isa, const Instruction& in, u64 maxRows) {
  switch (in.desc().cls->id) {
  case SemanticClass::DmaLoad:
  case SemanticClass::DmaStore: {
    Channel idleChannel;
    return dmaOnChannel(dmaPhases(isa, in, maxRows), 0, idleChannel);
  }
  case SemanticClass::Gemm:
    return gemm(isa, in, maxRows == kNoCap ? kNoCap : isa.memory(mem::kAcc).rows());
  case SemanticClass::Depthwise:
    return depthwise(isa, in, maxRows == kNoCap ? kNoCap : isa.memory(mem::kAcc).rows());
  case SemanticClass::VectorBinary:
  case SemanticClass::VectorUnary:
  case SemanticClass::Lut: {
    u64 cap = maxRows;
    if (cap != kNoCap) {
      const u64 dst = rowsOf(isa, in, role::kDstMem);
      cap = dst > 1 ? dst : isa.memory(mem::kAct).rows();
    }
    return vector(isa, in, cap);
  }
  case SemanticClass::Requantize:
  case SemanticClass::QuantizedAdd:
    return vector(isa, in, maxRows == kNoCap ? kNoCap : isa.memory(mem::kAct).rows());
  case SemanticClass::Normalize:
    return normalize(isa, in, maxRows);
  case SemanticClass::Sync:
  case SemanticClass::Halt:
  case SemanticClass::Custom:
    break;
  }
  return Duration{cyclesOf(in.desc(), timing_key::kIssue), 0, false};
}
} // namespace

Duration idle(const IsaDescription& isa, const Instruction& in) {
  return durationOf(isa, in, kNoCap);
}

u64 hostLinkCycles(const IsaDescription& isa, u64 bytes) {
  if (bytes == 0)
    return 0;
  Ck k;
  const auto& l = isa.hw().host_link;
  const u64 c = k.add(l.latency_cycles, Ck::ceilDiv(bytes, std::max<u64>(1, l.bytes_per_cycle)));
  return k.overflow ? UINT64_MAX : c;
}

bool waitsForArray(const InstrDesc& d) {
  return d.cls->on_array || d.cls->id == SemanticClass::Sync || d.cls->id == SemanticClass::Halt;
}

u64 engineCycles(const InstrDesc& d, u64 cycles) {
  if (!d.cls->on_array || !d.background)
    return cycles;
  return std::min<u64>(cycles, u64(d.timingOf(timing_key::kIssue)));
}

u64 onePass(const IsaDescription& isa, const Instruction& in) {
  // Any finite cap selects the one-pass limits; each class picks the SRAM it walks.
  Duration t = durationOf(isa, in, UINT64_MAX - 1);
  return t.overflow ? UINT64_MAX : t.cycles;
}

} // namespace ember::isa::timing
