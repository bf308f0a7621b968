// The low-level IR's verifier: walks the instructions in order, tracking which
// allocations are live, and checks every operand against the instruction's contract.
#include "ember/lir/IR.h"

#include "ember/support/Error.h"

#include <map>
#include <unordered_set>

namespace ember::lir {

namespace {

enum class State { Live, Dead };

struct Checker {
  const Function& f;
  std::vector<std::string> problems;
  std::unordered_set<const Value*> defined; // weights and earlier allocs/views
  std::map<const Value*, State> allocs;

  void problem(const Instruction& in, const std::string& what) {
    problems.push_back("instruction '" + in.name() + "' (" + in.opName() + "): " + what);
  }

  /// Checks that `op` names a usable buffer; returns false if not.
  bool checkBuffer(const Instruction& in, size_t i) {
    Value* v = in.operand(i).value;
    const std::string which = "operand " + std::to_string(i);
    if (!v) {
      problem(in, which + " is empty");
      return false;
    }
    if (!v->isBuffer() || !defined.count(v)) {
      problem(in, which + " %" + v->name() + " is not a buffer defined before it");
      return false;
    }
    Value* root = locate(v).root;
    if (root->valueKind() == ValueKind::Alloc) {
      auto it = allocs.find(root);
      if (it == allocs.end() || it->second != State::Live) {
        problem(in, which + " %" + v->name() + " uses %" + root->name() + " after its dealloc");
        return false;
      }
    }
    if (in.operand(i).kind != OperandKind::In && root->valueKind() == ValueKind::Weight &&
        static_cast<WeightVar*>(root)->role() != WeightVar::Role::Output) {
      problem(in, which + " writes %" + root->name() + ", which is a constant or an input");
      return false;
    }
    return true;
  }

  void expectKinds(const Instruction& in, std::vector<OperandKind> kinds) {
    if (in.operands().size() != kinds.size()) {
      problem(in, "has " + std::to_string(in.operands().size()) + " operands, expects " +
                      std::to_string(kinds.size()));
      return;
    }
    for (size_t i = 0; i < kinds.size(); ++i)
      if (in.operand(i).kind != kinds[i])
        problem(in, "operand " + std::to_string(i) + " is @" + operandKindName(in.operand(i).kind) +
                        ", expects @" + operandKindName(kinds[i]));
  }

  void checkAlloc(const Instruction& in) {
    expectKinds(in, {});
    allocs[&in] = State::Live;
  }

  void checkDealloc(const Instruction& in) {
    expectKinds(in, {OperandKind::Out});
    if (in.operands().size() != 1)
      return;
    Value* v = in.operand(0).value;
    if (!v || v->valueKind() != ValueKind::Alloc) {
      problem(in, "frees something that is not an allocation");
      return;
    }
    auto it = allocs.find(v);
    if (it == allocs.end())
      problem(in, "frees %" + v->name() + " before its allocation");
    else if (it->second == State::Dead)
      problem(in, "frees %" + v->name() + " twice");
    else
      it->second = State::Dead;
  }

  void checkView(const Instruction& in) {
    expectKinds(in, {OperandKind::In});
    if (in.operands().size() == 1 && checkBuffer(in, 0)) {
      const Value* base = in.operand(0).value;
      if (base->type().kind != in.type().kind)
        problem(in, std::string("views %") + base->name() + " of " +
                        elemKindName(base->type().kind) + " as " + elemKindName(in.type().kind));
      if (in.offset() + in.sizeInBytes() > base->sizeInBytes())
        problem(in, "views bytes [" + std::to_string(in.offset()) + ", " +
                        std::to_string(in.offset() + in.sizeInBytes()) + ") of %" + base->name() +
                        ", which has " + std::to_string(base->sizeInBytes()));
    }
  }

  void checkCopy(const Instruction& in) {
    expectKinds(in, {OperandKind::Out, OperandKind::In});
    if (in.operands().size() != 2 || !checkBuffer(in, 0) || !checkBuffer(in, 1))
      return;
    const Type& d = in.operand(0).value->type();
    const Type& s = in.operand(1).value->type();
    if (d.kind != s.kind || d.sizeInBytes() != s.sizeInBytes())
      problem(in, "copies " + s.toString() + " into " + d.toString());
    checkOverlaps(in);
  }

