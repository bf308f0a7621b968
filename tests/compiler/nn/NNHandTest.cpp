// Small NN cases computed by hand, and ill-formed nodes that must be rejected with an
// ember::Error naming the node.
#include "NNTestUtil.h"
#include "ember/backend/Backend.h"
#include "ember/graph/Graph.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

using namespace ember;

namespace {

using I = std::vector<int64_t>;

Tensor F32(Shape s, std::vector<float> v) {
  return Tensor::fromVector<float>(std::move(s), v);
}

Attrs attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  Attrs a;
  for (const auto& [k, v] : list)
    a.set(k, v);
  return a;
}

using nntest::run1;

void expectValues(const Tensor& t, Shape dims, std::vector<float> want, float tol = 1e-6f) {
  ASSERT_EQ(t.dims(), dims);
  std::vector<float> got = t.toVector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

const Tensor k3x3 = F32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});

TEST(NNHand, ConvValidAndPaddedStrided) {
  const Tensor ones = F32({1, 1, 2, 2}, {1, 1, 1, 1});
  expectValues(run1(NodeKind::Conv, {}, {k3x3, ones}), {1, 1, 2, 2}, {12, 16, 24, 28});
  // pads 1, stride 2: windows start at -1 and 1 in each dimension.
  expectValues(
      run1(NodeKind::Conv, attrs({{"pads", I{1, 1, 1, 1}}, {"strides", I{2, 2}}}), {k3x3, ones}),
      {1, 1, 2, 2}, {1, 5, 11, 28});
  // Bias is added to every position.
  expectValues(run1(NodeKind::Conv, {}, {k3x3, ones, F32({1}, {0.5f})}), {1, 1, 2, 2},
               {12.5f, 16.5f, 24.5f, 28.5f});
}

TEST(NNHand, ConvTransposeScattersTheFilter) {
  // x = [[1, 2]], filter [[1, 10]] along w, stride 2 -> [1, 10, 2, 20].
  Tensor y = run1(NodeKind::ConvTranspose, attrs({{"strides", I{1, 2}}}),
                  {F32({1, 1, 1, 2}, {1, 2}), F32({1, 1, 1, 2}, {1, 10})});
  expectValues(y, {1, 1, 1, 4}, {1, 10, 2, 20});
}

