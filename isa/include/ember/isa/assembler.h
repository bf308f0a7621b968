// Assembly text <-> Binary. Syntax in docs/isa/assembly-binary.md, "Assembly language".
#pragma once

#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/isa/instruction.h"

#include <string>
#include <string_view>

namespace ember::isa {

/// Assembles a whole program (instructions and directives `.isa`, `.region`, `.io`,
/// `.byte`, `.word`, `.zero`, `.node`). Checks each instruction's dependency tokens
/// against its engine. Throws Error with `line N` and the reason.
Binary assemble(std::string_view text, const IsaDescription& isa,
                const std::string& file = "<string>");

/// Options of `disassemble`.
struct DisasmOptions {
  bool show_encoding = true;         ///< Comment with index and hex word after each instruction.
  bool show_summary = true;          ///< Comment header: ISA, sections (if given), counts.
  std::vector<SectionInfo> sections; ///< Printed as comments when non-empty.
  std::string source;                ///< File name for the header comment.
};

/// Text that `assemble` turns back into an identical Binary: directives for regions,
/// I/O entries, constants and debug nodes; everything else is a `;` comment.
std::string disassemble(const Binary& bin, const IsaDescription& isa,
                        const DisasmOptions& opts = {});

/// One instruction as assembly (`mnemonic key=value ... flag ...`), no newline.
std::string formatInstruction(const Instruction& insn);
/// Parses one instruction line (no comment). Omitted fields are 0, a bare key sets a
/// flag. Throws Error(file, where, reason).
Instruction parseInstruction(std::string_view line, const IsaDescription& isa,
                             const std::string& file = "<string>", const std::string& where = "");

/// Checks the dependency-token flags of `insn` against its engine (load has no previous
/// engine, store no next). Returns an empty string if fine, else the reason.
std::string checkTokens(const Instruction& insn);

} // namespace ember::isa
