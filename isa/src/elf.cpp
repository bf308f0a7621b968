// The ELF64 container: writer and a reader that never trusts its input.
#include "ember/isa/binary.h"
#include "ember/isa/error.h"
#include "ember/isa/hash.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>

namespace ember::isa {

namespace {

constexpr std::size_t kEhdrSize = 64;
constexpr std::size_t kShdrSize = 64;
constexpr std::uint32_t kShtStrtab = 3;
constexpr std::uint64_t kShfAlloc = 0x2, kShfExec = 0x4;
constexpr std::size_t kMaxSections = 256;
constexpr std::size_t kMaxStr = 65535;

struct SectionDef {
  const char* name;
  std::uint32_t type;
  bool required;
};
// Format 2 requires every section (the writer always emits them, empty or not), so a
// section whose name was damaged is reported rather than silently missing.
const SectionDef kSections[] = {
    {".ember.text", elf::kShtText, true},    {".ember.const", elf::kShtConst, true},
    {".ember.io", elf::kShtIo, true},        {".ember.memmap", elf::kShtMemmap, true},
    {".ember.isa", elf::kShtIsa, true},      {".ember.debug", elf::kShtDebug, true},
    {".ember.digest", elf::kShtDigest, true}};
constexpr std::size_t kText = 0, kConst = 1, kIo = 2, kMemmap = 3, kIsa = 4, kDebug = 5,
                      kDigest = 6;
const char* const kStrtabName = ".shstrtab";

// .ember.digest: u32 algorithm, u32 count, u32 header CRC, u32 zero, then `count` entries
// of {char name[16] (NUL-padded), u64 size, u32 CRC-32C, u32 zero}, then u32 CRC-32C of
// everything before it in the section.
constexpr std::size_t kDigestHead = 16, kDigestEntry = 32, kDigestName = 16;
std::size_t digestBytes(std::size_t entries) {
  return kDigestHead + entries * kDigestEntry + 4;
}

// ------------------------------------------------------------------ little-endian writer

class Writer {
public:
  void u8(std::uint8_t v) { buf.push_back(v); }
  void u16(std::uint16_t v) { le(v, 2); }
  void u32(std::uint32_t v) { le(v, 4); }
  void u64(std::uint64_t v) { le(v, 8); }
  void i32(std::int32_t v) { le(std::uint32_t(v), 4); }
  void i64(std::int64_t v) { le(std::uint64_t(v), 8); }
  void f64(double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, 8);
    u64(b);
  }
  void str(const std::string& s, const char* what) {
    if (s.size() > kMaxStr)
      throw Error("<writer>", what, "string longer than 65535 bytes");
    u16(std::uint16_t(s.size()));
    buf.insert(buf.end(), s.begin(), s.end());
  }
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    buf.insert(buf.end(), b, b + n);
  }
  void align(std::size_t a) {
    while (buf.size() % a)
      buf.push_back(0);
  }
  std::vector<std::uint8_t> buf;

private:
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      buf.push_back(std::uint8_t(v >> (8 * i)));
  }
};

// ------------------------------------------------------------------ bounded reader

class Cursor {
public:
  Cursor(const std::uint8_t* p, std::size_t n, std::string file, std::string where)
      : p_(p), n_(n), file_(std::move(file)), where_(std::move(where)) {}

  std::uint8_t u8(const char* what) { return std::uint8_t(le(1, what)); }
  std::uint16_t u16(const char* what) { return std::uint16_t(le(2, what)); }
  std::uint32_t u32(const char* what) { return std::uint32_t(le(4, what)); }
  std::uint64_t u64(const char* what) { return le(8, what); }
  std::int32_t i32(const char* what) { return std::int32_t(std::uint32_t(le(4, what))); }
  std::int64_t i64(const char* what) { return std::int64_t(le(8, what)); }
  double f64(const char* what) {
    std::uint64_t b = le(8, what);
    double v;
    std::memcpy(&v, &b, 8);
    return v;
  }
  std::string str(const char* what) {
    std::size_t len = u16(what);
    need(len, what);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return s;
  }
  void raw(void* out, std::size_t len, const char* what) {
    need(len, what);
    std::memcpy(out, p_ + pos_, len);
    pos_ += len;
  }
  /// Entries of at least `min_bytes` each must fit in what is left.
  std::uint32_t count(std::size_t min_bytes, const char* what) {
    std::uint32_t c = u32(what);
    if (std::uint64_t(c) * min_bytes > n_ - pos_)
      fail(std::string(what) + " " + std::to_string(c) + " cannot fit in the " +
           std::to_string(n_ - pos_) + " bytes left");
    return c;
  }
  void end() {
    if (pos_ != n_)
      fail(std::to_string(n_ - pos_) + " unexpected bytes after the table at offset " +
           std::to_string(pos_));
  }
  [[noreturn]] void fail(const std::string& reason) const { throw Error(file_, where_, reason); }

private:
  void need(std::size_t len, const char* what) const {
    if (len > n_ - pos_)
      fail(std::string("truncated: ") + what + " needs " + std::to_string(len) +
           " bytes at offset " + std::to_string(pos_) + ", " + std::to_string(n_ - pos_) + " left");
  }
  std::uint64_t le(int n, const char* what) {
    need(std::size_t(n), what);
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= std::uint64_t(p_[pos_ + std::size_t(i)]) << (8 * i);
    pos_ += std::size_t(n);
    return v;
  }
  const std::uint8_t* p_;
  std::size_t n_, pos_ = 0;
  std::string file_, where_;
};

