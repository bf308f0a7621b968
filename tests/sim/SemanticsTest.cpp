// Every instruction class on real data, checked against references written here from
// docs/isa/instructions.md section 2 (not from the simulator's code).
#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

using namespace simtest;
using ember::platform::Result;

namespace {

std::int64_t sat8(std::int64_t v) {
  return std::clamp<std::int64_t>(v, -128, 127);
}
std::int32_t wrap(std::int64_t v) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
}

// Load -> compute -> store handshake used by most programs below.
const char* kSyncToStore = "sync engine=compute pop_prev push_next\n";

TEST(SimSemantics, DmaLoadStorePaddedStridedBox) {
  const auto& isa = refIsa();
  auto image = randomBytes(0x10000, 1);
  // 3-D box: size0=3 rows, size1=2 lines (stride1 = 4 rows), size2=2 planes (stride2 = 10),
  // halo of 1 left, 2 right, 1 top, 1 bottom filled with -3. Then store the packed SRAM
  // box back to DRAM at 0x8000.
  const int s0 = 3, s1 = 2, s2 = 2, st1 = 4, st2 = 10, pl = 1, pr = 2, pt = 1, pb = 1;
  const int P0 = pl + s0 + pr, P1 = pt + s1 + pb;
  std::string prog = "dma.ld sram=act sram_addr=5 dram_addr=0x100 size0=3 size1=2 size2=2 "
                     "stride1=4 stride2=10 pad_left=1 pad_right=2 pad_top=1 pad_bottom=1 "
                     "pad_value=-3 push_next\n" +
                     std::string(kSyncToStore) +
                     "dma.st sram=act sram_addr=5 dram_addr=0x8000 size0=" + std::to_string(P0) +
                     " size1=" + std::to_string(P1) + " size2=2 stride1=" + std::to_string(P0) +
                     " stride2=" + std::to_string(P0 * P1) +
                     " pop_prev push_prev\nfinish pop_next\n";
  Result r = run(isa, prog, image);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  const int R = 16;
  for (int z = 0; z < s2; ++z)
    for (int y = 0; y < P1; ++y)
      for (int x = 0; x < P0; ++x)
        for (int b = 0; b < R; ++b) {
          std::size_t out = 0x8000 + std::size_t(((z * P1 + y) * P0 + x) * R + b);
          std::uint8_t want = 0xFD; // -3
          if (y >= pt && y < pt + s1 && x >= pl && x < pl + s0)
            want = image[std::size_t(0x100 + (z * st2 + (y - pt) * st1 + (x - pl)) * R + b)];
          ASSERT_EQ(r.dram[out], want) << "z=" << z << " y=" << y << " x=" << x << " b=" << b;
        }
  // Bytes outside the stored box are untouched.
  EXPECT_EQ(r.dram[0x8000 + std::size_t(2 * P0 * P1 * R)],
            image[0x8000 + std::size_t(2 * P0 * P1 * R)]);
  EXPECT_EQ(r.report.memories.back().bytes_read, std::uint64_t(s0 * s1 * s2 * R));
  EXPECT_EQ(r.report.memories.back().bytes_written, std::uint64_t(P0 * P1 * s2 * R));
}

TEST(SimSemantics, GemmTwoInputBlocksMatchesReference) {
  const auto& isa = refIsa();
  const int M = 20, C = 32, K = 16;
  auto image = randomBytes(0x4000, 2);
  // act: block cb, pixel m at row cb*M + m (lane c % 16); weights: block cb at 0x1000.
  std::string prog =
      "dma.ld sram=act sram_addr=0 dram_addr=0 size0=40 size1=1 size2=1\n"
      "dma.ld sram=weight sram_addr=0 dram_addr=0x1000 size0=2 size1=1 size2=1 push_next\n"
      "gemm reset acc_addr=0 n0=20 n1=1 n2=1 acc_s0=1 pop_prev\n"
      "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=20 n1=1 n2=2 act_s0=1 act_s2=20 "
      "acc_s0=1 wgt_s2=1 push_next\n"
      "dma.st sram=acc sram_addr=0 dram_addr=0x2000 size0=20 size1=1 size2=1 pop_prev push_prev\n"
      "finish pop_next\n";
  // Garbage in acc region of DRAM must not matter (reset).
  Result r = run(isa, prog, image);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) {
      std::int64_t want = 0;
      for (int c = 0; c < C; ++c) {
        auto x = static_cast<std::int8_t>(image[std::size_t(((c / 16) * M + m) * 16 + c % 16)]);
        auto w =
            static_cast<std::int8_t>(image[std::size_t(0x1000 + (c / 16) * 256 + k * 16 + c % 16)]);
        want += std::int64_t(x) * w;
      }
      EXPECT_EQ(i32At(r.dram, std::size_t(0x2000 + (m * 16 + k) * 4)), wrap(want)) << m << "," << k;
    }
  EXPECT_EQ(r.report.macs, std::uint64_t(M * 2 * 256));
}

