// Every case of the shared operator table (tests/compiler/common/OpCases.h) on every
// backend of this build: the interpreter, the cpu backend when LLVM is built, and the
// NPU (the device layer registers it; its binaries run on the SystemC platform through
// the runtime and the firmware). Each case runs in float and in its quantized int8 form
// (the compile driver's pass pipeline and quantizer). What is expected of a backend is
// what it says it supports:
//   - a function whose every node it supports compiles, runs and equals the interpreter
//     (float: within 1e-5 of the largest reference value; int8: bit for bit, unless float
//     nodes remain between DequantizeLinear and QuantizeLinear);
//   - a function with a node it does not support is refused with ember::Error naming
//     the first such node, never run;
//   - a node of a kind the backend reports nothing for (`kindSupport` empty) is never
//     supported, and a kind it reports something for is supported by some node of the
//     table (so the table exercises what each backend claims).
#include "OpCases.h"
#include "OutputCompare.h"

#include "ember/backend/Backend.h"
#include "ember/driver/Driver.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/session/Devices.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

namespace ember::test {
namespace {

/// One form of a case: its graph (float, or quantized in place) and its inputs.
struct Form {
  std::unique_ptr<GraphBuilder> g = std::make_unique<GraphBuilder>(2024);
  Function* fn = nullptr;
  TensorMap inputs;
};

Form floatForm(const OpCase& c) {
  Form f;
  c.build(*f.g);
  f.fn = f.g->f;
  f.inputs = f.g->randomInputs();
  return f;
}

/// The case quantized by the compile driver (pass pipeline, calibration on random
/// inputs, int8 quantization); the float inputs are the float form's.
Form int8Form(const OpCase& c) {
  Form f = floatForm(c);
  driver::QuantizeRequest q;
  q.calibrate = "random:4";
  f.fn = driver::quantizeFunction(*f.g->f, q);
  return f;
}

std::vector<std::unique_ptr<Backend>> allBackends() {
  session::registerNpuBackend();
  std::vector<std::unique_ptr<Backend>> out;
  for (const std::string& name : backendNames())
    out.push_back(createBackend(name));
  return out;
}

/// Runs `form` on `b` as its `supports` answers demand; `tol` 0 means bit for bit.
void expectAsSupported(const Backend& b, const Form& form, const TensorMap& ref, double tol,
                       const std::string& what) {
  SCOPED_TRACE(b.name() + ", " + what);
  const Node* firstMissing = nullptr;
  for (const auto& n : form.fn->nodes()) {
    const bool sup = b.supports(*n);
    if (b.kindSupport(n->kind()).empty()) {
      EXPECT_FALSE(sup) << n->kindName() << " '" << n->name()
                        << "': supported, but the backend reports nothing for its kind";
    }
    if (!sup && !firstMissing)
      firstMissing = n.get();
  }
  if (firstMissing) {
    try {
      b.compile(*form.fn)->run(form.inputs);
      ADD_FAILURE() << "ran a function with the unsupported node '" << firstMissing->name() << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(firstMissing->name()), std::string::npos)
          << "the refusal does not name '" << firstMissing->name() << "': " << e.what();
    }
    return;
  }
  const TensorMap got = b.compile(*form.fn)->run(form.inputs);
  EXPECT_EQ(compareOutputs(got, ref, tol), "");
}

class OpTable : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpTable, EveryBackendRunsWhatItSupports) {
  const auto backends = allBackends();
  const Form fl = floatForm(GetParam());
  const TensorMap floatRef = createInterpreterBackend()->compile(*fl.fn)->run(fl.inputs);
  for (const auto& b : backends)
    expectAsSupported(*b, fl, floatRef, 1e-5, "float");
  const Form q = int8Form(GetParam());
  const TensorMap int8Ref = createInterpreterBackend()->compile(*q.fn)->run(q.inputs);
  // Kinds without an int8 rule stay float between DequantizeLinear and QuantizeLinear:
  // their float arithmetic may round differently per backend.
  bool floatArithmetic = false;
  for (const auto& n : q.fn->nodes())
    floatArithmetic |=
        n->kind() != NodeKind::DequantizeLinear && n->resultType().kind == ElemKind::Float32;
  for (const auto& b : backends)
    expectAsSupported(*b, q, int8Ref, floatArithmetic ? 1e-5 : 0.0,
                      floatArithmetic ? "int8 with float nodes" : "int8");
}

