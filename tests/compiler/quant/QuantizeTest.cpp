// The quantize pass on hand-built graphs: the form of docs/numerics.md section 5, the
// parameters of weights and biases (section 4.8), Rescale before Concat, Lut tables, the
// float fallback, and agreement with the float function.
#include "ember/quantization/Quantize.h"
#include "ember/graph/Verifier.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/passes/Pass.h"
#include "ember/quantization/FoldQdq.h"
#include "ember/quantization/NormNumerics.h"
#include "ember/quantization/Numerics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace ember;
using namespace ember::quant;

namespace {

Tensor randomTensor(Shape dims, uint32_t seed, float scale = 1.f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0.f, scale);
  Tensor t(ElemKind::Float32, std::move(dims));
  for (int64_t i = 0; i < t.size(); ++i)
    t.data<float>()[i] = d(gen);
  return t;
}

double cosine(const Tensor& a, const Tensor& b) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    ab += double(a.data<float>()[i]) * b.data<float>()[i];
    aa += double(a.data<float>()[i]) * a.data<float>()[i];
    bb += double(b.data<float>()[i]) * b.data<float>()[i];
  }
  return ab / std::sqrt(aa * bb);
}

/// The Softmax result's parameters for the calibrated largest probability of its value in
/// `p` (numerics.md 4.10), worked out here: [0, 1] halved while the half still holds it.
QuantParams softmaxParamsFor(const Profile& p, const Node& softmax) {
  const TensorProfile* tp = p.find(profileKey(softmax, 0));
  EXPECT_NE(tp, nullptr) << softmax.name();
  double range = 1;
  for (int k = 0; tp && k < 16 && range / 2 >= tp->max; ++k)
    range /= 2;
  QuantParams q;
  q.scales = {float(range / 255)};
  q.zeroPoints = {-128};
  return q;
}

std::vector<std::string> kinds(const Function& f) {
  std::vector<std::string> out;
  for (const auto& n : f.nodes())
    out.push_back(n->kindName());
  return out;
}

/// x [1, 2, 6, 6] -> Conv (relu fused) -> MaxPool 2x2 -> Reshape [1, 18] -> Gemm [18, 4]
/// -> Softmax.
struct SmallCnn {
  Module m;
  Function* f;
  SmallCnn() {
    f = m.createFunction("main");
    Node* x = m.createPlaceholder("x", Type(ElemKind::Float32, {1, 2, 6, 6}));
    Node* w = m.createConstant("w", randomTensor({2, 2, 3, 3}, 1, 0.5f));
    Node* b = m.createConstant("b", randomTensor({2}, 2, 0.1f));
    Attrs ca;
    ca.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    ca.set("activation", std::string("relu"));
    Node* conv = f->create(NodeKind::Conv, "conv", {x->result(), w->result(), b->result()}, ca);
    Attrs pa;
    pa.set("kernel_shape", std::vector<int64_t>{2, 2});
    pa.set("strides", std::vector<int64_t>{2, 2});
    Node* pool = f->create(NodeKind::MaxPool, "pool", {conv->result()}, pa);
    Attrs ra;
    ra.set("shape", std::vector<int64_t>{1, 18});
    Node* flat = f->create(NodeKind::Reshape, "flat", {pool->result()}, ra);
    Node* gw = m.createConstant("gw", randomTensor({18, 4}, 3, 0.3f));
    Node* gc = m.createConstant("gc", randomTensor({4}, 4, 0.1f));
    Node* gemm = f->create(NodeKind::Gemm, "gemm", {flat->result(), gw->result(), gc->result()});
    Node* sm = f->create(NodeKind::Softmax, "softmax", {gemm->result()});
    f->addOutput("probs", sm->result());
    f->addOutput("logits", gemm->result());
  }
};

std::vector<TensorMap> calibration(const Function& f, int n) {
  return loadCalibration(f, "random:" + std::to_string(n));
}

