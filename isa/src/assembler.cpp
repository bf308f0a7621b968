// Assembly text -> Binary.
#include "ember/isa/assembler.h"
#include "ember/isa/roles.h"

#include "ember/isa/error.h"
#include "text_util.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

namespace ember::isa {

using detail::parseInt;
using detail::parseUint;
using detail::Token;

std::string checkTokens(const Instruction& insn) {
  Engine e = insn.engine();
  auto set = [&](const char* r) { return insn.has(r) && insn.get(r) != 0; };
  if (e == Engine::Load && (set(role::kPopPrev) || set(role::kPushPrev)))
    return insn.name() +
           " runs on the load engine, which has no previous engine (pop_prev/push_prev)";
  if (e == Engine::Store && (set(role::kPopNext) || set(role::kPushNext)))
    return insn.name() + " runs on the store engine, which has no next engine (pop_next/push_next)";
  return "";
}

namespace {

/// Throws Error(file, where, reason); [[noreturn]] so callers need no fallback paths.
struct Fail {
  std::string file, where;
  [[noreturn]] void operator()(const std::string& reason) const {
    throw Error(file, where, reason);
  }
};

std::string fieldList(const InstrDesc& d) {
  std::string s;
  for (const auto& f : d.fields)
    s += (s.empty() ? "" : ", ") + f.role;
  return s;
}

std::int64_t parseFieldValue(const FieldDesc& f, const Token& t, const InstrDesc& d,
                             const Fail& fail) {
  for (const auto& [n, v] : f.names)
    if (n == t.text)
      return v;
  auto v = parseInt(t.text);
  if (!v) {
    if (!f.names.empty()) {
      std::string ch;
      for (const auto& [n, val] : f.names)
        ch += (ch.empty() ? "" : ", ") + n;
      fail(d.name + ": \"" + t.text + "\" is not a choice of " + f.role + " (" + ch + ")");
    }
    fail(d.name + ": bad value \"" + t.text + "\" for " + f.role);
  }
  if (*v < f.minValue() || *v > f.maxValue())
    fail(d.name + ": " + f.role + "=" + t.text + " does not fit its " +
         std::to_string(f.bits.width) + "-bit " + (f.is_signed ? "signed " : "") + "field [" +
         std::to_string(f.minValue()) + ", " + std::to_string(f.maxValue()) + "]");
  if (!f.names.empty() && !f.nameOf(*v))
    fail(d.name + ": " + f.role + "=" + t.text + " names no choice");
  return *v;
}

Instruction parseTokens(const std::vector<Token>& toks, const IsaDescription& isa,
                        const Fail& fail) {
  if (toks.empty() || toks[0].quoted || toks[0].has_key)
    fail("expected an instruction mnemonic");
  const InstrDesc* d = isa.findInstruction(toks[0].text);
  if (!d)
    fail("unknown instruction or directive \"" + toks[0].text + "\" for ISA " + isa.name());
  Instruction insn(*d);
  std::vector<bool> seen(d->fields.size(), false);
  for (std::size_t i = 1; i < toks.size(); ++i) {
    const Token& t = toks[i];
    std::string key = t.has_key ? t.key : t.text;
    int idx = t.quoted && !t.has_key ? -1 : d->fieldIndex(key);
    if (idx < 0)
      fail(d->name + ": unknown field \"" + key + "\" (fields: " + fieldList(*d) + ")");
    const FieldDesc& f = d->fields[std::size_t(idx)];
    if (seen[std::size_t(idx)])
      fail(d->name + ": field \"" + key + "\" given twice");
    seen[std::size_t(idx)] = true;
    std::int64_t v = 1;
    if (t.has_key)
      v = parseFieldValue(f, t, *d, fail);
    else if (f.kind != RoleKind::Flag)
      fail(d->name + ": field \"" + key + "\" needs a value (" + key + "=...)");
    insn.setIndex(std::size_t(idx), v);
  }
  return insn;
}

/// Assembler state over one source text.
class Assembler {
public:
  Assembler(const IsaDescription& isa, std::string file)
      : isa_(isa), file_(std::move(file)), bin_(Binary::forIsa(isa)) {}

  Binary run(std::string_view text) {
    std::size_t pos = 0;
    while (pos <= text.size()) {
      std::size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos)
        nl = text.size();
      ++line_;
      line(text.substr(pos, nl - pos));
      pos = nl + 1;
    }
    closeNode();
    try {
      validateBinary(bin_, isa_, file_);
    } catch (const Error& e) {
      throw Error(file_, e.where(), e.reason());
    }
    return std::move(bin_);
  }

private:
  [[noreturn]] void fail(const std::string& reason) const {
    throw Error(file_, "line " + std::to_string(line_), reason);
  }

