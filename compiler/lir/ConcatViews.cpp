// concat-into-views: the producers of a Concat's inputs write straight into the parts of
// its result (Glow's concat optimisation), so the inputs need no buffers of their own.
#include "Uses.h"
#include "ember/graph/AttrViews.h"
#include "ember/lir/Passes.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace ember::lir {

namespace {

/// Whether an instruction after `after` writes into `root`.
bool writtenAfter(const Uses& u, const Value* root, const Instruction* after) {
  auto it = u.users.find(root);
  if (it == u.users.end())
    return false;
  const size_t limit = u.pos.at(after);
  for (const Instruction* in : it->second) {
    if (u.pos.at(in) <= limit)
      continue;
    for (const Operand& op : in->operands())
      if (op.value && op.kind != OperandKind::In && locate(op.value).root == root)
        return true;
  }
  return false;
}

/// The allocation `v` covers entirely (offset 0, same size), or null.
Instruction* wholeAllocation(Value* v) {
  const Location l = locate(v);
  if (l.root->valueKind() != ValueKind::Alloc || l.offset != 0 ||
      v->sizeInBytes() != l.root->sizeInBytes())
    return nullptr;
  return static_cast<Instruction*>(l.root);
}

/// The byte offset of every input of a Concat in its result, when each input is one
/// contiguous part of it (nothing outside the axis) and all share the result's element
/// kind and quantization; empty otherwise.
std::vector<size_t> partOffsets(const Instruction& c) {
  const Type& out = c.operand(0).value->type();
  int64_t axis = axisOf(c.node().attrs()).axis;
  if (axis < 0)
    axis += int64_t(out.rank());
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= out.dims[size_t(i)];
  if (outer != 1)
    return {};
  std::vector<size_t> offsets;
  size_t offset = 0;
  for (size_t j = 1; j < c.operands().size(); ++j) {
    const Value* x = c.operand(j).value;
    if (!x || x->type().kind != out.kind || x->type().quant != out.quant)
      return {};
    offsets.push_back(offset);
    offset += x->sizeInBytes();
  }
  return offsets;
}

/// Live spans of the allocations as shrink-live-ranges will make them: first to last
/// user (an unused allocation: its own position).
struct Span {
  size_t begin = 0, end = 0, size = 0;
};

std::unordered_map<const Value*, Span> allocationSpans(const Function& f, const Uses& u) {
  std::unordered_map<const Value*, Span> spans;
  for (const auto& p : f.instructions()) {
    if (p->valueKind() != ValueKind::Alloc)
      continue;
    const Instruction* first = u.firstUser(p.get());
    const size_t at = u.pos.at(p.get());
    spans[p.get()] = {first ? u.pos.at(first) : at, first ? u.pos.at(u.lastUser(p.get())) : at,
                      p->sizeInBytes()};
  }
  return spans;
}

/// The peak live bytes when the allocations of `parts` become views of `result`: their
/// spans go, the result's starts with the earliest of them.
size_t peakWith(const std::unordered_map<const Value*, Span>& spans, size_t positions,
                const Value* result, const std::vector<const Value*>& parts) {
  std::vector<long long> delta(positions + 2, 0);
  size_t begin = spans.at(result).begin;
  for (const Value* a : parts)
    begin = std::min(begin, spans.at(a).begin);
  for (const auto& [v, sp] : spans) {
    if (std::find(parts.begin(), parts.end(), v) != parts.end())
      continue;
    const size_t b = v == result ? begin : sp.begin;
    delta[b] += (long long)sp.size;
    delta[sp.end + 1] -= (long long)sp.size;
  }
  long long live = 0, peak = 0;
  for (long long d : delta) {
    live += d;
    peak = std::max(peak, live);
  }
  return size_t(peak);
}

/// Rewrites one Concat if possible.
bool rewriteOneConcat(Function& f) {
  const Uses u(f);
  for (auto& p : f.instructions()) {
    Instruction* c = p.get();
    if (c->valueKind() != ValueKind::Compute || c->node().kind() != NodeKind::Concat)
      continue;
    Value* out = c->operand(0).value;
    if (out->valueKind() != ValueKind::Alloc || u.firstUser(out) != c || !u.dealloc.count(out) ||
        writtenAfter(u, out, c))
      continue;
    const std::vector<size_t> offsets = partOffsets(*c);
    if (offsets.empty())
      continue;
    // Inputs that are whole allocations, used once here and dying here: one read later
    // would keep the whole result alive as long (densenet's features feed every later
    // Concat of their block).
    std::map<Instruction*, size_t> uses;
    for (size_t j = 1; j < c->operands().size(); ++j)
      if (Instruction* a = wholeAllocation(c->operand(j).value))
        ++uses[a];
    std::vector<size_t> candidates;
    for (size_t j = 1; j < c->operands().size(); ++j) {
      Instruction* a = wholeAllocation(c->operand(j).value);
      if (a && uses[a] == 1 && u.dealloc.count(a) && u.lastUser(a) == c)
        candidates.push_back(j);
    }
    // The result now lives from the earliest part's producer, which can raise the peak
    // elsewhere and fragments the arena: take parts, latest produced first, only while
    // each lowers the peak of live bytes.
    const auto spans = allocationSpans(f, u);
    const size_t positions = f.instructions().size();
    std::sort(candidates.begin(), candidates.end(), [&](size_t x, size_t y) {
      return spans.at(wholeAllocation(c->operand(x).value)).begin >
             spans.at(wholeAllocation(c->operand(y).value)).begin;
    });
    std::vector<size_t> mapped;
    std::vector<const Value*> parts;
    const size_t peak = peakWith(spans, positions, out, {});
    for (size_t j : candidates) {
      parts.push_back(wholeAllocation(c->operand(j).value));
      if (peakWith(spans, positions, out, parts) < peak)
        mapped.push_back(j);
      else
        parts.pop_back();
    }
    if (mapped.empty())
      continue;
    Instruction* earliest = nullptr;
    for (size_t j : mapped) {
      Instruction* a = wholeAllocation(c->operand(j).value);
      if (!earliest || u.pos.at(a) < u.pos.at(earliest))
        earliest = a;
    }

    auto* result = static_cast<Instruction*>(out);
    InstrList& list = f.instructions();
    list.splice(f.find(earliest), list, f.find(result)); // allocate before the parts
    f.erase(u.dealloc.at(result));
    std::vector<Value*> inputs;
    for (size_t j = 1; j < c->operands().size(); ++j)
      inputs.push_back(c->operand(j).value);
    for (size_t j : mapped) {
      Instruction* a = wholeAllocation(inputs[j - 1]);
      Instruction* part =
          f.insert(f.find(a), ValueKind::View, a->name(), a->type(), {{result, OperandKind::In}});
      part->setOffset(offsets[j - 1]);
      f.erase(u.dealloc.at(a));
      f.replaceAllUsesOf(a, part);
      f.erase(a);
    }
    // The other inputs are copied into their parts where the Concat was.
    for (size_t j = 1; j <= inputs.size(); ++j) {
      if (std::find(mapped.begin(), mapped.end(), j) != mapped.end())
        continue;
      Value* x = inputs[j - 1];
      Instruction* part = f.insert(f.find(c), ValueKind::View, c->name() + ".part", x->type(),
                                   {{result, OperandKind::In}});
      part->setOffset(offsets[j - 1]);
      f.insert(f.find(c), ValueKind::Copy, c->name() + ".copy", Type(),
               {{part, OperandKind::Out}, {x, OperandKind::In}});
    }
    f.erase(c);
    const Uses after(f);
    const Instruction* last = after.lastUser(result);
    f.insert(std::next(f.find(last)), ValueKind::Dealloc, "", Type(), {{result, OperandKind::Out}});
    return true;
  }
  return false;
}

} // namespace

size_t runConcatIntoViews(Function& f) {
  size_t changed = 0;
  while (rewriteOneConcat(f))
    ++changed;
  return changed;
}

} // namespace ember::lir