TEST(Quantize, SmallCnnHasTheQuantizedForm) {
  SmallCnn c;
  Profile p = profileFunction(*c.f, calibration(*c.f, 16));
  QuantizeStats st;
  Function* q = quantize(*c.f, p, {}, &st);
  EXPECT_EQ(q->name(), "main_int8");
  EXPECT_TRUE(verifyFunction(*q).empty());
  // One Q after the input; int8 conv, pool, reshape, gemm, softmax (its input is int8);
  // a DQ per output.
  EXPECT_EQ(kinds(*q),
            (std::vector<std::string>{"QuantizeLinear", "Conv", "MaxPool", "Reshape", "Gemm",
                                      "Softmax", "DequantizeLinear", "DequantizeLinear"}));
  EXPECT_EQ(st.int8Nodes, 5u);
  EXPECT_EQ(st.quantizes, 1u);
  EXPECT_EQ(st.dequantizes, 2u);
  // The probabilities have the parameters of [0, 2^-k] holding their calibrated largest.
  EXPECT_EQ(q->findNode("softmax__1")->resultType().quant,
            softmaxParamsFor(p, *c.f->findNode("softmax")));
  const Node* conv = q->findNode("conv__1");
  ASSERT_NE(conv, nullptr);
  // Weights: int8 per output channel (axis 0), |w| <= 127 and the channel maximum at 127;
  // bias int32 with scales s_x * s_w[k].
  const Tensor& w8 = conv->input(1).node->payload();
  EXPECT_EQ(w8.kind(), ElemKind::Int8);
  EXPECT_EQ(w8.type().quant.axis, 0);
  ASSERT_EQ(w8.type().quant.scales.size(), 2u);
  const float sx = conv->input(0).type().quant.scales[0];
  const Tensor& b32 = conv->input(2).node->payload();
  EXPECT_EQ(b32.kind(), ElemKind::Int32);
  EXPECT_FLOAT_EQ(b32.type().quant.scales[1], float(double(sx) * w8.type().quant.scales[1]));
  // The input's parameters come from its profile: min/max widened to 0 (section 4.8).
  const TensorProfile* xp = p.find("x");
  EXPECT_EQ(conv->input(0).type().quant, chooseActivationParams(xp->min, xp->max));
  // The relu'd conv output has a range starting at 0: zero point -128, and the MaxPool
  // and Reshape keep the parameters.
  EXPECT_EQ(conv->resultType().quant.zeroPoints[0], -128);
  EXPECT_EQ(q->findNode("pool__1")->resultType().quant, conv->resultType().quant);
  EXPECT_EQ(q->findNode("flat__1")->resultType().quant, conv->resultType().quant);
  // Gemm weights per column (axis 1 of [K, N]).
  EXPECT_EQ(q->findNode("gemm__1")->input(1).type().quant.axis, 1);

  TensorMap in = {{"x", randomTensor({1, 2, 6, 6}, 99)}};
  TensorMap ref = Interpreter(*c.f).run(in), got = Interpreter(*q).run(in);
  EXPECT_GT(cosine(ref.at("logits"), got.at("logits")), 0.99);
  EXPECT_GT(cosine(ref.at("probs"), got.at("probs")), 0.99);
}

TEST(Quantize, KeepFloatAndMissingProfileFallBack) {
  SmallCnn c;
  Profile p = profileFunction(*c.f, calibration(*c.f, 4));
  QuantizeOptions o;
  o.keepFloat = {"gemm"};
  o.functionName = "kept";
  Function* q = quantize(*c.f, p, o);
  EXPECT_EQ(kinds(*q), (std::vector<std::string>{"QuantizeLinear", "Conv", "MaxPool", "Reshape",
                                                 "DequantizeLinear", "Gemm", "Softmax"}));
  // An empty profile: nothing can be quantized, the function is copied in float.
  Function* none = quantize(*c.f, Profile(), {});
  EXPECT_EQ(kinds(*none), kinds(*c.f));
}

