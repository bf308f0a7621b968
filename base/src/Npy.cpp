// NumPy .npy reader and writer (format versions 1.0 / 2.0 / 3.0, C order, little-endian).
#include "ember/support/Npy.h"

#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <sys/stat.h>

namespace ember {

namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

/// The dtypes Ember reads: descriptor -> element kind. Byte-order-free types
/// (one byte) are accepted with '|' and with '<'.
const std::map<std::string, ElemKind>& descrTable() {
  static const std::map<std::string, ElemKind> t = {
      {"<f4", ElemKind::Float32}, {"|i1", ElemKind::Int8},    {"<i1", ElemKind::Int8},
      {"<i4", ElemKind::Int32},   {"<i8", ElemKind::Int64},   {"|b1", ElemKind::Bool},
      {"<b1", ElemKind::Bool},    {"<f8", ElemKind::Float64}, {"<f2", ElemKind::Float16},
      {"|u1", ElemKind::UInt8},   {"<u1", ElemKind::UInt8},   {"<i2", ElemKind::Int16},
      {"<u2", ElemKind::UInt16},  {"<u4", ElemKind::UInt32},  {"<u8", ElemKind::UInt64},
  };
  return t;
}

/// Two hexadecimal digits.
std::string hex2(unsigned v) {
  const char* digits = "0123456789abcdef";
  return {digits[(v >> 4) & 15], digits[v & 15]};
}

/// One value of the header dictionary: a string, a boolean or a tuple of integers.
struct HeaderValue {
  enum Kind { String, Bool, Tuple } kind = String;
  std::string str;
  bool flag = false;
  std::vector<int64_t> ints;
};

/// A strict parser of the Python dict literal NumPy writes, e.g.
/// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }".
class HeaderParser {
public:
  HeaderParser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  std::map<std::string, HeaderValue> parseDict() {
    std::map<std::string, HeaderValue> out;
    expect('{');
    skipSpace();
    while (peek() != '}') {
      std::string key = parseString();
      expect(':');
      HeaderValue v = parseValue();
      if (!out.emplace(key, std::move(v)).second)
        fail("key '" + key + "' appears twice");
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        skipSpace();
      } else if (peek() != '}') {
        fail("expected ',' or '}' after the value of '" + key + "'");
      }
    }
    ++pos_;
    skipSpace();
    if (pos_ != s_.size())
      fail("unexpected text after the closing '}'");
    return out;
  }

private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(what_, "malformed .npy header (" + why + ") in \"" + printable() + "\"");
  }
  std::string printable() const {
    std::string p;
    for (char c : s_.substr(0, 200))
      p += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
    return p;
  }
  void skipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
  }
  char peek() {
    skipSpace();
    if (pos_ >= s_.size())
      fail("unexpected end of header");
    return s_[pos_];
  }
  void expect(char c) {
    if (peek() != c)
      fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string parseString() {
    char q = peek();
    if (q != '\'' && q != '"')
      fail("expected a quoted string");
    size_t end = s_.find(q, pos_ + 1);
    if (end == std::string::npos)
      fail("unterminated string");
    std::string out = s_.substr(pos_ + 1, end - pos_ - 1);
    for (size_t i = 0; i < out.size(); ++i)
      if (static_cast<unsigned char>(out[i]) < 0x20 || out[i] == 0x7f)
        fail("control byte 0x" + hex2(static_cast<unsigned char>(out[i])) + " at offset " +
             std::to_string(pos_ + 1 + i) + " inside a string");
    pos_ = end + 1;
    return out;
  }
  int64_t parseInt() {
    skipSpace();
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      int d = s_[pos_++] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - d) / 10)
        fail("dimension too large");
      v = v * 10 + d;
    }
    if (pos_ == start)
      fail("expected a non-negative integer dimension");
    if (pos_ < s_.size() && s_[pos_] == 'L') // Python 2 longs
      ++pos_;
    return v;
  }
  HeaderValue parseValue() {
    HeaderValue v;
    char c = peek();
    if (c == '\'' || c == '"') {
      v.kind = HeaderValue::String;
      v.str = parseString();
    } else if (c == '(') {
      v.kind = HeaderValue::Tuple;
      ++pos_;
      while (peek() != ')') {
        v.ints.push_back(parseInt());
        if (peek() == ',')
          ++pos_;
        else if (peek() != ')')
          fail("expected ',' or ')' in the shape");
      }
      ++pos_;
    } else if (s_.compare(pos_, 4, "True") == 0) {
      v.kind = HeaderValue::Bool;
      v.flag = true;
      pos_ += 4;
    } else if (s_.compare(pos_, 5, "False") == 0) {
      v.kind = HeaderValue::Bool;
      pos_ += 5;
    } else {
      fail("expected a string, True/False or a tuple");
    }
    return v;
  }

  const std::string& s_;
  const std::string& what_;
  size_t pos_ = 0;
};

uint32_t readLE(const std::string& b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(b[at + i])) << (8 * i);
  return v;
}

