// The model zoo quantized (quant::quantizeModel, calibrated on the model's input): the
// int8 functions (docs/numerics.md section 5: int8 nodes, int32 biases, Rescale, Lut)
// through the low-level IR and the LIR interpreter, bit-identical to the graph
// interpreter on the same quantized function, with their memory figures. Absent models
// are skipped, as in ZooLirTest.
#include "LirTestUtil.h"

#include "ZooModels.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/lir/Stats.h"
#include "ember/quantization/Quantize.h"
#include "ember/support/Npy.h"

#include <iostream>

namespace ember {
namespace {

using namespace lirtest;

class ZooInt8Lir : public ::testing::TestWithParam<const char*> {};

TEST_P(ZooInt8Lir, BitIdenticalWithAValidPlan) {
  const std::string dir = zoo::modelDir(GetParam());
  EMBER_SKIP_UNLESS_ZOO_FILES(dir, "model.onnx", "input.npy");
  std::unique_ptr<Module> m = importOnnxFile(dir + "/model.onnx");
  ember::Function& f = *m->functions().front();
  ASSERT_EQ(f.inputs().size(), 1u);
  const TensorMap in = {{f.inputs()[0]->name(), readNpy(dir + "/input.npy")}};
  quant::QuantizeStats qs;
  ember::Function* q = quant::quantizeModel(f, {in}, {}, nullptr, &qs);
  ASSERT_GT(qs.int8Nodes, 0u);

  const lir::MemoryStats s = lir::measureMemory(*q);
  std::cout << "int8 (" << qs.int8Nodes << " int8 nodes, " << qs.floatNodes << " float)\n";
  lir::printMemoryStatsHeader(std::cout);
  lir::printMemoryStatsRow(std::cout, GetParam(), s);
  EXPECT_LE(s.greedyPeak, s.topoPeak);
  EXPECT_LE(s.lowerBound, s.arenaBytes);

  const TensorMap ref = Interpreter(*q).run(in);
  lir::LirInterpreter run(lir::compileToLir(*q));
  EXPECT_EQ(bitDifference(run.run(in), ref), "");
}

INSTANTIATE_TEST_SUITE_P(Models, ZooInt8Lir,
                         ::testing::Values("resnet18", "resnet50", "mobilenet_v2",
                                           "mobilenet_v3_small", "efficientnet_b0", "densenet121",
                                           "googlenet", "regnet_x_400mf", "squeezenet1_0",
                                           "shufflenet_v2_x0_5", "transformer", "transformer_gelu",
                                           "transformer_classifier"),
                         [](const auto& param) { return std::string(param.param); });

} // namespace
} // namespace ember