// ------------------------------------------------------------------ section payloads

std::vector<std::uint8_t> encodeIsa(const Binary& b) {
  Writer w;
  w.u32(elf::kFormatVersion);
  w.str(b.isa_name, "isa name");
  w.bytes(b.isa_hash.data(), b.isa_hash.size());
  return w.buf;
}

std::vector<std::uint8_t> encodeIo(const Binary& b) {
  Writer w;
  w.u32(std::uint32_t(b.io.size()));
  for (const auto& e : b.io) {
    w.str(e.name, "io name");
    w.u8(std::uint8_t(e.dir));
    w.u8(std::uint8_t(e.dtype));
    w.u8(std::uint8_t(e.layout));
    w.u8(std::uint8_t(e.shape.size()));
    for (auto d : e.shape)
      w.i64(d);
    w.f64(e.scale);
    w.i32(e.zero_point);
    w.u64(e.dram_offset);
    w.u64(e.size_bytes);
    if (e.layout == Layout::Packed) {
      w.u16(e.packing.pixels);
      w.u16(e.packing.stride);
      w.u16(e.packing.pad_left);
      w.u32(e.packing.width);
    }
    if (e.layout == Layout::Patches) {
      const IoPatches& p = e.patches;
      for (std::uint16_t v : {p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.dilation_h,
                              p.dilation_w, p.pad_top, p.pad_left})
        w.u16(v);
      w.u32(p.out_h);
      w.u32(p.out_w);
    }
  }
  return w.buf;
}

std::vector<std::uint8_t> encodeMemmap(const Binary& b) {
  Writer w;
  w.u32(std::uint32_t(b.memmap.size()));
  for (const auto& r : b.memmap) {
    w.str(r.name, "region name");
    w.u8(std::uint8_t(r.kind));
    w.u64(r.dram_offset);
    w.u64(r.size_bytes);
  }
  return w.buf;
}

std::vector<std::uint8_t> encodeDebug(const Binary& b) {
  Writer w;
  w.u32(std::uint32_t(b.debug.size()));
  for (const auto& r : b.debug) {
    w.u32(r.first);
    w.u32(r.count);
    w.str(r.node, "debug node");
  }
  return w.buf;
}

std::string versionMismatch(std::uint64_t v) {
  return "container format version " + std::to_string(v) + ", this tool reads " +
         std::to_string(elf::kFormatVersion) + ": rebuild with emberc";
}

void decodeIsa(Cursor c, Binary& b) {
  std::uint32_t v = c.u32("format version");
  if (v != elf::kFormatVersion)
    c.fail(versionMismatch(v));
  b.isa_name = c.str("ISA name");
  c.raw(b.isa_hash.data(), b.isa_hash.size(), "ISA hash");
  c.end();
}

void decodeIo(Cursor c, Binary& b) {
  std::uint32_t n = c.count(2 + 4 + 8 + 4 + 16, "entry count");
  for (std::uint32_t i = 0; i < n; ++i) {
    IoEntry e;
    e.name = c.str("name");
    std::uint8_t dir = c.u8("direction"), dt = c.u8("dtype"), lay = c.u8("layout");
    std::uint8_t rank = c.u8("rank");
    if (dir > 1)
      c.fail("entry " + std::to_string(i) + ": bad direction " + std::to_string(dir));
    if (dt > 3)
      c.fail("entry " + std::to_string(i) + ": bad dtype " + std::to_string(dt));
    if (lay > 3)
      c.fail("entry " + std::to_string(i) + ": bad layout " + std::to_string(lay));
    if (rank > 8)
      c.fail("entry " + std::to_string(i) + ": rank " + std::to_string(rank) + " > 8");
    e.dir = IoDir(dir);
    e.dtype = DType(dt);
    e.layout = Layout(lay);
    for (unsigned k = 0; k < rank; ++k)
      e.shape.push_back(c.i64("dimension"));
    e.scale = c.f64("scale");
    e.zero_point = c.i32("zero point");
    e.dram_offset = c.u64("DRAM offset");
    e.size_bytes = c.u64("size");
    if (e.layout == Layout::Packed) {
      e.packing.pixels = c.u16("packed pixels");
      e.packing.stride = c.u16("packing stride");
      e.packing.pad_left = c.u16("packing left padding");
      e.packing.width = c.u32("packed width");
    }
    if (e.layout == Layout::Patches) {
      IoPatches& p = e.patches;
      p.kernel_h = c.u16("patch kernel height");
      p.kernel_w = c.u16("patch kernel width");
      p.stride_h = c.u16("patch stride height");
      p.stride_w = c.u16("patch stride width");
      p.dilation_h = c.u16("patch dilation height");
      p.dilation_w = c.u16("patch dilation width");
      p.pad_top = c.u16("patch top padding");
      p.pad_left = c.u16("patch left padding");
      p.out_h = c.u32("patch output height");
      p.out_w = c.u32("patch output width");
    }
    b.io.push_back(std::move(e));
  }
  c.end();
}

void decodeMemmap(Cursor c, Binary& b) {
  std::uint32_t n = c.count(2 + 1 + 16, "region count");
  for (std::uint32_t i = 0; i < n; ++i) {
    MemRegion r;
    r.name = c.str("name");
    std::uint8_t k = c.u8("kind");
    if (k > 3)
      c.fail("region " + std::to_string(i) + ": bad kind " + std::to_string(k));
    r.kind = RegionKind(k);
    r.dram_offset = c.u64("DRAM offset");
    r.size_bytes = c.u64("size");
    b.memmap.push_back(std::move(r));
  }
  c.end();
}