/// Validates the header dict and returns the type it describes.
Type typeFromHeader(const std::map<std::string, HeaderValue>& dict, const std::string& what) {
  auto get = [&](const char* key, HeaderValue::Kind kind) -> const HeaderValue& {
    auto it = dict.find(key);
    if (it == dict.end())
      throw Error(what, std::string("malformed .npy header: no '") + key + "' key");
    if (it->second.kind != kind)
      throw Error(what, std::string("malformed .npy header: '") + key + "' has the wrong type");
    return it->second;
  };
  for (const auto& [key, _] : dict)
    if (key != "descr" && key != "fortran_order" && key != "shape")
      throw Error(what, "malformed .npy header: unexpected key '" + key + "'");
  const std::string& descr = get("descr", HeaderValue::String).str;
  bool fortran = get("fortran_order", HeaderValue::Bool).flag;
  const std::vector<int64_t>& shape = get("shape", HeaderValue::Tuple).ints;

  auto it = descrTable().find(descr);
  if (it == descrTable().end()) {
    std::string why = "dtype '" + descr + "' is not supported";
    if (!descr.empty() && descr[0] == '>')
      why += " (big-endian; save it little-endian, e.g. a.astype(a.dtype.newbyteorder('<')))";
    else
      why += " (Ember reads float32 '<f4', float64 '<f8', float16 '<f2', int8 '|i1', int16 "
             "'<i2', int32 '<i4', int64 '<i8', uint8 '|u1', uint16 '<u2', uint32 '<u4', uint64 "
             "'<u8', bool '|b1'; convert with a.astype(np.float32) etc.)";
    throw Unsupported(what, why);
  }
  if (fortran && shape.size() > 1)
    throw Unsupported(what, "Fortran-order arrays are not supported (save "
                            "np.ascontiguousarray(a) instead)");
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / 16 / d)
      throw Error(what, "malformed .npy header: shape too large");
    count *= d;
  }
  return Type(it->second, shape);
}

} // namespace

const char* npyDescr(ElemKind k) {
  switch (k) {
  case ElemKind::Float32:
    return "<f4";
  case ElemKind::Int8:
    return "|i1";
  case ElemKind::Int32:
    return "<i4";
  case ElemKind::Int64:
    return "<i8";
  case ElemKind::Bool:
    return "|b1";
  case ElemKind::Float64:
    return "<f8";
  case ElemKind::Float16:
    return "<f2";
  case ElemKind::UInt8:
    return "|u1";
  case ElemKind::Int16:
    return "<i2";
  case ElemKind::UInt16:
    return "<u2";
  case ElemKind::UInt32:
    return "<u4";
  case ElemKind::UInt64:
    return "<u8";
  }
  return "?";
}

