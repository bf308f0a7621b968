// ONNX ModelProto -> Ember Module: model checks, graph inputs and initializers, the
// per-node import context handed to the operator importers, constant folding.
#include "ember/importer/OnnxImporter.h"

#include "InputShapes.h"
#include "OnnxTensor.h"
#include "ember/graph/Verifier.h"
#include "ember/importer/OnnxOpImporter.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/passes/Pass.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace ember {

namespace {

/// Opsets below kOldestFullOpset are taken operator by operator: a node is imported when
/// its ONNX definition at the model's opset is the one opset kOldestFullOpset has (Elu-6,
/// GlobalAveragePool-1), and listed as unsupported when it is an older one (Add-6 with
/// its `broadcast` attribute).
constexpr int64_t kMinOpset = 1;
constexpr int64_t kOldestFullOpset = 7;
constexpr int64_t kMaxOpset = 17;
/// Largest element count accepted for a graph input (guards against absurd shapes).
constexpr int64_t kMaxInputElements = kMaxTensorElements;

bool isDefaultDomain(const std::string& d) {
  return d.empty() || d == "ai.onnx";
}

/// "Conv 'conv_1'" for messages.
std::string nodeRef(const std::string& opType, const std::string& name) {
  return opType + " '" + name + "'";
}

/// The import state of one model.
class ModelImporter {
public:
  ModelImporter(const onnx::ModelProto& model, std::string what, const OnnxImportOptions& opts)
      : model_(model), graph_(model.graph()), what_(std::move(what)), opts_(opts) {}

  std::unique_ptr<Module> run();

  // Used by NodeContext.
  Module& module() { return *module_; }
  Function& function() { return *fn_; }
  const std::string& what() const { return what_; }
  int64_t opset() const { return opset_; }
  /// How the caller binds graph input `name` to a constant (OnnxImportOptions::bindAdvice).
  std::string bindAdvice(const std::string& name) const {
    return opts_.bindAdvice ? opts_.bindAdvice(name)
                            : "bind it to a constant (OnnxImportOptions::constantInputs)";
  }
  Node* emit(NodeKind kind, const std::string& name, std::vector<NodeValue> inputs, Attrs attrs);

private:
  void checkOpset();
  void checkOperators();
  void importInputs();
  void importInitializers();
  void importNodes();
  void importOutputs();
  void bind(const std::string& name, NodeValue v, const std::string& where);
  void checkDeclared(const onnx::ValueInfoProto& vi, const Type& inferred, const std::string& what);
  Type inputType(const onnx::ValueInfoProto& vi);

  const onnx::ModelProto& model_;
  const onnx::GraphProto& graph_;
  std::string what_;
  const OnnxImportOptions& opts_;
  int64_t opset_ = 0;
  std::unique_ptr<Module> module_;
  Function* fn_ = nullptr;
  /// Where constant folding builds its temporary nodes.
  Module scratch_;
  Function* scratchFn_ = scratch_.createFunction("fold");
  std::unordered_map<std::string, NodeValue> values_;
  std::set<std::string> initializerNames_;
  /// value_info entries by value name (declared types of intermediate values).
  std::unordered_map<std::string, const onnx::ValueInfoProto*> valueInfo_;
  /// Set when options.inputShapes replaced a fixed dimension the model declares: the
  /// model's declared shapes downstream no longer hold, only kinds and ranks are checked.
  bool declaredShapesStale_ = false;
};

/// OnnxNodeContext over one NodeProto.
class NodeContext : public OnnxNodeContext {
public:
  NodeContext(ModelImporter& imp, const onnx::NodeProto& node, const OnnxOpDef& def,
              std::string name, std::vector<NodeValue> inputs)
      : imp_(imp), node_(node), def_(def), name_(std::move(name)), opType_(node.op_type()),
        inputs_(std::move(inputs)), outputs_(static_cast<size_t>(node.output_size())) {
    for (const auto& a : node.attribute())
      attrs_[a.name()] = &a;
  }

  /// "FILE: node 'NAME' (OP)" prefix of every message about this node.
  std::string where() const { return imp_.what() + ": node '" + name_ + "' (" + opType_ + ")"; }
  const std::vector<NodeValue>& outputs() const { return outputs_; }

