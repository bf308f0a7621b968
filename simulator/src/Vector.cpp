// The vector unit: vector-binary, vector-unary, requantize, quantized-add and lut classes.
#include "Machine.h"
#include "ember/isa/roles.h"

#include "PlatformTypes.h"
#include <algorithm>
#include <cstring>

namespace ember::sim::detail {

namespace {

using isa::Instruction;
using u64 = std::uint64_t;
using i64 = std::int64_t;
__extension__ typedef __int128 i128; // exact: two 64-bit products and their sum

u64 U(const Instruction& in, const char* role) {
  return static_cast<u64>(in.get(role));
}

/// One operand of a vector instruction: memory, first row, strides.
struct Operand {
  const char* role;
  const isa::MemoryDesc* mem;
  std::uint8_t* base;
  u64 addr, s0, s1;
  u64 row(u64 i0, u64 i1) const { return addr + i0 * s0 + i1 * s1; }
  /// row() saturating at UINT64_MAX, for the range check.
  u64 lastRow(u64 i0, u64 i1) const { return satAdd(addr, satAdd(satMul(i0, s0), satMul(i1, s1))); }
};

void readRow(const Operand& o, u64 row, std::int32_t* lanes, unsigned n) {
  const std::uint8_t* p = o.base + row * o.mem->row_bytes;
  if (o.mem->elem_bits == 8) {
    for (unsigned j = 0; j < n; ++j)
      lanes[j] = static_cast<std::int8_t>(p[j]);
  } else {
    std::memcpy(lanes, p, std::size_t(n) * 4);
  }
}

/// Writes int64 lane results: act saturates to int8, acc keeps the low 32 bits.
void writeRow(const Operand& o, u64 row, const i64* lanes, unsigned n) {
  std::uint8_t* p = o.base + row * o.mem->row_bytes;
  if (o.mem->elem_bits == 8) {
    for (unsigned j = 0; j < n; ++j)
      p[j] =
          static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp<i64>(lanes[j], -128, 127)));
  } else {
    for (unsigned j = 0; j < n; ++j) {
      auto v = static_cast<std::uint32_t>(static_cast<std::uint64_t>(lanes[j]));
      std::memcpy(p + 4 * j, &v, 4);
    }
  }
}

/// The lane operation of a vector instruction, chosen once per instruction.
enum class Op { Add, Sub, Mul, Min, Max, Shift, Clamp, Copy, Lut };

Op opOf(Cls cls, const std::string& op) {
  switch (cls) {
  case Cls::VectorBinary:
    return op == "add"   ? Op::Add
           : op == "sub" ? Op::Sub
           : op == "mul" ? Op::Mul
           : op == "min" ? Op::Min
                         : Op::Max;
  case Cls::VectorUnary:
    return op == "shift" ? Op::Shift : op == "clamp" ? Op::Clamp : Op::Copy;
  default:
    return Op::Lut;
  }
}

/// One row step of the vector unit: y = op(a, b) in every lane.
struct Lanes {
  Op op;
  i64 imm0, imm1;
  const std::uint8_t* table; ///< Lut: 256 entries.

  void row(const std::int32_t* a, const std::int32_t* b, i64* y, unsigned n) const {
    switch (op) {
    case Op::Add:
      for (unsigned j = 0; j < n; ++j)
        y[j] = i64(a[j]) + b[j];
      return;
    case Op::Sub:
      for (unsigned j = 0; j < n; ++j)
        y[j] = i64(a[j]) - b[j];
      return;
    case Op::Mul:
      for (unsigned j = 0; j < n; ++j)
        y[j] = i64(a[j]) * b[j];
      return;
    case Op::Min:
      for (unsigned j = 0; j < n; ++j)
        y[j] = std::min(a[j], b[j]);
      return;
    case Op::Max:
      for (unsigned j = 0; j < n; ++j)
        y[j] = std::max(a[j], b[j]);
      return;
    case Op::Shift:
      for (unsigned j = 0; j < n; ++j)
        y[j] = roundingShift(a[j], imm0);
      return;
    case Op::Clamp:
      for (unsigned j = 0; j < n; ++j)
        y[j] = std::min<i64>(std::max<i64>(a[j], imm0), imm1);
      return;
    case Op::Copy:
      for (unsigned j = 0; j < n; ++j)
        y[j] = a[j];
      return;
    case Op::Lut:
      for (unsigned j = 0; j < n; ++j)
        y[j] = static_cast<std::int8_t>(table[a[j] + 128]);
      return;
    }
  }
};

