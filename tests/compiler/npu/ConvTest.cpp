// Convolution and Gemm on the NPU: hand-built int8 graphs compiled for both
// descriptions, run on the simulator, compared bit for bit with a plain-loop reference
// written here from docs/numerics.md section 4.1, which the int8 interpreter and (where
// built) the cpu backend must give as well.
#include "NpuTestUtil.h"

#include "ember/graph/attrs/FusedActivation.h"
#include "ember/isa/roles.h"
#include "ember/quantization/Numerics.h"

#include <cmath>
#include <cstring>

namespace ember::npu::test {
namespace {

struct ConvCase {
  const char* name;
  int64_t N, C, H, W, K, KH, KW, stride, padT, padL, padB, padR, dil, group;
  const char* act; // "", "relu", "clip"
};

/// y = R(b + sum (x - zp_x) w) with padded positions contributing nothing.
std::vector<int8_t> referenceConv(const ConvCase& c, const std::vector<int8_t>& x, const Tensor& w,
                                  const Tensor& b, const Node& conv, int64_t OH, int64_t OW) {
  const auto& xq = conv.input(0).type().quant;
  const auto& yq = conv.resultType(0).quant;
  const auto& wq = w.type().quant;
  const quant::Bounds bd = quant::activationBounds(conv, yq);
  const int64_t Cg = c.C / c.group, Kg = c.K / c.group;
  std::vector<int8_t> y(size_t(c.N * c.K * OH * OW));
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t k = 0; k < c.K; ++k) {
      const quant::Multiplier m =
          quant::productMultiplier(xq.scales[0], wq.scales[size_t(k)], yq.scales[0]);
      const int64_t g = k / Kg;
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          int64_t acc = b.data<int32_t>()[k];
          for (int64_t ci = 0; ci < Cg; ++ci)
            for (int64_t kh = 0; kh < c.KH; ++kh)
              for (int64_t kw = 0; kw < c.KW; ++kw) {
                const int64_t iy = oy * c.stride - c.padT + kh * c.dil;
                const int64_t ix = ox * c.stride - c.padL + kw * c.dil;
                if (iy < 0 || iy >= c.H || ix < 0 || ix >= c.W)
                  continue;
                const int64_t xi = ((n * c.C + g * Cg + ci) * c.H + iy) * c.W + ix;
                const int64_t wi = ((k * Cg + ci) * c.KH + kh) * c.KW + kw;
                acc += (int64_t(x[size_t(xi)]) - xq.zeroPoints[0]) * w.data<int8_t>()[wi];
              }
          const int32_t a32 = static_cast<int32_t>(static_cast<uint32_t>(acc));
          y[size_t(((n * c.K + k) * OH + oy) * OW + ox)] =
              quant::requantize(a32, m, yq.zeroPoints[0], bd.lo, bd.hi);
        }
    }
  return y;
}

/// The int8 interpreter and, where built, the cpu backend (`threads` threads, bit-exact
/// with the interpreter; `knownGap` as for expectCpuBitExact()) on the same graph and
/// inputs give the reference's codes `want`.
void expectInterpreterAndCpu(const Function& f,
                             const std::map<std::string, std::vector<int8_t>>& in,
                             const std::string& output, const std::vector<int8_t>& want,
                             int threads, const std::string& what, const char* knownGap = nullptr) {
  const auto got = interpretAndCpu(f, in, threads, what, knownGap);
  ASSERT_EQ(got.count(output), 1u) << what;
  EXPECT_EQ(mismatches(got.at(output), want), 0u) << what << ": int8 interpreter vs reference";
}

struct Built {
  std::unique_ptr<G> g;
  const Node* conv = nullptr;
  int64_t OH = 0, OW = 0;
};

Built buildConv(const ConvCase& c) {
  Built b;
  b.g = std::make_unique<G>();
  G& g = *b.g;
  NodeValue x = g.input("x", {c.N, c.C, c.H, c.W}, 0.05f, -7);
  NodeValue w = g.weights("w", {c.K, c.C / c.group, c.KH, c.KW}, 0);
  NodeValue bias = g.bias("b", c.K);
  Attrs a;
  a.set("strides", std::vector<int64_t>{c.stride, c.stride});
  a.set("pads", std::vector<int64_t>{c.padT, c.padL, c.padB, c.padR});
  a.set("dilations", std::vector<int64_t>{c.dil, c.dil});
  a.set("group", c.group);
  a.set("kernel_shape", std::vector<int64_t>{c.KH, c.KW});
  if (std::string(c.act) == "relu") {
    FusedActivation fa;
    fa.kind = FusedActivation::Kind::Relu;
    fa.writeTo(a);
  } else if (std::string(c.act) == "clip") {
    FusedActivation fa;
    fa.kind = FusedActivation::Kind::Clip;
    fa.lo = -0.5;
    fa.hi = 1.5;
    fa.writeTo(a);
  }
  b.OH = (c.H + c.padT + c.padB - c.dil * (c.KH - 1) - 1) / c.stride + 1;
  b.OW = (c.W + c.padL + c.padR - c.dil * (c.KW - 1) - 1) / c.stride + 1;
  NodeValue y = g.node(NodeKind::Conv, "conv", {x, w, bias}, a, {c.N, c.K, b.OH, b.OW}, 0.08f, 5);
  b.conv = y.node;
  g.output("y", y);
  return b;
}

