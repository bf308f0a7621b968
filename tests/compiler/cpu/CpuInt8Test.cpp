// The int8 operators on the cpu backend: float graphs quantized by the quantizer
// (ember::quant::quantizeModel, calibrated on random inputs) and quantized zoo models
// (ResNet-18, MobileNetV2, ...) must give the interpreter's bytes exactly, with 1 and 3
// threads.
#include "CpuTestUtil.h"

#include "ember/backend/Backend.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/quantization/Profile.h"
#include "ember/quantization/Quantize.h"
#include "ember/support/Npy.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>

namespace ember {
namespace {

using namespace cputest;

Attrs ints(std::initializer_list<std::pair<const char*, std::vector<int64_t>>> l) {
  Attrs a;
  for (const auto& [k, v] : l)
    a.set(k, v);
  return a;
}

/// Quantizes g's function, checks the cpu backend runs it int8 and returns the same
/// bytes as the interpreter (1 and 3 threads).
void expectBitExact(G& g, size_t minInt8Nodes, std::vector<NodeKind> int8Kinds = {}) {
  std::vector<TensorMap> calib;
  for (int i = 0; i < 4; ++i)
    calib.push_back(g.randomInputs());
  Function* q = quant::quantizeModel(*g.f, calib);
  size_t int8Nodes = 0;
  for (const auto& n : q->nodes())
    int8Nodes += n->resultType().kind == ElemKind::Int8;
  EXPECT_GE(int8Nodes, minInt8Nodes);
  for (NodeKind k : int8Kinds) {
    size_t found = 0;
    for (const auto& n : q->nodes())
      found += n->kind() == k && n->resultType().kind == ElemKind::Int8;
    EXPECT_GT(found, 0u) << "no int8 " << nodeKindName(k);
  }
  const auto missing = unsupportedNodes(*createBackend("cpu"), *q);
  ASSERT_TRUE(missing.empty()) << missing.front();
  for (int run = 0; run < 2; ++run) {
    const TensorMap in = g.randomInputs();
    const TensorMap ref = createInterpreterBackend()->compile(*q)->run(in);
    for (int threads : {1, 3}) {
      const TensorMap got = runCpu(*q, in, threads);
      for (const auto& [name, t] : ref)
        EXPECT_TRUE(got.at(name) == t)
            << name << ", " << threads << " thread(s): " << compare(got, ref, 0);
    }
  }
}

TEST(CpuInt8, ConvBlock) {
  G g;
  NodeValue x = g.input("x", {1, 6, 13, 13});
  NodeValue c1 =
      g.node(NodeKind::Conv, "c1", {x, g.constant("w1", {16, 6, 3, 3}), g.constant("b1", {16})},
             ints({{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}}));
  NodeValue r1 = g.node(NodeKind::Relu, "r1", {c1});
  NodeValue c2 = g.node(NodeKind::Conv, "c2", {r1, g.constant("w2", {16, 16, 1, 1})});
  NodeValue add = g.node(NodeKind::Add, "add", {c2, r1});
  NodeValue r2 = g.node(NodeKind::Relu, "r2", {add});
  NodeValue mp =
      g.node(NodeKind::MaxPool, "mp", {r2},
             ints({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}));
  NodeValue gap = g.node(NodeKind::GlobalAveragePool, "gap", {mp});
  NodeValue flat = g.node(NodeKind::Reshape, "flat", {gap}, ints({{"shape", {1, 16}}}));
  g.output("y", g.node(NodeKind::Gemm, "fc",
                       {flat, g.constant("wf", {16, 10}), g.constant("bf", {10})}));
  expectBitExact(g, 8,
                 {NodeKind::Conv, NodeKind::Add, NodeKind::MaxPool, NodeKind::GlobalAveragePool,
                  NodeKind::Gemm});
}

TEST(CpuInt8, DepthwiseClipMulConcat) {
  G g;
  NodeValue x = g.input("x", {2, 8, 10, 10});
  Attrs dw = ints({{"pads", {1, 1, 1, 1}}});
  dw.set("group", int64_t(8));
  NodeValue d =
      g.node(NodeKind::Conv, "dw", {x, g.constant("wd", {8, 1, 3, 3}), g.constant("bd", {8})}, dw);
  Attrs clip;
  clip.set("min", 0.0);
  clip.set("max", 1.5);
  NodeValue c = g.node(NodeKind::Clip, "clip", {d}, clip);
  NodeValue m = g.node(NodeKind::Mul, "mul", {c, x});
  NodeValue p = g.node(NodeKind::Conv, "pw", {m, g.constant("wp", {5, 8, 1, 1})});
  Attrs cat;
  cat.set("axis", int64_t(1));
  g.output("y", g.node(NodeKind::Concat, "cat", {p, c}, cat));
  g.output("s", g.node(NodeKind::Sigmoid, "sig", {p}));
  Attrs avg = ints({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}});
  g.output("avg", g.node(NodeKind::AveragePool, "avg", {c}, avg));
  avg.set("count_include_pad", int64_t(1));
  g.output("avgpad", g.node(NodeKind::AveragePool, "avgpad", {m}, avg));
  expectBitExact(g, 7, {NodeKind::Conv, NodeKind::Mul, NodeKind::Concat, NodeKind::AveragePool});
}

TEST(CpuInt8, MatMulWithConstantWeights) {
  G g;
  NodeValue x = g.input("x", {2, 5, 12});
  NodeValue mm = g.node(NodeKind::MatMul, "mm", {x, g.constant("w", {12, 7})});
  NodeValue add = g.node(NodeKind::Add, "add", {mm, g.constant("b", {7})});
  g.output("y", g.node(NodeKind::MatMul, "mm2", {add, g.constant("w2", {7, 3})}));
  expectBitExact(g, 3, {NodeKind::MatMul, NodeKind::Add});
}

std::string modelsDir() {
  if (const char* env = std::getenv("EMBER_MODELS_DIR"))
    return env;
  return EMBER_DEFAULT_MODELS_DIR;
}

class CpuInt8Zoo : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuInt8Zoo, BitExactWithTheInterpreter) {
  const std::string dir = modelsDir() + "/" + GetParam();
  if (!std::ifstream(dir + "/model.onnx").good() || !std::ifstream(dir + "/input.npy").good())
    GTEST_SKIP() << "no " << dir << "/model.onnx (run `ninja models` or set EMBER_MODELS_DIR)";
  std::unique_ptr<Module> m = importOnnxFile(dir + "/model.onnx");
  Function& f = *m->functions().front();
  const TensorMap in = {{f.inputs().at(0)->name(), readNpy(dir + "/input.npy")}};
  Function* q = quant::quantizeModel(f, {in});
  std::map<std::string, int> kinds;
  for (const auto& n : q->nodes())
    ++kinds[std::string(n->kindName()) + (n->resultType().kind == ElemKind::Int8 ? "/i8" : "")];
  const auto missing = unsupportedNodes(*createBackend("cpu"), *q);
  ASSERT_TRUE(missing.empty()) << missing.size() << " unsupported, first: " << missing.front();
  const TensorMap ref = createInterpreterBackend()->compile(*q)->run(in);
  for (int threads : {1, 2}) {
    const TensorMap got = runCpu(*q, in, threads);
    for (const auto& [name, t] : ref)
      EXPECT_TRUE(got.at(name) == t)
          << name << ", " << threads << " thread(s): " << compare(got, ref, 0);
  }
  std::cout << "[cpu int8 zoo] " << GetParam() << ": bit-exact; nodes";
  for (const auto& [k, c] : kinds)
    std::cout << " " << k << " x" << c;
  std::cout << "\n";
}

INSTANTIATE_TEST_SUITE_P(Models, CpuInt8Zoo,
                         ::testing::Values("resnet18", "mobilenet_v2", "resnet50"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param);
                         });

} // namespace
} // namespace ember
