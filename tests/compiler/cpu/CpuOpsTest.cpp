// The cpu backend on the shared operator table (tests/compiler/common/OpCases.h) against
// the float interpreter (within 1e-5 * max(1, max |ref|)) with 1 and 3 threads, and with
// 2 threads sharing every node cut into 5 parts, which must all give identical bits; and
// what is particular to the cpu backend.
#include "CpuTestUtil.h"
#include "OpCases.h"

#include "ember/backend/Backend.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <string>

namespace ember {
namespace {

using namespace cputest;
using test::ints;
using test::OpCase;
using test::opCases;
using test::with;

class CpuOps : public ::testing::TestWithParam<OpCase> {};

TEST_P(CpuOps, MatchesInterpreterWithAnyThreadCount) {
  G g;
  GetParam().build(g);
  const TensorMap in = g.randomInputs();
  const TensorMap ref = createInterpreterBackend()->compile(*g.f)->run(in);
  const TensorMap one = runCpu(*g.f, in, 1);
  EXPECT_EQ(compare(one, ref, 1e-5), "");
  const TensorMap three = runCpu(*g.f, in, 3);
  for (const auto& [name, t] : one)
    EXPECT_TRUE(three.at(name) == t) << name << " differs between 1 and 3 threads";
  // Every node cut into 5 parts that 2 threads take as they come.
  const TensorMap parts = runCpuInParts(*g.f, in, 2, 5);
  for (const auto& [name, t] : one)
    EXPECT_TRUE(parts.at(name) == t) << name << " differs between 1 thread and 5 parts";
}

INSTANTIATE_TEST_SUITE_P(All, CpuOps, ::testing::ValuesIn(opCases()),
                         [](const ::testing::TestParamInfo<OpCase>& i) {
                           return std::string(i.param.name);
                         });

// The kernels that repeat the interpreter's arithmetic operation for operation (3-D Conv
// and pools, ConvTranspose, Resize) and PRelu give its bits, not only values within the
// table's tolerance, with 1 and 3 threads.
TEST(CpuBackend, InterpreterOrderKernelsGiveItsBits) {
  const std::set<std::string> names = {"Conv3d",
                                       "Conv3dGroupedDilated",
                                       "Conv3dDepthwise",
                                       "Conv3dOneOutputChannel",
                                       "Conv3dOnePosition",
                                       "Conv3dLongChains",
                                       "ConvRunTimeWeights",
                                       "Pools3d",
                                       "ConvTransposeStride2OutputPadding",
                                       "ConvTransposeGroupedDilated",
                                       "ConvTranspose1D",
                                       "ConvTranspose3D",
                                       "ConvTransposeLongChains",
                                       "ConvTranspose1x1OneChannel",
                                       "ConvTranspose1x1OnePosition",
                                       "ResizeNearest",
                                       "ResizeLinear",
                                       "Resize3d",
                                       "PRelu",
                                       "PReluConstantSlopes"};
  size_t found = 0;
  for (const OpCase& c : opCases()) {
    if (!names.count(c.name))
      continue;
    ++found;
    G g;
    c.build(g);
    const TensorMap in = g.randomInputs();
    const TensorMap ref = createInterpreterBackend()->compile(*g.f)->run(in);
    for (int threads : {1, 3})
      EXPECT_EQ(compare(runCpu(*g.f, in, threads), ref, 0), "")
          << c.name << ", " << threads << " thread(s)";
  }
  EXPECT_EQ(found, names.size());
}

TEST(CpuBackend, IsRegisteredAsCpu) {
  EXPECT_EQ(createBackend("cpu")->name(), "cpu");
}

TEST(CpuBackend, ListsEveryUnsupportedNode) {
  G g;
  NodeValue x = g.input("x", {2, 3});
  NodeValue a = g.node(NodeKind::CumSum, "cumsum", {x}, with({}, "axis", int64_t(1)));
  g.output("y", g.node(NodeKind::Relu, "relu", {g.node(NodeKind::Trilu, "trilu", {a})}));
  const auto missing = unsupportedNodes(*createBackend("cpu"), *g.f);
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0], "CumSum 'cumsum'");
  EXPECT_EQ(missing[1], "Trilu 'trilu'");
  try {
    createBackend("cpu")->compile(*g.f);
    FAIL() << "compiled a function with unsupported nodes";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("CumSum 'cumsum'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Trilu 'trilu'"), std::string::npos) << e.what();
  }
}

