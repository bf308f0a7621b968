// The normalize class (docs/isa/instructions.md section 2.11): Softmax and LayerNormalization of
// whole lines of act codes, the one class that reduces across lanes.
#include "Machine.h"
#include "ember/isa/roles.h"
#include "ember/isa/semantic.h"

#include "PlatformTypes.h"
#include <algorithm>
#include <cstring>
#include <string>

namespace ember::sim::detail {

namespace {

using isa::Instruction;
using u64 = std::uint64_t;
using i64 = std::int64_t;

u64 U(const Instruction& in, const char* role) {
  return static_cast<u64>(in.get(role));
}

/// floor(sqrt(v)), one result bit per step from the top (as the RTL's unit does).
u64 floorSqrt(u64 v) {
  u64 root = 0;
  for (int b = 31; b >= 0; --b) {
    const u64 t = root | (u64(1) << b);
    if (t * t <= v)
      root = t;
  }
  return root;
}

int bitLength(u64 v) {
  return v == 0 ? 0 : 64 - __builtin_clzll(v);
}

/// The scalars of the parameter block's first two rows.
struct Header {
  i64 zpX, zpY, lo, hi;
  i64 p0, p1; ///< softmax: M, S; layernorm: epsilon's low and high words.
  /// rq() of the section: the requantization every code of both ops ends with.
  std::int8_t rq(i64 t, i64 M, i64 S, i64 z) const {
    const i64 s = std::clamp<i64>(S, 1, 62);
    const i64 y = ((t * M + (i64(1) << (s - 1))) >> s) + z;
    return static_cast<std::int8_t>(std::clamp<i64>(bound(y), -128, 127));
  }
  /// min(max(y, lo), hi): hi when lo > hi (docs/isa/instructions.md 2.11).
  i64 bound(i64 y) const { return std::min(std::max(y, lo), hi); }
};

/// One line's codes and where they go.
struct Line {
  std::vector<i64> x;
  std::vector<std::int8_t> y;
};

void softmaxLine(Line& l, const Header& h, const std::int32_t* T) {
  const i64 m = *std::max_element(l.x.begin(), l.x.end());
  std::vector<i64> e(l.x.size());
  i64 sum = 0;
  for (std::size_t i = 0; i < l.x.size(); ++i) {
    e[i] = std::clamp<i64>(T[m - l.x[i]], 0, i64(1) << 16);
    sum += e[i];
  }
  for (std::size_t i = 0; i < l.x.size(); ++i) {
    const i64 q = sum == 0 ? 0 : (e[i] << 16) / sum;
    l.y[i] = h.rq(q, h.p0, h.p1, h.zpY);
  }
}

void layerNormLine(Line& l, const Header& h, const std::int32_t* M, const std::int32_t* S,
                   const std::int32_t* B) {
  const i64 n = static_cast<i64>(l.x.size());
  const i64 zx = static_cast<std::int8_t>(h.zpX & 0xff);
  i64 U = 0;
  for (i64 x : l.x)
    U += x - zx;
  u64 V = 0;
  for (i64 x : l.x) {
    const i64 c = n * (x - zx) - U;
    V += static_cast<u64>(c * c);
  }
  const i64 eps = static_cast<i64>((static_cast<u64>(h.p1) << 32) |
                                   static_cast<std::uint32_t>(static_cast<std::int32_t>(h.p0)));
  const u64 D = V / static_cast<u64>(n) + static_cast<u64>(std::clamp<i64>(eps, 0, i64(1) << 60));
  const int k = (62 - bitLength(D)) / 2;
  const i64 r = static_cast<i64>(floorSqrt(D << (2 * k)));
  for (i64 i = 0; i < n; ++i) {
    const i64 c = n * (l.x[std::size_t(i)] - zx) - U;
    i64 z = 0;
    if (r != 0) {
      z = ((c < 0 ? -c : c) * (i64(1) << (k + 16)) + r / 2) / r;
      z = c < 0 ? -z : z;
    }
    l.y[std::size_t(i)] = h.rq(z, M[i], S[i], i64(B[i]) + h.zpY);
  }
}

} // namespace

std::optional<ExecFault> Machine::normalize(const Instruction& insn) {
  const u64 n0 = U(insn, isa::role::kLen), n1 = U(insn, isa::role::kN1);
  const unsigned L = isa_.hw().vector.lanes;
  const bool softmax = insn.desc().op == "softmax";
  if (n0 == 0 || n1 == 0)
    return std::nullopt;
  if (n0 > isa::kNormalizeMaxLen)
    return ExecFault{FaultKind::BadOperand,
                     "len = " + std::to_string(n0) + " codes per line, more than the " +
                         std::to_string(isa::kNormalizeMaxLen) + " normalize handles"};
  const u64 R = (n0 + L - 1) / L;
  const auto& ad = *act_->desc;
  struct Walk {
    const char* role;
    u64 addr, s0, s1;
    u64 row(u64 b, u64 j) const { return addr + b * s0 + j * s1; }
  };
  const Walk dst{isa::role::kDstAddr, U(insn, isa::role::kDstAddr), U(insn, isa::role::kDstSb),
                 U(insn, isa::role::kDstS1)};
  const Walk src{isa::role::kSrcAddr, U(insn, isa::role::kSrcAddr), U(insn, isa::role::kSrcSb),
                 U(insn, isa::role::kSrcS1)};
  for (const Walk* w : {&dst, &src}) {
    const u64 last = satAdd(w->addr, satAdd(satMul(R - 1, w->s0), satMul(n1 - 1, w->s1)));
    if (last >= ad.rows())
      return ExecFault{FaultKind::SramOutOfRange, std::string(w->role) + " reaches act row " +
                                                      std::to_string(last) + ", beyond its " +
                                                      std::to_string(ad.rows()) + " rows"};
    if (auto f = touch(act_, w->addr, last, w == &dst))
      return f;
  }
  const auto& cd = *acc_->desc;
  const u64 p = U(insn, isa::role::kBlockAddr);
  const u64 paramRows = isa::normalizeParamRows(softmax, n0, L);
  const u64 lastParam = satAdd(p, paramRows - 1);
  if (lastParam >= cd.rows())
    return ExecFault{FaultKind::SramOutOfRange, "block_addr's " + std::to_string(paramRows) +
                                                    " rows reach acc row " +
                                                    std::to_string(lastParam) + ", beyond its " +
                                                    std::to_string(cd.rows()) + " rows"};
  if (auto f = touch(acc_, p, lastParam, false))
    return f;
  auto lanesOf = [&](u64 row) {
    std::vector<std::int32_t> v(L);
    std::memcpy(v.data(), acc_->bytes.data() + row * cd.row_bytes, std::size_t(L) * 4);
    return v;
  };
  const auto h0 = lanesOf(p), h1 = lanesOf(p + 1);
  const Header h{h0[0], h0[1], h0[2], h0[3], h1[0], h1[1]};
  // The per-op table: softmax's 256 entries, or layernorm's M, S, B of every code.
  std::vector<std::int32_t> T, M(n0), S(n0), B(n0);
  if (softmax) {
    for (u64 r = 0; r < isa::normalizeTableRows(L); ++r) {
      const auto v = lanesOf(p + 2 + r);
      T.insert(T.end(), v.begin(), v.end());
    }
  } else {
    for (u64 b = 0; b < R; ++b) {
      const auto m = lanesOf(p + 2 + 3 * b), s = lanesOf(p + 3 + 3 * b),
                 bb = lanesOf(p + 4 + 3 * b);
      for (unsigned l = 0; l < L && b * L + l < n0; ++l)
        M[b * L + l] = m[l], S[b * L + l] = s[l], B[b * L + l] = bb[l];
    }
  }
  const auto pad = static_cast<std::uint8_t>(std::clamp<i64>(h.bound(h.zpY), -128, 127));
  Line line{std::vector<i64>(n0), std::vector<std::int8_t>(n0)};
  for (u64 j = 0; j < n1; ++j) {
    for (u64 i = 0; i < n0; ++i)
      line.x[i] = static_cast<std::int8_t>(act_->bytes[src.row(i / L, j) * ad.row_bytes + i % L]);
    if (softmax)
      softmaxLine(line, h, T.data());
    else
      layerNormLine(line, h, M.data(), S.data(), B.data());
    for (u64 i = 0; i < R * L; ++i)
      act_->bytes[dst.row(i / L, j) * ad.row_bytes + i % L] =
          i < n0 ? static_cast<std::uint8_t>(line.y[i]) : pad;
  }
  return std::nullopt;
}

} // namespace ember::sim::detail
