// Activations of one value (a Lut: h-swish, SiLU, sigmoid, ...) fused into the requantize
// of the convolution or Gemm producing their input (CompileOptions::fuseLut,
// docs/compiler/npu-layers.md "Activations fused into the requantize"): hand-built int8
// graphs compiled with and without the fusion on both descriptions, simulated, and
// compared bit for bit with the int8 interpreter (and the cpu backend where built).
#include "NpuTestUtil.h"

#include "ember/isa/roles.h"

#include <algorithm>
#include <cstdio>
#include <functional>

namespace ember::npu::test {
namespace {

/// A table that is no simple function (every entry differs from its neighbours), so a
/// wrong index or a table at the wrong param rows shows in the result.
NodeValue table(G& g, const std::string& name, int mul) {
  Tensor tab(ElemKind::Int8, {256});
  for (int i = 0; i < 256; ++i)
    tab.data<int8_t>()[i] = static_cast<int8_t>((i * mul + 11) % 256 - 128);
  return g.m.createConstant(name, tab)->result();
}

Attrs convAttrs(int64_t k, int64_t pad, int64_t group) {
  Attrs a;
  a.set("kernel_shape", std::vector<int64_t>{k, k});
  a.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  a.set("group", group);
  return a;
}

struct FusionCase {
  const char* name;
  std::function<void(G&)> build;
  int fused; ///< Layers of kind "...+Lut" expected with the fusion on.
};

const std::vector<FusionCase>& cases() {
  static const std::vector<FusionCase> all = {
      {"conv3x3_lut", // 40 -> 40 channels (a partial block), 3x3
       [](G& g) {
         NodeValue x = g.input("x", {1, 40, 12, 10}, 0.05f, 3);
         NodeValue c =
             g.node(NodeKind::Conv, "conv", {x, g.weights("w", {40, 40, 3, 3}, 0), g.bias("b", 40)},
                    convAttrs(3, 1, 1), {1, 40, 12, 10}, 0.2f, -5);
         g.output("y", g.node(NodeKind::Lut, "act", {c, table(g, "t", 37)}, {}, {1, 40, 12, 10},
                              0.02f, -100));
       },
       1},
      {"inverted_residual_luts", // MobileNetV3: expand + h-swish, depthwise + h-swish,
                                 // project; the residency's border holds the Lut's zero point
       [](G& g) {
         NodeValue x = g.input("x", {1, 24, 14, 14}, 0.05f, -7);
         NodeValue e = g.node(NodeKind::Conv, "expand",
                              {x, g.weights("we", {72, 24, 1, 1}, 0), g.bias("be", 72)},
                              convAttrs(1, 0, 1), {1, 72, 14, 14}, 0.1f, 6);
         NodeValue h1 = g.node(NodeKind::Lut, "hswish1", {e, table(g, "t1", 37)}, {},
                               {1, 72, 14, 14}, 0.04f, -90);
         NodeValue d =
             g.node(NodeKind::Conv, "dw", {h1, g.weights("wd", {72, 1, 3, 3}, 0), g.bias("bd", 72)},
                    convAttrs(3, 1, 72), {1, 72, 14, 14}, 0.08f, 3);
         NodeValue h2 = g.node(NodeKind::Lut, "hswish2", {d, table(g, "t2", 53)}, {},
                               {1, 72, 14, 14}, 0.03f, -20);
         g.output("y", g.node(NodeKind::Conv, "project",
                              {h2, g.weights("wp", {24, 72, 1, 1}, 0), g.bias("bp", 24)},
                              convAttrs(1, 0, 1), {1, 24, 14, 14}, 0.1f, -2));
       },
       2},
      {"gemm_lut_batch", // squeeze-excite's second fully connected layer and its sigmoid
       [](G& g) {
         NodeValue x = g.input("x", {3, 20}, 0.05f, 4);
         Attrs ga;
         ga.set("transB", int64_t(1));
         NodeValue y =
             g.node(NodeKind::Gemm, "fc", {x, g.weights("w", {50, 20}, 0), g.bias("b", 50)}, ga,
                    {3, 50}, 0.1f, 7);
         g.output("y", g.node(NodeKind::Lut, "sigmoid", {y, table(g, "t", 91)}, {}, {3, 50},
                              1.f / 256, -128));
       },
       1},
      {"lut_chain_and_shared", // conv -> lut -> conv -> lut, the second conv also an output
       [](G& g) {
         NodeValue x = g.input("x", {2, 16, 9, 9}, 0.05f, 0);
         NodeValue c1 =
             g.node(NodeKind::Conv, "c1", {x, g.weights("w1", {32, 16, 1, 1}, 0), g.bias("b1", 32)},
                    convAttrs(1, 0, 1), {2, 32, 9, 9}, 0.2f, 1);
         NodeValue a1 =
             g.node(NodeKind::Lut, "a1", {c1, table(g, "t1", 37)}, {}, {2, 32, 9, 9}, 0.03f, 2);
         NodeValue c2 = g.node(NodeKind::Conv, "c2",
                               {a1, g.weights("w2", {32, 32, 3, 3}, 0), g.bias("b2", 32)},
                               convAttrs(3, 1, 1), {2, 32, 9, 9}, 0.2f, -1);
         g.output("y", g.node(NodeKind::Lut, "a2", {c2, table(g, "t2", 53)}, {}, {2, 32, 9, 9},
                              0.03f, 5));
         g.output("c2", c2); // a second reader: c2's result must reach DRAM, a2 stays a layer
       },
       1},
  };
  return all;
}

/// Layers of the program whose kind ends in "+Lut", and those of kind "Lut".
std::pair<int, int> lutLayers(const CompileResult& r) {
  int fused = 0, alone = 0;
  for (const auto& l : r.summary.layers) {
    const std::string& k = l.kind;
    fused += k.size() > 4 && k.compare(k.size() - 4, 4, "+Lut") == 0;
    alone += k == "Lut";
  }
  return {fused, alone};
}

/// `c` compiled with and without the fusion for `isa` (at pipeline depth `depth`): both
/// bit-exact against the interpreter; returns {fused, apart} simulated cycles.
std::pair<uint64_t, uint64_t> runBothWays(const FusionCase& c, const isa::IsaDescription& isa,
                                          int depth, int expectFused) {
  G g;
  c.build(g);
  CompileOptions on, off;
  off.fuseLut = false;
  on.doubleBuffer = off.doubleBuffer = depth == 2;
  const CompileResult rOn = compile(*g.f, isa, on), rOff = compile(*g.f, isa, off);
  const std::string where = std::string(c.name) + " on " + isa.name();
  const auto [fusedOn, aloneOn] = lutLayers(rOn);
  const auto [fusedOff, aloneOff] = lutLayers(rOff);
  EXPECT_EQ(fusedOn, expectFused) << where << "\n" << formatSummary(rOn.summary);
  EXPECT_EQ(fusedOff, 0) << where;
  EXPECT_EQ(aloneOn + fusedOn, aloneOff) << where;
  EXPECT_EQ(rOn.summary.layers.size() + size_t(fusedOn), rOff.summary.layers.size()) << where;
  const auto in = randomInputs(rOn.binary, 17);
  const auto want = interpretAndCpu(*g.f, in, 1, where);
  SimOut sOn = simulate(rOn.binary, isa, in), sOff = simulate(rOff.binary, isa, in);
  for (const auto& [name, codes] : want) {
    EXPECT_EQ(mismatches(sOn.outputs[name], codes), 0u) << where << ", fused: " << name;
    EXPECT_EQ(mismatches(sOff.outputs[name], codes), 0u) << where << ", apart: " << name;
  }
  std::printf("[ lut fusion %s, depth %d ] %llu cycles fused, %llu apart\n", where.c_str(), depth,
              (unsigned long long)sOn.report.cycles, (unsigned long long)sOff.report.cycles);
  for (const auto& l : rOn.summary.layers)
    std::printf("    %s: %s\n", l.kind.c_str(), l.tiling.c_str());
  return {sOn.report.cycles, sOff.report.cycles};
}

TEST(LutFusion, TheLutIsTheProducersEpilogueAndGivesTheSameBytes) {
  for (const isa::IsaDescription* isa : {&refIsa(), &largeIsa()})
    for (const FusionCase& c : cases())
      for (int depth : {2, 1}) {
        const auto [fused, apart] = runBothWays(c, *isa, depth, c.fused);
        // The fused program skips the producer's DRAM round trip and the Lut's layer.
        EXPECT_LT(fused, apart) << c.name << " on " << isa->name() << ", depth " << depth;
      }
}

/// ember-v1 whose lut selects 2 tables (a 1-bit table field) in a param SRAM of 8 rows.
isa::IsaDescription twoTables() {
  nlohmann::json j = refIsa().json();
  for (auto& in : j["instructions"])
    if (in["class"] == "lut")
      in["fields"]["table"]["width"] = 1;
  auto& m = j["hardware"]["memories"]["param"];
  m["size_bytes"] = 8 * m["row_bytes"].get<int64_t>();
  return isa::IsaDescription::loadString(j.dump(), "ember-v1 with 8 param rows, 2 tables");
}

TEST(LutFusion, TheTableGoesAboveTheRequantizeRows) {
  // ember-v1's param rows are 64 bytes: table t takes rows 4t..4t+3. With 8 rows and two
  // tables, one output block's M and S rows (2 single-buffered, 4 double-buffered) leave
  // table 1 for the fused Lut, and tilings of more blocks do not fit.
  const isa::IsaDescription small = twoTables();
  for (const FusionCase& c : cases())
    for (int depth : {2, 1}) {
      runBothWays(c, small, depth, c.fused);
      G g;
      c.build(g);
      CompileOptions o;
      o.doubleBuffer = depth == 2;
      const CompileResult r = compile(*g.f, small, o);
      size_t luts = 0; // the fused layers' lut instructions (a Lut layer uses table 0)
      for (size_t l = 0; l < r.summary.layers.size(); ++l) {
        if (r.summary.layers[l].kind.find("+Lut") == std::string::npos)
          continue;
        const isa::DebugRange& d = r.binary.debug.at(l);
        for (uint32_t k = d.first; k < d.first + d.count; ++k) {
          const isa::Instruction& in = r.binary.code.at(k);
          if (in.desc().cls->id == isa::SemanticClass::Lut) {
            ++luts;
            EXPECT_EQ(in.get(isa::role::kTable), 1) << c.name;
          }
        }
      }
      EXPECT_GT(luts, 0u) << c.name;
    }
}

} // namespace
} // namespace ember::npu::test
