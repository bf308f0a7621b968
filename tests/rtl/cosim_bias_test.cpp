// Co-simulation of the overwriting array instructions and the bias requantize (issue 46:
// properties.overwrite of gemm.z, gemm.bgz, dwconv.z; properties.bias of requant.b): a
// directed program with accumulators and biases at the int32 extremes, equal on both
// models, and equal to the same program written with the plain instructions (a reset
// gemm before each overwriting one, a wrapping vadd of the bias before a requant).
#include "ember/isa/assembler.h"
#include "ember/progen/ProgramGenerator.h"
#include "ember/sim/Simulator.h"

#include <gtest/gtest.h>

#include "CosimJob.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

using ember::platform::Job;
using ember::rtltest::cosim;
using ember::rtltest::cosimAsm;
using ember::rtltest::isa;
using ember::rtltest::jobOf;
using ember::rtltest::randomBytes;
using u64 = std::uint64_t;

std::string n(u64 v) {
  return std::to_string(v);
}

ember::platform::Result simRun(const std::string& text, const std::vector<std::uint8_t>& image) {
  Job job = jobOf(ember::isa::assemble(text, isa(), "rqb.s"));
  job.dram.write(0, image);
  return ember::sim::Simulator(isa()).run(job);
}

/// The slices of `r` in stream order.
std::vector<ember::platform::Slice> byIndex(const ember::platform::Result& r) {
  std::vector<ember::platform::Slice> v = r.report.slices;
  std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
  return v;
}

bool haveAll() {
  for (const char* name : {"gemm.z", "gemm.bgz", "dwconv.z", "requant.b"})
    if (!isa().findInstruction(name))
      return false;
  return true;
}

/// The DRAM image: act rows 0..127 and three weight blocks (random), acc rows 0..63
/// random (overwritten) and 64..95 from the int32 extremes, then `kSets` parameter
/// blocks of three rows (M, S, bias).
struct Image {
  static constexpr unsigned kSets = 4;
  u64 ab, wb, cb, pb, wgtAt, accAt, parAt, outAt, out2At;
  unsigned L;
  std::vector<std::uint8_t> bytes;
  Image() {
    ab = isa().memory("act").row_bytes;
    wb = isa().memory("weight").row_bytes;
    cb = isa().memory("acc").row_bytes;
    pb = isa().memory("param").row_bytes;
    L = isa().hw().vector.lanes;
    wgtAt = 128 * ab;
    accAt = wgtAt + 3 * wb;
    parAt = accAt + 96 * cb;
    outAt = parAt + 3 * kSets * pb;
    out2At = outAt + 32 * ab;
    bytes = randomBytes(accAt + 64 * cb, 46);
    const std::vector<std::uint8_t> noise = randomBytes(96 * 4 * L, 47);
    const std::int32_t edge[] = {INT32_MIN, INT32_MAX, -1, 0, 1, INT32_MIN + 1, INT32_MAX - 1};
    auto put = [&](u64 at, std::int32_t v) {
      if (bytes.size() < at + 4)
        bytes.resize(at + 4, 0);
      std::memcpy(bytes.data() + at, &v, 4);
    };
    for (u64 r = 64; r < 96; ++r)
      for (unsigned l = 0; l < L; ++l) {
        std::int32_t v;
        std::memcpy(&v, noise.data() + 4 * (r * L + l), 4);
        const u64 k = (r * 7 + l * 3) % 10;
        put(accAt + r * cb + 4 * l, k < 7 ? edge[k] : v);
      }
    // Sets: {M, S} maps a + B in +-2^31 to about +-128 (set 0), extreme multipliers and
    // shifts (1, 2), a small one (3); biases from the extremes, by lane.
    const std::int32_t M[kSets] = {1 << 30, INT32_MAX, INT32_MIN, 3};
    const std::int32_t S[kSets] = {54, 62, 33, 1};
    const std::int32_t B[] = {INT32_MAX, INT32_MIN, 1, -1, 0, INT32_MAX - 5, -300000};
    for (unsigned k = 0; k < kSets; ++k)
      for (unsigned l = 0; l < L; ++l) {
        put(parAt + (3 * k) * pb + 4 * l, M[k] + std::int32_t(l % 3) * (k == 0 ? 4096 : 0));
        put(parAt + (3 * k + 1) * pb + 4 * l, S[k]);
        put(parAt + (3 * k + 2) * pb + 4 * l, B[(l + 2 * k) % 7]);
      }
    bytes.resize(out2At + 32 * cb, 0);
  }
  /// Lanes whose acc + bias leaves int32 in the requantizes of the program (the wrap).
  unsigned wraps() const {
    unsigned w = 0;
    for (unsigned k = 0; k < kSets; ++k)
      for (u64 r = 64 + 8 * k; r < 72 + 8 * k; ++r)
        for (unsigned l = 0; l < L; ++l) {
          std::int32_t a, b;
          std::memcpy(&a, bytes.data() + accAt + r * cb + 4 * l, 4);
          std::memcpy(&b, bytes.data() + parAt + (3 * k + 2) * pb + 4 * l, 4);
          const std::int64_t s = std::int64_t(a) + b;
          w += s < INT32_MIN || s > INT32_MAX;
        }
    return w;
  }
};

