// The interpreter's int8 kernels against int8_reference.py, an independent numpy
// implementation of docs/numerics.md section 4 run at test time (fixture
// quant.int8_reference): every case must agree bit for bit.
#include "ember/graph/OpInfo.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

using namespace ember;

namespace {

const std::string kCaseDir = std::string(EMBER_BINARY_DIR) + "/tests/compiler/quant/int8_ref";

/// The quantization parameters of a case operand (per tensor or per axis).
QuantParams paramsOf(const nlohmann::json& j) {
  QuantParams q;
  if (j.contains("scale")) {
    q.scales = {j["scale"].get<float>()};
    q.zeroPoints = {j["zero_point"].get<int32_t>()};
  } else if (j.contains("scales")) {
    q.scales = j["scales"].get<std::vector<float>>();
    q.zeroPoints = j["zero_points"].get<std::vector<int32_t>>();
    q.axis = j["axis"].get<int>();
  }
  return q;
}

Attrs attrsOf(const nlohmann::json& j) {
  Attrs a;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const nlohmann::json& v = it.value();
    if (v.is_string())
      a.set(it.key(), v.get<std::string>());
    else if (v.is_number_integer())
      a.set(it.key(), v.get<int64_t>());
    else if (v.is_number_float())
      a.set(it.key(), v.get<double>());
    else if (v.is_array())
      a.set(it.key(), v.get<std::vector<int64_t>>());
  }
  return a;
}

/// Builds the case's node, runs it and returns the int8 result.
Tensor runCase(const nlohmann::json& c) {
  Module m;
  Function* f = m.createFunction("main");
  NodeKind kind;
  if (!parseNodeKind(c["op"].get<std::string>(), &kind))
    throw Error("unknown op " + c["op"].get<std::string>());
  std::vector<NodeValue> operands;
  TensorMap inputs;
  for (const auto& o : c["operands"]) {
    Tensor t = readNpy(o["file"].get<std::string>());
    t.mutableType().quant = paramsOf(o);
    if (o["role"] == "input") {
      const std::string name = "in" + std::to_string(inputs.size());
      operands.push_back(m.createPlaceholder(name, t.type())->result());
      inputs[name] = t;
    } else {
      operands.push_back(m.createConstant("c", t)->result());
    }
  }
  Tensor expected = readNpy(c["expected"].get<std::string>());
  QuantParams yq;
  yq.scales = {c["scale"].get<float>()};
  yq.zeroPoints = {c["zero_point"].get<int32_t>()};
  // The result types the kind infers (LayerNormalization has three), the first int8.
  const Attrs attrs = attrsOf(c["attrs"]);
  std::vector<Type> types = findOpInfo(kind)->infer(operands, attrs);
  types[0] = Type(ElemKind::Int8, expected.dims(), yq);
  Node* n = f->create(kind, c["name"].get<std::string>(), operands, attrs, types);
  f->addOutput("y", n->result());
  return Interpreter(*f).run(inputs).at("y");
}

TEST(QuantInt8Kernels, MatchNumpyReferenceBitForBit) {
  std::ifstream in(kCaseDir + "/cases.json");
  ASSERT_TRUE(in) << "missing " << kCaseDir << "/cases.json (run the quant.int8_reference test)";
  const nlohmann::json cases = nlohmann::json::parse(in);
  ASSERT_GE(cases.size(), 70u);
  std::map<std::string, int> perOp;
  for (const auto& c : cases) {
    const std::string name = c["name"].get<std::string>();
    SCOPED_TRACE(name);
    Tensor expected = readNpy(c["expected"].get<std::string>());
    Tensor got = runCase(c);
    ASSERT_EQ(got.dims(), expected.dims());
    const std::vector<int8_t> g = got.toVector<int8_t>(), e = expected.toVector<int8_t>();
    int64_t diff = 0, first = -1;
    for (size_t i = 0; i < g.size(); ++i)
      if (g[i] != e[i] && diff++ == 0)
        first = int64_t(i);
    EXPECT_EQ(diff, 0) << diff << " of " << g.size() << " differ; first at " << first << ": "
                       << int(g[size_t(first < 0 ? 0 : first)]) << " vs "
                       << int(e[size_t(first < 0 ? 0 : first)]);
    // The case must exercise more than saturation.
    std::set<int8_t> distinct(e.begin(), e.end());
    EXPECT_GT(distinct.size(), size_t(2)) << "degenerate case";
    ++perOp[c["op"].get<std::string>()];
  }
  for (const auto& [op, count] : perOp)
    std::cout << op << ": " << count << " cases\n";
  for (const char* op :
       {"Conv", "Gemm", "MatMul", "Add", "Mul", "MaxPool", "AveragePool", "GlobalAveragePool",
        "GlobalMaxPool", "Relu", "Clip", "Rescale", "Pad", "Softmax", "LayerNormalization"})
    EXPECT_GE(perOp[op], 1) << op;
}

TEST(QuantInt8Kernels, ParameterMismatchesAreErrors) {
  // Concat of differently quantized inputs and a MaxPool that would change parameters
  // are refused with the reason, not computed.
  Module m;
  Function* f = m.createFunction("main");
  QuantParams a, b;
  a.scales = {0.1f};
  a.zeroPoints = {0};
  b.scales = {0.2f};
  b.zeroPoints = {0};
  Node* x = m.createPlaceholder("x", Type(ElemKind::Int8, {1, 2}, a));
  Node* y = m.createPlaceholder("y", Type(ElemKind::Int8, {1, 2}, b));
  Attrs at;
  at.set("axis", int64_t(1));
  Node* cat = f->create(NodeKind::Concat, "cat", {x->result(), y->result()}, at,
                        std::vector<Type>{Type(ElemKind::Int8, {1, 4}, a)});
  f->addOutput("out", cat->result());
  Tensor tx(Type(ElemKind::Int8, {1, 2}, a)), ty(Type(ElemKind::Int8, {1, 2}, b));
  try {
    Interpreter(*f).run({{"x", tx}, {"y", ty}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Rescale"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'cat'"), std::string::npos) << e.what();
  }
}

} // namespace