// The program of the two depthwise tests: an image of 6 lines x 9 columns (one act row per
// pixel), a 3 x 3 kernel with stride 2 along the line (act_s0 = 2) and dilation 1, 2 lines of 3
// outputs; acc's 6 rows loaded from DRAM (acc row value i is accValue(i)), then `op`, then the 6
// rows stored. Every output is checked against the reference of docs/isa/instructions.md section
// 2.12: the sum over the taps of weight row (y * kw + x) lane c times act row (first + y * tap_s1 +
// x * tap_s0) lane c, added to the loaded acc row when `accumulates`.
Result runDepthwiseAndCheck(const std::string& op, unsigned seed, bool accumulates,
                            std::int32_t (*accValue)(int)) {
  const int L = 16, Wd = 9, lines = 6, kh = 3, kw = 3, n0 = 3, n1 = 2;
  auto image = randomBytes(0x4000, seed);
  for (int i = 0; i < 6 * L; ++i)
    putI32(image, std::size_t(0x2000 + i * 4), accValue(i));
  const std::string prog =
      "dma.ld sram=act sram_addr=0 dram_addr=0 size0=" + std::to_string(Wd * lines) +
      " size1=1 size2=1\n"
      "dma.ld sram=acc sram_addr=0 dram_addr=0x2000 size0=6 size1=1 size2=1\n"
      "dma.ld sram=weight sram_addr=3 dram_addr=0x1000 size0=1 size1=1 size2=1 push_next\n" +
      op +
      " act_addr=0 acc_addr=0 wgt_addr=3 n0=3 n1=2 act_s0=2 act_s1=18 acc_s0=1 acc_s1=3 "
      "kh=3 kw=3 tap_s0=1 tap_s1=9 pop_prev\n"
      "sync engine=compute push_next\n"
      "dma.st sram=acc sram_addr=0 dram_addr=0x3000 size0=6 size1=1 size2=1 pop_prev push_prev\n"
      "finish pop_next\n";
  Result r = run(refIsa(), prog, image);
  if (!r.ok())
    return r;
  for (int oy = 0; oy < n1; ++oy)
    for (int ox = 0; ox < n0; ++ox)
      for (int c = 0; c < L; ++c) {
        const std::size_t acc = std::size_t(((oy * n0 + ox) * L + c) * 4);
        std::int64_t want = accumulates ? i32At(image, 0x2000 + acc) : 0;
        for (int y = 0; y < kh; ++y)
          for (int x = 0; x < kw; ++x) {
            const int pixel = (2 * oy + y) * Wd + 2 * ox + x;
            want += std::int64_t(static_cast<std::int8_t>(image[std::size_t(pixel * L + c)])) *
                    static_cast<std::int8_t>(image[std::size_t(0x1000 + (y * kw + x) * L + c)]);
          }
        EXPECT_EQ(i32At(r.dram, 0x3000 + acc), wrap(want))
            << op << " " << oy << "," << ox << "," << c;
      }
  return r;
}

TEST(SimSemantics, DepthwiseSumsTheTapsOfEachChannel) {
  const auto& isa = refIsa();
  const int L = 16, kh = 3, kw = 3, n0 = 3, n1 = 2;
  Result r = runDepthwiseAndCheck("dwconv", 5, true,
                                  [](int i) { return static_cast<std::int32_t>(i * 1000 - 7); });
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  EXPECT_EQ(r.report.macs, std::uint64_t(n0 * n1 * kh * kw * L));
  // More taps than the array has rows is refused.
  Result big = run(isa, "dwconv act_addr=0 acc_addr=0 wgt_addr=0 n0=1 n1=1 kh=5 kw=5 tap_s0=1 "
                        "tap_s1=5\nfinish\n");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.report.fault->kind, ember::platform::FaultKind::BadOperand);
}

