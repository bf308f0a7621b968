#include "Target.h"
#include "ember/isa/roles.h"

#include "ember/isa/timing.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <cmath>

namespace ember::npu {

namespace {
/// Whether every field of `d` that `plain` has holds at least the plain one's values (so
/// `d` can stand in for `plain` wherever the compiler sized an instruction by its fields).
bool holds(const isa::InstrDesc& d, const isa::InstrDesc& plain) {
  for (const auto& f : plain.fields) {
    const isa::FieldDesc* g = d.field(f.role);
    if (!g || g->maxValue() < f.maxValue() || g->minValue() > f.minValue())
      return false;
  }
  return true;
}

const char* memName(Mem m) {
  switch (m) {
  case Mem::Act:
    return isa::mem::kAct;
  case Mem::Weight:
    return isa::mem::kWeight;
  case Mem::Acc:
    return isa::mem::kAcc;
  case Mem::Param:
    return isa::mem::kParam;
  }
  return isa::mem::kAct;
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
  dmaLoad_ = findClass(isa::cls::kDmaLoad);
  dmaStore_ = findClass(isa::cls::kDmaStore);
  gemm_ = findClass(isa::cls::kGemm);
  requant_ = findClass(isa::cls::kRequantize);
  lut_ = findClass(isa::cls::kLut);
  sync_ = findClass(isa::cls::kSync);
  halt_ = findClass(isa::cls::kHalt);
  for (const auto& d : isa_.instructions()) {
    if (!qadd_ && d.cls && d.cls->id == isa::SemanticClass::QuantizedAdd)
      qadd_ = &d;
    if (d.overwrite || d.bias)
      continue; // findBiasInRequant
    if (!dw_ && d.cls && d.cls->id == isa::SemanticClass::Depthwise)
      dw_ = &d;
    if (d.cls && d.cls->id == isa::SemanticClass::Gemm) {
      if (d.background && !gemmBg_)
        gemmBg_ = &d;
      if (!d.background && gemm_->background)
        gemm_ = &d;
    }
  }
  // The background gemm replaces gemm() inside convolutions, whose tiling reads gemm()'s
  // field limits: it is used only if its every field holds what gemm()'s holds.
  if (gemmBg_ && gemmBg_ != gemm_ && !holds(*gemmBg_, *gemm_))
    gemmBg_ = nullptr;
  findBiasInRequant();
  for (const char* op : {"add", "sub", "mul", "max"})
    vecBinary(op);
  for (const char* op : {"clamp", "copy"})
    vecUnary(op);
}

void Target::findBiasInRequant() {
  const isa::InstrDesc* rq = nullptr;
  for (const auto& d : isa_.instructions()) {
    if (!d.cls)
      continue;
    const isa::SemanticClass c = d.cls->id;
    if (d.bias && !rq && c == isa::SemanticClass::Requantize && holds(d, *requant_))
      rq = &d;
    if (!d.overwrite)
      continue;
    if (c == isa::SemanticClass::Gemm && !d.background && !gemmZ_ && holds(d, *gemm_))
      gemmZ_ = &d;
    if (c == isa::SemanticClass::Gemm && d.background && gemmBg_ && !gemmBgZ_ && holds(d, *gemmBg_))
      gemmBgZ_ = &d;
    if (c == isa::SemanticClass::Depthwise && dw_ && d.background == dw_->background && !dwZ_ &&
        holds(d, *dw_))
      dwZ_ = &d;
  }
  if (rq && gemmZ_ && !gemm_->background && (!gemmBg_ || gemmBgZ_) && (!dw_ || dwZ_))
    requantBias_ = rq;
}

const isa::InstrDesc& Target::overwriting(const isa::InstrDesc& d) const {
  if (&d == gemm_ && gemmZ_)
    return *gemmZ_;
  if (&d == gemmBg_ && gemmBgZ_)
    return *gemmBgZ_;
  if (&d == dw_ && dwZ_)
    return *dwZ_;
  throw Error("NPU backend", "no overwriting instruction for " + d.name);
}

const isa::InstrDesc* Target::normalize(const std::string& op) const {
  for (const auto& d : isa_.instructions())
    if (d.cls && d.cls->id == isa::SemanticClass::Normalize && d.op == op)
      return &d;
  return nullptr;
}

const isa::InstrDesc* Target::findClass(const std::string& cls, const std::string& op) const {
  // The first instruction of the class (file order); a LUT prefers table_offset 0. An
  // overwriting array instruction or a bias requantize is not the plain one (it is used
  // only as findBiasInRequant's twin).
  for (const auto& d : isa_.instructions())
    if (d.cls && d.cls->name == cls && (op.empty() || d.op == op) && !d.overwrite && !d.bias)
      return &d;
  throw Error("NPU description '" + isa_.name() + "'", "has no instruction of class '" + cls + "'" +
                                                           (op.empty() ? "" : " with op " + op) +
                                                           ", which the NPU backend needs");
}

const isa::InstrDesc& Target::vecBinary(const std::string& op) const {
  return *findClass(isa::cls::kVectorBinary, op);
}

const isa::InstrDesc& Target::vecUnary(const std::string& op) const {
  return *findClass(isa::cls::kVectorUnary, op);
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
double asDouble(const isa::timing::Duration& t) {
  return t.overflow ? 1e300 : double(t.cycles);
}
uint64_t count(int64_t v) {
  return v < 0 ? 0 : uint64_t(v);
}
} // namespace

isa::timing::DmaPhases Target::linePhases(const isa::InstrDesc& d, int64_t rows, Mem m) const {
  const uint64_t n = count(rows);
  return isa::timing::dmaPhases(isa_, d, isa_.memory(memName(m)), n ? 1 : 0, n, n);
}

double Target::dmaCycles(const isa::InstrDesc& d, int64_t rows, Mem m) const {
  const auto p = linePhases(d, rows, m);
  if (p.overflow)
    return 1e300;
  return double(p.head) + double(p.transfer) + double(p.latency);
}

double Target::channelCycles(const isa::InstrDesc& d, int64_t rows, Mem m) const {
  const auto p = linePhases(d, rows, m);
  return p.overflow ? 1e300 : double(p.transfer);
}

Target::DmaParts Target::dmaParts(const isa::Instruction& in) const {
  const auto p = isa::timing::dmaPhases(isa_, in);
  if (p.overflow)
    return {1e300, 0, 0};
  return {double(p.head), double(p.transfer), double(p.latency)};
}

double Target::dmaEnd(const isa::Instruction& in, double start, double& busFree) const {
  if (start >= 1e19 || busFree >= 1e19)
    return 1e300;
  isa::timing::Channel ch{uint64_t(busFree)};
  const isa::timing::Duration d =
      isa::timing::dmaOnChannel(isa::timing::dmaPhases(isa_, in), uint64_t(start), ch);
  if (d.overflow)
    return 1e300;
  busFree = double(ch.free_at);
  return double(uint64_t(start) + d.cycles);
}

double Target::gemmCycles(int64_t n2, int64_t n1, int64_t n0) const {
  uint64_t R = 0;
  if (__builtin_mul_overflow(count(n0), count(n1), &R))
    return 1e300;
  return asDouble(isa::timing::gemm(isa_, *gemm_, R, count(n2), false));
}

double Target::depthwiseCycles(int64_t outputs, int64_t kh, int64_t kw, int64_t tapS0,
                               int64_t tapS1) const {
  const uint64_t C =
      isa::timing::depthwiseTapCycles(isa_, count(kh), count(kw), count(tapS0), count(tapS1));
  return asDouble(isa::timing::depthwise(isa_, *dw_, count(outputs), C));
}

double Target::vectorCycles(const isa::InstrDesc& d, int64_t n1, int64_t n0) const {
  uint64_t steps = 0;
  if (__builtin_mul_overflow(count(n0), count(n1), &steps))
    return 1e300;
  return asDouble(isa::timing::vector(d, steps, 0));
}

double Target::cyclesOf(const isa::Instruction& in) const {
  return asDouble(isa::timing::idle(isa_, in));
}

} // namespace ember::npu
