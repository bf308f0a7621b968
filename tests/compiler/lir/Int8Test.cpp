// An int8 graph in the form of docs/numerics.md section 5 (float input -> QuantizeLinear
// -> int8 nodes -> DequantizeLinear): IRGen takes element kinds and quantization
// parameters from the graph's types, the passes share an int8 buffer between values of
// different quantization parameters through a typed view, and the LIR interpreter
// matches the graph interpreter bit for bit.
#include "LirTestUtil.h"

namespace ember {
namespace {

using namespace lirtest;

TEST(LirInt8, QuantizedGraphThroughTheIR) {
  G g;
  NodeValue x = g.input("x", {2, 8});
  NodeValue q = g.node(NodeKind::QuantizeLinear, "q", {x},
                       attrs({{"scale", 0.05}, {"zero_point", int64_t(3)}}));
  // The quantizer gives int8 results their parameters explicitly (Relu keeps q's).
  NodeValue r = g.f->create(NodeKind::Relu, "r", {q}, {}, std::vector<Type>{q.type()})->result();
  const Type sum(ElemKind::Int8, {2, 8}, QuantParams{{0.1f}, {-2}, -1});
  NodeValue a = g.f->create(NodeKind::Add, "a", {r, q}, {}, std::vector<Type>{sum})->result();
  NodeValue rs = g.node(NodeKind::Reshape, "rs", {a}, attrs({{"shape", std::vector<int64_t>{16}}}));
  g.output("y", g.node(NodeKind::DequantizeLinear, "dq", {rs}));
  g.output("codes", r);

  auto f = lir::generateIR(*g.f, lir::memoryMinimizingOrder(*g.f));
  EXPECT_EQ(f->count(lir::ValueKind::Alloc), 4u); // q, r, a, dq
  EXPECT_EQ(f->allocatedBytes(), 16u * 3 + 64u);
  lir::runLirPipeline(*f, lir::defaultLirPipeline());
  // r writes the "codes" output, dq writes "y"; a's result lives over q (which dies at
  // a) through a view typed with a's quantization parameters.
  EXPECT_EQ(f->count(lir::ValueKind::Alloc), 1u);
  EXPECT_EQ(f->allocatedBytes(), 16u);
  const std::string text = lir::dump(*f);
  EXPECT_NE(text.find("%a = Add @out %a.res.1, @in %codes, @in %q.res"), std::string::npos) << text;
  EXPECT_NE(text.find("%a.res.1 = tensorview @in %q.res, offset 0 : " + sum.toString()),
            std::string::npos)
      << text;

  for (int trial = 0; trial < 5; ++trial) {
    const TensorMap in = g.randomInputs();
    EXPECT_EQ(bitDifference(lir::LirInterpreter(*f).run(in), Interpreter(*g.f).run(in)), "");
  }
}

} // namespace
} // namespace ember