TEST(SimSemantics, VectorBinaryOpsWrapAndSaturate) {
  const auto& isa = refIsa();
  std::vector<std::uint8_t> image(0x4000, 0);
  std::mt19937 rng(3);
  // 4 acc rows of a (0x0), 4 of b (0x100); include extremes for wrap-around.
  for (int i = 0; i < 64; ++i) {
    putI32(image, std::size_t(i * 4), static_cast<std::int32_t>(rng()));
    putI32(image, std::size_t(0x100 + i * 4), static_cast<std::int32_t>(rng() % 2001) - 1000);
  }
  putI32(image, 0, INT32_MAX);
  putI32(image, 0x100, 5);
  std::string prog =
      "dma.ld sram=acc sram_addr=0 dram_addr=0 size0=4 size1=1 size2=1\n"
      "dma.ld sram=acc sram_addr=4 dram_addr=0x100 size0=4 size1=1 size2=1 push_next\n"
      "vadd dst_mem=acc src_mem=acc dst_addr=10 src0_addr=0 src1_addr=4 n0=4 n1=1 dst_s0=1 "
      "src0_s0=1 src1_s0=1 pop_prev\n"
      "vsub dst_mem=acc src_mem=acc dst_addr=14 src0_addr=0 src1_addr=4 n0=4 n1=1 dst_s0=1 "
      "src0_s0=1 src1_s0=1\n"
      "vmul dst_mem=acc src_mem=acc dst_addr=18 src0_addr=0 src1_addr=4 n0=4 n1=1 dst_s0=1 "
      "src0_s0=1 src1_s0=1\n"
      "vmin dst_mem=acc src_mem=acc dst_addr=22 src0_addr=0 src1_addr=4 n0=4 n1=1 dst_s0=1 "
      "src0_s0=1 src1_s0=1\n"
      "vmax dst_mem=acc src_mem=acc dst_addr=26 src0_addr=0 src1_addr=4 n0=2 n1=2 dst_s0=1 "
      "dst_s1=2 src0_s0=1 src0_s1=2 src1_s0=1 src1_s1=2\n"
      "vadd dst_mem=act src_mem=acc dst_addr=0 src0_addr=0 src1_addr=4 n0=4 n1=1 dst_s0=1 "
      "src0_s0=1 src1_s0=0 push_next\n"
      "dma.st sram=acc sram_addr=10 dram_addr=0x1000 size0=20 size1=1 size2=1 pop_prev\n"
      "dma.st sram=act sram_addr=0 dram_addr=0x2000 size0=4 size1=1 size2=1 push_prev\n"
      "finish pop_next\n";
  Result r = run(isa, prog, image);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  for (int row = 0; row < 4; ++row)
    for (int l = 0; l < 16; ++l) {
      std::int64_t a = i32At(image, std::size_t((row * 16 + l) * 4));
      std::int64_t b = i32At(image, std::size_t(0x100 + (row * 16 + l) * 4));
      auto out = [&](int op) {
        return i32At(r.dram, std::size_t(0x1000 + ((op * 4 + row) * 16 + l) * 4));
      };
      EXPECT_EQ(out(0), wrap(a + b));
      EXPECT_EQ(out(1), wrap(a - b));
      EXPECT_EQ(out(2), wrap(a * b));
      EXPECT_EQ(out(3), std::min(a, b));
      EXPECT_EQ(out(4), std::max(a, b));
      // act destination saturates the int64 result; src1 stride 0 broadcasts b's row 0.
      std::int64_t b0 = i32At(image, std::size_t(0x100 + l * 4));
      EXPECT_EQ(static_cast<std::int8_t>(r.dram[std::size_t(0x2000 + row * 16 + l)]), sat8(a + b0));
    }
}

TEST(SimSemantics, VectorUnaryShiftClampCopy) {
  const auto& isa = refIsa();
  std::vector<std::uint8_t> image(0x4000, 0);
  std::mt19937 rng(4);
  for (int i = 0; i < 32; ++i)
    putI32(image, std::size_t(i * 4), static_cast<std::int32_t>(rng() % 200001) - 100000);
  for (int i = 0; i < 32; ++i)
    image[std::size_t(0x200 + i)] = static_cast<std::uint8_t>(rng());
  std::string prog =
      "dma.ld sram=acc sram_addr=0 dram_addr=0 size0=2 size1=1 size2=1\n"
      "dma.ld sram=act sram_addr=0 dram_addr=0x200 size0=2 size1=1 size2=1 push_next\n"
      "vshr dst_mem=acc src_mem=acc dst_addr=10 src_addr=0 n0=2 n1=1 dst_s0=1 src_s0=1 imm0=5 "
      "pop_prev\n"
      "vshr dst_mem=acc src_mem=acc dst_addr=12 src_addr=0 n0=2 n1=1 dst_s0=1 src_s0=1 imm0=-3\n"
      "vclamp dst_mem=acc src_mem=acc dst_addr=14 src_addr=0 n0=2 n1=1 dst_s0=1 src_s0=1 imm0=-500 "
      "imm1=700\n"
      "vmov dst_mem=acc src_mem=act dst_addr=16 src_addr=0 n0=2 n1=1 dst_s0=1 src_s0=1\n"
      "vmov dst_mem=act src_mem=acc dst_addr=8 src_addr=0 n0=2 n1=1 dst_s0=1 src_s0=1 push_next\n"
      "dma.st sram=acc sram_addr=10 dram_addr=0x1000 size0=8 size1=1 size2=1 pop_prev\n"
      "dma.st sram=act sram_addr=8 dram_addr=0x2000 size0=2 size1=1 size2=1 push_prev\n"
      "finish pop_next\n";
  Result r = run(isa, prog, image);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  for (int i = 0; i < 32; ++i) {
    std::int64_t x = i32At(image, std::size_t(i * 4));
    auto out = [&](int blk) { return i32At(r.dram, std::size_t(0x1000 + (blk * 32 + i) * 4)); };
    EXPECT_EQ(out(0), (x + 16) >> 5);
    EXPECT_EQ(out(1), wrap(x * 8));
    EXPECT_EQ(out(2), std::clamp<std::int64_t>(x, -500, 700));
    EXPECT_EQ(out(3), static_cast<std::int8_t>(image[std::size_t(0x200 + i)]));
    EXPECT_EQ(static_cast<std::int8_t>(r.dram[std::size_t(0x2000 + i)]), sat8(x));
  }
}