void decodeDebug(Cursor c, Binary& b) {
  std::uint32_t n = c.count(4 + 4 + 2, "range count");
  for (std::uint32_t i = 0; i < n; ++i) {
    DebugRange r;
    r.first = c.u32("first instruction");
    r.count = c.u32("instruction count");
    r.node = c.str("node name");
    b.debug.push_back(std::move(r));
  }
  c.end();
}

// ------------------------------------------------------------------ ELF structure

struct Shdr {
  std::uint32_t name = 0, type = 0, link = 0, info = 0;
  std::uint64_t flags = 0, addr = 0, offset = 0, size = 0, addralign = 0, entsize = 0;
};

std::uint64_t rd(const std::uint8_t* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v |= std::uint64_t(p[i]) << (8 * i);
  return v;
}

/// A byte range of the file and what it holds.
struct Span {
  std::string name;
  std::uint64_t lo, hi;
};

struct Parsed {
  std::vector<Shdr> shdrs;
  std::vector<std::string> names;
  std::uint64_t shoff = 0, shstrndx = 0;
  std::vector<Span> spans; ///< ELF header, section header table, non-empty sections.
};

std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

void checkHeader(const std::uint8_t* d, std::size_t n, const std::string& file) {
  const std::string w = "ELF header";
  if (n < kEhdrSize)
    throw Error(file, w, "truncated: " + std::to_string(n) + " bytes, an ELF64 header needs 64");
  if (std::memcmp(d,
                  "\x7f"
                  "ELF",
                  4) != 0)
    throw Error(file, w, "bad magic (not an ELF file)");
  if (d[4] != 2)
    throw Error(file, w, "not ELF64 (EI_CLASS " + std::to_string(d[4]) + ")");
  if (d[5] != 1)
    throw Error(file, w, "not little-endian (EI_DATA " + std::to_string(d[5]) + ")");
  if (d[6] != 1)
    throw Error(file, w, "bad EI_VERSION " + std::to_string(d[6]));
  if (rd(d + 16, 2) != 2)
    throw Error(file, w, "e_type " + std::to_string(rd(d + 16, 2)) + " is not ET_EXEC");
  if (rd(d + 18, 2) != elf::kMachine)
    throw Error(file, w,
                "e_machine " + hex(rd(d + 18, 2)) + " is not the Ember NPU (" + hex(elf::kMachine) +
                    ")");
  if (rd(d + 20, 4) != 1)
    throw Error(file, w, "bad e_version");
  if (rd(d + 48, 4) != elf::kFormatVersion)
    throw Error(file, w, "e_flags: " + versionMismatch(rd(d + 48, 4)));
  if (rd(d + 52, 2) != kEhdrSize)
    throw Error(file, w, "e_ehsize is not 64");
  if (rd(d + 58, 2) != kShdrSize)
    throw Error(file, w, "e_shentsize is not 64");
}

Parsed parseStructure(const std::uint8_t* d, std::size_t n, const std::string& file) {
  checkHeader(d, n, file);
  const std::string w = "ELF header";
  std::uint64_t shoff = rd(d + 40, 8), shnum = rd(d + 60, 2), shstrndx = rd(d + 62, 2);
  if (shnum == 0)
    throw Error(file, w, "no section headers");
  if (shnum > kMaxSections)
    throw Error(file, w, "too many sections (" + std::to_string(shnum) + ")");
  if (shoff < kEhdrSize || shoff > n || shnum * kShdrSize > n - shoff)
    throw Error(file, w,
                "section header table [" + std::to_string(shoff) + ", +" +
                    std::to_string(shnum * kShdrSize) + ") lies outside the " + std::to_string(n) +
                    "-byte file");
  if (shstrndx >= shnum)
    throw Error(file, w, "e_shstrndx " + std::to_string(shstrndx) + " out of range");
  Parsed p;
  p.shoff = shoff;
  p.shstrndx = shstrndx;
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::uint8_t* s = d + shoff + i * kShdrSize;
    Shdr h;
    h.name = std::uint32_t(rd(s, 4));
    h.type = std::uint32_t(rd(s + 4, 4));
    h.flags = rd(s + 8, 8);
    h.addr = rd(s + 16, 8);
    h.offset = rd(s + 24, 8);
    h.size = rd(s + 32, 8);
    h.link = std::uint32_t(rd(s + 40, 4));
    h.info = std::uint32_t(rd(s + 44, 4));
    h.addralign = rd(s + 48, 8);
    h.entsize = rd(s + 56, 8);
    if (i != 0 && (h.offset > n || h.size > n - h.offset))
      throw Error(file, "section header " + std::to_string(i),
                  "data [" + std::to_string(h.offset) + ", +" + std::to_string(h.size) +
                      ") lies outside the " + std::to_string(n) + "-byte file");
    p.shdrs.push_back(h);
  }
  const Shdr& strtab = p.shdrs[shstrndx];
  if (strtab.type != kShtStrtab || shstrndx == 0)
    throw Error(file, "section header " + std::to_string(shstrndx),
                "e_shstrndx is not a string table");
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const Shdr& h = p.shdrs[i];
    if (i == 0) {
      p.names.emplace_back();
      continue;
    }
    if (h.name >= strtab.size)
      throw Error(file, "section header " + std::to_string(i), "name offset outside .shstrtab");
    const char* base = reinterpret_cast<const char*>(d + strtab.offset);
    const void* nul = std::memchr(base + h.name, 0, strtab.size - h.name);
    if (!nul)
      throw Error(file, "section header " + std::to_string(i), "name is not NUL-terminated");
    p.names.emplace_back(base + h.name, static_cast<const char*>(nul) - (base + h.name));
  }
  // No section may overlap the ELF header, the section header table or another section.
  std::vector<Span>& spans = p.spans;
  spans = {{"ELF header", 0, kEhdrSize},
           {"section header table", shoff, shoff + shnum * kShdrSize}};
  for (std::uint64_t i = 1; i < shnum; ++i) {
    const Shdr& h = p.shdrs[i];
    if (h.size == 0)
      continue;
    Span s{p.names[i].empty() ? "#" + std::to_string(i) : p.names[i], h.offset, h.offset + h.size};
    for (const auto& o : spans)
      if (s.lo < o.hi && o.lo < s.hi)
        throw Error(file, "section " + s.name,
                    "[" + std::to_string(s.lo) + ", " + std::to_string(s.hi) + ") overlaps " +
                        o.name + " [" + std::to_string(o.lo) + ", " + std::to_string(o.hi) + ")");
    spans.push_back(s);
  }
  return p;
}

