// One NPU instruction: an InstrDesc plus a value for every field; generic encode/decode.
#pragma once

#include "ember/isa/description.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ember::isa {

/// An instruction instance. Values are kept per field (in `desc().fields` order) as
/// int64; signed fields hold their signed value. Encoding and decoding are driven only
/// by the field description, so every instruction of every description works the same.
class Instruction {
public:
  /// An instruction of `desc` with every field 0. `desc` must outlive the instruction
  /// (it lives in an IsaDescription).
  explicit Instruction(const InstrDesc& desc);

  const InstrDesc& desc() const { return *desc_; }
  const std::string& name() const { return desc_->name; }

  /// Value of the field with role `role`; throws Error if the instruction has none.
  std::int64_t get(std::string_view role) const;
  /// Sets a field; throws Error if the role is unknown or the value does not fit.
  void set(std::string_view role, std::int64_t value);
  /// Sets `role` only if the instruction has it (for optional roles, e.g. tokens).
  bool trySet(std::string_view role, std::int64_t value);
  /// True if the instruction has the role.
  bool has(std::string_view role) const { return desc_->fieldIndex(role) >= 0; }
  /// Values in `desc().fields` order.
  const std::vector<std::int64_t>& values() const { return values_; }
  /// Sets the value of field number `index` (range-checked).
  void setIndex(std::size_t index, std::int64_t value);

  /// The engine whose queue runs this instruction (the class's, or the "engine" field).
  Engine engine() const;

  /// Encodes into `desc().encoding.bytes()` little-endian bytes.
  std::vector<std::uint8_t> encode() const;
  /// Encodes into `out`, which must hold `desc().encoding.bytes()` bytes.
  void encodeInto(std::uint8_t* out) const;
  /// Decodes one instruction word of `isa.instructionBytes()` bytes. Throws Error (with
  /// `where`, e.g. "instruction 12") for an unknown opcode or set reserved bits.
  static Instruction decode(const IsaDescription& isa, const std::uint8_t* bytes,
                            const std::string& file = "<memory>", const std::string& where = "");

  bool operator==(const Instruction& o) const { return desc_ == o.desc_ && values_ == o.values_; }
  bool operator!=(const Instruction& o) const { return !(*this == o); }

private:
  const InstrDesc* desc_;
  std::vector<std::int64_t> values_;
};

/// Reads bits [lsb, lsb+width) (width <= 64) of a little-endian byte array.
std::uint64_t extractBits(const std::uint8_t* bytes, unsigned lsb, unsigned width);
/// Writes bits [lsb, lsb+width) of a little-endian byte array (other bits unchanged).
void depositBits(std::uint8_t* bytes, unsigned lsb, unsigned width, std::uint64_t value);

} // namespace ember::isa
