// PRelu on the NPU (docs/numerics.md section 4.12): an int8 PRelu with a float slope per
// channel (negative and positive slopes, slopes above 1, channel counts that are not a
// multiple of the NCHWc block, several images, rank 2 after a Gemm, one shared slope)
// compiled for ember-v1 and ember-v1-large, simulated, and compared bit for bit with a
// reference written here from section 4.12, which the int8 interpreter and (where built)
// the cpu backend must give as well. The dequantized result is also checked against the
// float PRelu (within half a step where it does not saturate), and the cycle estimate
// against the simulated cycles.
#include "NpuTestUtil.h"

#include "ember/quantization/Numerics.h"

#include <cmath>

namespace ember::npu::test {
namespace {

struct PReluCase {
  const char* name;
  Shape dims, slopeDims;
  float lo, hi; ///< Range of the random slopes.
};

/// y of section 4.12 for input codes x (row-major `dims`), channel axis 1.
std::vector<int8_t> preluRef(const Node& n, const std::vector<int8_t>& x) {
  const QuantParams &xq = n.input(0).type().quant, &yq = n.resultType(0).quant;
  const Shape& d = n.input(0).dims();
  const std::vector<float> a = quant::preluChannelSlopes(d, n.input(1).node->payload());
  const quant::PReluMultipliers m = quant::preluMultipliers(xq.scales[0], yq.scales[0], a);
  const int64_t C = d[1], inner = numElements(d) / (d[0] * C);
  std::vector<int8_t> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t v = int64_t(x[i]) - xq.zeroPoints[0], c = int64_t(i) / inner % C;
    const int64_t t = (v > 0 ? v * m.Mp : v * m.Mn[size_t(c)]);
    const int64_t r = ((t + (int64_t(1) << (m.S - 1))) >> m.S) + yq.zeroPoints[0];
    y[i] = static_cast<int8_t>(std::min<int64_t>(127, std::max<int64_t>(-128, r)));
  }
  return y;
}

/// Elements whose dequantized result is more than half a step (and a little for the
/// multipliers' rounding) from the float PRelu, where the result does not saturate.
size_t offFloat(const Node& n, const std::vector<int8_t>& x, const std::vector<int8_t>& y) {
  const QuantParams &xq = n.input(0).type().quant, &yq = n.resultType(0).quant;
  const Shape& d = n.input(0).dims();
  const std::vector<float> a = quant::preluChannelSlopes(d, n.input(1).node->payload());
  const int64_t C = d[1], inner = numElements(d) / (d[0] * C);
  size_t off = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double r = double(xq.scales[0]) * (x[i] - xq.zeroPoints[0]);
    const double want = r < 0 ? double(a[size_t(int64_t(i) / inner % C)]) * r : r;
    if (y[i] == -128 || y[i] == 127)
      continue;
    off += std::fabs(double(yq.scales[0]) * (y[i] - yq.zeroPoints[0]) - want) >
           0.51 * double(yq.scales[0]);
  }
  return off;
}

class PReluOnNpu : public ::testing::TestWithParam<std::tuple<PReluCase, bool>> {};

TEST_P(PReluOnNpu, BitExactAgainstTheSection412Reference) {
  const PReluCase c = std::get<0>(GetParam());
  const bool large = std::get<1>(GetParam());
  const isa::IsaDescription& isa = large ? largeIsa() : refIsa();
  G g;
  NodeValue x = g.input("x", c.dims, 0.05f, -7);
  NodeValue p = g.node(NodeKind::PRelu, "prelu", {x, g.constant("slope", c.slopeDims, c.lo, c.hi)},
                       {}, c.dims, 0.04f, -20);
  g.output("y", p);
  CompileResult r = compile(*g.f, isa);
  ASSERT_EQ(r.summary.layers.size(), 1u);
  EXPECT_EQ(r.summary.layers[0].kind, "PRelu");
  auto in = randomInputs(r.binary, 5);
  SimOut o = simulate(r.binary, isa, in);
  const auto want = preluRef(*p.node, in["x"]);
  EXPECT_EQ(mismatches(o.outputs["y"], want), 0u) << formatSummary(r.summary);
  const auto got = interpretAndCpu(*g.f, in, 2, c.name);
  EXPECT_EQ(mismatches(got.at("y"), want), 0u) << "int8 interpreter vs reference";
  EXPECT_EQ(offFloat(*p.node, in["x"], want), 0u) << "section 4.12 vs the float PRelu";
  const double ratio = r.summary.cycles / double(o.report.cycles);
  std::printf("[ %s on %s ] estimated %.0f / simulated %llu cycles = %.3f\n", c.name,
              isa.name().c_str(), r.summary.cycles, (unsigned long long)o.report.cycles, ratio);
  EXPECT_GT(ratio, 0.75);
  EXPECT_LT(ratio, 1.25);
}

const PReluCase kPReluCases[] = {
    {"c12", {1, 12, 5, 5}, {12, 1, 1}, -0.6f, 0.9f},            // one partial block
    {"c40_two_images", {2, 40, 7, 7}, {40, 1, 1}, -1.5f, 2.5f}, // three blocks, slopes > 1
    {"c20_rank4_slope", {1, 20, 9, 3}, {1, 20, 1, 1}, 0.f, 0.3f},
    {"gemm_c37", {3, 37}, {37}, -0.5f, 0.5f}, // rank 2: one row per (image, block)
    {"shared_slope", {1, 20, 6, 6}, {1}, 0.2f, 0.2f},
};

INSTANTIATE_TEST_SUITE_P(Shapes, PReluOnNpu,
                         ::testing::Combine(::testing::ValuesIn(kPReluCases), ::testing::Bool()),
                         [](const auto& i) {
                           return std::string(std::get<0>(i.param).name) +
                                  (std::get<1>(i.param) ? "_large" : "_ref");
                         });

/// The message of compiling `f` for ember-v1, which must refuse it.
std::string refusal(const Function& f) {
  try {
    compile(f, refIsa());
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "compiled";
  return "";
}

// A slope that varies along another axis than the channels, or a rank-3 value (channels
// on the last axis in NCHWc), stays off the NPU, with the reason.
TEST(PReluOnNpu, RefusesSlopesNotPerChannel) {
  G g;
  NodeValue x = g.input("x", {1, 8, 4, 4}, 0.05f, 0);
  g.output("y", g.node(NodeKind::PRelu, "prelu", {x, g.constant("slope", {1, 1, 4})}, {},
                       {1, 8, 4, 4}, 0.05f, 0));
  EXPECT_NE(refusal(*g.f).find("varies along the channel axis only"), std::string::npos)
      << refusal(*g.f);
  G h;
  NodeValue s = h.input("s", {2, 8, 5}, 0.05f, 0);
  h.output("y", h.node(NodeKind::PRelu, "seq", {s, h.constant("slope", {8, 1})}, {}, {2, 8, 5},
                       0.05f, 0));
  EXPECT_NE(refusal(*h.f).find("rank-3"), std::string::npos) << refusal(*h.f);
}

} // namespace
} // namespace ember::npu::test
