#include "ember/graph/Graph.h"

#include "ember/graph/OpInfo.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace ember {

Node* Function::create(NodeKind kind, const std::string& name, std::vector<NodeValue> inputs,
                       Attrs attrs, std::optional<std::vector<Type>> resultTypes) {
  const std::string where = std::string(nodeKindName(kind)) + " node '" + name + "'";
  const OpInfo* info = findOpInfo(kind);
  if (!info || !info->infer)
    throw Error(where, "no type inference is registered for this kind");
  if (inputs.size() < info->minInputs)
    throw Error(where, "needs at least " + std::to_string(info->minInputs) + " inputs, has " +
                           std::to_string(inputs.size()));
  for (size_t i = 0; i < info->minInputs; ++i)
    if (!inputs[i])
      throw Error(where, "required input " + std::to_string(i) + " is missing");
  std::vector<Type> types;
  try {
    types = info->infer(inputs, attrs);
  } catch (const Error& e) {
    throw Error(where, e.what());
  }
  for (const Type& t : types) {
    int64_t n = 0;
    try {
      n = numElements(t.dims);
    } catch (const Error& e) {
      throw Error(where, std::string("result ") + e.what());
    }
    if (n > kMaxTensorElements)
      throw Error(where, "result " + t.toString() + " is too large (" + std::to_string(n) +
                             " elements, at most 2^31)");
  }
  if (resultTypes) {
    if (resultTypes->size() != types.size())
      throw Error(where, "given " + std::to_string(resultTypes->size()) +
                             " result types, kind has " + std::to_string(types.size()));
    for (size_t i = 0; i < types.size(); ++i) {
      const Type& g = (*resultTypes)[i];
      if (g.dims != types[i].dims ||
          (g.kind != types[i].kind && !(g.quant.isQuantized() || types[i].quant.isQuantized())))
        throw Error(where, "result " + std::to_string(i) + " given as " + g.toString() +
                               ", inferred " + types[i].toString());
    }
    types = std::move(*resultTypes);
  }
  std::string unique = module_->uniqueName(name);
  nodes_.push_back(
      std::make_unique<Node>(kind, unique, std::move(inputs), std::move(types), std::move(attrs)));
  return nodes_.back().get();
}

std::vector<Node*> Function::inputs() const {
  std::unordered_set<const Node*> used;
  for (const auto& n : nodes_)
    for (const NodeValue& v : n->inputs())
      if (v && v.node->kind() == NodeKind::Placeholder)
        used.insert(v.node);
  for (const Output& o : outputs_)
    if (o.value.node->kind() == NodeKind::Placeholder)
      used.insert(o.value.node);
  std::vector<Node*> out;
  for (const auto& p : module_->placeholders())
    if (used.count(p.get()))
      out.push_back(p.get());
  return out;
}

void Function::replaceAllUsesOf(NodeValue from, NodeValue to) {
  for (auto& n : nodes_)
    for (size_t i = 0; i < n->numInputs(); ++i)
      if (n->input(i) == from)
        n->setInput(i, to);
  for (Output& o : outputs_)
    if (o.value == from)
      o.value = to;
}

size_t Function::numUses(const Node* node) const {
  size_t uses = 0;
  for (const auto& n : nodes_)
    for (const NodeValue& v : n->inputs())
      uses += v.node == node;
  for (const Output& o : outputs_)
    uses += o.value.node == node;
  return uses;
}

void Function::erase(Node* node) {
  if (numUses(node) != 0)
    throw Error(node->name(), "cannot erase a node that is still used");
  nodes_.remove_if([&](const std::unique_ptr<Node>& p) { return p.get() == node; });
}

size_t Function::eraseDeadNodes() {
  std::unordered_set<const Node*> live;
  for (const Output& o : outputs_)
    live.insert(o.value.node);
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it)
    if (live.count(it->get()))
      for (const NodeValue& v : (*it)->inputs())
        if (v)
          live.insert(v.node);
  size_t before = nodes_.size();
  nodes_.remove_if([&](const std::unique_ptr<Node>& p) { return !live.count(p.get()); });
  return before - nodes_.size();
}