TEST(NNHand, AveragePoolPaddingCount) {
  const Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  Attrs a = attrs({{"kernel_shape", I{2, 2}}, {"pads", I{1, 1, 1, 1}}});
  expectValues(run1(NodeKind::AveragePool, a, {x}), {1, 1, 3, 3},
               {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
  a.set("count_include_pad", int64_t(1));
  expectValues(run1(NodeKind::AveragePool, a, {x}), {1, 1, 3, 3},
               {0.25f, 0.75f, 0.5f, 1, 2.5f, 1.5f, 0.75f, 1.75f, 1});
}

TEST(NNHand, MaxPoolAndGlobalPools) {
  expectValues(run1(NodeKind::MaxPool, attrs({{"kernel_shape", I{2, 2}}}), {k3x3}), {1, 1, 2, 2},
               {5, 6, 8, 9});
  expectValues(run1(NodeKind::GlobalMaxPool, {}, {k3x3}), {1, 1, 1, 1}, {9});
  expectValues(run1(NodeKind::GlobalAveragePool, {}, {k3x3}), {1, 1, 1, 1}, {5});
}

TEST(NNHand, SoftmaxFamily) {
  const Tensor x = F32({1, 3}, {1, 2, 3});
  expectValues(run1(NodeKind::Softmax, {}, {x}), {1, 3}, {0.09003057f, 0.24472847f, 0.66524096f});
  expectValues(run1(NodeKind::LogSoftmax, {}, {x}), {1, 3},
               {-2.40760596f, -1.40760596f, -0.40760596f}, 1e-5f);
  // The first of equal maxima wins.
  expectValues(run1(NodeKind::Hardmax, {}, {F32({1, 4}, {3, 7, 7, 1})}), {1, 4}, {0, 1, 0, 0});
}

TEST(NNHand, GemmAndMatMul) {
  const Tensor a = F32({2, 2}, {1, 2, 3, 4}), b = F32({2, 2}, {5, 6, 7, 8});
  expectValues(run1(NodeKind::MatMul, {}, {a, b}), {2, 2}, {19, 22, 43, 50});
  expectValues(run1(NodeKind::Gemm, attrs({{"transB", int64_t(1)}}), {a, b}), {2, 2},
               {17, 23, 39, 53});
  // alpha 2, beta 10, scalar C.
  expectValues(run1(NodeKind::Gemm, attrs({{"alpha", 2.0}, {"beta", 10.0}}), {a, b, F32({}, {1})}),
               {2, 2}, {48, 54, 96, 110});
}

TEST(NNHand, BatchNormAndLayerNorm) {
  // (x - mean) / sqrt(var + eps) * scale + bias with var + eps = 4.
  Tensor y = run1(NodeKind::BatchNormalization, attrs({{"epsilon", 0.0}}),
                  {F32({1, 2, 1, 2}, {1, 3, 5, 9}), F32({2}, {1, 2}), F32({2}, {0, 1}),
                   F32({2}, {1, 5}), F32({2}, {4, 4})});
  expectValues(y, {1, 2, 1, 2}, {0, 1, 1, 5});
  // Row [1, 3]: mean 2, variance 1 -> [-1, 1].
  Tensor ln = run1(NodeKind::LayerNormalization, attrs({{"epsilon", 0.0}}),
                   {F32({2, 2}, {1, 3, 0, 4}), F32({2}, {1, 1})});
  expectValues(ln, {2, 2}, {-1, 1, -1, 1});
}

/// Expects create() of `kind` on `inputs` to throw an Error naming the node and
/// containing `reason`.
void expectRejected(NodeKind kind, std::vector<Type> inputs, const Attrs& a,
                    const std::string& reason) {
  Module m;
  Function* f = m.createFunction("main");
  std::vector<NodeValue> ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(m.createPlaceholder("in" + std::to_string(i), inputs[i]));
  try {
    f->create(kind, "bad_node", ins, a);
    FAIL() << "expected an error containing '" << reason << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(std::string(nodeKindName(kind)) + " node 'bad_node'"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find(reason), std::string::npos) << msg;
  }
}

Type T(Shape s) {
  return Type(ElemKind::Float32, std::move(s));
}

TEST(NNErrors, IllFormedNodesNameTheNode) {
  using K = NodeKind;
  expectRejected(K::Conv, {T({1, 3, 5, 5}), T({4, 2, 3, 3})}, {}, "channels");
  expectRejected(K::Conv, {T({3, 5}), T({4, 3})}, {}, "expected N x C");
  expectRejected(K::Conv, {T({1, 3, 5, 5}), T({4, 3, 3, 3}), T({3})}, {}, "bias");
  expectRejected(K::Conv, {T({1, 3, 2, 2}), T({4, 3, 3, 3})}, {}, "larger than the padded");
  expectRejected(K::Conv, {T({1, 3, 5, 5}), T({4, 3, 3, 3})}, attrs({{"kernel_shape", I{2, 2}}}),
                 "disagrees");
  expectRejected(K::Conv, {T({1, 4, 5, 5}), T({4, 2, 3, 3})}, attrs({{"group", int64_t(3)}}),
                 "group");
  expectRejected(K::MaxPool, {T({1, 3, 5, 5})}, {}, "kernel_shape is required");
  expectRejected(K::MaxPool, {T({1, 3, 5, 5})}, attrs({{"kernel_shape", I{3}}}), "expected 2");
  expectRejected(K::MaxPool, {T({1, 3, 5, 5})},
                 attrs({{"kernel_shape", I{2, 2}}, {"strides", I{0, 1}}}), "strides");
  expectRejected(K::MatMul, {T({2, 3}), T({4, 5})}, {}, "inner dimensions");
  expectRejected(K::MatMul, {T({2, 2, 3}), T({3, 3, 4})}, {}, "broadcast");
  expectRejected(K::Gemm, {T({2, 3}), T({3, 4}), T({3})}, {}, "does not broadcast");
  expectRejected(K::Gemm, {T({2, 3, 1}), T({3, 4})}, {}, "rank");
  expectRejected(K::BatchNormalization, {T({1, 3, 2, 2}), T({3}), T({3}), T({2}), T({3})}, {},
                 "mean");
  expectRejected(K::Softmax, {T({2, 3})}, attrs({{"axis", int64_t(2)}}), "out of range");
  expectRejected(K::LayerNormalization, {T({2, 3}), T({2})}, {}, "scale");
  expectRejected(K::ConvTranspose, {T({1, 3, 5, 5}), T({2, 3, 3, 3})}, {}, "channels");
  expectRejected(K::Conv, {Type(ElemKind::Int64, {1, 3, 5, 5}), T({4, 3, 3, 3})}, {},
                 "element kind");
}

} // namespace
