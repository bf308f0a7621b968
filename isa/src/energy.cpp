// The NPU's energy model: per-instruction action counts and the run's sums (energy.h).
#include "ember/isa/energy.h"

#include "ember/isa/error.h"
#include "ember/isa/roles.h"
#include "ember/isa/semantic.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ember::isa::energy {

namespace {

using u64 = std::uint64_t;

u64 U(const Instruction& in, const char* role) {
  return static_cast<u64>(in.get(role));
}

u64 satAdd(u64 a, u64 b) {
  return a > std::numeric_limits<u64>::max() - b ? std::numeric_limits<u64>::max() : a + b;
}
u64 satMul(u64 a, u64 b) {
  return b && a > std::numeric_limits<u64>::max() / b ? std::numeric_limits<u64>::max() : a * b;
}

/// Position in memories() of the memory named `name` or with id `id` (-1: none).
int posByName(const IsaDescription& isa, const char* name) {
  const auto& ms = isa.memories();
  for (std::size_t i = 0; i < ms.size(); ++i)
    if (ms[i].name == name)
      return int(i);
  return -1;
}
int posById(const IsaDescription& isa, std::int64_t id) {
  const auto& ms = isa.memories();
  for (std::size_t i = 0; i < ms.size(); ++i)
    if (std::int64_t(ms[i].id) == id)
      return int(i);
  return -1;
}

/// dma-load / dma-store: SRAM rows with padding, DRAM rows and the bursts they touch.
void dma(const IsaDescription& isa, const Instruction& in, bool load, Counts& c) {
  const int pos = posById(isa, in.get(role::kSram));
  if (pos < 0)
    return;
  const MemoryDesc& m = isa.memories()[std::size_t(pos)];
  const u64 B = m.row_bytes;
  const u64 s0 = U(in, role::kSize0), s1 = U(in, role::kSize1), s2 = U(in, role::kSize2);
  const u64 st1 = U(in, role::kStride1), st2 = U(in, role::kStride2);
  u64 pl = 0, pr = 0, pt = 0, pb = 0;
  if (load)
    pl = U(in, role::kPadLeft), pr = U(in, role::kPadRight), pt = U(in, role::kPadTop),
    pb = U(in, role::kPadBottom);
  const u64 lineRows = satAdd(satAdd(pl, s0), pr), planeLines = satAdd(satAdd(pt, s1), pb);
  const u64 sramRows = satMul(satMul(s2, planeLines), lineRows);
  if (sramRows == 0)
    return;
  const u64 daddr = U(in, role::kDramAddr);
  const u64 burst = std::max<u64>(1, isa.hw().dma.burst_bytes);
  for (u64 p = 0; p < s2 && s0; ++p)
    for (u64 l = 0; l < s1; ++l) { // burst-aligned bursts touched by each DRAM line
      const u64 a = daddr + (p * st2 + l * st1) * B;
      c.bursts += (a + s0 * B - 1) / burst - a / burst + 1;
    }
  if (load) {
    c.dram_read = s0 * s1 * s2 * B;
    c.sram_write[std::size_t(pos)] = sramRows * B;
  } else {
    c.dram_write = s0 * s1 * s2 * B;
    c.sram_read[std::size_t(pos)] = sramRows * B;
  }
}

/// The memories the built-in compute classes name.
struct Mems {
  int act, weight, acc, param;
  const MemoryDesc& at(const IsaDescription& isa, int p) const {
    return isa.memories()[std::size_t(p)];
  }
};

void gemm(const IsaDescription& isa, const Instruction& in, const Mems& m, Counts& c) {
  const u64 n0 = U(in, role::kN0), n1 = U(in, role::kN1), n2 = U(in, role::kN2);
  if (n0 == 0 || n1 == 0 || n2 == 0)
    return;
  const u64 n = n0 * n1 * n2;
  const u64 accRow = m.at(isa, m.acc).row_bytes;
  if (in.get(role::kReset)) {
    c.sram_write[std::size_t(m.acc)] = n * accRow;
    return;
  }
  c.macs = n * isa.hw().mac.rows * isa.hw().mac.cols;
  c.sram_read[std::size_t(m.act)] = n * m.at(isa, m.act).row_bytes;
  c.sram_read[std::size_t(m.weight)] = n2 * m.at(isa, m.weight).row_bytes;
  // properties.overwrite: the i2 = 0 pass writes its products without reading acc.
  c.sram_read[std::size_t(m.acc)] = (in.desc().overwrite ? n - n0 * n1 : n) * accRow;
  c.sram_write[std::size_t(m.acc)] = n * accRow;
}

void depthwise(const IsaDescription& isa, const Instruction& in, const Mems& m, Counts& c) {
  const u64 n0 = U(in, role::kN0), n1 = U(in, role::kN1);
  const u64 kh = U(in, role::kKh), kw = U(in, role::kKw);
  if (n0 == 0 || n1 == 0 || kh == 0 || kw == 0)
    return;
  const u64 n = n0 * n1, taps = kh * kw;
  const u64 accRow = m.at(isa, m.acc).row_bytes;
  c.macs = n * taps * isa.hw().mac.cols;
  c.sram_read[std::size_t(m.act)] = n * taps * m.at(isa, m.act).row_bytes;
  c.sram_read[std::size_t(m.weight)] = m.at(isa, m.weight).row_bytes;
  // properties.overwrite: each output is written, not added to, so acc is not read.
  c.sram_read[std::size_t(m.acc)] = in.desc().overwrite ? 0 : n * accRow;
  c.sram_write[std::size_t(m.acc)] = n * accRow;
}

void quantizedAdd(const IsaDescription& isa, const Instruction& in, const Mems& m, Counts& c) {
  const u64 n0 = U(in, role::kN0), n1 = U(in, role::kN1);
  if (n0 == 0 || n1 == 0)
    return;
  const u64 n = n0 * n1, actRow = m.at(isa, m.act).row_bytes;
  c.lane_ops = n * isa.hw().vector.lanes;
  c.sram_read[std::size_t(m.param)] += 2 * m.at(isa, m.param).row_bytes;
  c.sram_read[std::size_t(m.act)] += 2 * n * actRow;
  c.sram_write[std::size_t(m.act)] += n * actRow;
}

/// vector-binary, vector-unary, requantize and lut: sources and destination rows, and
/// the parameter rows or table bytes they read.
void vector(const IsaDescription& isa, const Instruction& in, SemanticClass cls, const Mems& m,
            Counts& c) {
  int dst = m.act, src = m.act;
  if (cls == SemanticClass::VectorBinary || cls == SemanticClass::VectorUnary) {
    dst = posById(isa, in.get(role::kDstMem));
    src = posById(isa, in.get(role::kSrcMem));
    if (dst < 0 || src < 0)
      return;
  } else if (cls == SemanticClass::Requantize) {
    src = m.acc;
  }
  const u64 n0 = U(in, role::kN0), n1 = U(in, role::kN1);
  if (n0 == 0 || n1 == 0)
    return;
  const u64 n = n0 * n1, L = isa.hw().vector.lanes;
  if (cls == SemanticClass::Requantize) // M and S (and the bias row: properties.bias)
    c.sram_read[std::size_t(m.param)] += in.desc().paramRows() * m.at(isa, m.param).row_bytes;
  else if (cls == SemanticClass::Lut)
    c.sram_read[std::size_t(m.param)] += n * L; // one table byte per lane and row
  c.lane_ops = n * L;
  const u64 sources = cls == SemanticClass::VectorBinary ? 2 : 1;
  c.sram_read[std::size_t(src)] += sources * n * m.at(isa, src).row_bytes;
  c.sram_write[std::size_t(dst)] += n * m.at(isa, dst).row_bytes;
}

void normalize(const IsaDescription& isa, const Instruction& in, const Mems& m, Counts& c) {
  const u64 n0 = U(in, role::kLen), n1 = U(in, role::kN1);
  if (n0 == 0 || n1 == 0)
    return;
  const u64 L = isa.hw().vector.lanes, R = (n0 + L - 1) / L;
  const bool softmax = in.desc().op == "softmax";
  const u64 actRow = m.at(isa, m.act).row_bytes, accRow = m.at(isa, m.acc).row_bytes;
  c.elements = n0 * n1;
  c.sram_read[std::size_t(m.act)] += 2 * n1 * R * actRow;
  c.sram_write[std::size_t(m.act)] += n1 * R * actRow;
  c.sram_read[std::size_t(m.acc)] += 2 * accRow + (softmax ? 2 * n1 * n0 * 4 : 3 * n1 * R * accRow);
}

} // namespace