TEST(SimSemantics, RequantizeIsTheArchitectureContract) {
  const auto& isa = refIsa();
  std::vector<std::uint8_t> image(0x4000, 0);
  std::mt19937 rng(5);
  for (int i = 0; i < 48; ++i) // 3 acc rows
    putI32(image, std::size_t(i * 4), static_cast<std::int32_t>(rng()));
  putI32(image, 0, INT32_MIN);
  putI32(image, 4, INT32_MAX);
  std::vector<std::int32_t> M(16), S(16);
  for (int l = 0; l < 16; ++l) {
    M[std::size_t(l)] = static_cast<std::int32_t>((rng() % 0x7FFFFFFEu) + 1);
    S[std::size_t(l)] = static_cast<std::int32_t>(1 + rng() % 62);
    putI32(image, std::size_t(0x400 + l * 4), M[std::size_t(l)]);
    putI32(image, std::size_t(0x440 + l * 4), S[std::size_t(l)]);
  }
  std::string prog =
      "dma.ld sram=acc sram_addr=0 dram_addr=0 size0=3 size1=1 size2=1\n"
      "dma.ld sram=param sram_addr=6 dram_addr=0x400 size0=2 size1=1 size2=1 push_next\n"
      "requant dst_addr=20 src_addr=0 param_addr=6 zero_point=-7 lo=-7 hi=100 n0=3 n1=1 dst_s0=1 "
      "src_s0=1 pop_prev push_next\n"
      "dma.st sram=act sram_addr=20 dram_addr=0x1000 size0=3 size1=1 size2=1 pop_prev push_prev\n"
      "finish pop_next\n";
  Result r = run(isa, prog, image);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  for (int i = 0; i < 48; ++i) {
    int l = i % 16;
    std::int64_t a = i32At(image, std::size_t(i * 4));
    std::int64_t s = S[std::size_t(l)];
    std::int64_t y = ((a * M[std::size_t(l)] + (std::int64_t(1) << (s - 1))) >> s) + (-7);
    y = std::min<std::int64_t>(std::max<std::int64_t>(y, -7), 100);
    EXPECT_EQ(static_cast<std::int8_t>(r.dram[std::size_t(0x1000 + i)]), y) << "element " << i;
  }
}

__extension__ typedef __int128 i128; // the reference's exact arithmetic

/// docs/isa/instructions.md section 2.10 for one lane, written from the document.
std::int64_t qaddRef(std::int64_t a, std::int64_t b, const std::int32_t* p) {
  const i128 t = (i128(a) - p[4]) * p[0] + (i128(b) - p[5]) * p[1];
  const i128 y = ((t + (i128(1) << (p[2] - 1))) >> p[2]) + p[3];
  return sat8(std::int64_t(std::max<i128>(p[6], std::min<i128>(y, p[7]))));
}