/// The kinds of the operations the cpu backend ran for case `name` (a profiled run).
std::vector<std::string> opKindsOf(const char* name) {
  for (const OpCase& c : opCases())
    if (std::string(c.name) == name) {
      G g;
      c.build(g);
      CpuOptions o;
      o.profile = true;
      auto cf = createCpuBackend(o)->compile(*g.f);
      cf->run(g.randomInputs());
      std::vector<std::string> kinds;
      for (const CpuOpTime& t : dynamic_cast<const CpuCompiledFunction&>(*cf).profile())
        kinds.push_back(t.kind);
      return kinds;
    }
  ADD_FAILURE() << "no op case " << name;
  return {};
}

TEST(CpuBackend, ComputesAResidualAddInTheConvolutionsEpilogue) {
  // The values are checked by the op cases (CpuOps above); here, that the Add is fused
  // where it can be and kept where the convolution's result is needed too.
  using V = std::vector<std::string>;
  for (const char* name : {"ConvResidualAddRelu", "ConvResidualAddConvSecond",
                           "ConvResidualAddClipPointwise", "ConvResidualAddOfItsInput"})
    EXPECT_EQ(opKindsOf(name), V{"Conv+Add"}) << name;
  EXPECT_EQ(opKindsOf("ConvResidualAddConvAlsoOutput"), (V{"Conv", "Add"}));
}

TEST(CpuBackend, WinogradSplitsOutputChannelsWhenBandsAreFewerThanParts) {
  // One 14x14 band per image (ConvScratch.h: winogradGeom), four blocks of 32 output
  // channels (the last one half full): cut into 5 and 7 parts, the items are (image, band,
  // group of channel blocks), three groups of 1, 1 and 2 blocks; every cut gives the one-thread
  // bits, which are within the table's tolerance of the interpreter.
  G g;
  g.output("y", g.node(NodeKind::Conv, "conv",
                       {g.input("x", {2, 16, 14, 14}), g.constant("w", {112, 16, 3, 3}),
                        g.constant("b", {112})},
                       ints({{"pads", {1, 1, 1, 1}}})));
  const TensorMap in = g.randomInputs();
  const TensorMap ref = createInterpreterBackend()->compile(*g.f)->run(in);
  const TensorMap one = runCpu(*g.f, in, 1);
  EXPECT_EQ(compare(one, ref, 1e-5), "");
  for (const auto& [threads, parts] : {std::pair{2, 5}, std::pair{3, 7}, std::pair{2, 2}})
    EXPECT_TRUE(runCpuInParts(*g.f, in, threads, parts).at("y") == one.at("y"))
        << parts << " parts on " << threads << " threads";
}

/// The part counts of a one-Conv graph's operations (CpuOpTime::parts).
int64_t convParts(const Shape& x, const Shape& w, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& pads) {
  G g;
  g.output("y", g.node(NodeKind::Conv, "conv",
                       {g.input("x", x), g.constant("w", w), g.constant("b", {w[0]})},
                       ints({{"strides", strides}, {"pads", pads}})));
  CpuOptions o;
  o.profile = true;
  auto cf = createCpuBackend(o)->compile(*g.f);
  const auto& ops = dynamic_cast<const CpuCompiledFunction&>(*cf).profile();
  return ops.size() == 1 ? ops[0].parts : -1;
}

TEST(CpuBackend, PartsStopAtTheBandsWhenEachPartRepeatsWork) {
  // Work enough for eight parts in each (ModuleGen.cpp: partsOf); a Winograd band's input
  // transform and a direct 1x1 band's copy are done again by every part that takes some of
  // the band's output channels, so those stop at their bands (ConvScratch.h), at least two.
  const std::vector<std::string> isas = cpuInt8Isas();
  if (std::find(isas.begin(), isas.end(), "avx512bw") == isas.end())
    GTEST_SKIP() << "the Winograd and direct kernels are taken on AVX-512 hosts only";
  if (std::getenv("EMBER_CPU_PARTS"))
    GTEST_SKIP() << "$EMBER_CPU_PARTS forces every count";
  // Winograd on 14x14, 256 channels: one band -> 2 parts; on 56x56, 64 channels: 4 bands.
  EXPECT_EQ(convParts({1, 256, 14, 14}, {256, 256, 3, 3}, {1, 1}, {1, 1, 1, 1}), 2);
  EXPECT_EQ(convParts({1, 64, 56, 56}, {64, 64, 3, 3}, {1, 1}, {1, 1, 1, 1}), 4);
  // Direct 1x1 on 7x7, 2048 -> 512 (one band) and 14x14, 1024 -> 256 (two bands).
  EXPECT_EQ(convParts({1, 2048, 7, 7}, {512, 2048, 1, 1}, {1, 1}, {0, 0, 0, 0}), 2);
  EXPECT_EQ(convParts({1, 1024, 14, 14}, {256, 1024, 1, 1}, {1, 1}, {0, 0, 0, 0}), 2);
  // A direct 3x3 of stride 2 repeats little per part: eight.
  EXPECT_EQ(convParts({1, 128, 28, 28}, {256, 128, 3, 3}, {2, 2}, {1, 1, 1, 1}), 8);
}