/// The row steps of a vector-binary, vector-unary or lut instruction, in order (a
/// destination row may be a later step's source).
void rows(Cls cls, const Lanes& k, const std::vector<Operand>& srcs, const Operand& dst, u64 n0,
          u64 n1, unsigned L) {
  std::vector<std::int32_t> a(L), b(L);
  std::vector<i64> y(L);
  for (u64 i1 = 0; i1 < n1; ++i1) {
    for (u64 i0 = 0; i0 < n0; ++i0) {
      readRow(srcs[0], srcs[0].row(i0, i1), a.data(), L);
      if (cls == Cls::VectorBinary)
        readRow(srcs[1], srcs[1].row(i0, i1), b.data(), L);
      k.row(a.data(), b.data(), y.data(), L);
      writeRow(dst, dst.row(i0, i1), y.data(), L);
    }
  }
}

/// The quantized-add class's scalars (docs/isa/instructions.md section 2.10): param row p holds M0,
/// M1, S, zp in lanes 0..3, row p + 1 holds zp0, zp1, lo, hi.
struct QuantizedAdd {
  i64 m0, m1, s, zp, zp0, zp1, lo, hi;

  /// One lane: the exact sum, rounded right by S, plus zp, clamped to [lo, hi].
  i64 lane(std::int32_t a, std::int32_t b) const {
    const i128 t = (i128(a) - zp0) * m0 + (i128(b) - zp1) * m1;
    const i128 y = ((t + (i128(1) << (s - 1))) >> s) + zp;
    return i64(std::max<i128>(lo, std::min<i128>(y, hi)));
  }
  void row(const std::int32_t* a, const std::int32_t* b, i64* y, unsigned n) const {
    for (unsigned j = 0; j < n; ++j)
      y[j] = lane(a[j], b[j]);
  }
};

/// The requantize's n1 x n0 rows from `src` (acc) to `dst` (act); with a bias row `B`
/// (properties.bias, else empty) each accumulator plus its lane's bias first, int32
/// wrap-around.
void requantRows(const RequantKernel& rq, const std::vector<std::int32_t>& B, const Operand& src,
                 const Operand& dst, u64 n0, u64 n1, unsigned L) {
  std::vector<std::int32_t> a(B.size());
  for (u64 i1 = 0; i1 < n1; ++i1)
    for (u64 i0 = 0; i0 < n0; ++i0) {
      const std::uint8_t* row = src.base + src.row(i0, i1) * src.mem->row_bytes;
      if (!B.empty()) {
        std::memcpy(a.data(), row, std::size_t(L) * 4);
        for (unsigned l = 0; l < L; ++l)
          a[l] = static_cast<std::int32_t>(static_cast<std::uint32_t>(a[l]) +
                                           static_cast<std::uint32_t>(B[l]));
        row = reinterpret_cast<const std::uint8_t*>(a.data());
      }
      rq.row(row, dst.base + dst.row(i0, i1) * dst.mem->row_bytes);
    }
}

} // namespace