  Function& function() override { return imp_.function(); }
  Module& module() override { return imp_.module(); }
  const std::string& opType() const override { return opType_; }
  const std::string& nodeName() const override { return name_; }
  int64_t opset() const override { return imp_.opset(); }

  size_t numInputs() const override { return inputs_.size(); }
  bool hasInput(size_t i) const override { return i < inputs_.size() && inputs_[i]; }
  NodeValue input(size_t i) override {
    if (!hasInput(i))
      fail("input " + std::to_string(i) + " is missing");
    return inputs_[i];
  }
  std::optional<Tensor> constantInput(size_t i) override {
    if (hasInput(i) && inputs_[i].node->kind() != NodeKind::Constant)
      lastRuntimeOperand_ = i;
    if (!hasInput(i) || inputs_[i].node->kind() != NodeKind::Constant)
      return std::nullopt;
    return inputs_[i].node->payload();
  }
  std::vector<int64_t> constantInts(size_t i, const char* what) override {
    std::optional<Tensor> t = constantInput(i);
    if (!t)
      unsupported(std::string("operand ") + what + " must be known at compile time");
    if (t->kind() == ElemKind::Float32)
      fail(std::string("operand ") + what + " must hold integers, not float32");
    std::vector<int64_t> v(static_cast<size_t>(t->size()));
    for (int64_t k = 0; k < t->size(); ++k)
      v[static_cast<size_t>(k)] = t->getAsInt(k);
    return v;
  }
  std::vector<double> constantFloats(size_t i, const char* what) override {
    std::optional<Tensor> t = constantInput(i);
    if (!t)
      unsupported(std::string("operand ") + what + " must be known at compile time");
    std::vector<double> v(static_cast<size_t>(t->size()));
    for (int64_t k = 0; k < t->size(); ++k)
      v[static_cast<size_t>(k)] = t->getAsDouble(k);
    return v;
  }

  size_t numOutputs() const override { return outputs_.size(); }
  bool hasOutput(size_t i) const override {
    return i < outputs_.size() && !node_.output(static_cast<int>(i)).empty();
  }

  bool hasAttr(const std::string& name) const override { return attr(name) != nullptr; }
  int64_t attrInt(const std::string& name, int64_t def) const override {
    const onnx::AttributeProto* a = attr(name);
    if (!a)
      return def;
    if (!isType(*a, onnx::AttributeProto::INT, a->has_i()))
      fail("attribute '" + name + "' must be an int");
    return a->i();
  }
  double attrFloat(const std::string& name, double def) const override {
    const onnx::AttributeProto* a = attr(name);
    if (!a)
      return def;
    if (isType(*a, onnx::AttributeProto::FLOAT, a->has_f()))
      return a->f();
    if (isType(*a, onnx::AttributeProto::INT, a->has_i()))
      return static_cast<double>(a->i());
    // Thrown here (not through the virtual fail) so every compiler sees no fall-through.
    throw Error(where(), "attribute '" + name + "' must be a float");
  }
  std::string attrString(const std::string& name, const std::string& def) const override {
    const onnx::AttributeProto* a = attr(name);
    if (!a)
      return def;
    if (!isType(*a, onnx::AttributeProto::STRING, a->has_s()))
      fail("attribute '" + name + "' must be a string");
    return a->s();
  }
  std::vector<int64_t> attrInts(const std::string& name, std::vector<int64_t> def) const override {
    const onnx::AttributeProto* a = attr(name);
    if (!a)
      return def;
    if (!isType(*a, onnx::AttributeProto::INTS, a->ints_size() > 0))
      fail("attribute '" + name + "' must be a list of ints");
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }
  std::vector<double> attrFloats(const std::string& name, std::vector<double> def) const override {
    const onnx::AttributeProto* a = attr(name);
    if (!a)
      return def;
    if (isType(*a, onnx::AttributeProto::FLOATS, a->floats_size() > 0))
      return std::vector<double>(a->floats().begin(), a->floats().end());
    if (isType(*a, onnx::AttributeProto::INTS, a->ints_size() > 0))
      return std::vector<double>(a->ints().begin(), a->ints().end());
    // Thrown here (not through the virtual fail) so every compiler sees no fall-through.
    throw Error(where(), "attribute '" + name + "' must be a list of floats");
  }
  std::vector<std::string> attrStrings(const std::string& name,
                                       std::vector<std::string> def) const override {
    const onnx::AttributeProto* a = attr(name);
    if (!a)
      return def;
    if (!isType(*a, onnx::AttributeProto::STRINGS, a->strings_size() > 0))
      fail("attribute '" + name + "' must be a list of strings");
    return std::vector<std::string>(a->strings().begin(), a->strings().end());
  }
  std::optional<Tensor> attrTensor(const std::string& name) const override {
    const onnx::AttributeProto* a = attr(name);
    if (!a)
      return std::nullopt;
    if (!isType(*a, onnx::AttributeProto::TENSOR, a->has_t()))
      fail("attribute '" + name + "' must be a tensor");
    return tensorFromOnnx(a->t(), where() + ": attribute '" + name + "'");
  }