const ConvCase kConvCases[] = {
    {"pointwise", 1, 16, 8, 8, 16, 1, 1, 1, 0, 0, 0, 0, 1, 1, ""},
    // Strided 1x1: reading every other line only (skipInputLines), and with the last
    // output row in the bottom padding (the whole input then).
    {"pointwise_s2", 1, 24, 9, 8, 40, 1, 1, 2, 0, 0, 0, 0, 1, 1, "relu"},
    {"pointwise_s2_pad_bottom", 1, 16, 4, 6, 16, 1, 1, 2, 0, 0, 1, 1, 1, 1, ""},
    {"k3_pad1", 1, 16, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, "relu"},
    {"k3_s2_odd_channels", 1, 20, 9, 9, 24, 3, 3, 2, 1, 1, 1, 1, 1, 1, ""},
    {"k5_c3", 1, 3, 12, 12, 8, 5, 5, 1, 2, 2, 2, 2, 1, 1, "relu"},
    {"k7_s2_stem", 1, 3, 20, 20, 16, 7, 7, 2, 3, 3, 3, 3, 1, 1, "relu"},
    // Few input channels: candidates for packing P pixels per row (the cost model decides).
    {"k7_s2_c3_wide", 1, 3, 40, 48, 16, 7, 7, 2, 3, 3, 3, 3, 1, 1, "relu"},
    {"k3_c5", 1, 5, 10, 10, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, "relu"},
    {"k5_c7", 1, 7, 9, 11, 20, 5, 5, 1, 2, 1, 2, 0, 1, 1, ""},
    {"k3_dilation2_clip", 1, 16, 10, 10, 16, 3, 3, 1, 2, 2, 2, 2, 2, 1, "clip"},
    {"groups2", 1, 32, 6, 6, 32, 3, 3, 1, 1, 1, 1, 1, 1, 2, ""},
    {"groups3_unaligned", 1, 12, 6, 6, 18, 3, 3, 1, 1, 1, 1, 1, 1, 3, ""},
    {"depthwise", 1, 24, 8, 8, 24, 3, 3, 1, 1, 1, 1, 1, 1, 24, "relu"},
    {"depthwise_s2", 1, 32, 9, 9, 32, 3, 3, 2, 1, 1, 1, 1, 1, 32, "clip"},
    // More taps than ember-v1's 16 array rows: one depthwise instruction per group of
    // kernel rows (5x5: 3 + 2 rows; 7x7: 2 + 2 + 2 + 1).
    {"depthwise_k5", 1, 40, 14, 14, 40, 5, 5, 1, 2, 2, 2, 2, 1, 40, ""},
    {"depthwise_k5_s2", 1, 24, 11, 11, 24, 5, 5, 2, 2, 2, 2, 2, 1, 24, "relu"},
    {"depthwise_k7", 1, 16, 9, 9, 16, 7, 7, 1, 3, 3, 3, 3, 1, 16, ""},
    {"asymmetric_pads", 1, 5, 7, 9, 40, 3, 3, 1, 0, 1, 2, 0, 1, 1, ""},
    {"batch2", 2, 17, 5, 6, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1, ""},
    // A ViT's patch embedding: stride 16 is past the gemm's stride field (4 bits), so it
    // runs only as the 1 x 1 convolution on the host's patches of the graph input.
    {"patchify_k16_s16", 1, 3, 32, 48, 40, 16, 16, 16, 0, 0, 0, 0, 1, 1, ""},
};

class ConvOnNpu : public ::testing::TestWithParam<std::tuple<ConvCase, bool>> {};

TEST_P(ConvOnNpu, BitExactAgainstReference) {
  const ConvCase& c = std::get<0>(GetParam());
  const isa::IsaDescription& isa = std::get<1>(GetParam()) ? largeIsa() : refIsa();
  Built b = buildConv(c);
  CompileResult r = compile(*b.g->f, isa);
  auto in = randomInputs(r.binary, 7);
  SimOut s = simulate(r.binary, isa, in);
  ASSERT_EQ(s.outputs.count("y"), 1u);
  const Node& conv = *b.conv;
  const auto want = referenceConv(c, in["x"], conv.input(1).node->payload(),
                                  conv.input(2).node->payload(), conv, b.OH, b.OW);
  EXPECT_EQ(mismatches(s.outputs["y"], want), 0u) << formatSummary(r.summary);
  expectInterpreterAndCpu(*b.g->f, in, "y", want, std::get<1>(GetParam()) ? 2 : 1, c.name);
  // The estimate follows the simulated cycles (report the ratio).
  const double ratio = r.summary.cycles / double(s.report.cycles);
  std::printf("[ %s on %s ] estimated %.0f / simulated %llu cycles = %.3f\n", c.name,
              isa.name().c_str(), r.summary.cycles, (unsigned long long)s.report.cycles, ratio);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvOnNpu,
                         ::testing::Combine(::testing::ValuesIn(kConvCases), ::testing::Bool()),
                         [](const auto& p) {
                           return std::string(std::get<0>(p.param).name) +
                                  (std::get<1>(p.param) ? "_large" : "_ref");
                         });

TEST(ConvOnNpu, DepthwiseKernelsLargerThanTheArrayRunInGroupsOfKernelRows) {
  // ember-v1's array has 16 rows: a 5x5 depthwise kernel (25 taps) takes a dwconv of 3
  // kernel rows (15 taps) and one of 2 (10 taps) per output block, each with its weight
  // block, both adding into the block's accumulators; before, it ran as diagonal gemm
  // blocks (one array row of each column doing work), as it still does without the
  // depthwise instruction.
  const ConvCase& c =
      *std::find_if(std::begin(kConvCases), std::end(kConvCases),
                    [](const ConvCase& k) { return std::string(k.name) == "depthwise_k5"; });
  Built b = buildConv(c);
  const CompileResult r = compile(*b.g->f, refIsa());
  const isa::IsaDescription noDw = without(refIsa(), "depthwise");
  const CompileResult gemms = compile(*b.g->f, noDw);
  std::map<int64_t, size_t> byRows; // dwconv instructions by kernel rows
  for (const auto& in : r.binary.code)
    if (in.desc().cls->id == isa::SemanticClass::Depthwise) {
      EXPECT_EQ(in.get(isa::role::kKw), 5);
      ++byRows[in.get(isa::role::kKh)];
    }
  EXPECT_EQ(byRows.size(), 2u);
  EXPECT_GT(byRows[3], 0u);
  EXPECT_EQ(byRows[3], byRows[2]);
  auto in = randomInputs(r.binary, 3);
  SimOut s = simulate(r.binary, refIsa(), in), sg = simulate(gemms.binary, noDw, in);
  const Node& conv = *b.conv;
  const auto want = referenceConv(c, in["x"], conv.input(1).node->payload(),
                                  conv.input(2).node->payload(), conv, b.OH, b.OW);
  EXPECT_EQ(mismatches(s.outputs["y"], want), 0u);
  EXPECT_EQ(mismatches(sg.outputs["y"], want), 0u);
  EXPECT_LT(s.report.cycles, sg.report.cycles);
  std::printf("[ depthwise 5x5 on ember-v1 ] %llu cycles in kernel-row groups, %llu as gemms\n",
              (unsigned long long)s.report.cycles, (unsigned long long)sg.report.cycles);
}