/// CRC-32C of the ELF header followed by the section header table.
std::uint32_t headerCrc(const std::uint8_t* d, const Parsed& p) {
  return crc32c(d + p.shoff, p.shdrs.size() * kShdrSize, crc32c(d, kEhdrSize));
}

std::uint32_t sectionCrc(const std::uint8_t* d, const Shdr& h) {
  return crc32c(d + h.offset, std::size_t(h.size));
}

struct DigestEntry {
  std::string name;
  std::uint64_t size = 0;
  std::uint32_t crc = 0;
};
struct DigestTable {
  std::uint32_t header_crc = 0;
  std::vector<DigestEntry> entries;
};

/// Reads .ember.digest (checking its layout, algorithm and own CRC).
DigestTable readDigestTable(const std::uint8_t* d, const Shdr& h, const std::string& file) {
  Cursor c(d + h.offset, std::size_t(h.size), file, "section .ember.digest");
  std::uint32_t algo = c.u32("algorithm");
  if (algo != elf::kDigestCrc32c)
    c.fail("digest algorithm " + std::to_string(algo) + ", this tool knows 1 (CRC-32C)");
  std::uint32_t n = c.u32("entry count");
  DigestTable t;
  t.header_crc = c.u32("header CRC");
  c.u32("reserved");
  if (h.size != digestBytes(n))
    c.fail("size " + std::to_string(h.size) + " does not hold " + std::to_string(n) + " entries (" +
           std::to_string(digestBytes(n)) + " bytes)");
  std::uint32_t self = crc32c(d + h.offset, std::size_t(h.size) - 4);
  std::uint32_t stored = std::uint32_t(rd(d + h.offset + h.size - 4, 4));
  if (self != stored)
    c.fail("the table's own CRC-32C is " + hex(self) + ", it stores " + hex(stored) +
           ": the digest table is corrupted");
  for (std::uint32_t i = 0; i < n; ++i) {
    char name[kDigestName];
    c.raw(name, kDigestName, "entry name");
    DigestEntry e;
    e.name.assign(name, strnlen(name, kDigestName));
    e.size = c.u64("entry size");
    e.crc = c.u32("entry CRC");
    c.u32("reserved");
    t.entries.push_back(std::move(e));
  }
  return t;
}

/// Every byte of the file outside the headers and the sections is padding and must be 0,
/// so that no byte of a binary can change without the reader noticing.
void checkPadding(const std::uint8_t* d, std::size_t n, const Parsed& p, const std::string& file) {
  std::vector<Span> spans = p.spans;
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.lo < b.lo; });
  std::uint64_t at = 0;
  auto gap = [&](std::uint64_t lo, std::uint64_t hi) {
    for (std::uint64_t i = lo; i < hi; ++i)
      if (d[i] != 0)
        throw Error(file, "file offset " + std::to_string(i),
                    "byte " + hex(d[i]) +
                        " outside the headers and every section (padding must "
                        "be zero): the file is corrupted");
  };
  for (const Span& s : spans) {
    gap(at, s.lo);
    at = std::max(at, s.hi);
  }
  gap(at, n);
}