INSTANTIATE_TEST_SUITE_P(All, OpTable, ::testing::ValuesIn(opCases()),
                         [](const ::testing::TestParamInfo<OpCase>& i) {
                           return std::string(i.param.name);
                         });

TEST(OpTable, EveryKindABackendClaimsIsSupportedBySomeCase) {
  const auto backends = allBackends();
  std::map<std::string, std::set<NodeKind>> supported; // backend -> kinds with a supported node
  std::set<NodeKind> inTable;
  std::map<std::string, int> wholeForms; // backend -> forms it runs whole
  int forms = 0;
  for (const OpCase& c : opCases()) {
    std::vector<Form> both;
    both.push_back(floatForm(c));
    both.push_back(int8Form(c));
    for (const Form& form : both) {
      ++forms;
      for (const auto& b : backends)
        wholeForms[b->name()] += unsupportedNodes(*b, *form.fn).empty();
      for (const auto& n : form.fn->nodes()) {
        inTable.insert(n->kind());
        for (const auto& b : backends)
          if (b->supports(*n))
            supported[b->name()].insert(n->kind());
      }
    }
  }
  for (const auto& b : backends) {
    std::printf("%-7s runs %3d of the table's %d forms whole\n", b->name().c_str(),
                wholeForms[b->name()], forms);
    EXPECT_GT(wholeForms[b->name()], 0) << b->name() << " runs no case of the table";
  }
  for (const auto& b : backends)
    for (NodeKind k : inTable) {
      // "via ..." names the form a kind takes on its way to the backend (a Lut, Slices):
      // nodes of the kind itself are not the backend's.
      if (!b->kindSupport(k).empty() && b->kindSupport(k).rfind("via ", 0) != 0) {
        EXPECT_TRUE(supported[b->name()].count(k))
            << b->name() << " reports '" << b->kindSupport(k) << "' for " << nodeKindName(k)
            << ", but no node of that kind in the table is supported";
      }
    }
}

// float64 and the other interpreter-only kinds: the interpreter computes them (expected
// values by hand), every other backend refuses the node by name.
TEST(OpTable, InterpreterOnlyElementKinds) {
  Module m;
  Function* f = m.createFunction("main");
  Node* x = m.createPlaceholder("x", Type(ElemKind::Float64, {3}));
  Node* u = m.createPlaceholder("u", Type(ElemKind::UInt8, {3}));
  Node* w = m.createConstant("w", Tensor::fromVector<double>({3}, {0.25, 1e-12, -3}));
  Node* add = f->create(NodeKind::Add, "add64", {x, w});
  Node* mul = f->create(NodeKind::Mul, "mul8", {u, u});
  f->addOutput("y", add);
  f->addOutput("z", mul);
  const TensorMap in = {{"x", Tensor::fromVector<double>({3}, {1, 1, 1.5})},
                        {"u", Tensor::fromVector<uint8_t>({3}, {3, 16, 200})}};
  for (const auto& b : allBackends()) {
    SCOPED_TRACE(b->name());
    if (b->name() == "interp") {
      const TensorMap out = b->compile(*f)->run(in);
      // 1 + 1e-12 is 1 in float32 but not in double; uint8 products wrap mod 256.
      EXPECT_EQ(out.at("y").toVector<double>(), (std::vector<double>{1.25, 1 + 1e-12, -1.5}));
      EXPECT_EQ(out.at("z").toVector<uint8_t>(), (std::vector<uint8_t>{9, 0, 64}));
      continue;
    }
    EXPECT_FALSE(b->supports(*add));
    EXPECT_FALSE(b->supports(*mul));
    try {
      b->compile(*f)->run(in);
      ADD_FAILURE() << b->name() << " ran float64/uint8 nodes";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("add64"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("mul8"), std::string::npos) << e.what();
    }
  }
}

TEST(OpTable, TheNpuIsARegisteredBackend) {
  session::registerNpuBackend();
  session::registerNpuBackend(); // a second call changes nothing
  const std::vector<std::string> names = backendNames();
  EXPECT_EQ(std::count(names.begin(), names.end(), "npu"), 1);
  EXPECT_EQ(createBackend("npu")->name(), "npu");
}

} // namespace
} // namespace ember::test