TEST(ConvOnNpu, ForcedSmallTilesWithAndWithoutDoubleBuffering) {
  const ConvCase c{"tiles", 1, 40, 11, 13, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, "relu"};
  Built b = buildConv(c);
  const auto want = [&](const std::vector<int8_t>& x) {
    const Node& conv = *b.conv;
    return referenceConv(c, x, conv.input(1).node->payload(), conv.input(2).node->payload(), conv,
                         b.OH, b.OW);
  };
  for (bool dbl : {true, false}) {
    CompileOptions o;
    o.doubleBuffer = dbl;
    o.maxTileHeight = 2;
    o.maxTileKBlocks = 1;
    CompileResult r = compile(*b.g->f, refIsa(), o);
    EXPECT_GE(r.summary.layers.at(0).tiles, 18) << formatSummary(r.summary);
    auto in = randomInputs(r.binary, 3);
    SimOut s = simulate(r.binary, refIsa(), in);
    EXPECT_EQ(mismatches(s.outputs["y"], want(in["x"])), 0u) << "double buffer " << dbl;
    if (dbl) // the same graph and inputs both times
      expectInterpreterAndCpu(*b.g->f, in, "y", want(in["x"]), 2, c.name);
  }
}

// A program over CompileOptions::maxInstructions is refused as ProgramTooLong (ember-dse
// tells it from other compile errors by its type) naming the layer, its place and the limit.
TEST(ConvOnNpu, ProgramOverTheInstructionLimitIsRefusedNamingTheLayer) {
  const ConvCase c{"limit", 1, 40, 11, 13, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, "relu"};
  Built b = buildConv(c);
  CompileOptions o;
  o.maxTileHeight = 1;
  // One tiling: with trials a limit below the first candidate's program lets a shorter
  // candidate win (a trial over the limit is skipped), which is not what this checks.
  o.tilingTrials = 1;
  const size_t need = compile(*b.g->f, refIsa(), o).summary.instructions;
  ASSERT_GT(need, 20u);
  o.maxInstructions = need; // exactly enough still compiles
  EXPECT_EQ(compile(*b.g->f, refIsa(), o).summary.instructions, int64_t(need));
  o.maxInstructions = need - 1;
  try {
    (void)compile(*b.g->f, refIsa(), o);
    ADD_FAILURE() << "no ProgramTooLong at " << need - 1 << " instructions";
  } catch (const ProgramTooLong& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("layer '" + b.conv->name() + "' (layer 1 of 1)"), std::string::npos) << m;
    EXPECT_NE(m.find("exceeds " + std::to_string(need - 1) + " instructions"), std::string::npos)
        << m;
    EXPECT_NE(m.find("SRAMs are too small"), std::string::npos) << m;
  }
}

/// Compiles `c` (with `o`, for `isa`), simulates it and compares with the reference and
/// the int8 interpreter; returns the layer's tiling.
std::string expectChunkedConvExact(const ConvCase& c, const isa::IsaDescription& isa,
                                   const CompileOptions& o, uint32_t seed) {
  Built b = buildConv(c);
  CompileResult r = compile(*b.g->f, isa, o);
  auto in = randomInputs(r.binary, seed);
  SimOut s = simulate(r.binary, isa, in);
  const Node& conv = *b.conv;
  const auto want = referenceConv(c, in["x"], conv.input(1).node->payload(),
                                  conv.input(2).node->payload(), conv, b.OH, b.OW);
  EXPECT_EQ(mismatches(s.outputs["y"], want), 0u) << c.name << "\n" << formatSummary(r.summary);
  expectInterpreterAndCpu(*b.g->f, in, "y", want, 1, c.name);
  std::printf("[ %s on %s ] %s: estimated %.0f / simulated %llu cycles = %.3f\n", c.name,
              isa.name().c_str(), r.summary.layers.at(0).tiling.c_str(), r.summary.cycles,
              (unsigned long long)s.report.cycles, r.summary.cycles / double(s.report.cycles));
  return r.summary.layers.at(0).tiling;
}

TEST(ConvOnNpu, ReductionInChunksEqualsTheReference) {
  // (case, cap on one output block's weight blocks per chunk, the chunking it must give)
  struct Chunked {
    ConvCase c;
    int64_t cap;
    const char* tiling;
  };
  const Chunked cases[] = {
      // 40 channels = 3 input blocks x 9 taps: chunks of 2 blocks, of 1 block, of taps.
      {{"k3_c40", 1, 40, 7, 9, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, "relu"}, 18, "rb=2"},
      {{"k3_c40", 1, 40, 7, 9, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, "relu"}, 9, "rb=1"},
      {{"k3_c40", 1, 40, 7, 9, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, "relu"}, 4, "rb=1 rt=3"},
      {{"k3_c40_s2", 1, 40, 9, 9, 24, 3, 3, 2, 1, 1, 1, 1, 1, 1, ""}, 1, "rb=1 rt=1"},
      // 5x5 taps cut inside kernel rows (chunks of 7 taps).
      {{"k5_c20_dil2", 1, 20, 12, 12, 16, 5, 5, 1, 3, 2, 3, 2, 2, 1, "clip"}, 8, "rb=1 rt=7"},
      {{"pointwise_c70", 1, 70, 5, 6, 33, 1, 1, 1, 0, 0, 0, 0, 1, 1, ""}, 2, "rb=2"},
      {{"groups2", 1, 32, 6, 6, 32, 3, 3, 1, 1, 1, 1, 1, 1, 2, ""}, 4, "rb=1 rt=3"},
      {{"groups3_unaligned", 1, 12, 6, 6, 18, 3, 3, 1, 1, 1, 1, 1, 1, 3, ""}, 5, "rb=1 rt=5"},
      {{"depthwise", 1, 24, 8, 8, 24, 3, 3, 1, 1, 1, 1, 1, 1, 24, "relu"}, 2, "rb=1 rt=2"},
      {{"batch2", 2, 17, 5, 6, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1, ""}, 9, "rb=1"},
  };
  // Depthwise jobs run on the depthwise instruction (one weight block of taps, never cut)
  // when the description has one; the chunked diagonal blocks are checked without it.
  const isa::IsaDescription noDw = without(refIsa(), "depthwise");
  uint32_t seed = 11;
  for (const Chunked& k : cases)
    for (bool dbl : {true, false}) {
      CompileOptions o;
      o.maxTileReduction = k.cap;
      o.doubleBuffer = dbl;
      const bool dw = k.c.group == k.c.C && k.c.group > 1;
      const std::string tiling = expectChunkedConvExact(k.c, dw ? noDw : refIsa(), o, seed++);
      EXPECT_NE(tiling.find(k.tiling), std::string::npos)
          << k.c.name << " cap " << k.cap << ": " << tiling;
      if (dw) {
        EXPECT_NE(expectChunkedConvExact(k.c, refIsa(), o, seed++).find("depthwise"),
                  std::string::npos)
            << k.c.name;
      }
    }
}

