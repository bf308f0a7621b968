// The model zoo (tests/models) on the cpu backend after the default pipeline, against
// PyTorch's output at 1e-4 * max(1, max |ref|) (docs/numerics.md), with 1 and 2
// threads (identical bits). The zoo folder is $EMBER_MODELS_DIR, else the build's
// models/ folder; an absent model is skipped.
#include "CpuTestUtil.h"

#include "ember/importer/OnnxImporter.h"
#include "ember/passes/Pass.h"
#include "ember/support/Npy.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>

namespace ember {
namespace {

using namespace cputest;

std::string modelsDir() {
  if (const char* env = std::getenv("EMBER_MODELS_DIR"))
    return env;
  return EMBER_DEFAULT_MODELS_DIR;
}

class CpuZoo : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuZoo, MatchesPyTorch) {
  const std::string dir = modelsDir() + "/" + GetParam();
  if (!std::ifstream(dir + "/model.onnx").good() || !std::ifstream(dir + "/expected.npy").good())
    GTEST_SKIP() << "no " << dir << "/model.onnx (run `ninja models` or set EMBER_MODELS_DIR)";
  std::unique_ptr<Module> m = importOnnxFile(dir + "/model.onnx");
  Function& f = *m->functions().front();
  runPipeline(f, defaultPipeline());
  ASSERT_EQ(f.inputs().size(), 1u);
  const TensorMap in = {{f.inputs()[0]->name(), readNpy(dir + "/input.npy")}};
  const Tensor ref = readNpy(dir + "/expected.npy");
  const std::string out = f.outputs().front().name;
  Tensor first;
  for (int threads : {1, 2}) {
    const auto t0 = std::chrono::steady_clock::now();
    auto cf = createCpuBackend(CpuOptions{threads})->compile(f);
    const double compileSecs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const Tensor got = cf->run(in).at(out);
    ASSERT_EQ(got.size(), ref.size());
    double maxRef = 1, maxDiff = 0;
    for (int64_t i = 0; i < ref.size(); ++i) {
      maxRef = std::max(maxRef, std::fabs(ref.getAsDouble(i)));
      maxDiff = std::max(maxDiff, std::fabs(got.getAsDouble(i) - ref.getAsDouble(i)));
    }
    EXPECT_LE(maxDiff, 1e-4 * maxRef) << threads << " thread(s)";
    if (threads == 1)
      first = got;
    else
      EXPECT_TRUE(got == first) << "the result depends on the thread count";
    std::cout << "[cpu zoo] " << GetParam() << ", " << threads << " thread(s): max |diff| "
              << maxDiff << " (bound " << 1e-4 * maxRef << "), compile " << compileSecs << " s\n";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, CpuZoo,
    ::testing::Values("resnet18", "resnet50", "mobilenet_v2", "transformer", "transformer_gelu",
                      "transformer_classifier", "squeezenet1_0", "googlenet", "mobilenet_v3_small",
                      "efficientnet_b0", "regnet_x_400mf", "shufflenet_v2_x0_5", "densenet121"),
    [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

} // namespace
} // namespace ember