/// x [1, 4] -> {x * 4, Sigmoid(x)} -> Concat; the sigmoid is also an output when
/// `sigmoidOutput`.
struct ConcatModel {
  Module m;
  Function* f;
  explicit ConcatModel(bool sigmoidOutput) {
    f = m.createFunction("main");
    Node* x = m.createPlaceholder("x", Type(ElemKind::Float32, {1, 4}));
    Node* big = m.createConstant("k", Tensor::fromVector<float>({1, 4}, {4, 4, 4, 4}));
    Node* mul = f->create(NodeKind::Mul, "mul", {x->result(), big->result()});
    Node* sig = f->create(NodeKind::Sigmoid, "sig", {x->result()});
    Attrs ca;
    ca.set("axis", int64_t(1));
    Node* cat = f->create(NodeKind::Concat, "cat", {mul->result(), sig->result()}, ca);
    f->addOutput("y", cat->result());
    if (sigmoidOutput)
      f->addOutput("s", sig->result());
  }
};

TEST(Quantize, ConcatInputsShareItsParametersOrAreRescaled) {
  // Inputs made only for the Concat are produced with its parameters: no Rescale.
  ConcatModel a(false);
  Profile pa = profileFunction(*a.f, calibration(*a.f, 8));
  QuantizeStats st;
  Function* qa = quantize(*a.f, pa, {}, &st);
  EXPECT_EQ(st.floatNodes, 0u);
  EXPECT_EQ(st.rescales, 0u);
  const Node* cat = qa->findNode("cat__1");
  EXPECT_EQ(cat->input(0).type().quant, cat->resultType().quant);
  EXPECT_EQ(cat->input(1).type().quant, cat->resultType().quant);
  // A sigmoid that is also an output keeps its own range and is Rescaled for the
  // Concat (whose range, the union, is x * 4's here).
  ConcatModel b(true);
  Profile pb = profileFunction(*b.f, calibration(*b.f, 8));
  Function* qb = quantize(*b.f, pb, {}, &st);
  EXPECT_EQ(st.rescales, 1u);
  EXPECT_EQ(qb->findNode("cat__1")->input(1).node->kind(), NodeKind::Rescale);
  const Node* lut = qb->findNode("sig__1");
  ASSERT_NE(lut, nullptr);
  EXPECT_EQ(lut->kind(), NodeKind::Lut);
  EXPECT_EQ(lut->attrs().getString("function"), "Sigmoid");
  const std::vector<int8_t> want = buildLut([](double v) { return 1 / (1 + std::exp(-v)); },
                                            lut->input(0).type().quant, lut->resultType().quant);
  EXPECT_EQ(lut->input(1).node->payload().toVector<int8_t>(), want);
  TensorMap in = {{"x", randomTensor({1, 4}, 5)}};
  EXPECT_GT(cosine(Interpreter(*a.f).run(in).at("y"), Interpreter(*qa).run(in).at("y")), 0.99);
  EXPECT_GT(cosine(Interpreter(*b.f).run(in).at("s"), Interpreter(*qb).run(in).at("s")), 0.99);
}

TEST(Quantize, RuleTableCoversTheContractKinds) {
  std::set<NodeKind> covered;
  for (const auto& r : quantizeRules()) {
    covered.insert(r.kind);
    EXPECT_FALSE(r.rule.empty());
  }
  for (NodeKind k : {NodeKind::Conv, NodeKind::Gemm, NodeKind::MatMul, NodeKind::Add, NodeKind::Mul,
                     NodeKind::MaxPool, NodeKind::AveragePool, NodeKind::GlobalAveragePool,
                     NodeKind::Concat, NodeKind::Sigmoid, NodeKind::Reshape, NodeKind::Transpose})
    EXPECT_TRUE(covered.count(k)) << nodeKindName(k);
  for (NodeKind k : {NodeKind::Softmax, NodeKind::LayerNormalization, NodeKind::Div})
    EXPECT_TRUE(covered.count(k)) << nodeKindName(k);
  EXPECT_FALSE(covered.count(NodeKind::LogSoftmax));
}

} // namespace

