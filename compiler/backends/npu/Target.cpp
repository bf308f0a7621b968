#include "Target.h"

#include "ember/support/Error.h"

#include <algorithm>
#include <cmath>

namespace ember::npu {

namespace {
const char* memName(Mem m) {
  switch (m) {
  case Mem::Act:
    return "act";
  case Mem::Weight:
    return "weight";
  case Mem::Acc:
    return "acc";
  case Mem::Param:
    return "param";
  }
  return "act";
}
} // namespace

Target::Target(const isa::IsaDescription& isa) : isa_(isa) {
  lanes_ = isa_.hw().vector.lanes;
  const std::string where = "NPU description '" + isa_.name() + "' (" + isa_.file() + ")";
  if (lanes_ <= 0 || isa_.hw().mac.rows != lanes_ || isa_.hw().mac.cols != lanes_)
    throw Error(where, "the NPU backend needs vector lanes = MAC rows = MAC cols");
  for (Mem m : {Mem::Act, Mem::Weight, Mem::Acc, Mem::Param})
    if (!isa_.findMemory(memName(m)))
      throw Error(where, std::string("has no '") + memName(m) + "' memory");
  dmaLoad_ = findClass("dma-load");
  dmaStore_ = findClass("dma-store");
  gemm_ = findClass("gemm");
  requant_ = findClass("requantize");
  lut_ = findClass("lut");
  sync_ = findClass("sync");
  halt_ = findClass("halt");
  for (const char* op : {"add", "sub", "mul", "max"})
    vecBinary(op);
  for (const char* op : {"clamp", "copy"})
    vecUnary(op);
}

const isa::InstrDesc* Target::findClass(const std::string& cls, const std::string& op) const {
  // The first instruction of the class (file order); a LUT prefers table_offset 0.
  for (const auto& d : isa_.instructions())
    if (d.cls && d.cls->name == cls && (op.empty() || d.op == op))
      return &d;
  throw Error("NPU description '" + isa_.name() + "'", "has no instruction of class '" + cls + "'" +
                                                           (op.empty() ? "" : " with op " + op) +
                                                           ", which the NPU backend needs");
}

const isa::InstrDesc& Target::vecBinary(const std::string& op) const {
  return *findClass("vector-binary", op);
}

const isa::InstrDesc& Target::vecUnary(const std::string& op) const {
  return *findClass("vector-unary", op);
}

int64_t Target::rows(Mem m) const {
  return static_cast<int64_t>(isa_.memory(memName(m)).rows());
}

int64_t Target::rowBytes(Mem m) const {
  return static_cast<int64_t>(isa_.memory(memName(m)).row_bytes);
}

int64_t Target::memId(Mem m) const {
  return isa_.memory(memName(m)).id;
}

int64_t Target::maxOf(const isa::InstrDesc& d, const std::string& role) {
  const isa::FieldDesc* f = d.field(role);
  if (!f)
    throw Error("instruction '" + d.name + "'", "has no field '" + role + "'");
  return f->maxValue();
}

int64_t Target::minOf(const isa::InstrDesc& d, const std::string& role) {
  const isa::FieldDesc* f = d.field(role);
  if (!f)
    throw Error("instruction '" + d.name + "'", "has no field '" + role + "'");
  return f->minValue();
}

namespace {
/// Product of loop-count fields in double: estimates never wrap (docs/compiler.md cost
/// model; the simulator's exact figures use checked integers).
double rowsOf(const isa::Instruction& in, std::initializer_list<const char*> roles) {
  double r = 1;
  for (const char* role : roles)
    r *= double(in.get(role));
  return r;
}
} // namespace

double Target::dmaCycles(const isa::InstrDesc& d, double bytes) const {
  const auto& hw = isa_.hw();
  const double head = d.timingOf("issue") + d.timingOf("setup");
  if (bytes <= 0)
    return head;
  const double lat = static_cast<double>(hw.dma.latency_cycles);
  const double inflight =
      std::max<double>(1, double(hw.dma.max_outstanding) * double(hw.dma.burst_bytes));
  double X = std::ceil(bytes / std::max<double>(1, double(hw.dram.bytes_per_cycle)));
  if (lat > 0)
    X = std::max(X, std::ceil(bytes * lat / inflight));
  return head + lat + X;
}

std::pair<double, double> Target::dmaParts(const isa::Instruction& in) const {
  const isa::MemoryDesc* m = isa_.memoryById(in.get("sram"));
  const double bytes = rowsOf(in, {"size0", "size1", "size2"}) * (m ? double(m->row_bytes) : 1.0);
  const double head = in.desc().timingOf("issue") + in.desc().timingOf("setup");
  if (bytes <= 0)
    return {head, 0.0};
  const double total = dmaCycles(in.desc(), bytes);
  const double lat = static_cast<double>(isa_.hw().dma.latency_cycles);
  return {head + lat, total - head - lat};
}

double Target::gemmCycles(int64_t n2, int64_t n1, int64_t n0) const {
  const auto& mac = isa_.hw().mac;
  const double cpr = gemm_->timingOf("cycles_per_row"), issue = gemm_->timingOf("issue");
  if (n0 == 0 || n1 == 0 || n2 == 0)
    return issue;
  const double rows = double(n0) * double(n1) * cpr, WL = double(mac.weight_load_cycles);
  const double fd = double(mac.fill_cycles) + double(mac.drain_cycles);
  const double T = mac.weight_buffers >= 2 ? std::max(rows, WL) : WL + rows;
  return issue + WL + double(n2 - 1) * T + rows + fd;
}

double Target::vectorCycles(const isa::InstrDesc& d, int64_t n1, int64_t n0) const {
  const double issue = d.timingOf("issue");
  if (n0 == 0 || n1 == 0)
    return issue;
  return issue + double(n0) * double(n1) * d.timingOf("cycles_per_row") +
         d.timingOf("pipeline_latency");
}

double Target::bankConflicts(const isa::Instruction& in) const {
  const isa::MemoryDesc* m = isa_.memoryById(in.get("src_mem"));
  if (!m)
    return 0;
  const int64_t banks = std::max(1u, m->banks), ports = std::max(1u, m->read_ports);
  const int64_t perConflict = (2 + ports - 1) / ports - 1;
  if (perConflict == 0 || banks == 1)
    return perConflict == 0 ? 0 : rowsOf(in, {"n0", "n1"}) * double(perConflict);
  const int64_t a = in.get("src0_addr"), as0 = in.get("src0_s0"), as1 = in.get("src0_s1");
  const int64_t b = in.get("src1_addr"), bs0 = in.get("src1_s0"), bs1 = in.get("src1_s1");
  int64_t n = 0;
  for (int64_t i1 = 0, n1 = in.get("n1"); i1 < n1; ++i1)
    for (int64_t i0 = 0, n0 = in.get("n0"); i0 < n0; ++i0)
      n += (uint64_t(a) + uint64_t(i0) * uint64_t(as0) + uint64_t(i1) * uint64_t(as1)) %
               uint64_t(banks) ==
           (uint64_t(b) + uint64_t(i0) * uint64_t(bs0) + uint64_t(i1) * uint64_t(bs1)) %
               uint64_t(banks); // wrapping is exact: banks is a power of two
  return double(n * perConflict);
}

double Target::cyclesOf(const isa::Instruction& in) const {
  const std::string& cls = in.desc().cls->name;
  if (cls == "dma-load" || cls == "dma-store") {
    const isa::MemoryDesc* m = isa_.memoryById(in.get("sram"));
    return dmaCycles(in.desc(),
                     rowsOf(in, {"size0", "size1", "size2"}) * (m ? double(m->row_bytes) : 1.0));
  }
  if (cls == "gemm") {
    if (in.get("reset"))
      return in.desc().timingOf("issue") +
             rowsOf(in, {"n0", "n1", "n2"}) * in.desc().timingOf("cycles_per_row");
    return gemmCycles(in.get("n2"), in.get("n1"), in.get("n0"));
  }
  if (cls == "vector-binary")
    return vectorCycles(in.desc(), in.get("n1"), in.get("n0")) + bankConflicts(in);
  if (cls == "vector-unary" || cls == "requantize" || cls == "lut")
    return vectorCycles(in.desc(), in.get("n1"), in.get("n0"));
  return in.desc().timingOf("issue");
}

} // namespace ember::npu
