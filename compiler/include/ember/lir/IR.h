#pragma once
/// \file
/// The low-level IR (Glow's second phase): instructions over memory buffers.
///
/// A `lir::Function` is a list of instructions and a set of `WeightVar`s. A WeightVar is
/// memory owned outside the function: a Constant's payload, a run-time input, or a
/// named output. Every other buffer is an *activation*: it exists between its
/// `AllocActivation` and `DeallocActivation` instructions, and a static memory planner
/// places it in one arena. A `TensorView` is a typed window on a buffer at a byte offset
/// (a reshape, or a slice along the outermost dimensions): no copy.
///
/// Compute instructions correspond one-to-one to graph node kinds: one class carries the
/// node's kind, name, attributes and result types, and its operands — first one `@out`
/// operand per result, then one `@in` operand per node input (null for an absent
/// optional input). Operands are marked `In`, `Out` or `InOut` so that passes know what
/// an instruction reads and writes. Which kinds may write a result over one of their
/// inputs (in place) is declared in one table (`isInPlaceSafe`).

#include "ember/graph/Node.h"

#include <list>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace ember::lir {

/// What an instruction does with an operand.
enum class OperandKind : uint8_t { In, Out, InOut };

/// "in", "out", "inout" (as printed after '@').
const char* operandKindName(OperandKind k);

/// The kinds of values: weights and the instructions (every instruction is a value,
/// named after what it defines, as in Glow).
enum class ValueKind : uint8_t { Weight, Alloc, Dealloc, View, Copy, Compute };

/// A named, typed value of the low-level IR.
class Value {
public:
  Value(ValueKind k, std::string name, Type t)
      : kind_(k), name_(std::move(name)), type_(std::move(t)) {}
  virtual ~Value() = default;
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  ValueKind valueKind() const { return kind_; }
  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }
  /// The type of the memory a buffer-like value (weight, alloc, view) denotes; empty
  /// for Dealloc / Copy / Compute.
  const Type& type() const { return type_; }
  size_t sizeInBytes() const { return type_.sizeInBytes(); }
  /// Weights, allocations and views are buffers operands may refer to.
  bool isBuffer() const {
    return kind_ == ValueKind::Weight || kind_ == ValueKind::Alloc || kind_ == ValueKind::View;
  }

private:
  ValueKind kind_;
  std::string name_;
  Type type_;
};

/// Memory owned outside the function.
class WeightVar : public Value {
public:
  enum class Role : uint8_t { Constant, Input, Output };
  /// `payload` is the Constant's tensor (Role::Constant only; not owned: the graph
  /// Module must outlive the function). `ioName` is the placeholder or output name.
  WeightVar(std::string name, Type t, Role role, const Tensor* payload, std::string ioName)
      : Value(ValueKind::Weight, std::move(name), std::move(t)), role_(role), payload_(payload),
        ioName_(std::move(ioName)) {}
  Role role() const { return role_; }
  const Tensor* payload() const { return payload_; }
  const std::string& ioName() const { return ioName_; }

private:
  Role role_;
  const Tensor* payload_;
  std::string ioName_;
};

/// One operand: a buffer (null for an absent optional input) and how it is used.
struct Operand {
  Value* value = nullptr;
  OperandKind kind = OperandKind::In;
};

/// An instruction. Alloc: no operands, defines a buffer of type(). Dealloc: one `@out`
/// operand, the Alloc it frees. View: one `@in` operand (the viewed buffer) and a byte
/// offset; defines a buffer of type(). Copy: `@out` destination, `@in` source, same
/// kind and byte size. Compute: see the file comment; node() holds kind, name,
/// attributes and result types, inputTypes() the types each `@in` operand must have.
class Instruction : public Value {
public:
  Instruction(ValueKind k, std::string name, Type t, std::vector<Operand> ops)
      : Value(k, std::move(name), std::move(t)), operands_(std::move(ops)) {}

  const std::vector<Operand>& operands() const { return operands_; }
  const Operand& operand(size_t i) const { return operands_.at(i); }
  void setOperandValue(size_t i, Value* v) { operands_.at(i).value = v; }
  void setOperandKind(size_t i, OperandKind k) { operands_.at(i).kind = k; }

  /// View: byte offset into the viewed buffer.
  size_t offset() const { return offset_; }
  void setOffset(size_t o) { offset_ = o; }

