// The normalize class (docs/isa/instructions.md section 2.11) against the interpreter's lines
// (compiler/include/ember/quantization/IntegerLines.h, docs/numerics.md 4.10 and 4.11),
// an implementation the simulator does not share: random lines of random lengths walked
// with gaps between a line's rows and between lines, random parameters of the ranges the
// compiler writes; the document's clamps of out-of-range parameters; its faults.
#include "SimTestUtil.h"

#include "ember/quantization/IntegerLines.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace {

using namespace simtest;
using ember::platform::Result;

constexpr int L = 16;         // ember-v1's lanes
constexpr int kDstRow = 400;  // act row of the result
constexpr int kParamRow = 10; // acc row of the parameter block
constexpr std::size_t kParamByte = 0x4000, kOutByte = 0x8000;

struct Trial {
  bool softmax = true;
  int n0 = 1, n1 = 1, s0 = 1, s1 = 1;
  std::vector<std::int32_t> block; ///< The parameter block, L lanes per acc row.
};

std::string program(const Trial& t) {
  const int R = (t.n0 + L - 1) / L;
  const int rows = int(t.block.size()) / L;
  const int srcRows = (R - 1) * t.s0 + (t.n1 - 1) * t.s1 + 1;
  const std::string op = t.softmax ? "softmax" : "lnorm";
  return "dma.ld sram=act sram_addr=0 dram_addr=0 size0=" + std::to_string(srcRows) +
         " size1=1 size2=1\n"
         "dma.ld sram=acc sram_addr=" +
         std::to_string(kParamRow) + " dram_addr=" + std::to_string(kParamByte) +
         " size0=" + std::to_string(rows) + " size1=1 size2=1 push_next\n" + op +
         " dst_addr=" + std::to_string(kDstRow) +
         " src_addr=0 block_addr=" + std::to_string(kParamRow) + " len=" + std::to_string(t.n0) +
         " n1=" + std::to_string(t.n1) + " dst_sb=1 dst_s1=" + std::to_string(R) +
         " src_sb=" + std::to_string(t.s0) + " src_s1=" + std::to_string(t.s1) +
         " pop_prev push_next\n"
         "dma.st sram=act sram_addr=" +
         std::to_string(kDstRow) + " dram_addr=" + std::to_string(kOutByte) +
         " size0=" + std::to_string(R * t.n1) + " size1=1 size2=1 pop_prev push_prev\n" +
         "finish pop_next\n";
}

/// Runs `t` on act rows `image` and checks every byte of every result row against the
/// interpreter's line (lanes past n0: saturate_int8(clamp(zp_y, lo, hi))).
void expectLines(const Trial& t, std::vector<std::uint8_t> image, const std::string& what) {
  for (std::size_t i = 0; i < t.block.size(); ++i)
    putI32(image, kParamByte + 4 * i, t.block[i]);
  Result r = run(refIsa(), program(t), image);
  ASSERT_TRUE(r.ok()) << what << ": " << r.report.fault->message();
  const int R = (t.n0 + L - 1) / L;
  const std::int32_t* h = t.block.data();
  for (int j = 0; j < t.n1; ++j) {
    std::vector<std::int8_t> x(std::size_t(t.n0)), y(std::size_t(t.n0));
    for (int i = 0; i < t.n0; ++i)
      x[std::size_t(i)] = std::int8_t(image[std::size_t(((i / L) * t.s0 + j * t.s1) * L + i % L)]);
    if (t.softmax) {
      ember::qline::softmaxLine(x.data(), y.data(), t.n0, 1, h + 2 * L, h[L], h[L + 1], h[1], h[2],
                                h[3]);
    } else {
      std::vector<std::int32_t> M, S, B;
      for (int i = 0; i < t.n0; ++i) {
        const int b = i / L, l = i % L;
        M.push_back(h[(2 + 3 * b) * L + l]);
        S.push_back(h[(3 + 3 * b) * L + l]);
        B.push_back(h[(4 + 3 * b) * L + l]);
      }
      const std::int64_t E = std::int64_t(std::uint64_t(std::uint32_t(h[L])) |
                                          (std::uint64_t(std::uint32_t(h[L + 1])) << 32));
      ember::qline::layerNormLine(x.data(), y.data(), t.n0, h[0], E, M.data(), S.data(), B.data(),
                                  h[1]);
      // The line clamps to int8; the instruction to [lo, hi] (within int8 here).
      for (auto& v : y)
        v = std::int8_t(std::clamp<std::int32_t>(v, h[2], h[3]));
    }
    const auto pad = std::int8_t(std::clamp(std::clamp(h[1], h[2], h[3]), -128, 127));
    for (int i = 0; i < R * L; ++i)
      ASSERT_EQ(std::int8_t(r.dram[kOutByte + std::size_t((j * R + i / L) * L + i % L)]),
                i < t.n0 ? y[std::size_t(i)] : pad)
          << what << ": line " << j << " code " << i;
  }
}

