// ONNX import of the elementwise, reduction, data-movement and quantization operators:
// opset variants (attributes vs. constant operands), negative axes, shape arithmetic
// folded at import time, and models that must be rejected with an error naming the
// node. Models, inputs and expected outputs come from gen_ops_onnx.py (numpy and
// PyTorch), written into the build folder at build time.
#include "ember/backend/Backend.h"
#include "ember/graph/Graph.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ember;

namespace {

const std::string kDir = std::string(EMBER_BINARY_DIR) + "/tests/compiler/ops/onnx/";

/// Imports NAME.onnx, feeds NAME.in.<placeholder>.npy, compares every output i with
/// NAME.out<i>.npy (floats within 1e-5 + 1e-5 * |want|, other kinds exactly).
std::unique_ptr<Module> runCase(const std::string& name) {
  std::unique_ptr<Module> m = importOnnxFile(kDir + name + ".onnx");
  Function* f = m->functions().front().get();
  TensorMap feed;
  for (const auto& p : m->placeholders())
    feed[p->name()] = readNpy(kDir + name + ".in." + p->name() + ".npy");
  TensorMap out = createInterpreterBackend()->compile(*f)->run(feed);
  for (size_t i = 0; i < f->outputs().size(); ++i) {
    const Tensor want = readNpy(kDir + name + ".out" + std::to_string(i) + ".npy");
    const Tensor& got = out.at(f->outputs()[i].name);
    EXPECT_EQ(got.kind(), want.kind()) << name << " output " << i;
    EXPECT_EQ(got.dims(), want.dims()) << name << " output " << i;
    if (got.kind() != want.kind() || got.dims() != want.dims())
      continue;
    if (got.kind() != ElemKind::Float32) {
      EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), got.sizeInBytes()))
          << name << " output " << i << ": " << got.summary() << " vs " << want.summary();
      continue;
    }
    const float* g = got.data<float>();
    const float* w = want.data<float>();
    for (int64_t k = 0; k < got.size(); ++k)
      EXPECT_NEAR(g[k], w[k], 1e-5 + 1e-5 * std::fabs(w[k])) << name << " element " << k;
  }
  return m;
}

class OpsImport : public ::testing::TestWithParam<const char*> {};

TEST_P(OpsImport, MatchesNumpy) {
  runCase(GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Models, OpsImport,
    ::testing::Values("shape_chain", "int64_arith", "slice_negative_step", "slice_opset9",
                      "split_sizes_input", "split_equal_opset11", "squeeze_unsqueeze_opset11",
                      "squeeze_unsqueeze_opset13", "flatten_negative_axis", "pad_reflect",
                      "pad_opset2_value", "reduce_mean_negative_axis", "reduce_sum_axes_input",
                      "argmin_last", "cast_chain", "resize_linear_half_pixel",
                      "resize_nearest_sizes", "upsample_opset9", "clip_opset11",
                      "clip_opset10_attrs", "quant_per_axis", "quant_uint8",
                      "range_constant_of_shape", "variadic_mean_max", "gather_negative_indices"));

TEST(OpsImportFolding, ShapeArithmeticFoldsIntoOneReshape) {
  std::unique_ptr<Module> m = runCase("shape_chain");
  const Function& f = *m->functions().front();
  ASSERT_EQ(f.numNodes(), 1u);
  const Node& n = *f.nodes().front();
  EXPECT_EQ(n.kind(), NodeKind::Reshape);
  EXPECT_EQ(n.attrs().getInts("shape"), (std::vector<int64_t>{2, 12}));
}

TEST(OpsImportFolding, Int64ArithmeticLeavesOnlyExpand) {
  std::unique_ptr<Module> m = runCase("int64_arith");
  const Function& f = *m->functions().front();
  ASSERT_EQ(f.numNodes(), 1u);
  EXPECT_EQ(f.nodes().front()->kind(), NodeKind::Expand);
}

/// Expects importing NAME.onnx to throw E whose message contains every one of `parts`.
template <typename E> void expectRejected(const std::string& name, std::vector<std::string> parts) {
  try {
    importOnnxFile(kDir + name + ".onnx");
    FAIL() << name << ": expected an error";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << name << ": '" << p << "' not in: " << msg;
  }
}

TEST(OpsImportErrors, ShapesThatDoNotBroadcast) {
  expectRejected<Error>("bad_broadcast", {"bad_add", "Add", "do not broadcast"});
}

TEST(OpsImportErrors, ReshapeToWrongElementCount) {
  expectRejected<Error>("bad_reshape_count", {"bad_reshape", "Reshape", "element counts differ"});
}

TEST(OpsImportErrors, NonConstantShapeOperand) {
  expectRejected<Error>("bad_nonconstant_shape", {"dyn_reshape", "known at compile time"});
}

TEST(OpsImportErrors, UnsupportedFeaturesAreUnsupported) {
  expectRejected<Unsupported>("bad_cast_bfloat16", {"to_bf16", "BFLOAT16"});
  expectRejected<Unsupported>("bad_dropout_training", {"drop_train", "random drops"});
  expectRejected<Unsupported>("bad_quant_dynamic_scale",
                              {"quant_dyn", "scale must be known at compile time"});
}

} // namespace
