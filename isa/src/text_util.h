// Internal: tokenising and quoting shared by the assembler and the disassembler.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ember::isa::detail {

/// A token of an assembly line: a word (possibly `key=value`) or a quoted string.
struct Token {
  std::string text; ///< Unescaped text.
  bool quoted = false;
  std::string key; ///< For `key=value`: the key (text holds the value).
  bool has_key = false;
};

/// Splits a line into tokens (whitespace and commas separate; `;` or `#` outside quotes
/// start a comment). Returns an error message in `err` on a malformed quote.
std::vector<Token> tokenize(std::string_view line, std::string& err);

/// A C-like quoted string: `"` + text with \" \\ and \xHH for non-printable bytes + `"`.
std::string quote(std::string_view s);

/// Parses an integer: decimal or 0x/0b with optional sign. nullopt on error/overflow.
std::optional<std::int64_t> parseInt(std::string_view s);
/// Parses an unsigned 64-bit integer (decimal or 0x/0b). nullopt on error/overflow.
std::optional<std::uint64_t> parseUint(std::string_view s);

/// "0x" + lower-case hex.
std::string hexU(std::uint64_t v);

} // namespace ember::isa::detail
