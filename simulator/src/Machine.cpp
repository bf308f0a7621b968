// Data semantics of every instruction class (docs/isa/instructions.md section 2).
#include "Machine.h"
#include "ember/isa/dma.h"
#include "ember/isa/roles.h"

#include "ember/isa/error.h"

#include "PlatformTypes.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace ember::sim::detail {

namespace {

using isa::Instruction;
using u64 = std::uint64_t;
using i64 = std::int64_t;

u64 U(const Instruction& in, const char* role) {
  return static_cast<u64>(in.get(role));
}

ExecFault sramRange(const char* operand, const isa::MemoryDesc& m, u64 last) {
  return {FaultKind::SramOutOfRange, std::string(operand) + " reaches " + m.name + " row " +
                                         std::to_string(last) + ", beyond its " +
                                         std::to_string(m.rows()) + " rows"};
}

/// Last row of a strided loop nest (strides are unsigned, so the last index is the max).
u64 lastRow(u64 base, std::initializer_list<std::pair<u64, u64>> loops) {
  u64 r = base;
  for (auto [n, s] : loops)
    r = satAdd(r, satMul(n - 1, s));
  return r;
}

} // namespace

Cls classOf(const isa::InstrDesc& d) {
  if (d.cls->id == Cls::Custom)
    throw isa::Error("<simulator>", d.json_path,
                     "semantic class '" + d.cls->name + "' has no simulator implementation");
  return d.cls->id;
}

Machine::Machine(const isa::IsaDescription& isa, DramImage dram, u64 window)
    : isa_(isa), dram_(std::move(dram), window), mac_(isa.hw().mac.rows, HostKernels::Vnni) {
  for (const auto& m : isa.memories()) {
    Sram s;
    s.desc = &m;
    s.bytes.assign(m.size_bytes, 0);
    srams_.push_back(std::move(s));
  }
  for (auto& s : srams_) {
    if (s.desc->name == isa::mem::kAct)
      act_ = &s;
    else if (s.desc->name == isa::mem::kWeight)
      weight_ = &s;
    else if (s.desc->name == isa::mem::kAcc)
      acc_ = &s;
    else if (s.desc->name == isa::mem::kParam)
      param_ = &s;
  }
}

Machine::Sram* Machine::sramById(std::int64_t id) {
  for (auto& s : srams_)
    if (static_cast<std::int64_t>(s.desc->id) == id)
      return &s;
  return nullptr;
}

std::size_t Machine::posOf(const isa::MemoryDesc* m) const {
  for (std::size_t i = 0; i < srams_.size(); ++i)
    if (srams_[i].desc == m)
      return i;
  return 0;
}

std::optional<ExecFault> Machine::execute(const Instruction& insn, Cls cls, Counts& c) {
  std::optional<ExecFault> f = apply(insn, cls);
  // What it did, for energy and traffic: the model the RTL's report shares.
  if (!f)
    c = isa::energy::countsOf(isa_, insn);
  return f;
}