/// Checks every section (except .ember.digest itself) and the headers against the table;
/// returns each section's CRC-32C by header index (0 for the null section and the table).
std::vector<std::uint32_t> verifyDigests(const std::uint8_t* d, const Parsed& p, const Shdr& digest,
                                         const std::string& file) {
  DigestTable t = readDigestTable(d, digest, file);
  std::uint32_t hc = headerCrc(d, p);
  if (hc != t.header_crc)
    throw Error(file, "section headers",
                "the ELF header and section header table have CRC-32C " + hex(hc) +
                    ", .ember.digest says " + hex(t.header_crc) + ": the file is corrupted");
  std::size_t listed = 0;
  std::vector<std::uint32_t> crcs(p.shdrs.size(), 0);
  for (std::size_t i = 1; i < p.shdrs.size(); ++i) {
    if (&p.shdrs[i] == &digest)
      continue;
    ++listed;
    const std::string w = "section " + p.names[i];
    const DigestEntry* e = nullptr;
    for (const auto& x : t.entries)
      if (x.name == p.names[i])
        e = &x;
    if (!e)
      throw Error(file, w, "has no entry in .ember.digest");
    if (e->size != p.shdrs[i].size)
      throw Error(file, w,
                  "size " + std::to_string(p.shdrs[i].size) + ", .ember.digest says " +
                      std::to_string(e->size) + ": the file is corrupted");
    std::uint32_t crc = sectionCrc(d, p.shdrs[i]);
    if (crc != e->crc)
      throw Error(file, w,
                  "contents have CRC-32C " + hex(crc) + ", .ember.digest says " + hex(e->crc) +
                      ": the file is corrupted");
    crcs[i] = crc;
  }
  if (t.entries.size() != listed)
    throw Error(file, "section .ember.digest",
                std::to_string(t.entries.size()) + " entries for " + std::to_string(listed) +
                    " sections");
  return crcs;
}

/// Writes the digest table of the image `d` into section `digest` (sized for every other
/// section). `known` (by header index, may be shorter) holds CRCs already computed over
/// the same bytes, which are not computed again.
void sealDigests(std::uint8_t* d, const Parsed& p, const Shdr& digest,
                 const std::vector<std::optional<std::uint32_t>>& known = {}) {
  Writer w;
  w.u32(elf::kDigestCrc32c);
  w.u32(std::uint32_t(p.shdrs.size() - 2));
  w.u32(headerCrc(d, p));
  w.u32(0);
  for (std::size_t i = 1; i < p.shdrs.size(); ++i) {
    if (&p.shdrs[i] == &digest)
      continue;
    char name[kDigestName] = {};
    std::memcpy(name, p.names[i].data(), std::min(p.names[i].size(), kDigestName));
    w.bytes(name, kDigestName);
    w.u64(p.shdrs[i].size);
    w.u32(i < known.size() && known[i] ? *known[i] : sectionCrc(d, p.shdrs[i]));
    w.u32(0);
  }
  w.u32(crc32c(w.buf.data(), w.buf.size()));
  if (w.buf.size() != digest.size)
    throw Error("<image>", "section .ember.digest",
                "has " + std::to_string(digest.size) + " bytes, the table needs " +
                    std::to_string(w.buf.size()));
  std::memcpy(d + digest.offset, w.buf.data(), w.buf.size());
}

} // namespace

namespace {

/// The .ember.digest section of `p`, or nullptr.
const Shdr* findDigest(const Parsed& p) {
  for (std::size_t i = 1; i < p.shdrs.size(); ++i)
    if (p.names[i] == kSections[kDigest].name && p.shdrs[i].type == elf::kShtDigest)
      return &p.shdrs[i];
  return nullptr;
}

/// Maps every section to its kSections index; refuses unknown names, duplicates, wrong
/// types and missing sections.
std::vector<const Shdr*> identifySections(const Parsed& p, const std::string& file) {
  std::vector<const Shdr*> found(std::size(kSections), nullptr);
  for (std::size_t i = 1; i < p.shdrs.size(); ++i) {
    const std::string& name = p.names[i];
    if (i == p.shstrndx) {
      if (name != kStrtabName)
        throw Error(file, "section header " + std::to_string(i),
                    "the section name string table is named \"" + name + "\", not .shstrtab");
      continue;
    }
    std::size_t k = 0;
    while (k < std::size(kSections) && name != kSections[k].name)
      ++k;
    std::string w = "section " + (name.empty() ? "#" + std::to_string(i) : name);
    if (k == std::size(kSections)) {
      std::string known;
      for (const auto& def : kSections)
        known += std::string(known.empty() ? "" : ", ") + def.name;
      throw Error(file, w,
                  "unknown section name (container format " + std::to_string(elf::kFormatVersion) +
                      " has " + known + " and " + kStrtabName + ")");
    }
    if (found[k])
      throw Error(file, w, "appears twice");
    if (p.shdrs[i].type != kSections[k].type)
      throw Error(file, w,
                  "has type " + hex(p.shdrs[i].type) + ", expected " + hex(kSections[k].type));
    found[k] = &p.shdrs[i];
  }
  for (std::size_t k = 0; k < std::size(kSections); ++k)
    if (kSections[k].required && !found[k])
      throw Error(file, "", std::string("missing section ") + kSections[k].name);
  return found;
}

} // namespace

std::vector<SectionInfo> listSections(const std::uint8_t* data, std::size_t size,
                                      const std::string& file) {
  Parsed p = parseStructure(data, size, file);
  DigestTable table;
  const Shdr* digest = findDigest(p);
  bool readable = false;
  if (digest) {
    try {
      table = readDigestTable(data, *digest, file);
      readable = true;
    } catch (const Error&) {
      // Listed without digests; parseElf reports why.
    }
  }
  std::vector<SectionInfo> out;
  for (std::size_t i = 1; i < p.shdrs.size(); ++i) {
    const Shdr& h = p.shdrs[i];
    SectionInfo s{p.names[i], h.type, h.flags, h.offset, h.size, h.entsize};
    s.computed = sectionCrc(data, h);
    for (const auto& e : table.entries)
      if (readable && &h != digest && e.name == s.name) {
        s.has_digest = true;
        s.digest = e.crc;
      }
    out.push_back(std::move(s));
  }
  return out;
}

