// The package container: header, entry table, entries (docs/package.md).
//   0  "EMBERPKG"            8 bytes
//   8  version              u32
//  12  entry count          u32
//  16  description SHA-256  32 bytes
//  48  CRC-32C of bytes 0..47 and the entry table
//  52  0                    u32
//  56  entries, 80 bytes each: name (56 bytes, NUL-padded), offset u64, size u64,
//      CRC-32C of the data u32, 0 u32
//  then the data of every entry, in table order, each starting at a multiple of 8.
#include "ember/isa/package.h"

#include "ember/isa/error.h"

#include <cstring>
#include <set>

namespace ember::isa {

namespace {

constexpr char kMagic[8] = {'E', 'M', 'B', 'E', 'R', 'P', 'K', 'G'};
constexpr std::size_t kHeader = 56, kEntry = 80, kNameField = 56;

void put32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    b[at + std::size_t(i)] = std::uint8_t(v >> (8 * i));
}
void put64(std::vector<std::uint8_t>& b, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i)
    b[at + std::size_t(i)] = std::uint8_t(v >> (8 * i));
}
std::uint32_t get32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= std::uint32_t(p[i]) << (8 * i);
  return v;
}
std::uint64_t get64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= std::uint64_t(p[i]) << (8 * i);
  return v;
}
std::uint64_t align8(std::uint64_t v) {
  return (v + 7) & ~std::uint64_t(7);
}

std::uint32_t tableCrc(const std::uint8_t* d, std::size_t count) {
  return crc32c(d + kHeader, count * kEntry, crc32c(d, 48));
}

} // namespace

const PackageEntry* Package::find(const std::string& name) const {
  for (const PackageEntry& e : entries)
    if (e.name == name)
      return &e;
  return nullptr;
}

std::vector<std::uint8_t> serializePackage(const Package& p) {
  if (p.entries.size() > kPackageMaxEntries)
    throw Error("<package>", "", "more than " + std::to_string(kPackageMaxEntries) + " entries");
  std::set<std::string> names;
  for (const PackageEntry& e : p.entries) {
    if (e.name.empty() || e.name.size() > kPackageMaxName || e.name.find('\0') != std::string::npos)
      throw Error("<package>", "entry '" + e.name + "'",
                  "a name is 1 to " + std::to_string(kPackageMaxName) + " bytes without NUL");
    if (!names.insert(e.name).second)
      throw Error("<package>", "entry '" + e.name + "'", "the name is used twice");
  }
  const std::size_t n = p.entries.size();
  std::uint64_t at = align8(kHeader + n * kEntry);
  std::vector<std::uint8_t> out(at, 0);
  std::memcpy(out.data(), kMagic, 8);
  put32(out, 8, kPackageVersion);
  put32(out, 12, std::uint32_t(n));
  std::memcpy(out.data() + 16, p.isa_hash.data(), 32);
  for (std::size_t i = 0; i < n; ++i) {
    const PackageEntry& e = p.entries[i];
    const std::size_t h = kHeader + i * kEntry;
    std::memcpy(out.data() + h, e.name.data(), e.name.size());
    put64(out, h + kNameField, at);
    put64(out, h + kNameField + 8, e.data.size());
    put32(out, h + kNameField + 16, crc32c(e.data.data(), e.data.size()));
    at = align8(at + e.data.size());
  }
  put32(out, 48, tableCrc(out.data(), n));
  for (const PackageEntry& e : p.entries) {
    out.insert(out.end(), e.data.begin(), e.data.end());
    out.resize(align8(out.size()), 0);
  }
  return out;
}

bool isPackageImage(const std::uint8_t* data, std::size_t size) {
  return size >= 8 && std::memcmp(data, kMagic, 8) == 0;
}

Package parsePackage(const std::uint8_t* d, std::size_t size, const std::string& file) {
  if (!isPackageImage(d, size))
    throw Error(file, "header", "not an Ember package (no EMBERPKG magic)");
  if (size < kHeader)
    throw Error(file, "header", "truncated: " + std::to_string(size) + " bytes");
  const std::uint32_t version = get32(d + 8);
  if (version != kPackageVersion)
    throw Error(file, "header",
                "package format version " + std::to_string(version) + ", this Ember reads " +
                    std::to_string(kPackageVersion) + ": rebuild the package with this emberc");
  const std::uint32_t n = get32(d + 12);
  if (n > kPackageMaxEntries || kHeader + std::uint64_t(n) * kEntry > size)
    throw Error(file, "header", std::to_string(n) + " entries do not fit in the file");
  if (get32(d + 48) != tableCrc(d, n) || get32(d + 52) != 0)
    throw Error(file, "header", "the header or entry table is corrupt (CRC-32C mismatch)");
  Package p;
  std::memcpy(p.isa_hash.data(), d + 16, 32);
  std::uint64_t end = align8(kHeader + std::uint64_t(n) * kEntry);
  std::set<std::string> names;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint8_t* h = d + kHeader + std::size_t(i) * kEntry;
    const std::string where = "entry " + std::to_string(i);
    const void* nul = std::memchr(h, 0, kNameField);
    if (!nul || nul == h)
      throw Error(file, where, "the name is empty or not NUL-terminated");
    PackageEntry e;
    e.name.assign(reinterpret_cast<const char*>(h),
                  std::size_t(static_cast<const std::uint8_t*>(nul) - h));
    const std::uint64_t off = get64(h + kNameField), len = get64(h + kNameField + 8);
    if (!names.insert(e.name).second)
      throw Error(file, where, "the name '" + e.name + "' is used twice");
    if (off != end || off > size || len > size - off)
      throw Error(file, "entry '" + e.name + "'",
                  "its data (offset " + std::to_string(off) + ", " + std::to_string(len) +
                      " bytes) is not where the previous entry ends, or outside the file");
    if (crc32c(d + off, std::size_t(len)) != get32(h + kNameField + 16))
      throw Error(file, "entry '" + e.name + "'", "corrupt (CRC-32C mismatch)");
    e.data.assign(d + off, d + off + len);
    end = align8(off + len);
    p.entries.push_back(std::move(e));
  }
  if (end != size)
    throw Error(file, "end",
                "the file is " + std::to_string(size) + " bytes, its entries end at " +
                    std::to_string(end) + " (truncated, or bytes appended)");
  return p;
}

void resealPackage(std::vector<std::uint8_t>& b) {
  if (!isPackageImage(b.data(), b.size()) || b.size() < kHeader)
    return;
  const std::uint32_t n = get32(b.data() + 12);
  if (n > kPackageMaxEntries || kHeader + std::uint64_t(n) * kEntry > b.size())
    return;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::size_t h = kHeader + std::size_t(i) * kEntry;
    const std::uint64_t off = get64(b.data() + h + kNameField),
                        len = get64(b.data() + h + kNameField + 8);
    if (off <= b.size() && len <= b.size() - off)
      put32(b, h + kNameField + 16, crc32c(b.data() + off, std::size_t(len)));
  }
  put32(b, 48, tableCrc(b.data(), n));
}

} // namespace ember::isa
