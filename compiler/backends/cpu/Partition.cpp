#include "Partition.h"

#include "ember/support/Error.h"

#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace ember::cpu {

namespace {

using GlobalSet = std::set<const llvm::GlobalValue*>;

/// A unit of partitioning: a kernel instance or an operation's function (nothing inlines
/// either; see ModuleGen.cpp and CodegenContext::call).
bool isUnit(const llvm::Function& f) {
  return !f.isDeclaration() &&
         (f.getName().starts_with("instance.") || f.getName().starts_with("op."));
}

/// Adds the global values `c` refers to (through constant expressions and aggregates).
void collect(const llvm::Constant* c, std::vector<const llvm::GlobalValue*>& out,
             std::set<const llvm::Constant*>& seen) {
  if (!seen.insert(c).second)
    return;
  if (const auto* gv = llvm::dyn_cast<llvm::GlobalValue>(c)) {
    out.push_back(gv);
    return;
  }
  for (const llvm::Use& u : c->operands())
    if (const auto* op = llvm::dyn_cast<llvm::Constant>(u.get()))
      collect(op, out, seen);
}

/// The global values the definition of `gv` refers to directly.
std::vector<const llvm::GlobalValue*> references(const llvm::GlobalValue& gv) {
  std::vector<const llvm::GlobalValue*> out;
  std::set<const llvm::Constant*> seen;
  if (const auto* f = llvm::dyn_cast<llvm::Function>(&gv)) {
    if (f->hasPersonalityFn())
      collect(f->getPersonalityFn(), out, seen);
    for (const llvm::BasicBlock& bb : *f)
      for (const llvm::Instruction& i : bb)
        for (const llvm::Use& u : i.operands())
          if (const auto* c = llvm::dyn_cast<llvm::Constant>(u.get()))
            collect(c, out, seen);
  } else if (const auto* v = llvm::dyn_cast<llvm::GlobalVariable>(&gv)) {
    if (v->hasInitializer())
      collect(v->getInitializer(), out, seen);
  }
  return out;
}

/// The definitions reachable from `roots` without entering a unit other than a root.
GlobalSet closure(const std::vector<const llvm::GlobalValue*>& roots) {
  GlobalSet defs;
  std::vector<const llvm::GlobalValue*> work(roots.begin(), roots.end());
  const GlobalSet rootSet(roots.begin(), roots.end());
  while (!work.empty()) {
    const llvm::GlobalValue* gv = work.back();
    work.pop_back();
    if (gv->isDeclaration() || defs.count(gv))
      continue;
    if (const auto* f = llvm::dyn_cast<llvm::Function>(gv); f && isUnit(*f) && !rootSet.count(f))
      continue;
    defs.insert(gv);
    for (const llvm::GlobalValue* r : references(*gv))
      work.push_back(r);
  }
  return defs;
}

size_t instructionsOf(const GlobalSet& defs) {
  size_t n = 0;
  for (const llvm::GlobalValue* gv : defs)
    if (const auto* f = llvm::dyn_cast<llvm::Function>(gv))
      n += f->getInstructionCount();
  return n;
}

/// A module of `m` with the definitions `defs` and declarations of what they use.
ModulePartition clonePartition(const llvm::Module& m, const GlobalSet& defs) {
  llvm::ValueToValueMapTy vmap;
  std::unique_ptr<llvm::Module> part =
      llvm::CloneModule(m, vmap, [&](const llvm::GlobalValue* gv) { return defs.count(gv) != 0; });
  // Declarations this partition does not use go (those of other partitions' code).
  for (bool removed = true; removed;) {
    removed = false;
    for (llvm::GlobalValue& gv : llvm::make_early_inc_range(part->global_values()))
      if (gv.isDeclaration() && gv.use_empty()) {
        gv.eraseFromParent();
        removed = true;
      }
  }
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(*part, &es))
    throw Error("cpu backend", "a module partition is invalid: " + es.str());
  return ModulePartition{writeBitcode(*part), instructionsOf(defs)};
}

/// Whether every global variable may be copied into several partitions.
bool copyable(const llvm::Module& m) {
  if (!m.alias_empty() || !m.ifunc_empty())
    return false;
  return std::all_of(m.global_begin(), m.global_end(), [](const llvm::GlobalVariable& v) {
    return v.isDeclaration() || (v.isConstant() && v.hasLocalLinkage());
  });
}

} // namespace

std::string writeBitcode(const llvm::Module& m) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::WriteBitcodeToFile(m, os);
  os.flush();
  return out;
}

std::vector<ModulePartition> splitModule(llvm::Module& m, const std::vector<std::string>& keep,
                                         size_t maxGroups) {
  std::vector<llvm::Function*> units;
  for (llvm::Function& f : m)
    if (isUnit(f))
      units.push_back(&f);
  std::vector<size_t> cost;
  size_t total = 0;
  for (llvm::Function* f : units) {
    cost.push_back(instructionsOf(closure({f})));
    total += cost.back();
  }
  const size_t groups = std::min(maxGroups, total / kMinPartitionInstructions);
  if (groups < 2 || !copyable(m))
    return {ModulePartition{writeBitcode(m), total}};

  // Largest first, each to the partition with the fewest instructions so far.
  std::vector<size_t> order(units.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  std::vector<size_t> load(groups, 0);
  std::vector<std::vector<size_t>> members(groups);
  for (size_t i : order) {
    const size_t g = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    load[g] += cost[i];
    members[g].push_back(i);
  }
  for (llvm::Function* f : units) {
    f->setLinkage(llvm::GlobalValue::ExternalLinkage);
    f->setVisibility(llvm::GlobalValue::DefaultVisibility);
  }

  std::vector<const llvm::GlobalValue*> mainRoots;
  for (const std::string& name : keep)
    if (const llvm::GlobalValue* gv = m.getNamedValue(name))
      mainRoots.push_back(gv);
  std::vector<ModulePartition> parts{clonePartition(m, closure(mainRoots))};
  for (std::vector<size_t>& group : members) {
    std::sort(group.begin(), group.end()); // module order: the bitcode depends on m only
    std::vector<const llvm::GlobalValue*> roots;
    for (size_t i : group)
      roots.push_back(units[i]);
    parts.push_back(clonePartition(m, closure(roots)));
  }
  return parts;
}

} // namespace ember::cpu
