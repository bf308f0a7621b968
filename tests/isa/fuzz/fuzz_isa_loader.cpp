// Fuzz target: the ISA description loader. Accepted descriptions must also generate
// code and encode/decode every instruction; anything but ember::isa::Error is a bug.
#include "ember/isa/codegen.h"
#include "ember/isa/description.h"
#include "ember/isa/error.h"
#include "ember/isa/instruction.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ember::isa;
  if (size > (1u << 20))
    return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    IsaDescription d = IsaDescription::loadString(text, "fuzz.json");
    (void)generateCHeader(d);
    (void)generateSvPackage(d);
    (void)generateMarkdownTables(d);
    (void)summarize(d);
    for (const InstrDesc& in : d.instructions()) {
      Instruction insn(in);
      for (std::size_t i = 0; i < in.fields.size(); ++i)
        insn.setIndex(i, in.fields[i].names.empty() ? in.fields[i].maxValue()
                                                    : in.fields[i].names.back().second);
      if (Instruction::decode(d, insn.encode().data()) != insn)
        std::abort();
    }
  } catch (const Error&) {
  }
  return 0;
}
