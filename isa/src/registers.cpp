// Register look-ups by name (registers.h).
#include "ember/isa/registers.h"

#include "ember/isa/error.h"

#include <string>

namespace ember::isa {

namespace {
const RegisterDesc& find(const IsaDescription& isa, std::string_view name, std::string_view user) {
  for (const auto& r : isa.registers())
    if (r.name == name)
      return r;
  throw Error(isa.file(), "/registers",
              std::string(user) + " needs a register named " + std::string(name));
}
} // namespace

std::uint32_t registerOffset(const IsaDescription& isa, std::string_view name,
                             std::string_view user) {
  return find(isa, name, user).offset;
}

BitRange registerField(const IsaDescription& isa, std::string_view reg, std::string_view field,
                       std::string_view user) {
  for (const auto& f : find(isa, reg, user).fields)
    if (f.name == field)
      return f.bits;
  throw Error(isa.file(), "/registers",
              std::string(user) + " needs field " + std::string(field) + " of register " +
                  std::string(reg));
}

std::uint32_t registerFieldMask(const IsaDescription& isa, std::string_view reg,
                                std::string_view field, std::string_view user) {
  const BitRange b = registerField(isa, reg, field, user);
  return std::uint32_t(((std::uint64_t(1) << b.width) - 1) << b.lsb);
}

std::uint32_t isaHashWord(const IsaDescription& isa, int w) {
  const auto& h = isa.hash();
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = v << 8 | h[std::size_t(4 * w + i)];
  return v;
}

std::uint64_t isaHash64(const IsaDescription& isa) {
  return std::uint64_t(isaHashWord(isa, 1)) << 32 | isaHashWord(isa, 0);
}

} // namespace ember::isa