  Node* emitNode(NodeKind kind, std::vector<NodeValue> inputs, Attrs attrs,
                 const std::string& suffix) override {
    return imp_.emit(kind, name_ + suffix, std::move(inputs), std::move(attrs));
  }
  NodeValue constant(Tensor t, const std::string& suffix) override {
    return NodeValue(imp_.module().createConstant(name_ + suffix, std::move(t)), 0);
  }

  void setOutput(size_t i, NodeValue v) override {
    if (i >= outputs_.size())
      fail("the importer set output " + std::to_string(i) + ", the node declares " +
           std::to_string(outputs_.size()));
    if (!v)
      fail("the importer set output " + std::to_string(i) + " to no value");
    outputs_[i] = v;
  }

  [[noreturn]] void fail(const std::string& reason) const override { throw Error(where(), reason); }
  [[noreturn]] void unsupported(const std::string& reason) const override {
    throw Unsupported(where(), reason + bindHint(reason));
  }

private:
  /// The attribute `name`, or nullptr; the importer may read only what its OnnxOpDef
  /// declares (so the declaration, which decides what is refused, stays true).
  const onnx::AttributeProto* attr(const std::string& name) const {
    if (!std::binary_search(def_.attrs.begin(), def_.attrs.end(), name))
      throw std::logic_error("the importer of " + opType_ + " reads attribute '" + name +
                             "', which its registration does not declare");
    auto it = attrs_.find(name);
    return it == attrs_.end() ? nullptr : it->second;
  }
  /// Attribute type check; old models may leave `type` UNDEFINED and set the field.
  static bool isType(const onnx::AttributeProto& a, onnx::AttributeProto::AttributeType t,
                     bool fieldSet) {
    return a.type() == t || (a.type() == onnx::AttributeProto::UNDEFINED && fieldSet);
  }

  ModelImporter& imp_;
  const onnx::NodeProto& node_;
  const OnnxOpDef& def_;
  std::string name_;
  std::string opType_;
  std::vector<NodeValue> inputs_;
  /// The last operand constantInput found not constant (what "must be known at compile
  /// time" is about).
  std::optional<size_t> lastRuntimeOperand_;

