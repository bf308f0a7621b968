// dead-allocation-removal and shrink-live-ranges.
#include "Uses.h"
#include "ember/lir/Passes.h"

#include <unordered_set>

namespace ember::lir {

namespace {

/// One round of removals; returns how many instructions (deallocations aside) went.
size_t removeDeadOnce(Function& f) {
  const Uses u(f);
  // Compute and copy instructions that write only activations nobody reads.
  std::vector<const Instruction*> dead;
  for (const auto& p : f.instructions()) {
    const Instruction* in = p.get();
    if (in->valueKind() != ValueKind::Compute && in->valueKind() != ValueKind::Copy)
      continue;
    bool writes = false, useless = true;
    for (const Operand& op : in->operands()) {
      if (op.kind == OperandKind::In || !op.value)
        continue;
      writes = true;
      const Value* root = locate(op.value).root;
      if (root->valueKind() != ValueKind::Alloc || u.reads.count(root))
        useless = false;
    }
    if (writes && useless)
      dead.push_back(in);
  }
  if (!dead.empty()) {
    for (const Instruction* in : dead)
      f.erase(in);
    return dead.size();
  }
  // Views and allocations no operand refers to (a deallocation does not count).
  std::unordered_set<const Value*> referenced;
  for (const auto& p : f.instructions())
    if (p->valueKind() != ValueKind::Dealloc)
      for (const Operand& op : p->operands())
        referenced.insert(op.value);
  std::vector<const Instruction*> unused;
  for (const auto& p : f.instructions())
    if ((p->valueKind() == ValueKind::View || p->valueKind() == ValueKind::Alloc) &&
        !referenced.count(p.get()))
      unused.push_back(p.get());
  for (const Instruction* in : unused) {
    auto d = u.dealloc.find(in);
    if (d != u.dealloc.end())
      f.erase(d->second);
    f.erase(in);
  }
  return unused.size();
}

} // namespace

size_t runDeadAllocationRemoval(Function& f) {
  size_t changed = 0;
  while (size_t n = removeDeadOnce(f))
    changed += n;
  return changed;
}

size_t runShrinkLiveRanges(Function& f) {
  const Uses u(f);
  InstrList& list = f.instructions();
  // Where each allocation / deallocation sits now: the next instruction that is neither
  // an allocation nor a deallocation / the previous one that is not a deallocation.
  std::unordered_map<const Instruction*, const Instruction*> oldAnchor;
  const Instruction* prev = nullptr;
  for (const auto& p : list) {
    if (p->valueKind() == ValueKind::Dealloc)
      oldAnchor[p.get()] = prev;
    else
      prev = p.get();
  }
  const Instruction* next = nullptr;
  for (auto it = list.rbegin(); it != list.rend(); ++it) {
    if ((*it)->valueKind() == ValueKind::Alloc)
      oldAnchor[it->get()] = next;
    else if ((*it)->valueKind() != ValueKind::Dealloc)
      next = it->get(); // an instruction that stays in place (allocs go before one)
  }

  std::unordered_map<const Instruction*, std::vector<std::unique_ptr<Instruction>>> before, after;
  std::vector<std::unique_ptr<Instruction>> rest, tail;
  std::unordered_map<const Value*, std::unique_ptr<Instruction>> deallocs;
  std::vector<std::unique_ptr<Instruction>> allocs;
  for (auto& p : list) {
    if (p->valueKind() == ValueKind::Dealloc)
      deallocs[p->operand(0).value] = std::move(p);
    else if (p->valueKind() == ValueKind::Alloc)
      allocs.push_back(std::move(p));
    else
      rest.push_back(std::move(p));
  }
  list.clear();

  size_t changed = 0;
  for (auto& a : allocs) {
    const Instruction* first = u.firstUser(a.get());
    std::unique_ptr<Instruction> d;
    auto it = deallocs.find(a.get());
    if (it != deallocs.end()) {
      d = std::move(it->second);
      deallocs.erase(it);
    }
    if (!first) { // unused: alloc and dealloc stay together where the alloc was
      const Instruction* anchor = oldAnchor[a.get()];
      changed += d && oldAnchor[d.get()] != a.get();
      auto& slot = anchor ? before[anchor] : tail;
      slot.push_back(std::move(a));
      if (d)
        slot.push_back(std::move(d));
      continue;
    }
    changed += oldAnchor[a.get()] != first;
    if (d) {
      const Instruction* last = u.lastUser(a.get());
      changed += oldAnchor[d.get()] != last;
      after[last].push_back(std::move(d));
    }
    before[first].push_back(std::move(a));
  }
  for (auto& [_, d] : deallocs) // deallocations of no allocation: left for the verifier
    tail.push_back(std::move(d));

  for (auto& p : rest) {
    const Instruction* key = p.get();
    for (auto& a : before[key])
      list.push_back(std::move(a));
    list.push_back(std::move(p));
    for (auto& d : after[key])
      list.push_back(std::move(d));
  }
  for (auto& t : tail)
    list.push_back(std::move(t));
  return changed;
}

} // namespace ember::lir
