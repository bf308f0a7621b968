// Random legal programs, driven by the description's classes, roles and memories.
#include "ember/progen/ProgramGenerator.h"
#include "ember/isa/roles.h"
#include "ember/progen/Footprint.h"

#include "ember/isa/instruction.h"
#include "ember/isa/semantic.h"

#include <algorithm>
#include <array>
#include <random>
#include <string>

namespace ember::progen {

namespace {

using isa::Instruction;
using isa::RoleKind;
using u64 = std::uint64_t;
using i64 = std::int64_t;

/// Reads the fuzz bytes as numbers; zeros once they run out.
class Entropy {
public:
  Entropy(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}
  /// A value in [0, bound) (0 when bound <= 1).
  u64 below(u64 bound) {
    if (bound <= 1)
      return 0;
    u64 v = 0;
    for (u64 b = bound - 1; b; b >>= 8)
      v = (v << 8) | (pos_ < n_ ? p_[pos_++] : 0);
    return v % bound;
  }
  /// A value in [lo, hi] (lo when hi < lo).
  i64 range(i64 lo, i64 hi) { return hi <= lo ? lo : lo + i64(below(u64(hi - lo) + 1)); }
  bool chance(unsigned oneIn) { return below(oneIn) == 0; }

private:
  const std::uint8_t* p_;
  std::size_t n_, pos_ = 0;
};

class Generator {
public:
  Generator(const isa::IsaDescription& isa, Entropy& e, const GenOptions& o)
      : isa_(isa), e_(e), o_(o), bin_(isa::Binary::forIsa(isa)),
        depth_(isa.hw().queues.token_fifo_depth) {}

  isa::Binary run();

private:
  /// Token FIFO from engine `from` towards its next (or previous) neighbour, as the
  /// simulator numbers them (0 load->compute, 1 compute->load, 2 compute->store,
  /// 3 store->compute); -1 when there is no such neighbour.
  static int fifo(int from, bool toNext) {
    if (from < 0 || from > 2)
      return -1;
    if (toNext)
      return from < 2 ? from * 2 : -1;
    return from > 0 ? (from - 1) * 2 + 1 : -1;
  }
  void set(Instruction& in, const std::string& role, i64 v) {
    const isa::FieldDesc* f = in.desc().field(role);
    if (f)
      in.set(role, std::clamp<i64>(v, f->minValue(), f->maxValue()));
  }
  i64 maxOf(const Instruction& in, const std::string& role) const {
    const isa::FieldDesc* f = in.desc().field(role);
    return f ? f->maxValue() : 0;
  }
  i64 count(const Instruction& in, const std::string& role) {
    if (e_.chance(32))
      return 0; // an empty loop is legal: the instruction only costs its issue
    return e_.range(1, std::min<i64>(i64(o_.max_count), maxOf(in, role)));
  }
  i64 pickMemory(const Instruction& in, const std::string& role, bool allowParam);
  void loops(Instruction& in);
  void dma(Instruction& in, bool load);
  void normalize(Instruction& in);
  void depthwise(Instruction& in);
  void tokens(Instruction& in);
  bool paramPrologue();
  void backgroundRaceFree(std::size_t first);
  const isa::InstrDesc* findClass(const std::string& cls, const std::string& memory = "") const;