  /// For an operand that must be known at compile time and is a graph input, or is
  /// computed from one graph input alone (a window's size cast to float): how the caller
  /// binds that input to a constant (OnnxImportOptions::bindAdvice); else "".
  std::string bindHint(const std::string& reason) const {
    if (!lastRuntimeOperand_ || reason.find("known at compile time") == std::string::npos)
      return "";
    const Node* n = inputs_[*lastRuntimeOperand_].node;
    if (n->kind() == NodeKind::Placeholder)
      return "; it is the graph input '" + n->name() + "': " + imp_.bindAdvice(n->name());
    // Every graph input the operand depends on; exactly one can be named.
    std::set<const Node*> seen{n}, placeholders;
    std::vector<const Node*> work{n};
    while (!work.empty()) {
      const Node* cur = work.back();
      work.pop_back();
      if (cur->kind() == NodeKind::Placeholder)
        placeholders.insert(cur);
      for (const NodeValue& v : cur->inputs())
        if (v && seen.insert(v.node).second)
          work.push_back(v.node);
    }
    if (placeholders.size() != 1)
      return "";
    const std::string& name = (*placeholders.begin())->name();
    return "; it is computed from the graph input '" + name + "' alone: " + imp_.bindAdvice(name);
  }
  std::vector<NodeValue> outputs_;
  std::map<std::string, const onnx::AttributeProto*> attrs_;
};

// ---------------------------------------------------------------------------
// ModelImporter
// ---------------------------------------------------------------------------

std::unique_ptr<Module> ModelImporter::run() {
  if (!model_.has_graph())
    throw Error(what_, "the model has no graph");
  onnx_inputs::checkUserEntries(graph_, opts_, what_); // a user's mistakes before any work
  checkOpset();
  checkOperators();
  module_ = std::make_unique<Module>();
  module_->setSource(what_);
  fn_ = module_->createFunction(opts_.functionName.empty() ? "main" : opts_.functionName);
  importInputs();
  importInitializers();
  importNodes();
  importOutputs();
  fn_->eraseDeadNodes();
  module_->eraseUnusedConstants();
  try {
    verifyOrThrow(*fn_);
  } catch (const Error& e) {
    throw Error(what_, std::string("the imported graph is invalid: ") + e.what());
  }
  return std::move(module_);
}

void ModelImporter::checkOpset() {
  bool found = false;
  for (const auto& op : model_.opset_import()) {
    if (!isDefaultDomain(op.domain()))
      continue;
    found = true;
    opset_ = op.version();
  }
  if (!found) {
    if (model_.opset_import_size() == 0 && model_.ir_version() > 0 && model_.ir_version() < 3)
      opset_ = 1; // IR < 3 models carry no opset_import: opset 1.
    else if (model_.opset_import_size() == 0)
      throw Error(what_, "the model declares no opset (opset_import is empty)");
    else
      opset_ = 0;
  }
  if (found || opset_ != 0) {
    if (opset_ < kMinOpset || opset_ > kMaxOpset)
      throw Unsupported(what_, "default-domain opset " + std::to_string(opset_) +
                                   " is outside the supported range " + std::to_string(kMinOpset) +
                                   "-" + std::to_string(kMaxOpset));
  }
}

/// The attributes ONNX's schema of `opType` at `opset` defines, or nullptr when ONNX has
/// no such operator at that opset.
const std::map<std::string, onnx::OpSchema::Attribute>* schemaAttrs(const std::string& opType,
                                                                    int64_t opset) {
  const onnx::OpSchema* s =
      onnx::OpSchemaRegistry::Schema(opType, static_cast<int>(opset), onnx::ONNX_DOMAIN);
  return s ? &s->attributes() : nullptr;
}

/// "" when ONNX's definition of `opType` at `opset` is the one of kOldestFullOpset or a
/// later one, else a description of the older one ("version 6; Ember imports ...").
std::string olderDefinition(const std::string& opType, int64_t opset) {
  if (opset >= kOldestFullOpset)
    return "";
  const onnx::OpSchema* at =
      onnx::OpSchemaRegistry::Schema(opType, static_cast<int>(opset), onnx::ONNX_DOMAIN);
  const onnx::OpSchema* full =
      onnx::OpSchemaRegistry::Schema(opType, static_cast<int>(kOldestFullOpset), onnx::ONNX_DOMAIN);
  if (!at || !full || at->since_version() == full->since_version())
    return "";
  return "version " + std::to_string(at->since_version()) +
         "; Ember imports the definition of opset " + std::to_string(kOldestFullOpset) +
         " and later";
}

/// "N unsupported WHATs:" and one indented line per entry.
std::string listing(const std::vector<std::string>& items, const char* what) {
  std::string msg =
      std::to_string(items.size()) + " unsupported " + what + (items.size() == 1 ? "" : "s") + ":";
  for (const auto& m : items)
    msg += "\n  " + m;
  return msg;
}

void ModelImporter::checkOperators() {
  std::vector<std::string> missing, unsupportedAttrs;
  for (int i = 0; i < graph_.node_size(); ++i) {
    const onnx::NodeProto& n = graph_.node(i);
    std::string name = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
    std::string op = isDefaultDomain(n.domain()) ? n.op_type() : n.domain() + "::" + n.op_type();
    bool hasGraph = false;
    for (const auto& a : n.attribute())
      hasGraph |= a.type() == onnx::AttributeProto::GRAPH ||
                  a.type() == onnx::AttributeProto::GRAPHS || a.has_g() || a.graphs_size() > 0;
    const OnnxOpDef* def = isDefaultDomain(n.domain()) ? findOnnxOp(n.op_type()) : nullptr;
    if (!def || hasGraph) {
      missing.push_back(nodeRef(op, name) + (hasGraph ? " (subgraph attribute)" : ""));
      continue;
    }
    if (const std::string old = olderDefinition(n.op_type(), opset_); !old.empty()) {
      missing.push_back(nodeRef(op, name) + " (" + old + ")");
      continue;
    }
    // Attributes: known to Ember's importer and defined by ONNX at this opset, else
    // unsupported (ONNX defines it, Ember does not handle it) or an error (a typo).
    const auto* schema = schemaAttrs(n.op_type(), opset_);
    std::set<std::string> seen;
    for (const auto& a : n.attribute()) {
      const std::string where = what_ + ": node '" + name + "' (" + op + ")";
      if (!seen.insert(a.name()).second)
        throw Error(where, "attribute '" + a.name() + "' is given twice");
      const bool known = std::binary_search(def->attrs.begin(), def->attrs.end(), a.name());
      const bool defined = schema ? schema->count(a.name()) != 0 : known;
      if (known && defined)
        continue;
      if (defined) {
        unsupportedAttrs.push_back(nodeRef(op, name) + ": attribute '" + a.name() + "'");
        continue;
      }
      std::string takes;
      if (schema)
        for (const auto& entry : *schema)
          takes += (takes.empty() ? "" : ", ") + entry.first;
      else
        for (const std::string& k : def->attrs)
          takes += (takes.empty() ? "" : ", ") + k;
      throw Error(where, "unknown attribute '" + a.name() + "' (" + op + " takes " +
                             (takes.empty() ? "no attributes" : takes) + ")");
    }
  }
  if (missing.empty() && unsupportedAttrs.empty())
    return;
  std::string msg;
  if (!missing.empty())
    msg = listing(missing, "operator");
  if (!unsupportedAttrs.empty())
    msg += (msg.empty() ? "" : "\n") + listing(unsupportedAttrs, "attribute");
  throw Unsupported(what_, msg);
}

Type ModelImporter::inputType(const onnx::ValueInfoProto& vi) {
  const std::string where = what_ + ": input '" + vi.name() + "'";
  if (!vi.has_type() || !vi.type().has_tensor_type())
    throw Unsupported(where, "only tensor inputs are supported (not sequences, maps, ...)");
  const onnx::TypeProto::Tensor& tt = vi.type().tensor_type();
  ElemKind kind = onnxElemKind(tt.elem_type(), where);
  const Shape dims = onnx_inputs::inputShape(vi, opts_, where, declaredShapesStale_);
  if (opts_.declaredDims)
    (*opts_.declaredDims)[vi.name()] = onnx_inputs::declaredDims(vi, dims.size());
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0)
      throw Error(where, "negative dimension in " + shapeToString(dims));
    if (d != 0 && n > kMaxInputElements / d)
      throw Error(where, "shape " + shapeToString(dims) + " is too large");
    n *= d;
  }
  return Type(kind, dims);
}