namespace {

TEST(Quantize, ErrorsNameTheirPlace) {
  SmallCnn c;
  Profile p = profileFunction(*c.f, calibration(*c.f, 2));
  quantize(*c.f, p);
  // The default name is taken now.
  EXPECT_THROW(quantize(*c.f, p), Error);
  // An int8 Conv whose input carries no quantization parameters is refused by its
  // kernel with the node's name.
  Module m;
  Function* f = m.createFunction("main");
  Node* x = m.createPlaceholder("x", Type(ElemKind::Int8, {1, 1, 3, 3}));
  QuantParams wq;
  wq.scales = {0.1f};
  wq.zeroPoints = {0};
  Tensor w(Type(ElemKind::Int8, {1, 1, 1, 1}, wq));
  Node* wc = m.createConstant("w", w);
  Node* conv = f->create(NodeKind::Conv, "qconv", {x->result(), wc->result()}, {},
                         std::vector<Type>{Type(ElemKind::Int8, {1, 1, 3, 3}, wq)});
  f->addOutput("y", conv->result());
  try {
    Interpreter(*f).run({{"x", Tensor(ElemKind::Int8, {1, 1, 3, 3})}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'qconv'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("per-tensor"), std::string::npos) << e.what();
  }
}

TEST(Quantize, FoldQdqLeavesFloatModelsAlone) {
  SmallCnn c;
  const size_t before = c.f->numNodes();
  EXPECT_EQ(runFoldQdq(*c.f), 0u);
  EXPECT_EQ(c.f->numNodes(), before);
  registerQuantPasses();
  EXPECT_NE(findPass("fold-qdq"), nullptr);
}

} // namespace

namespace {

TEST(Quantize, StandaloneBatchNormBecomesADepthwiseConv) {
  Module m;
  Function* f = m.createFunction("main");
  Node* x = m.createPlaceholder("x", Type(ElemKind::Float32, {1, 3, 4, 4}));
  std::vector<NodeValue> ins = {x->result()};
  const std::vector<std::vector<float>> params = {
      {1.5f, -0.5f, 2.f}, {0.1f, 0.2f, -0.3f}, {0.5f, -1.f, 0.f}, {1.f, 0.25f, 4.f}};
  for (size_t i = 0; i < params.size(); ++i)
    ins.push_back(
        m.createConstant("p" + std::to_string(i), Tensor::fromVector<float>({3}, params[i]))
            ->result());
  Node* bn = f->create(NodeKind::BatchNormalization, "bn", ins);
  f->addOutput("y", bn->result());
  Profile p = profileFunction(*f, calibration(*f, 8));
  Function* q = quantize(*f, p);
  const Node* conv = q->findNode("bn__1");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->kind(), NodeKind::Conv);
  EXPECT_EQ(conv->attrs().getInt("group"), 3);
  // Weight of channel 1: -0.5 / sqrt(0.25 + 1e-5), one element per channel: the code is
  // -127 and the scale |w| / 127.
  const Tensor& w = conv->input(1).node->payload();
  EXPECT_EQ(w.dims(), (Shape{3, 1, 1, 1}));
  EXPECT_EQ(w.data<int8_t>()[1], -127);
  EXPECT_NEAR(w.type().quant.scales[1], 0.5 / std::sqrt(0.25 + 1e-5) / 127, 1e-7);
  TensorMap in = {{"x", randomTensor({1, 3, 4, 4}, 11)}};
  EXPECT_GT(cosine(Interpreter(*f).run(in).at("y"), Interpreter(*q).run(in).at("y")), 0.99);
}

} // namespace

