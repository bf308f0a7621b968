#include "ember/graph/Verifier.h"

#include "ember/graph/OpInfo.h"
#include "ember/support/Error.h"

#include <set>
#include <unordered_set>

namespace ember {

namespace {

std::string nodeRef(const Node& n) {
  return std::string(n.kindName()) + " '" + n.name() + "'";
}

void checkResultTypes(const Node& n, std::vector<std::string>& errs) {
  const OpInfo* info = findOpInfo(n.kind());
  if (!info) {
    errs.push_back(nodeRef(n) + ": kind has no registered definition");
    return;
  }
  std::vector<Type> inferred;
  try {
    inferred = info->infer(n.inputs(), n.attrs());
  } catch (const Error& e) {
    errs.push_back(nodeRef(n) + ": " + e.what());
    return;
  }
  if (inferred.size() != n.numResults()) {
    errs.push_back(nodeRef(n) + ": has " + std::to_string(n.numResults()) + " results, expected " +
                   std::to_string(inferred.size()));
    return;
  }
  for (size_t i = 0; i < inferred.size(); ++i) {
    const Type& have = n.resultType(static_cast<unsigned>(i));
    bool quantRetyped = have.quant.isQuantized() || inferred[i].quant.isQuantized();
    if (have.dims != inferred[i].dims || (have.kind != inferred[i].kind && !quantRetyped))
      errs.push_back(nodeRef(n) + ": result " + std::to_string(i) + " is " + have.toString() +
                     ", inference gives " + inferred[i].toString());
  }
}

} // namespace

std::vector<std::string> verifyFunction(const Function& f) {
  std::vector<std::string> errs;
  const Module& m = f.module();
  std::unordered_set<const Node*> storage, defined;
  for (const auto& p : m.placeholders())
    storage.insert(p.get());
  for (const auto& c : m.constants()) {
    storage.insert(c.get());
    if (c->payload().type() != c->resultType())
      errs.push_back(nodeRef(*c) + ": payload type " + c->payload().type().toString() +
                     " differs from result type " + c->resultType().toString());
  }
  std::set<std::string> names;
  for (const auto& n : f.nodes()) {
    if (!names.insert(n->name()).second)
      errs.push_back(nodeRef(*n) + ": duplicate node name");
    for (size_t i = 0; i < n->numInputs(); ++i) {
      const NodeValue& v = n->input(i);
      if (!v)
        continue; // optional operand
      if (!storage.count(v.node) && !defined.count(v.node)) {
        errs.push_back(nodeRef(*n) + ": input " + std::to_string(i) +
                       " is not defined before use in this function");
      } else if (v.resNo >= v.node->numResults()) {
        errs.push_back(nodeRef(*n) + ": input " + std::to_string(i) + " refers to result " +
                       std::to_string(v.resNo) + " of " + nodeRef(*v.node));
      }
    }
    checkResultTypes(*n, errs);
    defined.insert(n.get());
  }
  if (f.outputs().empty())
    errs.push_back("function '" + f.name() + "' has no outputs");
  std::set<std::string> outNames;
  for (const auto& o : f.outputs()) {
    if (!outNames.insert(o.name).second)
      errs.push_back("output '" + o.name + "' is listed twice");
    if (!o.value || (!storage.count(o.value.node) && !defined.count(o.value.node)))
      errs.push_back("output '" + o.name + "' refers to no node of the function");
  }
  return errs;
}

void verifyOrThrow(const Function& f) {
  std::vector<std::string> errs = verifyFunction(f);
  if (errs.empty())
    return;
  std::string msg = std::to_string(errs.size()) + " problem(s):";
  for (const auto& e : errs)
    msg += "\n  " + e;
  throw Error("function '" + f.name() + "'", msg);
}

} // namespace ember
