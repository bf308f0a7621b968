// ONNX import of the NN operators: older opsets (softmax flattening before opset 13,
// BatchNormalization attributes of opsets 7-9), auto_pad resolution, and models that
// must be rejected. Models and expected values come from gen_nn_onnx.py (numpy and
// PyTorch), written into the build folder at build time.
#include "NNTestUtil.h"
#include "ember/backend/Backend.h"
#include "ember/graph/Graph.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

using namespace ember;

namespace {

const std::string kDir = std::string(EMBER_BINARY_DIR) + "/tests/compiler/nn/onnx/";

using nntest::readBin;

/// Imports NAME.onnx, feeds the placeholders in module order from NAME.in<i>.bin and
/// compares the first output with NAME.out0.bin.
void runCase(const std::string& name) {
  std::unique_ptr<Module> m = importOnnxFile(kDir + name + ".onnx");
  Function* f = m->functions().front().get();
  TensorMap feed;
  size_t i = 0;
  for (const auto& p : m->placeholders())
    feed[p->name()] = readBin(kDir + name + ".in" + std::to_string(i++) + ".bin");
  TensorMap out = createInterpreterBackend()->compile(*f)->run(feed);
  const Tensor want = readBin(kDir + name + ".out0.bin");
  const Tensor& got = out.at(f->outputs().front().name);
  ASSERT_EQ(got.dims(), want.dims());
  const float* g = got.data<float>();
  const float* w = want.data<float>();
  for (int64_t k = 0; k < got.size(); ++k)
    EXPECT_NEAR(g[k], w[k], 1e-5 + 1e-4 * std::fabs(w[k])) << name << " element " << k;
}

class NNImport : public ::testing::TestWithParam<const char*> {};

TEST_P(NNImport, MatchesReference) {
  runCase(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Models, NNImport,
                         ::testing::Values("softmax_opset11_axis1", "logsoftmax_opset11_default",
                                           "softmax_opset11_last", "hardmax_opset11_axis1",
                                           "softmax_opset13_axis1", "batchnorm_opset7",
                                           "batchnorm_opset9", "batchnorm_opset15",
                                           "batchnorm_training", "conv_same_upper",
                                           "conv_same_lower", "maxpool_valid", "gemm_opset9"));

TEST(NNImportErrors, OpsetBefore13SoftmaxIsFlattenedWithReshapes) {
  std::unique_ptr<Module> m = importOnnxFile(kDir + "softmax_opset11_axis1.onnx");
  size_t reshapes = 0, softmaxes = 0;
  for (const auto& n : m->functions().front()->nodes()) {
    reshapes += n->kind() == NodeKind::Reshape;
    softmaxes += n->kind() == NodeKind::Softmax;
  }
  EXPECT_EQ(reshapes, 2u);
  EXPECT_EQ(softmaxes, 1u);
  // When axis is the last one, both semantics agree: no reshape.
  m = importOnnxFile(kDir + "softmax_opset11_last.onnx");
  for (const auto& n : m->functions().front()->nodes())
    EXPECT_NE(n->kind(), NodeKind::Reshape);
}

void expectImportError(const std::string& name, bool unsupported, const std::string& nodeName,
                       const std::string& reason) {
  try {
    importOnnxFile(kDir + name + ".onnx");
    FAIL() << name << ": expected an error";
  } catch (const Unsupported& e) {
    EXPECT_TRUE(unsupported) << name << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(nodeName), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  } catch (const Error& e) {
    EXPECT_FALSE(unsupported) << name << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(nodeName), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

TEST(NNImportErrors, RejectedModelsNameTheNode) {
  expectImportError("maxpool_indices", true, "pool_idx", "Indices");
  expectImportError("conv_bad_channels", false, "conv_bad", "channels");
}

} // namespace
