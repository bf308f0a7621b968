// The verifier catches what passes could break: use before def, retyped results,
// missing outputs, payload/type disagreement; the interpreter refuses unknown kernels.
#include "ember/graph/Verifier.h"
#include "ember/backend/Backend.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

using namespace ember;

namespace {
bool mentions(const std::vector<std::string>& errs, const std::string& what) {
  for (const auto& e : errs)
    if (e.find(what) != std::string::npos)
      return true;
  return false;
}
} // namespace

TEST(Verifier, AcceptsAWellFormedFunction) {
  Module m;
  Function* f = m.createFunction("main");
  Node* x = m.createPlaceholder("x", Type(ElemKind::Float32, {4}));
  Node* r = f->create(NodeKind::Relu, "r", {x});
  f->addOutput("out", r);
  EXPECT_TRUE(verifyFunction(*f).empty());
  EXPECT_NO_THROW(verifyOrThrow(*f));
}

TEST(Verifier, ReportsEveryProblemAtOnce) {
  Module m;
  Function* f = m.createFunction("main");
  Node* x = m.createPlaceholder("x", Type(ElemKind::Float32, {4}));
  Node* a = f->create(NodeKind::Relu, "a", {x});
  Node* b = f->create(NodeKind::Neg, "b", {a});
  // Use before definition: a reads b, which comes later.
  a->setInput(0, NodeValue(b));
  // A result retyped behind the registry's back.
  b->setResultType(0, Type(ElemKind::Float32, {5}));
  std::vector<std::string> errs = verifyFunction(*f);
  EXPECT_TRUE(mentions(errs, "Relu 'a': input 0 is not defined before use")) << errs.size();
  EXPECT_TRUE(mentions(errs, "Neg 'b': result 0 is float32[5], inference gives float32[4]"));
  EXPECT_TRUE(mentions(errs, "Relu 'a': result 0 is float32[4], inference gives float32[5]"));
  EXPECT_TRUE(mentions(errs, "has no outputs"));
  try {
    verifyOrThrow(*f);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("4 problem(s)"), std::string::npos) << e.what();
  }
}

TEST(Verifier, ReportsDuplicateOutputs) {
  Module m;
  Function* f = m.createFunction("main");
  Node* x = m.createPlaceholder("x", Type(ElemKind::Float32, {4}));
  Node* r = f->create(NodeKind::Relu, "r", {x});
  f->addOutput("out", r);
  f->addOutput("out", r);
  EXPECT_TRUE(mentions(verifyFunction(*f), "listed twice"));
}

TEST(Backend, RegistryKnowsTheInterpreter) {
  auto b = createBackend("interp");
  EXPECT_EQ(b->name(), "interp");
  try {
    createBackend("tpu");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("known: interp"), std::string::npos) << e.what();
  }
}

TEST(Interpreter, RejectsMissingAndMistypedInputs) {
  Module m;
  Function* f = m.createFunction("main");
  Node* x = m.createPlaceholder("x", Type(ElemKind::Float32, {2}));
  Node* n = f->create(NodeKind::Neg, "n", {x});
  f->addOutput("out", n);
  Interpreter interp(*f);
  EXPECT_THROW(interp.run({}), Error);
  EXPECT_THROW(interp.run({{"x", Tensor::fromVector<float>({3}, {1, 2, 3})}}), Error);
  EXPECT_THROW(interp.run({{"x", Tensor::fromVector<float>({2}, {1, 2})},
                           {"nope", Tensor::fromVector<float>({2}, {1, 2})}}),
               Error);
}