TEST(SimSemantics, QuantizedAddIsTheDocumentedContract) {
  const auto& isa = refIsa();
  // Three act rows of a, one row of b broadcast (src1_s0 = 0), written in place over a.
  // Scalars: {M0, M1, S, zp}, {zp0, zp1, lo, hi}; the second set is extreme, so that the
  // exact sum exceeds int64 and only the clamp bounds the result.
  const std::int32_t sets[2][8] = {{300000, -123456, 19, -5, 7, -3, -100, 90},
                                   {INT32_MAX, INT32_MAX, 1, 3, INT32_MIN, INT32_MIN, -120, 120}};
  for (const auto& p : sets) {
    std::vector<std::uint8_t> image = randomBytes(0x4000, 11);
    for (int l = 0; l < 4; ++l) {
      putI32(image, std::size_t(0x400 + l * 4), p[l]);
      putI32(image, std::size_t(0x440 + l * 4), p[4 + l]);
    }
    image[0] = 0x80; // -128 and 127 in the first lanes of a
    image[1] = 0x7F;
    const std::string prog =
        "dma.ld sram=act sram_addr=8 dram_addr=0 size0=3 size1=1 size2=1\n"
        "dma.ld sram=act sram_addr=13 dram_addr=0x100 size0=1 size1=1 size2=1\n"
        "dma.ld sram=param sram_addr=5 dram_addr=0x400 size0=2 size1=1 size2=1 push_next\n"
        "qadd dst_addr=8 src0_addr=8 src1_addr=13 param_addr=5 n0=3 n1=1 dst_s0=1 src0_s0=1 "
        "src1_s0=0 pop_prev push_next\n"
        "dma.st sram=act sram_addr=8 dram_addr=0x1000 size0=3 size1=1 size2=1 pop_prev "
        "push_prev\nfinish pop_next\n";
    Result r = run(isa, prog, image);
    ASSERT_TRUE(r.ok()) << r.report.fault->message();
    for (int i = 0; i < 48; ++i) {
      const std::int64_t a = static_cast<std::int8_t>(image[std::size_t(i)]);
      const std::int64_t b = static_cast<std::int8_t>(image[std::size_t(0x100 + i % 16)]);
      EXPECT_EQ(static_cast<std::int8_t>(r.dram[std::size_t(0x1000 + i)]), qaddRef(a, b, p))
          << "element " << i << " of set M0=" << p[0];
    }
  }
  // A shift outside 1..62 is an operand fault.
  std::vector<std::uint8_t> image(0x1000, 0);
  putI32(image, 0x408, 63);
  Result r = run(isa,
                 "dma.ld sram=param sram_addr=0 dram_addr=0x400 size0=2 size1=1 size2=1 "
                 "push_next\nqadd dst_addr=0 src0_addr=0 src1_addr=1 param_addr=0 n0=1 n1=1 "
                 "pop_prev\nfinish\n",
                 image);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.report.fault->message().find("outside 1..62"), std::string::npos)
      << r.report.fault->message();
}

TEST(SimSemantics, LutMapsThroughParamTable) {
  const auto& isa = refIsa();
  std::vector<std::uint8_t> image(0x4000, 0);
  auto table = randomBytes(256 * 2, 6);
  std::copy(table.begin(), table.end(), image.begin() + 0x800);
  for (int i = 0; i < 48; ++i)
    image[std::size_t(i)] = static_cast<std::uint8_t>(i * 37 + 128);
  // Tables 0 and 1 at param rows 0..7 (64-byte rows); use table 1.
  std::string prog =
      "dma.ld sram=act sram_addr=0 dram_addr=0 size0=3 size1=1 size2=1\n"
      "dma.ld sram=param sram_addr=0 dram_addr=0x800 size0=8 size1=1 size2=1 push_next\n"
      "lut table=1 dst_addr=10 src_addr=0 n0=3 n1=1 dst_s0=1 src_s0=1 pop_prev push_next\n"
      "dma.st sram=act sram_addr=10 dram_addr=0x1000 size0=3 size1=1 size2=1 pop_prev push_prev\n"
      "finish pop_next\n";
  Result r = run(isa, prog, image);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  for (int i = 0; i < 48; ++i) {
    int x = static_cast<std::int8_t>(image[std::size_t(i)]);
    EXPECT_EQ(r.dram[std::size_t(0x1000 + i)], table[std::size_t(256 + x + 128)]) << i;
  }
}

/// Bytes a run read from memory `name` (the report's counters, from the energy model).
std::uint64_t bytesRead(const Result& r, const std::string& name) {
  for (const auto& m : r.report.memories)
    if (m.name == name)
      return m.bytes_read;
  ADD_FAILURE() << "no memory " << name;
  return 0;
}

/// The int32 products of act pixel `m` of input block `cb` (act row cb * 20 + m) with
/// weight block `cb` (at DRAM 0x1000 + cb * 256), output channel `k`: the gemm tests' data.
std::int64_t blockProducts(const std::vector<std::uint8_t>& image, int cb, int m, int k) {
  std::int64_t sum = 0;
  for (int c = 0; c < 16; ++c)
    sum += std::int64_t(static_cast<std::int8_t>(image[std::size_t((cb * 20 + m) * 16 + c)])) *
           static_cast<std::int8_t>(image[std::size_t(0x1000 + cb * 256 + k * 16 + c)]);
  return sum;
}

