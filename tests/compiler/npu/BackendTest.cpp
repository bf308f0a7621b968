// The NPU behind the ember::Backend interface, and the compile summary's table.
#include "NpuTestUtil.h"

#include "ember/lir/IR.h"
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

TEST(NpuBackend, SpatialSliceOfStepOneOnly) {
  // A constant Slice of lines and columns runs on the NPU (strided row copies); one with
  // a step of 2 (no run of pixels) does not, and says why.
  auto be = createNpuBackend();
  G g;
  NodeValue x = g.input("x", {1, 16, 8, 8}, 0.1f, 0);
  Attrs a = ember::test::ints(
      {{"starts", {0, 0, 1, 2}}, {"ends", {1, 16, 5, 7}}, {"steps", {1, 1, 1, 1}}});
  NodeValue w = g.node(NodeKind::Slice, "window", {x}, a, {1, 16, 4, 5}, 0.1f, 0);
  Attrs s2 = ember::test::ints(
      {{"starts", {0, 0, 0, 0}}, {"ends", {1, 16, 8, 8}}, {"steps", {1, 1, 2, 1}}});
  NodeValue h = g.node(NodeKind::Slice, "every_other", {x}, s2, {1, 16, 4, 8}, 0.1f, 0);
  g.output("w", w);
  g.output("h", h);
  EXPECT_TRUE(be->supports(*w.node));
  EXPECT_FALSE(be->supports(*h.node));
  try {
    compile(*g.f, refIsa());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("every_other"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("step other than 1"), std::string::npos) << e.what();
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
  EXPECT_GT(r.summary.binaryBytes, r.summary.constantBytes);
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

TEST(NpuLir, LayersAreTheComputeInstructionsOfTheLowLevelIr) {
  // relu -> proj (fused into the residual Add) -> Reshape (an alias) -> relu: the
  // program's low-level IR holds one compute instruction per layer in emission order,
  // the Reshape as a view, and the fused pair as one place in the live ranges.
  G g;
  NodeValue x = g.input("x", {2, 5, 40}, 0.05f, 3);
  NodeValue a = g.node(NodeKind::Relu, "relu1", {x}, {}, {2, 5, 40}, 0.05f, 3);
  NodeValue p =
      g.node(NodeKind::MatMul, "proj", {a, g.weights("w", {40, 40}, 1)}, {}, {2, 5, 40}, 0.1f, -2);
  NodeValue s = g.node(NodeKind::Add, "res", {x, p}, {}, {2, 5, 40}, 0.12f, 1);
  NodeValue f = g.node(NodeKind::Reshape, "flat", {s}, ember::test::ints({{"shape", {10, 40}}}),
                       {10, 40}, 0.12f, 1);
  g.output("y", g.node(NodeKind::Relu, "relu2", {f}, {}, {10, 40}, 0.12f, 1));
  const CompileResult res = compile(*g.f, refIsa());
  ASSERT_TRUE(res.lir);
  std::vector<std::string> computed, views;
  const lir::Instruction* projAt = nullptr;
  const lir::Instruction* addResult = nullptr;
  bool addAllocatedBeforeProj = false;
  for (const auto& in : res.lir->instructions()) {
    if (in->valueKind() == lir::ValueKind::View && in->origin())
      views.push_back(in->origin()->name());
    if (in->valueKind() == lir::ValueKind::Alloc && in->name() == "res.res")
      addAllocatedBeforeProj = projAt == nullptr;
    if (in->valueKind() != lir::ValueKind::Compute || !in->origin())
      continue;
    const NodeKind k = in->origin()->kind();
    if (k == NodeKind::QuantizeLinear || k == NodeKind::DequantizeLinear)
      continue;
    if (projAt && !addResult) // the instruction right after the fused producer
      addResult = in.get();
    if (in->origin()->name() == "proj")
      projAt = in.get();
    computed.push_back(in->origin()->name());
  }
  EXPECT_EQ(computed, (std::vector<std::string>{"relu1", "proj", "res", "relu2"}));
  EXPECT_EQ(views, std::vector<std::string>{"flat"});
  ASSERT_TRUE(addResult);
  EXPECT_EQ(addResult->origin()->name(), "res"); // the Add follows its producer at once
  // The Add's result (which the fused layer writes) is allocated before the producer
  // runs, so it cannot take the bytes of relu1's result, which the producer reads.
  EXPECT_TRUE(addAllocatedBeforeProj) << lir::dump(*res.lir);
  std::vector<std::string> layers;
  for (const LayerSummary& l : res.summary.layers)
    layers.push_back(l.name);
  EXPECT_EQ(layers, (std::vector<std::string>{"relu1", "proj + res", "relu2"}));
  auto in = randomInputs(res.binary, 3);
  SimOut out = simulate(res.binary, refIsa(), in);
  EXPECT_EQ(mismatches(out.outputs["y"], interpret(*g.f, in)["y"]), 0u);
}

} // namespace
} // namespace ember::npu::test