std::optional<ExecFault> Machine::quantizedAdd(const Instruction& insn) {
  const u64 n0 = U(insn, isa::role::kN0), n1 = U(insn, isa::role::kN1);
  const unsigned L = isa_.hw().vector.lanes;
  auto operand = [&](const char* addr, const char* s0, const char* s1) {
    return Operand{addr, act_->desc, act_->bytes.data(), U(insn, addr), U(insn, s0), U(insn, s1)};
  };
  const Operand dst = operand(isa::role::kDstAddr, isa::role::kDstS0, isa::role::kDstS1);
  const Operand a = operand(isa::role::kSrc0Addr, isa::role::kSrc0S0, isa::role::kSrc0S1);
  const Operand b = operand(isa::role::kSrc1Addr, isa::role::kSrc1S0, isa::role::kSrc1S1);
  if (n0 == 0 || n1 == 0)
    return std::nullopt;
  for (const Operand* o : {&dst, &a, &b}) {
    const u64 last = o->lastRow(n0 - 1, n1 - 1);
    if (last >= o->mem->rows())
      return ExecFault{FaultKind::SramOutOfRange, std::string(o->role) + " reaches act row " +
                                                      std::to_string(last) + ", beyond its " +
                                                      std::to_string(o->mem->rows()) + " rows"};
    if (auto f = touch(act_, o->addr, last, o == &dst))
      return f;
  }
  const auto& pd = *param_->desc;
  const u64 prow = U(insn, isa::role::kParamAddr);
  if (prow >= pd.rows() - 1)
    return ExecFault{FaultKind::SramOutOfRange, "param_addr reaches param row " +
                                                    std::to_string(prow + 1) + ", beyond its " +
                                                    std::to_string(pd.rows()) + " rows"};
  std::int32_t p[8];
  std::memcpy(p, param_->bytes.data() + prow * pd.row_bytes, 16);
  std::memcpy(p + 4, param_->bytes.data() + (prow + 1) * pd.row_bytes, 16);
  if (p[2] < 1 || p[2] > 62)
    return ExecFault{FaultKind::BadOperand, "quantized-add shift S (param row " +
                                                std::to_string(prow) + ", lane 2) is " +
                                                std::to_string(p[2]) + ", outside 1..62"};
  const QuantizedAdd k{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]};
  std::vector<std::int32_t> x(L), w(L);
  std::vector<i64> y(L);
  for (u64 i1 = 0; i1 < n1; ++i1)
    for (u64 i0 = 0; i0 < n0; ++i0) {
      readRow(a, a.row(i0, i1), x.data(), L);
      readRow(b, b.row(i0, i1), w.data(), L);
      k.row(x.data(), w.data(), y.data(), L);
      writeRow(dst, dst.row(i0, i1), y.data(), L);
    }
  return std::nullopt;
}