Trial randomTrial(std::mt19937& rng, bool softmax) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Trial t;
  t.softmax = softmax;
  t.n0 = pick(1, 70);
  t.n1 = pick(1, 4);
  const int R = (t.n0 + L - 1) / L;
  t.s0 = pick(1, 3);
  t.s1 = R * t.s0 + pick(0, 2);
  const int rows = 2 + (softmax ? 256 / L : 3 * R);
  t.block.assign(std::size_t(rows * L), 0);
  std::int32_t* h = t.block.data();
  h[0] = pick(-128, 127);                              // zp_x
  h[1] = pick(-128, 127);                              // zp_y
  h[2] = -128 + pick(0, 20), h[3] = 127 - pick(0, 20); // lo, hi
  if (softmax) {
    // An exp table of a random input scale (T[0] = 2^16, falling), the output's M, S.
    const double s = std::uniform_real_distribution<double>(0.005, 0.3)(rng);
    for (int d = 0; d < 256; ++d)
      h[2 * L + d] = std::int32_t(std::nearbyint(65536.0 * std::exp(-s * d)));
    h[L] = std::int32_t(std::uniform_int_distribution<std::int64_t>(1 << 30, INT32_MAX)(rng));
    h[L + 1] = pick(20, 40);
  } else {
    // Epsilon mostly below the variance (len^2 eps / s_x^2 of a real model: 0 to a few
    // thousand), now and then dominating it.
    const std::int64_t E = pick(0, 5) == 0
                               ? std::uniform_int_distribution<std::int64_t>(0, 1ll << 40)(rng)
                               : std::int64_t(1) << pick(0, 12);
    h[L] = std::int32_t(std::uint32_t(std::uint64_t(E)));
    h[L + 1] = std::int32_t(E >> 32);
    for (int i = 0; i < t.n0; ++i) {
      const int b = i / L, l = i % L;
      const std::int32_t m =
          std::int32_t(std::uniform_int_distribution<std::int64_t>(1 << 29, INT32_MAX)(rng));
      h[(2 + 3 * b) * L + l] = pick(0, 3) == 0 ? -m : m;
      h[(3 + 3 * b) * L + l] = pick(40, 46); // z * M / 2^S spans the int8 codes
      h[(4 + 3 * b) * L + l] = pick(-60, 60);
    }
  }
  return t;
}

TEST(SimNormalize, RandomLinesAreTheInterpretersLines) {
  std::mt19937 rng(2026);
  for (int k = 0; k < 60; ++k) {
    const bool softmax = k % 2 == 0;
    const Trial t = randomTrial(rng, softmax);
    std::vector<std::uint8_t> image = randomBytes(0x10000, unsigned(100 + k));
    if (k % 6 == 1) // a narrow spread: LayerNorm's variance small against epsilon
      for (std::size_t i = 0; i < 0x2000; ++i)
        image[i] = std::uint8_t(image[i] % 3);
    expectLines(t, image,
                std::string(softmax ? "softmax" : "layernorm") + " trial " + std::to_string(k) +
                    " len=" + std::to_string(t.n0) + " n1=" + std::to_string(t.n1));
  }
}