/// The loads, then `body`, then the stores of act rows 200..231 and acc rows 0..22.
std::string program(const Image& im, const std::string& body) {
  return "dma.ld sram=act sram_addr=0 dram_addr=0 size0=128 size1=1 size2=1\n"
         "dma.ld sram=weight sram_addr=0 dram_addr=" +
         n(im.wgtAt) +
         " size0=3 size1=1 size2=1\n"
         "dma.ld sram=acc sram_addr=0 dram_addr=" +
         n(im.accAt) +
         " size0=96 size1=1 size2=1\n"
         // the biases also into acc rows 120.. (the plain program adds them with vadd)
         "dma.ld sram=acc sram_addr=120 dram_addr=" +
         n(im.parAt + 2 * im.pb) + " size0=1 size1=" + n(Image::kSets) +
         " size2=1 stride1=3\n"
         "dma.ld sram=param sram_addr=0 dram_addr=" +
         n(im.parAt) + " size0=" + n(3 * Image::kSets) +
         " size1=1 size2=1 push_next\n"
         "sync engine=compute pop_prev\n" +
         body +
         "sync engine=compute push_next\n"
         "dma.st pop_prev sram=act sram_addr=200 dram_addr=" +
         n(im.outAt) +
         " size0=32 size1=1 size2=1\n"
         "dma.st sram=acc sram_addr=0 dram_addr=" +
         n(im.out2At) + " size0=23 size1=1 size2=1\nfinish\n";
}

/// The requantizes of set k: acc rows 64 + 8k .. (two lines of four) -> act 200 + 8k ...
std::string requant(unsigned k, bool bias) {
  const std::string src = n(64 + 8 * k), dst = n(200 + 8 * k);
  const std::string rest = " param_addr=" + n(3 * k) + " zero_point=" + n(k) +
                           " lo=-128 hi=127 n0=4 n1=2 dst_s0=1 dst_s1=4 src_s0=1 src_s1=4\n";
  if (bias)
    return "requant.b dst_addr=" + dst + " src_addr=" + src + rest;
  return "vadd dst_mem=acc src_mem=acc dst_addr=" + src + " src0_addr=" + src +
         " src1_addr=" + n(120 + k) +
         " n0=4 n1=2 dst_s0=1 dst_s1=4 src0_s0=1 src0_s1=4 src1_s0=0 src1_s1=0\n" +
         "requant dst_addr=" + dst + " src_addr=" + src + rest;
}

