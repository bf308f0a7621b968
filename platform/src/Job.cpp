// Building a job from a binary and its default cycle budget: the same for every engine.
#include "ember/platform/Job.h"

#include "ember/isa/error.h"
#include "ember/isa/semantic.h"
#include "ember/isa/timing.h"
#include "ember/platform/Io.h"

#include <algorithm>
#include <exception>

namespace ember::platform {

using u64 = std::uint64_t;

void checkJob(const isa::IsaDescription& isa, const isa::Binary& bin, const JobInputs& inputs,
              u64 window, const std::string& file) {
  if (window == 0)
    window = isa.hw().dram.size_bytes;
  // Every region must fit the window (I/O entries and constants lie inside regions).
  for (const auto& r : bin.memmap)
    if (r.dram_offset > window || r.size_bytes > window - r.dram_offset)
      throw isa::Error(file, "section .ember.memmap: region \"" + r.name + "\"",
                       "[" + std::to_string(r.dram_offset) + ", " +
                           std::to_string(r.dram_offset + r.size_bytes) +
                           ") does not fit the job's DRAM window of " + std::to_string(window) +
                           " bytes (--dram-window)");
  for (const auto& [name, bytes] : inputs)
    (void)inputEntry(bin, name, bytes.size());
}

Job makeJob(const isa::IsaDescription& isa, const isa::Binary& bin, const JobInputs& inputs,
            u64 window, const std::string& file) {
  checkJob(isa, bin, inputs, window, file);
  Job job;
  const unsigned W = isa.instructionBytes();
  job.text.resize(bin.code.size() * W);
  for (std::size_t i = 0; i < bin.code.size(); ++i)
    bin.code[i].encodeInto(job.text.data() + i * W);
  for (const auto& r : bin.memmap)
    if (r.kind == isa::RegionKind::Const)
      job.dram.write(r.dram_offset, bin.constants);
  for (const auto& [name, bytes] : inputs)
    job.dram.write(inputEntry(bin, name, bytes.size()).dram_offset, bytes);
  job.debug = bin.debug;
  return job;
}

u64 defaultCycleBudget(const isa::IsaDescription& isa, const Job& job) {
  const unsigned W = isa.instructionBytes();
  u64 sum = kBudgetSlack + isa.hw().fetch.latency_cycles;
  for (std::size_t i = 0; W && i < job.text.size() / W; ++i) {
    try {
      isa::Instruction insn = isa::Instruction::decode(isa, job.text.data() + i * W, "", "");
      // A class no engine implements faults at fetch and costs nothing.
      if (insn.desc().cls->id == isa::SemanticClass::Custom)
        continue;
      // One cycle of fetch per instruction (rule F1) plus its one-pass duration.
      u64 c = isa::timing::onePass(isa, insn);
      c = c == UINT64_MAX ? c : c + 1;
      sum = c > kMaxCycleBudget - sum ? kMaxCycleBudget : sum + c;
    } catch (const std::exception&) {
      // Faults at fetch; costs nothing.
    }
  }
  return std::min(sum, kMaxCycleBudget);
}

} // namespace ember::platform
