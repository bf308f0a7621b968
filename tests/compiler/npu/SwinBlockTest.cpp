// A Swin-style model on the NPU (tests/compiler/common/SwinBlock.h: a patch embedding's
// NCHW image to [1, H, W, C] tokens, a plain and a shifted window block, patch merging,
// back to NCHW), quantized by the compile driver, whose pipeline's collapse-batch-axes and
// moves-to-gather leave values of rank <= 4 and Gathers of rows: it compiles whole for the
// NPU (every node a layer), and the simulator, the int8 interpreter and (where built) the
// cpu backend agree bit for bit on ember-v1 and ember-v1-large (heads of 32 channels: whole
// lane blocks on both, 16 and 32 lanes). A Gather of rows alone (runs, strided runs,
// repeats, a reversal; a merge of heads, which is scattered) is checked against the rows it
// names.
#include "SwinBlock.h"
#include "NpuTestUtil.h"

#include "ember/driver/Driver.h"

namespace ember::npu::test {
namespace {

class SwinBlockOnNpu : public ::testing::TestWithParam<bool> {};

TEST_P(SwinBlockOnNpu, InterpCpuAndSimAgreeBitForBit) {
  const bool large = GetParam();
  const isa::IsaDescription& isa = large ? largeIsa() : refIsa();
  ember::test::GraphBuilder g(7);
  ember::test::swin::buildSwin(g, ember::test::swin::Swin{8, 8, 64, 4, 2, 2});
  driver::QuantizeRequest q;
  q.calibrate = "random:2";
  Function* f = driver::quantizeFunction(*g.f, q);
  size_t gathers = 0;
  for (const auto& n : f->nodes()) {
    EXPECT_LE(n->resultType().dims.size(), 4u) << n->name();
    EXPECT_NE(n->kind(), NodeKind::Slice) << n->name();
    gathers += n->kind() == NodeKind::Gather;
  }
  EXPECT_GE(gathers, 12u);
  CompileResult r = compile(*f, isa); // whole: an unsupported node would throw
  auto codes = randomInputs(r.binary, 3);
  SimOut s = simulate(r.binary, isa, codes);
  const auto want = interpretAndCpu(*f, codes, 1, "swin block");
  for (const auto& kv : want)
    EXPECT_EQ(mismatches(s.outputs[kv.first], kv.second), 0u) << kv.first << "\n"
                                                              << formatSummary(r.summary);
  std::printf("[ swin blocks on %s ] estimated %.0f / simulated %llu cycles\n", isa.name().c_str(),
              r.summary.cycles, (unsigned long long)s.report.cycles);
}

INSTANTIATE_TEST_SUITE_P(Descriptions, SwinBlockOnNpu, ::testing::Bool(),
                         [](const auto& i) { return i.param ? "large" : "ref"; });

/// Gathers rows `idx` of x [R, 48] (3 channel blocks on ember-v1, 2 on -large) on the NPU
/// and checks the simulator, the int8 interpreter and cpu against the rows named; the
/// compile summary must name `form` (gather or scatter).
void expectRowGather(int64_t R, const std::vector<int64_t>& idx, const std::string& form) {
  for (const isa::IsaDescription* isa : {&refIsa(), &largeIsa()}) {
    G g;
    NodeValue x = g.input("x", {R, 48}, 0.05f, 3);
    NodeValue ix = g.constant("idx", Tensor::fromVector<int64_t>({int64_t(idx.size())}, idx));
    Attrs a;
    a.set("axis", int64_t(0));
    g.output("y",
             g.node(NodeKind::Gather, "rows", {x, ix}, a, {int64_t(idx.size()), 48}, 0.05f, 3));
    CompileResult r = compile(*g.f, *isa);
    EXPECT_NE(formatSummary(r.summary).find("(" + form + " of rows)"), std::string::npos)
        << formatSummary(r.summary);
    auto codes = randomInputs(r.binary, 11);
    SimOut s = simulate(r.binary, *isa, codes);
    std::vector<int8_t> want;
    for (int64_t i : idx) {
      const int64_t row = i < 0 ? i + R : i;
      want.insert(want.end(), codes["x"].begin() + row * 48, codes["x"].begin() + row * 48 + 48);
    }
    EXPECT_EQ(mismatches(s.outputs["y"], want), 0u) << formatSummary(r.summary);
    EXPECT_EQ(mismatches(interpretAndCpu(*g.f, codes, 1, "row gather").at("y"), want), 0u);
  }
}

TEST(RowGatherOnNpu, EverySelectedRowMovesWhole) {
  // A run, runs 5 apart, a repeat, a reversal and the last row (repeats: gathered).
  std::vector<int64_t> idx;
  for (int64_t i = 3; i < 9; ++i)
    idx.push_back(i);
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 3; ++i)
      idx.push_back(10 + 5 * k + i);
  idx.insert(idx.end(), {7, 7, 39, 2, 1, 0, -1});
  expectRowGather(40, idx, "gather");
}

TEST(RowGatherOnNpu, AMergeOfHeadsIsScattered) {
  // [2 windows, 3 heads, 12 tokens] rows to [2, 12, 3]: the result's runs are single rows
  // (24 gathered streams), x's runs of 12 land 3 rows apart (6 runs, one stream per block).
  std::vector<int64_t> idx;
  for (int64_t w = 0; w < 2; ++w)
    for (int64_t t = 0; t < 12; ++t)
      for (int64_t h = 0; h < 3; ++h)
        idx.push_back((w * 3 + h) * 12 + t);
  expectRowGather(72, idx, "scatter");
}

} // namespace
} // namespace ember::npu::test