TEST(CpuBackend, RejectsBadInputs) {
  G g;
  g.output("y", g.node(NodeKind::Relu, "relu", {g.input("x", {2, 3})}));
  auto cf = createBackend("cpu")->compile(*g.f);
  EXPECT_THROW(cf->run({}), Error);
  EXPECT_THROW(cf->run({{"x", Tensor(ElemKind::Float32, {3, 2})}}), Error);
  EXPECT_THROW(cf->run({{"x", Tensor(ElemKind::Float32, {2, 3})}, {"nope", Tensor()}}), Error);
}

TEST(CpuBackend, MaxPoolPropagatesNaNAsTheInterpreter) {
  // Width 8: one output at a time; width 70 at stride 2: blocks of 16 outputs (even lanes
  // of 32 inputs), the last overlapping the one before, and the border outputs one at a
  // time; width 40 at stride 1: the same with plain loads.
  for (auto [W, stride] : {std::pair<int64_t, int64_t>{8, 2}, {70, 2}, {40, 1}}) {
    G g;
    g.output("y", g.node(NodeKind::MaxPool, "mp", {g.input("x", {1, 2, 7, W})},
                         ints({{"kernel_shape", {3, 3}},
                               {"strides", {stride, stride}},
                               {"pads", {1, 1, 1, 1}}})));
    TensorMap in = g.randomInputs();
    float* x = in["x"].data<float>();
    x[0] = std::nanf("");                  // a corner: in one window
    x[3 * W + 4] = std::nanf("");          // row 3, column 4: in two windows
    x[7 * W + 7 * W - 1] = -std::nanf(""); // the second plane's last element: one window
    int expected = 4;
    if (W == 70) {
      x[5 * W + 40] = std::nanf(""); // inside a vector step: rows 4 and 6 x columns 20 (2 + 2)
      expected += 2;
    }
    if (W == 40) {
      x[5 * W + 20] = std::nanf(""); // inside a block: 3 x 3 windows at stride 1
      expected += 9;
    }
    const TensorMap ref = createInterpreterBackend()->compile(*g.f)->run(in);
    for (int threads : {1, 2}) {
      const TensorMap got = runCpu(*g.f, in, threads);
      EXPECT_EQ(compare(got, ref, 0), "") << threads << " thread(s), width " << W;
      int nans = 0, refNans = 0;
      for (int64_t i = 0; i < got.at("y").size(); ++i) {
        nans += std::isnan(got.at("y").data<float>()[i]);
        refNans += std::isnan(ref.at("y").data<float>()[i]);
      }
      EXPECT_EQ(nans, refNans) << threads << " thread(s), width " << W;
      EXPECT_GE(nans, expected) << threads << " thread(s), width " << W;
    }
  }
}

TEST(CpuBackend, GatherWithRunTimeIndices) {
  G g;
  NodeValue idx = g.m.createPlaceholder("idx", Type(ElemKind::Int64, {2, 3}))->result();
  g.output("y", g.node(NodeKind::Gather, "gather", {g.input("x", {5, 4}), idx}));
  auto cf = createBackend("cpu")->compile(*g.f);
  TensorMap in = g.randomInputs();
  in["idx"] = Tensor::fromVector<int64_t>({2, 3}, {4, 0, -1, 2, 2, -5});
  EXPECT_EQ(compare(cf->run(in), createInterpreterBackend()->compile(*g.f)->run(in), 0), "");
  in["idx"] = Tensor::fromVector<int64_t>({2, 3}, {4, 0, 5, 2, 2, 1});
  try {
    cf->run(in);
    FAIL() << "an index out of range was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "Gather 'gather'") << e.what();
  }
}