namespace {

/// Where the header dictionary starts and how long it is, from the first bytes of a
/// file (magic, version, header length): enough to know how much more to read.
struct Prelude {
  size_t headerStart = 0;
  size_t headerLen = 0;
};

/// The largest header Ember reads (NumPy writes a few hundred bytes at most).
constexpr size_t kMaxHeaderLen = size_t(1) << 20;

Prelude parsePrelude(const std::string& bytes, const std::string& what) {
  if (bytes.size() < kMagicLen || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    throw Error(what, "not a .npy file (bad magic: expected \\x93NUMPY)");
  if (bytes.size() < kMagicLen + 2)
    throw Error(what, "truncated .npy file (no version)");
  unsigned major = static_cast<uint8_t>(bytes[6]), minor = static_cast<uint8_t>(bytes[7]);
  size_t lenBytes;
  if (major == 1)
    lenBytes = 2;
  else if (major == 2 || major == 3)
    lenBytes = 4;
  else
    throw Unsupported(what, ".npy format version " + std::to_string(major) + "." +
                                std::to_string(minor) + " is not supported (1.0, 2.0, 3.0 are)");
  Prelude p;
  p.headerStart = kMagicLen + 2 + lenBytes;
  if (bytes.size() < p.headerStart)
    throw Error(what, "truncated .npy file (header length incomplete)");
  p.headerLen = readLE(bytes, kMagicLen + 2, lenBytes);
  if (p.headerLen > kMaxHeaderLen)
    throw Error(what, "malformed .npy header: " + std::to_string(p.headerLen) +
                          " bytes announced, more than the " + std::to_string(kMaxHeaderLen) +
                          " Ember reads");
  return p;
}

/// Checks that `have` data bytes are exactly what `type` needs.
void checkDataSize(const Type& type, uint64_t have, const std::string& what) {
  const uint64_t want = type.sizeInBytes();
  if (have < want)
    throw Error(what, "truncated .npy data: shape " + shapeToString(type.dims) + " of " +
                          elemKindName(type.kind) + " needs " + std::to_string(want) +
                          " bytes, the file has " + std::to_string(have));
  if (have > want)
    throw Error(what, "size mismatch: shape " + shapeToString(type.dims) + " of " +
                          elemKindName(type.kind) + " needs " + std::to_string(want) +
                          " bytes, the file has " + std::to_string(have) + " (trailing data)");
}

void checkBools(const Tensor& t, const std::string& what) {
  if (t.kind() != ElemKind::Bool)
    return;
  for (size_t i = 0; i < t.sizeInBytes(); ++i)
    if (t.raw()[i] > 1)
      throw Error(what, "bool element " + std::to_string(i) + " is " + std::to_string(t.raw()[i]) +
                            " (must be 0 or 1)");
}

/// Reads up to `n` bytes from `f` (fewer only at the end of the file).
size_t readUpTo(std::FILE* f, void* out, size_t n, const std::string& what) {
  size_t got = std::fread(out, 1, n, f);
  if (got < n && std::ferror(f))
    throw Error(what, "read error");
  return got;
}

} // namespace

Tensor parseNpy(const std::string& bytes, const std::string& what) {
  const Prelude p = parsePrelude(bytes, what);
  if (bytes.size() - p.headerStart < p.headerLen)
    throw Error(what, "truncated .npy header: " + std::to_string(p.headerLen) +
                          " bytes announced, " + std::to_string(bytes.size() - p.headerStart) +
                          " present");
  std::string header = bytes.substr(p.headerStart, p.headerLen);
  Type type = typeFromHeader(HeaderParser(header, what).parseDict(), what);
  size_t dataStart = p.headerStart + p.headerLen;
  checkDataSize(type, bytes.size() - dataStart, what);
  Tensor t(type);
  if (type.sizeInBytes())
    std::memcpy(t.raw(), bytes.data() + dataStart, type.sizeInBytes());
  checkBools(t, what);
  return t;
}

Tensor readNpy(const std::string& path) {
  // Header first, then exactly the bytes it implies: a huge or endless file (/dev/zero,
  // a FIFO) is refused after a few bytes instead of being read into memory.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(path, "is a directory, not a file");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    throw Error(path, std::string("cannot open: ") + std::strerror(errno));
  struct Closer {
    std::FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{f};
  std::string head(kMagicLen + 2 + 4, '\0');
  head.resize(readUpTo(f, head.data(), head.size(), path));
  const Prelude p = parsePrelude(head, path);
  std::string header = head.substr(std::min(p.headerStart, head.size()));
  const size_t spill = header.size(); // header bytes already read with the prelude
  if (spill > p.headerLen)
    header.resize(p.headerLen);
  else {
    header.resize(p.headerLen);
    size_t got = readUpTo(f, header.data() + spill, p.headerLen - spill, path);
    if (got < p.headerLen - spill)
      throw Error(path, "truncated .npy header: " + std::to_string(p.headerLen) +
                            " bytes announced, " + std::to_string(spill + got) + " present");
  }
  Type type = typeFromHeader(HeaderParser(header, path).parseDict(), path);
  const uint64_t dataStart = p.headerStart + p.headerLen;
  if (S_ISREG(st.st_mode))
    checkDataSize(type, uint64_t(st.st_size) > dataStart ? uint64_t(st.st_size) - dataStart : 0,
                  path);
  // The data: bytes that came with the prelude (a header shorter than its spare room),
  // then the rest in chunks, so memory grows only as far as the file really goes.
  const uint64_t want = type.sizeInBytes();
  std::string data = head.size() > dataStart ? head.substr(dataStart) : std::string();
  char buf[1 << 16];
  while (data.size() <= want) {
    size_t got = readUpTo(f, buf, sizeof(buf), path);
    if (got == 0)
      break;
    data.append(buf, got);
  }
  checkDataSize(type, data.size(), path);
  Tensor t(type);
  if (want)
    std::memcpy(t.raw(), data.data(), want);
  checkBools(t, path);
  return t;
}

std::string serializeNpy(const Tensor& t) {
  std::string shape = "(";
  for (size_t i = 0; i < t.dims().size(); ++i)
    shape += (i ? ", " : "") + std::to_string(t.dims()[i]);
  if (t.dims().size() == 1)
    shape += ","; // "(5,)" as Python writes a 1-tuple
  shape += ")";
  std::string dict = std::string("{'descr': '") + npyDescr(t.kind()) +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Like NumPy: spare room for the first dimension to grow to 21 digits, then spaces
  // and a final newline so that the data starts on a 64-byte boundary.
  if (!t.dims().empty()) {
    size_t digits = std::to_string(t.dims()[0]).size();
    dict.append(digits < 21 ? 21 - digits : 0, ' ');
  }
  size_t lenBytes = 2, major = 1;
  size_t total = kMagicLen + 2 + lenBytes + dict.size() + 1;
  if (total + 63 > 65535 + kMagicLen + 2 + lenBytes) {
    lenBytes = 4;
    major = 2;
    total = kMagicLen + 2 + lenBytes + dict.size() + 1;
  }
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(major);
  out += '\0';
  size_t hl = dict.size();
  for (size_t i = 0; i < lenBytes; ++i)
    out += static_cast<char>((hl >> (8 * i)) & 0xff);
  out += dict;
  out.append(reinterpret_cast<const char*>(t.raw()), t.sizeInBytes());
  return out;
}

void writeNpy(const std::string& path, const Tensor& t) {
  writeFileAtomic(path, serializeNpy(t));
}

std::string npyFileStem(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
      c = '_';
  return out.empty() ? "_" : out;
}

} // namespace ember
