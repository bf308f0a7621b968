// ChannelLayerNormalization on the NPU (docs/numerics.md section 4.11, the line being one
// pixel's channels): int8 channel LayerNorms of images (channel counts that are not a
// multiple of the NCHWc block, several images, one pixel, a large image) compiled for
// ember-v1 and ember-v1-large, simulated, and compared bit for bit with a reference that
// gathers each pixel's channels into a row and runs section 4.11's contiguous row (the
// LayerNormalization line the existing tests check); the int8 interpreter and (where built)
// the cpu backend must give the same codes. Then a ConvNeXt-style block built as PyTorch
// exports it (depthwise 7x7 Conv, Transpose to channels-last, LayerNorm, Linear, GELU,
// Linear, Transpose back, residual Add), quantized by the compile driver (its pipeline's
// sink-permutation makes the channel LayerNorm): interp = cpu = sim bit for bit on both
// descriptions, with no Transpose left.
#include "NpuTestUtil.h"

#include "ember/driver/Driver.h"
#include "ember/graph/AttrViews.h"
#include "ember/quantization/IntegerLines.h"
#include "ember/quantization/NormNumerics.h"

namespace ember::npu::test {
namespace {

struct LnCase {
  const char* name;
  Shape dims;
  bool bias;
};

/// Section 4.11 on each pixel's channels of x (row-major NCHW codes): the channels are
/// gathered into a contiguous row, normalised by the contiguous line, scattered back.
std::vector<int8_t> channelLnRef(const Node& n, const std::vector<int8_t>& x) {
  const QuantParams &xq = n.input(0).type().quant, &yq = n.resultType(0).quant;
  const Shape& d = n.input(0).dims();
  const int64_t C = d[1], inner = numElements(d) / (d[0] * C);
  const Tensor& g = n.input(1).node->payload();
  const Tensor* b = n.optionalInput(2) ? &n.input(2).node->payload() : nullptr;
  const quant::LayerNormTables t = quant::layerNormTables(
      xq.scales[0], yq.scales[0], C, normOf(n.attrs()).epsilon, g.data<float>(), size_t(g.size()),
      b ? b->data<float>() : nullptr, b ? size_t(b->size()) : 0);
  std::vector<int8_t> y(x.size()), row(static_cast<size_t>(C)), out(static_cast<size_t>(C));
  for (int64_t img = 0; img < d[0]; ++img)
    for (int64_t p = 0; p < inner; ++p) {
      for (int64_t c = 0; c < C; ++c)
        row[size_t(c)] = x[size_t((img * C + c) * inner + p)];
      qline::layerNormLine(row.data(), out.data(), C, xq.zeroPoints[0], t.E, t.M.data(), t.S.data(),
                           t.B.data(), yq.zeroPoints[0]);
      for (int64_t c = 0; c < C; ++c)
        y[size_t((img * C + c) * inner + p)] = out[size_t(c)];
    }
  return y;
}

/// Compiles a ChannelLayerNormalization of case `c` for `isa`, simulates it and compares
/// the simulator, the int8 interpreter and the cpu backend with channelLnRef.
void expectBitExact(const LnCase& c, const isa::IsaDescription& isa, int cpuThreads) {
  G g;
  const int64_t C = c.dims[1];
  NodeValue x = g.input("x", c.dims, 0.06f, -5);
  std::vector<NodeValue> in = {x, g.constant("gamma", {C}, -1.5f, 2.f)};
  if (c.bias)
    in.push_back(g.constant("beta", {C}, -0.5f, 0.5f));
  Attrs a;
  a.set("epsilon", 1e-5);
  NodeValue y = g.node(NodeKind::ChannelLayerNormalization, "ln", in, a, c.dims, 0.03f, -2);
  g.output("y", y);
  CompileResult r = compile(*g.f, isa);
  auto codes = randomInputs(r.binary, 5);
  SimOut s = simulate(r.binary, isa, codes);
  const auto want = channelLnRef(*y.node, codes["x"]);
  EXPECT_EQ(mismatches(s.outputs["y"], want), 0u) << formatSummary(r.summary);
  const auto got = interpretAndCpu(*g.f, codes, cpuThreads, c.name);
  EXPECT_EQ(mismatches(got.at("y"), want), 0u) << "int8 interpreter vs reference";
  const double ratio = r.summary.cycles / double(s.report.cycles);
  std::printf("[ %s on %s ] estimated %.0f / simulated %llu cycles = %.3f\n", c.name,
              isa.name().c_str(), r.summary.cycles, (unsigned long long)s.report.cycles, ratio);
}

class ChannelLayerNormOnNpu : public ::testing::TestWithParam<std::tuple<LnCase, bool>> {};

TEST_P(ChannelLayerNormOnNpu, BitExactAgainstTheGatheredRow) {
  const bool large = std::get<1>(GetParam());
  expectBitExact(std::get<0>(GetParam()), large ? largeIsa() : refIsa(), large ? 2 : 1);
}

TEST(ChannelLayerNormOnNpu, RunsOfPixelsWhenAnImageDoesNotFitATile) {
  // Two images of 3 blocks x 99 pixels (297 rows) on act SRAMs of 512 rows (runs of 42
  // pixels, double-buffered), 64 rows (runs of 5) and 8 rows (single-buffered runs of one
  // pixel: one pixel's 3 blocks fit once only).
  const LnCase c = {"runs_of_pixels", {2, 40, 9, 11}, true};
  for (int64_t act : {512, 64, 8}) {
    SCOPED_TRACE("act rows " + std::to_string(act));
    expectBitExact(c, refIsaWithRows({{"act", act}}), 1);
  }
}

const LnCase kLnCases[] = {
    {"blocks_and_a_part", {1, 40, 5, 6}, true}, // 2.5 blocks on 16 lanes, 1.25 on 32
    {"two_images", {2, 24, 3, 3}, false},
    {"one_pixel", {3, 20, 1, 1}, true},
    {"convnext_stage", {1, 96, 14, 14}, true}, // ConvNeXt-T's channels, 196 pixels
};

INSTANTIATE_TEST_SUITE_P(Shapes, ChannelLayerNormOnNpu,
                         ::testing::Combine(::testing::ValuesIn(kLnCases), ::testing::Bool()),
                         [](const auto& i) {
                           return std::string(std::get<0>(i.param).name) +
                                  (std::get<1>(i.param) ? "_large" : "_ref");
                         });

/// A ConvNeXt block as torchvision exports it (opset 17), float: depthwise 7x7 Conv,
/// Transpose to channels-last, LayerNormalization over C, Linear C -> 4C, GELU, Linear
/// 4C -> C, Transpose back, residual Add.
void convNextBlock(ember::test::GraphBuilder& g, Shape dims) {
  using ember::test::ints;
  const int64_t c = dims[1];
  NodeValue x = g.input("x", dims);
  Attrs dwa = ints({{"pads", {3, 3, 3, 3}}});
  dwa.set("group", c);
  NodeValue dw =
      g.node(NodeKind::Conv, "dwconv",
             {x, g.constant("dw.w", {c, 1, 7, 7}, -0.2f, 0.2f), g.constant("dw.b", {c})}, dwa);
  NodeValue t = g.node(NodeKind::Transpose, "to_last", {dw}, ints({{"perm", {0, 2, 3, 1}}}));
  Attrs la;
  la.set("axis", int64_t(-1));
  la.set("epsilon", 1e-6);
  NodeValue ln = g.node(NodeKind::LayerNormalization, "norm",
                        {t, g.constant("ln.s", {c}, 0.5f, 1.5f), g.constant("ln.b", {c})}, la);
  auto linear = [&](const std::string& p, NodeValue v, int64_t k, int64_t n) {
    NodeValue m = g.node(NodeKind::MatMul, p + ".matmul", {v, g.constant(p + ".w", {k, n})});
    return g.node(NodeKind::Add, p + ".add", {g.constant(p + ".b", {n}, -0.1f, 0.1f), m});
  };
  NodeValue h = g.node(NodeKind::Gelu, "gelu", {linear("fc1", ln, c, 4 * c)});
  NodeValue back = g.node(NodeKind::Transpose, "to_first", {linear("fc2", h, 4 * c, c)},
                          ints({{"perm", {0, 3, 1, 2}}}));
  g.output("y", g.node(NodeKind::Add, "residual", {back, x}));
}

class ConvNextBlockOnNpu : public ::testing::TestWithParam<bool> {};

TEST_P(ConvNextBlockOnNpu, InterpCpuAndSimAgreeBitForBit) {
  const bool large = GetParam();
  const isa::IsaDescription& isa = large ? largeIsa() : refIsa();
  for (const Shape& dims : {Shape{1, 40, 7, 7}, Shape{2, 32, 6, 5}}) {
    SCOPED_TRACE(shapeToString(dims));
    ember::test::GraphBuilder g(42);
    convNextBlock(g, dims);
    driver::QuantizeRequest q;
    q.calibrate = "random:4";
    Function* f = driver::quantizeFunction(*g.f, q);
    size_t channelNorms = 0;
    for (const auto& n : f->nodes()) {
      EXPECT_NE(n->kind(), NodeKind::Transpose) << n->name();
      EXPECT_NE(n->kind(), NodeKind::LayerNormalization) << n->name();
      if (n->kind() == NodeKind::ChannelLayerNormalization) {
        ++channelNorms;
        EXPECT_EQ(n->resultType().kind, ElemKind::Int8) << n->name();
      }
    }
    EXPECT_EQ(channelNorms, 1u);
    CompileResult r = compile(*f, isa);
    auto codes = randomInputs(r.binary, 7);
    SimOut s = simulate(r.binary, isa, codes);
    const auto want = interpretAndCpu(*f, codes, large ? 2 : 1, "convnext block");
    for (const auto& kv : want)
      EXPECT_EQ(mismatches(s.outputs[kv.first], kv.second), 0u) << kv.first << "\n"
                                                                << formatSummary(r.summary);
    std::printf("[ convnext block %s on %s ] estimated %.0f / simulated %llu cycles\n",
                shapeToString(dims).c_str(), isa.name().c_str(), r.summary.cycles,
                (unsigned long long)s.report.cycles);
  }
}

INSTANTIATE_TEST_SUITE_P(Descriptions, ConvNextBlockOnNpu, ::testing::Bool(),
                         [](const auto& i) { return i.param ? "large" : "ref"; });

} // namespace
} // namespace ember::npu::test