/// Runs `a` and `b` on `image` and expects the same result bytes, which must not all be
/// one value (else the comparison could not tell the parameters apart).
void expectSameResults(const Trial& a, const Trial& b, const std::vector<std::uint8_t>& image,
                       const char* what) {
  Result r[2];
  for (int k = 0; k < 2; ++k) {
    std::vector<std::uint8_t> img = image;
    const Trial& t = k ? b : a;
    for (std::size_t i = 0; i < t.block.size(); ++i)
      putI32(img, kParamByte + 4 * i, t.block[i]);
    r[k] = run(refIsa(), program(t), img);
    ASSERT_TRUE(r[k].ok()) << what;
  }
  const int n = (a.n0 + L - 1) / L * L * a.n1;
  std::set<std::uint8_t> seen;
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(r[0].dram[kOutByte + std::size_t(i)], r[1].dram[kOutByte + std::size_t(i)])
        << what << " byte " << i;
    seen.insert(r[0].dram[kOutByte + std::size_t(i)]);
  }
  EXPECT_GT(seen.size(), 2u) << what << ": the results do not depend on the parameters";
}

TEST(SimNormalize, OutOfRangeParametersAreClamped) {
  // Softmax: table entries below 0 and above 2^16 count as 0 and 2^16 (at the shift the
  // compiler writes, 38, so that the probabilities show in the codes); a shift of -5 as
  // 1 (multiplier 1: y = round(q / 2), the line's small probabilities below saturation).
  // LayerNorm: zp_x counts by its low byte; a negative epsilon as 0; a shift of 0 as 1.
  // Each against the same line with the clamped parameters written out.
  std::mt19937 rng(7);
  const std::vector<std::uint8_t> image = randomBytes(0x10000, 3);
  Trial raw = randomTrial(rng, true);
  raw.n0 = 40, raw.n1 = 3;
  raw.s1 = 3 * raw.s0;
  raw.block[1] = -128, raw.block[2] = -128, raw.block[3] = 127;
  raw.block[L] = 1 << 30, raw.block[L + 1] = 38;
  Trial clamped = raw;
  for (int d = 0; d < 256; d += 3) {
    raw.block[std::size_t(2 * L + d)] = d % 2 ? -5 - d : (1 << 17) + d;
    clamped.block[std::size_t(2 * L + d)] = d % 2 ? 0 : 1 << 16;
  }
  expectSameResults(raw, clamped, image, "softmax table entries");
  Trial shift = clamped, shiftClamped = clamped;
  shift.block[L] = shiftClamped.block[L] = 1;
  shift.block[L + 1] = -5, shiftClamped.block[L + 1] = 1;
  expectSameResults(shift, shiftClamped, image, "softmax shift");

  Trial ln = randomTrial(rng, false);
  ln.block[0] = 0x1234507;                // low byte 7
  ln.block[L] = -1, ln.block[L + 1] = -1; // epsilon -1
  Trial lnClamped = ln;
  lnClamped.block[0] = 7;
  lnClamped.block[L] = lnClamped.block[L + 1] = 0;
  ln.block[3 * L] = 0, lnClamped.block[3 * L] = 1; // S of code 0
  expectSameResults(ln, lnClamped, image, "layernorm");
  expectLines(lnClamped, image, "layernorm with clamped parameters");
}

