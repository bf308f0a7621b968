// The ELF container: round trips, readelf, and malformed binaries (each checks the message).
#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "test_util.h"

#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <functional>
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

/// Offset of section header `index` (1 = .ember.text ... 6 = .ember.debug, 7 = .shstrtab).
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
  ASSERT_EQ(secs.size(), 7u);
  EXPECT_EQ(secs[0].name, ".ember.text");
  EXPECT_EQ(secs[0].type, elf::kShtText);
  EXPECT_EQ(secs[0].entsize, 16u);
  EXPECT_EQ(secs[0].size, 14u * 16);
}

TEST(Binary, OtherDescriptionIsRejected) {
  Binary b = assemble(readText(sourcePath("tests/isa/data/large_lut2.s")), large(), "l.s");
  auto img = serializeElf(b, large());
  EXPECT_ISA_ERROR(parseElf(img.data(), img.size(), reference(), "l.elf"), "section .ember.isa",
                   "built for ISA \"ember-v1-large\"");
  EXPECT_EQ(parseElf(img.data(), img.size(), large(), "l.elf"), b);
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
      {"FormatVersion", [](V& d) { put(d, 48, 4, 7); }, "ELF header", "container format version"},
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
      {"MissingText", [](V& d) { d[secOffset(d, 7) + 1] = 'X'; }, "",
       "missing section .ember.text"},
      {"DuplicateSection", [](V& d) { put(d, shdr(d, 6), 4, get(d, shdr(d, 1), 4)); },
       "section .ember.text", "appears twice"},
      {"WrongSectionType", [](V& d) { put(d, shdr(d, 3) + 4, 4, 1); }, "section .ember.io",
       "has type 0x1"},
      {"NameOutsideStrtab", [](V& d) { put(d, shdr(d, 2), 4, 5000); }, "section header 2",
       "name offset outside .shstrtab"},
      {"StrtabNotStrtab", [](V& d) { put(d, shdr(d, 7) + 4, 4, 1); }, "section header 7",
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
      {"IsaSectionVersion", [](V& d) { put(d, secOffset(d, 5), 4, 2); }, "section .ember.isa",
       "container format version 2"},
  };
  return c;
}

class MalformedBinary : public ::testing::TestWithParam<std::size_t> {};

TEST_P(MalformedBinary, RejectedWithSectionAndReason) {
  const BadElf& c = badElves()[GetParam()];
  auto img = image();
  c.patch(img);
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
