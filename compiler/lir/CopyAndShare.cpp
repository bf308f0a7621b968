// copy-elimination and share-buffers: passes that make one buffer serve two values.
#include "Uses.h"
#include "ember/lir/Passes.h"

namespace ember::lir {

namespace {

/// The allocation `v` covers entirely (offset 0, same size), or null.
Instruction* wholeAllocation(Value* v) {
  const Location l = locate(v);
  if (l.root->valueKind() != ValueKind::Alloc || l.offset != 0 ||
      v->sizeInBytes() != l.root->sizeInBytes())
    return nullptr;
  return static_cast<Instruction*>(l.root);
}

/// `target` as a buffer of `alloc`'s type: itself, or a view inserted before `pos`.
Value* asTypeOf(Function& f, Instruction* alloc, Value* target, const Instruction* pos) {
  if (alloc->type() == target->type())
    return target;
  return f.insert(f.find(pos), ValueKind::View, alloc->name(), alloc->type(),
                  {{target, OperandKind::In}});
}

/// One copy elimination, if any is possible.
bool eliminateOneCopy(Function& f) {
  Uses u(f);
  for (auto& p : f.instructions()) {
    Instruction* c = p.get();
    if (c->valueKind() != ValueKind::Copy)
      continue;
    Value* dst = c->operand(0).value;
    if (dst->valueKind() != ValueKind::Weight ||
        static_cast<WeightVar*>(dst)->role() != WeightVar::Role::Output)
      continue;
    Instruction* alloc = wholeAllocation(c->operand(1).value);
    if (!alloc || u.lastUser(alloc) != c || u.firstUser(dst) != c || !u.dealloc.count(alloc))
      continue;
    Value* repl = asTypeOf(f, alloc, dst, alloc);
    f.erase(u.dealloc.at(alloc));
    f.erase(c);
    f.replaceAllUsesOf(alloc, repl);
    f.erase(alloc);
    return true;
  }
  return false;
}

/// Instruction `in` may write result `r` over its operand `j`.
bool canShare(const Uses& u, const Instruction* in, size_t r, size_t j) {
  Value* out = in->operand(r).value;
  Value* x = in->operand(j).value;
  if (!x || out->valueKind() != ValueKind::Alloc || u.firstUser(out) != in)
    return false;
  Instruction* alloc = wholeAllocation(x);
  if (!alloc || alloc == out || u.lastUser(alloc) != in || !u.dealloc.count(alloc) ||
      !u.dealloc.count(out))
    return false;
  if (x->type().kind != out->type().kind || x->type().dims != out->type().dims)
    return false;
  for (size_t k = 0; k < in->numResults(); ++k)
    if (k != r && locate(in->operand(k).value).root == alloc)
      return false; // another result already lives there
  // Another input in the same buffer must be the same elements (x + x), not a part of
  // them that writing the result would change before it is read (x + x[0] broadcast).
  for (size_t k = in->numResults(); k < in->operands().size(); ++k) {
    Value* y = in->operand(k).value;
    if (k == j || !y || locate(y).root != alloc)
      continue;
    if (wholeAllocation(y) != alloc || y->type().dims != out->type().dims)
      return false;
  }
  return true;
}

/// One buffer sharing, if any is possible.
bool shareOneBuffer(Function& f) {
  Uses u(f);
  for (auto& p : f.instructions()) {
    Instruction* in = p.get();
    if (in->valueKind() != ValueKind::Compute || !isInPlaceSafe(in->node().kind()))
      continue;
    for (size_t r = 0; r < in->numResults(); ++r)
      for (size_t j = in->numResults(); j < in->operands().size(); ++j) {
        if (!canShare(u, in, r, j))
          continue;
        auto* out = static_cast<Instruction*>(in->operand(r).value);
        Instruction* alloc = wholeAllocation(in->operand(j).value);
        // The shared buffer now lives as long as the result did.
        Instruction* outDealloc = u.dealloc.at(out);
        f.insert(f.find(outDealloc), ValueKind::Dealloc, "", Type(), {{alloc, OperandKind::Out}});
        f.erase(outDealloc);
        f.erase(u.dealloc.at(alloc));
        Value* repl = asTypeOf(f, out, alloc, in);
        f.replaceAllUsesOf(out, repl);
        f.erase(out);
        return true;
      }
  }
  return false;
}

} // namespace

size_t runCopyElimination(Function& f) {
  size_t changed = 0;
  while (eliminateOneCopy(f))
    ++changed;
  return changed;
}

size_t runShareBuffers(Function& f) {
  size_t changed = 0;
  while (shareOneBuffer(f))
    ++changed;
  return changed;
}

} // namespace ember::lir
