// Generators driven by the description: firmware C header, SystemVerilog package,
// docs/isa.md tables and the `ember-isa check` summary.
#pragma once

#include "ember/isa/description.h"

#include <string>

namespace ember::isa {

/// Freestanding C11 header: register offsets/fields, hardware parameters, opcodes, field
/// positions and the ISA hash, as macros with an `EMBER_` prefix.
std::string generateCHeader(const IsaDescription& isa);
/// SystemVerilog package `ember_isa_pkg` with the same facts as localparams.
std::string generateSvPackage(const IsaDescription& isa);
/// Markdown tables (parameters, memories, encodings, timing, energy, registers).
std::string generateMarkdownTables(const IsaDescription& isa);
/// Human summary: peak MAC/cycle, SRAM sizes, DRAM bytes/cycle, ridge point, ...
std::string summarize(const IsaDescription& isa);

/// Marker lines that enclose the generated tables in docs/isa.md.
extern const char* const kMdBeginMarker;
extern const char* const kMdEndMarker;
/// Replaces the text between the markers in `doc` with `tables`. Throws Error if the
/// markers are missing.
std::string spliceMarkdown(const std::string& doc, const std::string& tables,
                           const std::string& file);
/// The text between the markers (exclusive). Throws Error if missing.
std::string extractMarkdown(const std::string& doc, const std::string& file);

} // namespace ember::isa