  /// Compute: the graph node this instruction stands for (no inputs: the operands are
  /// the inputs); kernels read its kind, attributes and result types.
  const Node& node() const { return *node_; }
  bool hasNode() const { return node_ != nullptr; }
  void setNode(std::unique_ptr<Node> n, std::vector<Type> inputTypes) {
    node_ = std::move(n);
    inputTypes_ = std::move(inputTypes);
  }
  const std::vector<Type>& inputTypes() const { return inputTypes_; }
  /// Compute or view made by IRGen: the node of the graph function it was generated
  /// from (null for instructions a pass or a backend made). A backend whose emitters read
  /// graph-level facts (the NPU's weight packing reads a Constant's neighbours) reaches
  /// them through it; the instruction's operands stay the truth about buffers.
  const ember::Node* origin() const { return origin_; }
  void setOrigin(const ember::Node* n) { origin_ = n; }
  /// Compute: number of leading `@out` operands (= the node's results).
  size_t numResults() const { return node_ ? node_->numResults() : 0; }

  /// "alloc", "dealloc", "tensorview", "copy" or the node kind's name.
  std::string opName() const;

private:
  std::vector<Operand> operands_;
  size_t offset_ = 0;
  std::unique_ptr<Node> node_;
  std::vector<Type> inputTypes_;
  const ember::Node* origin_ = nullptr;
};

using InstrList = std::list<std::unique_ptr<Instruction>>;
using InstrIt = InstrList::iterator;

/// A buffer's root (a weight or an allocation) and the byte offset of a value in it.
struct Location {
  Value* root = nullptr;
  size_t offset = 0;
};
/// Follows views down to the weight or allocation they look at.
Location locate(Value* v);

/// A low-level function.
class Function {
public:
  explicit Function(std::string name) : name_(std::move(name)) {}
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  const std::string& name() const { return name_; }

  WeightVar* addWeight(const std::string& name, Type t, WeightVar::Role role, const Tensor* payload,
                       const std::string& ioName);
  const std::vector<std::unique_ptr<WeightVar>>& weights() const { return weights_; }
  /// The input weight of placeholder `name` / the output weight named `name` (or null).
  WeightVar* findWeight(WeightVar::Role role, const std::string& ioName) const;

  InstrList& instructions() { return instrs_; }
  const InstrList& instructions() const { return instrs_; }

  /// Creates an instruction before `pos` (end() appends) and returns it.
  Instruction* insert(InstrIt pos, ValueKind k, const std::string& name, Type t,
                      std::vector<Operand> ops);
  /// Iterator of an instruction of this function (linear search).
  InstrIt find(const Instruction* in);
  /// Removes an instruction (no operand may still refer to it).
  void erase(const Instruction* in);
  /// Every operand referring to `from` refers to `to` instead.
  void replaceAllUsesOf(const Value* from, Value* to);

  /// A name not used by any value of the function yet, based on `base`.
  std::string uniqueName(const std::string& base);

  /// Number of instructions of each value kind.
  size_t count(ValueKind k) const;
  /// Allocations in program order.
  std::vector<Instruction*> allocations() const;
  /// Sum of the sizes of all allocations, in bytes.
  size_t allocatedBytes() const;

private:
  std::string name_;
  std::vector<std::unique_ptr<WeightVar>> weights_;
  InstrList instrs_;
  std::set<std::string> names_;
};

/// Whether a node kind may write its result over an input of the same element kind and
/// shape (elementwise kinds: each output element depends on the input elements of the
/// same index only, read before it is written). The one table passes and the verifier
/// consult.
bool isInPlaceSafe(NodeKind k);

/// Every problem of `f` (empty when valid): operands that are not buffers of this
/// function, buffers used before their allocation or after their deallocation (through
/// views too), allocations without exactly one later deallocation, views outside their
/// buffer or of another element kind, operand types that differ from the node's,
/// operand kinds that differ from the instruction's contract, writes to constants or
/// inputs, and overlapping operands other than an identical in-place pair of a kind
/// `isInPlaceSafe` accepts.
std::vector<std::string> verify(const Function& f);
/// Throws ember::Error listing every problem `verify` finds.
void verifyOrThrow(const Function& f);

/// Textual dump, one instruction per line, in Glow's style:
///   `%conv1 = Conv @out %conv1.res, @in %data, @in %w {group=1, ...}`
std::string dump(const Function& f);

} // namespace ember::lir
