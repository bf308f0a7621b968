// The low-level IR: IRGen's output, the textual dump, the verifier's diagnostics.
#include "LirTestUtil.h"

#include "ember/support/Error.h"

namespace ember {
namespace {

using namespace lirtest;
using lir::OperandKind;
using lir::ValueKind;

/// A compute instruction of `kind` whose results have `resultTypes`, appended to `f`.
lir::Instruction* compute(lir::Function& f, NodeKind kind, const std::string& name,
                          std::vector<Type> resultTypes, std::vector<lir::Value*> outs,
                          std::vector<lir::Value*> ins) {
  std::vector<lir::Operand> ops;
  for (lir::Value* o : outs)
    ops.push_back({o, OperandKind::Out});
  std::vector<Type> inTypes;
  for (lir::Value* i : ins) {
    ops.push_back({i, OperandKind::In});
    inTypes.push_back(i->type());
  }
  lir::Instruction* c =
      f.insert(f.instructions().end(), ValueKind::Compute, name, Type(), std::move(ops));
  c->setNode(
      std::make_unique<Node>(kind, name, std::vector<NodeValue>{}, std::move(resultTypes), Attrs()),
      std::move(inTypes));
  return c;
}

lir::Instruction* alloc(lir::Function& f, const std::string& name, Type t) {
  return f.insert(f.instructions().end(), ValueKind::Alloc, name, std::move(t), {});
}
void dealloc(lir::Function& f, lir::Value* a) {
  f.insert(f.instructions().end(), ValueKind::Dealloc, "", Type(), {{a, OperandKind::Out}});
}

bool mentions(const std::vector<std::string>& problems, const std::string& what) {
  for (const std::string& p : problems)
    if (p.find(what) != std::string::npos)
      return true;
  return false;
}

const Type f23(ElemKind::Float32, {2, 3});

/// x -> MatMul(x, w) -> Relu -> Reshape -> output.
struct SmallGraph : G {
  SmallGraph() {
    NodeValue x = input("x", {2, 3});
    NodeValue w = constant("w", {3, 4});
    NodeValue mm = node(NodeKind::MatMul, "mm", {x, w});
    NodeValue r = node(NodeKind::Relu, "r", {mm});
    output("out", node(NodeKind::Reshape, "rs", {r}, attrs({{"shape", std::vector<int64_t>{8}}})));
  }
};

TEST(LirIR, IRGenDumpsOneInstructionPerLine) {
  SmallGraph g;
  auto f = lir::generateIR(*g.f, lir::topologicalOrder(*g.f));
  EXPECT_TRUE(lir::verify(*f).empty());
  EXPECT_EQ(lir::dump(*f), "lir function main {\n"
                           "  weight %x : float32[2, 3] input \"x\"\n"
                           "  weight %out : float32[8] output \"out\"\n"
                           "  weight %w : float32[3, 4] constant\n"
                           "  %mm.res = allocactivation : float32[2, 4]\n"
                           "  %mm = MatMul @out %mm.res, @in %x, @in %w\n"
                           "  %r.res = allocactivation : float32[2, 4]\n"
                           "  %r = Relu @out %r.res, @in %mm.res\n"
                           "  %rs = tensorview @in %r.res, offset 0 : float32[8]\n"
                           "  %out.copy = copy @out %out, @in %rs\n"
                           "  deallocactivation @out %r.res\n"
                           "  deallocactivation @out %mm.res\n"
                           "}\n");
}

TEST(LirIR, DefaultPassesWriteTheOutputDirectly) {
  SmallGraph g;
  auto f = lir::generateIR(*g.f, lir::topologicalOrder(*g.f));
  lir::runLirPipeline(*f, lir::defaultLirPipeline());
  // The copy is gone (Relu writes a view of the output), the Reshape view is unused.
  EXPECT_EQ(lir::dump(*f), "lir function main {\n"
                           "  weight %x : float32[2, 3] input \"x\"\n"
                           "  weight %out : float32[8] output \"out\"\n"
                           "  weight %w : float32[3, 4] constant\n"
                           "  %mm.res = allocactivation : float32[2, 4]\n"
                           "  %mm = MatMul @out %mm.res, @in %x, @in %w\n"
                           "  %r.res.1 = tensorview @in %out, offset 0 : float32[2, 4]\n"
                           "  %r = Relu @out %r.res.1, @in %mm.res\n"
                           "  deallocactivation @out %mm.res\n"
                           "}\n");
  const TensorMap in = g.randomInputs();
  EXPECT_EQ(bitDifference(lir::LirInterpreter(*f).run(in), Interpreter(*g.f).run(in)), "");
}

TEST(LirIR, SplitAndSliceOfOuterDimensionsAreViews) {
  G g;
  NodeValue x = g.input("x", {1, 6, 2});
  Node* s = g.multi(NodeKind::Split, "s", {x},
                    attrs({{"axis", int64_t(1)}, {"split", std::vector<int64_t>{2, 4}}}));
  NodeValue sl = g.node(
      NodeKind::Slice, "sl", {NodeValue(s, 1)},
      attrs({{"starts", std::vector<int64_t>{0, 1, 0}}, {"ends", std::vector<int64_t>{1, 3, 2}}}));
  NodeValue a = g.node(NodeKind::Add, "a", {NodeValue(s, 0), sl});
  g.output("y", a);
  auto f = lir::generateIR(*g.f, lir::topologicalOrder(*g.f));
  EXPECT_EQ(f->count(ValueKind::View), 3u);
  EXPECT_EQ(f->count(ValueKind::Alloc), 1u);
  // s.1 starts after 2*2 floats; sl starts one row of 2 floats into s.1.
  std::vector<size_t> offsets;
  for (const auto& in : f->instructions())
    if (in->valueKind() == ValueKind::View)
      offsets.push_back(in->offset());
  EXPECT_EQ(offsets, (std::vector<size_t>{0, 16, 8}));
  // A slice with a step, or inner to a dimension larger than one, is computed.
  G h;
  NodeValue y = h.input("y", {2, 4});
  h.output("o", h.node(NodeKind::Slice, "cut", {y},
                       attrs({{"starts", std::vector<int64_t>{0, 1}},
                              {"ends", std::vector<int64_t>{2, 3}}})));
  EXPECT_EQ(lir::generateIR(*h.f, lir::topologicalOrder(*h.f))->count(ValueKind::View), 0u);
  const TensorMap in = g.randomInputs();
  EXPECT_EQ(bitDifference(lir::LirInterpreter(lir::compileToLir(*g.f)).run(in),
                          Interpreter(*g.f).run(in)),
            "");
  // Each view and compute instruction names the node it came from.
  std::vector<std::string> origins;
  for (const auto& i : f->instructions())
    if (i->origin())
      origins.push_back(i->origin()->name() + ":" + i->opName());
  EXPECT_EQ(origins,
            (std::vector<std::string>{"s:tensorview", "s:tensorview", "sl:tensorview", "a:Add"}));
  // Without views (a backend whose buffers are not row-major), every node is computed.
  lir::IRGenOptions noViews;
  noViews.views = false;
  auto c = lir::generateIR(*g.f, lir::topologicalOrder(*g.f), noViews);
  EXPECT_EQ(c->count(ValueKind::View), 0u);
  EXPECT_EQ(c->count(ValueKind::Compute), 3u);
  EXPECT_EQ(lir::verify(*c), std::vector<std::string>{});
  EXPECT_EQ(bitDifference(lir::LirInterpreter(std::move(c)).run(in), Interpreter(*g.f).run(in)),
            "");
}

TEST(LirVerifier, ReportsUseAfterDeallocAndMissingDealloc) {
  lir::Function f("bad");
  lir::WeightVar* x = f.addWeight("x", f23, lir::WeightVar::Role::Input, nullptr, "x");
  lir::Instruction* a = alloc(f, "a", f23);
  compute(f, NodeKind::Relu, "r1", {f23}, {a}, {x});
  dealloc(f, a);
  lir::Instruction* b = alloc(f, "b", f23);
  compute(f, NodeKind::Relu, "r2", {f23}, {b}, {a});
  const auto problems = lir::verify(f);
  EXPECT_TRUE(
      mentions(problems, "instruction 'r2' (Relu): operand 1 %a uses %a after its dealloc"));
  EXPECT_TRUE(mentions(problems, "allocation 'b' is never deallocated"));
  EXPECT_THROW(lir::verifyOrThrow(f), Error);
}

TEST(LirVerifier, ReportsTypeMismatchAndWritesToInputs) {
  lir::Function f("bad");
  lir::WeightVar* x = f.addWeight("x", f23, lir::WeightVar::Role::Input, nullptr, "x");
  lir::Instruction* a = alloc(f, "a", Type(ElemKind::Float32, {3, 2}));
  compute(f, NodeKind::Relu, "r", {f23}, {a}, {x});
  compute(f, NodeKind::Relu, "w", {f23}, {x}, {x});
  dealloc(f, a);
  const auto problems = lir::verify(f);
  EXPECT_TRUE(mentions(problems, "operand 0 %a is float32[3, 2], expects float32[2, 3]"));
  EXPECT_TRUE(mentions(problems, "writes %x, which is a constant or an input"));
}

TEST(LirVerifier, InPlaceOnlyForDeclaredKinds) {
  lir::Function f("inplace");
  lir::WeightVar* x = f.addWeight("x", f23, lir::WeightVar::Role::Input, nullptr, "x");
  lir::Instruction* a = alloc(f, "a", f23);
  compute(f, NodeKind::Neg, "n", {f23}, {a}, {x});
  compute(f, NodeKind::Relu, "r", {f23}, {a}, {a}); // elementwise: legal
  dealloc(f, a);
  EXPECT_TRUE(lir::verify(f).empty());
  compute(f, NodeKind::Softmax, "sm", {f23}, {a}, {a}); // after dealloc, and not in place-safe
  lir::Instruction* b = alloc(f, "b", f23);
  compute(f, NodeKind::Neg, "n2", {f23}, {b}, {x});
  compute(f, NodeKind::Softmax, "sm2", {f23}, {b}, {b});
  dealloc(f, b);
  const auto problems = lir::verify(f);
  EXPECT_TRUE(mentions(problems, "instruction 'sm2' (Softmax): operands 0 and 1 overlap in %b "
                                 "(not a legal in-place pair)"));
  EXPECT_TRUE(mentions(problems, "'sm' (Softmax): operand 0 %a uses %a after its dealloc"));
  EXPECT_TRUE(lir::isInPlaceSafe(NodeKind::Add));
  EXPECT_FALSE(lir::isInPlaceSafe(NodeKind::Conv));
}

TEST(LirVerifier, ViewsStayInsideTheirBuffer) {
  lir::Function f("view");
  lir::Instruction* a = alloc(f, "a", f23);
  lir::Instruction* v = f.insert(f.instructions().end(), ValueKind::View, "v",
                                 Type(ElemKind::Float32, {2}), {{a, OperandKind::In}});
  v->setOffset(20); // bytes [20, 28) of 24
  lir::Instruction* w = f.insert(f.instructions().end(), ValueKind::View, "w",
                                 Type(ElemKind::Int32, {2}), {{a, OperandKind::In}});
  w->setOffset(0);
  dealloc(f, a);
  const auto problems = lir::verify(f);
  EXPECT_TRUE(mentions(problems, "views bytes [20, 28) of %a, which has 24"));
  EXPECT_TRUE(mentions(problems, "'w' (tensorview): views %a of float32 as int32"));
}

TEST(LirIR, IRGenRejectsAnOrderThatIsNotTopological) {
  SmallGraph g;
  lir::NodeOrder order = lir::topologicalOrder(*g.f);
  std::swap(order[0], order[1]);
  EXPECT_THROW(lir::generateIR(*g.f, order), Error);
}

TEST(LirInterpreter, InputErrorsNameTheInput) {
  SmallGraph g;
  lir::LirInterpreter run(lir::compileToLir(*g.f));
  const auto message = [&](const TensorMap& in) -> std::string {
    try {
      run.run(in);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message({}), "input 'x': no value given (expects float32[2, 3])");
  EXPECT_EQ(message({{"x", Tensor(ElemKind::Float32, {3, 2})}}),
            "input 'x': given float32[3, 2], the model expects float32[2, 3]");
  EXPECT_EQ(message({{"x", Tensor(ElemKind::Float32, {2, 3})}, {"z", Tensor()}}),
            "input 'z': the model has no input of this name");
}

TEST(LirInterpreter, RefusesFunctionsThatDoNotVerify) {
  lir::Function f("bad");
  alloc(f, "a", f23);
  EXPECT_THROW(lir::LirInterpreter{f}, Error);
  EXPECT_THROW(lir::planMemory(f), Error); // 'a' is never deallocated
}

} // namespace
} // namespace ember