// properties.overwrite on a gemm (docs/isa/instructions.md section 2.3): the i2 = 0 pass
// writes its products over whatever acc holds, the later passes add. gemm.z and gemm.bgz
// over acc rows full of other values give what reset + gemm gives, and the sum of products
// written out here; a plain gemm takes as many cycles as gemm.z.
TEST(SimSemantics, OverwritingGemmIsResetPlusGemm) {
  const auto& isa = refIsa();
  auto image = randomBytes(0x4000, 11); // acc's starting rows come from DRAM 0x3000
  const std::string loads =
      "dma.ld sram=act sram_addr=0 dram_addr=0 size0=40 size1=1 size2=1\n"
      "dma.ld sram=weight sram_addr=0 dram_addr=0x1000 size0=2 size1=1 size2=1\n"
      "dma.ld sram=acc sram_addr=0 dram_addr=0x3000 size0=20 size1=1 size2=1 push_next\n";
  const std::string nest =
      " act_addr=0 acc_addr=0 wgt_addr=0 n0=20 n1=1 n2=2 act_s0=1 act_s2=20 acc_s0=1 wgt_s2=1";
  const std::string store = "sync engine=compute push_next\n"
                            "dma.st sram=acc sram_addr=0 dram_addr=0x2000 size0=20 size1=1 "
                            "size2=1 pop_prev push_prev\nfinish pop_next\n";
  const Result reset = run(isa,
                           loads + "gemm reset acc_addr=0 n0=20 n1=1 n2=1 acc_s0=1 pop_prev\ngemm" +
                               nest + "\n" + store,
                           image);
  const Result plain = run(isa, loads + "gemm" + nest + " pop_prev\n" + store, image);
  for (const char* mnemonic : {"gemm.z", "gemm.bgz"}) {
    const Result r = run(isa, loads + mnemonic + nest + " pop_prev\n" + store, image);
    ASSERT_TRUE(r.ok()) << mnemonic << ": " << r.report.fault->message();
    ASSERT_TRUE(reset.ok()) << reset.report.fault->message();
    for (int m = 0; m < 20; ++m)
      for (int k = 0; k < 16; ++k) {
        const std::size_t at = std::size_t(0x2000 + (m * 16 + k) * 4);
        const std::int64_t want = blockProducts(image, 0, m, k) + blockProducts(image, 1, m, k);
        EXPECT_EQ(i32At(r.dram, at), wrap(want)) << mnemonic << " " << m << "," << k;
        EXPECT_EQ(i32At(reset.dram, at), wrap(want)) << m << "," << k;
      }
    EXPECT_EQ(r.report.cycles, plain.report.cycles) << mnemonic; // rule G1 unchanged
    EXPECT_EQ(r.report.macs, std::uint64_t(20 * 2 * 256)) << mnemonic;
    // acc is read by the second pass (20 rows of 64 bytes) and the store, not the first.
    EXPECT_EQ(bytesRead(r, "acc"), std::uint64_t(20 * 64 + 20 * 64)) << mnemonic;
    EXPECT_EQ(bytesRead(plain, "acc"), std::uint64_t(2 * 20 * 64 + 20 * 64));
  }
  // Two steps of the first pass on one row (acc_s0 = 0): each writes, so the row holds
  // the later step's products; the second pass adds both pixels of block 1.
  const Result shared =
      run(isa,
          loads +
              "gemm.z act_addr=0 acc_addr=0 wgt_addr=0 n0=2 n1=1 n2=2 act_s0=1 act_s2=20 "
              "acc_s0=0 wgt_s2=1 pop_prev\n" +
              store,
          image);
  ASSERT_TRUE(shared.ok()) << shared.report.fault->message();
  for (int k = 0; k < 16; ++k)
    EXPECT_EQ(i32At(shared.dram, std::size_t(0x2000 + k * 4)),
              wrap(blockProducts(image, 0, 1, k) + blockProducts(image, 1, 0, k) +
                   blockProducts(image, 1, 1, k)))
        << k;
}

// properties.overwrite on the depthwise class (section 2.12): each output is the sum of
// its taps, whatever acc held. The data of DepthwiseSumsTheTapsOfEachChannel, with acc
// rows that a dwconv would have added to.
TEST(SimSemantics, OverwritingDepthwiseWritesTheSumOfTaps) {
  Result r = runDepthwiseAndCheck(
      "dwconv.z", 12, false, [](int i) { return static_cast<std::int32_t>(i * 7919 - 100000); });
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  EXPECT_EQ(bytesRead(r, "acc"), std::uint64_t(6 * 64)); // the store only
}