namespace {

/// One attention head and its normalisation, in float: with q, k, v [2, 6, 16],
/// LayerNorm(v + Softmax(q k^T / 4) v).
struct AttentionModel {
  Module m;
  Function* f;
  AttentionModel() {
    f = m.createFunction("main");
    auto in = [&](const char* name) {
      return m.createPlaceholder(name, Type(ElemKind::Float32, {2, 6, 16}))->result();
    };
    NodeValue q = in("q"), k = in("k"), v = in("v");
    Attrs t;
    t.set("perm", std::vector<int64_t>{0, 2, 1});
    NodeValue kt = f->create(NodeKind::Transpose, "kt", {k}, t)->result();
    NodeValue s = f->create(NodeKind::MatMul, "scores", {q, kt})->result();
    NodeValue four = m.createConstant("four", Tensor::scalar<float>(4.f))->result();
    NodeValue sd = f->create(NodeKind::Div, "scaled", {s, four})->result();
    NodeValue p = f->create(NodeKind::Softmax, "probs", {sd})->result();
    NodeValue o = f->create(NodeKind::MatMul, "context", {p, v})->result();
    NodeValue r = f->create(NodeKind::Add, "residual", {o, v})->result();
    Attrs ln;
    ln.set("axis", int64_t(-1));
    ln.set("epsilon", 1e-5);
    Node* norm = f->create(NodeKind::LayerNormalization, "norm",
                           {r, m.createConstant("gamma", randomTensor({16}, 7, 0.5f))->result(),
                            m.createConstant("beta", randomTensor({16}, 8, 0.2f))->result()},
                           ln);
    f->addOutput("y", norm->result());
  }
};

TEST(Quantize, AttentionIsInt8FromEndToEnd) {
  AttentionModel a;
  Profile p = profileFunction(*a.f, calibration(*a.f, 16));
  QuantizeStats st;
  Function* q = quantize(*a.f, p, {}, &st);
  EXPECT_TRUE(verifyFunction(*q).empty());
  // A QuantizeLinear per input (k's at the input: its Transpose moves int8 codes, which
  // the NPU can run), int8 MatMuls of two activations, the Div as a Mul by 1/4, Softmax
  // and LayerNorm; one DQ.
  EXPECT_EQ(st.floatNodes, 0u) << "the Transpose of input k moves int8 codes";
  EXPECT_EQ(q->findNode("kt__1")->resultType().kind, ElemKind::Int8);
  EXPECT_EQ(st.dequantizes, 1u);
  EXPECT_EQ(q->findNode("scores__1")->resultType().kind, ElemKind::Int8);
  EXPECT_EQ(q->findNode("scaled__1")->kind(), NodeKind::Mul);
  const Node* probs = q->findNode("probs__1");
  ASSERT_NE(probs, nullptr);
  EXPECT_EQ(probs->resultType().quant, softmaxParamsFor(p, *a.f->findNode("probs")));
  EXPECT_EQ(q->findNode("context__1")->input(1).node->kind(), NodeKind::QuantizeLinear);
  const Node* norm = q->findNode("norm__1");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->resultType().kind, ElemKind::Int8);
  EXPECT_EQ(norm->input(1).kind(), ElemKind::Float32); // the float scale stays an operand

  TensorMap in = {{"q", randomTensor({2, 6, 16}, 11)},
                  {"k", randomTensor({2, 6, 16}, 12)},
                  {"v", randomTensor({2, 6, 16}, 13)}};
  const TensorMap ref = Interpreter(*a.f).run(in), got = Interpreter(*q).run(in);
  const double c = cosine(ref.at("y"), got.at("y"));
  std::cout << "attention block, int8 against float: cosine " << c << "\n";
  EXPECT_GT(c, 0.99);
}

TEST(Quantize, AGraphInputMovedIntoAFloatNodeStaysFloat) {
  // Quantized at the input only when something computes on the moved codes in int8:
  // before LogSoftmax (float only) a Transpose of the input stays a float move, with no
  // QuantizeLinear / DequantizeLinear pair and its error; before a Softmax it is int8.
  Module m;
  Function* f = m.createFunction("main");
  NodeValue x = m.createPlaceholder("x", Type(ElemKind::Float32, {3, 8}))->result();
  Attrs t;
  t.set("perm", std::vector<int64_t>{1, 0});
  NodeValue tx = f->create(NodeKind::Transpose, "t", {x}, t)->result();
  f->addOutput("y", f->create(NodeKind::LogSoftmax, "log", {tx})->result());
  Profile p = profileFunction(*f, calibration(*f, 4));
  EXPECT_EQ(kinds(*quantize(*f, p, {})), (std::vector<std::string>{"Transpose", "LogSoftmax"}));
  Function* g = m.createFunction("g");
  NodeValue gx = g->create(NodeKind::Transpose, "t", {x}, t)->result();
  g->addOutput("y", g->create(NodeKind::Softmax, "sm", {gx})->result());
  Profile pg = profileFunction(*g, calibration(*g, 4));
  EXPECT_EQ(
      kinds(*quantize(*g, pg, {})),
      (std::vector<std::string>{"QuantizeLinear", "Transpose", "Softmax", "DequantizeLinear"}));
}

