// Tests of the ONNX importer framework on small models made by gen_importer_models.py
// (onnx.helper); expected values come from numpy in that script.
#include "ember/backend/Backend.h"
#include "ember/graph/Dump.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/importer/OnnxOpImporter.h"
#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

using namespace ember;

namespace {

std::string modelPath(const std::string& name) {
  return std::string(IMPORTER_MODELS_DIR) + "/" + name + ".onnx";
}
std::string npyPath(const std::string& name, const char* kind, int i) {
  return std::string(IMPORTER_MODELS_DIR) + "/" + name + "." + kind + std::to_string(i) + ".npy";
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string writeTemp(const std::string& name, const std::string& bytes) {
  std::string path = std::string(IMPORTER_MODELS_DIR) + "/tmp_" + name + ".tmp";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

/// The message of the ember::Error (or subclass E) that `fn` throws; fails otherwise.
template <typename E = Error, typename Fn> std::string errorOf(Fn fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// Runs the module's function on the interpreter with one input named "x".
TensorMap runWithX(Module& m, const Tensor& x) {
  auto exe = createBackend("interp")->compile(*m.functions().at(0));
  return exe->run({{"x", x}});
}

void expectNear(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dims(), want.dims());
  for (int64_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got.getAsDouble(i), want.getAsDouble(i), 1e-6) << "element " << i;
}

} // namespace

TEST(OnnxImporter, ValidModelRunsAndMatchesNumpy) {
  auto m = importOnnxFile(modelPath("valid"));
  Function& f = *m->functions().at(0);
  ASSERT_EQ(f.outputs().size(), 1u);
  EXPECT_EQ(f.outputs()[0].name, "y");
  ASSERT_NE(m->getPlaceholder("x"), nullptr);
  TensorMap out = runWithX(*m, readNpy(npyPath("valid", "in", 0)));
  expectNear(out.at("y"), readNpy(npyPath("valid", "out", 0)));
}

TEST(OnnxImporter, ListsAllUnsupportedOperatorsAtOnce) {
  std::string msg = errorOf<Unsupported>([] { importOnnxFile(modelPath("unsupported")); });
  EXPECT_TRUE(contains(msg, modelPath("unsupported"))) << msg;
  EXPECT_TRUE(contains(msg, "4 unsupported operators")) << msg;
  EXPECT_TRUE(contains(msg, "NonMaxSuppression 'nms_1'")) << msg;
  EXPECT_TRUE(contains(msg, "com.example::MyCustomOp 'custom_1'")) << msg;
  EXPECT_TRUE(contains(msg, "StringNormalizer 'StringNormalizer_3'")) << msg;
  EXPECT_TRUE(contains(msg, "If 'if_1'")) << msg;
  EXPECT_FALSE(contains(msg, "relu_ok")) << msg;
}

TEST(OnnxImporter, TruncatedFileIsAnError) {
  std::string bytes = readBytes(modelPath("valid"));
  ASSERT_GT(bytes.size(), 40u);
  for (size_t keep : {bytes.size() / 2, bytes.size() - 3, size_t(1), size_t(0)}) {
    std::string path = writeTemp("truncated.onnx", bytes.substr(0, keep));
    std::string msg = errorOf([&] { importOnnxFile(path); });
    EXPECT_TRUE(contains(msg, path)) << msg;
  }
}

TEST(OnnxImporter, NonOnnxFilesAreErrors) {
  std::string text = writeTemp("text.onnx", "This is a text file, not an ONNX model.\n");
  std::string msg = errorOf([&] { importOnnxFile(text); });
  EXPECT_TRUE(contains(msg, text) && contains(msg, "not an ONNX model")) << msg;

  std::string random(4096, '\0');
  uint32_t s = 12345;
  for (char& c : random) {
    s = s * 1664525u + 1013904223u;
    c = static_cast<char>(s >> 24);
  }
  std::string rnd = writeTemp("random.onnx", random);
  msg = errorOf([&] { importOnnxFile(rnd); });
  EXPECT_TRUE(contains(msg, rnd)) << msg;

  msg = errorOf([] { importOnnxFile("/nonexistent/dir/model.onnx"); });
  EXPECT_TRUE(contains(msg, "/nonexistent/dir/model.onnx")) << msg;
}

TEST(OnnxImporter, OpsetOutOfRange) {
  std::string msg = errorOf<Unsupported>([&] { importOnnxFile(modelPath("opset18")); });
  EXPECT_TRUE(contains(msg, "opset 18")) << msg;
  EXPECT_TRUE(contains(msg, "1-17")) << msg;
}

TEST(OnnxImporter, OldOpsetsAreTakenOperatorByOperator) {
  // Relu-6 is the definition opset 7 still has: imported.
  auto m = importOnnxFile(modelPath("opset6"));
  EXPECT_NE(m->getPlaceholder("x"), nullptr);
  // Add-6 (with its broadcast attribute) predates opset 7's Add-7: listed, and named.
  std::string msg = errorOf<Unsupported>([] { importOnnxFile(modelPath("opset6_add")); });
  EXPECT_TRUE(contains(msg, "1 unsupported operator")) << msg;
  EXPECT_TRUE(contains(msg, "Add 'add' (version 6;")) << msg;
  EXPECT_FALSE(contains(msg, "Relu")) << msg;
}

TEST(OnnxImporter, UnknownDimensionNeedsAnOverride) {
  std::string msg = errorOf([] { importOnnxFile(modelPath("symbolic")); });
  EXPECT_TRUE(contains(msg, "input 'x'") && contains(msg, "'N'")) << msg;

  OnnxImportOptions opts;
  opts.inputShapes["x"] = {5, 3};
  auto m = importOnnxFile(modelPath("symbolic"), opts);
  EXPECT_EQ(m->getPlaceholder("x")->resultType().dims, (Shape{5, 3}));

  opts.inputShapes["x"] = {5, 3, 1};
  msg = errorOf([&] { importOnnxFile(modelPath("symbolic"), opts); });
  EXPECT_TRUE(contains(msg, "rank")) << msg;
  OnnxImportOptions wrongName;
  wrongName.inputShapes["nope"] = {1};
  msg = errorOf([&] { importOnnxFile(modelPath("symbolic"), wrongName); });
  EXPECT_TRUE(contains(msg, "'nope'")) << msg;
}

TEST(OnnxImporter, Float64IsImportedBfloat16IsUnsupported) {
  auto m = importOnnxFile(modelPath("float64"));
  EXPECT_EQ(m->getPlaceholder("x")->resultType().kind, ElemKind::Float64);
  std::string msg = errorOf<Unsupported>([] { importOnnxFile(modelPath("bfloat16")); });
  EXPECT_TRUE(contains(msg, "input 'x'") && contains(msg, "element type BFLOAT16")) << msg;
}

TEST(OnnxImporter, ShapeGatherConcatReshapeIsFolded) {
  auto m = importOnnxFile(modelPath("shape_chain"));
  const Function& f = *m->functions().at(0);
  std::string dump = dumpText(f);
  ASSERT_EQ(f.numNodes(), 1u) << dump;
  EXPECT_EQ(f.nodes().front()->kind(), NodeKind::Reshape) << dump;
  EXPECT_EQ(f.nodes().front()->attrs().getInts("shape"), (std::vector<int64_t>{2, 12})) << dump;
  EXPECT_FALSE(contains(dump, "Shape") || contains(dump, "Gather") || contains(dump, "Concat"))
      << dump;
  EXPECT_TRUE(m->constants().empty()) << dump; // folded intermediates are erased
  TensorMap out = runWithX(*m, readNpy(npyPath("shape_chain", "in", 0)));
  expectNear(out.at("y"), readNpy(npyPath("shape_chain", "out", 0)));
}

TEST(OnnxImporter, IdentityAndDropoutAreRemoved) {
  auto m = importOnnxFile(modelPath("identity_dropout"));
  const Function& f = *m->functions().at(0);
  ASSERT_EQ(f.numNodes(), 1u) << dumpText(f);
  EXPECT_EQ(f.nodes().front()->kind(), NodeKind::Relu);
  TensorMap out = runWithX(*m, readNpy(npyPath("identity_dropout", "in", 0)));
  expectNear(out.at("y"), readNpy(npyPath("identity_dropout", "out", 0)));
}

TEST(OnnxImporter, InitializerListedAsInputIsAConstant) {
  auto m = importOnnxFile(modelPath("init_as_input"));
  EXPECT_EQ(m->getPlaceholder("W"), nullptr);
  ASSERT_EQ(m->functions().at(0)->inputs().size(), 1u);
  EXPECT_EQ(m->functions().at(0)->inputs()[0]->name(), "x");
  TensorMap out = runWithX(*m, readNpy(npyPath("init_as_input", "in", 0)));
  expectNear(out.at("y"), readNpy(npyPath("init_as_input", "out", 0)));
}

TEST(OnnxImporter, ConstantInputsOption) {
  OnnxImportOptions opts;
  Tensor w = Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  opts.constantInputs.emplace("x", w);
  auto m = importOnnxFile(modelPath("identity_dropout"), opts);
  const Function& f = *m->functions().at(0);
  // Everything folds: relu(constant) is a constant output.
  EXPECT_EQ(f.numNodes(), 0u) << dumpText(f);
  auto out = createBackend("interp")->compile(f)->run({});
  EXPECT_EQ(out.at("y"), w);
}

TEST(OnnxImporter, UndefinedValueIsAnError) {
  std::string msg = errorOf([] { importOnnxFile(modelPath("not_topological")); });
  EXPECT_TRUE(contains(msg, "relu_first") && contains(msg, "'t'")) << msg;
}

TEST(OnnxImporter, NodeErrorsNameFileNodeAndOpType) {
  std::string msg = errorOf([] { importOnnxFile(modelPath("bad_shapes")); });
  EXPECT_TRUE(contains(msg, modelPath("bad_shapes"))) << msg;
  EXPECT_TRUE(contains(msg, "node 'add_bad' (Add)")) << msg;
}

TEST(OnnxImporter, ConstantGraphOutput) {
  auto m = importOnnxFile(modelPath("const_output"));
  const Function& f = *m->functions().at(0);
  ASSERT_EQ(f.outputs().size(), 2u);
  EXPECT_EQ(f.outputs()[1].value.node->kind(), NodeKind::Constant);
  EXPECT_EQ(f.outputs()[1].value.node->name(), "Constant_0");
  Tensor x(ElemKind::Float32, {2, 3});
  TensorMap out = runWithX(*m, x);
  expectNear(out.at("c"), readNpy(npyPath("const_output", "out", 0)));
}

TEST(OnnxImporter, ExternalDataIsUnsupported) {
  std::string msg = errorOf<Unsupported>([] { importOnnxFile(modelPath("external")); });
  EXPECT_TRUE(contains(msg, "initializer 'w'") && contains(msg, "external")) << msg;
}

TEST(OnnxImporter, InitializerKindsFromTypedFields) {
  auto m = importOnnxFile(modelPath("init_kinds"));
  const Function& f = *m->functions().at(0);
  auto value = [&](const std::string& name) -> const Tensor& {
    for (const auto& o : f.outputs())
      if (o.name == name)
        return o.value.node->payload();
    throw std::runtime_error("no output " + name);
  };
  EXPECT_EQ(value("i8").toVector<int8_t>(), (std::vector<int8_t>{-128, 0, 127}));
  EXPECT_EQ(value("bl").toVector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(value("i32").toVector<int32_t>(), (std::vector<int32_t>{-7, 2147483647}));
  EXPECT_EQ(value("i64").toVector<int64_t>(), (std::vector<int64_t>{-(int64_t(1) << 40), 5}));
  EXPECT_EQ(value("raw").toVector<float>(), (std::vector<float>{1.5f, -2.25f}));
}

TEST(OnnxImporter, SupportedOpsAreSortedAndIncludeTheFrameworkOnes) {
  std::vector<std::string> ops = supportedOnnxOps();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  for (const char* op : {"Constant", "Identity", "Dropout", "Shape", "Size"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  EXPECT_EQ(findOnnxOp("NonMaxSuppression"), nullptr);
}

// ---- strictness ------------------------------------------------------------------

TEST(OnnxImporter, UnknownAttributeIsAnErrorNamingNodeOpAndAttribute) {
  std::string msg = errorOf([] { importOnnxFile(modelPath("attr_typo")); });
  EXPECT_EQ(msg, modelPath("attr_typo") +
                     ": node 'conv1' (Conv): unknown attribute 'stirdes' (Conv takes auto_pad, "
                     "dilations, group, kernel_shape, pads, strides)");
}

TEST(OnnxImporter, AttributeOfAnotherOpsetIsUnknown) {
  // Clip took min/max as attributes before opset 11; at opset 13 the attribute was
  // silently ignored (y = x instead of max(x, 0)).
  std::string msg = errorOf([] { importOnnxFile(modelPath("attr_clip13")); });
  EXPECT_TRUE(contains(msg, "node 'clip' (Clip): unknown attribute 'min' (Clip takes no "
                            "attributes)"))
      << msg;
}

TEST(OnnxImporter, UnsupportedAttributesAreListedWithUnsupportedOperators) {
  // LpNormalization (axis, p) is no Ember operator: register one that knows only axis.
  registerOnnxOp("LpNormalization", {"axis"},
                 [](OnnxNodeContext& c) { c.setOutput(0, c.input(0)); });
  std::string msg = errorOf<Unsupported>([] { importOnnxFile(modelPath("attr_unsupported")); });
  EXPECT_TRUE(contains(msg, "1 unsupported operator:\n  NonMaxSuppression 'nms'")) << msg;
  EXPECT_TRUE(contains(msg, "1 unsupported attribute:\n  LpNormalization 'lpnorm': attribute 'p'"))
      << msg;
}

TEST(OnnxImporter, EveryDeclaredAttributeIsAnOnnxAttribute) {
  // The declarations decide what is refused; a misspelt one would hide a real attribute.
  for (const std::string& op : supportedOnnxOps()) {
    std::set<std::string> onnxAttrs;
    for (int v = 7; v <= 17; ++v)
      if (const auto* s = onnx::OpSchemaRegistry::Schema(op, v, onnx::ONNX_DOMAIN))
        for (const auto& a : s->attributes())
          onnxAttrs.insert(a.first);
    for (const std::string& a : findOnnxOp(op)->attrs)
      EXPECT_TRUE(onnxAttrs.count(a)) << op << " declares '" << a << "', which ONNX 7-17 lacks";
    EXPECT_TRUE(std::is_sorted(findOnnxOp(op)->attrs.begin(), findOnnxOp(op)->attrs.end()));
  }
}

TEST(OnnxImporter, DeclaredOutputShapeMustMatchInference) {
  std::string msg = errorOf([] { importOnnxFile(modelPath("declared_shape")); });
  EXPECT_EQ(msg, modelPath("declared_shape") +
                     ": output 'y': the model declares float32[1, 4, 3, 3], Ember infers "
                     "float32[1, 4, 6, 6]");
  msg = errorOf([] { importOnnxFile(modelPath("declared_kind")); });
  EXPECT_TRUE(contains(msg, "output 'y': the model declares int64[2, 3], Ember infers "
                            "float32[2, 3]"))
      << msg;
  msg = errorOf([] { importOnnxFile(modelPath("declared_rank")); });
  EXPECT_TRUE(contains(msg, "output 'y': the model declares float32[2, 3, 1], Ember infers "
                            "float32[2, 3]"))
      << msg;
}

TEST(OnnxImporter, DeclaredValueInfoMustMatchInference) {
  std::string msg = errorOf([] { importOnnxFile(modelPath("declared_value_info")); });
  EXPECT_TRUE(contains(msg, "value 'r': the model declares float32[3, 2], Ember infers "
                            "float32[2, 3]"))
      << msg;
}

TEST(OnnxImporter, SymbolicDeclaredDimensionsMatchAnything) {
  auto m = importOnnxFile(modelPath("declared_symbolic"));
  EXPECT_EQ(m->functions().at(0)->outputs().size(), 2u);
}

TEST(OnnxImporter, OverriddenFixedInputDimensionRelaxesDeclaredShapes) {
  // identity_dropout declares x and y as [2, 3]; a caller who runs it on [4, 3] gets
  // [4, 3] (declared shapes downstream of an overridden fixed dimension are stale).
  OnnxImportOptions opts;
  opts.inputShapes["x"] = {4, 3};
  auto m = importOnnxFile(modelPath("identity_dropout"), opts);
  EXPECT_EQ(m->functions().at(0)->outputs()[0].value.dims(), (Shape{4, 3}));
}

TEST(OnnxImporter, AbsurdSizesAreErrorsNamingTheNode) {
  // Each model asks for an absurd tensor through an attribute or a shape operand; the
  // import fails before allocating, naming the node and why (not "out of memory", not a
  // size that wrapped around).
  const std::pair<const char*, std::vector<const char*>> cases[] = {
      {"huge_conv_pads", {"node 'conv_pads' (Conv)", "too large"}},
      {"huge_conv_strides", {"node 'conv_same' (Conv)", "output size overflows"}},
      {"huge_resize", {"node 'resize_big' (Resize)", "too large"}},
      {"huge_tile", {"node 'tile_big' (Tile)", "too large"}},
      {"huge_expand", {"node 'expand_big' (Expand)", "too large"}},
      {"huge_constant_of_shape", {"node 'cos_big' (ConstantOfShape)", "2^31"}},
      {"huge_reshape", {"node 'reshape_big' (Reshape)", "too many elements"}},
      {"huge_pad", {"node 'pad_big' (Pad)", "overflows"}},
  };
  for (const auto& [name, parts] : cases) {
    std::string msg = errorOf([&] { importOnnxFile(modelPath(name)); });
    EXPECT_TRUE(contains(msg, modelPath(name))) << msg;
    for (const char* p : parts)
      EXPECT_TRUE(contains(msg, p)) << name << ": " << msg;
    EXPECT_FALSE(contains(msg, "-92233") || contains(msg, "memory")) << name << ": " << msg;
  }
}

TEST(OnnxImporter, RunTimeErrorsNameTheModelAndTheNode) {
  auto m = importOnnxFile(modelPath("gather_runtime"));
  auto exe = createBackend("interp")->compile(*m->functions().at(0));
  std::string msg = errorOf([&] { exe->run({{"i", Tensor::fromVector<int64_t>({2}, {1, 100})}}); });
  EXPECT_EQ(msg, modelPath("gather_runtime") +
                     ": node 'gather1' (Gather): an index value 100 is out of range for an axis "
                     "of extent 4");
}

TEST(OnnxImporter, RecurrentLayersAreUnrolledAndMatchNumpy) {
  for (const char* name : {"lstm_bidirectional", "gru_reverse_lbr"}) {
    SCOPED_TRACE(name);
    auto m = importOnnxFile(modelPath(name));
    TensorMap out = runWithX(*m, readNpy(npyPath(name, "in", 0)));
    const std::vector<std::string> outs = std::string(name) == "gru_reverse_lbr"
                                              ? std::vector<std::string>{"y", "y_h"}
                                              : std::vector<std::string>{"y", "y_h", "y_c"};
    for (size_t i = 0; i < outs.size(); ++i) {
      const Tensor want = readNpy(npyPath(name, "out", int(i)));
      const Tensor& got = out.at(outs[i]);
      ASSERT_EQ(got.dims(), want.dims()) << outs[i];
      for (int64_t k = 0; k < got.size(); ++k)
        EXPECT_NEAR(got.getAsDouble(k), want.getAsDouble(k), 1e-5) << outs[i] << " " << k;
    }
  }
}

TEST(OnnxImporter, ShorterRecurrentSequencesAreUnsupported) {
  std::string msg = errorOf<Unsupported>([] { importOnnxFile(modelPath("rnn_short_sequence")); });
  EXPECT_TRUE(contains(msg, "node 'rnn_short' (RNN)")) << msg;
  EXPECT_TRUE(contains(msg, "sequence_lens value 2 differs from the sequence length 3")) << msg;
}

TEST(OnnxImporter, OperandComputedFromOneInputNamesIt) {
  std::string msg =
      errorOf<Unsupported>([] { importOnnxFile(modelPath("range_limit_from_input")); });
  EXPECT_TRUE(contains(msg, "node 'range' (Range)")) << msg;
  EXPECT_TRUE(contains(msg, "it is computed from the graph input 'n' alone")) << msg;
  OnnxImportOptions opts;
  opts.constantInputs.emplace("n", Tensor::scalar<int64_t>(3));
  auto m = importOnnxFile(modelPath("range_limit_from_input"), opts);
  const Node* y = m->functions().at(0)->outputs().at(0).value.node;
  ASSERT_EQ(y->kind(), NodeKind::Constant);
  EXPECT_EQ(y->payload().dims(), Shape{4});
}