TEST(SimNormalize, ZeroSumAndZeroSpreadGiveZero) {
  // An all-zero exp table: sum 0, every q 0, so every code is rq(0) = clamp(zp_y).
  std::mt19937 rng(9);
  Trial t = randomTrial(rng, true);
  std::fill(t.block.begin() + 2 * L, t.block.end(), 0);
  std::vector<std::uint8_t> image = randomBytes(0x10000, 5);
  for (std::size_t i = 0; i < t.block.size(); ++i)
    putI32(image, kParamByte + 4 * i, t.block[i]);
  Result r = run(refIsa(), program(t), image);
  ASSERT_TRUE(r.ok());
  const auto z = std::int8_t(std::clamp(std::clamp(t.block[1], t.block[2], t.block[3]), -128, 127));
  for (int i = 0; i < (t.n0 + L - 1) / L * L * t.n1; ++i)
    ASSERT_EQ(std::int8_t(r.dram[kOutByte + std::size_t(i)]), z) << i;
  // LayerNorm of a constant line with epsilon 0: D = 0, r = 0, every z 0, y = clamp(B + zp_y).
  Trial ln = randomTrial(rng, false);
  ln.block[L] = ln.block[L + 1] = 0;
  std::vector<std::uint8_t> flat(0x10000, 0x2a);
  expectLines(ln, flat, "constant line, epsilon 0");
}

TEST(SimNormalize, FaultsBeforeAnyEffect) {
  const auto& isa = refIsa();
  // The parameter block's last row beyond acc (1024 rows): softmax needs 2 + 16 rows.
  Result r = run(isa, "softmax dst_addr=0 src_addr=0 block_addr=1010 len=4 n1=1\nfinish\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.report.fault->kind, ember::platform::FaultKind::SramOutOfRange);
  EXPECT_NE(r.report.fault->message().find("acc row 1027"), std::string::npos)
      << r.report.fault->message();
  // LayerNorm of 40 codes: 2 + 3 * 3 rows; from 1014 the last is 1024.
  r = run(isa, "lnorm dst_addr=0 src_addr=0 block_addr=1014 len=40 n1=1\nfinish\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.report.fault->message().find("acc row 1024"), std::string::npos)
      << r.report.fault->message();
  r = run(isa, "lnorm dst_addr=0 src_addr=0 block_addr=1013 len=40 n1=1\nfinish\n");
  EXPECT_TRUE(r.ok()) << r.report.fault->message();
  // A source line beyond act (16384 rows): row 16383 + 1 * 2.
  r = run(isa, "softmax dst_addr=0 src_addr=16383 block_addr=0 len=17 n1=1 src_sb=2\nfinish\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.report.fault->message().find("src_addr reaches act row 16385"), std::string::npos)
      << r.report.fault->message();
  // n0 = 0 does nothing.
  r = run(isa, "softmax dst_addr=0 src_addr=16383 block_addr=1023 len=0 n1=5\nfinish\n");
  EXPECT_TRUE(r.ok());
}

TEST(SimNormalize, DurationIsRuleN1) {
  // issue + n1 * (cycles_per_line + R * cycles_per_row + n0 * cycles_per_element)
  // + pipeline_latency, from the description's figures.
  const auto& isa = refIsa();
  for (const char* name : {"softmax", "lnorm"}) {
    const ember::isa::InstrDesc* d = isa.findInstruction(name);
    ASSERT_NE(d, nullptr);
    const auto c = [&](const char* k) { return std::uint64_t(std::llround(d->timingOf(k))); };
    const std::uint64_t n0 = 37, n1 = 3, R = 3;
    const std::uint64_t want =
        c("issue") +
        n1 * (c("cycles_per_line") + R * c("cycles_per_row") + n0 * c("cycles_per_element")) +
        c("pipeline_latency");
    Result r =
        run(isa, std::string(name) + " dst_addr=0 src_addr=0 block_addr=0 len=37 n1=3\nfinish\n");
    ASSERT_TRUE(r.ok());
    // The program is the one instruction and the implicit end: its slice is the duration.
    ASSERT_FALSE(r.report.slices.empty());
    EXPECT_EQ(r.report.slices[0].end - r.report.slices[0].start, want) << name;
  }
}

} // namespace
