#pragma once
// The operation a codegen unit compiles: a compute instruction of the low-level IR (its
// node's kind, attributes and result types, its input operands' types and, for inputs
// that are constant weights, their bytes), or a graph node when the backend is asked
// whether it supports that node. The units read shapes, types and constants through
// this one view, so the same unit serves both questions.

#include "ember/graph/Node.h"

#include <string>
#include <vector>

namespace ember::lir {
class Instruction;
}

namespace ember::cpu {

/// One input of an operation; a default-constructed input is absent (an ONNX "" input).
class OpInput {
public:
  OpInput() = default;
  OpInput(unsigned index, const Type* type, const void* constant)
      : index_(index), type_(type), constant_(constant) {}

  explicit operator bool() const { return type_ != nullptr; }
  /// Position among the operation's inputs.
  unsigned index() const { return index_; }
  const Type& type() const;
  const Shape& dims() const { return type().dims; }
  ElemKind kind() const { return type().kind; }
  /// Whether the input is a weight known at compile time.
  bool isConstant() const { return constant_ != nullptr; }
  /// The constant's bytes (null if the input is not constant), laid out as type().
  const void* constant() const { return constant_; }
  template <class T> const T* constantData() const { return static_cast<const T*>(constant_); }

private:
  unsigned index_ = 0;
  const Type* type_ = nullptr;
  const void* constant_ = nullptr;
};

/// An operation to compile (see the file comment). Holds references: the node or
/// instruction it was made from must outlive it.
class Op {
public:
  /// A graph node: inputs are its input values, constants the Constants among them.
  static Op ofNode(const Node& n);
  /// A compute instruction: inputs are its `@in` operands, constants the operands that
  /// are (views of) constant weights.
  static Op ofInstruction(const lir::Instruction& in);

  /// The node: kind, name, attributes and result types (a lir node has no inputs).
  const Node& node() const { return *node_; }
  NodeKind kind() const { return node_->kind(); }
  const char* kindName() const { return node_->kindName(); }
  const std::string& name() const { return node_->name(); }
  const Attrs& attrs() const { return node_->attrs(); }
  size_t numResults() const { return node_->numResults(); }
  const Type& resultType(unsigned i = 0) const { return node_->resultType(i); }
  const std::vector<Type>& resultTypes() const { return node_->resultTypes(); }

  size_t numInputs() const { return inputs_.size(); }
  /// Input i (may be absent); ember::Error if i is out of range.
  const OpInput& input(size_t i) const;
  /// Input i, absent when out of range.
  OpInput optionalInput(size_t i) const { return i < inputs_.size() ? inputs_[i] : OpInput(); }
  const std::vector<OpInput>& inputs() const { return inputs_; }

private:
  const Node* node_ = nullptr;
  std::vector<OpInput> inputs_;
};

/// "Kind 'name'" for messages.
std::string nodeRef(const Node& n);
std::string nodeRef(const Op& n);

} // namespace ember::cpu