TEST(Cosim, OverwriteAndBiasExtremes) {
  if (!haveAll())
    GTEST_SKIP() << "no gemm.z, gemm.bgz, dwconv.z and requant.b in this description";
  const Image im;
  ASSERT_GT(im.wraps(), 0u) << "the data must make acc + bias wrap";
  // kh x kw = 4 taps: every shipped array has at least 8 rows.
  const std::string dw0 = " wgt_addr=2 n0=3 n1=2 act_s0=1 act_s1=8 acc_s0=1 acc_s1=3 kh=2 kw=2 "
                          "tap_s0=1 tap_s1=4\n";
  // A: the overwriting and bias instructions. acc rows 0..7 (two passes), row 8 written
  // by four steps (the last one's products stay), rows 9, 10 reset, 12..15 in the
  // background while the requantizes run (other rows), 16..21 depthwise, row 22 by
  // three depthwise outputs (the last stays).
  std::string a = "gemm.z act_addr=0 acc_addr=0 wgt_addr=0 n0=4 n1=2 n2=2 act_s0=1 act_s1=4 "
                  "act_s2=8 acc_s0=1 acc_s1=4 wgt_s2=1\n"
                  "gemm.z act_addr=16 acc_addr=8 wgt_addr=1 n0=4 n1=1 n2=1 act_s0=1 acc_s0=0\n"
                  "gemm.z act_addr=0 acc_addr=9 wgt_addr=0 n0=2 n1=1 n2=1 acc_s0=1 reset\n"
                  "gemm.bgz act_addr=20 acc_addr=12 wgt_addr=1 n0=4 n1=1 n2=3 act_s0=1 act_s2=4 "
                  "acc_s0=1\n";
  for (unsigned k = 0; k < Image::kSets; ++k)
    a += requant(k, true);
  a += "sync engine=compute\n"
       "dwconv.z act_addr=32 acc_addr=16" +
       dw0 +
       "dwconv.z act_addr=48 acc_addr=22 wgt_addr=2 n0=3 n1=1 act_s0=2 acc_s0=0 kh=1 kw=2 "
       "tap_s0=1\n";
  // B: the same with the plain instructions.
  std::string b = "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=4 n1=2 n2=1 acc_s0=1 acc_s1=4 reset\n"
                  "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=4 n1=2 n2=2 act_s0=1 act_s1=4 "
                  "act_s2=8 acc_s0=1 acc_s1=4 wgt_s2=1\n"
                  "gemm act_addr=19 acc_addr=8 wgt_addr=1 n0=1 n1=1 n2=1 reset\n"
                  "gemm act_addr=19 acc_addr=8 wgt_addr=1 n0=1 n1=1 n2=1\n"
                  "gemm act_addr=0 acc_addr=9 wgt_addr=0 n0=2 n1=1 n2=1 acc_s0=1 reset\n"
                  "gemm act_addr=0 acc_addr=12 wgt_addr=0 n0=4 n1=1 n2=1 acc_s0=1 reset\n"
                  "gemm act_addr=20 acc_addr=12 wgt_addr=1 n0=4 n1=1 n2=3 act_s0=1 act_s2=4 "
                  "acc_s0=1\n";
  for (unsigned k = 0; k < Image::kSets; ++k)
    b += requant(k, false);
  b += "gemm act_addr=0 acc_addr=16 wgt_addr=0 n0=7 n1=1 n2=1 acc_s0=1 reset\n"
       "dwconv act_addr=32 acc_addr=16" +
       dw0 + "dwconv act_addr=52 acc_addr=22 wgt_addr=2 n0=1 n1=1 kh=1 kw=2 tap_s0=1\n";
  const std::string pa = program(im, a), pb = program(im, b);
  Job job = jobOf(ember::isa::assemble(pa, isa(), "rqb.s"));
  job.dram.write(0, im.bytes);
  bool raced = true;
  EXPECT_EQ(cosim(job, 0, &raced), "");
  EXPECT_FALSE(raced) << "the program is race-free: its outputs must be compared";
  EXPECT_EQ(cosimAsm(pb, im.bytes), "");

  const ember::platform::Result ra = simRun(pa, im.bytes), rb = simRun(pb, im.bytes);
  ASSERT_TRUE(ra.ok()) << ra.report.fault->message();
  ASSERT_TRUE(rb.ok()) << rb.report.fault->message();
  const u64 outEnd = im.out2At + 23 * im.cb;
  for (u64 at = im.outAt; at < outEnd; ++at)
    ASSERT_EQ(ra.dram[at], rb.dram[at])
        << "byte " << at - im.outAt << " of the outputs: the overwriting or bias program "
        << "computes otherwise than the plain one";
  // The outputs are meaningful: requantized codes at both bounds and between them.
  bool lo = false, hi = false, mid = false;
  for (u64 at = im.outAt; at < im.outAt + 32 * im.ab; ++at) {
    const auto v = static_cast<std::int8_t>(ra.dram[at]);
    lo |= v == -128;
    hi |= v == 127;
    mid |= v != -128 && v != 127 && v != 0;
  }
  EXPECT_TRUE(lo && hi && mid);
  // An NPU that ignored the properties would show: the program with the plain
  // instructions in their places (no resets, no vadds) gives other codes and other
  // accumulators.
  std::string c = a;
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"gemm.z ", "gemm "},
                                                        {"gemm.bgz ", "gemm.bg "},
                                                        {"dwconv.z ", "dwconv "},
                                                        {"requant.b ", "requant "}})
    for (std::size_t k; (k = c.find(from)) != std::string::npos;)
      c.replace(k, from.size(), to);
  const ember::platform::Result rc = simRun(program(im, c), im.bytes);
  ASSERT_TRUE(rc.ok()) << rc.report.fault->message();
  auto differs = [&](u64 from, u64 to) {
    for (u64 at = from; at < to; ++at)
      if (ra.dram[at] != rc.dram[at])
        return true;
    return false;
  };
  EXPECT_TRUE(differs(im.outAt, im.outAt + 32 * im.ab)) << "requant.b's bias is visible";
  EXPECT_TRUE(differs(im.out2At, im.out2At + 9 * im.cb)) << "gemm.z's overwrite is visible";
  EXPECT_TRUE(differs(im.out2At + 12 * im.cb, im.out2At + 16 * im.cb)) << "gemm.bgz's";
  EXPECT_TRUE(differs(im.out2At + 16 * im.cb, outEnd)) << "dwconv.z's overwrite is visible";
  // Timing as the plain twins (rules G1, DW1, V1): each requant.b as long as the requant
  // that follows its vadd in B, gemm.z as long as the gemm after its reset.
  const auto sa = byIndex(ra), sb = byIndex(rb);
  auto len = [](const ember::platform::Slice& s) { return s.end - s.start; };
  const std::size_t a0 = 6, b0 = 6; // the first instruction of the body
  EXPECT_EQ(len(sa[a0]), len(sb[b0 + 1])) << "gemm.z";
  for (unsigned k = 0; k < Image::kSets; ++k)
    EXPECT_EQ(len(sa[a0 + 4 + k]), len(sb[b0 + 7 + 2 * k + 1])) << "requant.b " << k;
}