TEST(ConvOnNpu, ThinLayersSplitTheBiasBetweenTheDmaAndTheVectorUnit) {
  // A 1x1 convolution of one input block into six output blocks: per output row the
  // array works one cycle, the vector unit two (the bias copy and the requantize), and a
  // bias row by DMA takes two DRAM beats; and a projection of few output blocks. Some blocks of a
  // tile take their bias by DMA, the others by vmov (tiling `bias-dma=m`), so that neither the
  // vector unit nor the DRAM channel alone paces the layer. Bit-exact all the same. This
  // is the path of a description without the bias requantize (ThinLayersTakeTheBias...).
  const isa::IsaDescription plain = withoutProperty(refIsa(), "bias");
  const ConvCase cases[] = {
      {"expand_16_96", 1, 16, 56, 56, 96, 1, 1, 1, 0, 0, 0, 0, 1, 1, "clip"},
      {"project_96_24", 1, 96, 28, 28, 24, 1, 1, 1, 0, 0, 0, 0, 1, 1, ""},
  };
  uint32_t seed = 61;
  for (const ConvCase& c : cases) {
    const std::string tiling = expectChunkedConvExact(c, plain, {}, seed++);
    EXPECT_NE(tiling.find("bias-dma="), std::string::npos) << c.name << ": " << tiling;
  }
  // Forced small tiles, single-buffered: bit-exact too.
  CompileOptions o;
  o.doubleBuffer = false;
  o.maxTileHeight = 3;
  expectChunkedConvExact(cases[0], plain, o, seed++);
  expectChunkedConvExact(cases[1], withoutProperty(largeIsa(), "bias"), o, seed++);
}

/// How many instructions of `r`'s program are `mnemonic`.
size_t countOf(const CompileResult& r, const std::string& mnemonic) {
  size_t n = 0;
  for (const auto& in : r.binary.code)
    n += in.desc().name == mnemonic;
  return n;
}

TEST(ConvOnNpu, ThinLayersTakeTheBiasInTheRequantize) {
  // With requant.b and the overwriting gemm.z / gemm.bgz / dwconv.z (ember-v1 and
  // ember-v1-large as shipped) no instruction puts the bias into the accumulators: each
  // output block's first gemm writes, its requantize adds the bias (docs/compiler/
  // npu-layers.md). The vector unit does one row per output row instead of two, so the
  // thin layers run faster than with the bias copies; bit-exact all the same, also with
  // small single-buffered tiles and when the reduction is cut into chunks.
  const ConvCase cases[] = {
      {"expand_16_96", 1, 16, 56, 56, 96, 1, 1, 1, 0, 0, 0, 0, 1, 1, "clip"},
      {"project_96_24", 1, 96, 28, 28, 24, 1, 1, 1, 0, 0, 0, 0, 1, 1, ""},
      {"depthwise_s2", 1, 32, 14, 14, 32, 3, 3, 2, 1, 1, 1, 1, 1, 32, "relu"},
  };
  uint32_t seed = 71;
  for (const isa::IsaDescription* isa : {&refIsa(), &largeIsa()})
    for (const ConvCase& c : cases) {
      Built b = buildConv(c);
      const CompileResult r = compile(*b.g->f, *isa, {});
      // (The binary's instructions point into their description: it must outlive them.)
      const isa::IsaDescription plain = withoutProperty(*isa, "bias");
      const CompileResult old = compile(*b.g->f, plain, {});
      const std::string what = std::string(c.name) + " on " + isa->name();
      EXPECT_EQ(countOf(r, "vmov"), 0u) << what;
      EXPECT_EQ(countOf(r, "requant"), 0u) << what;
      EXPECT_GT(countOf(r, "requant.b"), 0u) << what;
      EXPECT_GT(countOf(r, c.group > 1 ? "dwconv.z" : "gemm.z") + countOf(r, "gemm.bgz"), 0u)
          << what;
      EXPECT_GT(countOf(old, "requant"), 0u) << what;
      auto in = randomInputs(r.binary, seed);
      const uint64_t cycles = simulate(r.binary, *isa, in).report.cycles;
      EXPECT_LT(cycles, simulate(old.binary, plain, in).report.cycles) << what;
      EXPECT_EQ(expectChunkedConvExact(c, *isa, {}, seed++).find("bias-dma"), std::string::npos)
          << what;
    }
  CompileOptions o;
  o.doubleBuffer = false;
  o.maxTileHeight = 3;
  expectChunkedConvExact(cases[0], refIsa(), o, seed++);
  expectChunkedConvExact(cases[2], largeIsa(), o, seed++);
}

TEST(ConvOnNpu, LargeReductionOnASmallWeightSram) {
  // A VGG-like classifier head as a 7x7 convolution over 512 channels (1,568 weight
  // blocks per output block): ember-v1's weight SRAM holds 512 per buffer.
  const ConvCase head{"vgg_head", 1, 512, 7, 7, 48, 7, 7, 1, 0, 0, 0, 0, 1, 1, "relu"};
  const std::string tiling = expectChunkedConvExact(head, refIsa(), {}, 21);
  EXPECT_NE(tiling.find("rb="), std::string::npos) << tiling;
  // Two weight blocks in all (one per buffer): every layer still compiles.
  const isa::IsaDescription tiny = refIsaWithRows({{"weight", 2}});
  const ConvCase k3{"k3_tiny_weights", 1, 40, 6, 7, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, "relu"};
  EXPECT_NE(expectChunkedConvExact(k3, tiny, {}, 22).find("rb=1 rt=1"), std::string::npos);
  const ConvCase dw{"depthwise_tiny_weights", 1, 24, 8, 8, 24, 3, 3, 2, 1, 1, 1, 1, 1, 24, ""};
  EXPECT_NE(expectChunkedConvExact(dw, without(tiny, "depthwise"), {}, 23).find("rt=1"),
            std::string::npos);
  // On the depthwise instruction a block holds all nine taps: two blocks are enough.
  EXPECT_NE(expectChunkedConvExact(dw, tiny, {}, 24).find("depthwise"), std::string::npos);
}