/// docs/isa/instructions.md section 2.6 for one lane: (a * M + 2^(S-1)) >> S, plus the
/// zero point, clamped to [lo, hi].
std::int64_t requantRef(std::int64_t a, std::int64_t M, std::int64_t S, int zp, int lo, int hi) {
  return std::clamp<std::int64_t>(((a * M + (std::int64_t(1) << (S - 1))) >> S) + zp, lo, hi);
}

/// Per-lane requantize parameters of the bias tests: M in [1, 2^31 - 1], S in [sLo, 62]
/// and the bias bias(l), drawn lane by lane in that order and written to the image as
/// the param rows M at `at`, S at at + 0x40 and the bias at at + 0x80.
struct LaneParams {
  std::vector<std::int32_t> M, S, B;
};
LaneParams putLaneParams(std::vector<std::uint8_t>& image, std::size_t at, std::mt19937& rng,
                         int sLo, const std::function<std::int32_t(int)>& bias) {
  LaneParams p{std::vector<std::int32_t>(16), std::vector<std::int32_t>(16),
               std::vector<std::int32_t>(16)};
  for (int l = 0; l < 16; ++l) {
    const std::size_t i = std::size_t(l);
    p.M[i] = static_cast<std::int32_t>((rng() % 0x7FFFFFFEu) + 1);
    p.S[i] = static_cast<std::int32_t>(sLo + rng() % std::uint32_t(63 - sLo));
    p.B[i] = bias(l);
    putI32(image, at + i * 4, p.M[i]);
    putI32(image, at + 0x40 + i * 4, p.S[i]);
    putI32(image, at + 0x80 + i * 4, p.B[i]);
  }
  return p;
}

// properties.bias (section 2.6): requant.b adds param row param_addr + 2 to each
// accumulator, int32 wrapping, before the multiply. Accumulators and biases at the int32
// extremes so that the sum wraps both ways.
TEST(SimSemantics, BiasRequantizeAddsTheBiasRowWrapping) {
  const auto& isa = refIsa();
  std::vector<std::uint8_t> image(0x4000, 0);
  std::mt19937 rng(13);
  for (int i = 0; i < 48; ++i) // 3 acc rows
    putI32(image, std::size_t(i * 4), static_cast<std::int32_t>(rng()));
  const std::int32_t accs[] = {INT32_MIN, INT32_MAX, INT32_MAX, INT32_MIN, INT32_MAX, -1};
  const std::int32_t biases[] = {-1, 1, INT32_MAX, INT32_MIN, INT32_MIN, INT32_MIN};
  for (int l = 0; l < 6; ++l)
    putI32(image, std::size_t(l * 4), accs[l]);
  const auto [M, S, B] = putLaneParams(image, 0x400, rng, 20, [&](int l) {
    return l < 6 ? biases[l] : static_cast<std::int32_t>(rng());
  });
  const std::string prog =
      "dma.ld sram=acc sram_addr=0 dram_addr=0 size0=3 size1=1 size2=1\n"
      "dma.ld sram=param sram_addr=6 dram_addr=0x400 size0=3 size1=1 size2=1 push_next\n"
      "requant.b dst_addr=20 src_addr=0 param_addr=6 zero_point=5 lo=-128 hi=127 n0=3 n1=1 "
      "dst_s0=1 src_s0=1 pop_prev push_next\n"
      "dma.st sram=act sram_addr=20 dram_addr=0x1000 size0=3 size1=1 size2=1 pop_prev push_prev\n"
      "finish pop_next\n";
  Result r = run(isa, prog, image);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  bool wrapped = false;
  for (int i = 0; i < 48; ++i) {
    const std::size_t l = std::size_t(i % 16);
    const std::int64_t sum = std::int64_t(i32At(image, std::size_t(i * 4))) + B[l];
    const std::int64_t a = sum >= (std::int64_t(1) << 31)   ? sum - (std::int64_t(1) << 32)
                           : sum < -(std::int64_t(1) << 31) ? sum + (std::int64_t(1) << 32)
                                                            : sum;
    wrapped = wrapped || a != sum;
    EXPECT_EQ(static_cast<std::int8_t>(r.dram[std::size_t(0x1000 + i)]),
              requantRef(a, M[l], S[l], 5, -128, 127))
        << "element " << i;
  }
  EXPECT_TRUE(wrapped);
  EXPECT_EQ(bytesRead(r, "param"), std::uint64_t(3 * 64)); // M, S and the bias rows
  // The bias row must lie in the param SRAM: param_addr 126 reaches row 128 of 128.
  Result beyond = run(isa, "requant.b dst_addr=0 src_addr=0 param_addr=126 n0=1 n1=1\nfinish\n");
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.report.fault->kind, ember::platform::FaultKind::SramOutOfRange);
}

