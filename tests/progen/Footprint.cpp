// The rows an instruction touches, per semantic class (see Footprint.h).
#include "ember/progen/Footprint.h"

#include "ember/isa/roles.h"
#include "ember/isa/semantic.h"

namespace ember::progen {

namespace {

using u64 = std::uint64_t;

/// A role's value, 0 for a role the instruction lacks.
u64 field(const isa::Instruction& in, const std::string& role) {
  return in.has(role) ? u64(in.get(role)) : 0;
}

/// The name of the memory the select role `role` names ("?" for an unknown id).
std::string memoryName(const isa::IsaDescription& isa, const isa::Instruction& in,
                       const char* role) {
  const isa::MemoryDesc* m = isa.memoryById(in.get(role));
  return m ? m->name : std::string("?");
}

/// A DMA's SRAM rows (the padded box) and, when it moves data, its DRAM bytes.
void dmaFootprint(const isa::IsaDescription& isa, const isa::Instruction& in, bool load,
                  std::vector<RowRange>& v) {
  namespace R = isa::role;
  const u64 s0 = field(in, R::kSize0), s1 = field(in, R::kSize1), s2 = field(in, R::kSize2);
  const u64 rows = (field(in, R::kPadLeft) + s0 + field(in, R::kPadRight)) *
                   (field(in, R::kPadTop) + s1 + field(in, R::kPadBottom)) * s2;
  if (rows == 0)
    return;
  const u64 sa = field(in, R::kSramAddr);
  v.push_back({memoryName(isa, in, R::kSram), sa, sa + rows - 1, load});
  const isa::MemoryDesc* m = isa.memoryById(in.get(R::kSram));
  if (s0 && s1 && s2 && m) {
    const u64 d = field(in, R::kDramAddr);
    v.push_back({kDram, d,
                 d +
                     ((s2 - 1) * field(in, R::kStride2) + (s1 - 1) * field(in, R::kStride1) + s0) *
                         m->row_bytes -
                     1,
                 !load});
  }
}

/// A vector-class instruction's destination and source walks and the param memory.
void vectorFootprint(const isa::IsaDescription& isa, const isa::Instruction& in,
                     std::vector<RowRange>& v) {
  namespace R = isa::role;
  if (!field(in, R::kN0) || !field(in, R::kN1))
    return;
  const std::string dst = in.has(R::kDstMem) ? memoryName(isa, in, R::kDstMem) : isa::mem::kAct;
  const std::string src = in.has(R::kSrcMem) ? memoryName(isa, in, R::kSrcMem)
                          : in.desc().cls->id == isa::SemanticClass::Requantize ? isa::mem::kAcc
                                                                                : isa::mem::kAct;
  // A walk's bounding rows: <p>_addr + (n0 - 1) * <p>_s0 + (n1 - 1) * <p>_s1.
  auto walk = [&](const std::string& mem, const std::string& p, bool write) {
    const u64 b = field(in, p + "_addr");
    v.push_back({mem, b,
                 b + (field(in, R::kN0) - 1) * field(in, p + "_s0") +
                     (field(in, R::kN1) - 1) * field(in, p + "_s1"),
                 write});
  };
  walk(dst, "dst", true);
  for (const char* p : {"src", "src0", "src1"})
    if (in.has(std::string(p) + "_addr"))
      walk(src, p, false);
  v.push_back({isa::mem::kParam, 0, ~u64(0), false}); // parameters and tables
}

/// Normalize: len codes a line, ceil(len / lanes) act rows walked by <p>_sb, n1 lines
/// walked by <p>_s1; its parameter block in acc.
void normalizeFootprint(const isa::IsaDescription& isa, const isa::Instruction& in,
                        std::vector<RowRange>& v) {
  namespace R = isa::role;
  const u64 len = field(in, R::kLen), n1 = field(in, R::kN1), L = isa.hw().vector.lanes;
  if (!len || !n1)
    return;
  const u64 rows = (len + L - 1) / L;
  for (const std::string p : {"dst", "src"}) {
    const u64 b = field(in, p + "_addr");
    v.push_back({isa::mem::kAct, b,
                 b + (rows - 1) * field(in, p + "_sb") + (n1 - 1) * field(in, p + "_s1"),
                 p == "dst"});
  }
  const u64 pb = field(in, R::kBlockAddr);
  v.push_back({isa::mem::kAcc, pb,
               pb + isa::normalizeParamRows(in.desc().op == "softmax", len, unsigned(L)) - 1,
               false});
}

} // namespace

std::vector<ArrayWalk> arrayWalks(const isa::Instruction& in) {
  namespace R = isa::role;
  auto span = [&](const std::string& n, const std::string& s) { // (n - 1) * s, n > 0
    return field(in, n) ? (field(in, n) - 1) * field(in, s) : 0;
  };
  if (in.desc().cls->id == isa::SemanticClass::Depthwise)
    return {{R::kAccAddr, isa::mem::kAcc, span(R::kN0, R::kAccS0) + span(R::kN1, R::kAccS1)},
            {R::kActAddr, isa::mem::kAct,
             span(R::kN0, R::kActS0) + span(R::kN1, R::kActS1) + span(R::kKh, R::kTapS1) +
                 span(R::kKw, R::kTapS0)},
            {R::kWgtAddr, isa::mem::kWeight, 0}};
  auto ext = [&](const std::string& p) {
    u64 e = 0;
    for (int l = 0; l < 3; ++l)
      e += span("n" + std::to_string(l), p + std::to_string(l));
    return e;
  };
  return {{R::kAccAddr, isa::mem::kAcc, ext("acc_s")},
          {R::kActAddr, isa::mem::kAct, ext("act_s")},
          {R::kWgtAddr, isa::mem::kWeight, span(R::kN2, R::kWgtS2)}};
}

std::vector<RowRange> footprint(const isa::IsaDescription& isa, const isa::Instruction& in) {
  namespace R = isa::role;
  using C = isa::SemanticClass;
  std::vector<RowRange> v;
  switch (in.desc().cls->id) {
  case C::DmaLoad:
  case C::DmaStore:
    dmaFootprint(isa, in, in.desc().cls->id == C::DmaLoad, v);
    break;
  case C::Gemm:
  case C::Depthwise: // nothing when a loop (or the window) is empty
    if (field(in, R::kN0) && field(in, R::kN1) &&
        (in.desc().cls->id == C::Gemm ? field(in, R::kN2) != 0
                                      : field(in, R::kKh) && field(in, R::kKw)))
      for (const ArrayWalk& w : arrayWalks(in)) {
        const u64 b = field(in, w.addr);
        v.push_back({w.mem, b, b + w.ext, w.addr == std::string(R::kAccAddr)});
      }
    break;
  case C::VectorBinary:
  case C::VectorUnary:
  case C::Requantize:
  case C::QuantizedAdd:
  case C::Lut:
    vectorFootprint(isa, in, v);
    break;
  case C::Normalize:
    normalizeFootprint(isa, in, v);
    break;
  default:
    break;
  }
  return v;
}

} // namespace ember::progen