void resealElf(std::vector<std::uint8_t>& image) {
  Parsed p = parseStructure(image.data(), image.size(), "<image>");
  const Shdr* digest = findDigest(p);
  if (!digest)
    throw Error("<image>", "", "missing section .ember.digest");
  sealDigests(image.data(), p, *digest);
}

namespace {

/// Where .ember.text and .ember.const lie in a parsed image, and their CRC-32C digests.
struct PayloadSpans {
  std::uint64_t text_offset = 0, text_size = 0, const_offset = 0, const_size = 0;
  std::uint32_t text_crc = 0, const_crc = 0;
};

/// parseElf; the instructions (decoded) and the constants (copied) go into the binary
/// only when `whole`, else they stay where `spans` says, checked as parseElf checks them:
/// every instruction word decoded, none kept (ElfFile::tables()).
Binary parseImage(const std::uint8_t* data, std::size_t size, const IsaDescription& isa,
                  const std::string& file, bool whole, PayloadSpans& spans) {
  Parsed p = parseStructure(data, size, file);
  std::vector<const Shdr*> found = identifySections(p, file);
  const std::vector<std::uint32_t> crcs = verifyDigests(data, p, *found[kDigest], file);
  checkPadding(data, size, p, file);
  auto cursor = [&](std::size_t k) {
    const Shdr* h = found[k];
    return Cursor(data + h->offset, std::size_t(h->size), file,
                  std::string("section ") + kSections[k].name);
  };
  Binary b;
  decodeIsa(cursor(kIsa), b);
  if (b.isa_name != isa.name() || b.isa_hash != isa.hash())
    throw Error(file, "section .ember.isa",
                "built for ISA \"" + b.isa_name + "\" (sha256 " + toHex(b.isa_hash) +
                    "), but the description is \"" + isa.name() + "\" (sha256 " + isa.hashHex() +
                    ")");
  const Shdr& text = *found[kText];
  const std::size_t ib = isa.instructionBytes();
  if (text.size % ib != 0)
    throw Error(file, "section .ember.text",
                "size " + std::to_string(text.size) + " is not a multiple of the " +
                    std::to_string(ib) + "-byte instruction");
  if (text.entsize != ib)
    throw Error(file, "section .ember.text",
                "sh_entsize " + std::to_string(text.entsize) + ", expected " + std::to_string(ib));
  if (whole)
    b.code.reserve(std::size_t(text.size / ib));
  for (std::uint64_t i = 0; i < text.size / ib; ++i) {
    try {
      Instruction insn = Instruction::decode(isa, data + text.offset + i * ib, file, "");
      if (whole)
        b.code.push_back(std::move(insn));
    } catch (const Error& e) { // the place named only for the word refused
      throw Error(file, "section .ember.text: instruction " + std::to_string(i), e.reason());
    }
  }
  const Shdr& cst = *found[kConst];
  if (whole)
    b.constants.assign(data + cst.offset, data + cst.offset + cst.size);
  decodeIo(cursor(kIo), b);
  decodeMemmap(cursor(kMemmap), b);
  decodeDebug(cursor(kDebug), b);
  validateBinary(b, text.size / ib, cst.size, isa, file);
  auto index = [&](std::size_t k) { return std::size_t(found[k] - p.shdrs.data()); };
  spans = {text.offset, text.size, cst.offset, cst.size, crcs[index(kText)], crcs[index(kConst)]};
  return b;
}

/// A section's bytes for writeImage: `bytes` (null for .ember.text: encode the binary's
/// code), `size`, and their CRC-32C when it is already known; `skip`: leave its bytes
/// unwritten (its CRC must be known).
struct Payload {
  const std::uint8_t* bytes = nullptr;
  std::uint64_t size = 0;
  std::optional<std::uint32_t> crc;
  bool skip = false;
};

std::uint64_t alignUp(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

/// serializeElf's layout of sections of `sizes` (kSections order): each at the next
/// multiple of 16 after the ELF header or the section before it, the section name table
/// right after the last, then the section header table at a multiple of 8.
struct ImageLayout {
  std::uint64_t offset[std::size(kSections)] = {}, size[std::size(kSections)] = {};
  std::string shstr;
  std::uint64_t strtab = 0, shoff = 0, total = 0;
};

ImageLayout layoutOf(const std::uint64_t (&sizes)[std::size(kSections)]) {
  ImageLayout l;
  l.shstr.assign(1, '\0');
  std::uint64_t end = kEhdrSize;
  for (std::size_t k = 0; k < std::size(kSections); ++k) {
    l.offset[k] = alignUp(end, 16);
    l.size[k] = sizes[k];
    end = l.offset[k] + sizes[k];
    l.shstr += kSections[k].name;
    l.shstr += '\0';
  }
  l.strtab = end;
  l.shstr += kStrtabName;
  l.shstr += '\0';
  l.shoff = alignUp(l.strtab + l.shstr.size(), 8);
  // The headers: the null one, the sections, the name table.
  l.total = l.shoff + (std::size(kSections) + 2) * kShdrSize;
  return l;
}

/// The ELF header and the section header table of `l`.
std::vector<std::uint8_t> headerBytes(const ImageLayout& l) {
  Writer e;
  e.bytes("\x7f"
          "ELF",
          4);
  e.u8(2);   // ELFCLASS64
  e.u8(1);   // ELFDATA2LSB
  e.u8(1);   // EV_CURRENT
  e.u8(255); // ELFOSABI_STANDALONE
  e.align(16);
  e.u16(2); // ET_EXEC
  e.u16(elf::kMachine);
  e.u32(1); // e_version
  e.u64(0); // e_entry: instruction 0 of .ember.text
  e.u64(0); // e_phoff: no program headers
  e.u64(l.shoff);
  e.u32(elf::kFormatVersion); // e_flags
  e.u16(kEhdrSize);
  e.u16(0); // e_phentsize
  e.u16(0); // e_phnum
  e.u16(kShdrSize);
  e.u16(std::uint16_t(std::size(kSections) + 2));
  e.u16(std::uint16_t(std::size(kSections) + 1)); // e_shstrndx
  return e.buf;
}

std::vector<std::uint8_t> sectionHeaderBytes(const ImageLayout& l, std::size_t ib) {
  std::vector<Shdr> sh(1);
  std::uint32_t name = 1;
  for (std::size_t k = 0; k < std::size(kSections); ++k) {
    Shdr h;
    h.name = name;
    name += std::uint32_t(std::strlen(kSections[k].name) + 1);
    h.type = kSections[k].type;
    h.flags = k == 0 ? (kShfAlloc | kShfExec) : (k == 1 ? kShfAlloc : 0);
    h.offset = l.offset[k];
    h.size = l.size[k];
    h.addralign = 16;
    h.entsize = k == 0 ? ib : 0;
    sh.push_back(h);
  }
  Shdr strtab;
  strtab.name = name;
  strtab.type = kShtStrtab;
  strtab.offset = l.strtab;
  strtab.size = l.shstr.size();
  strtab.addralign = 1;
  sh.push_back(strtab);
  Writer w;
  for (const Shdr& h : sh) {
    w.u32(h.name);
    w.u32(h.type);
    w.u64(h.flags);
    w.u64(h.addr);
    w.u64(h.offset);
    w.u64(h.size);
    w.u32(h.link);
    w.u32(h.info);
    w.u64(h.addralign);
    w.u64(h.entsize);
  }
  return w.buf;
}

/// The tables of `bin` as section payloads (io, memmap, isa, debug).
struct TableSections {
  explicit TableSections(const Binary& bin)
      : io(encodeIo(bin)), memmap(encodeMemmap(bin)), isa(encodeIsa(bin)), debug(encodeDebug(bin)) {
  }
  std::vector<std::uint8_t> io, memmap, isa, debug;
};

ImageLayout layoutOf(const TableSections& t, std::uint64_t textBytes, std::uint64_t constBytes) {
  const std::uint64_t sizes[] = {textBytes,
                                 constBytes,
                                 t.io.size(),
                                 t.memmap.size(),
                                 t.isa.size(),
                                 t.debug.size(),
                                 digestBytes(std::size(kSections))};
  static_assert(std::size(sizes) == std::size(kSections));
  return layoutOf(sizes);
}

/// Writes serializeElf's image of `bin` with .ember.text `text` and .ember.const `cst` to
/// `out` (l.total bytes, every one written whatever it held), then seals the digests.
void writeImageBytes(const Binary& bin, const TableSections& t, const ImageLayout& l, Payload text,
                     Payload cst, const IsaDescription& isa, std::uint8_t* out) {
  const std::size_t ib = isa.instructionBytes();
  std::uint64_t at = 0;
  auto put = [&](std::uint64_t off, const void* p, std::uint64_t n) {
    std::memset(out + at, 0, off - at); // padding
    if (n)
      std::memcpy(out + off, p, n);
    at = off + n;
  };
  const std::vector<std::uint8_t> ehdr = headerBytes(l), shdrs = sectionHeaderBytes(l, ib);
  put(0, ehdr.data(), ehdr.size());
  const std::vector<std::uint8_t> digest(digestBytes(std::size(kSections)));
  const Payload payload[] = {text,
                             cst,
                             {t.io.data(), t.io.size(), {}},
                             {t.memmap.data(), t.memmap.size(), {}},
                             {t.isa.data(), t.isa.size(), {}},
                             {t.debug.data(), t.debug.size(), {}},
                             {digest.data(), digest.size(), {}}};
  static_assert(std::size(payload) == std::size(kSections));
  for (std::size_t k = 0; k < std::size(kSections); ++k) {
    if (payload[k].skip) {
      put(l.offset[k], nullptr, 0);
      at = l.offset[k] + payload[k].size;
      continue;
    }
    if (payload[k].bytes || payload[k].size == 0) {
      put(l.offset[k], payload[k].bytes, payload[k].size);
      continue;
    }
    put(l.offset[k], nullptr, 0); // the code, encoded in place
    for (std::size_t i = 0; i < bin.code.size(); ++i)
      bin.code[i].encodeInto(out + l.offset[k] + i * ib);
    at = l.offset[k] + payload[k].size;
  }
  put(l.strtab, l.shstr.data(), l.shstr.size());
  put(l.shoff, shdrs.data(), shdrs.size());
  const Parsed p = parseStructure(out, std::size_t(l.total), "<output>");
  std::vector<std::optional<std::uint32_t>> known(p.shdrs.size());
  known[1 + kText] = text.crc;
  known[1 + kConst] = cst.crc;
  sealDigests(out, p, p.shdrs[1 + kDigest], known);
}

} // namespace

Binary parseElf(const std::uint8_t* data, std::size_t size, const IsaDescription& isa,
                const std::string& file) {
  PayloadSpans spans;
  return parseImage(data, size, isa, file, true, spans);
}

std::vector<std::uint8_t> serializeElf(const Binary& bin, const IsaDescription& isa) {
  std::vector<std::uint8_t> image(elfImageSize(bin, isa));
  serializeElfInto(bin, isa, image.data(), image.size());
  return image;
}

void serializeElfInto(const Binary& bin, const IsaDescription& isa, std::uint8_t* out,
                      std::uint64_t size) {
  validateBinary(bin, isa, "<output>");
  const TableSections t(bin);
  const ImageLayout l = layoutOf(t, bin.code.size() * isa.instructionBytes(), bin.constants.size());
  if (size != l.total)
    throw Error("<output>", "ELF image",
                "the binary's image has " + std::to_string(l.total) + " bytes, not " +
                    std::to_string(size));
  writeImageBytes(bin, t, l, {nullptr, bin.code.size() * isa.instructionBytes(), {}},
                  {bin.constants.data(), bin.constants.size(), {}}, isa, out);
}

std::uint64_t elfImageSize(const Binary& bin, const IsaDescription& isa) {
  validateBinary(bin, isa, "<output>");
  return layoutOf(TableSections(bin), bin.code.size() * isa.instructionBytes(),
                  bin.constants.size())
      .total;
}

namespace {
/// The file at `path` in a LargeBuffer (huge pages: the reader checks every byte, and an
/// ElfFile's image is copied from it); read errors as isa::Error (readFileBytes's).
LargeBuffer readBinaryFile(const std::string& path) {
  try {
    return readFileBuffer(path);
  } catch (const ember::Error& e) {
    throw Error(path, "", e.reason());
  }
}
} // namespace

ElfFile::ElfFile(const std::string& path, const IsaDescription& isa) : file_(readBinaryFile(path)) {
  PayloadSpans spans;
  tables_ = parseImage(file_.data(), std::size_t(file_.size()), isa, path, false, spans);
  instructions_ = spans.text_size / isa.instructionBytes();
  text_offset_ = spans.text_offset;
  text_size_ = spans.text_size;
  const_offset_ = spans.const_offset;
  const_size_ = spans.const_size;
  text_crc_ = spans.text_crc;
  const_crc_ = spans.const_crc;
}

Binary ElfFile::binary(const IsaDescription& isa) const {
  if (!file_.data())
    throw std::logic_error("ElfFile::binary: the file's bytes were moved (moveImage)");
  Binary b = tables_;
  const std::size_t ib = isa.instructionBytes();
  b.code.reserve(std::size_t(instructions_));
  for (std::uint64_t i = 0; i < instructions_; ++i) // checked words: decode cannot refuse
    b.code.push_back(Instruction::decode(isa, file_.data() + text_offset_ + i * ib));
  b.constants.assign(constants(), constants() + const_size_);
  return b;
}

std::uint64_t ElfFile::imageSize() const {
  return layoutOf(TableSections(tables_), text_size_, const_size_).total;
}

bool ElfFile::canonical(const IsaDescription& isa) const {
  if (!file_.data())
    return false;
  const TableSections t(tables_);
  const ImageLayout l = layoutOf(t, text_size_, const_size_);
  if (l.total != file_.size() || l.offset[kText] != text_offset_ ||
      l.offset[kConst] != const_offset_)
    return false;
  // The image but its code and constants (the file's own bytes, where the image has them),
  // in a sparse buffer: only the headers, the tables and the padding are written.
  LargeBuffer image(l.total, "<image>", false);
  writeImageBytes(tables_, t, l, {nullptr, text_size_, text_crc_, true},
                  {nullptr, const_size_, const_crc_, true}, isa, image.data());
  auto same = [&](std::uint64_t lo, std::uint64_t hi) {
    return std::memcmp(image.data() + lo, file_.data() + lo, std::size_t(hi - lo)) == 0;
  };
  return same(0, text_offset_) && same(text_offset_ + text_size_, const_offset_) &&
         same(const_offset_ + const_size_, l.total);
}

bool ElfFile::moveImage(const IsaDescription& isa, std::uint8_t* out) {
  return canonical(isa) && file_.moveTo(out);
}

void ElfFile::writeImage(const IsaDescription& isa, std::uint8_t* out) const {
  if (!file_.data()) // a binary is at least its 64-byte header
    throw std::logic_error("ElfFile::writeImage: the file's bytes were moved (moveImage)");
  // The instruction words and the constants are the file's own bytes, checked by the
  // reader: an accepted instruction word is exactly its re-encoding (decode refuses
  // reserved bits and values a field cannot hold), so the image is serializeElf's.
  const TableSections t(tables_);
  writeImageBytes(tables_, t, layoutOf(t, text_size_, const_size_),
                  {file_.data() + text_offset_, text_size_, text_crc_},
                  {constants(), const_size_, const_crc_}, isa, out);
}

void writeElf(const std::string& path, const Binary& bin, const IsaDescription& isa) {
  std::vector<std::uint8_t> img;
  try {
    img = serializeElf(bin, isa);
  } catch (const Error& e) {
    throw Error(path, e.where(), e.reason());
  }
  writeFileAtomic(path, img.data(), img.size());
}

Binary readElf(const std::string& path, const IsaDescription& isa) {
  const LargeBuffer data = readBinaryFile(path);
  return parseElf(data.data(), std::size_t(data.size()), isa, path);
}

} // namespace ember::isa