double checkedSum(double a, double b, const char* what) {
  const double s = a + b;
  if (!std::isfinite(s))
    throw Error("<energy>", what,
                "the sum is not a finite number of pJ (the description's energy figures are "
                "out of range)");
  return s;
}

Counts countsOf(const IsaDescription& isa, const Instruction& in) {
  Counts c;
  c.sram_read.assign(isa.memories().size(), 0);
  c.sram_write.assign(isa.memories().size(), 0);
  const SemanticClass cls = in.desc().cls->id;
  const Mems m{posByName(isa, mem::kAct), posByName(isa, mem::kWeight), posByName(isa, mem::kAcc),
               posByName(isa, mem::kParam)};
  const bool compute = cls != SemanticClass::DmaLoad && cls != SemanticClass::DmaStore &&
                       cls != SemanticClass::Sync && cls != SemanticClass::Halt &&
                       cls != SemanticClass::Custom;
  if (compute && (m.act < 0 || m.weight < 0 || m.acc < 0 || m.param < 0))
    return c; // a description without the built-in memories has no built-in compute
  switch (cls) {
  case SemanticClass::DmaLoad:
  case SemanticClass::DmaStore:
    dma(isa, in, cls == SemanticClass::DmaLoad, c);
    break;
  case SemanticClass::Gemm:
    gemm(isa, in, m, c);
    break;
  case SemanticClass::Depthwise:
    depthwise(isa, in, m, c);
    break;
  case SemanticClass::VectorBinary:
  case SemanticClass::VectorUnary:
  case SemanticClass::Requantize:
  case SemanticClass::Lut:
    vector(isa, in, cls, m, c);
    break;
  case SemanticClass::QuantizedAdd:
    quantizedAdd(isa, in, m, c);
    break;
  case SemanticClass::Normalize:
    normalize(isa, in, m, c);
    break;
  case SemanticClass::Sync:
  case SemanticClass::Halt:
  case SemanticClass::Custom:
    break;
  }
  return c;
}

