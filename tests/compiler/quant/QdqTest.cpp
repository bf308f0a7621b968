// Pre-quantized ONNX models (qdq_models.py, fixture quant.qdq_models): ONNX's own
// QLinearConv / QLinearMatMul conformance cases (converted to int8) through the QLinear
// importers, and QDQ models through the fold-qdq pass. Our fixed-point requantization
// may differ from ONNX's float rounding by at most one code; the figures are printed.
#include "ember/importer/OnnxImporter.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/passes/Pass.h"
#include "ember/quantization/FoldQdq.h"
#include "ember/support/Npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

namespace ember {
namespace {

const std::string kDir = std::string(EMBER_BINARY_DIR) + "/tests/compiler/quant/qdq";

std::map<std::string, int> kindCounts(const Function& f) {
  std::map<std::string, int> c;
  for (const auto& n : f.nodes())
    ++c[n->kindName()];
  return c;
}

class QuantConformance : public ::testing::TestWithParam<const char*> {};

TEST_P(QuantConformance, QLinearWithinOneCodeOfOnnx) {
  const std::string dir = kDir + "/conformance_" + GetParam();
  if (!std::ifstream(dir + "/model.onnx").good())
    GTEST_SKIP() << "no " << dir << " (libonnx-testdata lacks the case)";
  std::unique_ptr<Module> m = importOnnxFile(dir + "/model.onnx");
  const Function& f = *m->functions().front();
  const Tensor x = readNpy(dir + "/input.npy"), want = readNpy(dir + "/expected.npy");
  const Tensor got = Interpreter(f).run({{f.inputs()[0]->name(), x}}).begin()->second;
  ASSERT_EQ(got.dims(), want.dims());
  int maxDiff = 0, differ = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    const int d = std::abs(int(got.data<int8_t>()[i]) - int(want.data<int8_t>()[i]));
    maxDiff = std::max(maxDiff, d);
    differ += d != 0;
  }
  std::cout << "[conformance] " << GetParam() << ": " << differ << " of " << got.size()
            << " codes differ from ONNX's, by at most " << maxDiff << "\n";
  EXPECT_LE(maxDiff, 1);
  EXPECT_EQ(kindCounts(f).count("QuantizeLinear"), 0u);
}

INSTANTIATE_TEST_SUITE_P(Onnx, QuantConformance,
                         ::testing::Values("test_qlinearconv", "test_qlinearmatmul_2D",
                                           "test_qlinearmatmul_3D"));

/// The model run as exported (QDQ in float) and after fold-qdq; returns the folded
/// function's node kinds and the largest output difference in output codes.
struct FoldResult {
  std::map<std::string, int> kinds;
  std::map<std::string, double> maxCodes;
};

FoldResult foldAndCompare(const std::string& name, const std::map<std::string, double>& scales) {
  const std::string dir = kDir + "/" + name;
  std::unique_ptr<Module> ref = importOnnxFile(dir + "/model.onnx");
  std::unique_ptr<Module> fold = importOnnxFile(dir + "/model.onnx");
  Function& fr = *ref->functions().front();
  Function& ff = *fold->functions().front();
  runPipeline(fr, defaultPipeline());
  runPipeline(ff, defaultPipeline());
  quant::registerQuantPasses();
  EXPECT_GT(runPipeline(ff, {"fold-qdq"})[0].changed, 0u);
  const Tensor x = readNpy(dir + "/input.npy");
  TensorMap a = Interpreter(fr).run({{"x", x}}), b = Interpreter(ff).run({{"x", x}});
  FoldResult r{kindCounts(ff), {}};
  for (const auto& [out, scale] : scales) {
    double worst = 0;
    const Tensor &ta = a.at(out), &tb = b.at(out);
    for (int64_t i = 0; i < ta.size(); ++i)
      worst = std::max(worst, std::fabs(ta.data<float>()[i] - tb.data<float>()[i]) / scale);
    r.maxCodes[out] = worst;
    std::cout << "[fold-qdq] " << name << " output " << out << ": at most " << worst
              << " codes from the QDQ float run\n";
  }
  return r;
}

/// Whether qdq_models.py wrote model `name`.
bool haveModel(const std::string& name) {
  return std::ifstream(kDir + "/" + name + "/model.onnx").good();
}

/// The output names of model `name`: its last DequantizeLinears' (qdq_models.py numbers
/// its nodes).
std::vector<std::string> outputsOf(const std::string& name) {
  std::unique_ptr<Module> probe = importOnnxFile(kDir + "/" + name + "/model.onnx");
  std::vector<std::string> names;
  for (const auto& o : probe->functions().front()->outputs())
    names.push_back(o.name);
  return names;
}

TEST(QuantFoldQdq, ConvReluBecomesOneInt8Conv) {
  if (!haveModel("qdq_conv"))
    GTEST_SKIP() << "run the quant.qdq_models test first";
  const std::string out = outputsOf("qdq_conv")[0];
  FoldResult r = foldAndCompare("qdq_conv", {{out, 0.02}});
  EXPECT_EQ(r.kinds["Conv"], 1);
  EXPECT_EQ(r.kinds["QuantizeLinear"], 1);   // the input's
  EXPECT_EQ(r.kinds["DequantizeLinear"], 1); // the output's
  EXPECT_EQ(r.kinds.count("Relu"), 0u);      // fused, applied by the int8 clamp
  EXPECT_LE(r.maxCodes[out], 1.0 + 1e-3);
}

TEST(QuantFoldQdq, MatMulSigmoidAddGemm) {
  if (!haveModel("qdq_mixed"))
    GTEST_SKIP() << "run the quant.qdq_models test first";
  const std::vector<std::string> outs = outputsOf("qdq_mixed");
  const std::string &add = outs.at(0), &gemm = outs.at(1);
  FoldResult r = foldAndCompare("qdq_mixed", {{add, 0.05}, {gemm, 0.06}});
  EXPECT_EQ(r.kinds["MatMul"], 1);
  EXPECT_EQ(r.kinds["Lut"], 1);
  EXPECT_EQ(r.kinds["Add"], 1);
  EXPECT_EQ(r.kinds["Gemm"], 1);
  EXPECT_EQ(r.kinds["QuantizeLinear"], 1);
  EXPECT_EQ(r.kinds["DequantizeLinear"], 2);
  EXPECT_EQ(r.kinds.count("Sigmoid"), 0u);
  EXPECT_LE(r.maxCodes[gemm], 1.0 + 1e-3);
  // Add sums two requantized values (MatMul's and the LUT's), each within a code.
  EXPECT_LE(r.maxCodes[add], 2.0 + 1e-3);
}

TEST(QuantFoldQdq, AttentionMatMulsAndSoftmax) {
  if (!haveModel("qdq_attention"))
    GTEST_SKIP() << "run the quant.qdq_models test first";
  const std::string out = outputsOf("qdq_attention")[0];
  FoldResult r = foldAndCompare("qdq_attention", {{out, 0.02}});
  // Two MatMuls of two activations, the Transpose, the Softmax and the mean in int8
  // (numerics.md 4.1, 4.10, 4.5), with the exporter's parameters; one Q at the input, one
  // DQ at the end.
  EXPECT_EQ(r.kinds["MatMul"], 2);
  EXPECT_EQ(r.kinds["Softmax"], 1);
  EXPECT_EQ(r.kinds["ReduceMean"], 1);
  EXPECT_EQ(r.kinds["Transpose"], 1);
  EXPECT_EQ(r.kinds["QuantizeLinear"], 1);
  EXPECT_EQ(r.kinds["DequantizeLinear"], 1);
  // The QDQ float run rounds the exact softmax; the int8 one uses a 16-bit exp table and
  // an integer division (4.10): a code of the probabilities moves the context by a few.
  EXPECT_LE(r.maxCodes[out], 3.0 + 1e-3);
}

TEST(QuantFoldQdq, LayerNormalization) {
  if (!haveModel("qdq_layernorm"))
    GTEST_SKIP() << "run the quant.qdq_models test first";
  const std::string out = outputsOf("qdq_layernorm")[0];
  FoldResult r = foldAndCompare("qdq_layernorm", {{out, 0.025}});
  // The int8 LayerNormalization (numerics.md 4.11) with the float scale and bias.
  EXPECT_EQ(r.kinds["LayerNormalization"], 1);
  EXPECT_EQ(r.kinds["QuantizeLinear"], 1);
  EXPECT_EQ(r.kinds["DequantizeLinear"], 1);
  // Integer statistics against the QDQ run's float ones: within a code.
  EXPECT_LE(r.maxCodes[out], 1.0 + 1e-3);
}

TEST(QuantFoldQdq, PRelu) {
  if (!haveModel("qdq_prelu"))
    GTEST_SKIP() << "run the quant.qdq_models test first";
  const std::string out = outputsOf("qdq_prelu")[0];
  FoldResult r = foldAndCompare("qdq_prelu", {{out, 0.015}});
  // The per-channel slope: the int8 PRelu of numerics.md 4.12; the shared one: a Lut.
  EXPECT_EQ(r.kinds["PRelu"], 1);
  EXPECT_EQ(r.kinds["Lut"], 1);
  EXPECT_EQ(r.kinds["QuantizeLinear"], 1);
  EXPECT_EQ(r.kinds["DequantizeLinear"], 1);
  // Fixed-point multipliers against the QDQ run's float rounding: within a code.
  EXPECT_LE(r.maxCodes[out], 1.0 + 1e-3);
}

} // namespace
} // namespace ember