TEST(Quantize, SoftmaxOfAGraphInputIsInt8AndOfAFloatResultStaysFloat) {
  // A graph input is quantized where Softmax reads it (an int8 target such as the NPU
  // then runs it: a transformer's pre-norm LayerNorm, docs/compiler/quantization.md);
  // a value a float node computes (LogSoftmax stays float) is not quantized only to be
  // normalised, which would add error and two nodes.
  Module m;
  Function* f = m.createFunction("main");
  NodeValue x = m.createPlaceholder("x", Type(ElemKind::Float32, {3, 8}))->result();
  f->addOutput("y", f->create(NodeKind::Softmax, "sm", {x})->result());
  NodeValue l = f->create(NodeKind::LogSoftmax, "log", {x})->result();
  f->addOutput("z", f->create(NodeKind::Softmax, "sm2", {l})->result());
  Profile p = profileFunction(*f, calibration(*f, 4));
  Function* q = quantize(*f, p, {});
  EXPECT_EQ(kinds(*q), (std::vector<std::string>{"QuantizeLinear", "Softmax", "LogSoftmax",
                                                 "Softmax", "DequantizeLinear"}));
  for (const auto& n : q->nodes()) {
    if (n->kind() != NodeKind::Softmax)
      continue;
    const bool ofFloat = n->input(0).node->kind() == NodeKind::LogSoftmax;
    EXPECT_EQ(n->resultType().kind, ofFloat ? ElemKind::Float32 : ElemKind::Int8) << n->name();
  }
}

TEST(Quantize, SoftmaxRangeHoldsItsCalibratedLargestProbability) {
  // Rows of 8 equal scores: every probability is 1/8, so the range is [0, 1/8] (three
  // halvings of [0, 1]) and 1/8 is code 127: T[0] = 2^16, q = 2^16 * 2^16 / (8 * 2^16) =
  // 2^13, y = 2^13 * 255 / (2^-3 * 2^16) - 128 = 127. A classifier's certain class keeps
  // [0, 1].
  Module m;
  Function* f = m.createFunction("main");
  NodeValue x = m.createPlaceholder("x", Type(ElemKind::Float32, {4, 1}))->result();
  NodeValue zeros = m.createConstant("zeros", Tensor(ElemKind::Float32, {1, 8}))->result();
  NodeValue rows = f->create(NodeKind::Add, "rows", {x, zeros})->result();
  f->addOutput("y", f->create(NodeKind::Softmax, "sm", {rows})->result());
  Profile p = profileFunction(*f, calibration(*f, 4));
  Function* q = quantize(*f, p, {});
  const Node* sm = q->findNode("sm__1");
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(sm->resultType().quant.scales, std::vector<float>{float(0.125 / 255)});
  EXPECT_EQ(sm->resultType().quant.zeroPoints, std::vector<int32_t>{-128});
  TensorMap in;
  in["x"] = randomTensor({4, 1}, 5);
  const Tensor y = Interpreter(*q).run(in).at("y");
  for (int64_t i = 0; i < y.size(); ++i)
    EXPECT_FLOAT_EQ(y.data<float>()[i], 0.125f);
  EXPECT_EQ(softmaxResultParams(0.9).scales, std::vector<float>{float(1.0 / 255)});
  EXPECT_EQ(softmaxResultParams(0.5).scales, std::vector<float>{float(0.5 / 255)});
  EXPECT_EQ(softmaxResultParams(0.0).scales, std::vector<float>{float(1.0 / 255)});
}

} // namespace
