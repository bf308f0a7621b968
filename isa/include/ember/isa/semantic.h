// Semantic classes: the C++ side of the ISA. Instructions in JSON are instances of them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ember::isa {

class IsaDescription;
struct InstrDesc;

/// The three engines of the decoupled access/execute pipeline, in token order: a
/// token "to next" goes load -> compute -> store, "to prev" goes the other way.
enum class Engine { Load = 0, Compute = 1, Store = 2 };

/// Name of an engine: "load", "compute", "store".
const char* engineName(Engine e);

/// The built-in semantic classes, so that code dispatches on an enum rather than on
/// class-name strings. A class a vendor registers in C++ is `Custom` (dispatched by its
/// ClassSpec).
enum class SemanticClass {
  DmaLoad,
  DmaStore,
  Gemm,
  VectorBinary,
  VectorUnary,
  Requantize,
  QuantizedAdd,
  Lut,
  Normalize,
  Sync,
  Halt,
  Depthwise,
  Custom
};

/// What a field role means, which decides how it is validated and printed.
enum class RoleKind {
  Flag,      ///< One bit (token flags, gemm reset). Width must be exactly 1.
  Count,     ///< Unsigned loop count or size.
  Stride,    ///< Unsigned stride in rows of the memory it walks.
  Addr,      ///< Unsigned SRAM row address; must reach every row of its memory/memories.
  DramAddr,  ///< Unsigned DRAM byte address; must reach hardware.dram.size_bytes.
  MemSelect, ///< Selects an SRAM by its `id`; printed as the memory's name.
  Enum,      ///< Small enumeration whose names are given by the field's `enum` in JSON.
  SignedImm, ///< Signed two's-complement immediate (zero point, clamp bounds, shift).
  Index,     ///< Unsigned index (LUT table number).
};

/// One field a class needs. The JSON maps each role to a bit range.
struct RoleSpec {
  std::string name;                 ///< Role name, e.g. "sram_addr". Also the assembly key.
  RoleKind kind = RoleKind::Count;  ///< Meaning.
  unsigned min_width = 1;           ///< Narrowest acceptable width in bits.
  std::string memory;               ///< Addr: fixed memory ("act", ...), or empty when
                                    ///< the memory comes from `select_role`.
  std::string select_role;          ///< Addr: the MemSelect role choosing its memory.
  std::vector<std::string> choices; ///< MemSelect: memories it may select (empty: taken
                                    ///< from the instruction's `properties.memories`).
                                    ///< Enum: names the JSON `enum` must define.
  std::string doc;                  ///< One line for generated docs.
};

class Checker;

/// A semantic class: the roles its instructions need, the engine that runs them, the
/// timing/energy keys the simulator needs, and which per-instruction properties apply.
/// Adding a class is the documented C++ extension point (docs/extending-isa.md):
/// register a `ClassSpec` and implement its semantics in the simulator/compiler/RTL.
struct ClassSpec {
  std::string name;                         ///< e.g. "vector-binary".
  SemanticClass id = SemanticClass::Custom; ///< Built-in classes: their enum value.
  Engine engine = Engine::Compute;          ///< Queue its instructions go to (a class with an
                                            ///< "engine" Enum role chooses per instruction).
  std::vector<RoleSpec> roles;              ///< Every role is required, none other allowed.
  std::vector<std::string> timing_keys;     ///< Required keys of `timing` (cycles).
  std::vector<std::string> energy_keys;     ///< Required keys of `energy` (pJ).
  std::vector<std::string> op_choices;      ///< Allowed `properties.op`; empty: no op.
  bool needs_memories = false;              ///< Requires `properties.memories`.
  bool allows_table_offset = false;         ///< Accepts `properties.table_offset`.
  /// Runs on the MAC array (docs/simulator.md rule E6: a gemm, a compute sync and finish
  /// wait for the array); accepts `properties.background` and `properties.overwrite`.
  bool on_array = false;
  std::string doc; ///< One line for generated docs.
  /// Optional extra validation for this class (called after the generic checks).
  std::function<void(const IsaDescription&, const InstrDesc&, Checker&)> extra_check;

  /// The role named `role`, or nullptr.
  const RoleSpec* findRole(const std::string& role) const;
};

/// Reports a validation failure at a JSON pointer of the description being checked.
class Checker {
public:
  explicit Checker(std::string file) : file_(std::move(file)) {}
  /// Throws `Error(file, path, reason)`.
  [[noreturn]] void fail(const std::string& path, const std::string& reason) const;
  const std::string& file() const { return file_; }

private:
  std::string file_;
};

/// The set of known semantic classes. `global()` holds the built-in ones; a vendor adds
/// a class with `add()` before loading a description that uses it.
class ClassRegistry {
public:
  /// The process-wide registry, with the built-in classes registered.
  static ClassRegistry& global();
  /// Registers a class; throws `Error` if the name exists.
  void add(ClassSpec spec);
  /// The class named `name`, or nullptr. Pointers stay valid for the process lifetime.
  const ClassSpec* find(const std::string& name) const;
  /// All class names, in registration order.
  std::vector<std::string> names() const;

private:
  std::vector<std::unique_ptr<ClassSpec>> classes_;
};

/// The normalize class's fixed shape (docs/isa/instructions.md section 2.11), written once for the
/// simulator, the compiler and the program generator: the longest line (LayerNorm's
/// products stay within 64 bits up to it) and the acc rows of a parameter block.
inline constexpr std::uint64_t kNormalizeMaxLen = 16384;
/// Acc rows of the table part of a softmax parameter block (256 int32 entries).
inline std::uint64_t normalizeTableRows(unsigned lanes) {
  return (256 + lanes - 1) / lanes;
}
/// Acc rows of a parameter block: two header rows, then the exp table (softmax) or three
/// rows (M, S, B) per row of a `len`-code line (layernorm).
inline std::uint64_t normalizeParamRows(bool softmax, std::uint64_t len, unsigned lanes) {
  return 2 + (softmax ? normalizeTableRows(lanes) : 3 * ((len + lanes - 1) / lanes));
}

} // namespace ember::isa
