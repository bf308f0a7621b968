// Generators driven by the description: firmware C header, SystemVerilog package,
// decoder and register block, docs/isa/tables.md and the `ember-isa check` summary.
#pragma once

#include "ember/isa/description.h"

#include <string>

namespace ember::isa {

/// Freestanding C11 header: register offsets/fields, hardware parameters, opcodes, field
/// positions and the ISA hash, as macros with an `EMBER_` prefix.
std::string generateCHeader(const IsaDescription& isa);
/// SystemVerilog package `ember_isa_pkg` with the same facts as localparams, plus the
/// decoder's interface: INSTR_BITS, the semantic classes (CLS_*), the vector ops
/// (VOP_*), each instruction's index and typed opcode (INSN_*_IDX, OPC_*) and each field
/// role's port width and signedness (ROLE_*_BITS, ROLE_*_SIGNED). Throws Error if two
/// generated names clash. docs/rtl/generated.md describes every name.
std::string generateSvPackage(const IsaDescription& isa);
/// SystemVerilog module `ember_decode` (file ember_decode.sv): the combinational
/// instruction decoder (instruction word -> valid, class, instruction index, vector op,
/// one port per field role). Accepts exactly the words `Instruction::decode` accepts.
std::string generateSvDecoder(const IsaDescription& isa);
/// SystemVerilog module `ember_regs` (file ember_regs.sv): the MMIO register block of the
/// description's register map (rw, ro, wo, w1c; 1-cycle read latency). Throws Error if
/// two generated port names clash.
std::string generateSvRegs(const IsaDescription& isa);
/// Markdown tables (parameters, memories, encodings, timing, energy, registers).
std::string generateMarkdownTables(const IsaDescription& isa);
/// Human summary: peak MAC/cycle, SRAM sizes, DRAM bytes/cycle, ridge point, ...
std::string summarize(const IsaDescription& isa);

/// Marker lines that enclose the generated tables in docs/isa/tables.md.
extern const char* const kMdBeginMarker;
extern const char* const kMdEndMarker;
/// Replaces the text between the markers in `doc` with `tables`. Throws Error if the
/// markers are missing.
std::string spliceMarkdown(const std::string& doc, const std::string& tables,
                           const std::string& file);
/// The text between the markers (exclusive). Throws Error if missing.
std::string extractMarkdown(const std::string& doc, const std::string& file);

/// What `ember-isa gen` writes or checks (each "" = not asked).
struct GenerateRequest {
  std::string cHeader, svPackage, svDecoder, svRegs, mdTables; ///< generated files
  std::string checkMd;  ///< a document whose generated tables must equal the description's
  std::string updateMd; ///< a document whose generated tables are rewritten in place
};
/// Refuses, before any work, an output that is a folder, an empty name, the description
/// `description` or the document checked, or that two outputs share (ember::Error).
void checkGenerateOutputs(const GenerateRequest& r, const std::string& description);
/// Generates every requested file from `isa`, all of them before the first is written (a
/// generator that refuses the description leaves no file), each atomically; splices
/// `updateMd`'s tables. Returns "" or, when `checkMd`'s tables differ, the message
/// naming both files and the command that updates the document.
std::string generateFiles(const GenerateRequest& r, const IsaDescription& isa);

} // namespace ember::isa