std::optional<ExecFault> Machine::vector(const Instruction& insn, Cls cls) {
  const u64 n0 = U(insn, isa::role::kN0), n1 = U(insn, isa::role::kN1);
  const unsigned L = isa_.hw().vector.lanes;
  auto pick = [&](const char* selRole, Sram*& out) -> std::optional<ExecFault> {
    std::int64_t id = insn.get(selRole);
    Sram* s = sramById(id);
    if (s != act_ && s != acc_)
      return ExecFault{FaultKind::BadOperand, std::string(selRole) + " selects memory id " +
                                                  std::to_string(id) +
                                                  "; vector operands live in act or acc"};
    out = s;
    return std::nullopt;
  };
  Sram *dstMem = act_, *srcMem = act_;
  if (cls == Cls::VectorBinary || cls == Cls::VectorUnary) {
    if (auto f = pick(isa::role::kDstMem, dstMem))
      return f;
    if (auto f = pick(isa::role::kSrcMem, srcMem))
      return f;
  } else if (cls == Cls::Requantize) {
    srcMem = acc_;
  }
  auto operand = [&](Sram* m, const char* addr, const char* s0, const char* s1) {
    return Operand{addr, m->desc, m->bytes.data(), U(insn, addr), U(insn, s0), U(insn, s1)};
  };
  std::vector<Operand> srcs;
  Operand dst = operand(dstMem, isa::role::kDstAddr, isa::role::kDstS0, isa::role::kDstS1);
  if (cls == Cls::VectorBinary) {
    srcs.push_back(operand(srcMem, isa::role::kSrc0Addr, isa::role::kSrc0S0, isa::role::kSrc0S1));
    srcs.push_back(operand(srcMem, isa::role::kSrc1Addr, isa::role::kSrc1S0, isa::role::kSrc1S1));
  } else {
    srcs.push_back(operand(srcMem, isa::role::kSrcAddr, isa::role::kSrcS0, isa::role::kSrcS1));
  }
  if (n0 == 0 || n1 == 0)
    return std::nullopt;
  for (const Operand* o : {&dst, &srcs[0], srcs.size() > 1 ? &srcs[1] : &srcs[0]}) {
    u64 last = o->lastRow(n0 - 1, n1 - 1);
    if (last >= o->mem->rows())
      return ExecFault{FaultKind::SramOutOfRange, std::string(o->role) + " reaches " +
                                                      o->mem->name + " row " +
                                                      std::to_string(last) + ", beyond its " +
                                                      std::to_string(o->mem->rows()) + " rows"};
    if (auto f = touch(o == &dst ? dstMem : srcMem, o->addr, last, o == &dst))
      return f;
  }
  // Parameters read once per instruction.
  std::vector<std::int32_t> M(L), S(L), B;
  std::int32_t zp = 0, lo = 0, hi = 0;
  const std::uint8_t* table = nullptr;
  const auto& pd = *param_->desc;
  if (cls == Cls::Requantize) {
    u64 prow = U(insn, isa::role::kParamAddr);
    const u64 prows = insn.desc().paramRows(); // M, S (and the bias)
    if (prow + prows > pd.rows())
      return ExecFault{FaultKind::SramOutOfRange,
                       "param_addr reaches param row " + std::to_string(prow + prows - 1) +
                           ", beyond its " + std::to_string(pd.rows()) + " rows"};
    if (insn.desc().bias) {
      B.resize(L);
      std::memcpy(B.data(), param_->bytes.data() + (prow + 2) * pd.row_bytes, std::size_t(L) * 4);
    }
    std::memcpy(M.data(), param_->bytes.data() + prow * pd.row_bytes, std::size_t(L) * 4);
    std::memcpy(S.data(), param_->bytes.data() + (prow + 1) * pd.row_bytes, std::size_t(L) * 4);
    for (unsigned j = 0; j < L; ++j)
      if (S[j] < 1 || S[j] > 62)
        return ExecFault{FaultKind::BadOperand, "requant shift S of lane " + std::to_string(j) +
                                                    " (param row " + std::to_string(prow + 1) +
                                                    ") is " + std::to_string(S[j]) +
                                                    ", outside 1..62"};
    zp = static_cast<std::int32_t>(insn.get(isa::role::kZeroPoint));
    lo = static_cast<std::int32_t>(insn.get(isa::role::kLo));
    hi = static_cast<std::int32_t>(insn.get(isa::role::kHi));
  } else if (cls == Cls::Lut) {
    u64 t = U(insn, isa::role::kTable) + static_cast<u64>(insn.desc().table_offset);
    if ((t + 1) * 256 > pd.size_bytes)
      return ExecFault{FaultKind::SramOutOfRange,
                       "lut table " + std::to_string(t) + " lies beyond the param SRAM"};
    table = param_->bytes.data() + t * 256;
  }
  const std::string& op = insn.desc().op;
  const i64 imm0 = (cls == Cls::VectorUnary) ? insn.get(isa::role::kImm0) : 0;
  const i64 imm1 = (cls == Cls::VectorUnary) ? insn.get(isa::role::kImm1) : 0;
  if (cls == Cls::VectorUnary && op == "shift" && (imm0 < -31 || imm0 > 31))
    return ExecFault{FaultKind::BadOperand,
                     "shift amount imm0 = " + std::to_string(imm0) + " is outside -31..31"};
  if (cls == Cls::Requantize) // acc rows in, act rows out
    requantRows(RequantKernel(L, HostKernels::Vnni, M.data(), S.data(), zp, lo, hi), B, srcs[0],
                dst, n0, n1, L);
  else
    rows(cls, Lanes{opOf(cls, op), imm0, imm1, table}, srcs, dst, n0, n1, L);
  return std::nullopt;
}

} // namespace ember::sim::detail