TEST(ConvOnNpu, TapChunksLoadOnlyTheirPixelsOnATinyActSram) {
  // An act SRAM of 8 rows holds no whole 3x3 (let alone 7x7) window of one input block
  // in two buffers: the reduction goes in chunks of taps, each loading only the pixels
  // its taps read. Border chunks that read only padding are filled with zp_x by a
  // repeated constant row. Bit-exact against the plain-loop reference and the interpreter.
  const isa::IsaDescription tiny = refIsaWithRows({{"act", 8}});
  const ConvCase cases[] = {
      {"k3_pad1", 1, 20, 6, 7, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, "relu"},
      {"k7_s2_pad3", 1, 20, 11, 12, 24, 7, 7, 2, 3, 3, 3, 3, 1, 1, ""},
      {"k5_dil2_pad3", 1, 16, 9, 9, 16, 5, 5, 1, 3, 2, 3, 2, 2, 1, "clip"},
      {"depthwise_s2", 1, 24, 8, 9, 24, 3, 3, 2, 1, 1, 1, 1, 1, 24, ""},
      {"batch2_pad2", 2, 17, 5, 6, 18, 3, 3, 1, 2, 2, 2, 2, 1, 1, ""},
  };
  uint32_t seed = 31;
  for (const ConvCase& c : cases)
    EXPECT_NE(expectChunkedConvExact(c, tiny, {}, seed++).find("tap-halo"), std::string::npos)
        << c.name;
  // With the whole window in act (ember-v1 as shipped) the tap chunks keep the tile's
  // halo: the program of a layer that fitted before does not change.
  CompileOptions o;
  o.maxTileReduction = 1;
  EXPECT_EQ(expectChunkedConvExact(cases[0], refIsa(), o, seed++).find("tap-halo"),
            std::string::npos);
}

TEST(ConvOnNpu, OneWeightBlockOrOneAccRowRunsSingleBuffered) {
  // One weight block, or one accumulator row, cannot serve two buffers: the layer runs
  // single-buffered (Program::setLayerDepth), with one accumulator row the bias loaded
  // into it by DMA. Bit-exact all the same.
  // Without the bias requantize (withoutProperty "bias"): with one accumulator row the
  // bias comes by DMA; with it, nothing initialises the accumulators.
  const ConvCase c{"k3", 1, 40, 6, 6, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, "relu"};
  const std::string w = expectChunkedConvExact(c, refIsaWithRows({{"weight", 1}}), {}, 41);
  EXPECT_NE(w.find("single-buffered"), std::string::npos) << w;
  const auto oneAcc = refIsaWithRows({{"acc", 1}});
  const std::string a = expectChunkedConvExact(c, withoutProperty(oneAcc, "bias"), {}, 42);
  EXPECT_NE(a.find("single-buffered"), std::string::npos) << a;
  EXPECT_NE(a.find("bias-dma"), std::string::npos) << a;
  const std::string z = expectChunkedConvExact(c, oneAcc, {}, 44);
  EXPECT_NE(z.find("single-buffered"), std::string::npos) << z;
  EXPECT_EQ(z.find("bias-dma"), std::string::npos) << z;
  // Both at once, and a tiny act SRAM too: one weight block, one acc row, 2 act rows.
  const auto least = refIsaWithRows({{"weight", 1}, {"acc", 1}, {"act", 2}});
  const std::string l = expectChunkedConvExact(c, withoutProperty(least, "bias"), {}, 43);
  EXPECT_NE(l.find("bias-dma rb=1 rt=1 tap-halo single-buffered"), std::string::npos) << l;
  const std::string lz = expectChunkedConvExact(c, least, {}, 45);
  EXPECT_NE(lz.find("rb=1 rt=1 tap-halo single-buffered"), std::string::npos) << lz;
}

TEST(ConvOnNpu, AnActSramBelowTwoRowsIsRefusedWithTheFigures) {
  // One input and one output row: a single act row is too few even single-buffered.
  const isa::IsaDescription one = refIsaWithRows({{"act", 1}});
  const ConvCase c{"k3", 1, 16, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, ""};
  Built b = buildConv(c);
  try {
    compile(*b.g->f, one);
    FAIL() << "compiled with one act row";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'conv'"), std::string::npos) << m;
    EXPECT_NE(m.find("2 act rows (has 1)"), std::string::npos) << m;
    EXPECT_NE(m.find("with 1 buffer,"), std::string::npos) << m;
  }
}

TEST(ConvOnNpu, StemChannelsPackedIntoTheReduction) {
  // A ResNet-like stem: 3 channels, 7x7, stride 2, pads 3, on a 96x96 image, its input
  // packed by the NPU's own packing pass (the host writes it Nchwc).
  const ConvCase c{"stem", 1, 3, 96, 96, 64, 7, 7, 2, 3, 3, 3, 3, 1, 1, "relu"};
  Built b = buildConv(c);
  CompileOptions nchwc;
  nchwc.packInputsOnHost = false;
  CompileResult r = compile(*b.g->f, refIsa(), nchwc);
  EXPECT_EQ(r.summary.layers.at(0).tiling.rfind("packed 4x3ch", 0), 0u) << formatSummary(r.summary);
  EXPECT_EQ(r.binary.io.at(0).layout, isa::Layout::Nchwc);
  auto in = randomInputs(r.binary, 8);
  SimOut s = simulate(r.binary, refIsa(), in);
  const Node& conv = *b.conv;
  const auto want = referenceConv(c, in["x"], conv.input(1).node->payload(),
                                  conv.input(2).node->payload(), conv, b.OH, b.OW);
  EXPECT_EQ(mismatches(s.outputs["y"], want), 0u);
  expectInterpreterAndCpu(*b.g->f, in, "y", want, 2, c.name);
  std::printf("packed stem: %llu simulated cycles, estimate ratio %.3f\n",
              (unsigned long long)s.report.cycles, r.summary.cycles / double(s.report.cycles));
}

TEST(ConvOnNpu, StemInputAsPatchesByTheHost) {
  // The same stem with its input written by the host as each output pixel's 7 x 7 x 3
  // window (isa::Layout::Patches): a 1 x 1 convolution over 147 patch channels, 10 blocks
  // of 16 lanes (5 of 32) where packing needs 14 (7), no packing pass, and the codes are
  // those of the reference on both descriptions.
  const ConvCase c{"stem", 1, 3, 96, 96, 64, 7, 7, 2, 3, 3, 3, 3, 1, 1, "relu"};
  for (const isa::IsaDescription* d : {&refIsa(), &largeIsa()}) {
    SCOPED_TRACE(d->name());
    Built b = buildConv(c);
    CompileResult r = compile(*b.g->f, *d);
    EXPECT_EQ(r.summary.layers.at(0).tiling.rfind("host patches 147ch", 0), 0u)
        << formatSummary(r.summary);
    const isa::IoEntry& e = r.binary.io.at(0);
    ASSERT_EQ(e.layout, isa::Layout::Patches);
    EXPECT_EQ(e.patches, (isa::IoPatches{7, 7, 2, 2, 1, 1, 3, 3, 48, 48}));
    EXPECT_EQ(e.shape, (std::vector<int64_t>{1, 3, 96, 96}));
    EXPECT_EQ(e.size_bytes, uint64_t(48 * 48 * 160)); // 147 channels padded to 10 x 16 / 5 x 32
    auto in = randomInputs(r.binary, 9);
    SimOut s = simulate(r.binary, *d, in);
    const Node& conv = *b.conv;
    const auto want = referenceConv(c, in["x"], conv.input(1).node->payload(),
                                    conv.input(2).node->payload(), conv, b.OH, b.OW);
    EXPECT_EQ(mismatches(s.outputs["y"], want), 0u);
    std::printf("%s stem on patches: %llu simulated cycles, estimate ratio %.3f\n",
                d->name().c_str(), (unsigned long long)s.report.cycles,
                r.summary.cycles / double(s.report.cycles));
  }
}

