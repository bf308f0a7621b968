#pragma once
/// \file
/// Use information of the low-level IR for the passes: which instructions touch each
/// root buffer (an allocation or a weight), directly or through views.

#include "ember/lir/IR.h"

#include <unordered_map>
#include <vector>

namespace ember::lir {

struct Uses {
  /// Position of every instruction in the list.
  std::unordered_map<const Instruction*, size_t> pos;
  /// Instructions other than alloc/dealloc with an operand in each root, in order.
  std::unordered_map<const Value*, std::vector<Instruction*>> users;
  /// Roots that some instruction reads (an `@in`/`@inout` operand of a copy or compute).
  std::unordered_map<const Value*, size_t> reads;
  /// The deallocation of each allocation.
  std::unordered_map<const Value*, Instruction*> dealloc;

  explicit Uses(Function& f);
  const Instruction* lastUser(const Value* root) const;
  const Instruction* firstUser(const Value* root) const;
};

} // namespace ember::lir
