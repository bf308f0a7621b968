// Every model of the zoo (tests/models/gen_models.py) through the default pipeline,
// random calibration (random:8, or the model's own input for non-float inputs) and the
// quantize pass: the result verifies, runs on the int8 interpreter kernels, and its
// dequantized outputs agree with the float outputs (cosine similarity >= 0.98 for the
// CNNs). The figures are printed. The zoo folder is $EMBER_MODELS_DIR, else the build's
// models/ folder; absent models are skipped.
#include "ZooModels.h"
#include "ember/graph/Verifier.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/quantization/Quantize.h"
#include "ember/support/Npy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>

namespace ember {
namespace {

double cosine(const Tensor& a, const Tensor& b) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    const double x = a.data<float>()[i], y = b.data<float>()[i];
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
}

struct ZooCase {
  const char* name;
  bool cnn; ///< the 0.98 cosine bound applies
};

void PrintTo(const ZooCase& c, std::ostream* os) {
  *os << c.name;
}

class QuantZoo : public ::testing::TestWithParam<ZooCase> {};

TEST_P(QuantZoo, QuantizedMatchesFloat) {
  const ZooCase zc = GetParam();
  const std::string dir = zoo::modelDir(zc.name);
  EMBER_SKIP_UNLESS_ZOO_FILES(dir, "model.onnx", "input.npy");
  std::unique_ptr<Module> m = importOnnxFile(dir + "/model.onnx");
  Function& f = *m->functions().front();
  ASSERT_EQ(f.inputs().size(), 1u);
  const Node* in = f.inputs()[0];
  const bool floatInput = in->resultType().kind == ElemKind::Float32;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<TensorMap> calib =
      quant::loadCalibration(f, floatInput ? "random:8" : dir + "/input.npy");
  quant::QuantizeStats stats;
  Function* q = quant::quantizeModel(f, calib, {}, nullptr, &stats);
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_TRUE(verifyFunction(*q).empty());
  EXPECT_GT(stats.int8Nodes, 0u);

  std::map<std::string, int> floatKinds;
  for (const auto& n : q->nodes())
    if (n->kind() != NodeKind::QuantizeLinear && n->kind() != NodeKind::DequantizeLinear &&
        !n->resultType(0).quant.isQuantized())
      ++floatKinds[n->kindName()];
  std::cout << "[quant-zoo] " << zc.name << " float nodes:";
  for (const auto& [k, c] : floatKinds)
    std::cout << " " << k << " x" << c;
  std::cout << "\n";
  TensorMap inputs = {{in->name(), readNpy(dir + "/input.npy")}};
  TensorMap ref = Interpreter(f).run(inputs);
  const auto t2 = std::chrono::steady_clock::now();
  TensorMap got = Interpreter(*q).run(inputs);
  const auto t3 = std::chrono::steady_clock::now();
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  for (const auto& [name, r] : ref) {
    const double c = cosine(r, got.at(name));
    std::cout << "[quant-zoo] " << zc.name << " output " << name << ": cosine " << c
              << "; int8 nodes " << stats.int8Nodes << ", float nodes " << stats.floatNodes
              << ", Q " << stats.quantizes << ", DQ " << stats.dequantizes << ", Rescale "
              << stats.rescales << "; calibrate+quantize " << ms(t0, t1) << " ms, float run "
              << ms(t1, t2) << " ms, int8 run " << ms(t2, t3) << " ms\n";
    if (zc.cnn)
      EXPECT_GE(c, 0.98) << name;
    else
      EXPECT_GT(c, 0.5) << name;
  }
}

std::string caseName(const ::testing::TestParamInfo<ZooCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(
    QuantZoo, QuantZoo,
    ::testing::Values(ZooCase{"resnet18", true}, ZooCase{"resnet50", true},
                      ZooCase{"mobilenet_v2", true}, ZooCase{"mobilenet_v3_small", true},
                      ZooCase{"efficientnet_b0", true}, ZooCase{"densenet121", true},
                      ZooCase{"googlenet", true}, ZooCase{"regnet_x_400mf", true},
                      ZooCase{"squeezenet1_0", true}, ZooCase{"shufflenet_v2_x0_5", true},
                      ZooCase{"transformer", false}, ZooCase{"transformer_gelu", false},
                      ZooCase{"transformer_classifier", false}),
    caseName);

} // namespace
} // namespace ember
