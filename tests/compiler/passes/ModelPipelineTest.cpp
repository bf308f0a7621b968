// The default pipeline on the model zoo (tests/models/gen_models.py): each model is
// imported, optimised, run on the float interpreter and compared with PyTorch's output
// at 1e-4 * max(1, max |ref|) (docs/numerics.md). Node counts before/after are printed.
//
// The zoo folder is $EMBER_MODELS_DIR, else the build's models/ folder; a model that is
// not there is skipped.
#include "PassTestUtil.h"

#include "ZooModels.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/support/Npy.h"

#include <chrono>
#include <iostream>
#include <map>

namespace ember {
namespace {

using namespace passtest;

std::map<std::string, size_t> countKinds(const Function& f) {
  std::map<std::string, size_t> c;
  for (const auto& n : f.nodes())
    ++c[n->kindName()];
  return c;
}

struct ModelCase {
  const char* name;
  bool lowerAll; ///< also lower everything the lower pass can
};

/// gtest prints the parameter in test listings: the model's name, not its bytes.
void PrintTo(const ModelCase& c, std::ostream* os) {
  *os << c.name << (c.lowerAll ? " (lower all)" : "");
}

class ZooPipeline : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ZooPipeline, DefaultPipelineMatchesPyTorch) {
  const ModelCase mc = GetParam();
  const std::string dir = zoo::modelDir(mc.name);
  EMBER_SKIP_UNLESS_ZOO_FILES(dir, "model.onnx", "expected.npy");
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Module> m = importOnnxFile(dir + "/model.onnx");
  Function& f = *m->functions().front();
  const size_t before = f.numNodes();
  const auto kindsBefore = countKinds(f);

  LowerAllBackend lowerEverything;
  PassContext ctx;
  if (mc.lowerAll)
    ctx.backend = &lowerEverything;
  const std::vector<PassStats> stats = runPipeline(f, defaultPipeline(), ctx);
  const auto kindsAfter = countKinds(f);
  // A second run finds nothing left to do (with everything lowered, GlobalAveragePool
  // and ReduceMean trade places on every run, by design of that test backend).
  const size_t optimised = f.numNodes();
  size_t again = 0;
  const std::vector<PassStats> second = runPipeline(f, defaultPipeline(), ctx);
  for (const PassStats& s : second)
    again += s.changed;
  if (again)
    printPassStats(std::cout, second);
  if (!mc.lowerAll) {
    EXPECT_EQ(f.numNodes(), optimised);
    EXPECT_EQ(again, 0u) << "the pipeline is not idempotent";
  } else {
    EXPECT_GE(f.numNodes(), optimised - optimised / 50) << "the first run missed rewrites";
  }

  ASSERT_EQ(f.inputs().size(), 1u);
  const TensorMap out = createInterpreterBackend()->compile(f)->run(
      {{f.inputs()[0]->name(), readNpy(dir + "/input.npy")}});
  const Tensor ref = readNpy(dir + "/expected.npy");
  const Tensor& got = out.at(f.outputs().front().name);
  ASSERT_EQ(got.size(), ref.size());
  double maxRef = 1, maxDiff = 0;
  for (int64_t i = 0; i < ref.size(); ++i) {
    maxRef = std::max(maxRef, std::fabs(ref.getAsDouble(i)));
    maxDiff = std::max(maxDiff, std::fabs(got.getAsDouble(i) - ref.getAsDouble(i)));
  }
  EXPECT_LE(maxDiff, 1e-4 * maxRef);

  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[zoo] " << mc.name << (mc.lowerAll ? " (lower all)" : "") << ": nodes " << before
            << " -> " << f.numNodes() << ", max |diff| " << maxDiff << " (bound " << 1e-4 * maxRef
            << "), " << secs << " s\n  changed kinds:";
  for (const auto& [k, n] : kindsBefore) {
    auto it = kindsAfter.find(k);
    const size_t a = it == kindsAfter.end() ? 0 : it->second;
    if (a != n)
      std::cout << " " << k << " " << n << "->" << a;
  }
  for (const auto& [k, n] : kindsAfter)
    if (!kindsBefore.count(k))
      std::cout << " " << k << " 0->" << n;
  std::cout << "\n";
  printPassStats(std::cout, stats);

  // What each model family must show.
  const std::string name = mc.name;
  if (name.rfind("resnet", 0) == 0 || name == "mobilenet_v2") {
    EXPECT_EQ(kindsAfter.count("BatchNormalization"), 0u);
    EXPECT_EQ(kindsAfter.count("Relu") + kindsAfter.count("Clip"), 0u); // all fused
  }
  if (name == "efficientnet_b0") {
    EXPECT_GT(kindsAfter.count("Silu"), 0u);
  }
  if (name == "transformer_gelu" && !mc.lowerAll) {
    EXPECT_EQ(kindsAfter.count("Gelu") ? kindsAfter.at("Gelu") : 0, kindsBefore.at("Erf"));
  }
  if (mc.lowerAll) {
    for (const char* k : {"Gemm", "LayerNormalization", "HardSwish", "HardSigmoid"})
      EXPECT_EQ(kindsAfter.count(k), 0u) << k;
  }
  if (name.rfind("transformer", 0) == 0 && !mc.lowerAll) {
    // Every linear layer with its bias Add (MatMul by a constant + Add) became one Gemm;
    // the MatMuls left multiply two activations (attention).
    EXPECT_GT(kindsAfter.at("Gemm"), kindsBefore.count("Gemm") ? kindsBefore.at("Gemm") : 0);
  }
  // Not larger: a linear layer on a sequence trades MatMul + Add for Reshape + Gemm +
  // Reshape, and merge-reshape merges what it can.
  EXPECT_LE(f.numNodes(), before + (mc.lowerAll ? 1000 : 0)) << "the pipeline grew the graph";
}

std::string caseName(const ::testing::TestParamInfo<ModelCase>& i) {
  return std::string(i.param.name) + (i.param.lowerAll ? "_lowered" : "");
}

INSTANTIATE_TEST_SUITE_P(
    PassesZoo, ZooPipeline,
    ::testing::Values(ModelCase{"resnet18", false}, ModelCase{"mobilenet_v2", false},
                      ModelCase{"mobilenet_v3_small", false}, ModelCase{"mobilenet_v3_small", true},
                      ModelCase{"efficientnet_b0", false}, ModelCase{"squeezenet1_0", false},
                      ModelCase{"shufflenet_v2_x0_5", false}, ModelCase{"regnet_x_400mf", false},
                      ModelCase{"googlenet", false}, ModelCase{"densenet121", false},
                      ModelCase{"resnet50", false}, ModelCase{"transformer", false},
                      ModelCase{"transformer_gelu", false}, ModelCase{"transformer_gelu", true},
                      ModelCase{"transformer_classifier", true}),
    caseName);

} // namespace
} // namespace ember