TEST(ConvOnNpu, StemInputPackedByTheHost) {
  // The same stem with its input laid out packed by the host (isa::Layout::Packed, what
  // the compiler picks without patches): no packing pass, the I/O table says how
  // (docs/isa/assembly-binary.md, the .ember.io section), and the codes are those of the reference
  // on both descriptions.
  const ConvCase c{"stem", 1, 3, 96, 96, 64, 7, 7, 2, 3, 3, 3, 3, 1, 1, "relu"};
  // ember-v1 (16 lanes): 4 pixels of 3 channels per row, every other packed pixel (the
  // stride 2 and the kernel groups of 4 both even), 48 output columns read packed pixels
  // 0 .. (47 * 2 + 4) / 2 = 49. The 32-lane description: 7 pixels, one kernel group,
  // packed pixels 0 .. 47 * 2 = 94.
  const struct {
    const isa::IsaDescription& isa;
    isa::IoPacking want;
  } cases[] = {{refIsa(), {4, 2, 3, 50}}, {largeIsa(), {7, 1, 3, 95}}};
  CompileOptions noPatches;
  noPatches.hostPatches = false;
  for (const auto& k : cases) {
    Built b = buildConv(c);
    CompileResult r = compile(*b.g->f, k.isa, noPatches);
    SCOPED_TRACE(k.isa.name());
    EXPECT_EQ(r.summary.layers.at(0).tiling.rfind("host-packed", 0), 0u)
        << formatSummary(r.summary);
    const isa::IoEntry& e = r.binary.io.at(0);
    ASSERT_EQ(e.layout, isa::Layout::Packed);
    EXPECT_EQ(e.packing, k.want);
    EXPECT_EQ(e.shape, (std::vector<int64_t>{1, 3, 96, 96}));
    EXPECT_EQ(e.size_bytes, uint64_t(96 * k.want.width * k.isa.memory("act").lanes()));
    auto in = randomInputs(r.binary, 9);
    SimOut s = simulate(r.binary, k.isa, in);
    const Node& conv = *b.conv;
    const auto want = referenceConv(c, in["x"], conv.input(1).node->payload(),
                                    conv.input(2).node->payload(), conv, b.OH, b.OW);
    EXPECT_EQ(mismatches(s.outputs["y"], want), 0u);
  }
}

TEST(ConvOnNpu, EstimateWithinAQuarterOfSimulatedCycles) {
  const ConvCase c{"big", 1, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, "relu"};
  Built b = buildConv(c);
  CompileResult r = compile(*b.g->f, refIsa());
  auto in = randomInputs(r.binary, 5);
  SimOut s = simulate(r.binary, refIsa(), in);
  const double ratio = r.summary.cycles / double(s.report.cycles);
  std::printf("estimated %.0f, simulated %llu cycles (ratio %.3f), MAC utilisation %.1f%%\n",
              r.summary.cycles, (unsigned long long)s.report.cycles, ratio,
              100.0 * s.report.mac_utilization);
  EXPECT_GT(ratio, 0.75);
  EXPECT_LT(ratio, 1.25);
  const Node& conv = *b.conv;
  const auto want = referenceConv(c, in["x"], conv.input(1).node->payload(),
                                  conv.input(2).node->payload(), conv, b.OH, b.OW);
  EXPECT_EQ(mismatches(s.outputs["y"], want), 0u);
  expectInterpreterAndCpu(*b.g->f, in, "y", want, 1, c.name);
}

// Tiling by trial (docs/compiler/npu-layers.md): emitting the cost model's best candidates and
// keeping the fastest by the program estimate never loses to the first candidate alone,
// gains on layers where the closed-form price misjudges the tail's overlap, and is
// exact either way.
TEST(ConvOnNpu, TilingByTrialIsNeverSlowerAndExact) {
  const ConvCase cases[] = {{"expand", 1, 16, 56, 56, 96, 1, 1, 1, 0, 0, 0, 0, 1, 1, "clip"},
                            {"project", 1, 96, 28, 28, 24, 1, 1, 1, 0, 0, 0, 0, 1, 1, ""},
                            {"dw", 1, 144, 28, 28, 144, 3, 3, 1, 1, 1, 1, 1, 1, 144, "clip"},
                            {"conv3", 1, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, "relu"}};
  uint64_t gained = 0;
  for (const ConvCase& c : cases) {
    Built b = buildConv(c);
    const Node& conv = *b.conv;
    uint64_t cycles[2] = {};
    for (int trials : {1, 4}) {
      CompileOptions o;
      o.tilingTrials = trials;
      CompileResult r = compile(*b.g->f, refIsa(), o);
      auto in = randomInputs(r.binary, 7);
      SimOut s = simulate(r.binary, refIsa(), in);
      const auto want = referenceConv(c, in["x"], conv.input(1).node->payload(),
                                      conv.input(2).node->payload(), conv, b.OH, b.OW);
      EXPECT_EQ(mismatches(s.outputs["y"], want), 0u) << c.name << ", " << trials << " trials";
      cycles[trials == 4] = s.report.cycles;
      std::printf("%s, %d trial(s): %llu cycles (%s)\n", c.name, trials,
                  (unsigned long long)s.report.cycles, r.summary.layers.at(0).tiling.c_str());
    }
    EXPECT_LE(cycles[1], cycles[0]) << c.name;
    gained += cycles[1] < cycles[0];
  }
  EXPECT_GE(gained, 1u);
}

/// Instructions of semantic class `cls` in layer `i` of a compiled binary.
size_t countInLayer(const CompileResult& r, size_t i, isa::SemanticClass cls) {
  const isa::DebugRange& d = r.binary.debug.at(i);
  size_t n = 0;
  for (uint32_t k = d.first; k < d.first + d.count; ++k)
    n += r.binary.code.at(k).desc().cls->id == cls;
  return n;
}

