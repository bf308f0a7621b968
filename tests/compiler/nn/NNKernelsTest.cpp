// NN operators end to end on the interpreter (type inference + kernel), compared with
// PyTorch results that gen_nn_refs.py writes into the build folder at build time.
#include "NNTestUtil.h"
#include "ember/backend/Backend.h"
#include "ember/graph/Graph.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

using namespace ember;

namespace {

using I = std::vector<int64_t>;

const std::string kRefDir = std::string(EMBER_BINARY_DIR) + "/tests/compiler/nn/refs/";

using nntest::runNode;
Tensor readRef(const std::string& path) {
  return nntest::readBin(path);
}

struct RefCase {
  const char* name;
  NodeKind kind;
  Attrs attrs;
  int numInputs;
  int numOutputs;
};

Attrs attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  Attrs a;
  for (const auto& [k, v] : list)
    a.set(k, v);
  return a;
}

std::vector<RefCase> refCases() {
  using K = NodeKind;
  return {
      {"conv_basic", K::Conv, attrs({{"pads", I{1, 1, 1, 1}}}), 3, 1},
      {"conv_stride_pad_dil", K::Conv,
       attrs({{"strides", I{2, 3}}, {"dilations", I{2, 1}}, {"pads", I{1, 0, 2, 1}}}), 2, 1},
      {"conv_group", K::Conv, attrs({{"group", int64_t(3)}, {"pads", I{1, 1, 1, 1}}}), 3, 1},
      {"conv_depthwise", K::Conv,
       attrs({{"group", int64_t(8)}, {"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}), 3, 1},
      {"conv_depthwise_mult", K::Conv, attrs({{"group", int64_t(4)}, {"pads", I{1, 1, 1, 1}}}), 2,
       1},
      {"conv_1x1", K::Conv, {}, 3, 1},
      {"conv_1x1_stride2", K::Conv, attrs({{"strides", I{2, 2}}}), 2, 1},
      {"conv_1d", K::Conv, attrs({{"strides", I{2}}, {"pads", I{1, 1}}}), 3, 1},
      {"conv_3d", K::Conv, attrs({{"strides", I{1, 2, 1}}, {"pads", I{1, 1, 1, 1, 1, 1}}}), 2, 1},
      {"conv_big", K::Conv, attrs({{"pads", I{1, 1, 1, 1}}}), 3, 1},
      {"convtranspose_basic", K::ConvTranspose,
       attrs({{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}, {"output_padding", I{1, 1}}}), 3, 1},
      {"convtranspose_group_dil", K::ConvTranspose,
       attrs({{"group", int64_t(2)}, {"dilations", I{2, 2}}}), 2, 1},
      {"convtranspose_1d", K::ConvTranspose, attrs({{"strides", I{3}}}), 2, 1},
      {"maxpool_basic", K::MaxPool,
       attrs({{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}), 1, 1},
      {"maxpool_ceil", K::MaxPool,
       attrs({{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"ceil_mode", int64_t(1)}}), 1, 1},
      {"maxpool_dil", K::MaxPool, attrs({{"kernel_shape", I{2, 2}}, {"dilations", I{2, 2}}}), 1, 1},
      {"maxpool_1d", K::MaxPool,
       attrs({{"kernel_shape", I{3}}, {"strides", I{2}}, {"pads", I{1, 1}}}), 1, 1},
      {"maxpool_3d", K::MaxPool, attrs({{"kernel_shape", I{2, 2, 2}}, {"strides", I{2, 2, 2}}}), 1,
       1},
      {"avgpool_exclude_pad", K::AveragePool,
       attrs({{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}), 1, 1},
      {"avgpool_include_pad", K::AveragePool,
       attrs({{"kernel_shape", I{3, 3}},
              {"strides", I{2, 2}},
              {"pads", I{1, 1, 1, 1}},
              {"count_include_pad", int64_t(1)}}),
       1, 1},
      {"avgpool_ceil_include_pad", K::AveragePool,
       attrs({{"kernel_shape", I{3, 3}},
              {"strides", I{2, 2}},
              {"pads", I{1, 1, 1, 1}},
              {"ceil_mode", int64_t(1)},
              {"count_include_pad", int64_t(1)}}),
       1, 1},
      {"avgpool_ceil", K::AveragePool,
       attrs({{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"ceil_mode", int64_t(1)}}), 1, 1},
      {"avgpool_3d", K::AveragePool, attrs({{"kernel_shape", I{2, 2, 2}}}), 1, 1},
      {"globalavgpool", K::GlobalAveragePool, {}, 1, 1},
      {"globalmaxpool", K::GlobalMaxPool, {}, 1, 1},
      {"batchnorm", K::BatchNormalization, attrs({{"epsilon", 1e-3}}), 5, 1},
      {"instancenorm", K::InstanceNormalization, attrs({{"epsilon", 1e-5}}), 3, 1},
      {"layernorm_last", K::LayerNormalization, attrs({{"epsilon", 1e-5}}), 3, 3},
      {"layernorm_axis1", K::LayerNormalization, attrs({{"axis", int64_t(1)}, {"epsilon", 1e-3}}),
       3, 3},
      {"lrn", K::LRN, attrs({{"size", int64_t(5)}, {"alpha", 1e-3}, {"beta", 0.75}, {"bias", 2.0}}),
       1, 1},
      {"matmul_2d", K::MatMul, {}, 2, 1},
      {"matmul_broadcast", K::MatMul, {}, 2, 1},
      {"matmul_batch_2d", K::MatMul, {}, 2, 1},
      {"matmul_vec_left", K::MatMul, {}, 2, 1},
      {"matmul_vec_right", K::MatMul, {}, 2, 1},
      {"matmul_vec_vec", K::MatMul, {}, 2, 1},
      {"matmul_big", K::MatMul, {}, 2, 1},
      {"gemm_vector_c", K::Gemm, attrs({{"alpha", 0.5}, {"beta", 2.0}}), 3, 1},
      {"gemm_trans_ab", K::Gemm, attrs({{"transA", int64_t(1)}, {"transB", int64_t(1)}}), 3, 1},
      {"gemm_transa_no_c", K::Gemm, attrs({{"transA", int64_t(1)}}), 2, 1},
      {"softmax_axis0", K::Softmax, attrs({{"axis", int64_t(0)}}), 1, 1},
      {"softmax_axis1", K::Softmax, attrs({{"axis", int64_t(1)}}), 1, 1},
      {"softmax_axism1", K::Softmax, attrs({{"axis", int64_t(-1)}}), 1, 1},
      {"softmax_large", K::Softmax, {}, 1, 1},
      {"logsoftmax_axis0", K::LogSoftmax, attrs({{"axis", int64_t(0)}}), 1, 1},
      {"logsoftmax_axis1", K::LogSoftmax, attrs({{"axis", int64_t(1)}}), 1, 1},
      {"logsoftmax_axism1", K::LogSoftmax, attrs({{"axis", int64_t(-1)}}), 1, 1},
      {"hardmax_axis0", K::Hardmax, attrs({{"axis", int64_t(0)}}), 1, 1},
      {"hardmax_axis1", K::Hardmax, attrs({{"axis", int64_t(1)}}), 1, 1},
      {"hardmax_axism1", K::Hardmax, attrs({{"axis", int64_t(-1)}}), 1, 1},
  };
}

/// |got - want| <= atol + rtol * |want| elementwise, with shapes equal, where atol is
/// the project's float tolerance (docs/numerics.md): 1e-4 * max(1, max |reference|).
void expectClose(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dims(), want.dims()) << what;
  const float* g = got.data<float>();
  const float* w = want.data<float>();
  double maxRef = 1;
  for (int64_t i = 0; i < want.size(); ++i)
    maxRef = std::max(maxRef, std::fabs(double(w[i])));
  const double rtol = 1e-4, atol = 1e-4 * maxRef;
  int64_t bad = 0;
  for (int64_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(double(g[i]) - w[i]) <= atol + rtol * std::fabs(double(w[i])))) {
      if (bad++ < 5)
        ADD_FAILURE() << what << " element " << i << ": got " << g[i] << ", want " << w[i];
    }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << got.size() << " elements differ";
}

class NNReference : public ::testing::TestWithParam<RefCase> {};

TEST_P(NNReference, MatchesPyTorch) {
  const RefCase& c = GetParam();
  std::vector<Tensor> inputs;
  for (int i = 0; i < c.numInputs; ++i)
    inputs.push_back(readRef(kRefDir + c.name + ".in" + std::to_string(i) + ".bin"));
  TensorMap out = runNode(c.kind, c.attrs, inputs, c.numOutputs);
  for (int j = 0; j < c.numOutputs; ++j) {
    const std::string key = "out" + std::to_string(j);
    Tensor want = readRef(kRefDir + c.name + "." + key + ".bin");
    expectClose(out.at(key), want, std::string(c.name) + " " + key);
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, NNReference, ::testing::ValuesIn(refCases()),
                         [](const ::testing::TestParamInfo<RefCase>& p) {
                           return std::string(p.param.name);
                         });

} // namespace
