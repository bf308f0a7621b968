// The NPU behind the ember::Backend interface, and the compile summary's table.
#include "NpuTestUtil.h"

#include "ember/support/Error.h"

namespace ember::npu::test {
namespace {

TEST(NpuBackend, SupportsAnswersPerNode) {
  auto be = createNpuBackend();
  EXPECT_EQ(be->name(), "npu");
  G g;
  NodeValue x = g.input("x", {1, 16, 4, 4}, 0.1f, 0);
  NodeValue r = g.node(NodeKind::Relu, "relu", {x}, {}, {1, 16, 4, 4}, 0.1f, 0);
  Attrs a;
  a.set("perm", std::vector<int64_t>{0, 2, 3, 1});
  NodeValue t = g.node(NodeKind::Transpose, "tr", {r}, a, {1, 4, 4, 16}, 0.1f, 0);
  g.output("y", t);
  EXPECT_TRUE(be->supports(*r.node));
  EXPECT_FALSE(be->supports(*t.node));
  try {
    be->compile(*g.f);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--device sim"), std::string::npos) << e.what();
  }
}

TEST(NpuSummary, TableListsLayersAndTotals) {
  G g;
  NodeValue x = g.input("x", {1, 16, 8, 8}, 0.1f, 0);
  Attrs a;
  a.set("kernel_shape", std::vector<int64_t>{3, 3});
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  NodeValue c =
      g.node(NodeKind::Conv, "conv1", {x, g.weights("w", {16, 16, 3, 3}, 0), g.bias("b", 16)}, a,
             {1, 16, 8, 8}, 0.2f, 3);
  g.output("y", c);
  CompileResult r = compile(*g.f, refIsa());
  ASSERT_EQ(r.summary.layers.size(), 1u);
  const LayerSummary& l = r.summary.layers[0];
  EXPECT_EQ(l.name, "conv1");
  EXPECT_EQ(l.kind, "Conv");
  EXPECT_EQ(l.macs, 8 * 8 * 16 * 16 * 9);
  EXPECT_EQ(l.instructions, r.summary.instructions); // the last layer ends with `finish`
  EXPECT_GT(r.summary.binary_bytes, r.summary.constant_bytes);
  const std::string t = formatSummary(r.summary);
  for (const char* want :
       {"conv1", "estimated cycles", "SRAM peak use", "act ", "binary", "compile time", "ember-v1"})
    EXPECT_NE(t.find(want), std::string::npos) << want << " in\n" << t;
  // The debug map covers the layer.
  ASSERT_EQ(r.binary.debug.size(), 1u);
  EXPECT_EQ(r.binary.debug[0].node, "conv1");
}

TEST(NpuIo, OneValueAsTwoOutputs) {
  G g;
  NodeValue x = g.input("x", {1, 16, 4, 4}, 0.1f, 0);
  NodeValue r = g.node(NodeKind::Relu, "relu", {x}, {}, {1, 16, 4, 4}, 0.1f, 0);
  g.output("y1", r);
  g.output("y2", r);
  CompileResult res = compile(*g.f, refIsa());
  auto in = randomInputs(res.binary, 1);
  SimOut s = simulate(res.binary, refIsa(), in);
  auto want = interpret(*g.f, in);
  EXPECT_EQ(mismatches(s.outputs["y1"], want["y1"]), 0u);
  EXPECT_EQ(mismatches(s.outputs["y2"], want["y2"]), 0u);
}

} // namespace
} // namespace ember::npu::test
