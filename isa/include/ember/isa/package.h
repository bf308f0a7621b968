#pragma once
/// \file
/// The package container (docs/package.md): one file holding named entries (a manifest,
/// NPU binaries, host segments), each with a CRC-32C, behind a header that names the
/// NPU description the package was built for. A model the NPU cannot run whole is
/// shipped as one package; this layer knows the container only, not what the entries
/// mean (compiler/driver does), so the runtime and ember-objdump can read it too.

#include "ember/isa/hash.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember::isa {

/// The package format version this build writes and reads.
constexpr std::uint32_t kPackageVersion = 1;
/// The most entries a package may have.
constexpr std::uint32_t kPackageMaxEntries = 4096;
/// Longest entry name (bytes, without the terminating NUL).
constexpr std::size_t kPackageMaxName = 55;

/// One named entry.
struct PackageEntry {
  std::string name;
  std::vector<std::uint8_t> data;
};

/// A package: the description's hash and the entries, in order.
struct Package {
  Sha256Digest isa_hash{};
  std::vector<PackageEntry> entries;
  /// The entry called `name`, or nullptr.
  const PackageEntry* find(const std::string& name) const;
};

/// The file's bytes (deterministic: equal packages give equal bytes). Throws Error for
/// names that are empty, too long, or given twice, or too many entries.
std::vector<std::uint8_t> serializePackage(const Package& p);
/// True if `data` starts with the package magic ("EMBERPKG").
bool isPackageImage(const std::uint8_t* data, std::size_t size);
/// Parses a package, checking the magic, the version (a package of another version is
/// refused as stale), the header's and every entry's CRC-32C, and that every entry lies
/// inside the file without overlapping another. `file` names it in errors.
Package parsePackage(const std::uint8_t* data, std::size_t size, const std::string& file);
/// Recomputes every CRC-32C of an image whose header and entry table are in bounds
/// (entries outside the file are left alone), so that fuzzing reaches what lies behind
/// the checksums. Does nothing to an image too short to have a table.
void resealPackage(std::vector<std::uint8_t>& image);

} // namespace ember::isa