TEST(Cosim, BiasRequantizeFaults) {
  // requant.b reads param rows param_addr .. param_addr + 2: param_addr = rows - 2 is out
  // of range (plain requant is not), a zero shift in row param_addr + 1 is a bad operand,
  // n0 = 0 checks nothing. The same fault record on both models.
  if (!isa().findInstruction("requant.b"))
    GTEST_SKIP() << "no requant.b in this description";
  const auto& par = isa().memory("param");
  const u64 rows = par.rows();
  // The last three param rows zero (loaded, so that no initial SRAM state shows).
  const std::vector<std::uint8_t> zeros(3 * par.row_bytes, 0);
  auto rq = [&](const char* name, u64 prow, u64 n0) {
    return "dma.ld sram=param sram_addr=" + n(rows - 3) +
           " dram_addr=0 size0=3 size1=1 size2=1 push_next\n"
           "sync engine=compute pop_prev\n" +
           std::string(name) + " dst_addr=0 src_addr=0 param_addr=" + n(prow) + " n0=" + n(n0) +
           " n1=1\nfinish\n";
  };
  auto fault = [&](const std::string& p) {
    const ember::platform::Result r = simRun(p, zeros);
    return r.report.fault ? int(r.report.fault->kind) : -1;
  };
  const int range = int(ember::platform::FaultKind::SramOutOfRange);
  const int bad = int(ember::platform::FaultKind::BadOperand);
  EXPECT_EQ(fault(rq("requant.b", rows - 2, 1)), range);
  EXPECT_EQ(fault(rq("requant", rows - 2, 1)), bad); // in range; S = 0
  EXPECT_EQ(fault(rq("requant.b", rows - 3, 1)), bad);
  EXPECT_EQ(fault(rq("requant.b", rows - 2, 0)), -1);
  for (const std::string& p :
       {rq("requant.b", rows - 2, 1), rq("requant.b", rows - 1, 1), rq("requant", rows - 2, 1),
        rq("requant.b", rows - 3, 1), rq("requant.b", rows - 2, 0)})
    EXPECT_EQ(cosimAsm(p, zeros), "") << p;
}

TEST(Cosim, RandomProgramsUseTheNewInstructions) {
  // The 120 programs of Seeds/CosimRandom (the generator draws from every instruction of
  // the description): each of the four appears in at least 10 of them.
  if (!haveAll())
    GTEST_SKIP() << "no gemm.z, gemm.bgz, dwconv.z and requant.b in this description";
  const char* names[] = {"gemm.z", "gemm.bgz", "dwconv.z", "requant.b"};
  int with[4] = {0, 0, 0, 0};
  for (int seed = 1; seed <= 120; ++seed) {
    const ember::isa::Binary bin = ember::progen::generate(isa(), std::uint64_t(seed));
    for (int k = 0; k < 4; ++k)
      with[k] += std::any_of(bin.code.begin(), bin.code.end(),
                             [&](const auto& in) { return in.desc().name == names[k]; });
  }
  for (int k = 0; k < 4; ++k) {
    std::printf("%s in %d of 120 random programs\n", names[k], with[k]);
    EXPECT_GE(with[k], 10) << names[k];
  }
}

} // namespace