Meter::Meter(const IsaDescription& isa) {
  sram_read.assign(isa.memories().size(), 0);
  sram_write.assign(isa.memories().size(), 0);
}

double Meter::add(const IsaDescription& isa, const Instruction& in, const Counts& c) {
  const auto& et = isa.energy();
  const auto& d = in.desc();
  double e = d.energyOf(energy_key::kIssue);
  double* unit = &control;
  switch (d.cls->id) {
  case SemanticClass::Gemm:
  case SemanticClass::Depthwise:
    e += double(c.macs) * et.mac_int8;
    unit = &mac;
    break;
  case SemanticClass::DmaLoad:
  case SemanticClass::DmaStore:
    e += double(c.bursts) * d.energyOf(energy_key::kPerBurst);
    unit = &dma;
    break;
  case SemanticClass::VectorBinary:
  case SemanticClass::VectorUnary:
  case SemanticClass::Requantize:
  case SemanticClass::QuantizedAdd:
  case SemanticClass::Lut:
    e += double(c.lane_ops) * d.energyOf(energy_key::kPerLane);
    unit = &vector;
    break;
  case SemanticClass::Normalize:
    e += double(c.elements) * d.energyOf(energy_key::kPerElement);
    unit = &vector;
    break;
  case SemanticClass::Sync:
  case SemanticClass::Halt:
  case SemanticClass::Custom:
    break;
  }
  *unit = checkedSum(*unit, e, "a unit's energy");
  const auto& mems = isa.memories();
  for (std::size_t i = 0; i < c.sram_read.size() && i < mems.size(); ++i) {
    sram_read[i] += c.sram_read[i];
    sram_write[i] += c.sram_write[i];
    e += double(c.sram_read[i]) * mems[i].read_pj_per_byte +
         double(c.sram_write[i]) * mems[i].write_pj_per_byte;
  }
  e += double(c.dram_read) * et.dram_read_per_byte + double(c.dram_write) * et.dram_write_per_byte;
  macs += c.macs;
  dram_read += c.dram_read;
  dram_write += c.dram_write;
  return checkedSum(e, 0, "an instruction's energy");
}

} // namespace ember::isa::energy