void ModelImporter::bind(const std::string& name, NodeValue v, const std::string& where) {
  if (name.empty())
    throw Error(where, "a value has an empty name");
  if (!values_.emplace(name, v).second)
    throw Error(where, "value '" + name + "' is defined more than once");
}

void ModelImporter::importInputs() {
  for (const auto& init : graph_.initializer())
    initializerNames_.insert(init.name());
  if (graph_.sparse_initializer_size() > 0)
    throw Unsupported(what_, "sparse initializers are not supported");
  std::set<std::string> inputNames;
  for (const auto& vi : graph_.input())
    inputNames.insert(vi.name());
  for (const auto& [name, t] : opts_.constantInputs)
    if (!inputNames.count(name))
      throw Error(what_, "constant input '" + name + "': the model has no input of this name");
  for (const auto& [name, s] : opts_.inputShapes)
    if (!inputNames.count(name))
      throw Error(what_, "input shape for '" + name + "': the model has no input of this name");
  for (const auto& vi : graph_.input()) {
    const std::string& name = vi.name();
    const std::string where = what_ + ": input '" + name + "'";
    auto c = opts_.constantInputs.find(name);
    if (c != opts_.constantInputs.end()) {
      bind(name, NodeValue(module_->createConstant(name, c->second), 0), where);
      continue;
    }
    if (initializerNames_.count(name))
      continue; // IR < 4 style: an initializer listed as input is a constant.
    if (name.empty())
      throw Error(what_, "a graph input has an empty name");
    if (values_.count(name))
      throw Error(where, "the graph lists this input twice");
    bind(name, NodeValue(module_->createPlaceholder(name, inputType(vi)), 0), where);
  }
}

