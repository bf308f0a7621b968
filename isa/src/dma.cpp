// The DRAM box of a DMA instruction (dma.h).
#include "ember/isa/dma.h"

#include "ember/isa/roles.h"
#include "ember/isa/semantic.h"

#include <limits>

namespace ember::isa {

namespace {
using u64 = std::uint64_t;
constexpr u64 kMax = std::numeric_limits<u64>::max();

u64 satAdd(u64 a, u64 b) {
  return a > kMax - b ? kMax : a + b;
}
u64 satMul(u64 a, u64 b) {
  return b && a > kMax / b ? kMax : a * b;
}
u64 U(const Instruction& in, const char* role) {
  return static_cast<u64>(in.get(role));
}
} // namespace

bool isDma(const Instruction& in) {
  const auto c = in.desc().cls->id;
  return c == SemanticClass::DmaLoad || c == SemanticClass::DmaStore;
}

std::optional<std::uint64_t> dmaDramEnd(const IsaDescription& isa, const Instruction& in) {
  if (!isDma(in))
    return std::nullopt;
  const u64 s0 = U(in, role::kSize0), s1 = U(in, role::kSize1), s2 = U(in, role::kSize2);
  if (s0 == 0 || s1 == 0 || s2 == 0)
    return std::nullopt;
  const MemoryDesc* mem = isa.memoryById(in.get(role::kSram));
  if (!mem)
    return kMax;
  const u64 rows = satAdd(
      satAdd(satMul(s2 - 1, U(in, role::kStride2)), satMul(s1 - 1, U(in, role::kStride1))), s0);
  return satAdd(U(in, role::kDramAddr), satMul(rows, mem->row_bytes));
}

} // namespace ember::isa
