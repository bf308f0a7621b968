// Module / Function construction, type inference on create, uses, DCE, topo sort, dumps.
#include "ember/graph/Graph.h"
#include "ember/graph/Dump.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace ember;

namespace {
struct Fixture {
  Module m;
  Function* f = m.createFunction("main");
  Node* x = m.createPlaceholder("x", Type(ElemKind::Float32, {2, 3}));
  Node* y = m.createPlaceholder("y", Type(ElemKind::Float32, {3}));
};
} // namespace

TEST(Graph, CreateInfersBroadcastTypes) {
  Fixture s;
  Node* add = s.f->create(NodeKind::Add, "add", {s.x, s.y});
  EXPECT_EQ(add->resultType(), Type(ElemKind::Float32, {2, 3}));
  Node* cmp = s.f->create(NodeKind::Less, "lt", {s.x, add});
  EXPECT_EQ(cmp->resultType().kind, ElemKind::Bool);
}

TEST(Graph, CreateRejectsIllTypedNodesWithTheirName) {
  Fixture s;
  Node* z = s.m.createPlaceholder("z", Type(ElemKind::Float32, {4}));
  try {
    s.f->create(NodeKind::Add, "bad_add", {s.x, z});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("Add node 'bad_add'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("do not broadcast"), std::string::npos) << msg;
  }
  Node* i = s.m.createPlaceholder("i", Type(ElemKind::Int64, {2, 3}));
  EXPECT_THROW(s.f->create(NodeKind::Add, "mixed", {s.x, i}), Error);
  EXPECT_THROW(s.f->create(NodeKind::Add, "few", {s.x}), Error);
  EXPECT_THROW(s.f->create(NodeKind::Sigmoid, "int_sigmoid", {i}), Error);
}

TEST(Graph, NamesAreMadeUnique) {
  Fixture s;
  Node* a = s.f->create(NodeKind::Relu, "r", {s.x});
  Node* b = s.f->create(NodeKind::Relu, "r", {a});
  EXPECT_EQ(a->name(), "r");
  EXPECT_NE(b->name(), "r");
  EXPECT_NE(s.m.uniqueName("x"), "x"); // placeholder names are taken too
}

TEST(Graph, ReplaceUsesAndEraseDead) {
  Fixture s;
  Node* r = s.f->create(NodeKind::Relu, "r", {s.x});
  Node* n = s.f->create(NodeKind::Neg, "n", {r});
  Node* unused = s.f->create(NodeKind::Exp, "unused", {s.x});
  s.f->addOutput("out", n);
  EXPECT_EQ(s.f->numUses(r), 1u);
  EXPECT_THROW(s.f->erase(r), Error);
  s.f->replaceAllUsesOf(r, NodeValue(s.x));
  EXPECT_EQ(s.f->numUses(r), 0u);
  EXPECT_EQ(s.f->eraseDeadNodes(), 2u); // r and unused
  EXPECT_EQ(s.f->numNodes(), 1u);
  EXPECT_EQ(s.f->findNode("unused"), nullptr);
  (void)unused;
}

TEST(Graph, TopoSortRepairsOrder) {
  Fixture s;
  Node* a = s.f->create(NodeKind::Relu, "a", {s.x});
  Node* b = s.f->create(NodeKind::Neg, "b", {s.x});
  Node* c = s.f->create(NodeKind::Add, "c", {a, b});
  s.f->addOutput("out", c);
  // Make a depend on c's producer b: a now must come after b.
  a->setInput(0, NodeValue(b));
  s.f->topoSort();
  std::vector<std::string> order;
  for (const auto& n : s.f->nodes())
    order.push_back(n->name());
  EXPECT_EQ(order, (std::vector<std::string>{"b", "a", "c"}));
  // A cycle is reported, not looped on.
  b->setInput(0, NodeValue(a));
  EXPECT_THROW(s.f->topoSort(), Error);
}

TEST(Graph, ConstantsCarryPayloadAndAreCollected) {
  Fixture s;
  Node* c = s.m.createConstant("bias", Tensor::fromVector<float>({3}, {1, 2, 3}));
  Node* add = s.f->create(NodeKind::Add, "add", {s.x, c});
  s.f->addOutput("out", add);
  s.m.createConstant("dead", Tensor::fromVector<float>({1}, {0}));
  EXPECT_EQ(s.m.eraseUnusedConstants(), 1u);
  EXPECT_EQ(s.m.constants().size(), 1u);
  EXPECT_EQ(c->payload().toVector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_THROW(s.x->payload(), Error);
}

TEST(Graph, InputsListsUsedPlaceholdersInOrder) {
  Fixture s;
  Node* add = s.f->create(NodeKind::Add, "add", {s.y, s.x});
  s.f->addOutput("out", add);
  s.m.createPlaceholder("unused", Type(ElemKind::Float32, {1}));
  std::vector<Node*> in = s.f->inputs();
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0], s.x);
  EXPECT_EQ(in[1], s.y);
}

TEST(Dump, TextAndDotNameEveryNode) {
  Fixture s;
  Node* add = s.f->create(NodeKind::Add, "add", {s.x, s.y});
  Attrs a;
  a.set("alpha", 0.25);
  Node* lr = s.f->create(NodeKind::LeakyRelu, "lrelu", {add}, a);
  s.f->addOutput("out", lr);
  std::string text = dumpText(*s.f);
  EXPECT_NE(text.find("input %x : float32[2, 3]"), std::string::npos) << text;
  EXPECT_NE(text.find("%add = Add(%x, %y) : float32[2, 3]"), std::string::npos) << text;
  EXPECT_NE(text.find("%lrelu = LeakyRelu(%add) {alpha=0.25}"), std::string::npos) << text;
  EXPECT_NE(text.find("output \"out\" = %lrelu"), std::string::npos) << text;
  std::ostringstream dot;
  dumpDot(*s.f, dot);
  EXPECT_EQ(dot.str().rfind("digraph", 0), 0u);
  EXPECT_NE(dot.str().find("LeakyRelu"), std::string::npos);
  EXPECT_NE(dot.str().find("output"), std::string::npos);
}

TEST(NodeKinds, EveryKindHasANameAndParsesBack) {
  for (size_t i = 0; i < numNodeKinds(); ++i) {
    NodeKind k = static_cast<NodeKind>(i), back;
    ASSERT_TRUE(parseNodeKind(nodeKindName(k), &back)) << nodeKindName(k);
    EXPECT_EQ(back, k);
    EXPECT_GT(std::string(nodeKindDoc(k)).size(), 0u);
  }
}

TEST(Attrs, TypedGettersCheckTypes) {
  Attrs a;
  a.set("axis", int64_t(1));
  a.set("pads", std::vector<int64_t>{1, 1, 0, 0});
  a.set("mode", std::string("reflect"));
  EXPECT_EQ(a.getInt("axis"), 1);
  EXPECT_EQ(a.getFloat("axis"), 1.0); // ints widen to float
  EXPECT_EQ(a.getInt("missing", 7), 7);
  EXPECT_EQ(a.getInts("pads"), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_THROW(a.getInt("mode"), Error);
  EXPECT_EQ(a.toString(), "{axis=1, mode=\"reflect\", pads=[1, 1, 0, 0]}");
}
