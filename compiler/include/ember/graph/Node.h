#pragma once
/// \file
/// Nodes of the high-level graph IR.
///
/// A node has a kind (from Nodes.def), a unique name, typed results, inputs that refer
/// to results of other nodes, and ONNX-style attributes. Node kinds are data, not
/// classes: what a kind means is defined once in its OpInfo (compiler/graph/ops), so
/// adding an operator does not add a class hierarchy.

#include "ember/tensor/Tensor.h"
#include "ember/tensor/Type.h"

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace ember {

/// Every node kind of the IR (see Nodes.def).
enum class NodeKind : uint16_t {
#define EMBER_NODE(Name, Doc) Name,
#include "ember/graph/Nodes.def"
};

/// The kind's name as written in Nodes.def ("Conv").
const char* nodeKindName(NodeKind k);
/// The one-line description from Nodes.def.
const char* nodeKindDoc(NodeKind k);
/// Looks up a kind by name; false if there is none.
bool parseNodeKind(const std::string& s, NodeKind* out);
/// Number of node kinds.
size_t numNodeKinds();

class Node;

/// One result of one node: what an input refers to.
struct NodeValue {
  Node* node = nullptr;
  unsigned resNo = 0;

  NodeValue() = default;
  NodeValue(Node* n, unsigned r = 0) : node(n), resNo(r) {}
  const Type& type() const;
  const Shape& dims() const { return type().dims; }
  ElemKind kind() const { return type().kind; }
  explicit operator bool() const { return node != nullptr; }
  bool operator==(const NodeValue& o) const { return node == o.node && resNo == o.resNo; }
  bool operator!=(const NodeValue& o) const { return !(*this == o); }
  bool operator<(const NodeValue& o) const {
    return node != o.node ? node < o.node : resNo < o.resNo;
  }
};

/// An attribute value, as ONNX has them (graphs and tensors excluded: tensors become
/// Constant inputs and shape-like tensors become int lists).
using AttrValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

/// Named attributes of a node, ordered by name (so dumps are stable).
class Attrs {
public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
  void erase(const std::string& name) { values_.erase(name); }

  /// Typed getters; return `def` when the attribute is absent and throw ember::Error
  /// when present with another type.
  int64_t getInt(const std::string& name, int64_t def = 0) const;
  double getFloat(const std::string& name, double def = 0.0) const;
  std::string getString(const std::string& name, const std::string& def = "") const;
  std::vector<int64_t> getInts(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<double> getFloats(const std::string& name, std::vector<double> def = {}) const;

  const std::map<std::string, AttrValue>& all() const { return values_; }
  bool operator==(const Attrs& o) const { return values_ == o.values_; }
  /// "{axis=1, pads=[0, 0, 1, 1]}" or "" when empty.
  std::string toString() const;

private:
  std::map<std::string, AttrValue> values_;
};

/// A node of a Function (or a Placeholder/Constant of a Module).
class Node {
public:
  Node(NodeKind kind, std::string name, std::vector<NodeValue> inputs, std::vector<Type> results,
       Attrs attrs)
      : kind_(kind), name_(std::move(name)), inputs_(std::move(inputs)),
        results_(std::move(results)), attrs_(std::move(attrs)) {}

  NodeKind kind() const { return kind_; }
  const char* kindName() const { return nodeKindName(kind_); }
  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }

  size_t numInputs() const { return inputs_.size(); }
  const NodeValue& input(size_t i) const { return inputs_.at(i); }
  /// An optional input: null NodeValue when absent (ONNX "" inputs) or out of range.
  NodeValue optionalInput(size_t i) const { return i < inputs_.size() ? inputs_[i] : NodeValue(); }
  const std::vector<NodeValue>& inputs() const { return inputs_; }
  void setInput(size_t i, NodeValue v) { inputs_.at(i) = v; }

  size_t numResults() const { return results_.size(); }
  const Type& resultType(unsigned i = 0) const { return results_.at(i); }
  void setResultType(unsigned i, Type t) { results_.at(i) = std::move(t); }
  const std::vector<Type>& resultTypes() const { return results_; }
  NodeValue result(unsigned i = 0) { return NodeValue(this, i); }

  const Attrs& attrs() const { return attrs_; }
  Attrs& attrs() { return attrs_; }

  bool isStorage() const { return kind_ == NodeKind::Placeholder || kind_ == NodeKind::Constant; }
  /// The payload of a Constant (throws for other kinds).
  const Tensor& payload() const;
  Tensor& payload();
  void setPayload(Tensor t);

private:
  NodeKind kind_;
  std::string name_;
  std::vector<NodeValue> inputs_;
  std::vector<Type> results_;
  Attrs attrs_;
  std::unique_ptr<Tensor> payload_;
};

inline const Type& NodeValue::type() const {
  return node->resultType(resNo);
}

} // namespace ember