void ModelImporter::importInitializers() {
  for (const auto& init : graph_.initializer()) {
    if (values_.count(init.name()) && opts_.constantInputs.count(init.name()))
      continue; // overridden by the caller
    const std::string where = what_ + ": initializer '" + init.name() + "'";
    Tensor t = tensorFromOnnx(init, where);
    bind(init.name(), NodeValue(module_->createConstant(init.name(), std::move(t)), 0), where);
  }
}

Node* ModelImporter::emit(NodeKind kind, const std::string& name, std::vector<NodeValue> inputs,
                          Attrs attrs) {
  bool allConstant = true;
  int64_t inElems = 0;
  for (const NodeValue& v : inputs) {
    allConstant &= !v || v.node->kind() == NodeKind::Constant;
    if (v)
      inElems += v.type().size();
  }
  if (allConstant) {
    Node* tmp = scratchFn_->create(kind, name, inputs, attrs);
    // The constant-fold pass's rule: no folded constant larger than its inputs and than
    // PassContext::foldLimitElements (an Expand to 2^31 elements is computed at run time,
    // not allocated while importing).
    const int64_t outElems = tmp->numResults() == 1 ? tmp->resultType(0).size() : 0;
    const bool small = outElems <= inElems || outElems <= PassContext().foldLimitElements;
    if (tmp->numResults() == 1 && small && interpreterSupports(*tmp)) {
      std::vector<const Tensor*> in;
      for (const NodeValue& v : inputs)
        in.push_back(v ? &v.node->payload() : nullptr);
      std::vector<Tensor> out = evaluateNode(*tmp, in);
      scratchFn_->erase(tmp);
      return module_->createConstant(name, std::move(out.at(0)));
    }
    scratchFn_->erase(tmp);
  }
  return fn_->create(kind, name, std::move(inputs), std::move(attrs));
}

void ModelImporter::importNodes() {
  for (const auto& vi : graph_.value_info())
    valueInfo_.emplace(vi.name(), &vi);
  for (int i = 0; i < graph_.node_size(); ++i) {
    const onnx::NodeProto& n = graph_.node(i);
    std::string name = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
    const std::string where = what_ + ": node '" + name + "' (" + n.op_type() + ")";
    std::vector<NodeValue> inputs;
    for (const std::string& in : n.input()) {
      if (in.empty()) {
        inputs.emplace_back();
        continue;
      }
      auto it = values_.find(in);
      if (it == values_.end())
        throw Error(where, "input '" + in +
                               "' is not defined before this node (not a graph input, "
                               "initializer or output of an earlier node)");
      inputs.push_back(it->second);
    }
    const OnnxOpDef& def = *findOnnxOp(n.op_type()); // checkOperators made sure
    NodeContext ctx(*this, n, def, name, std::move(inputs));
    try {
      def.fn(ctx);
    } catch (const Unsupported& e) {
      if (e.where().rfind(where, 0) == 0)
        throw;
      throw Unsupported(where, e.what());
    } catch (const InternalError&) {
      throw;
    } catch (const Error& e) {
      if (e.where().rfind(where, 0) == 0)
        throw;
      throw Error(where, e.what());
    } catch (const std::exception& e) {
      throw InternalError(where, e.what());
    }
    for (int o = 0; o < n.output_size(); ++o) {
      const std::string& out = n.output(o);
      if (out.empty())
        continue;
      NodeValue v = ctx.outputs()[static_cast<size_t>(o)];
      if (!v)
        throw Error(where, "output " + std::to_string(o) + " ('" + out +
                               "') is not produced by Ember's importer of " + n.op_type());
      bind(out, v, where);
      auto vi = valueInfo_.find(out);
      if (vi != valueInfo_.end())
        checkDeclared(*vi->second, v.type(), "value");
    }
  }
}

