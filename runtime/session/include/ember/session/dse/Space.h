#pragma once
/// \file
/// The design space of ember-dse: axes over an NPU description (named convenience axes
/// that keep a description consistent, and generic JSON-pointer axes), their cross
/// product, and seeded random descriptions around a base. Descriptions are JSON
/// documents (nlohmann::json); validating them is libember_isa's job
/// (isa::IsaDescription::loadString), not this module's.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ember::dse {

/// One axis of a sweep: "array=8,16,32" or "/hardware/dma/latency_cycles=50,100".
struct Axis {
  std::string name;                ///< A convenience name (axisHelp) or a JSON pointer.
  std::vector<std::string> values; ///< As written on the command line.
};

/// One value of every axis (or, in random mode, the drawn parameters): (name, value).
using Settings = std::vector<std::pair<std::string, std::string>>;

/// Parses "NAME=V1,V2,...". Throws ember::UsageError naming the argument for a missing
/// '=', an empty name or value, an unknown convenience name, or a value that is not a
/// number where the axis needs one (whether the value makes a valid description is the
/// validator's question, asked per point).
Axis parseAxis(const std::string& spec);

/// The convenience axes, one "  NAME  what it sets" line each (for --help).
std::string axisHelp();

/// Every combination of the axes' values, the first axis varying slowest. No axes: one
/// point with no settings (the base itself). An axis given twice (array=8,16 and array=32)
/// is an ember::UsageError naming both arguments.
std::vector<Settings> crossProduct(const std::vector<Axis>& axes);

/// `base` with `s` applied in order, then made consistent (conformDescription). Throws
/// ember::UsageError for a JSON pointer that does not exist in `base` (naming it), and for
/// two settings of one axis or of axes that write the same field (array and
/// /hardware/mac_array/rows; /hardware/dma and /hardware/dma/burst_bytes): the later would
/// overwrite the earlier and the row would show a value the point does not have.
nlohmann::json applySettings(const nlohmann::json& base, const Settings& s);

/// Makes the fields of every instruction follow the hardware: address fields widened to
/// reach every row of their memory (the stride fields that step through it widened by as
/// much), memory-select fields to the largest id, the DRAM address to the DRAM window; if
/// a field then overlaps another or leaves the word, the fields are packed again in their
/// order after the opcode and `instruction_bits` grows to the next multiple of 32. Fields
/// that are wide enough are left alone, so a consistent description is not changed.
void conformDescription(nlohmann::json& d);

/// Limits of random descriptions (ember-dse --random).
struct RandomRanges {
  int minArray = 4, maxArray = 64; ///< MAC array rows = cols (powers of two).
  /// Smallest size per SRAM in bytes (absent: the smallest that holds one row per bank).
  std::map<std::string, std::uint64_t> minBytes;
  std::uint64_t maxBytes = std::uint64_t(4) << 20; ///< Largest size of any SRAM.
  bool reencode = true;                            ///< Permute and re-size instruction fields.
};

/// One random description: `base` with a random array size, SRAM sizes and banks, DRAM
/// bandwidth, DMA latency, burst and outstanding requests, queue depths, one or two
/// weight buffers and (ranges.reencode) a new encoding: fields permuted within each
/// instruction, widened by up to two bits, the opcode moved to the bottom or the top of
/// a word whose width follows. Deterministic in `seed`; the result is not validated here.
/// `drawn` receives the drawn parameters (name, value) for tables.
nlohmann::json drawRandom(const nlohmann::json& base, std::uint64_t seed,
                          const RandomRanges& ranges, Settings& drawn);

/// Draws allowed for one valid random description (drawValid).
constexpr unsigned kMaxRedraws = 200;

/// A random description that passes the validator: draw k = 0, 1, ... is
/// drawRandom(base, mixSeed(seed, k)); the first valid one is returned and `redraws`
/// says how many were refused before it. Throws ember::Error with the last refusal after
/// kMaxRedraws invalid draws.
nlohmann::json drawValid(const nlohmann::json& base, std::uint64_t seed, const RandomRanges& ranges,
                         Settings& drawn, unsigned& redraws);

/// Largest size any SRAM grows to in grownSramSizes (64 MiB).
constexpr std::uint64_t kMaxGrownBytes = std::uint64_t(64) << 20;

/// One SRAM's size where a model compiles, beside the description's.
struct GrownSram {
  std::string name;
  std::uint64_t bytes = 0, had = 0;
};

/// The SRAM sizes at which a model that `d` is too small for compiles: every SRAM of `d`
/// grown by 2, 4, 8, ... (each at most kMaxGrownBytes; conformDescription after each
/// change) until `compiles` says yes, then each SRAM in turn halved back toward its size
/// in `d` while the model still compiles. `compiles` gets a consistent description and
/// answers false for one the validator refuses. Returns the SRAMs whose size differs from
/// `d`'s, in the description's order; empty when no grown description compiles.
std::vector<GrownSram> grownSramSizes(const nlohmann::json& d,
                                      const std::function<bool(const nlohmann::json&)>& compiles);

/// "act 512 B (has 128 B), acc 4 KiB (has 64 B)".
std::string formatGrown(const std::vector<GrownSram>& g);

/// A 64-bit mix of (seed, index) (splitmix64), for per-draw seeds.
std::uint64_t mixSeed(std::uint64_t seed, std::uint64_t index);

} // namespace ember::dse