  void checkCompute(const Instruction& in) {
    if (!in.hasNode()) {
      problem(in, "has no node kind");
      return;
    }
    const Node& n = in.node();
    std::vector<OperandKind> kinds(n.numResults(), OperandKind::Out);
    kinds.resize(n.numResults() + in.inputTypes().size(), OperandKind::In);
    expectKinds(in, kinds);
    if (in.operands().size() != kinds.size())
      return;
    bool ok = true;
    for (size_t i = 0; i < kinds.size(); ++i) {
      const bool isOut = i < n.numResults();
      if (!isOut && !in.operand(i).value)
        continue; // an absent optional input
      if (!checkBuffer(in, i)) {
        ok = false;
        continue;
      }
      const Type& want = isOut ? n.resultType(unsigned(i)) : in.inputTypes()[i - n.numResults()];
      const Type& have = in.operand(i).value->type();
      if (have != want)
        problem(in, "operand " + std::to_string(i) + " %" + in.operand(i).value->name() + " is " +
                        have.toString() + ", expects " + want.toString());
    }
    if (ok)
      checkOverlaps(in);
  }

  /// Written operands may overlap nothing else, except an identical in-place input.
  void checkOverlaps(const Instruction& in) {
    const auto& ops = in.operands();
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind == OperandKind::In || !ops[i].value)
        continue;
      const Location a = locate(ops[i].value);
      const size_t aSize = ops[i].value->sizeInBytes();
      for (size_t j = 0; j < ops.size(); ++j) {
        if (j == i || !ops[j].value)
          continue;
        const Location b = locate(ops[j].value);
        const size_t bSize = ops[j].value->sizeInBytes();
        if (a.root != b.root || a.offset >= b.offset + bSize || b.offset >= a.offset + aSize ||
            aSize == 0 || bSize == 0)
          continue;
        const bool inPlace = ops[j].kind == OperandKind::In &&
                             in.valueKind() == ValueKind::Compute &&
                             isInPlaceSafe(in.node().kind()) && a.offset == b.offset &&
                             ops[i].value->type().kind == ops[j].value->type().kind &&
                             ops[i].value->type().dims == ops[j].value->type().dims;
        if (!inPlace && (ops[j].kind == OperandKind::In || j > i))
          problem(in, "operands " + std::to_string(i) + " and " + std::to_string(j) +
                          " overlap in %" + a.root->name() +
                          (ops[j].kind == OperandKind::In ? " (not a legal in-place pair)" : ""));
      }
    }
  }

  void run() {
    for (const auto& w : f.weights())
      defined.insert(w.get());
    for (const auto& p : f.instructions()) {
      const Instruction& in = *p;
      switch (in.valueKind()) {
      case ValueKind::Alloc:
        checkAlloc(in);
        break;
      case ValueKind::Dealloc:
        checkDealloc(in);
        break;
      case ValueKind::View:
        checkView(in);
        break;
      case ValueKind::Copy:
        checkCopy(in);
        break;
      case ValueKind::Compute:
        checkCompute(in);
        break;
      case ValueKind::Weight:
        problem(in, "a weight in the instruction list");
        break;
      }
      if (in.isBuffer())
        defined.insert(&in);
    }
    for (const auto& [a, state] : allocs)
      if (state == State::Live)
        problems.push_back("allocation '" + a->name() + "' is never deallocated");
  }
};

} // namespace

std::vector<std::string> verify(const Function& f) {
  Checker c{f, {}, {}, {}};
  c.run();
  return c.problems;
}

void verifyOrThrow(const Function& f) {
  const std::vector<std::string> problems = verify(f);
  if (problems.empty())
    return;
  std::string msg = std::to_string(problems.size()) + " problem(s):";
  for (const std::string& p : problems)
    msg += "\n  " + p;
  throw Error("lir function '" + f.name() + "'", msg);
}

} // namespace ember::lir