TEST(CrossLayerResidency, TheDepthwiseResultStaysInSramForTheProjection) {
  // MobileNetV2's depthwise -> projection pair at 14x14: the depthwise result (one image)
  // is written to the top of the act SRAM and the 1x1 projection reads it there: no
  // dma.st in the first layer, and bit-exact against the interpreter either way.
  for (const isa::IsaDescription* isa : {&refIsa(), &largeIsa()}) {
    for (bool alsoOutput : {false, true}) {
      G g;
      NodeValue x = g.input("x", {1, 144, 14, 14}, 0.05f, -7);
      Attrs dw;
      dw.set("kernel_shape", std::vector<int64_t>{3, 3});
      dw.set("pads", std::vector<int64_t>{1, 1, 1, 1});
      dw.set("group", int64_t(144));
      NodeValue d =
          g.node(NodeKind::Conv, "dw", {x, g.weights("wd", {144, 1, 3, 3}, 0), g.bias("bd", 144)},
                 dw, {1, 144, 14, 14}, 0.08f, 3);
      Attrs pw;
      pw.set("kernel_shape", std::vector<int64_t>{1, 1});
      NodeValue y = g.node(NodeKind::Conv, "project",
                           {d, g.weights("wp", {48, 144, 1, 1}, 0), g.bias("bp", 48)}, pw,
                           {1, 48, 14, 14}, 0.1f, -2);
      g.output("y", y);
      if (alsoOutput) // a second reader (the graph output): the result must reach DRAM
        g.output("d", d);
      uint64_t cycles[2] = {};
      for (bool on : {false, true}) {
        CompileOptions o;
        o.crossLayerResidency = on;
        const CompileResult r = compile(*g.f, *isa, o);
        ASSERT_EQ(r.summary.layers.size(), 2u);
        const bool resident = on && !alsoOutput;
        const std::string& t0 = r.summary.layers[0].tiling;
        const std::string& t1 = r.summary.layers[1].tiling;
        EXPECT_EQ(t0.find("out-sram") != std::string::npos, resident) << isa->name() << ": " << t0;
        EXPECT_EQ(t1.find("in-sram") != std::string::npos, resident) << isa->name() << ": " << t1;
        EXPECT_EQ(countInLayer(r, 0, isa::SemanticClass::DmaStore) == 0, resident) << isa->name();
        auto in = randomInputs(r.binary, 11);
        SimOut s = simulate(r.binary, *isa, in);
        auto want = interpret(*g.f, in);
        EXPECT_EQ(mismatches(s.outputs["y"], want["y"]), 0u) << isa->name() << ", on " << on;
        cycles[on] = s.report.cycles;
        std::printf("[ residency %s on %s%s ] %llu cycles (%s | %s)\n", on ? "on" : "off",
                    isa->name().c_str(), alsoOutput ? ", result also an output" : "",
                    (unsigned long long)s.report.cycles, t0.c_str(), t1.c_str());
      }
      if (alsoOutput)
        EXPECT_EQ(cycles[1], cycles[0]) << isa->name();
      else
        EXPECT_LT(cycles[1], cycles[0]) << isa->name();
    }
  }
}

/// An inverted residual block without its Add, expand 1x1 (C -> E) -> depthwise 3x3 with
/// pads 1 -> project 1x1 (E -> C), at HxW; `k` suffixes the names.
NodeValue invertedResidual(G& g, NodeValue v, const std::string& k, int64_t C, int64_t E,
                           int64_t HW) {
  Attrs pw;
  pw.set("kernel_shape", std::vector<int64_t>{1, 1});
  Attrs dw;
  dw.set("kernel_shape", std::vector<int64_t>{3, 3});
  dw.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  dw.set("group", E);
  v = g.node(NodeKind::Conv, "expand" + k,
             {v, g.weights("we" + k, {E, C, 1, 1}, 0), g.bias("be" + k, E)}, pw, {1, E, HW, HW},
             0.06f, 9);
  v = g.node(NodeKind::Conv, "dw" + k,
             {v, g.weights("wd" + k, {E, 1, 3, 3}, 0), g.bias("bd" + k, E)}, dw, {1, E, HW, HW},
             0.08f, 3);
  return g.node(NodeKind::Conv, "project" + k,
                {v, g.weights("wp" + k, {C, E, 1, 1}, 0), g.bias("bp" + k, C)}, pw, {1, C, HW, HW},
                0.1f, -2);
}

TEST(CrossLayerResidency, InvertedResidualsStayInSramWithTheDepthwisePadding) {
  // Two inverted residual blocks without the Add (expand 1x1 -> depthwise 3x3, pads 1 ->
  // project 1x1, twice) at 7x7 on ember-v1-large: each result but the last is kept in the
  // act SRAM for the next layer, an expansion with a border of the zero point for the
  // depthwise layer's padding. A layer reads one region and writes another, at the top
  // or below the one it reads. Only the first layer loads activations from DRAM and only
  // the last stores them.
  G g;
  NodeValue v = g.input("x", {1, 32, 7, 7}, 0.05f, -7);
  for (int b = 0; b < 2; ++b)
    v = invertedResidual(g, v, std::to_string(b), 32, 192, 7);
  g.output("y", v);
  uint64_t cycles[2] = {};
  for (bool on : {false, true}) {
    CompileOptions o;
    o.crossLayerResidency = on;
    const CompileResult r = compile(*g.f, largeIsa(), o);
    ASSERT_EQ(r.summary.layers.size(), 6u);
    for (size_t i = 0; i < 6; ++i) {
      const std::string& tiling = r.summary.layers[i].tiling;
      EXPECT_EQ(tiling.find("in-sram") != std::string::npos, on && i > 0) << i << ": " << tiling;
      EXPECT_EQ(tiling.find("out-sram") != std::string::npos, on && i < 5) << i << ": " << tiling;
      EXPECT_EQ(countInLayer(r, i, isa::SemanticClass::DmaStore) == 0, on && i < 5) << i;
    }
    auto in = randomInputs(r.binary, 5);
    SimOut s = simulate(r.binary, largeIsa(), in);
    EXPECT_EQ(mismatches(s.outputs["y"], interpret(*g.f, in)["y"]), 0u) << "on " << on;
    cycles[on] = s.report.cycles;
    std::printf("[ residency %s ] %llu cycles\n", on ? "on" : "off",
                (unsigned long long)s.report.cycles);
  }
  EXPECT_LT(cycles[1], cycles[0]);
}

