// The int8 operators on the cpu backend: float graphs quantized by the quantizer
// (ember::quant::quantizeModel, calibrated on random inputs) and quantized zoo models
// (ResNet-18, MobileNetV2, ...) must give the interpreter's bytes exactly, with 1 and 3
// threads.
#include "CpuTestUtil.h"
#include "OpCases.h"

#include "ember/backend/Backend.h"
#include "ember/cpu/CpuBackend.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/quantization/Profile.h"
#include "ember/quantization/Quantize.h"
#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>

namespace ember {
namespace {

using namespace cputest;

using ember::test::ints;

/// Quantizes g's function, checks the cpu backend runs it int8 and returns the same
/// bytes as the interpreter (1 and 3 threads, and every node in 7 parts); `check` (optional)
/// inspects the quantized function.
void expectBitExact(G& g, size_t minInt8Nodes, std::vector<NodeKind> int8Kinds = {},
                    const std::function<void(const Function&)>& check = {}) {
  std::vector<TensorMap> calib;
  for (int i = 0; i < 4; ++i)
    calib.push_back(g.randomInputs());
  Function* q = quant::quantizeModel(*g.f, calib);
  if (check)
    check(*q);
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
    // Every node cut into 7 parts that 3 threads take as they come.
    const TensorMap parts = runCpuInParts(*q, in, 3, 7);
    for (const auto& [name, t] : ref)
      EXPECT_TRUE(parts.at(name) == t) << name << ", 7 parts: " << compare(parts, ref, 0);
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

// Kinds without an int8 rule between int8 convolutions stay float between
// DequantizeLinear and QuantizeLinear; the cpu backend computes them with the
// interpreter's float arithmetic, so the bytes are its bytes.
TEST(CpuInt8, FloatNodesBetweenInt8ConvolutionsGiveTheInterpretersBytes) {
  const std::pair<const char*, NodeKind> cases[] = {
      {"ConvAlignCornersResizeConv", NodeKind::Resize}};
  for (const auto& [name, kind] : cases) {
    SCOPED_TRACE(name);
    bool built = false;
    for (const test::OpCase& c : test::opCases())
      if (std::string(c.name) == name) {
        G g;
        c.build(g);
        built = true;
        expectBitExact(g, 2, {NodeKind::Conv}, [kind = kind](const Function& q) {
          size_t floats = 0;
          for (const auto& n : q.nodes())
            floats += n->kind() == kind && n->resultType().kind == ElemKind::Float32;
          EXPECT_EQ(floats, 1u) << "no float " << nodeKindName(kind);
        });
      }
    EXPECT_TRUE(built);
  }
}

// A ConvTranspose with overlapping taps (k = 3, s = 2, p = 1, output_padding 1) between
// int8 convolutions becomes a Conv and a DepthToSpace (convtranspose-to-depthtospace's
// phases), both int8: no float ConvTranspose is left, and the bytes are the interpreter's.
TEST(CpuInt8, OverlappingConvTransposeBetweenInt8ConvolutionsIsInt8) {
  bool built = false;
  for (const test::OpCase& c : test::opCases())
    if (std::string(c.name) == "ConvConvTransposeConv") {
      G g;
      c.build(g);
      built = true;
      expectBitExact(g, 2, {NodeKind::Conv}, [](const Function& q) {
        for (const auto& n : q.nodes())
          EXPECT_NE(n->kind(), NodeKind::ConvTranspose) << n->name();
      });
    }
  EXPECT_TRUE(built);
}

// A bilinear upsampling by 2 (half_pixel) between int8 convolutions is an int8 Resize
// (docs/numerics.md section 4.4): the cpu backend's kernel gives the interpreter's bytes.
TEST(CpuInt8, BilinearResizeBetweenInt8ConvolutionsIsInt8) {
  bool built = false;
  for (const test::OpCase& c : test::opCases())
    if (std::string(c.name) == "ConvResizeConv") {
      G g;
      c.build(g);
      built = true;
      expectBitExact(g, 3, {NodeKind::Conv, NodeKind::Resize});
    }
  EXPECT_TRUE(built);
}

// PRelu with a constant slope per channel between int8 convolutions is an int8 PRelu
// (docs/numerics.md section 4.12), one shared slope a Lut: bit-exact with the interpreter.
TEST(CpuInt8, PReluBetweenInt8ConvolutionsIsInt8) {
  for (const test::OpCase& c : test::opCases())
    if (std::string(c.name) == "ConvPReluConv") {
      G g;
      c.build(g);
      expectBitExact(g, 3, {NodeKind::Conv, NodeKind::PRelu});
    }
  G g;
  NodeValue x = g.input("x", {1, 5, 6, 6});
  NodeValue p = g.node(NodeKind::PRelu, "shared", {x, g.constant("a", {1}, 0.25f, 0.25f)});
  NodeValue q = g.node(NodeKind::PRelu, "per_channel", {p, g.constant("b", {5, 1, 1}, -1.f, 2.f)});
  g.output("y", q);
  expectBitExact(g, 2, {NodeKind::Lut, NodeKind::PRelu});
}

// Upsampling between int8 convolutions: a nearest Resize moves codes, a k = s = 2
// ConvTranspose is an int8 1 x 1 Conv and a DepthToSpace (docs/numerics.md 4.4).
TEST(CpuInt8, UpsamplingBetweenInt8ConvolutionsIsInt8) {
  const std::pair<const char*, NodeKind> cases[] = {
      {"ConvNearestResizeConv", NodeKind::Resize},
      {"ConvUpsamplingConvTransposeConv", NodeKind::DepthToSpace}};
  for (const auto& [name, kind] : cases) {
    SCOPED_TRACE(name);
    size_t built = 0;
    for (const test::OpCase& c : test::opCases())
      if (std::string(c.name) == name) {
        G g;
        c.build(g);
        expectBitExact(g, 3, {NodeKind::Conv, kind});
        ++built;
      }
    EXPECT_EQ(built, 1u);
  }
}

// The int8 3-D convolutions (strided with a relu, grouped and dilated, depthwise with a
// clip, one output channel, one output position, long sums) and 3-D pools of the
// operator table.
TEST(CpuInt8, Conv3dAndPools3d) {
  const std::pair<const char*, std::vector<NodeKind>> cases[] = {
      {"Conv3d", {NodeKind::Conv}},
      {"Conv3dGroupedDilated", {NodeKind::Conv}},
      {"Conv3dDepthwise", {NodeKind::Conv}},
      {"Conv3dOneOutputChannel", {NodeKind::Conv}},
      {"Conv3dOnePosition", {NodeKind::Conv}},
      {"Conv3dLongChains", {NodeKind::Conv}},
      {"Pools3d", {NodeKind::MaxPool, NodeKind::AveragePool}}};
  for (const auto& [name, kinds] : cases) {
    SCOPED_TRACE(name);
    bool built = false;
    for (const test::OpCase& c : test::opCases())
      if (std::string(c.name) == name) {
        G g;
        c.build(g);
        built = true;
        expectBitExact(g, kinds.size(), kinds);
      }
    EXPECT_TRUE(built);
  }
}

TEST(CpuInt8, MatMulWithConstantWeights) {
  G g;
  NodeValue x = g.input("x", {2, 5, 12});
  NodeValue mm = g.node(NodeKind::MatMul, "mm", {x, g.constant("w", {12, 7})});
  // An addend that varies along the rows too (not a bias: the Add stays an int8 Add).
  NodeValue add = g.node(NodeKind::Add, "add", {mm, g.constant("b", {5, 7})});
  g.output("y", g.node(NodeKind::MatMul, "mm2", {add, g.constant("w2", {7, 3})}));
  expectBitExact(g, 3, {NodeKind::MatMul, NodeKind::Add});
}

TEST(CpuInt8, LinearLayerOnASequenceIsAGemm) {
  // MatMul by a constant + a bias of M values: matmul-bias-to-gemm makes it one Gemm with
  // its int32 bias, between Reshapes of the [B, T, K] sequence.
  G g;
  NodeValue x = g.input("x", {2, 5, 12});
  NodeValue mm = g.node(NodeKind::MatMul, "mm", {x, g.constant("w", {12, 7})});
  NodeValue add = g.node(NodeKind::Add, "add", {mm, g.constant("b", {7})});
  g.output("y", g.node(NodeKind::Relu, "relu", {add}));
  expectBitExact(g, 1, {NodeKind::Gemm});
}

TEST(CpuInt8, GemmRegisterBlocksAndTails) {
  // 10 rows (two blocks of four, two single rows) by 83 columns (a block of 64, one of
  // 16, three left over), K = 37, split over threads in grains of 64 columns.
  G g;
  NodeValue x = g.input("x", {10, 37});
  g.output("y",
           g.node(NodeKind::Gemm, "fc", {x, g.constant("w", {37, 83}), g.constant("b", {83})}));
  expectBitExact(g, 1, {NodeKind::Gemm});
}

TEST(CpuInt8, AttentionBlock) {
  // Two heads of self-attention on [2, 6, 32] and torch's decomposed LayerNorm: the
  // MatMuls of two activations (batched, and B [K, N] shared by the batch), the Div by a
  // constant, Softmax along the last axis and along axis 1, and LayerNorm are all int8.
  G g;
  NodeValue x = g.input("x", {2, 6, 32});
  auto proj = [&](const char* name) {
    NodeValue p =
        g.node(NodeKind::MatMul, name, {x, g.constant(std::string(name) + ".w", {32, 32})});
    NodeValue r = g.node(NodeKind::Reshape, std::string(name) + ".heads", {p},
                         ints({{"shape", {2, 6, 2, 16}}}));
    return g.node(NodeKind::Transpose, std::string(name) + ".t", {r},
                  ints({{"perm", {0, 2, 1, 3}}}));
  };
  NodeValue q = proj("q"), k = proj("k"), v = proj("v");
  NodeValue kt = g.node(NodeKind::Transpose, "kt", {k}, ints({{"perm", {0, 1, 3, 2}}}));
  NodeValue s = g.node(NodeKind::MatMul, "scores", {q, kt});
  NodeValue sd = g.node(NodeKind::Div, "scaled", {s, g.scalar("sqrt_d", 4.f)});
  Attrs last;
  last.set("axis", int64_t(-1));
  NodeValue p = g.node(NodeKind::Softmax, "probs", {sd}, last);
  NodeValue o = g.node(NodeKind::MatMul, "context", {p, v});
  NodeValue ot = g.node(NodeKind::Transpose, "ctx.t", {o}, ints({{"perm", {0, 2, 1, 3}}}));
  NodeValue merged = g.node(NodeKind::Reshape, "ctx.merge", {ot}, ints({{"shape", {2, 6, 32}}}));
  NodeValue res = g.node(NodeKind::Add, "residual", {merged, x});
  // (res - mean) / sqrt(var + eps) * gamma + beta, as torch exports it below opset 17.
  const Attrs r = ints({{"axes", {-1}}});
  NodeValue d =
      g.node(NodeKind::Sub, "ln.sub", {res, g.node(NodeKind::ReduceMean, "ln.mean", {res}, r)});
  NodeValue var = g.node(NodeKind::ReduceMean, "ln.var",
                         {g.node(NodeKind::Pow, "ln.pow", {d, g.scalar("two", 2.f)})}, r);
  NodeValue sd2 = g.node(NodeKind::Sqrt, "ln.sqrt",
                         {g.node(NodeKind::Add, "ln.eps", {var, g.scalar("eps", 1e-5f)})});
  NodeValue ln = g.node(NodeKind::Div, "ln.div", {d, sd2});
  ln = g.node(NodeKind::Mul, "ln.scale", {ln, g.constant("gamma", {32}, 0.5f, 1.5f)});
  ln = g.node(NodeKind::Add, "ln.shift", {ln, g.constant("beta", {32})});
  g.output("y", ln);
  // A Softmax along a middle axis, and a MatMul whose activation B is [K, N].
  Attrs mid;
  mid.set("axis", int64_t(1));
  g.output("p1", g.node(NodeKind::Softmax, "probs_axis1", {s}, mid));
  NodeValue wide = g.node(NodeKind::Reshape, "wide", {res}, ints({{"shape", {12, 32}}}));
  NodeValue wt = g.node(NodeKind::Transpose, "wt", {wide}); // [32, 12]
  g.output("g", g.node(NodeKind::MatMul, "gram", {x, wt})); // [2, 6, 32] x [32, 12]
  expectBitExact(g, 20,
                 {NodeKind::MatMul, NodeKind::Softmax, NodeKind::LayerNormalization, NodeKind::Mul},
                 [](const Function& f) {
                   for (const auto& n : f.nodes())
                     EXPECT_TRUE(n->resultType().kind == ElemKind::Int8 ||
                                 n->kind() == NodeKind::QuantizeLinear ||
                                 n->kind() == NodeKind::DequantizeLinear)
                         << n->kindName() << " '" << n->name() << "' stayed float";
                 });
}

TEST(CpuInt8, ReduceMeanOverAnyAxes) {
  // Mean pooling over tokens (a classifier head), over channels and over the last two
  // axes with keepdims 0, each of an int8 value.
  auto mean = [](std::vector<int64_t> axes, int64_t keep) {
    Attrs a;
    a.set("axes", std::move(axes));
    a.set("keepdims", keep);
    return a;
  };
  G g;
  NodeValue x = g.input("x", {2, 7, 24});
  NodeValue h = g.node(NodeKind::MatMul, "proj", {x, g.constant("w", {24, 16})});
  g.output("tokens", g.node(NodeKind::ReduceMean, "tokens", {h}, mean({1}, 0)));
  g.output("channels", g.node(NodeKind::ReduceMean, "channels", {h}, mean({-1}, 1)));
  NodeValue r4 = g.node(NodeKind::Reshape, "r4", {h}, ints({{"shape", {2, 7, 4, 4}}}));
  g.output("last2", g.node(NodeKind::ReduceMean, "last2", {r4}, mean({2, 3}, 0)));
  expectBitExact(g, 4, {NodeKind::ReduceMean});
}

/// The zero point of the (per-tensor) int8 input of q's convolution `name`.
int32_t convInputZeroPoint(const Function& q, const std::string& name) {
  for (const auto& n : q.nodes())
    if (n->kind() == NodeKind::Conv && n->name().find(name) != std::string::npos &&
        n->input(0).kind() == ElemKind::Int8)
      return n->input(0).type().quant.zeroPoints.at(0);
  ADD_FAILURE() << "no int8 Conv " << name;
  return 0;
}

// The packed-GEMM convolution (with VNNI on hosts that have it): channel counts that
// fill no register block, K not a multiple of 4, positions past the last panel,
// padding, strides, dilations, groups and 1-D convolutions.
TEST(CpuInt8, ConvOddShapes) {
  G g;
  NodeValue x = g.input("x", {2, 5, 11, 9});
  NodeValue c1 =
      g.node(NodeKind::Conv, "odd", {x, g.constant("w1", {21, 5, 3, 3}), g.constant("b1", {21})},
             ints({{"pads", {1, 2, 0, 1}}}));
  g.output("y1", c1);
  Attrs grouped = ints({{"pads", {2, 2, 2, 2}}, {"strides", {2, 1}}, {"dilations", {2, 1}}});
  grouped.set("group", int64_t(3));
  g.output("y2",
           g.node(NodeKind::Conv, "grouped",
                  {g.node(NodeKind::Relu, "r", {c1}), g.constant("w2", {15, 7, 3, 2})}, grouped));
  NodeValue stem = g.node(
      NodeKind::Conv, "stem",
      {g.input("img", {1, 3, 23, 23}), g.constant("w3", {40, 3, 7, 7}), g.constant("b3", {40})},
      ints({{"pads", {3, 3, 3, 3}}, {"strides", {2, 2}}}));
  g.output("stem", g.node(NodeKind::Relu, "stem_relu", {stem}));
  NodeValue seq = g.input("seq", {1, 7, 30});
  g.output("y1d", g.node(NodeKind::Conv, "conv1d", {seq, g.constant("w4", {33, 7, 5})},
                         ints({{"pads", {2, 1}}, {"strides", {3}}})));
  expectBitExact(g, 4, {NodeKind::Conv});
}

// Grouped convolution whose group channels fill several register blocks.
TEST(CpuInt8, ConvGroupsOfManyChannels) {
  G g;
  NodeValue x = g.input("x", {1, 8, 10, 10});
  Attrs a = ints({{"pads", {1, 1, 1, 1}}});
  a.set("group", int64_t(2));
  g.output("y", g.node(NodeKind::Conv, "g2",
                       {x, g.constant("w", {36, 4, 3, 3}), g.constant("b", {36})}, a));
  expectBitExact(g, 1, {NodeKind::Conv});
}

// Input zero points at the extremes: -128 (a positive input, padding with the code
// -128) and 127 (a negative input, padding with 127).
TEST(CpuInt8, ConvZeroPointsAtTheExtremes) {
  G g;
  NodeValue x = g.input("x", {1, 6, 9, 9});
  NodeValue pos = g.node(NodeKind::Sigmoid, "pos", {x});
  NodeValue neg = g.node(NodeKind::Neg, "neg", {pos});
  const Attrs pads = ints({{"pads", {1, 1, 1, 1}}});
  g.output("lo", g.node(NodeKind::Conv, "zplo",
                        {pos, g.constant("w1", {17, 6, 3, 3}), g.constant("b1", {17})}, pads));
  g.output("hi", g.node(NodeKind::Conv, "zphi",
                        {neg, g.constant("w2", {17, 6, 3, 3}), g.constant("b2", {17})}, pads));
  expectBitExact(g, 2, {NodeKind::Conv}, [](const Function& q) {
    EXPECT_EQ(convInputZeroPoint(q, "zplo"), -128);
    EXPECT_EQ(convInputZeroPoint(q, "zphi"), 127);
  });
}

// Depthwise convolutions: strides 2 and 3, dilation, a channel multiplier, a 5 x 5
// kernel, a positive input (zero point -128), and a 9 x 1 kernel whose stride and
// dilation 3 take the portable kernel.
TEST(CpuInt8, DepthwiseShapes) {
  G g;
  NodeValue x = g.input("x", {2, 6, 17, 15});
  Attrs s2 = ints({{"pads", {1, 2, 1, 0}}, {"strides", {2, 2}}, {"dilations", {1, 2}}});
  s2.set("group", int64_t(6));
  g.output("s2", g.node(NodeKind::Conv, "dws2",
                        {x, g.constant("w1", {12, 1, 3, 3}), g.constant("b1", {12})}, s2));
  Attrs k5 = ints({{"pads", {2, 2, 2, 2}}});
  k5.set("group", int64_t(6));
  NodeValue pos = g.node(NodeKind::Sigmoid, "pos", {x});
  g.output("k5", g.node(NodeKind::Conv, "dwk5", {pos, g.constant("w2", {6, 1, 5, 5})}, k5));
  Attrs s3 = ints({{"pads", {1, 1, 1, 1}}, {"strides", {2, 3}}});
  s3.set("group", int64_t(6));
  g.output("s3", g.node(NodeKind::Conv, "dws3", {x, g.constant("w4", {6, 1, 3, 3})}, s3));
  Attrs k9 = ints({{"pads", {4, 0, 4, 0}}, {"strides", {1, 3}}, {"dilations", {1, 3}}});
  k9.set("group", int64_t(6));
  g.output("k9", g.node(NodeKind::Conv, "dwk9",
                        {x, g.constant("w3", {6, 1, 9, 1}), g.constant("b3", {6})}, k9));
  expectBitExact(g, 3, {NodeKind::Conv},
                 [](const Function& q) { EXPECT_EQ(convInputZeroPoint(q, "dwk5"), -128); });
}

// MaxPool windows with padding on every side, strides 1, 2 and 3 and dilation.
TEST(CpuInt8, MaxPoolWindows) {
  G g;
  NodeValue x = g.input("x", {1, 4, 9, 11});
  NodeValue c = g.node(NodeKind::Conv, "c", {x, g.constant("w", {5, 4, 1, 1})});
  g.output("y", g.node(NodeKind::MaxPool, "mp", {c},
                       ints({{"kernel_shape", {2, 3}},
                             {"strides", {1, 2}},
                             {"pads", {0, 1, 1, 2}},
                             {"dilations", {2, 1}}})));
  g.output("z",
           g.node(NodeKind::MaxPool, "mp2", {c},
                  ints({{"kernel_shape", {3, 3}}, {"strides", {2, 1}}, {"pads", {1, 1, 1, 1}}})));
  // Stride 3 (the gathering path) on a row wider than a block of 64 outputs.
  NodeValue wide =
      g.node(NodeKind::Conv, "cw", {g.input("xw", {1, 2, 5, 200}), g.constant("ww", {3, 2, 1, 1})});
  g.output("w3",
           g.node(NodeKind::MaxPool, "mp3", {wide},
                  ints({{"kernel_shape", {2, 4}}, {"strides", {1, 3}}, {"pads", {0, 2, 1, 1}}})));
  g.output("w2",
           g.node(NodeKind::MaxPool, "mp4", {wide},
                  ints({{"kernel_shape", {1, 3}}, {"strides", {1, 2}}, {"pads", {0, 1, 0, 1}}})));
  expectBitExact(g, 5, {NodeKind::MaxPool});
}

/// Sets $EMBER_CPU_INT8_ISA for a scope (unset: the host's best), restoring it after.
class ScopedInt8Isa {
public:
  explicit ScopedInt8Isa(const std::string& isa) {
    if (const char* v = std::getenv(kVar))
      saved_ = v, had_ = true;
    if (isa.empty())
      unsetenv(kVar);
    else
      setenv(kVar, isa.c_str(), 1);
  }
  ~ScopedInt8Isa() {
    if (had_)
      setenv(kVar, saved_.c_str(), 1);
    else
      unsetenv(kVar);
  }
  ScopedInt8Isa(const ScopedInt8Isa&) = delete;
  ScopedInt8Isa& operator=(const ScopedInt8Isa&) = delete;

private:
  static constexpr const char* kVar = "EMBER_CPU_INT8_ISA";
  std::string saved_;
  bool had_ = false;
};

// Every instruction set of the int8 convolution and Gemm kernels the host runs (vnni:
// vpdpbusd; avx512bw and avx2: vpmaddwd on 16-bit pairs; portable), forced through
// $EMBER_CPU_INT8_ISA, gives the interpreter's bytes with 1 and 2 threads, on shapes that
// fill no block: K (input channels x taps) not a multiple of 4, output channels and Gemm
// columns not multiples of 16, positions past the last panel, a 1x1 layer read in place,
// a grouped and a depthwise layer, Gemm rows not a multiple of the register block, a
// single-row classifier, a batched MatMul, and small planes whose channels vnni puts in the
// lanes.
TEST(CpuInt8, EveryInstructionSetGivesTheSameBytes) {
  G g;
  NodeValue x = g.input("x", {1, 5, 13, 11});
  NodeValue c1 =
      g.node(NodeKind::Conv, "c3x3", {x, g.constant("w1", {21, 5, 3, 3}), g.constant("b1", {21})},
             ints({{"pads", {1, 1, 1, 1}}, {"strides", {2, 1}}}));
  NodeValue r1 = g.node(NodeKind::Relu, "r1", {c1});
  NodeValue pw = g.node(NodeKind::Conv, "c1x1", {r1, g.constant("w2", {19, 21, 1, 1})});
  // A widening 1x1 layer on 77 positions: vnni's panels of 16 positions in the lanes.
  g.output("wide", g.node(NodeKind::Conv, "wide", {r1, g.constant("w11", {40, 21, 1, 1})}));
  Attrs grouped = ints({{"pads", {1, 0, 1, 2}}});
  grouped.set("group", int64_t(3));
  NodeValue gc = g.node(NodeKind::Conv, "grouped",
                        {c1, g.constant("w3", {9, 7, 3, 2}), g.constant("b3", {9})}, grouped);
  Attrs dw = ints({{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}});
  dw.set("group", int64_t(19));
  NodeValue dc = g.node(NodeKind::Conv, "depthwise",
                        {pw, g.constant("w4", {19, 1, 3, 3}), g.constant("b4", {19})}, dw);
  g.output("pw", pw);
  g.output("gc", gc);
  g.output("dc", dc);
  NodeValue flat = g.node(NodeKind::Reshape, "flat", {dc}, ints({{"shape", {1, 19 * 4 * 6}}}));
  g.output("fc", g.node(NodeKind::Gemm, "fc",
                        {flat, g.constant("wf", {19 * 4 * 6, 70}), g.constant("bf", {70})}));
  NodeValue a = g.input("a", {7, 37});
  g.output("gemm",
           g.node(NodeKind::Gemm, "gemm", {a, g.constant("wg", {37, 45}), g.constant("bg", {45})}));
  NodeValue seq = g.input("seq", {2, 5, 30});
  g.output("mm", g.node(NodeKind::MatMul, "mm", {seq, g.constant("wm", {30, 17})}));
  // Layers that vnni runs with the channels in the lanes (ember_conv_i8_vnni_t): a 3 x 3
  // of stride 2 with padding on one side to 7 x 7 and a dilated 3 x 3 to 5 x 5 (three
  // images, so that two threads split one; 37 -> 45 -> 33 channels; a last tile of 4
  // positions), a narrowing 1 x 1 on 5 x 5, a widening one on 7 x 7.
  NodeValue sm = g.input("sm", {3, 37, 14, 13});
  NodeValue s7 =
      g.node(NodeKind::Conv, "s7", {sm, g.constant("w7", {45, 37, 3, 3}), g.constant("b7", {45})},
             ints({{"pads", {1, 1, 0, 1}}, {"strides", {2, 2}}}));
  NodeValue d5 = g.node(NodeKind::Conv, "d5", {s7, g.constant("w8", {33, 45, 3, 3})},
                        ints({{"pads", {1, 1, 1, 1}}, {"dilations", {2, 2}}}));
  g.output("p5", g.node(NodeKind::Conv, "p5",
                        {d5, g.constant("w9", {30, 33, 1, 1}), g.constant("b9", {30})}));
  g.output("x7", g.node(NodeKind::Conv, "x7", {s7, g.constant("w10", {60, 45, 1, 1})}));

  std::vector<TensorMap> calib;
  for (int i = 0; i < 4; ++i)
    calib.push_back(g.randomInputs());
  Function* q = quant::quantizeModel(*g.f, calib);
  size_t int8Products = 0;
  for (const auto& n : q->nodes())
    int8Products += (n->kind() == NodeKind::Conv || n->kind() == NodeKind::Gemm ||
                     n->kind() == NodeKind::MatMul) &&
                    n->resultType().kind == ElemKind::Int8;
  EXPECT_EQ(int8Products, 12u);
  const TensorMap in = g.randomInputs();
  const TensorMap ref = createInterpreterBackend()->compile(*q)->run(in);
  const std::vector<std::string> isas = cpuInt8Isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.back(), "portable");
  std::cout << "int8 instruction sets of this host:";
  for (const std::string& isa : isas)
    std::cout << " " << isa;
  std::cout << "\n";
  for (const std::string& isa : isas) {
    ScopedInt8Isa scope(isa);
    for (int threads : {1, 2}) {
      const TensorMap got = runCpu(*q, in, threads);
      for (const auto& [name, t] : ref)
        EXPECT_TRUE(got.at(name) == t)
            << isa << ", " << name << ", " << threads << " thread(s): " << compare(got, ref, 0);
    }
    const TensorMap parts = runCpuInParts(*q, in, 2, 7);
    for (const auto& [name, t] : ref)
      EXPECT_TRUE(parts.at(name) == t) << isa << ", " << name << ", 7 parts";
  }
  ScopedInt8Isa unknown("sse9");
  EXPECT_THROW(runCpu(*q, in, 1), Error);
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
                         ::testing::Values("resnet18", "mobilenet_v2", "resnet50", "transformer",
                                           "transformer_gelu", "transformer_classifier"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param);
                         });

} // namespace
} // namespace ember