/// "float32[N, 4, ?]": a declared tensor type (element kind `elem`), symbolic
/// dimensions by name.
std::string declaredToString(const onnx::TypeProto::Tensor& tt, std::string s) {
  if (!tt.has_shape())
    return s + "[...]";
  s += "[";
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    s += i ? ", " : "";
    s += d.has_dim_value() ? std::to_string(d.dim_value())
                           : (d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "?");
  }
  return s + "]";
}

/// Fails when the element type or shape that `vi` declares contradicts the inferred
/// type. Undeclared parts and symbolic dimensions match anything. `what` is "output" or
/// "value".
void ModelImporter::checkDeclared(const onnx::ValueInfoProto& vi, const Type& inferred,
                                  const std::string& what) {
  if (!vi.has_type() || !vi.type().has_tensor_type())
    return;
  const onnx::TypeProto::Tensor& tt = vi.type().tensor_type();
  const std::string where = what_ + ": " + what + " '" + vi.name() + "'";
  bool same = true;
  std::string elem = "?";
  if (tt.elem_type() != onnx::TensorProto::UNDEFINED) {
    // A declared element type Ember lacks (DOUBLE, UINT8, ...) is unsupported.
    const ElemKind k = onnxElemKind(tt.elem_type(), where);
    same = k == inferred.kind;
    elem = elemKindName(k);
  }
  if (tt.has_shape()) {
    const auto& shape = tt.shape();
    same = same && shape.dim_size() == static_cast<int>(inferred.dims.size());
    for (int i = 0; same && !declaredShapesStale_ && i < shape.dim_size(); ++i)
      same = !shape.dim(i).has_dim_value() ||
             shape.dim(i).dim_value() == inferred.dims[static_cast<size_t>(i)];
  }
  if (!same)
    throw Error(where, "the model declares " + declaredToString(tt, elem) + ", Ember infers " +
                           elemKindName(inferred.kind) + shapeToString(inferred.dims));
}

void ModelImporter::importOutputs() {
  if (graph_.output_size() == 0)
    throw Error(what_, "the graph has no outputs");
  for (const auto& o : graph_.output()) {
    auto it = values_.find(o.name());
    if (it == values_.end())
      throw Error(what_, "graph output '" + o.name() + "' is not produced by any node");
    checkDeclared(o, it->second.type(), "output");
    fn_->addOutput(o.name(), it->second);
  }
}

/// A model file, up to protobuf's own limit of one message (2 GiB - 1 bytes; larger
/// models keep their weights in external data files); only a regular file.
std::string readFile(const std::string& path) {
  return readRegularFile(path, uint64_t(std::numeric_limits<int>::max()));
}

} // namespace

std::unique_ptr<Module> importOnnxBytes(const std::string& bytes, const std::string& what,
                                        const OnnxImportOptions& options) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw Unsupported(what, "models over 2 GiB are not supported");
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(std::numeric_limits<int>::max());
  if (bytes.empty())
    throw Error(what, "empty file: not an ONNX model");
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    throw Error(what, "not an ONNX model (protobuf parse of ModelProto failed: truncated or "
                      "not ONNX)");
  if (!model.has_graph() || model.ir_version() <= 0)
    throw Error(what, "not an ONNX model (no graph or no IR version)");
  ModelImporter imp(model, what, options);
  return imp.run();
}

std::unique_ptr<Module> importOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  std::string bytes = readFile(path);
  return importOnnxBytes(bytes, path, options);
}

} // namespace ember
