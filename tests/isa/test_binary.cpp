// The ELF container: round trips, readelf, and malformed binaries (each checks the message).
#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "test_util.h"

#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <functional>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace ember::isa::test {
namespace {

Binary convTile() {
  static const Binary b =
      assemble(readText(sourcePath("tests/isa/data/conv_tile.s")), reference(), "conv_tile.s");
  return b;
}

std::vector<std::uint8_t> image() {
  return serializeElf(convTile(), reference());
}

std::uint64_t get(const std::vector<std::uint8_t>& d, std::size_t off, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v |= std::uint64_t(d[off + std::size_t(i)]) << (8 * i);
  return v;
}

void put(std::vector<std::uint8_t>& d, std::size_t off, int n, std::uint64_t v) {
  for (int i = 0; i < n; ++i)
    d[off + std::size_t(i)] = std::uint8_t(v >> (8 * i));
}

/// Offset of section header `index` (1 = .ember.text ... 6 = .ember.debug, 7 = .ember.digest,
/// 8 = .shstrtab).
std::size_t shdr(const std::vector<std::uint8_t>& d, int index) {
  return std::size_t(get(d, 40, 8)) + 64 * std::size_t(index);
}
std::size_t secOffset(const std::vector<std::uint8_t>& d, int index) {
  return std::size_t(get(d, shdr(d, index) + 24, 8));
}

TEST(Binary, RoundTripsThroughElf) {
  Binary b = convTile();
  EXPECT_EQ(b.code.size(), 14u);
  EXPECT_EQ(b.io.size(), 2u);
  EXPECT_EQ(b.debug.size(), 3u);
  ASSERT_NE(b.nodeOf(4), nullptr);
  EXPECT_EQ(*b.nodeOf(4), "conv1");
  EXPECT_EQ(b.nodeOf(13), nullptr);
  auto img = image();
  Binary back = parseElf(img.data(), img.size(), reference(), "mem");
  EXPECT_EQ(back, b);
  EXPECT_EQ(serializeElf(back, reference()), img);
  std::string path = tempPath("conv.elf");
  writeElf(path, b, reference());
  EXPECT_EQ(readElf(path, reference()), b);
  std::remove(path.c_str());
}

TEST(Binary, WriterLeavesNoTemporaryFiles) {
  std::string dir = std::string(EMBER_TEST_TMP) + "/atomic_" + std::to_string(::getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  writeElf(dir + "/a.elf", convTile(), reference());
  writeElf(dir + "/a.elf", convTile(), reference()); // replace in place
  int files = 0;
  DIR* d = ::opendir(dir.c_str());
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.')
      ++files;
  ::closedir(d);
  EXPECT_EQ(files, 1);
  EXPECT_ISA_ERROR(writeElf("/nonexistent-dir/x.elf", convTile(), reference()), "",
                   "cannot create a temporary file");
  ASSERT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
}

TEST(Binary, ReadelfListsTheSections) {
  std::string readelf = EMBER_READELF;
  if (readelf.empty() || readelf.find("NOTFOUND") != std::string::npos)
    GTEST_SKIP() << "no readelf";
  std::string path = tempPath("readelf.elf");
  writeElf(path, convTile(), reference());
  FILE* p = ::popen((readelf + " -S -W " + path).c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p))
    out += buf;
  EXPECT_EQ(::pclose(p), 0) << out;
  for (const char* s : {".ember.text", ".ember.const", ".ember.io", ".ember.memmap", ".ember.isa",
                        ".ember.debug", ".shstrtab", "LOUSER+0xeb01"})
    EXPECT_NE(out.find(s), std::string::npos) << s << "\n" << out;
  std::remove(path.c_str());
}

TEST(Binary, ListSections) {
  auto img = image();
  auto secs = listSections(img.data(), img.size());
  ASSERT_EQ(secs.size(), 8u);
  EXPECT_EQ(secs[0].name, ".ember.text");
  EXPECT_EQ(secs[0].type, elf::kShtText);
  EXPECT_EQ(secs[0].entsize, 16u);
  EXPECT_EQ(secs[0].size, 14u * 16);
  EXPECT_EQ(secs[6].name, ".ember.digest");
  EXPECT_EQ(secs[6].type, elf::kShtDigest);
  EXPECT_FALSE(secs[6].has_digest); // the table does not list itself
  for (std::size_t i : {0, 1, 2, 3, 4, 5, 7}) {
    EXPECT_TRUE(secs[i].digestOk()) << secs[i].name;
    EXPECT_EQ(secs[i].digest, crc32c(img.data() + secs[i].offset, secs[i].size));
  }
  img[secs[1].offset + 7] ^= 0x10; // a constant byte
  secs = listSections(img.data(), img.size());
  EXPECT_TRUE(secs[1].has_digest);
  EXPECT_FALSE(secs[1].digestOk());
  EXPECT_TRUE(secs[0].digestOk());
}

TEST(Binary, Crc32cKnownValues) {
  // Check values of CRC-32C (RFC 3720 appendix B.4 and the "123456789" check value).
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  std::vector<std::uint8_t> zeros(32, 0), ones(32, 0xff);
  EXPECT_EQ(crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(crc32c("6789", 4, crc32c("12345", 5)), 0xE3069283u); // continued
  // Every length and alignment (the host may take 8 bytes a step) against the bitwise
  // definition.
  std::vector<std::uint8_t> data(301);
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = std::uint8_t(i * 131 + 7);
  for (std::size_t off : {0, 1, 3})
    for (std::size_t n = 0; n + off <= data.size(); n += 37) {
      std::uint32_t want = 0xFFFFFFFFu;
      for (std::size_t i = off; i < off + n; ++i) {
        want ^= data[i];
        for (int k = 0; k < 8; ++k)
          want = (want >> 1) ^ (0x82F63B78u & (0u - (want & 1u)));
      }
      EXPECT_EQ(crc32c(data.data() + off, n), ~want) << "offset " << off << ", " << n << " bytes";
    }
  // Long buffers, which the host may take as three streams joined at the end.
  std::vector<std::uint8_t> big(200003);
  for (std::size_t i = 0; i < big.size(); ++i)
    big[i] = std::uint8_t(i * 2654435761u >> 13);
  std::uint32_t want = 0xFFFFFFFFu;
  std::vector<std::uint32_t> prefix(big.size() + 1); // the bitwise CRC of every prefix
  for (std::size_t i = 0; i < big.size(); ++i) {
    prefix[i] = ~want;
    want ^= big[i];
    for (int k = 0; k < 8; ++k)
      want = (want >> 1) ^ (0x82F63B78u & (0u - (want & 1u)));
  }
  prefix[big.size()] = ~want;
  for (std::size_t n : {65535, 65536, 65537, 99999, 196608, 200003})
    EXPECT_EQ(crc32c(big.data(), n), prefix[n]) << n << " bytes";
  EXPECT_EQ(crc32c(big.data() + 70000, big.size() - 70000, crc32c(big.data(), 70000)),
            prefix[big.size()]); // continued
}

TEST(Binary, ImageSizeWithoutSerializing) {
  Binary b = convTile();
  EXPECT_EQ(elfImageSize(b, reference()), serializeElf(b, reference()).size());
  ASSERT_GE(b.constants.size(), 5u);
  b.constants.resize(b.constants.size() - 5); // sections move by their 16-byte alignment
  EXPECT_EQ(elfImageSize(b, reference()), serializeElf(b, reference()).size());
}

/// parseElf must refuse `img`; returns the error's what().
std::string refusal(const std::vector<std::uint8_t>& img) {
  try {
    parseElf(img.data(), img.size(), reference(), "x.elf");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Binary, ElfFileReadsWhatReadElfReads) {
  const Binary b = convTile();
  const std::string path = tempPath("conv_file.elf");
  writeElf(path, b, reference());
  const ElfFile f(path, reference());
  Binary tables = b;
  tables.code.clear();
  tables.constants.clear();
  EXPECT_EQ(f.tables(), tables); // everything but the code and the constants
  EXPECT_EQ(f.instructions(), b.code.size());
  ASSERT_EQ(f.constantsSize(), b.constants.size());
  EXPECT_EQ(std::vector<std::uint8_t>(f.constants(), f.constants() + f.constantsSize()),
            b.constants);
  EXPECT_EQ(f.binary(reference()), b);
  // Its image is the writer's, the file's own bytes, written over whatever was there.
  const std::vector<std::uint8_t> img = image();
  ASSERT_EQ(f.imageSize(), img.size());
  std::vector<std::uint8_t> out(img.size(), 0xA5);
  f.writeImage(reference(), out.data());
  EXPECT_EQ(out, img);
  std::remove(path.c_str());
  EXPECT_ISA_ERROR((void)ElfFile(path, reference()), "", "cannot open");
}

TEST(Binary, ElfFileMovesACanonicalImage) {
  const std::vector<std::uint8_t> img = image();
  const std::string path = tempPath("conv_move.elf");
  writeFileAtomic(path, img.data(), img.size());
  ElfFile f(path, reference());
  EXPECT_TRUE(f.canonical(reference())); // writeElf's bytes
  LargeBuffer dst(std::uint64_t(1) << 20);
  ASSERT_TRUE(f.moveImage(reference(), dst.data() + 65536));
  EXPECT_EQ(std::vector<std::uint8_t>(dst.data() + 65536, dst.data() + 65536 + img.size()), img);
  EXPECT_EQ(f.constants(), nullptr); // the bytes went; the tables stay
  EXPECT_EQ(f.tables().io.size(), 2u);
  EXPECT_EQ(f.imageSize(), img.size());
  std::vector<std::uint8_t> out(img.size());
  EXPECT_THROW(f.writeImage(reference(), out.data()), std::logic_error);
  EXPECT_THROW((void)f.binary(reference()), std::logic_error);
  // Another layout of the same binary (EI_OSABI 0, digests resealed): read alike, not
  // moved; its image is the writer's.
  auto other = img;
  other[7] = 0;
  resealElf(other);
  writeFileAtomic(path, other.data(), other.size());
  ElfFile g(path, reference());
  EXPECT_FALSE(g.canonical(reference()));
  EXPECT_FALSE(g.moveImage(reference(), dst.data() + 65536));
  g.writeImage(reference(), out.data());
  EXPECT_EQ(out, img);
  std::remove(path.c_str());
}

TEST(Binary, ElfFileChecksAsReadElfDoes) {
  // An instruction word with a reserved bit set, resealed: decoded to be checked, though
  // not kept.
  auto img = image();
  const std::string path = tempPath("conv_bad.elf");
  bool found = false;
  for (std::size_t byte = 0; byte < 16 && !found; ++byte)
    for (int bit = 0; bit < 8 && !found; ++bit) {
      auto bad = img;
      bad[secOffset(bad, 1) + 16 * 3 + byte] ^= std::uint8_t(1u << bit);
      resealElf(bad);
      const std::string why = refusal(bad);
      if (why.find("reserved bits") == std::string::npos)
        continue;
      found = true;
      writeFileAtomic(path, bad.data(), bad.size());
      EXPECT_ISA_ERROR((void)ElfFile(path, reference()), "section .ember.text: instruction 3",
                       "reserved bits set");
    }
  EXPECT_TRUE(found) << "instruction 3 of conv_tile has no reserved bit";
  // A debug range past the code (counted, not decoded into the tables): .ember.debug is
  // u32 count, then per range u32 first, u32 count, the node name.
  auto late = img;
  const std::size_t range = secOffset(late, 6) + 4;
  put(late, range + 4, 4, 100);
  resealElf(late);
  writeFileAtomic(path, late.data(), late.size());
  EXPECT_ISA_ERROR((void)ElfFile(path, reference()), "section .ember.debug: range 0",
                   "past the 14 instructions");
  // A flipped constant byte (the constants are not copied out, yet checked).
  img[secOffset(img, 2) + 3] ^= 0x10;
  writeFileAtomic(path, img.data(), img.size());
  EXPECT_ISA_ERROR((void)ElfFile(path, reference()), "section .ember.const", "CRC-32C");
  EXPECT_ISA_ERROR(readElf(path, reference()), "section .ember.const", "CRC-32C");
  // A const region one byte too small for the constants, resealed: the tables' check
  // sees the size of constants it never copied. .ember.memmap: u32 count, then per
  // region u16 name length, the name, u8 kind, u64 offset, u64 size; "const" is first.
  img = image();
  const std::size_t region = secOffset(img, 4) + 4;
  ASSERT_EQ(get(img, region, 2), 5u);
  const std::size_t size = region + 2 + 5 + 1 + 8;
  ASSERT_EQ(get(img, size, 8), 0x1000u);
  put(img, size, 8, convTile().constants.size() - 1);
  resealElf(img);
  writeFileAtomic(path, img.data(), img.size());
  const std::string where = "section .ember.memmap: region \"const\"";
  EXPECT_ISA_ERROR((void)ElfFile(path, reference()), where, "cannot hold");
  EXPECT_ISA_ERROR(readElf(path, reference()), where, "cannot hold");
  std::remove(path.c_str());
}

TEST(Binary, SerializeIntoWritesEveryByte) {
  const Binary b = convTile();
  const std::vector<std::uint8_t> img = image();
  std::vector<std::uint8_t> out(img.size(), 0xFF); // dirty memory, as device DRAM may be
  serializeElfInto(b, reference(), out.data(), out.size());
  EXPECT_EQ(out, img);
  EXPECT_ISA_ERROR(serializeElfInto(b, reference(), out.data(), out.size() - 1), "ELF image",
                   "bytes, not");
}

TEST(Binary, EveryFlippedByteIsRefused) {
  // Format 1 had no digest: 162 of 162 flipped constant bytes went unnoticed. Now every
  // byte of the file is covered: a section's CRC, the header CRC, the table's own CRC or
  // the zero padding.
  const auto img = image();
  std::uint32_t rng = 12345;
  std::size_t refused = 0, digest_named = 0;
  for (std::size_t i = 0; i < img.size(); ++i) {
    rng = rng * 1664525u + 1013904223u;
    auto bad = img;
    bad[i] ^= std::uint8_t(1 + (rng >> 24) % 255);
    std::string why = refusal(bad);
    EXPECT_FALSE(why.empty()) << "byte " << i << " flipped went unnoticed";
    refused += !why.empty();
    digest_named += why.find("CRC-32C") != std::string::npos;
  }
  EXPECT_EQ(refused, img.size());
  EXPECT_GT(digest_named, img.size() / 2);
  // Every single-bit error in the constants, with the section named.
  const std::size_t c0 = secOffset(img, 2), cn = std::size_t(get(img, shdr(img, 2) + 32, 8));
  ASSERT_GT(cn, 2000u);
  for (std::size_t i = c0; i < c0 + cn; ++i)
    for (int bit = 0; bit < 8; ++bit) {
      auto bad = img;
      bad[i] ^= std::uint8_t(1u << bit);
      std::string why = refusal(bad);
      ASSERT_NE(why.find("section .ember.const: contents have CRC-32C"), std::string::npos)
          << "byte " << i << " bit " << bit << ": " << why;
    }
}

TEST(Binary, RenamedSectionsAreRefused) {
  const auto img = image();
  const std::size_t str = secOffset(img, 8);
  for (int idx = 1; idx <= 8; ++idx) {
    std::size_t name = str + std::size_t(get(img, shdr(img, idx), 4));
    for (bool reseal : {false, true}) {
      auto bad = img;
      bad[name + 1] = 'X';    // ".ember.io" -> ".Xmber.io"
      if (reseal && idx != 7) // (without its name the digest table cannot be found)
        resealElf(bad);
      std::string why = refusal(bad);
      if (idx == 8)
        EXPECT_NE(why.find("string table is named \".Xhstrtab\""), std::string::npos) << why;
      else
        EXPECT_NE(why.find(": unknown section name (container format 2 has .ember.text"),
                  std::string::npos)
            << why;
      EXPECT_EQ(why.rfind("x.elf: section", 0), 0u) << why;
    }
  }
}

TEST(Binary, DroppedSectionsAreRefused) {
  const auto img = image();
  const char* names[] = {".ember.text", ".ember.const", ".ember.io",    ".ember.memmap",
                         ".ember.isa",  ".ember.debug", ".ember.digest"};
  for (int idx = 1; idx <= 7; ++idx) {
    auto bad = img;
    // Remove section header `idx` (the table is at the end of the file).
    const std::size_t at = shdr(bad, idx);
    bad.erase(bad.begin() + std::ptrdiff_t(at), bad.begin() + std::ptrdiff_t(at + 64));
    put(bad, 60, 2, get(bad, 60, 2) - 1);
    put(bad, 62, 2, get(bad, 62, 2) - 1);
    std::string why = refusal(bad);
    EXPECT_EQ(why, std::string("x.elf: missing section ") + names[idx - 1]) << why;
  }
}

TEST(Binary, OldFormatVersionIsRefused) {
  auto img = image();
  put(img, 48, 4, 1); // e_flags of a format 1 binary
  EXPECT_EQ(refusal(img),
            "x.elf: ELF header: e_flags: container format version 1, this tool reads 2: rebuild "
            "with emberc");
  EXPECT_ISA_ERROR(listSections(img.data(), img.size(), "x.elf"), "ELF header",
                   "container format version 1, this tool reads 2");
}

TEST(Binary, NonZeroPaddingIsRefused) {
  auto img = image();
  // .ember.isa holds 4 + 2 + 8 + 32 = 46 bytes; the next section starts 16-byte aligned.
  const std::size_t pad = secOffset(img, 5) + 46;
  ASSERT_EQ(get(img, shdr(img, 5) + 32, 8), 46u);
  img[pad] = 1;
  resealElf(img);
  EXPECT_ISA_ERROR(parseElf(img.data(), img.size(), reference(), "x.elf"),
                   "file offset " + std::to_string(pad),
                   "byte 0x1 outside the headers and every section (padding must be zero)");
}

TEST(Binary, FreestandingCheckerAgrees) {
  // firmware/src/ember_digest.c, the firmware-side check, builds freestanding
  // (no libc) and accepts exactly what the reader accepts on a sample of corruptions;
  // built as for any core (-U__x86_64__: the bitwise CRC) it gives the same verdicts as
  // the x86-64 host build's SSE4.2 CRC.
  std::string cc = EMBER_CC;
  if (cc.empty() || cc.find("NOTFOUND") != std::string::npos)
    GTEST_SKIP() << "no C compiler";
  const std::string src = sourcePath("firmware/src/ember_digest.c");
  const std::string drv = tempPath("digest_driver.c");
  const std::string code =
      "#include <stdio.h>\n#include <stdint.h>\n"
      "int ember_check_digests(const uint8_t*, uint32_t);\n"
      "static uint8_t buf[1 << 20];\n"
      "int main(int c, char** v) { FILE* f = fopen(v[1], \"rb\"); if (!f) return 99;\n"
      "  size_t n = fread(buf, 1, sizeof buf, f); fclose(f);\n"
      "  return -ember_check_digests(buf, (uint32_t)n); }\n";
  writeFileAtomic(drv, code.data(), code.size());
  std::string exes[2];
  for (int portable = 0; portable < 2; ++portable) {
    const std::string name = portable ? "digest_check_portable" : "digest_check";
    const std::string obj = tempPath(name + ".o");
    exes[portable] = tempPath(name);
    ASSERT_EQ(std::system((cc + " -std=c99 -ffreestanding -nostdlib -Wall -Wextra -Werror " +
                           (portable ? "-U__x86_64__ " : "") + "-I" +
                           sourcePath("firmware/include") + " -c " + src + " -o " + obj)
                              .c_str()),
              0);
    ASSERT_EQ(
        std::system((cc + " -std=c99 -O1 " + drv + " " + obj + " -o " + exes[portable]).c_str()),
        0);
  }
  const auto img = image();
  const std::string elf = tempPath("digest_check.elf");
  auto status = [&](const std::vector<std::uint8_t>& d) {
    writeFileAtomic(elf, d.data(), d.size());
    int rc[2];
    for (int k = 0; k < 2; ++k) {
      const int r = std::system((exes[k] + " " + elf).c_str());
      rc[k] = WIFEXITED(r) ? WEXITSTATUS(r) : -1;
    }
    EXPECT_EQ(rc[0], rc[1]) << "the host build and the portable build disagree";
    return rc[0];
  };
  EXPECT_EQ(status(img), 0);
  std::uint32_t rng = 7;
  for (int t = 0; t < 120; ++t) {
    rng = rng * 1664525u + 1013904223u;
    auto bad = img;
    const std::size_t at = (rng >> 8) % bad.size();
    bad[at] ^= std::uint8_t(1 + (rng >> 3) % 255);
    bool padding = refusal(bad).find("padding") != std::string::npos;
    if (!padding) { // (padding is the reader's check, not a digest)
      EXPECT_NE(status(bad), 0) << "byte " << at;
    }
  }
  // 200 KB of constants, which the host build takes as three streams.
  Binary big = convTile();
  big.constants.resize(200003);
  for (std::size_t i = 0; i < big.constants.size(); ++i)
    big.constants[i] = std::uint8_t(i * 2654435761u >> 11);
  for (auto& r : big.memmap)
    if (r.kind == RegionKind::Const)
      r = {r.name, r.kind, 0x100000, big.constants.size()};
  auto bigImg = serializeElf(big, reference());
  EXPECT_EQ(status(bigImg), 0);
  for (std::size_t at :
       {std::size_t(0), std::size_t(66666), std::size_t(133340), std::size_t(200002)}) {
    auto bad = bigImg;
    bad[secOffset(bad, 2) + at] ^= 0x40;
    EXPECT_NE(status(bad), 0) << "constant byte " << at;
  }
}

TEST(Binary, SealedImageRoundTrips) {
  auto img = image();
  auto again = img;
  resealElf(again);
  EXPECT_EQ(again, img); // the writer's table is what resealing computes
}

TEST(Binary, OtherDescriptionIsRejected) {
  Binary b = assemble(readText(sourcePath("tests/isa/data/large_lut2.s")), large(), "l.s");
  auto img = serializeElf(b, large());
  EXPECT_ISA_ERROR(parseElf(img.data(), img.size(), reference(), "l.elf"), "section .ember.isa",
                   "built for ISA \"ember-v1-large\"");
  EXPECT_EQ(parseElf(img.data(), img.size(), large(), "l.elf"), b);
}

/// conv_tile with its input an RGB image packed by the host: 4 pixels of 3 channels per
/// 16-lane row, every other pixel, 3 pixels of left padding, 5 packed pixels per line.
Binary packedInput() {
  Binary b = convTile();
  IoEntry& x = b.io.at(0);
  x.layout = Layout::Packed;
  x.shape = {1, 3, 8, 8};
  x.packing = {4, 2, 3, 5};
  x.size_bytes = 8 * 5 * 16; // N x H x width x lanes
  return b;
}

TEST(Binary, PackedInputRoundTripsThroughElfAndText) {
  const Binary b = packedInput();
  const auto img = serializeElf(b, reference());
  const Binary back = parseElf(img.data(), img.size(), reference(), "mem");
  EXPECT_EQ(back, b);
  EXPECT_EQ(back.io.at(0).packing, (IoPacking{4, 2, 3, 5}));
  // The text form (ember-objdump / the assembler's .io directive) says pack=4:2:3:5.
  const std::string text = disassemble(b, reference());
  EXPECT_NE(text.find("layout=packed shape=1x3x8x8"), std::string::npos) << text;
  EXPECT_NE(text.find("pack=4:2:3:5"), std::string::npos) << text;
  EXPECT_EQ(assemble(text, reference(), "packed.s"), b);
}

TEST(Binary, PackedLayoutIsCheckedAgainstShapeAndLanes) {
  Binary b = packedInput();
  b.io[0].size_bytes = 8 * 5 * 16 - 1;
  EXPECT_ISA_ERROR(serializeElf(b, reference()), "section .ember.io: entry \"x\"",
                   "smaller than the 640");
  b = packedInput();
  b.io[0].packing.pixels = 6; // 6 x 3 channels > 16 lanes
  EXPECT_ISA_ERROR(serializeElf(b, reference()), "section .ember.io: entry \"x\"",
                   "pixels x C <= 16 lanes");
  b = packedInput();
  b.io[1].layout = Layout::Packed;
  b.io[1].packing = {1, 1, 0, 4};
  EXPECT_ISA_ERROR(serializeElf(b, reference()), "section .ember.io: entry \"y\"",
                   "layout packed is for inputs only");
  b = convTile();
  b.io[0].packing = {4, 2, 3, 5}; // a packing on an nchwc entry
  EXPECT_ISA_ERROR(serializeElf(b, reference()), "section .ember.io: entry \"x\"",
                   "packing given for layout nchwc");
}

/// conv_tile with its input the windows of a 3 x 3 stride-2 convolution the host wrote
/// (isa::Layout::Patches): 3 x 9 = 27 patch channels in 2 blocks of 16 lanes, 4 x 4
/// outputs.
Binary patchesInput() {
  Binary b = convTile();
  IoEntry& x = b.io.at(0);
  x.layout = Layout::Patches;
  x.shape = {1, 3, 8, 8};
  x.patches = {3, 3, 2, 2, 1, 1, 1, 1, 4, 4};
  x.size_bytes = 2 * 4 * 4 * 16; // N x blocks x out_h x out_w x lanes
  return b;
}

TEST(Binary, PatchesInputRoundTripsThroughElfAndText) {
  const Binary b = patchesInput();
  const auto img = serializeElf(b, reference());
  const Binary back = parseElf(img.data(), img.size(), reference(), "mem");
  EXPECT_EQ(back, b);
  EXPECT_EQ(back.io.at(0).patches, (IoPatches{3, 3, 2, 2, 1, 1, 1, 1, 4, 4}));
  const std::string text = disassemble(b, reference());
  EXPECT_NE(text.find("layout=patches shape=1x3x8x8"), std::string::npos) << text;
  EXPECT_NE(text.find("patch=3:3:2:2:1:1:1:1:4:4"), std::string::npos) << text;
  EXPECT_EQ(assemble(text, reference(), "patches.s"), b);
  try { // one field short
    assemble(std::string(text).replace(text.find("patch=3:3:"), 10, "patch=3:"), reference(),
             "bad.s");
    ADD_FAILURE() << "a patch= of 9 fields must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad patch \"3:2:2:1:1:1:1:4:4\""), std::string::npos)
        << e.what();
  }
}

TEST(Binary, PatchesLayoutIsCheckedAgainstShapeAndLanes) {
  Binary b = patchesInput();
  b.io[0].size_bytes = 2 * 4 * 4 * 16 - 1;
  EXPECT_ISA_ERROR(serializeElf(b, reference()), "section .ember.io: entry \"x\"",
                   "smaller than the 512");
  b = patchesInput();
  b.io[0].patches.stride_w = 0;
  EXPECT_ISA_ERROR(serializeElf(b, reference()), "section .ember.io: entry \"x\"",
                   "needs every one >= 1");
  b = patchesInput();
  b.io[1].layout = Layout::Patches;
  b.io[1].patches = {1, 1, 1, 1, 1, 1, 0, 0, 4, 4};
  EXPECT_ISA_ERROR(serializeElf(b, reference()), "section .ember.io: entry \"y\"",
                   "layout patches is for rank-4 N,C,H,W inputs only");
  b = convTile();
  b.io[0].patches = {3, 3, 2, 2, 1, 1, 1, 1, 4, 4}; // patches on an nchwc entry
  EXPECT_ISA_ERROR(serializeElf(b, reference()), "section .ember.io: entry \"x\"",
                   "patches given for layout nchwc");
}

TEST(Binary, ValidateRejectsBadTablesOnWrite) {
  Binary b = convTile();
  b.io[0].shape = {1, 16, 9, 8}; // needs more bytes than its size
  EXPECT_ISA_ERROR(serializeElf(b, reference()), "section .ember.io: entry \"x\"",
                   "smaller than the 1152");
  b = convTile();
  b.memmap.push_back({"in2", RegionKind::Input, 0x10200, 0x400});
  EXPECT_ISA_ERROR(serializeElf(b, reference()), "section .ember.memmap: region \"in2\"",
                   "overlaps region \"in\"");
  b = convTile();
  b.debug.push_back({2, 1, "late"});
  EXPECT_ISA_ERROR(serializeElf(b, reference()), "section .ember.debug: range 3", "out of order");
  b = convTile();
  b.memmap[0].size_bytes = 16;
  EXPECT_ISA_ERROR(serializeElf(b, reference()), "section .ember.memmap: region \"const\"",
                   "cannot hold the 2496 bytes");
}

/// A malformed-binary case: patch a valid image, expect where + reason.
struct BadElf {
  const char* name;
  std::function<void(std::vector<std::uint8_t>&)> patch;
  const char* where;
  const char* reason;
  bool reseal = true; ///< Recompute the digests after patching.
};

const std::vector<BadElf>& badElves() {
  using V = std::vector<std::uint8_t>;
  static const std::vector<BadElf> c = {
      {"Empty", [](V& d) { d.clear(); }, "ELF header", "truncated: 0 bytes"},
      {"TruncatedHeader", [](V& d) { d.resize(40); }, "ELF header", "truncated: 40 bytes"},
      {"TruncatedSectionTable", [](V& d) { d.resize(d.size() - 10); }, "ELF header",
       "section header table"},
      {"BadMagic", [](V& d) { d[1] = 'X'; }, "ELF header", "bad magic"},
      {"Elf32", [](V& d) { d[4] = 1; }, "ELF header", "not ELF64"},
      {"BigEndian", [](V& d) { d[5] = 2; }, "ELF header", "not little-endian"},
      {"WrongMachine", [](V& d) { put(d, 18, 2, 0xf3); }, "ELF header",
       "e_machine 0xf3 is not the Ember NPU"},
      {"NotExec", [](V& d) { put(d, 16, 2, 1); }, "ELF header", "is not ET_EXEC"},
      {"FormatVersion", [](V& d) { put(d, 48, 4, 7); }, "ELF header",
       "e_flags: container format version 7, this tool reads 2: rebuild with emberc"},
      {"NoSections", [](V& d) { put(d, 60, 2, 0); }, "ELF header", "no section headers"},
      {"ShstrndxOutOfRange", [](V& d) { put(d, 62, 2, 99); }, "ELF header",
       "e_shstrndx 99 out of range"},
      {"SectionOutsideFile", [](V& d) { put(d, shdr(d, 3) + 24, 8, d.size() + 100); },
       "section header 3", "lies outside the"},
      {"SectionSizeOutsideFile", [](V& d) { put(d, shdr(d, 2) + 32, 8, UINT64_MAX - 8); },
       "section header 2", "lies outside the"},
      {"OverlappingSections", [](V& d) { put(d, shdr(d, 3) + 24, 8, secOffset(d, 1)); },
       "section .ember.io", "overlaps .ember.text"},
      {"SectionOverElfHeader", [](V& d) { put(d, shdr(d, 1) + 24, 8, 8); }, "section .ember.text",
       "overlaps ELF header"},
      {"WrongIsaHash", [](V& d) { d[secOffset(d, 5) + 4 + 2 + 8 + 5] ^= 1; }, "section .ember.isa",
       "built for ISA \"ember-v1\" (sha256"},
      {"IoOutsideMemory", [](V& d) { put(d, secOffset(d, 3) + 55, 8, 0x30000); },
       "section .ember.io: entry \"x\"", "is not inside any input region"},
      {"IoOutsideDram", [](V& d) { put(d, secOffset(d, 3) + 55, 8, UINT64_MAX - 4); },
       "section .ember.io: entry \"x\"", "is not inside any input region"},
      {"RegionOutsideDram", [](V& d) { put(d, secOffset(d, 4) + 12, 8, 0xfffff800ull); },
       "section .ember.memmap: region \"const\"", "outside the 4294967296-byte DRAM window"},
      {"TextNotMultiple", [](V& d) { put(d, shdr(d, 1) + 32, 8, 14 * 16 - 1); },
       "section .ember.text", "not a multiple of the 16-byte instruction"},
      {"TextEntsize", [](V& d) { put(d, shdr(d, 1) + 56, 8, 8); }, "section .ember.text",
       "sh_entsize 8, expected 16"},
      {"UnknownSection", [](V& d) { d[secOffset(d, 8) + 2] = 'X'; }, "section .Xmber.text",
       "unknown section name"},
      {"DigestAlgorithm",
       [](V& d) {
         // Patched with a consistent table CRC (resealing would restore the algorithm).
         const std::size_t off = secOffset(d, 7), n = std::size_t(get(d, shdr(d, 7) + 32, 8));
         put(d, off, 4, 2);
         put(d, off + n - 4, 4, crc32c(d.data() + off, n - 4));
       },
       "section .ember.digest", "digest algorithm 2, this tool knows 1 (CRC-32C)", false},
      {"DigestTableCorrupted", [](V& d) { d[secOffset(d, 7) + 20] ^= 1; }, "section .ember.digest",
       "the table's own CRC-32C is ...: the digest table is corrupted", false},
      {"DigestSize", [](V& d) { put(d, shdr(d, 7) + 32, 8, get(d, shdr(d, 7) + 32, 8) - 32); },
       "section .ember.digest", "does not hold 7 entries"},
      {"DuplicateSection", [](V& d) { put(d, shdr(d, 6), 4, get(d, shdr(d, 1), 4)); },
       "section .ember.text", "appears twice"},
      {"WrongSectionType", [](V& d) { put(d, shdr(d, 3) + 4, 4, 1); }, "section .ember.io",
       "has type 0x1"},
      {"NameOutsideStrtab", [](V& d) { put(d, shdr(d, 2), 4, 5000); }, "section header 2",
       "name offset outside .shstrtab"},
      {"StrtabNotStrtab", [](V& d) { put(d, shdr(d, 8) + 4, 4, 1); }, "section header 8",
       "not a string table"},
      {"UnknownOpcode", [](V& d) { std::memset(&d[secOffset(d, 1)], 0, 16); },
       "section .ember.text: instruction 0", "unknown opcode 0"},
      {"ReservedBits", [](V& d) { d[secOffset(d, 1) + 13 * 16 + 15] = 0x80; },
       "section .ember.text: instruction 13", "reserved bits set"},
      {"TruncatedTable", [](V& d) { put(d, shdr(d, 3) + 32, 8, get(d, shdr(d, 3) + 32, 8) - 1); },
       "section .ember.io", "truncated: size needs 8 bytes"},
      {"TrailingBytes", [](V& d) { put(d, secOffset(d, 4), 4, 2); }, "section .ember.memmap",
       "unexpected bytes after the table"},
      {"HugeCount", [](V& d) { put(d, secOffset(d, 3), 4, 0xffffffffu); }, "section .ember.io",
       "cannot fit in the"},
      {"DebugPastEnd", [](V& d) { put(d, secOffset(d, 6) + 8, 4, 100); },
       "section .ember.debug: range 0", "past the 14 instructions"},
      {"BadDtype", [](V& d) { d[secOffset(d, 3) + 4 + 2 + 1 + 1] = 9; }, "section .ember.io",
       "bad dtype 9"},
      {"IsaSectionVersion", [](V& d) { put(d, secOffset(d, 5), 4, 1); }, "section .ember.isa",
       "container format version 1, this tool reads 2: rebuild with emberc"},
  };
  return c;
}

class MalformedBinary : public ::testing::TestWithParam<std::size_t> {};

TEST_P(MalformedBinary, RejectedWithSectionAndReason) {
  const BadElf& c = badElves()[GetParam()];
  auto img = image();
  c.patch(img);
  // Recompute the digests so that the check under test, not the digest, refuses the
  // patched image (a patch that breaks the structure cannot be resealed).
  try {
    if (c.reseal)
      resealElf(img);
  } catch (const Error&) {
  }
  std::string reason = c.reason;
  // "A... B" means both parts must appear (for messages with a variable middle).
  std::string first = reason.substr(0, reason.find("..."));
  EXPECT_ISA_ERROR(parseElf(img.data(), img.size(), reference(), "bad.elf"), c.where, first);
  if (reason.find("...") != std::string::npos) {
    try {
      parseElf(img.data(), img.size(), reference(), "bad.elf");
    } catch (const Error& e) {
      EXPECT_NE(e.reason().find(reason.substr(reason.find("...") + 3)), std::string::npos)
          << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MalformedBinary,
                         ::testing::Range<std::size_t>(0, badElves().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& i) {
                           return std::string(badElves()[i.param].name);
                         });

} // namespace
} // namespace ember::isa::test
