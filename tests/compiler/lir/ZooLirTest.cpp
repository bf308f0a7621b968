// The model zoo through the default graph pipeline, the memory-minimising schedule,
// IRGen, the IR passes, the memory planner and the LIR interpreter: outputs must be
// bit-identical to the graph interpreter on the same optimised graph, the greedy
// schedule never worse than the topological one, and the plan valid. Prints the memory
// figures per model. $EMBER_MODELS_DIR (else the build's models/ folder); absent
// models are skipped.
#include "LirTestUtil.h"

#include "ZooModels.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/lir/Stats.h"
#include "ember/passes/Pass.h"
#include "ember/passes/Passes.h"
#include "ember/support/Npy.h"

#include <iostream>

namespace ember {
namespace {

using namespace lirtest;

class ZooLir : public ::testing::TestWithParam<const char*> {};

TEST_P(ZooLir, BitIdenticalWithAValidPlan) {
  const std::string dir = zoo::modelDir(GetParam());
  EMBER_SKIP_UNLESS_ZOO_FILES(dir, "model.onnx", "input.npy");
  std::unique_ptr<Module> m = importOnnxFile(dir + "/model.onnx");
  ember::Function& g = *m->functions().front();
  runPipeline(g, defaultPipeline());

  const lir::MemoryStats s = lir::measureMemory(g);
  lir::printMemoryStatsHeader(std::cout);
  lir::printMemoryStatsRow(std::cout, GetParam(), s);
  EXPECT_LE(s.greedyPeak, s.topoPeak);
  EXPECT_LE(s.lowerBound, s.arenaBytes);
  EXPECT_LE(s.arenaBytes, s.sumBytes + 64 * s.buffers);
  // The IR after the passes realises the scheduler's memory model.
  EXPECT_LE(s.lowerBound, s.greedyPeak);

  ASSERT_EQ(g.inputs().size(), 1u);
  const TensorMap in = {{g.inputs()[0]->name(), readNpy(dir + "/input.npy")}};
  const TensorMap ref = Interpreter(g).run(in);
  lir::LirInterpreter run(lir::compileToLir(g));
  EXPECT_EQ(bitDifference(run.run(in), ref), "");
}

INSTANTIATE_TEST_SUITE_P(Models, ZooLir,
                         ::testing::Values("resnet18", "resnet50", "mobilenet_v2",
                                           "mobilenet_v3_small", "efficientnet_b0", "densenet121",
                                           "googlenet", "regnet_x_400mf", "squeezenet1_0",
                                           "shufflenet_v2_x0_5", "transformer", "transformer_gelu",
                                           "transformer_classifier"),
                         [](const auto& param) { return std::string(param.param); });

} // namespace
} // namespace ember