TEST(CpuBackend, LayersOfOneShapeShareAKernelInstance) {
  G g;
  NodeValue x = g.input("x", {1, 8, 9, 9});
  Attrs pads = ints({{"pads", {1, 1, 1, 1}}});
  NodeValue a = g.node(NodeKind::Conv, "c1", {x, g.constant("w1", {8, 8, 3, 3})}, pads);
  NodeValue b = g.node(NodeKind::Conv, "c2", {a, g.constant("w2", {8, 8, 3, 3})}, pads);
  NodeValue c = g.node(NodeKind::Conv, "c3", {b, g.constant("w3", {4, 8, 1, 1})});
  g.output("y", c);
  auto cf = createCpuBackend(CpuOptions{1})->compile(*g.f);
  const CpuCompileStats& st = dynamic_cast<const CpuCompiledFunction&>(*cf).stats();
  EXPECT_EQ(st.nodes, 3u);
  EXPECT_EQ(st.kernelInstances, 2u); // c1 and c2 share one
  const TensorMap in = g.randomInputs();
  EXPECT_EQ(compare(cf->run(in), createInterpreterBackend()->compile(*g.f)->run(in), 1e-5), "");
}

// Exp and Sigmoid (libjit's branch-free expFast) against the C library's exp in double,
// element by element over the whole float range: a few ulp where the result is a normal
// float, 0 below FLT_MIN, +inf past FLT_MAX, NaN for NaN.
TEST(CpuBackend, ExpAndSigmoidAreWithinAFewUlpOfExpEverywhere) {
  std::vector<float> xs;
  for (int i = -4000; i <= 4000; ++i)
    xs.push_back(static_cast<float>(i) * 0.025f);
  for (float v : {-87.4f, -87.3f, 88.7f, 88.8f, 1e-8f, -1e-8f, 0.f, 1e30f, -1e30f})
    xs.push_back(v);
  xs.push_back(std::numeric_limits<float>::infinity());
  xs.push_back(-std::numeric_limits<float>::infinity());
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  const int64_t n = static_cast<int64_t>(xs.size());
  G g;
  NodeValue x = g.input("x", {n});
  g.output("e", g.node(NodeKind::Exp, "exp", {x}));
  g.output("s", g.node(NodeKind::Sigmoid, "sigmoid", {x}));
  const TensorMap out = runCpu(*g.f, {{"x", Tensor::fromVector<float>({n}, xs)}}, 1);
  const float* e = out.at("e").data<float>();
  const float* s = out.at("s").data<float>();
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 5; ++i) {
    const double v = xs[static_cast<size_t>(i)];
    const double ref = std::exp(v), sref = 1.0 / (1.0 + std::exp(-v));
    bool ok = std::isnan(v) ? std::isnan(e[i]) && std::isnan(s[i]) : true;
    if (!std::isnan(v)) {
      if (ref < std::numeric_limits<float>::min())
        ok = e[i] >= 0 && e[i] <= std::numeric_limits<float>::min();
      else if (ref > std::numeric_limits<float>::max())
        ok = std::isinf(e[i]) && e[i] > 0;
      else
        ok = std::fabs(e[i] - ref) <= 5e-7 * ref;
      ok = ok && std::fabs(s[i] - sref) <= 5e-7 * sref + 1e-30;
    }
    if (!ok) {
      ++bad;
      ADD_FAILURE() << "x = " << v << ": exp " << e[i] << " (C library " << ref << "), sigmoid "
                    << s[i] << " (" << sref << ")";
    }
  }
}

TEST(CpuBackend, RunsRepeatedlyWithFreshInputs) {
  G g;
  g.output("y", g.node(NodeKind::Conv, "conv",
                       {g.input("x", {1, 3, 6, 6}), g.constant("w", {4, 3, 3, 3})},
                       ints({{"pads", {1, 1, 1, 1}}})));
  auto cf = createCpuBackend(CpuOptions{2})->compile(*g.f);
  auto interp = createInterpreterBackend()->compile(*g.f);
  for (int i = 0; i < 3; ++i) {
    const TensorMap in = g.randomInputs();
    EXPECT_EQ(compare(cf->run(in), interp->run(in), 1e-5), "");
  }
}

} // namespace
} // namespace ember