TEST(CrossLayerResidency, ADepthwiseReaderGetsLinesThatSpreadItsTapsOverTheBanks) {
  // An expansion at 14x14 kept in SRAM for a 3x3 depthwise layer on ember-v1-large (8 act
  // banks): with a border of 1 its lines would be 16 rows apart, the window's 9 taps in
  // 3 banks (3 cycles an output, rule DW1); 2 more columns of the zero point make them
  // 18 apart, at most 2 taps in a bank (2 cycles). Bit-exact against the interpreter.
  G g;
  NodeValue x = g.input("x", {1, 32, 14, 14}, 0.05f, -7);
  NodeValue y = invertedResidual(g, x, "", 32, 192, 14);
  g.output("y", y);
  const CompileResult r = compile(*g.f, largeIsa());
  ASSERT_EQ(r.summary.layers.size(), 3u);
  EXPECT_NE(r.summary.layers[1].tiling.find("in-sram"), std::string::npos)
      << r.summary.layers[1].tiling;
  const isa::DebugRange& l = r.binary.debug.at(1);
  size_t dwconvs = 0;
  for (uint32_t k = l.first; k < l.first + l.count; ++k)
    if (r.binary.code.at(k).desc().cls->id == isa::SemanticClass::Depthwise) {
      EXPECT_EQ(r.binary.code.at(k).get(isa::role::kTapS1), 18);
      ++dwconvs;
    }
  EXPECT_GT(dwconvs, 0u);
  auto in = randomInputs(r.binary, 13);
  SimOut s = simulate(r.binary, largeIsa(), in);
  EXPECT_EQ(mismatches(s.outputs["y"], interpret(*g.f, in)["y"]), 0u);
}

TEST(GemmOnNpu, BitExactAgainstReference) {
  // Variants 4 and 5: 600 inputs on a weight SRAM of two blocks (partial sums).
  const isa::IsaDescription tiny = refIsaWithRows({{"weight", 2}});
  for (int variant = 0; variant < 6; ++variant) {
    const bool large = variant & 1, transB = variant & 2, small = variant >= 4;
    const isa::IsaDescription& isa = small ? tiny : large ? largeIsa() : refIsa();
    G g;
    const int64_t M = 3, C = small ? 600 : 40, K = 50;
    NodeValue a = g.input("a", {M, C}, 0.04f, 3);
    NodeValue w = transB ? g.weights("B", {K, C}, 0) : g.weights("B", {C, K}, 1);
    NodeValue bias = g.bias("c", K);
    Attrs at;
    FusedActivation fa;
    fa.kind = FusedActivation::Kind::Relu;
    fa.writeTo(at);
    if (transB)
      at.set("transB", int64_t(1));
    NodeValue y = g.node(NodeKind::Gemm, "fc", {a, w, bias}, at, {M, K}, 0.1f, -3);
    g.output("y", y);
    CompileResult r = compile(*g.f, isa);
    auto in = randomInputs(r.binary, 11);
    SimOut s = simulate(r.binary, isa, in);
    const auto& xq = a.type().quant;
    const auto& wq = w.type().quant;
    const auto& yq = y.type().quant;
    const quant::Bounds bd = quant::activationBounds(*y.node, yq);
    const int8_t* wp = w.node->payload().data<int8_t>();
    std::vector<int8_t> want(size_t(M * K));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k) {
        int64_t acc = bias.node->payload().data<int32_t>()[k];
        for (int64_t c = 0; c < C; ++c)
          acc += (int64_t(in["a"][size_t(m * C + c)]) - xq.zeroPoints[0]) *
                 (transB ? wp[k * C + c] : wp[c * K + k]);
        want[size_t(m * K + k)] = quant::requantize(
            int32_t(acc),
            quant::productMultiplier(xq.scales[0], wq.scales[size_t(k)], yq.scales[0]),
            yq.zeroPoints[0], bd.lo, bd.hi);
      }
    EXPECT_EQ(mismatches(s.outputs["y"], want), 0u) << isa.name() << " transB " << transB;
    expectInterpreterAndCpu(*g.f, in, "y", want, transB ? 2 : 1,
                            std::string("gemm on ") + isa.name() + (transB ? ", transB" : ""));
  }
}

TEST(NpuRefusal, APatchOnlyConvolutionWhoseInputHasAnotherReaderIsNotPlaced) {
  // A ViT's 16 x 16 stride-16 patch embedding runs only on the host's patches of its
  // input, which the host writes only when the convolution is the input's one reader: with
  // a second reader the convolution is refused at placement (it goes to the host) rather
  // than failing the compile.
  const ConvCase c{"patchify", 1, 3, 32, 48, 40, 16, 16, 16, 0, 0, 0, 0, 1, 1, ""};
  Built b = buildConv(c);
  EXPECT_TRUE(unsupportedNodes(*b.g->f, refIsa()).empty());
  b.g->output("z", b.conv->input(0)); // the quantized input is an output too
  const auto bad = unsupportedNodes(*b.g->f, refIsa());
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("Conv"), std::string::npos) << bad[0];
  EXPECT_NE(bad[0].find("here the input has 2 readers"), std::string::npos) << bad[0];
}

TEST(NpuRefusal, ListsEveryUnsupportedNodeInOneError) {
  G g;
  NodeValue x = g.input("x", {1, 16, 4, 4}, 0.1f, 0);
  NodeValue d = g.f->create(NodeKind::DequantizeLinear, "mid_dq", {x})->result();
  NodeValue sm = g.f->create(NodeKind::Softmax, "softmax", {d})->result();
  NodeValue e = g.f->create(NodeKind::Exp, "exp", {sm})->result();
  NodeValue q =
      g.f->create(NodeKind::QuantizeLinear, "requant_q", {e}, {},
                  std::vector<Type>{Type(ElemKind::Int8, {1, 16, 4, 4}, perTensor(0.01f, 0))})
          ->result();
  g.output("y", q);
  try {
    compile(*g.f, refIsa());
    FAIL() << "expected an error";
  } catch (const Error& err) {
    const std::string msg = err.what();
    for (const char* want : {"Softmax 'softmax'", "Exp 'exp'", "DequantizeLinear 'mid_dq'",
                             "QuantizeLinear 'requant_q'"})
      EXPECT_NE(msg.find(want), std::string::npos) << want << " in\n" << msg;
  }
  EXPECT_GE(unsupportedNodes(*g.f, refIsa()).size(), 4u);
}

} // namespace
} // namespace ember::npu::test
