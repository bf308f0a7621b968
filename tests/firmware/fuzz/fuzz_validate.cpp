// libFuzzer target of the firmware's job validator (firmware/src/validate.c): the input
// is a binary image placed in device DRAM, its job slot built around it; the validator
// must answer with a rule or accept, never read outside DRAM, never crash (ASan/UBSan).
// A second variant of each input edits the slot from the input's first bytes.
#include "ember_fw.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {
constexpr std::uint64_t kDram = 1u << 20, kBin = 0x1000, kWindow = 0x80000;
std::vector<std::uint8_t>& dram() {
  static std::vector<std::uint8_t> d(kDram);
  return d;
}
} // namespace

extern "C" {
std::uint8_t* ember_hal_dram(std::uint64_t a, std::uint64_t n) {
  if (a > kDram || n > kDram - a)
    return nullptr;
  return dram().data() + a;
}
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kWindow - kBin)
    return 0;
  auto& d = dram();
  std::memset(d.data(), 0, d.size());
  std::memcpy(d.data() + kBin, data, size);
  for (int variant = 0; variant < 2; ++variant) {
    ember_job_slot s{};
    s.magic = EMBER_SLOT_MAGIC;
    s.binary_addr = kBin;
    s.binary_size = size;
    s.window_base = kWindow;
    s.window_size = kDram - kWindow;
    s.cycle_budget = 1000;
    if (variant == 1 && size >= 16) { // slot fields from the input too
      std::uint64_t a, b;
      std::memcpy(&a, data, 8);
      std::memcpy(&b, data + 8, 8);
      s.window_size = a;
      s.binary_size = b % (size + 64);
    }
    ember_fw_job job;
    const std::uint32_t rule = ember_fw_validate(&s, &job);
    if (rule >= EMBER_RULE_COUNT)
      __builtin_trap();
    if (rule == EMBER_RULE_NONE &&
        (job.insn_count == 0 || job.text_addr < kBin || job.text_addr >= kBin + size))
      __builtin_trap(); // an accepted job's stream lies in its binary
  }
  return 0;
}