  void line(std::string_view l) {
    std::string err;
    std::vector<Token> toks = detail::tokenize(l, err);
    if (!err.empty())
      fail(err);
    if (toks.empty())
      return;
    const std::string& head = toks[0].text;
    if (!toks[0].quoted && !head.empty() && head[0] == '.' && !isa_.findInstruction(head)) {
      directive(toks);
      return;
    }
    Instruction insn = parseTokens(toks, isa_, Fail{file_, "line " + std::to_string(line_)});
    std::string tok = checkTokens(insn);
    if (!tok.empty())
      fail(tok);
    if (bin_.code.size() >= UINT32_MAX)
      fail("too many instructions");
    bin_.code.push_back(std::move(insn));
  }

  void closeNode() {
    if (!node_open_)
      return;
    node_open_ = false;
    auto n = std::uint32_t(bin_.code.size()) - node_.first;
    if (n == 0)
      return; // a node without instructions leaves no trace
    node_.count = n;
    bin_.debug.push_back(node_);
  }

  std::string str(const std::vector<Token>& t, std::size_t i, const char* what) const {
    if (i >= t.size() || !t[i].quoted || t[i].has_key)
      fail(std::string("expected a quoted ") + what);
    return t[i].text;
  }

  std::uint64_t num(const std::string& s, const char* what) const {
    auto v = parseUint(s);
    if (!v)
      fail(std::string("bad ") + what + " \"" + s + "\"");
    return *v;
  }

  void directive(const std::vector<Token>& t) {
    const std::string& d = t[0].text;
    if (d == ".isa") {
      std::string n = str(t, 1, "ISA name");
      if (n != isa_.name())
        fail("program is written for ISA \"" + n + "\", but the description is \"" + isa_.name() +
             "\"");
      if (t.size() > 2)
        fail(".isa takes one argument");
    } else if (d == ".region") {
      region(t);
    } else if (d == ".io") {
      io(t);
    } else if (d == ".byte" || d == ".word") {
      data(t, d == ".word" ? 4 : 1);
    } else if (d == ".zero") {
      if (t.size() != 2)
        fail(".zero takes one count");
      std::uint64_t n = num(t[1].text, "count");
      if (n > (std::uint64_t(1) << 30) || bin_.constants.size() + n > (std::uint64_t(1) << 32))
        fail(".zero count too large");
      bin_.constants.resize(bin_.constants.size() + n, 0);
    } else if (d == ".node") {
      closeNode();
      if (t.size() != 2)
        fail(".node takes one quoted name");
      node_ = DebugRange{std::uint32_t(bin_.code.size()), 0, str(t, 1, "node name")};
      node_open_ = true;
    } else if (d == ".endnode") {
      if (t.size() != 1)
        fail(".endnode takes no arguments");
      closeNode();
    } else {
      fail("unknown directive \"" + d +
           "\" (known: .isa .region .io .byte .word .zero .node .endnode)");
    }
  }

  void region(const std::vector<Token>& t) {
    if (t.size() != 5)
      fail(".region needs: \"name\" kind offset size");
    MemRegion r;
    r.name = str(t, 1, "region name");
    if (!parse(t[2].text, r.kind))
      fail("unknown region kind \"" + t[2].text + "\" (const, input, output, scratch)");
    r.dram_offset = num(t[3].text, "offset");
    r.size_bytes = num(t[4].text, "size");
    bin_.memmap.push_back(std::move(r));
  }

  void io(const std::vector<Token>& t) {
    if (t.size() < 3)
      fail(".io needs: input|output \"name\" key=value...");
    IoEntry e;
    if (!parse(t[1].text, e.dir))
      fail("expected input or output, got \"" + t[1].text + "\"");
    e.name = str(t, 2, "tensor name");
    std::map<std::string, bool> seen;
    for (std::size_t i = 3; i < t.size(); ++i) {
      if (!t[i].has_key)
        fail(".io: expected key=value, got \"" + t[i].text + "\"");
      ioKey(e, t[i].key, t[i].text);
      if (seen[t[i].key])
        fail(".io: key \"" + t[i].key + "\" given twice");
      seen[t[i].key] = true;
    }
    for (const char* k : {"dtype", "shape", "offset", "size"})
      if (!seen[k])
        fail(std::string(".io: missing ") + k + "=");
    bin_.io.push_back(std::move(e));
  }

  /// `n` colon-separated non-negative integers, the first `narrow` of them at most 65535,
  /// the rest at most 2^32 - 1 (the .io entry's `key`; `form` shows the expected form).
  std::vector<std::uint64_t> fieldList(const std::string& v, int n, int narrow, const char* key,
                                       const char* form) {
    std::vector<std::uint64_t> f;
    std::size_t p = 0;
    for (int i = 0; i < n; ++i) {
      const std::size_t c = i < n - 1 ? v.find(':', p) : v.size();
      const auto d = c == std::string::npos ? std::nullopt : parseInt(v.substr(p, c - p));
      const std::int64_t hi = i < narrow ? 65535 : std::int64_t(UINT32_MAX);
      if (!d || *d < 0 || *d > hi || (i == n - 1 && c != v.size()))
        fail(std::string("bad ") + key + " \"" + v + "\" (" + form + ")");
      f.push_back(std::uint64_t(*d));
      p = c + 1;
    }
    return f;
  }