void Function::topoSort() {
  std::unordered_map<const Node*, std::unique_ptr<Node>*> owned;
  for (auto& p : nodes_)
    owned[p.get()] = &p;
  std::unordered_set<const Node*> done;
  std::list<std::unique_ptr<Node>> sorted;
  // Iterative DFS in the current order, so an already sorted list is unchanged.
  for (auto& start : nodes_) {
    if (!start || done.count(start.get()))
      continue;
    std::vector<std::pair<Node*, size_t>> stack{{start.get(), 0}};
    std::unordered_set<const Node*> onStack{start.get()};
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->numInputs()) {
        Node* in = n->input(next++).node;
        if (in && owned.count(in) && !done.count(in)) {
          if (onStack.count(in))
            throw Error(name_, "graph has a cycle through node '" + in->name() + "'");
          stack.push_back({in, 0});
          onStack.insert(in);
        }
        continue;
      }
      done.insert(n);
      onStack.erase(n);
      sorted.push_back(std::move(*owned[n]));
      stack.pop_back();
    }
  }
  nodes_ = std::move(sorted);
}

Node* Function::findNode(const std::string& name) const {
  for (const auto& n : nodes_)
    if (n->name() == name)
      return n.get();
  return nullptr;
}

Function* Module::createFunction(const std::string& name) {
  if (getFunction(name))
    throw Error("module", "function '" + name + "' exists already");
  functions_.push_back(std::make_unique<Function>(this, name));
  return functions_.back().get();
}

Function* Module::getFunction(const std::string& name) const {
  for (const auto& f : functions_)
    if (f->name() == name)
      return f.get();
  return nullptr;
}

Node* Module::createPlaceholder(const std::string& name, Type t) {
  if (getPlaceholder(name))
    throw Error("module", "placeholder '" + name + "' exists already");
  reserveName(name);
  placeholders_.push_back(std::make_unique<Node>(NodeKind::Placeholder, name,
                                                 std::vector<NodeValue>{},
                                                 std::vector<Type>{std::move(t)}, Attrs{}));
  return placeholders_.back().get();
}

Node* Module::createConstant(const std::string& name, Tensor value) {
  std::string unique = uniqueName(name);
  constants_.push_back(std::make_unique<Node>(NodeKind::Constant, unique, std::vector<NodeValue>{},
                                              std::vector<Type>{value.type()}, Attrs{}));
  constants_.back()->setPayload(std::move(value));
  return constants_.back().get();
}

Node* Module::getPlaceholder(const std::string& name) const {
  for (const auto& p : placeholders_)
    if (p->name() == name)
      return p.get();
  return nullptr;
}

size_t Module::eraseUnusedConstants() {
  std::unordered_set<const Node*> used;
  for (const auto& f : functions_) {
    for (const auto& n : f->nodes())
      for (const NodeValue& v : n->inputs())
        if (v)
          used.insert(v.node);
    for (const auto& o : f->outputs())
      used.insert(o.value.node);
  }
  size_t before = constants_.size();
  constants_.erase(
      std::remove_if(constants_.begin(), constants_.end(),
                     [&](const std::unique_ptr<Node>& c) { return !used.count(c.get()); }),
      constants_.end());
  return before - constants_.size();
}

std::string Module::uniqueName(const std::string& base) {
  std::string b = base.empty() ? std::string("node") : base;
  auto it = names_.find(b);
  if (it == names_.end()) {
    names_.insert({b, 0});
    return b;
  }
  for (;;) {
    std::string candidate = b + "__" + std::to_string(++it->second);
    if (!names_.count(candidate)) {
      names_.insert({candidate, 0});
      return candidate;
    }
  }
}

} // namespace ember
