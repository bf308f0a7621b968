// The partitioner never makes a plan with a segment its backend cannot run (issue 42,
// item 1). Every case of the shared operator table (tests/compiler/common/OpCases.h), in
// float and in its quantized int8 form, is partitioned for ember-v1 on each fallback of
// this build (cpu when LLVM is built, and interp):
//   - with every node forced to the host: each node runs on the fallback exactly when the
//     fallback's `supports` accepts it, else on the interpreter, with that said in its
//     reason;
//   - as the partitioner places it (the NPU takes what it can, the cost model off).
// Either way every host segment's backend supports all of its nodes, the plan's executor
// prepares it (it refuses a segment with a node its backend cannot run), and the run
// equals the interpreter on the whole function (int8: bit for bit, unless float nodes
// remain between DequantizeLinear and QuantizeLinear).
#include "OpCases.h"
#include "OutputCompare.h"

#include "ember/backend/Backend.h"
#include "ember/driver/Driver.h"
#include "ember/driver/Execute.h"
#include "ember/driver/Partition.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/isa/description.h"
#include "ember/session/Devices.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace ember::test {
namespace {

using partition::Fallback;

const isa::IsaDescription& refIsa() {
  static const isa::IsaDescription d =
      isa::IsaDescription::loadFile(std::string(EMBER_SOURCE_DIR) + "/isa/ember-v1.json");
  return d;
}

/// A case's function (float, or quantized by the compile driver) and its float inputs.
struct Form {
  std::unique_ptr<GraphBuilder> g = std::make_unique<GraphBuilder>(2024);
  Function* fn = nullptr;
  TensorMap inputs;
  bool floatArithmetic = false; ///< float nodes remain (int8 runs may round differently)
};

Form makeForm(const OpCase& c, bool int8) {
  Form f;
  c.build(*f.g);
  f.fn = f.g->f;
  f.inputs = f.g->randomInputs();
  if (int8) {
    driver::QuantizeRequest q;
    q.calibrate = "random:4";
    f.fn = driver::quantizeFunction(*f.g->f, q);
  }
  for (const auto& n : f.fn->nodes())
    f.floatArithmetic |=
        n->kind() != NodeKind::DequantizeLinear && n->resultType().kind == ElemKind::Float32;
  return f;
}

std::vector<Fallback> fallbacks() {
  std::vector<Fallback> out{Fallback::Interp};
  if (partition::defaultFallback() == Fallback::Cpu)
    out.push_back(Fallback::Cpu);
  return out;
}

/// Runs `plan` (NPU segments on the SystemC platform through the runtime) and compares
/// with the interpreter's run of the whole function.
void expectRunsAsTheInterpreter(const partition::Plan& plan, const Form& form, double tol) {
  for (const partition::Segment& s : plan.segments) {
    if (s.backend == "npu")
      continue;
    const std::unique_ptr<Backend> b = createBackend(s.backend);
    EXPECT_TRUE(unsupportedNodes(*b, *s.function).empty())
        << "a " << s.backend << " segment holds nodes its backend cannot run\n"
        << partition::formatPlacementReport(plan);
  }
  std::vector<platform::Report> reports;
  const session::DeviceOptions opts;
  partition::PlanExecutor ex(plan,
                             session::npuSegmentRunner("sim", session::npuEngine("sim"), refIsa(),
                                                       opts, "op table", plan.whole, reports));
  const TensorMap ref = createInterpreterBackend()->compile(*form.fn)->run(form.inputs);
  EXPECT_EQ(compareOutputs(ex.run(form.inputs), ref, tol), "")
      << partition::formatPlacementReport(plan);
}

class PartitionHost : public ::testing::TestWithParam<OpCase> {};

TEST_P(PartitionHost, EveryNodeRunsOnTheFallbackItSupportsOrOnTheInterpreter) {
  for (const bool int8 : {false, true})
    for (const Fallback fb : fallbacks()) {
      const Form form = makeForm(GetParam(), int8);
      SCOPED_TRACE(std::string(int8 ? "int8" : "float") + ", fallback " +
                   partition::fallbackName(fb));
      partition::PartitionOptions o;
      o.fallback = fb;
      o.costModel = false;
      for (const auto& n : form.fn->nodes())
        o.hostNodes.insert(n->name());
      const partition::Plan p = partition::partition(*form.fn, refIsa(), o);
      const std::unique_ptr<Backend> fallback = createBackend(partition::fallbackName(fb));
      for (const auto& n : form.fn->nodes()) {
        const partition::NodePlacement& pl = p.placementOf(n->name());
        const bool onFallback = fallback->supports(*n);
        EXPECT_EQ(pl.backend, onFallback ? fallback->name() : "interp") << n->name();
        EXPECT_EQ(pl.reason.find("the cpu backend cannot run it") != std::string::npos,
                  !onFallback && fb == Fallback::Cpu)
            << n->name() << ": " << pl.reason;
      }
      expectRunsAsTheInterpreter(p, form, int8 && !form.floatArithmetic ? 0.0 : 1e-5);
    }
}

TEST_P(PartitionHost, EveryPlacedPlanRuns) {
  const Form form = makeForm(GetParam(), true);
  for (const Fallback fb : fallbacks()) {
    SCOPED_TRACE(std::string("fallback ") + partition::fallbackName(fb));
    partition::PartitionOptions o;
    o.fallback = fb;
    o.costModel = false;
    const partition::Plan p = partition::partition(*form.fn, refIsa(), o);
    expectRunsAsTheInterpreter(p, form, form.floatArithmetic ? 1e-5 : 0.0);
  }
}

/// conv -> SpaceToDepth -> conv: neither the NPU nor the cpu backend has SpaceToDepth, so
/// with the cpu fallback it runs on the interpreter between two NPU segments (a package of
/// this plan used to hold a cpu segment that the cpu backend refused at run time).
TEST(PartitionHostFallback, ANodeTheCpuCannotRunGoesToTheInterpreter) {
  const OpCase c{"ConvSpaceToDepthConv", [](GraphBuilder& g) {
                   Attrs pad;
                   pad.set("pads", std::vector<int64_t>{1, 1, 1, 1});
                   NodeValue a = g.node(NodeKind::Conv, "c1",
                                        {g.input("x", {1, 16, 8, 8}),
                                         g.constant("w1", {16, 16, 3, 3}), g.constant("b1", {16})},
                                        pad);
                   Attrs s2d;
                   s2d.set("blocksize", int64_t(2));
                   NodeValue d = g.node(NodeKind::SpaceToDepth, "s2d", {a}, s2d);
                   g.output("y",
                            g.node(NodeKind::Conv, "c2",
                                   {d, g.constant("w2", {16, 64, 1, 1}), g.constant("b2", {16})}));
                 }};
  const Form form = makeForm(c, true);
  partition::PartitionOptions o;
  o.fallback = Fallback::Cpu;
  o.costModel = false;
  if (partition::defaultFallback() != Fallback::Cpu)
    GTEST_SKIP() << "this build has no cpu backend";
  const partition::Plan p = partition::partition(*form.fn, refIsa(), o);
  const partition::NodePlacement& d = p.placementOf("s2d__1");
  EXPECT_EQ(d.backend, "interp") << partition::formatPlacementReport(p);
  EXPECT_NE(d.reason.find("on the interpreter: the cpu backend cannot run it"), std::string::npos)
      << d.reason;
  EXPECT_EQ(p.placementOf("c1__1").backend, "npu");
  EXPECT_EQ(p.placementOf("c2__1").backend, "npu");
  EXPECT_EQ(p.npuSegments(), 2u); // the quantized names carry the quantizer's "__1"
  expectRunsAsTheInterpreter(p, form, 0.0);
}

INSTANTIATE_TEST_SUITE_P(All, PartitionHost, ::testing::ValuesIn(opCases()),
                         [](const ::testing::TestParamInfo<OpCase>& i) {
                           return std::string(i.param.name);
                         });

} // namespace
} // namespace ember::test