std::optional<ExecFault> Machine::apply(const Instruction& insn, Cls cls) {
  switch (cls) {
  case Cls::DmaLoad:
    return dma(insn, true);
  case Cls::DmaStore:
    return dma(insn, false);
  case Cls::Gemm:
    return gemm(insn);
  case Cls::Depthwise:
    return depthwise(insn);
  case Cls::VectorBinary:
  case Cls::VectorUnary:
  case Cls::Requantize:
  case Cls::Lut:
    return vector(insn, cls);
  case Cls::QuantizedAdd:
    return quantizedAdd(insn);
  case Cls::Normalize:
    return normalize(insn);
  case Cls::Sync:
  case Cls::Halt:
  case Cls::Custom: // refused by classOf at fetch
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<ExecFault> Machine::dma(const Instruction& insn, bool load) {
  std::int64_t id = insn.get(isa::role::kSram);
  Sram* mem = sramById(id);
  const auto& allowed = insn.desc().memories;
  if (!mem || std::find(allowed.begin(), allowed.end(), mem->desc->name) == allowed.end())
    return ExecFault{FaultKind::BadOperand, "sram selects memory id " + std::to_string(id) +
                                                ", which " + insn.name() + " cannot access"};
  const u64 B = mem->desc->row_bytes;
  const u64 s0 = U(insn, isa::role::kSize0), s1 = U(insn, isa::role::kSize1),
            s2 = U(insn, isa::role::kSize2);
  const u64 st1 = U(insn, isa::role::kStride1), st2 = U(insn, isa::role::kStride2);
  u64 pl = 0, pr = 0, pt = 0, pb = 0;
  std::uint8_t pv = 0;
  if (load) {
    pl = U(insn, isa::role::kPadLeft), pr = U(insn, isa::role::kPadRight),
    pt = U(insn, isa::role::kPadTop), pb = U(insn, isa::role::kPadBottom);
    pv = static_cast<std::uint8_t>(insn.get(isa::role::kPadValue));
  }
  const u64 lineRows = satAdd(satAdd(pl, s0), pr), planeLines = satAdd(satAdd(pt, s1), pb);
  const u64 sramRows = satMul(satMul(s2, planeLines), lineRows);
  const u64 addr = U(insn, isa::role::kSramAddr), daddr = U(insn, isa::role::kDramAddr);
  if (sramRows == 0)
    return std::nullopt;
  if (satAdd(addr, sramRows) > mem->desc->rows())
    return sramRange(isa::role::kSramAddr, *mem->desc, satAdd(addr, sramRows) - 1);
  if (auto f = touch(mem, addr, addr + sramRows - 1, load))
    return f;
  if (const auto end = isa::dmaDramEnd(isa_, insn); end && *end > dram_.window())
    return ExecFault{FaultKind::DramOutOfRange, "DRAM bytes [" + std::to_string(daddr) + ", " +
                                                    std::to_string(*end) +
                                                    ") leave the job's DRAM window of " +
                                                    std::to_string(dram_.window()) + " bytes"};
  std::uint8_t* sram = mem->bytes.data();
  for (u64 p = 0; p < s2; ++p) {
    for (u64 L = 0; L < planeLines; ++L) {
      u64 row = addr + (p * planeLines + L) * lineRows;
      if (L < pt || L >= pt + s1) {
        std::memset(sram + row * B, pv, lineRows * B);
        continue;
      }
      u64 l = L - pt;
      u64 dram = daddr + (p * st2 + l * st1) * B;
      if (load) {
        std::memset(sram + row * B, pv, pl * B);
        dram_.read(dram, sram + (row + pl) * B, s0 * B);
        std::memset(sram + (row + pl + s0) * B, pv, pr * B);
      } else {
        dram_.write(dram, sram + row * B, s0 * B);
      }
    }
  }
  return std::nullopt;
}

std::optional<ExecFault> Machine::touch(const Sram* m, u64 first, u64 last, bool write) const {
  if (!guard_.on)
    return std::nullopt;
  const u64* r = m == acc_               ? guard_.acc
                 : m == act_ && write    ? guard_.act
                 : m == weight_ && write ? guard_.weight
                                         : nullptr;
  if (!r || r[0] > r[1] || last < r[0] || first > r[1])
    return std::nullopt;
  return ExecFault{FaultKind::BadOperand,
                   std::string(write ? "writes " : "reads ") + m->desc->name + " rows [" +
                       std::to_string(first) + ", " + std::to_string(last) +
                       "] while the array's background " + (guard_.cls ? *guard_.cls : "gemm") +
                       " uses rows [" + std::to_string(r[0]) + ", " + std::to_string(r[1]) +
                       "] (docs/simulator.md rule E6)"};
}

std::optional<ExecFault> Machine::arrayStart(const Instruction& insn) {
  guard_ = Guard{};
  guard_.cls = &insn.desc().cls->name;
  if (insn.desc().background && (insn.get(isa::role::kPushPrev) || insn.get(isa::role::kPushNext)))
    return ExecFault{FaultKind::BadOperand,
                     "a background " + insn.desc().cls->name +
                         " instruction pushes a token before its data is complete "
                         "(docs/simulator.md rule E6)"};
  return std::nullopt;
}

std::optional<ExecFault> Machine::gemm(const Instruction& insn) {
  const u64 n0 = U(insn, isa::role::kN0), n1 = U(insn, isa::role::kN1),
            n2 = U(insn, isa::role::kN2);
  const bool background = insn.desc().background;
  if (auto f = arrayStart(insn))
    return f;
  if (n0 == 0 || n1 == 0 || n2 == 0)
    return std::nullopt;
  const auto& ad = *act_->desc;
  const auto& cd = *acc_->desc;
  const auto& wd = *weight_->desc;
  const u64 accA = U(insn, isa::role::kAccAddr), aS0 = U(insn, isa::role::kAccS0),
            aS1 = U(insn, isa::role::kAccS1), aS2 = U(insn, isa::role::kAccS2);
  u64 lastAcc = lastRow(accA, {{n0, aS0}, {n1, aS1}, {n2, aS2}});
  if (lastAcc >= cd.rows())
    return sramRange(isa::role::kAccAddr, cd, lastAcc);
  guard_.background = background;
  guard_.acc[0] = accA;
  guard_.acc[1] = lastAcc;
  if (insn.get(isa::role::kReset)) {
    for (u64 i2 = 0; i2 < n2; ++i2)
      for (u64 i1 = 0; i1 < n1; ++i1)
        for (u64 i0 = 0; i0 < n0; ++i0)
          std::memset(acc_->bytes.data() + (accA + i0 * aS0 + i1 * aS1 + i2 * aS2) * cd.row_bytes,
                      0, cd.row_bytes);
    return std::nullopt;
  }
  const u64 actA = U(insn, isa::role::kActAddr), xS0 = U(insn, isa::role::kActS0),
            xS1 = U(insn, isa::role::kActS1), xS2 = U(insn, isa::role::kActS2);
  const u64 wA = U(insn, isa::role::kWgtAddr), wS2 = U(insn, isa::role::kWgtS2);
  u64 lastAct = lastRow(actA, {{n0, xS0}, {n1, xS1}, {n2, xS2}});
  if (lastAct >= ad.rows())
    return sramRange(isa::role::kActAddr, ad, lastAct);
  u64 lastW = lastRow(wA, {{n2, wS2}});
  if (lastW >= wd.rows())
    return sramRange(isa::role::kWgtAddr, wd, lastW);
  guard_.act[0] = actA;
  guard_.act[1] = lastAct;
  guard_.weight[0] = wA;
  guard_.weight[1] = lastW;
  // properties.overwrite: each step of the first pass writes its products (a row
  // cleared just before it is summed into, so a row two steps share keeps the later).
  // When the steps' rows are distinct, clearing them all first is the same.
  const bool distinct = aS0 != 0 && (n1 == 1 || aS1 >= n0 * aS0);
  for (u64 i2 = 0; i2 < n2; ++i2) {
    mac_.load(reinterpret_cast<const std::int8_t*>(weight_->bytes.data() +
                                                   (wA + i2 * wS2) * wd.row_bytes));
    if (i2 == 0 && insn.desc().overwrite && distinct) {
      for (u64 i1 = 0; i1 < n1; ++i1)
        for (u64 i0 = 0; i0 < n0; ++i0)
          std::memset(acc_->bytes.data() + (accA + i0 * aS0 + i1 * aS1) * cd.row_bytes, 0,
                      cd.row_bytes);
    } else if (i2 == 0 && insn.desc().overwrite) {
      for (u64 i1 = 0; i1 < n1; ++i1)
        for (u64 i0 = 0; i0 < n0; ++i0) {
          auto* out = acc_->bytes.data() + (accA + i0 * aS0 + i1 * aS1) * cd.row_bytes;
          std::memset(out, 0, cd.row_bytes);
          mac_.rows(act_->bytes.data() + (actA + i0 * xS0 + i1 * xS1) * ad.row_bytes, 0, 0, out, 0,
                    0, 1, 1);
        }
      continue;
    }
    mac_.rows(act_->bytes.data() + (actA + i2 * xS2) * ad.row_bytes, xS0 * ad.row_bytes,
              xS1 * ad.row_bytes, acc_->bytes.data() + (accA + i2 * aS2) * cd.row_bytes,
              aS0 * cd.row_bytes, aS1 * cd.row_bytes, n0, n1);
  }
  return std::nullopt;
}

std::optional<ExecFault> Machine::depthwise(const Instruction& insn) {
  const u64 n0 = U(insn, isa::role::kN0), n1 = U(insn, isa::role::kN1);
  const u64 kh = U(insn, isa::role::kKh), kw = U(insn, isa::role::kKw);
  if (auto f = arrayStart(insn))
    return f;
  if (n0 == 0 || n1 == 0 || kh == 0 || kw == 0)
    return std::nullopt;
  const auto& ad = *act_->desc;
  const auto& cd = *acc_->desc;
  const auto& wd = *weight_->desc;
  const unsigned R = isa_.hw().mac.rows, L = isa_.hw().mac.cols;
  if (kh * kw > R)
    return ExecFault{FaultKind::BadOperand, "kh * kw = " + std::to_string(kh * kw) +
                                                " taps, more than the array's " +
                                                std::to_string(R) + " rows"};
  const u64 actA = U(insn, isa::role::kActAddr), xS0 = U(insn, isa::role::kActS0),
            xS1 = U(insn, isa::role::kActS1), tS0 = U(insn, isa::role::kTapS0),
            tS1 = U(insn, isa::role::kTapS1);
  const u64 accA = U(insn, isa::role::kAccAddr), aS0 = U(insn, isa::role::kAccS0),
            aS1 = U(insn, isa::role::kAccS1), wA = U(insn, isa::role::kWgtAddr);
  const u64 lastAcc = lastRow(accA, {{n0, aS0}, {n1, aS1}});
  if (lastAcc >= cd.rows())
    return sramRange(isa::role::kAccAddr, cd, lastAcc);
  const u64 lastAct = lastRow(actA, {{n0, xS0}, {n1, xS1}, {kh, tS1}, {kw, tS0}});
  if (lastAct >= ad.rows())
    return sramRange(isa::role::kActAddr, ad, lastAct);
  if (wA >= wd.rows())
    return sramRange(isa::role::kWgtAddr, wd, wA);
  guard_.background = insn.desc().background;
  guard_.act[0] = actA;
  guard_.act[1] = lastAct;
  guard_.weight[0] = guard_.weight[1] = wA;
  guard_.acc[0] = accA;
  guard_.acc[1] = lastAcc;
  // Row t of the weight block holds tap t = y * kw + x: lane c is channel c's weight.
  const auto* w = reinterpret_cast<const std::int8_t*>(weight_->bytes.data() + wA * wd.row_bytes);
  std::vector<std::int32_t> sum(L);
  for (u64 i1 = 0; i1 < n1; ++i1)
    for (u64 i0 = 0; i0 < n0; ++i0) {
      const u64 base = actA + i0 * xS0 + i1 * xS1;
      auto* out = acc_->bytes.data() + (accA + i0 * aS0 + i1 * aS1) * cd.row_bytes;
      if (insn.desc().overwrite) // properties.overwrite: the products, not added
        std::fill(sum.begin(), sum.end(), 0);
      else
        std::memcpy(sum.data(), out, std::size_t(L) * 4);
      for (u64 y = 0; y < kh; ++y)
        for (u64 x = 0; x < kw; ++x) {
          const auto* a = reinterpret_cast<const std::int8_t*>(
              act_->bytes.data() + (base + y * tS1 + x * tS0) * ad.row_bytes);
          const std::int8_t* wt = w + (y * kw + x) * L;
          for (unsigned l = 0; l < L; ++l) // int32 wrap, as the array's adders
            sum[l] =
                static_cast<std::int32_t>(static_cast<std::uint32_t>(sum[l]) +
                                          static_cast<std::uint32_t>(std::int32_t(a[l]) * wt[l]));
        }
      std::memcpy(out, sum.data(), std::size_t(L) * 4);
    }
  return std::nullopt;
}

} // namespace ember::sim::detail