// The compiler's two ways to a biased convolution output (docs/compiler/npu-layers.md):
// vmov of the bias row into acc, gemm, requant; and gemm.z, requant.b with the bias in the
// third param row. Biases near the int32 extremes make the sums wrap; both give the int8
// outputs computed here.
TEST(SimSemantics, BiasInTheRequantizeEqualsTheBiasCopy) {
  const auto& isa = refIsa();
  auto image = randomBytes(0x4000, 14);
  std::mt19937 rng(15);
  const auto [M, S, B] = putLaneParams(
      image, 0x3000, rng, 30, [](int l) { return l % 2 ? INT32_MIN + 20000 : INT32_MAX - 20000; });
  const std::string loads =
      "dma.ld sram=act sram_addr=0 dram_addr=0 size0=40 size1=1 size2=1\n"
      "dma.ld sram=weight sram_addr=0 dram_addr=0x1000 size0=2 size1=1 size2=1\n"
      "dma.ld sram=acc sram_addr=30 dram_addr=0x3080 size0=1 size1=1 size2=1\n"
      "dma.ld sram=param sram_addr=4 dram_addr=0x3000 size0=3 size1=1 size2=1 push_next\n";
  const std::string nest =
      " act_addr=0 acc_addr=0 wgt_addr=0 n0=20 n1=1 n2=2 act_s0=1 act_s2=20 acc_s0=1 wgt_s2=1";
  const std::string rq =
      " dst_addr=100 src_addr=0 param_addr=4 zero_point=-3 lo=-128 hi=127 n0=20 n1=1 dst_s0=1 "
      "src_s0=1 push_next\n"
      "dma.st sram=act sram_addr=100 dram_addr=0x2000 size0=20 size1=1 size2=1 pop_prev "
      "push_prev\nfinish pop_next\n";
  const Result copy = run(isa,
                          loads +
                              "vmov dst_mem=acc src_mem=acc dst_addr=0 src_addr=30 n0=20 n1=1 "
                              "dst_s0=1 src_s0=0 pop_prev\ngemm" +
                              nest + "\nrequant" + rq,
                          image);
  const Result fused = run(isa, loads + "gemm.z" + nest + " pop_prev\nrequant.b" + rq, image);
  ASSERT_TRUE(copy.ok()) << copy.report.fault->message();
  ASSERT_TRUE(fused.ok()) << fused.report.fault->message();
  int wraps = 0;
  for (int m = 0; m < 20; ++m)
    for (int k = 0; k < 16; ++k) {
      const std::int64_t sum = std::int64_t(B[std::size_t(k)]) + blockProducts(image, 0, m, k) +
                               blockProducts(image, 1, m, k);
      wraps += wrap(sum) != sum;
      const std::int64_t want =
          requantRef(wrap(sum), M[std::size_t(k)], S[std::size_t(k)], -3, -128, 127);
      const std::size_t at = std::size_t(0x2000 + m * 16 + k);
      EXPECT_EQ(static_cast<std::int8_t>(copy.dram[at]), want) << m << "," << k;
      EXPECT_EQ(static_cast<std::int8_t>(fused.dram[at]), want) << m << "," << k;
    }
  EXPECT_GT(wraps, 0);
  EXPECT_LT(fused.report.cycles, copy.report.cycles); // one vector pass fewer
}

TEST(SimSemantics, LargeVariantRunsGemmWith32Lanes) {
  const auto& isa = largeIsa();
  const int M = 8;
  auto image = randomBytes(0x4000, 7);
  std::string prog =
      "dma.ld sram=act sram_addr=0 dram_addr=0 size0=8 size1=1 size2=1\n"
      "dma.ld sram=weight sram_addr=0 dram_addr=0x1000 size0=1 size1=1 size2=1 push_next\n"
      "gemm reset acc_addr=0 n0=8 n1=1 n2=1 acc_s0=1 pop_prev\n"
      "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=8 n1=1 n2=1 act_s0=1 acc_s0=1 push_next\n"
      "dma.st sram=acc sram_addr=0 dram_addr=0x2000 size0=8 size1=1 size2=1 pop_prev push_prev\n"
      "finish pop_next\n";
  Result r = run(isa, prog, image);
  ASSERT_TRUE(r.ok()) << r.report.fault->message();
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < 32; ++k) {
      std::int64_t want = 0;
      for (int c = 0; c < 32; ++c)
        want += std::int64_t(static_cast<std::int8_t>(image[std::size_t(m * 32 + c)])) *
                static_cast<std::int8_t>(image[std::size_t(0x1000 + k * 32 + c)]);
      EXPECT_EQ(i32At(r.dram, std::size_t(0x2000 + (m * 32 + k) * 4)), wrap(want));
    }
}

} // namespace
