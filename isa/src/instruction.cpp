// Generic, description-driven instruction encoding and decoding.
#include "ember/isa/instruction.h"
#include "ember/isa/roles.h"

#include "ember/isa/error.h"

#include <algorithm>
#include <cstring>

namespace ember::isa {

std::uint64_t extractBits(const std::uint8_t* bytes, unsigned lsb, unsigned width) {
  std::uint64_t v = 0;
  for (unsigned got = 0; got < width;) { // a byte (or the part of one in range) a step
    const unsigned b = lsb + got, off = b % 8, take = std::min(8 - off, width - got);
    v |= std::uint64_t((bytes[b / 8] >> off) & ((1u << take) - 1)) << got;
    got += take;
  }
  return v;
}

void depositBits(std::uint8_t* bytes, unsigned lsb, unsigned width, std::uint64_t value) {
  for (unsigned put = 0; put < width;) {
    const unsigned b = lsb + put, off = b % 8, take = std::min(8 - off, width - put);
    const unsigned mask = ((1u << take) - 1) << off;
    const unsigned bits = unsigned((value >> put) & ((1u << take) - 1)) << off;
    bytes[b / 8] = std::uint8_t((bytes[b / 8] & ~mask) | bits);
    put += take;
  }
}

Instruction::Instruction(const InstrDesc& desc) : desc_(&desc), values_(desc.fields.size(), 0) {}

std::int64_t Instruction::get(std::string_view role) const {
  int i = desc_->fieldIndex(role);
  if (i < 0)
    throw Error("<instruction>", desc_->name, "has no field \"" + std::string(role) + "\"");
  return values_[std::size_t(i)];
}

void Instruction::setIndex(std::size_t index, std::int64_t value) {
  if (index >= values_.size())
    throw Error("<instruction>", desc_->name, "field index out of range");
  const FieldDesc& f = desc_->fields[index];
  if (value < f.minValue() || value > f.maxValue())
    throw Error("<instruction>", desc_->name,
                "value " + std::to_string(value) + " of field \"" + f.role + "\" is outside [" +
                    std::to_string(f.minValue()) + ", " + std::to_string(f.maxValue()) + "] (" +
                    std::to_string(f.bits.width) + (f.is_signed ? "-bit signed)" : "-bit)"));
  if (!f.names.empty() && !f.nameOf(value))
    throw Error("<instruction>", desc_->name,
                "value " + std::to_string(value) + " of field \"" + f.role +
                    "\" names no allowed choice");
  values_[index] = value;
}

void Instruction::set(std::string_view role, std::int64_t value) {
  int i = desc_->fieldIndex(role);
  if (i < 0)
    throw Error("<instruction>", desc_->name, "has no field \"" + std::string(role) + "\"");
  setIndex(std::size_t(i), value);
}

bool Instruction::trySet(std::string_view role, std::int64_t value) {
  int i = desc_->fieldIndex(role);
  if (i < 0)
    return false;
  setIndex(std::size_t(i), value);
  return true;
}

Engine Instruction::engine() const {
  int i = desc_->fieldIndex(role::kEngine);
  if (i >= 0 && desc_->fields[std::size_t(i)].kind == RoleKind::Enum) {
    const std::string* n = desc_->fields[std::size_t(i)].nameOf(values_[std::size_t(i)]);
    if (n && *n == "load")
      return Engine::Load;
    if (n && *n == "store")
      return Engine::Store;
    return Engine::Compute;
  }
  return desc_->cls->engine;
}

void Instruction::encodeInto(std::uint8_t* out) const {
  const EncodingDesc& e = desc_->encoding;
  std::memset(out, 0, e.bytes());
  depositBits(out, e.opcode.lsb, e.opcode.width, desc_->opcode);
  for (std::size_t i = 0; i < values_.size(); ++i) {
    const FieldDesc& f = desc_->fields[i];
    depositBits(out, f.bits.lsb, f.bits.width, static_cast<std::uint64_t>(values_[i]));
  }
}

std::vector<std::uint8_t> Instruction::encode() const {
  std::vector<std::uint8_t> out(desc_->encoding.bytes());
  encodeInto(out.data());
  return out;
}

Instruction Instruction::decode(const IsaDescription& isa, const std::uint8_t* bytes,
                                const std::string& file, const std::string& where) {
  const EncodingDesc& e = isa.encoding();
  std::uint64_t opcode = extractBits(bytes, e.opcode.lsb, e.opcode.width);
  const InstrDesc* d = isa.findOpcode(opcode);
  if (!d)
    throw Error(file, where, "unknown opcode " + std::to_string(opcode));
  Instruction insn(*d);
  // The bits the opcode and the fields cover: on the stack for a word of up to 64 bytes
  // (every instruction word read, in the reader's check and at each fetch).
  std::uint8_t small[64] = {};
  std::vector<std::uint8_t> large(e.bytes() > sizeof(small) ? e.bytes() : 0, 0);
  std::uint8_t* used = large.empty() ? small : large.data();
  depositBits(used, e.opcode.lsb, e.opcode.width, ~std::uint64_t(0));
  for (std::size_t i = 0; i < d->fields.size(); ++i) {
    const FieldDesc& f = d->fields[i];
    std::uint64_t raw = extractBits(bytes, f.bits.lsb, f.bits.width);
    depositBits(used, f.bits.lsb, f.bits.width, ~std::uint64_t(0));
    std::int64_t v;
    if (f.is_signed && f.bits.width < 64 && ((raw >> (f.bits.width - 1)) & 1u))
      v = static_cast<std::int64_t>(raw | (~std::uint64_t(0) << f.bits.width));
    else
      v = static_cast<std::int64_t>(raw);
    if (!f.names.empty() && !f.nameOf(v))
      throw Error(file, where,
                  d->name + ": field \"" + f.role + "\" has value " + std::to_string(v) +
                      ", which names no allowed choice");
    if (v < f.minValue() || v > f.maxValue())
      throw Error(file, where, d->name + ": field \"" + f.role + "\" out of range");
    insn.values_[i] = v;
  }
  for (unsigned b = 0; b < e.bytes(); ++b)
    if (bytes[b] & ~used[b])
      throw Error(
          file, where,
          d->name + ": reserved bits set in byte " + std::to_string(b) + " (mask 0x" +
              [](unsigned x) {
                const char* h = "0123456789abcdef";
                return std::string{h[(x >> 4) & 15], h[x & 15]};
              }(bytes[b] & ~used[b] & 0xffu) +
              ")");
  return insn;
}

} // namespace ember::isa