  void ioKey(IoEntry& e, const std::string& k, const std::string& v) {
    if (k == "dtype") {
      if (!parse(v, e.dtype))
        fail("unknown dtype \"" + v + "\" (int8, uint8, int32, float32)");
    } else if (k == "layout") {
      if (!parse(v, e.layout))
        fail("unknown layout \"" + v + "\" (flat, nchwc, packed, patches)");
    } else if (k == "pack") {
      // pixels:stride:pad_left:width (layout=packed)
      const auto f = fieldList(v, 4, 3, "pack", "pixels:stride:pad_left:width, e.g. 4:2:3:114");
      e.packing = {std::uint16_t(f[0]), std::uint16_t(f[1]), std::uint16_t(f[2]),
                   std::uint32_t(f[3])};
    } else if (k == "patch") {
      // kh:kw:sh:sw:dh:dw:pad_top:pad_left:out_h:out_w (layout=patches)
      const auto f = fieldList(v, 10, 8, "patch",
                               "kh:kw:sh:sw:dh:dw:pad_top:pad_left:out_h:out_w, e.g. "
                               "7:7:2:2:1:1:3:3:112:112");
      IoPatches& p = e.patches;
      p = {std::uint16_t(f[0]), std::uint16_t(f[1]), std::uint16_t(f[2]), std::uint16_t(f[3]),
           std::uint16_t(f[4]), std::uint16_t(f[5]), std::uint16_t(f[6]), std::uint16_t(f[7]),
           std::uint32_t(f[8]), std::uint32_t(f[9])};
    } else if (k == "shape") {
      std::size_t p = 0;
      while (p <= v.size()) {
        std::size_t x = v.find('x', p);
        if (x == std::string::npos)
          x = v.size();
        auto d = parseInt(v.substr(p, x - p));
        if (!d)
          fail("bad shape \"" + v + "\" (e.g. 1x16x8x8)");
        e.shape.push_back(*d);
        if (e.shape.size() > 8)
          fail("shape has more than 8 dimensions");
        p = x + 1;
      }
    } else if (k == "scale") {
      char* end = nullptr;
      errno = 0;
      e.scale = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || errno == ERANGE)
        fail("bad scale \"" + v + "\"");
    } else if (k == "zp") {
      auto z = parseInt(v);
      if (!z || *z < INT32_MIN || *z > INT32_MAX)
        fail("bad zero point \"" + v + "\"");
      e.zero_point = std::int32_t(*z);
    } else if (k == "offset") {
      e.dram_offset = num(v, "offset");
    } else if (k == "size") {
      e.size_bytes = num(v, "size");
    } else {
      fail(".io: unknown key \"" + k + "\" (dtype, layout, pack, shape, scale, zp, offset, size)");
    }
  }

  void data(const std::vector<Token>& t, unsigned width) {
    if (t.size() < 2)
      fail(t[0].text + " needs at least one value");
    for (std::size_t i = 1; i < t.size(); ++i) {
      auto v = parseInt(t[i].text);
      std::int64_t lo = width == 1 ? -128 : INT32_MIN;
      std::int64_t hi = width == 1 ? 255 : std::int64_t(UINT32_MAX);
      if (!v || *v < lo || *v > hi || t[i].quoted || t[i].has_key)
        fail("bad " + t[0].text + " value \"" + t[i].text + "\" (range " + std::to_string(lo) +
             ".." + std::to_string(hi) + ")");
      if (bin_.constants.size() >= (std::uint64_t(1) << 32))
        fail("constants larger than 4 GiB");
      for (unsigned b = 0; b < width; ++b)
        bin_.constants.push_back(std::uint8_t(std::uint64_t(*v) >> (8 * b)));
    }
  }

  const IsaDescription& isa_;
  std::string file_;
  Binary bin_;
  std::size_t line_ = 0;
  DebugRange node_;
  bool node_open_ = false;
};

} // namespace

Instruction parseInstruction(std::string_view line, const IsaDescription& isa,
                             const std::string& file, const std::string& where) {
  std::string err;
  std::vector<Token> toks = detail::tokenize(line, err);
  Fail f{file, where};
  if (!err.empty())
    f(err);
  return parseTokens(toks, isa, f);
}

Binary assemble(std::string_view text, const IsaDescription& isa, const std::string& file) {
  return Assembler(isa, file).run(text);
}

} // namespace ember::isa