  const isa::IsaDescription& isa_;
  Entropy& e_;
  const GenOptions& o_;
  isa::Binary bin_;
  u64 depth_;
  std::array<u64, 4> outstanding_{};
  u64 scratch_ = 0;
  bool paramReady_ = false;
};

const isa::InstrDesc* Generator::findClass(const std::string& cls,
                                           const std::string& memory) const {
  for (const auto& d : isa_.instructions())
    if (d.cls->name == cls && (memory.empty() || std::find(d.memories.begin(), d.memories.end(),
                                                           memory) != d.memories.end()))
      return &d;
  return nullptr;
}

i64 Generator::pickMemory(const Instruction& in, const std::string& role, bool allowParam) {
  std::vector<i64> ids;
  for (const auto& [name, id] : in.desc().field(role)->names)
    if (allowParam || name != isa::mem::kParam)
      ids.push_back(id);
  return ids.empty() ? in.desc().field(role)->names.front().second
                     : ids[std::size_t(e_.below(ids.size()))];
}

// Loop counts n0..n2 and, for every SRAM operand "<p>_addr", strides "<p>_s<l>" and an
// address such that the last row it reaches is inside its memory (requantize's
// param_addr also reads the next row, a bias requantize's the two next).
void Generator::loops(Instruction& in) {
  const isa::InstrDesc& d = in.desc();
  for (const char* n : {isa::role::kN0, isa::role::kN1, isa::role::kN2})
    if (in.has(n))
      set(in, n, count(in, n));
  for (const auto& f : d.fields) {
    if (f.kind != RoleKind::MemSelect)
      continue;
    set(in, f.role, pickMemory(in, f.role, false));
  }
  for (const auto& f : d.fields) {
    if (f.kind != RoleKind::Addr)
      continue;
    const isa::RoleSpec* spec = d.cls->findRole(f.role);
    const isa::MemoryDesc* mem = spec->memory.empty() ? isa_.memoryById(in.get(spec->select_role))
                                                      : &isa_.memory(spec->memory);
    const std::string p = f.role.substr(0, f.role.size() - 5); // "<p>_addr"
    const u64 rows = mem->rows();
    const u64 paramLast = d.bias ? 2 : 1;
    u64 last = f.role == isa::role::kParamAddr ? paramLast : 0;
    for (int l = 0; l < 3; ++l) {
      const std::string s = p + "_s" + std::to_string(l), n = "n" + std::to_string(l);
      if (!in.has(s) || !in.has(n))
        continue;
      set(in, s, e_.range(0, i64(o_.max_stride)));
      if (in.get(n) > 0)
        last += u64(in.get(n) - 1) * u64(in.get(s));
    }
    if (last >= rows) { // too long for this memory: walk it in place
      for (int l = 0; l < 3; ++l)
        if (in.has(p + "_s" + std::to_string(l)))
          set(in, p + "_s" + std::to_string(l), 0);
      last = f.role == isa::role::kParamAddr ? paramLast : 0;
    }
    set(in, f.role, e_.range(0, i64(rows - 1 - last)));
  }
  if (d.cls->id == isa::SemanticClass::VectorUnary && d.op == "shift")
    set(in, isa::role::kImm0, e_.range(-31, 31));
}

/// A normalize instruction: its loops walk ceil(n0 / L) rows per line, its parameter
/// block is 2 acc rows plus the exp table or three rows per line row.
void Generator::normalize(Instruction& in) {
  const u64 L = isa_.hw().vector.lanes;
  set(in, isa::role::kLen, e_.range(1, std::min<i64>(i64(4 * L + 3), maxOf(in, isa::role::kLen))));
  set(in, isa::role::kN1, count(in, isa::role::kN1));
  const u64 R = (u64(in.get(isa::role::kLen)) + L - 1) / L, n1 = u64(in.get(isa::role::kN1));
  const u64 act = isa_.memory(isa::mem::kAct).rows();
  // The walk `p` (strides drawn, then its first row); returns its last row.
  auto walk = [&](const std::string& p) {
    set(in, p + "_sb", e_.range(0, i64(o_.max_stride)));
    set(in, p + "_s1", e_.range(0, i64(o_.max_stride)));
    u64 last = (R - 1) * u64(in.get(p + "_sb")) + (n1 - 1) * u64(in.get(p + "_s1"));
    if (last >= act) { // too long for act: rows in place, lines in place
      set(in, p + "_s1", 0);
      set(in, p + "_sb", 1);
      last = R - 1;
    }
    return last;
  };
  const u64 srcLast = walk("src");
  const u64 src = u64(e_.range(0, i64(act - 1 - srcLast)));
  set(in, isa::role::kSrcAddr, i64(src));
  // The destination is the source walk itself (in place) or rows apart from all of it:
  // docs/isa/instructions.md 2.11 leaves other overlaps unpredictable.
  const u64 dstLast = walk("dst");
  const bool below = src > dstLast, above = src + srcLast + 1 + dstLast < act;
  // In place needs a line's rows distinct: with src_sb = 0 a later row would read an
  // earlier row's results.
  const bool inPlace = R == 1 || in.get("src_sb") != 0;
  if ((inPlace && e_.chance(3)) || (!below && !above)) {
    if (!inPlace) { // rows one apart, lines where they were: still within act
      set(in, "src_sb", 1);
      set(in, isa::role::kSrcAddr, i64(std::min(src, act - R - (n1 - 1) * u64(in.get("src_s1")))));
    }
    for (const char* r : {"_sb", "_s1"})
      set(in, std::string("dst") + r, in.get(std::string("src") + r));
    set(in, isa::role::kDstAddr, i64(src));
  } else if (below && (!above || e_.chance(2))) {
    set(in, isa::role::kDstAddr, e_.range(0, i64(src - 1 - dstLast)));
  } else {
    set(in, isa::role::kDstAddr, e_.range(i64(src + srcLast + 1), i64(act - 1 - dstLast)));
  }
  const u64 rows =
      isa::normalizeParamRows(in.desc().op == "softmax", u64(in.get(isa::role::kLen)), unsigned(L));
  set(in, isa::role::kBlockAddr, e_.range(0, i64(isa_.memory(isa::mem::kAcc).rows() - rows)));
}

/// A depthwise instruction (docs/isa/instructions.md section 2.12): a window of at most the array's
/// rows taps, its act walk (outputs and taps) and acc walk inside their memories.
void Generator::depthwise(Instruction& in) {
  const u64 rows = isa_.hw().mac.rows;
  for (const char* n : {isa::role::kN0, isa::role::kN1})
    set(in, n, count(in, n));
  const i64 kh = e_.range(1, std::min<i64>(maxOf(in, isa::role::kKh), i64(rows)));
  set(in, isa::role::kKh, kh);
  set(in, isa::role::kKw,
      e_.range(1,
               std::min<i64>(maxOf(in, isa::role::kKw), i64(rows / u64(in.get(isa::role::kKh))))));
  if (e_.chance(32)) // an empty window is legal too: the instruction only costs its issue
    set(in, e_.chance(2) ? isa::role::kKh : isa::role::kKw, 0);
  for (const char* s : {isa::role::kActS0, isa::role::kActS1, isa::role::kAccS0, isa::role::kAccS1,
                        isa::role::kTapS0})
    set(in, s, e_.range(0, i64(o_.max_stride)));
  // Lines of taps: often a line pitch (dilation * Wp), so that banks repeat (rule DW1).
  set(in, isa::role::kTapS1, e_.chance(2) ? e_.range(0, i64(o_.max_stride)) : e_.range(4, 40));
  auto place = [&](const char* addr, const char* mem, u64 ext,
                   std::initializer_list<const char*> s) {
    const u64 memRows = isa_.memory(mem).rows();
    if (ext >= memRows) { // too long for this memory: every walk in place
      for (const char* r : s)
        set(in, r, 0);
      ext = 0;
    }
    set(in, addr, e_.range(0, i64(memRows - 1 - ext)));
  };
  for (const ArrayWalk& w : arrayWalks(in))
    place(w.addr, w.mem, w.ext,
          w.mem == std::string(isa::mem::kAcc)
              ? std::initializer_list<const char*>{isa::role::kAccS0, isa::role::kAccS1}
          : w.mem == std::string(isa::mem::kAct)
              ? std::initializer_list<const char*>{isa::role::kActS0, isa::role::kActS1,
                                                   isa::role::kTapS0, isa::role::kTapS1}
              : std::initializer_list<const char*>{});
}

void Generator::dma(Instruction& in, bool load) {
  set(in, isa::role::kSram,
      pickMemory(in, isa::role::kSram, !load)); // loads never clobber the param SRAM
  const isa::MemoryDesc* mem = isa_.memoryById(in.get(isa::role::kSram));
  const u64 B = mem->row_bytes, rows = mem->rows();
  i64 s0 = count(in, isa::role::kSize0), s1 = count(in, isa::role::kSize1),
      s2 = count(in, isa::role::kSize2);
  i64 pl = 0, pr = 0, pt = 0, pb = 0;
  if (load) {
    pl = e_.range(0, 2), pr = e_.range(0, 2), pt = e_.range(0, 2), pb = e_.range(0, 2);
    set(in, isa::role::kPadValue, e_.range(-128, 127));
  }
  auto sramRows = [&] { return u64(s2) * u64(pt + s1 + pb) * u64(pl + s0 + pr); };
  if (sramRows() > rows) {
    s1 = s2 = 1, pl = pr = pt = pb = 0;
    s0 = std::min<i64>(s0, i64(rows));
  }
  i64 st1 = s0 + e_.range(0, 2), st2 = s1 * st1 + e_.range(0, 2);
  auto extent = [&] {
    return s0 * s1 * s2 == 0 ? 0 : (u64(s2 - 1) * u64(st2) + u64(s1 - 1) * u64(st1) + u64(s0)) * B;
  };
  if (extent() > o_.scratch_bytes) {
    s1 = s2 = 1, pt = pb = 0;
    s0 = std::min<i64>(s0, i64(o_.scratch_bytes / B));
  }
  for (auto [role, v] : {std::pair<const char*, i64>{isa::role::kSize0, s0},
                         {isa::role::kSize1, s1},
                         {isa::role::kSize2, s2},
                         {isa::role::kStride1, st1},
                         {isa::role::kStride2, st2},
                         {isa::role::kPadLeft, pl},
                         {isa::role::kPadRight, pr},
                         {isa::role::kPadTop, pt},
                         {isa::role::kPadBottom, pb}})
    set(in, role, v);
  set(in, isa::role::kSramAddr, e_.range(0, i64(rows - sramRows())));
  set(in, isa::role::kDramAddr, i64(scratch_ + e_.below(o_.scratch_bytes - extent() + 1)));
}

// Program-order token accounting: pops only take tokens pushed earlier, pushes keep at
// most `depth` outstanding per FIFO, so no run can deadlock or over/underflow. A
// background gemm pushes none (docs/simulator.md rule E6: that is a bad operand).
void Generator::tokens(Instruction& in) {
  const int e = static_cast<int>(in.engine());
  for (bool next : {false, true}) {
    const int f = fifo(next ? e + 1 : e - 1, !next);
    const char* flag = next ? isa::role::kPopNext : isa::role::kPopPrev;
    if (f >= 0 && in.has(flag) && outstanding_[std::size_t(f)] > 0 && e_.chance(2)) {
      in.set(flag, 1);
      --outstanding_[std::size_t(f)];
    }
  }
  for (bool next : {false, true}) {
    if (in.desc().background)
      break;
    const int f = fifo(e, next);
    const char* flag = next ? isa::role::kPushNext : isa::role::kPushPrev;
    if (f >= 0 && in.has(flag) && outstanding_[std::size_t(f)] < depth_ && e_.chance(2)) {
      in.set(flag, 1);
      ++outstanding_[std::size_t(f)];
    }
  }
}

// The param SRAM from the constants (every int32 lane in 1..62, valid as a requantize
// multiplier and shift), then a token so that compute waits for it.
bool Generator::paramPrologue() {
  const isa::InstrDesc* ld = findClass(isa::cls::kDmaLoad, isa::mem::kParam);
  const isa::InstrDesc* sync = findClass(isa::cls::kSync);
  if (!ld || !sync)
    return false;
  const isa::MemoryDesc& param = isa_.memory(isa::mem::kParam);
  bin_.constants.resize(param.size_bytes);
  std::mt19937 fill(std::uint32_t(e_.below(u64(1) << 32))); // (the fuzz bytes go to code)
  for (std::size_t i = 0; i < bin_.constants.size(); i += 4)
    bin_.constants[i] = std::uint8_t(1 + fill() % 62); // little-endian int32 in 1..62
  Instruction in(*ld);
  u64 s0 = 1;
  while (s0 * 2 <= param.rows() && i64(s0 * 2) <= maxOf(in, isa::role::kSize0))
    s0 *= 2;
  const u64 s1 = param.rows() / s0;
  if (i64(s1) > maxOf(in, isa::role::kSize1) || i64(s0) > maxOf(in, isa::role::kStride1))
    return false;
  in.set(isa::role::kSram, param.id);
  in.set(isa::role::kSize0, i64(s0));
  in.set(isa::role::kSize1, i64(s1));
  in.set(isa::role::kSize2, 1);
  in.set(isa::role::kStride1, i64(s0));
  in.set(isa::role::kPushNext, 1);
  bin_.code.push_back(in);
  Instruction w(*sync);
  w.set(isa::role::kEngine, static_cast<i64>(isa::Engine::Compute));
  w.set(isa::role::kPopPrev, 1);
  bin_.code.push_back(w);
  return true;
}

// Rule E6: while the array runs a background gemm or depthwise instruction (from its
// start until its end, when the next array instruction, a compute sync or the halt may
// start), no instruction may write the act or weight rows it reads or touch its acc rows.
// A DMA may run at any time (only tokens order it, and those the generator draws at
// random): a background instruction whose rows meet any DMA's moves its acc, act or
// weight walk to the lowest base that meets none, or becomes a plain gemm (a depthwise
// one: a compute sync). A later compute instruction that meets its rows before the next
// array instruction or compute sync gets a compute sync (a join) in front of it.
void Generator::backgroundRaceFree(std::size_t first) {
  const isa::InstrDesc* plain = nullptr;
  const isa::InstrDesc* sync = findClass(isa::cls::kSync);
  for (const auto& d : isa_.instructions())
    if (d.cls->id == isa::SemanticClass::Gemm && !d.background && !plain)
      plain = &d;
  auto meets = [](const RowRange& a, const RowRange& b) {
    return a.mem == b.mem && a.lo <= b.hi && b.lo <= a.hi;
  };
  // Whether `x` (another instruction's access) conflicts with the array's rows `g`: acc
  // rows in any way, act and weight rows by a write.
  const std::string acc = isa::mem::kAcc;
  auto conflicts = [&](const std::vector<RowRange>& g, const std::vector<RowRange>& x) {
    for (const RowRange& a : g)
      for (const RowRange& b : x)
        if (meets(a, b) && (a.mem == acc || b.write))
          return true;
    return false;
  };
  std::vector<RowRange> dmas; // their SRAM rows (their DRAM bytes meet no array row)
  for (const Instruction& in : bin_.code)
    if (in.desc().cls->id == isa::SemanticClass::DmaLoad ||
        in.desc().cls->id == isa::SemanticClass::DmaStore)
      for (const RowRange& r : footprint(isa_, in))
        if (r.mem != kDram)
          dmas.push_back(r);
  for (std::size_t i = first; i < bin_.code.size(); ++i) {
    Instruction& g = bin_.code[i];
    const bool dw = g.desc().cls->id == isa::SemanticClass::Depthwise;
    if (!g.desc().background || (g.desc().cls->id != isa::SemanticClass::Gemm && !dw))
      continue; // (another class on the array would need its own rows here)
    // Moves each walk to the lowest base that meets no DMA, if its own does.
    if (!footprint(isa_, g).empty()) {
      for (const ArrayWalk& w : arrayWalks(g)) {
        const isa::MemoryDesc& m = isa_.memory(w.mem);
        auto clear = [&](u64 b) {
          for (const RowRange& d : dmas)
            if (meets({w.mem, b, b + w.ext, false}, d) && (w.mem == acc || d.write))
              return false;
          return true;
        };
        if (clear(u64(g.get(w.addr))))
          continue;
        for (u64 b = 0; b + w.ext < m.rows() && i64(b) <= maxOf(g, w.addr); ++b)
          if (clear(b)) {
            g.set(w.addr, i64(b));
            break;
          }
      }
    }
    // Else a plain gemm (a depthwise instruction has no plain kind: a compute sync).
    const isa::InstrDesc* instead = dw ? sync : plain ? plain : sync;
    if (conflicts(footprint(isa_, g), dmas) && instead) {
      Instruction p(*instead);
      for (const auto& f : p.desc().fields)
        if (g.has(f.role))
          set(p, f.role, g.get(f.role));
      if (instead == sync)
        p.set(isa::role::kEngine, static_cast<i64>(isa::Engine::Compute));
      g = p;
      continue;
    }
    const std::vector<RowRange> rows = footprint(isa_, g);
    for (std::size_t j = i + 1; j < bin_.code.size(); ++j) {
      const Instruction& x = bin_.code[j];
      const isa::SemanticClass c = x.desc().cls->id;
      if (x.engine() != isa::Engine::Compute)
        continue;
      if (x.desc().cls->on_array || c == isa::SemanticClass::Sync || c == isa::SemanticClass::Halt)
        break; // these wait for the array
      if (conflicts(rows, footprint(isa_, x)) && sync) {
        Instruction w(*sync);
        w.set(isa::role::kEngine, static_cast<i64>(isa::Engine::Compute));
        bin_.code.insert(bin_.code.begin() + std::ptrdiff_t(j), w);
        break;
      }
    }
  }
}

isa::Binary Generator::run() {
  paramReady_ = paramPrologue();
  const u64 constBytes = std::max<u64>(4096, bin_.constants.size());
  bin_.memmap.push_back({"const", isa::RegionKind::Const, 0, constBytes});
  scratch_ = (constBytes + 0xFFFF) / 0x10000 * 0x10000;
  bin_.memmap.push_back({"scratch", isa::RegionKind::Scratch, scratch_, o_.scratch_bytes});
  std::vector<const isa::InstrDesc*> pool;
  for (const auto& d : isa_.instructions())
    if (d.cls->id != isa::SemanticClass::Halt &&
        (paramReady_ || (d.cls->id != isa::SemanticClass::Requantize &&
                         d.cls->id != isa::SemanticClass::QuantizedAdd)))
      pool.push_back(&d);
  const std::size_t first = bin_.code.size();
  const std::size_t n = std::size_t(e_.below(o_.max_instructions + 1));
  for (std::size_t i = 0; i < n && !pool.empty(); ++i) {
    const isa::InstrDesc& d = *pool[std::size_t(e_.below(pool.size()))];
    Instruction in(d);
    const isa::SemanticClass cls = d.cls->id;
    if (cls == isa::SemanticClass::DmaLoad || cls == isa::SemanticClass::DmaStore) {
      dma(in, cls == isa::SemanticClass::DmaLoad);
    } else if (cls == isa::SemanticClass::Normalize) {
      normalize(in);
    } else if (cls == isa::SemanticClass::Depthwise) {
      depthwise(in);
    } else if (cls == isa::SemanticClass::Sync) {
      set(in, isa::role::kEngine,
          d.field(isa::role::kEngine)
              ->names[e_.below(d.field(isa::role::kEngine)->names.size())]
              .second);
    } else {
      loops(in);
      if (in.has(isa::role::kReset))
        set(in, isa::role::kReset, e_.chance(4));
      if (in.has(isa::role::kTable))
        set(in, isa::role::kTable, e_.range(0, maxOf(in, isa::role::kTable)));
      for (const char* imm :
           {isa::role::kImm1, isa::role::kZeroPoint, isa::role::kLo, isa::role::kHi})
        if (in.has(imm))
          set(in, imm, e_.range(-128, 127));
      if (in.has(isa::role::kImm0) && d.op != "shift")
        set(in, isa::role::kImm0, e_.range(-128, 127));
    }
    tokens(in);
    bin_.code.push_back(in);
  }
  backgroundRaceFree(first);
  if (bin_.code.size() > first)
    bin_.debug.push_back(
        {std::uint32_t(first), std::uint32_t(bin_.code.size() - first), "generated"});
  for (const auto& d : isa_.instructions())
    if (d.cls->id == isa::SemanticClass::Halt) {
      bin_.code.emplace_back(d);
      break;
    }
  return bin_;
}

} // namespace

isa::Binary generate(const isa::IsaDescription& isa, const std::uint8_t* entropy, std::size_t size,
                     const GenOptions& opts) {
  Entropy e(entropy, size);
  Generator g(isa, e, opts);
  isa::Binary b = g.run();
  isa::validateBinary(b, isa, "<generated>");
  return b;
}

isa::Binary generate(const isa::IsaDescription& isa, std::uint64_t seed, const GenOptions& opts) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> bytes(4096);
  for (auto& b : bytes)
    b = std::uint8_t(rng());
  return generate(isa, bytes.data(), bytes.size(), opts);
}

} // namespace ember::progen
