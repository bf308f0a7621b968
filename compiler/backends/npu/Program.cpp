#include "Program.h"
#include "ember/isa/roles.h"
#include "ember/npu/Compile.h"

#include "ember/support/Error.h"

#include <algorithm>

namespace ember::npu {

Program::Program(const Target& t, int depth, size_t maxInstructions)
    : t_(t), depth_(std::max(1, depth)), programDepth_(depth_), maxInstructions_(maxInstructions) {}

void Program::setLayerDepth(int d) {
  if (stepsSinceBarrier_ != 0 || pending_ || d < 1 || d > programDepth_)
    throw Error("NPU backend", "internal: a layer's depth changes before its first step only");
  depth_ = d;
}

void Program::set(isa::Instruction& in, const std::string& role, int64_t v) {
  const isa::FieldDesc* f = in.desc().field(role);
  if (!f)
    throw Error("NPU backend: instruction '" + in.name() + "'", "has no field '" + role + "'");
  if (v < f->minValue() || v > f->maxValue())
    throw Error("NPU backend: instruction '" + in.name() + "'",
                "field '" + role + "' cannot hold " + std::to_string(v) + " (range " +
                    std::to_string(f->minValue()) + ".." + std::to_string(f->maxValue()) + ")");
  in.set(role, v);
}

namespace {
/// A DMA of either direction: the two classes share their roles.
isa::Instruction dma(const isa::InstrDesc& desc, int64_t mem, int64_t sramAddr, uint64_t dramByte,
                     const int64_t (&sizes)[3], int64_t stride1, int64_t stride2) {
  isa::Instruction in(desc);
  const std::pair<const char*, int64_t> fields[] = {
      {isa::role::kSram, mem},
      {isa::role::kSramAddr, sramAddr},
      {isa::role::kDramAddr, static_cast<int64_t>(dramByte)},
      {isa::role::kSize0, sizes[0]},
      {isa::role::kSize1, sizes[1]},
      {isa::role::kSize2, sizes[2]},
      {isa::role::kStride1, stride1},
      {isa::role::kStride2, stride2}};
  for (const auto& [role, v] : fields)
    Program::set(in, role, v);
  return in;
}
} // namespace

isa::Instruction Program::dmaLoad(Mem m, int64_t sramAddr, uint64_t dramByte, int64_t size0,
                                  int64_t size1, int64_t size2, int64_t stride1,
                                  int64_t stride2) const {
  return dma(t_.dmaLoad(), t_.memId(m), sramAddr, dramByte, {size0, size1, size2}, stride1,
             stride2);
}

isa::Instruction Program::dmaStore(Mem m, int64_t sramAddr, uint64_t dramByte, int64_t size0,
                                   int64_t size1, int64_t size2, int64_t stride1,
                                   int64_t stride2) const {
  return dma(t_.dmaStore(), t_.memId(m), sramAddr, dramByte, {size0, size1, size2}, stride1,
             stride2);
}

void Program::setPads(isa::Instruction& in, int64_t left, int64_t right, int64_t top,
                      int64_t bottom, int64_t value) {
  set(in, isa::role::kPadLeft, left);
  set(in, isa::role::kPadRight, right);
  set(in, isa::role::kPadTop, top);
  set(in, isa::role::kPadBottom, bottom);
  set(in, isa::role::kPadValue, value);
}

namespace {
/// Splits a contiguous run of rows into boxes size0 x size1 (stride1 = size0).
template <typename Make>
std::vector<isa::Instruction> contiguous(const isa::InstrDesc& d, int64_t sramAddr,
                                         uint64_t dramByte, int64_t rows, int64_t rowBytes,
                                         Make make) {
  std::vector<isa::Instruction> out;
  const int64_t max0 = Target::maxOf(d, isa::role::kSize0),
                max1 = Target::maxOf(d, isa::role::kSize1);
  const int64_t maxStride = Target::maxOf(d, isa::role::kStride1);
  const int64_t s0 = std::min(max0, maxStride);
  int64_t done = 0;
  while (done < rows) {
    const int64_t left = rows - done;
    int64_t size0 = std::min(left, s0), size1 = std::min(max1, left / size0);
    out.push_back(make(sramAddr + done, dramByte + uint64_t(done * rowBytes), size0, size1,
                       int64_t(1), size0, int64_t(0)));
    done += size0 * size1;
  }
  return out;
}
} // namespace

std::vector<isa::Instruction> Program::loadRows(Mem m, int64_t sramAddr, uint64_t dramByte,
                                                int64_t rows) const {
  return contiguous(t_.dmaLoad(), sramAddr, dramByte, rows, t_.rowBytes(m),
                    [&](int64_t sa, uint64_t da, int64_t a, int64_t b, int64_t c, int64_t s1,
                        int64_t s2) { return dmaLoad(m, sa, da, a, b, c, s1, s2); });
}

std::vector<isa::Instruction> Program::storeRows(Mem m, int64_t sramAddr, uint64_t dramByte,
                                                 int64_t rows) const {
  return contiguous(t_.dmaStore(), sramAddr, dramByte, rows, t_.rowBytes(m),
                    [&](int64_t sa, uint64_t da, int64_t a, int64_t b, int64_t c, int64_t s1,
                        int64_t s2) { return dmaStore(m, sa, da, a, b, c, s1, s2); });
}

std::vector<isa::Instruction> Program::groups(bool load, Mem m, int64_t sramAddr, uint64_t dramByte,
                                              int64_t groupRows, int64_t n,
                                              int64_t strideRows) const {
  const isa::InstrDesc& d = load ? t_.dmaLoad() : t_.dmaStore();
  const int64_t rowBytes = t_.rowBytes(m);
  std::vector<isa::Instruction> out;
  if (groupRows > Target::maxOf(d, isa::role::kSize0) ||
      strideRows > Target::maxOf(d, isa::role::kStride1)) {
    for (int64_t k = 0; k < n; ++k) {
      const int64_t sa = sramAddr + k * groupRows;
      const uint64_t da = dramByte + uint64_t(k * strideRows * rowBytes);
      for (auto& in : load ? loadRows(m, sa, da, groupRows) : storeRows(m, sa, da, groupRows))
        out.push_back(in);
    }
    return out;
  }
  const int64_t max1 = Target::maxOf(d, isa::role::kSize1);
  for (int64_t k = 0; k < n; k += max1) {
    const int64_t c = std::min(max1, n - k);
    const int64_t sa = sramAddr + k * groupRows;
    const uint64_t da = dramByte + uint64_t(k * strideRows * rowBytes);
    out.push_back(load ? dmaLoad(m, sa, da, groupRows, c, 1, strideRows, 0)
                       : dmaStore(m, sa, da, groupRows, c, 1, strideRows, 0));
  }
  return out;
}

namespace {
/// Sets the walk of one operand: `<name>_addr`, `<name>_s0`, `<name>_s1`.
/// The walk of operand `name`: its first row, its inner stride (role `name` + `inner`:
/// "_s0", or normalize's "_sb") and its outer stride.
void setWalk(isa::Instruction& in, const std::string& name, const Program::Walk& w,
             const char* inner = "_s0") {
  Program::set(in, name + "_addr", w.addr);
  Program::set(in, name + inner, w.s0);
  Program::set(in, name + "_s1", w.s1);
}
/// The loop counts every vector-class instruction has.
void setLoop(isa::Instruction& in, int64_t n0, int64_t n1) {
  Program::set(in, isa::role::kN0, n0);
  Program::set(in, isa::role::kN1, n1);
}
} // namespace

isa::Instruction Program::vecBinary(const std::string& op, Mem dstMem, Mem srcMem, Walk dst, Walk a,
                                    Walk b, int64_t n0, int64_t n1) const {
  isa::Instruction in(t_.vecBinary(op));
  set(in, isa::role::kDstMem, t_.memId(dstMem));
  set(in, isa::role::kSrcMem, t_.memId(srcMem));
  setWalk(in, "dst", dst);
  setWalk(in, "src0", a);
  setWalk(in, "src1", b);
  setLoop(in, n0, n1);
  return in;
}

isa::Instruction Program::vecUnary(const std::string& op, Mem dstMem, Mem srcMem, Walk dst,
                                   Walk src, int64_t n0, int64_t n1, int64_t imm0,
                                   int64_t imm1) const {
  isa::Instruction in(t_.vecUnary(op));
  set(in, isa::role::kDstMem, t_.memId(dstMem));
  set(in, isa::role::kSrcMem, t_.memId(srcMem));
  setWalk(in, "dst", dst);
  setWalk(in, "src", src);
  setLoop(in, n0, n1);
  set(in, isa::role::kImm0, imm0);
  set(in, isa::role::kImm1, imm1);
  return in;
}

isa::Instruction Program::requant(Walk dst, Walk src, int64_t paramRow, int64_t zp, int64_t lo,
                                  int64_t hi, int64_t n0, int64_t n1) const {
  isa::Instruction in(t_.requant());
  setWalk(in, "dst", dst);
  setWalk(in, "src", src);
  setLoop(in, n0, n1);
  set(in, isa::role::kParamAddr, paramRow);
  set(in, isa::role::kZeroPoint, zp);
  set(in, isa::role::kLo, lo);
  set(in, isa::role::kHi, hi);
  return in;
}

isa::Instruction Program::lut(int64_t table, Walk dst, Walk src, int64_t n0, int64_t n1) const {
  isa::Instruction in(t_.lut());
  set(in, isa::role::kTable, table);
  setWalk(in, "dst", dst);
  setWalk(in, "src", src);
  setLoop(in, n0, n1);
  return in;
}

isa::Instruction Program::normalize(const isa::InstrDesc& d, Walk dst, Walk src, int64_t paramRow,
                                    int64_t n0, int64_t n1) const {
  isa::Instruction in(d);
  set(in, isa::role::kBlockAddr, paramRow);
  setWalk(in, "dst", dst, "_sb");
  setWalk(in, "src", src, "_sb");
  set(in, isa::role::kLen, n0);
  set(in, isa::role::kN1, n1);
  return in;
}

isa::Instruction Program::gemm(const GemmLoops& g) const {
  isa::Instruction in(t_.gemm());
  set(in, isa::role::kReset, g.reset ? 1 : 0);
  set(in, isa::role::kActAddr, g.act);
  set(in, isa::role::kAccAddr, g.acc);
  set(in, isa::role::kWgtAddr, g.wgt);
  set(in, isa::role::kN0, g.n0);
  set(in, isa::role::kN1, g.n1);
  set(in, isa::role::kN2, g.n2);
  set(in, isa::role::kActS0, g.actS0);
  set(in, isa::role::kActS1, g.actS1);
  set(in, isa::role::kActS2, g.actS2);
  set(in, isa::role::kAccS0, g.accS0);
  set(in, isa::role::kAccS1, g.accS1);
  set(in, isa::role::kAccS2, g.accS2);
  set(in, isa::role::kWgtS2, g.wgtS2);
  return in;
}

isa::Instruction Program::qadd(Walk dst, Walk a, Walk b, int64_t paramRow, int64_t n0,
                               int64_t n1) const {
  isa::Instruction in(*t_.quantizedAdd());
  setWalk(in, "dst", dst);
  setWalk(in, "src0", a);
  setWalk(in, "src1", b);
  setLoop(in, n0, n1);
  set(in, isa::role::kParamAddr, paramRow);
  return in;
}

std::vector<std::array<int64_t, 3>> Program::rowChunks(const isa::InstrDesc& d, int64_t rows) {
  return rowChunks({&d}, rows);
}

std::vector<std::array<int64_t, 3>>
Program::rowChunks(std::initializer_list<const isa::InstrDesc*> ds, int64_t rows) {
  std::vector<std::array<int64_t, 3>> out;
  int64_t max0 = INT64_MAX, max1 = INT64_MAX;
  for (const isa::InstrDesc* d : ds) {
    max0 = std::min(max0, Target::maxOf(*d, isa::role::kN0));
    max1 = std::min(max1, Target::maxOf(*d, isa::role::kN1));
  }
  int64_t done = 0;
  while (done < rows) {
    const int64_t left = rows - done;
    const int64_t n0 = std::min(left, max0), n1 = std::min(max1, left / n0);
    out.push_back({done, n0, n1});
    done += n0 * n1;
  }
  return out;
}

isa::Instruction Program::syncOn(isa::Engine e) const {
  isa::Instruction in(t_.sync());
  set(in, isa::role::kEngine, static_cast<int64_t>(e));
  return in;
}

void Program::beginLayer(const std::string& name) {
  layer_ = name;
  layerFirst_ = code_.size();
  layerSteps_ = 0;
  layerStart_ = now_;
  loadEnd_.clear();
  computeEnd_.clear();
  storeEnd_.clear();
}

void Program::reserve(size_t n) const {
  // A description whose SRAMs are far too small for a layer can call for billions of
  // one-row steps: refuse in time, naming the layer, rather than exhausting the host.
  if (code_.size() + n > maxInstructions_)
    throw ProgramTooLong("NPU backend, layer '" + layer_ + "'",
                         "the program exceeds " + std::to_string(maxInstructions_) +
                             " instructions (the layers before this one took " +
                             std::to_string(layerFirst_) + ")");
}

void Program::push(const isa::Instruction& in) {
  reserve(1);
  code_.push_back(in);
}

void Program::emit(std::vector<isa::Instruction>& v) {
  reserve(v.size());
  for (auto& in : v)
    code_.push_back(std::move(in));
  v.clear();
}

void Program::emitPending() {
  if (!pending_)
    return;
  emit(pending_->computes);
  emit(pending_->stores);
  pending_.reset();
}

size_t Program::placeTails(Step& s) {
  size_t prevEnd = 0;
  if (!tail_.empty()) {
    // After this step's first gemm (which starts once the array has finished the last
    // step's gemms), or after a join before anything else.
    const bool gemmFirst = !s.computes.empty() && s.computes.front().desc().cls->on_array;
    std::vector<isa::Instruction> v;
    if (!gemmFirst)
      v.push_back(syncOn(isa::Engine::Compute));
    for (auto& in : tail_)
      v.push_back(std::move(in));
    const size_t at = gemmFirst ? 1 : 0;
    prevEnd = at + v.size();
    s.computes.insert(s.computes.begin() + std::ptrdiff_t(at), std::make_move_iterator(v.begin()),
                      std::make_move_iterator(v.end()));
    tail_.clear();
  }
  if (s.tail.empty())
    return prevEnd;
  // Deferring needs a second buffer (the next step's loads must not wait for this tail)
  // and room in the store queue for this step's stores until the tail's token comes.
  const bool defer =
      depth_ >= 2 && s.stores.size() * 2 <= t_.isa().hw().queues.store_depth && !s.computes.empty();
  if (!defer) {
    s.computes.push_back(syncOn(isa::Engine::Compute));
    for (auto& in : s.tail)
      s.computes.push_back(std::move(in));
    s.tail.clear();
  }
  return prevEnd;
}

void Program::flushTail() {
  if (tail_.empty() || !pending_)
    return;
  std::vector<isa::Instruction> v{syncOn(isa::Engine::Compute)};
  for (auto& in : tail_)
    v.push_back(std::move(in));
  tail_.clear();
  // The tail runs after the pending step's computes: it moves their estimated end.
  if (!computeEnd_.empty()) {
    double at = computeEnd_.back();
    for (const auto& in : v)
      at += t_.cyclesOf(in);
    computeEnd_.back() = at;
  }
  for (auto& in : v)
    pending_->computes.push_back(std::move(in));
}

void Program::joinGemms(Step& s) const {
  std::vector<isa::Instruction> joined;
  for (auto& in : s.computes) {
    const bool gemm = in.desc().cls->id == isa::SemanticClass::Gemm;
    joined.push_back(std::move(in));
    if (gemm)
      joined.push_back(syncOn(isa::Engine::Compute));
  }
  s.computes = std::move(joined);
}

void Program::setTokens(Step& s, size_t prevTailEnd) const {
  if (s.loads.empty())
    s.loads.push_back(syncOn(isa::Engine::Load));
  if (s.computes.empty())
    s.computes.push_back(syncOn(isa::Engine::Compute));
  if (s.stores.empty())
    s.stores.push_back(syncOn(isa::Engine::Store));
  const int64_t k = stepsSinceBarrier_;
  const bool reuse = k >= depth_;
  if (reuse)
    s.loads.front().set(isa::role::kPopNext, 1);
  s.loads.back().set(isa::role::kPushNext, 1);
  s.computes.front().set(isa::role::kPopPrev, 1);
  if (reuse)
    s.computes.front().set(isa::role::kPopNext, 1);
  // This step's tokens: on its deferred tail, else on its last compute (a sync when that
  // instruction carries the previous step's tokens or is a background gemm).
  if (s.tail.empty() && (s.computes.size() == prevTailEnd || s.computes.back().desc().background))
    s.computes.push_back(syncOn(isa::Engine::Compute));
  isa::Instruction& carrier = s.tail.empty() ? s.computes.back() : s.tail.back();
  carrier.set(isa::role::kPushPrev, 1);
  carrier.set(isa::role::kPushNext, 1);
  s.stores.front().set(isa::role::kPopPrev, 1);
  s.stores.back().set(isa::role::kPushPrev, 1);
}

double Program::runEstimate(double start, const std::vector<isa::Instruction>& v, size_t mark,
                            double* marked) {
  double at = start, arrayFree = start;
  for (size_t n = 0; n < v.size(); ++n) {
    const isa::Instruction& in = v[n];
    const isa::SemanticClass cls = in.desc().cls->id;
    if (cls == isa::SemanticClass::DmaLoad || cls == isa::SemanticClass::DmaStore) {
      at = t_.dmaEnd(in, at, busFree_);
    } else {
      const isa::InstrDesc& d = in.desc();
      const double cycles = t_.cyclesOf(in);
      if (isa::timing::waitsForArray(d))
        at = std::max(at, arrayFree);
      if (d.cls->on_array)
        arrayFree = at + cycles;
      at += cycles < 1e19 ? double(isa::timing::engineCycles(d, uint64_t(cycles))) : cycles;
    }
    if (marked && n + 1 == mark)
      *marked = at;
  }
  return std::max(at, arrayFree);
}

void Program::estimateStep(const Step& s, size_t prevTailEnd) {
  // Bus order as on the machine: the loads of step k, the stores of step k - 1 (which
  // wait for its compute, and for its tail in this step's), then the compute of step k.
  const size_t i = loadEnd_.size();
  const size_t D = static_cast<size_t>(depth_);
  const double base = now_;
  const double l = runEstimate(
      std::max(i ? loadEnd_[i - 1] : base, i >= D ? computeEnd_[i - D] : base), s.loads);
  loadEnd_.push_back(l);
  // The stores of step k - 1 wait for its tail when this step's computes hold it: their
  // estimate then follows this step's compute (which books no DRAM).
  const bool prevTail = prevTailEnd > 0 && i > 0;
  if (!prevTail)
    estimatePendingStores(base);
  double tailEnd = 0;
  const double start =
      std::max({i ? computeEnd_[i - 1] : base, l, i >= D ? storeEnd_[i - D] : base});
  const double c = runEstimate(start, s.computes, prevTailEnd, &tailEnd);
  if (prevTail) {
    computeEnd_[i - 1] = std::max(computeEnd_[i - 1], tailEnd);
    estimatePendingStores(base);
  }
  computeEnd_.push_back(c);
  pendingStoreEstimate_ = s.stores;
}

void Program::emitStep(Step s, size_t prevTailEnd) {
  // Stream order: loads of this step before the compute of the previous one, so the
  // load engine runs ahead (only when a second buffer exists: with one buffer the load
  // waits for that compute, which must then be fetched first). When that compute holds
  // the tail whose token these loads wait for, and they might not fit the load queue,
  // the compute goes first.
  if (depth_ >= 2) {
    const bool fits = s.loads.size() * 2 <= t_.isa().hw().queues.load_depth;
    if (pendingHasTail_ && !fits) {
      emitPending();
      emit(s.loads);
    } else {
      emit(s.loads);
      emitPending();
    }
    pending_ = Step{{}, std::move(s.computes), std::move(s.stores), {}};
    pendingHasTail_ = prevTailEnd > 0;
    tail_ = std::move(s.tail);
  } else {
    emit(s.loads);
    emit(s.computes);
    emit(s.stores);
  }
}

void Program::commitStep(Step s) {
  if (t_.gemmNeedsJoin())
    joinGemms(s);
  const size_t prevTailEnd = placeTails(s);
  setTokens(s, prevTailEnd);
  estimateStep(s, prevTailEnd);
  emitStep(std::move(s), prevTailEnd);
  ++stepsSinceBarrier_;
  ++layerSteps_;
}

void Program::estimatePendingStores(double base) {
  if (storeEnd_.size() >= computeEnd_.size())
    return;
  const size_t k = storeEnd_.size();
  double at = std::max(k ? storeEnd_[k - 1] : base, computeEnd_[k]);
  for (const auto& in : pendingStoreEstimate_) {
    if (in.desc().cls->id != isa::SemanticClass::DmaStore) {
      at += t_.cyclesOf(in);
      continue;
    }
    at = t_.dmaEnd(in, at, busFree_);
  }
  storeEnd_.push_back(at);
  pendingStoreEstimate_.clear();
}

void Program::barrier() {
  flushTail();
  emitPending();
  estimatePendingStores(now_);
  const int64_t m = std::min<int64_t>(stepsSinceBarrier_, depth_);
  if (m > 0) {
    // Compute takes every outstanding store token (all stores done), then releases the
    // load engine, which takes the outstanding buffer-free tokens and that one.
    for (int64_t j = 0; j < m; ++j) {
      isa::Instruction s = syncOn(isa::Engine::Compute);
      s.set(isa::role::kPopNext, 1);
      if (j == m - 1)
        s.set(isa::role::kPushPrev, 1);
      push(s);
    }
    for (int64_t j = 0; j <= m; ++j) {
      isa::Instruction s = syncOn(isa::Engine::Load);
      s.set(isa::role::kPopNext, 1);
      push(s);
    }
  }
  advanceClock(m);
}

void Program::advanceClock(int64_t syncs) {
  double end = now_;
  if (!storeEnd_.empty())
    end = std::max({storeEnd_.back(), computeEnd_.back(), loadEnd_.back()});
  now_ = end + (syncs > 0 ? double(syncs + 1) * t_.sync().timingOf(isa::timing_key::kIssue) : 0);
  stepsSinceBarrier_ = 0;
  loadEnd_.clear();
  computeEnd_.clear();
  storeEnd_.clear();
}

LayerTiming Program::endLayer(bool last) {
  if (!last || stepsSinceBarrier_ == 0) {
    barrier();
  } else {
    flushTail();
    emitPending();
    estimatePendingStores(now_);
    const int64_t m = std::min<int64_t>(stepsSinceBarrier_, depth_);
    // The end of the program: compute takes the outstanding store tokens, the last one
    // by `finish` itself; the load engine takes its outstanding buffer-free tokens.
    for (int64_t j = 0; j < m; ++j) {
      isa::Instruction s = syncOn(isa::Engine::Load);
      s.set(isa::role::kPopNext, 1);
      push(s);
    }
    for (int64_t j = 0; j + 1 < m; ++j) {
      isa::Instruction s = syncOn(isa::Engine::Compute);
      s.set(isa::role::kPopNext, 1);
      push(s);
    }
    isa::Instruction f(t_.halt());
    f.set(isa::role::kPopNext, 1);
    push(f);
    finished_ = true;
    advanceClock(m);
  }
  LayerTiming lt;
  lt.cycles = now_ - layerStart_;
  lt.instructions = static_cast<int64_t>(code_.size() - layerFirst_);
  lt.steps = layerSteps_;
  if (lt.instructions > 0)
    debug_.push_back(
        {static_cast<uint32_t>(layerFirst_), static_cast<uint32_t>(lt.instructions), layer_});
  loadEnd_.clear();
  computeEnd_.clear();
  storeEnd_.clear();
  depth_ = programDepth_;
  return lt;
}

void Program::finish() {
  flushTail();
  emitPending();
  if (finished_)
    return;
  // The last layer ended with a barrier (or there was none): every FIFO is empty.
  isa::Instruction f(t_.halt());
  push(f);
  now_ += t_.halt().timingOf(isa::timing_key::kIssue);
}

} // namespace ember::npu
