// 1-D convolution on the NPU (pass conv1d-to-conv2d): a channels-last sequence x [1, T, C]
// enters the convolutions' NCHWc form by a channel-keeping Transpose of its rows ([T, C, 1,
// 1] -> [1, C, 1, T], a strided DMA row permutation), runs a depthwise 1 x 7 and a pointwise
// convolution on [1, C, 1, T], and leaves by the inverse permutation. Compared bit for bit
// with a plain-loop 1-D reference written here from docs/numerics.md section 4.1, which the
// int8 interpreter and (where built) the cpu backend must give as well; the cycle estimate
// of the program (the description's closed-form timing) against the simulated cycles.
#include "NpuTestUtil.h"

#include "ember/quantization/Numerics.h"

namespace ember::npu::test {
namespace {

using ember::test::ints;

struct SeqCase {
  const char* name;
  int64_t T, C, K, KW;
};

struct SeqGraph {
  std::unique_ptr<G> g;
  const Node *dw = nullptr, *pw = nullptr;
};

SeqGraph build(const SeqCase& c) {
  SeqGraph s;
  s.g = std::make_unique<G>();
  G& g = *s.g;
  const int64_t T = c.T, C = c.C, K = c.K, pad = c.KW / 2;
  NodeValue x = g.input("x", {1, T, C}, 0.05f, -7);
  NodeValue rows = g.node(NodeKind::Reshape, "rows", {x}, ints({{"shape", {T, C, 1, 1}}}),
                          {T, C, 1, 1}, 0.05f, -7);
  NodeValue img = g.node(NodeKind::Transpose, "to_nchw", {rows}, ints({{"perm", {2, 1, 3, 0}}}),
                         {1, C, 1, T}, 0.05f, -7);
  Attrs dwa = ints({{"kernel_shape", {1, c.KW}}, {"pads", {0, pad, 0, pad}}});
  dwa.set("group", C);
  NodeValue dw =
      g.node(NodeKind::Conv, "dw", {img, g.weights("dw.w", {C, 1, 1, c.KW}, 0), g.bias("dw.b", C)},
             dwa, {1, C, 1, T}, 0.08f, 5);
  NodeValue pw =
      g.node(NodeKind::Conv, "pw", {dw, g.weights("pw.w", {K, C, 1, 1}, 0), g.bias("pw.b", K)},
             ints({{"kernel_shape", {1, 1}}}), {1, K, 1, T}, 0.1f, -3);
  NodeValue back = g.node(NodeKind::Transpose, "from_nchw", {pw}, ints({{"perm", {3, 1, 0, 2}}}),
                          {T, K, 1, 1}, 0.1f, -3);
  g.output("y", g.node(NodeKind::Reshape, "seq", {back}, ints({{"shape", {1, T, K}}}), {1, T, K},
                       0.1f, -3));
  s.dw = dw.node;
  s.pw = pw.node;
  return s;
}

/// y[t][k] of a 1-D convolution over the sequence x[t][c] (zero padding), requantized.
std::vector<int8_t> conv1dRef(const Node& conv, const std::vector<int8_t>& x, int64_t T, int64_t C,
                              int64_t K, int64_t KW, bool depthwise) {
  const auto& xq = conv.input(0).type().quant;
  const auto& yq = conv.resultType(0).quant;
  const Tensor& w = conv.input(1).node->payload();
  const Tensor& b = conv.input(2).node->payload();
  const int64_t pad = KW / 2, Cg = depthwise ? 1 : C;
  std::vector<int8_t> y(size_t(T * K));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t k = 0; k < K; ++k) {
      int64_t acc = b.data<int32_t>()[k];
      for (int64_t ci = 0; ci < Cg; ++ci)
        for (int64_t j = 0; j < KW; ++j) {
          const int64_t ti = t + j - pad, ch = depthwise ? k : ci;
          if (ti >= 0 && ti < T)
            acc += (int64_t(x[size_t(ti * C + ch)]) - xq.zeroPoints[0]) *
                   w.data<int8_t>()[(k * Cg + ci) * KW + j];
        }
      const quant::Multiplier m =
          quant::productMultiplier(xq.scales[0], w.type().quant.scales[size_t(k)], yq.scales[0]);
      y[size_t(t * K + k)] =
          quant::requantize(int32_t(uint32_t(acc)), m, yq.zeroPoints[0], -128, 127);
    }
  return y;
}

class SeqConvOnNpu : public ::testing::TestWithParam<std::tuple<SeqCase, bool>> {};

TEST_P(SeqConvOnNpu, BitExactAgainstA1dReference) {
  const SeqCase c = std::get<0>(GetParam());
  const bool large = std::get<1>(GetParam());
  const isa::IsaDescription& isa = large ? largeIsa() : refIsa();
  SeqGraph s = build(c);
  CompileResult r = compile(*s.g->f, isa);
  auto in = randomInputs(r.binary, 3);
  SimOut o = simulate(r.binary, isa, in);
  // The reference: the sequence [T, C] (row-major [1, T, C] is the input's codes).
  const auto mid = conv1dRef(*s.dw, in["x"], c.T, c.C, c.C, c.KW, true); // [t][c]
  const auto want = conv1dRef(*s.pw, mid, c.T, c.C, c.K, 1, false);
  EXPECT_EQ(mismatches(o.outputs["y"], want), 0u) << formatSummary(r.summary);
  const auto got = interpretAndCpu(*s.g->f, in, 1, c.name);
  EXPECT_EQ(mismatches(got.at("y"), want), 0u) << "int8 interpreter vs reference";
  const double ratio = r.summary.cycles / double(o.report.cycles);
  std::printf("[ %s on %s ] estimated %.0f / simulated %llu cycles = %.3f\n", c.name,
              isa.name().c_str(), r.summary.cycles, (unsigned long long)o.report.cycles, ratio);
  EXPECT_GT(ratio, 0.75);
  EXPECT_LT(ratio, 1.25);
}

const SeqCase kSeqCases[] = {
    {"one_block", 24, 16, 16, 7},    // the permutations move no row
    {"three_blocks", 40, 40, 24, 7}, // rows gathered / scattered CB = 3 apart
    {"long_k5", 96, 32, 48, 5},      // 96 rows per line, two channel blocks
};

INSTANTIATE_TEST_SUITE_P(Shapes, SeqConvOnNpu,
                         ::testing::Combine(::testing::ValuesIn(kSeqCases), ::testing::Bool()),
                         [](const auto& i) {
                           return std::string(std::get<0>(i.param).name) +
                                  (std::get<1>(i.param) ? "_large" : "_ref");
                         });

} // namespace
} // namespace ember::npu::test
