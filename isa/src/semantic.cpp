// The built-in semantic classes and their registry.
#include "ember/isa/semantic.h"

#include "ember/isa/description.h"
#include "ember/isa/error.h"
#include "ember/isa/roles.h"

#include <string>

namespace ember::isa {

const char* engineName(Engine e) {
  switch (e) {
  case Engine::Load:
    return "load";
  case Engine::Compute:
    return "compute";
  case Engine::Store:
    return "store";
  }
  return "?";
}

const RoleSpec* ClassSpec::findRole(const std::string& role) const {
  for (const auto& r : roles)
    if (r.name == role)
      return &r;
  return nullptr;
}

void Checker::fail(const std::string& path, const std::string& reason) const {
  throw Error(file_, path, reason);
}

namespace {

RoleSpec role(std::string name, RoleKind kind, std::string doc, unsigned min_width = 1) {
  RoleSpec r;
  r.name = std::move(name);
  r.kind = kind;
  r.doc = std::move(doc);
  r.min_width = min_width;
  return r;
}

RoleSpec addr(std::string name, std::string memory, std::string select, std::string doc) {
  RoleSpec r = role(std::move(name), RoleKind::Addr, std::move(doc));
  r.memory = std::move(memory);
  r.select_role = std::move(select);
  return r;
}

RoleSpec memsel(std::string name, std::vector<std::string> choices, std::string doc) {
  RoleSpec r = role(std::move(name), RoleKind::MemSelect, std::move(doc));
  r.choices = std::move(choices);
  return r;
}

void addTokens(std::vector<RoleSpec>& roles) {
  roles.push_back(
      role(role::kPopPrev, RoleKind::Flag, "wait for a token from the previous engine"));
  roles.push_back(role(role::kPopNext, RoleKind::Flag, "wait for a token from the next engine"));
  roles.push_back(role(role::kPushPrev, RoleKind::Flag, "send a token to the previous engine"));
  roles.push_back(role(role::kPushNext, RoleKind::Flag, "send a token to the next engine"));
}

void addLoop2(std::vector<RoleSpec>& roles, const std::vector<std::string>& operands) {
  roles.push_back(role(role::kN0, RoleKind::Count, "inner loop count"));
  roles.push_back(role(role::kN1, RoleKind::Count, "outer loop count"));
  for (const auto& o : operands) {
    roles.push_back(role(o + "_s0", RoleKind::Stride, "row stride of " + o + " in the inner loop"));
    roles.push_back(role(o + "_s1", RoleKind::Stride, "row stride of " + o + " in the outer loop"));
  }
}

const std::vector<std::string> kVectorTimingKeys = {timing_key::kIssue, timing_key::kCyclesPerRow,
                                                    timing_key::kPipelineLatency};
const std::vector<std::string> kVectorEnergyKeys = {energy_key::kIssue, energy_key::kPerLane};

ClassSpec dmaClass(bool load) {
  ClassSpec c;
  c.name = load ? cls::kDmaLoad : cls::kDmaStore;
  c.id = load ? SemanticClass::DmaLoad : SemanticClass::DmaStore;
  c.engine = load ? Engine::Load : Engine::Store;
  c.doc = load ? "DRAM -> SRAM copy of a 1-3-D strided box of rows, with padding"
               : "SRAM -> DRAM copy of a 1-3-D box of rows to strided DRAM";
  addTokens(c.roles);
  c.roles.push_back(memsel(role::kSram, {}, "SRAM (one of properties.memories)"));
  c.roles.push_back(addr(role::kSramAddr, "", role::kSram, "first SRAM row"));
  c.roles.push_back(
      role(role::kDramAddr, RoleKind::DramAddr, "DRAM byte address of the first row"));
  c.roles.push_back(role(role::kSize0, RoleKind::Count, "rows per line (contiguous in DRAM)"));
  c.roles.push_back(role(role::kSize1, RoleKind::Count, "lines per plane"));
  c.roles.push_back(role(role::kSize2, RoleKind::Count, "planes"));
  c.roles.push_back(role(role::kStride1, RoleKind::Stride, "DRAM distance between lines, in rows"));
  c.roles.push_back(
      role(role::kStride2, RoleKind::Stride, "DRAM distance between planes, in rows"));
  if (load) {
    c.roles.push_back(role(role::kPadLeft, RoleKind::Count, "padding rows before each line"));
    c.roles.push_back(role(role::kPadRight, RoleKind::Count, "padding rows after each line"));
    c.roles.push_back(role(role::kPadTop, RoleKind::Count, "padding lines before each plane"));
    c.roles.push_back(role(role::kPadBottom, RoleKind::Count, "padding lines after each plane"));
    c.roles.push_back(role(role::kPadValue, RoleKind::SignedImm, "byte written to padding", 8));
  }
  c.timing_keys = {timing_key::kIssue, timing_key::kSetup};
  c.energy_keys = {energy_key::kIssue, energy_key::kPerBurst};
  c.needs_memories = true;
  return c;
}

ClassSpec gemmClass() {
  ClassSpec c;
  c.name = cls::kGemm;
  c.id = SemanticClass::Gemm;
  c.doc = "weight-stationary matrix multiply over a 3-level affine loop nest";
  c.on_array = true;
  addTokens(c.roles);
  c.roles.push_back(role(role::kReset, RoleKind::Flag, "write zeros to the acc rows instead"));
  c.roles.push_back(addr(role::kActAddr, mem::kAct, "", "first activation row"));
  c.roles.push_back(addr(role::kAccAddr, mem::kAcc, "", "first accumulator row"));
  c.roles.push_back(addr(role::kWgtAddr, mem::kWeight, "", "first weight block"));
  c.roles.push_back(role(role::kN0, RoleKind::Count, "inner loop count"));
  c.roles.push_back(role(role::kN1, RoleKind::Count, "middle loop count"));
  c.roles.push_back(role(role::kN2, RoleKind::Count, "outer loop count (one weight block each)"));
  for (const char* o : {mem::kAct, mem::kAcc})
    for (int l = 0; l < 3; ++l)
      c.roles.push_back(role(std::string(o) + "_s" + std::to_string(l), RoleKind::Stride,
                             std::string(o) + " row stride of loop " + std::to_string(l)));
  c.roles.push_back(role(role::kWgtS2, RoleKind::Stride, "weight block stride of the outer loop"));
  c.timing_keys = {timing_key::kIssue, timing_key::kCyclesPerRow};
  c.energy_keys = {energy_key::kIssue};
  return c;
}

/// The RTL's depthwise datapath schedules a window's taps, one a cycle, before its first
/// output (docs/rtl/npu.md section 5.1): the instruction's fixed cycles must cover a whole
/// array's rows of taps.
void checkDepthwise(const IsaDescription& isa, const InstrDesc& d, Checker& ck) {
  const auto& mac = isa.hw().mac;
  const double fixed = d.timingOf(timing_key::kIssue) - 1 + mac.weight_load_cycles +
                       mac.fill_cycles + mac.drain_cycles;
  if (fixed < double(mac.rows) + 1)
    ck.fail(d.json_path + "/timing/issue",
            "a depthwise instruction needs issue - 1 + weight_load_cycles + fill_cycles + "
            "drain_cycles >= mac_array.rows + 1 = " +
                std::to_string(mac.rows + 1) + " cycles to schedule a window's taps (has " +
                std::to_string(static_cast<long long>(fixed)) + ")");
}

ClassSpec depthwiseClass() {
  ClassSpec c;
  c.name = cls::kDepthwise;
  c.id = SemanticClass::Depthwise;
  c.doc = "depthwise convolution on the MAC array: array row t takes kernel tap t, column c "
          "channel c";
  c.on_array = true;
  addTokens(c.roles);
  c.roles.push_back(addr(role::kActAddr, mem::kAct, "", "first output's first tap (act row)"));
  c.roles.push_back(addr(role::kAccAddr, mem::kAcc, "", "first output (acc row)"));
  c.roles.push_back(
      addr(role::kWgtAddr, mem::kWeight, "", "the block: row t holds tap t's weights"));
  c.roles.push_back(role(role::kN0, RoleKind::Count, "outputs per line"));
  c.roles.push_back(role(role::kN1, RoleKind::Count, "lines"));
  c.roles.push_back(role(role::kActS0, RoleKind::Stride, "act rows between outputs of a line"));
  c.roles.push_back(role(role::kActS1, RoleKind::Stride, "act rows between lines"));
  c.roles.push_back(role(role::kAccS0, RoleKind::Stride, "acc rows between outputs of a line"));
  c.roles.push_back(role(role::kAccS1, RoleKind::Stride, "acc rows between lines"));
  c.roles.push_back(role(role::kKh, RoleKind::Count, "kernel rows"));
  c.roles.push_back(role(role::kKw, RoleKind::Count, "kernel columns"));
  c.roles.push_back(role(role::kTapS0, RoleKind::Stride, "act rows between kernel columns"));
  c.roles.push_back(role(role::kTapS1, RoleKind::Stride, "act rows between kernel rows"));
  c.timing_keys = {timing_key::kIssue, timing_key::kCyclesPerRow};
  c.energy_keys = {energy_key::kIssue};
  c.extra_check = checkDepthwise;
  return c;
}

ClassSpec vectorBinaryClass() {
  ClassSpec c;
  c.name = cls::kVectorBinary;
  c.id = SemanticClass::VectorBinary;
  c.doc = "dst = op(src0, src1) lane-wise over a 2-level strided loop";
  addTokens(c.roles);
  c.roles.push_back(memsel(role::kDstMem, {mem::kAct, mem::kAcc}, "memory of dst"));
  c.roles.push_back(memsel(role::kSrcMem, {mem::kAct, mem::kAcc}, "memory of src0 and src1"));
  c.roles.push_back(addr(role::kDstAddr, "", role::kDstMem, "first dst row"));
  c.roles.push_back(addr(role::kSrc0Addr, "", role::kSrcMem, "first src0 row"));
  c.roles.push_back(addr(role::kSrc1Addr, "", role::kSrcMem, "first src1 row"));
  addLoop2(c.roles, {"dst", "src0", "src1"});
  c.timing_keys = kVectorTimingKeys;
  c.energy_keys = kVectorEnergyKeys;
  c.op_choices = {"add", "sub", "mul", "min", "max"};
  return c;
}

ClassSpec vectorUnaryClass() {
  ClassSpec c;
  c.name = cls::kVectorUnary;
  c.id = SemanticClass::VectorUnary;
  c.doc = "dst = op(src, imm0, imm1) lane-wise over a 2-level strided loop";
  addTokens(c.roles);
  c.roles.push_back(memsel(role::kDstMem, {mem::kAct, mem::kAcc}, "memory of dst"));
  c.roles.push_back(memsel(role::kSrcMem, {mem::kAct, mem::kAcc}, "memory of src"));
  c.roles.push_back(addr(role::kDstAddr, "", role::kDstMem, "first dst row"));
  c.roles.push_back(addr(role::kSrcAddr, "", role::kSrcMem, "first src row"));
  addLoop2(c.roles, {"dst", "src"});
  c.roles.push_back(role(role::kImm0, RoleKind::SignedImm, "shift amount / clamp low bound", 8));
  c.roles.push_back(role(role::kImm1, RoleKind::SignedImm, "clamp high bound", 8));
  c.timing_keys = kVectorTimingKeys;
  c.energy_keys = kVectorEnergyKeys;
  c.op_choices = {"shift", "clamp", "copy"};
  return c;
}

ClassSpec requantizeClass() {
  ClassSpec c;
  c.name = cls::kRequantize;
  c.id = SemanticClass::Requantize;
  c.doc = "acc int32 -> act int8 with per-channel multiplier/shift, zero point, clamp";
  addTokens(c.roles);
  c.roles.push_back(addr(role::kDstAddr, mem::kAct, "", "first act row written"));
  c.roles.push_back(addr(role::kSrcAddr, mem::kAcc, "", "first acc row read"));
  c.roles.push_back(addr(role::kParamAddr, mem::kParam, "", "param row of M (row + 1 holds S)"));
  c.roles.push_back(role(role::kZeroPoint, RoleKind::SignedImm, "output zero point", 8));
  c.roles.push_back(role(role::kLo, RoleKind::SignedImm, "lower clamp bound", 8));
  c.roles.push_back(role(role::kHi, RoleKind::SignedImm, "upper clamp bound", 8));
  addLoop2(c.roles, {"dst", "src"});
  c.timing_keys = kVectorTimingKeys;
  c.energy_keys = kVectorEnergyKeys;
  return c;
}

/// A class whose scalars sit in lanes 0..3 of parameter rows (one int32 per vector lane)
/// needs at least 4 lanes.
void requireFourLanes(const IsaDescription& isa, const InstrDesc& d, Checker& ck,
                      const std::string& what, const std::string& row) {
  if (isa.hw().vector.lanes < 4)
    ck.fail(d.json_path, what + " reads 4 int32 lanes of " + row + "; the vector unit has " +
                             std::to_string(isa.hw().vector.lanes) + " lanes");
}

void checkQuantizedAdd(const IsaDescription& isa, const InstrDesc& d, Checker& ck) {
  requireFourLanes(isa, d, ck, "quantized-add", "a param row");
}

ClassSpec quantizedAddClass() {
  ClassSpec c;
  c.name = cls::kQuantizedAdd;
  c.id = SemanticClass::QuantizedAdd;
  c.doc = "act int8 = requantized (src0 - zp0) * M0 + (src1 - zp1) * M1, lane-wise over a "
          "2-level strided loop";
  addTokens(c.roles);
  c.roles.push_back(addr(role::kDstAddr, mem::kAct, "", "first act row written"));
  c.roles.push_back(addr(role::kSrc0Addr, mem::kAct, "", "first act row of src0"));
  c.roles.push_back(addr(role::kSrc1Addr, mem::kAct, "", "first act row of src1"));
  c.roles.push_back(addr(role::kParamAddr, mem::kParam, "",
                         "param row of M0, M1, S, zp (row + 1: zp0, zp1, lo, hi)"));
  addLoop2(c.roles, {"dst", "src0", "src1"});
  c.timing_keys = kVectorTimingKeys;
  c.energy_keys = kVectorEnergyKeys;
  c.extra_check = checkQuantizedAdd;
  return c;
}

void checkLut(const IsaDescription& isa, const InstrDesc& d, Checker& ck) {
  const FieldDesc* table = d.field(role::kTable);
  const MemoryDesc& param = isa.memory(mem::kParam);
  // Widths above 32 bits can never fit (and would overflow the arithmetic below).
  std::uint64_t tables = table->bits.width >= 32 ? UINT64_MAX / 512
                                                 : (std::uint64_t(1) << table->bits.width) +
                                                       std::uint64_t(d.table_offset);
  if (tables * 256 > param.size_bytes) {
    ck.fail(d.json_path + "/fields/table",
            "table field with table_offset " + std::to_string(d.table_offset) + " reaches table " +
                std::to_string(tables - 1) + " at param byte " +
                std::to_string((tables - 1) * 256) + ", beyond the param SRAM (" +
                std::to_string(param.size_bytes) + " bytes)");
  }
}

ClassSpec lutClass() {
  ClassSpec c;
  c.name = cls::kLut;
  c.id = SemanticClass::Lut;
  c.doc = "act int8 -> act int8 through a 256-entry table in the param SRAM";
  addTokens(c.roles);
  c.roles.push_back(
      role(role::kTable, RoleKind::Index, "table number (plus properties.table_offset)"));
  c.roles.push_back(addr(role::kDstAddr, mem::kAct, "", "first act row written"));
  c.roles.push_back(addr(role::kSrcAddr, mem::kAct, "", "first act row read"));
  addLoop2(c.roles, {"dst", "src"});
  c.timing_keys = kVectorTimingKeys;
  c.energy_keys = kVectorEnergyKeys;
  c.allows_table_offset = true;
  c.extra_check = checkLut;
  return c;
}

void checkNormalize(const IsaDescription& isa, const InstrDesc& d, Checker& ck) {
  requireFourLanes(isa, d, ck, "normalize", "an acc row");
}

ClassSpec normalizeClass() {
  ClassSpec c;
  c.name = cls::kNormalize;
  c.id = SemanticClass::Normalize;
  c.doc = "act int8 lines -> act int8 lines: Softmax or LayerNormalization of each line of len "
          "codes (docs/numerics.md 4.10, 4.11), parameters in acc rows";
  addTokens(c.roles);
  c.roles.push_back(addr(role::kDstAddr, mem::kAct, "", "first act row written"));
  c.roles.push_back(addr(role::kSrcAddr, mem::kAct, "", "first act row read"));
  c.roles.push_back(addr(role::kBlockAddr, mem::kAcc, "",
                         "acc row of zp_x, zp_y, lo, hi (row + 1: M, S or epsilon; then the "
                         "exp table or the per-element M, S, B rows)"));
  c.roles.push_back(role(role::kLen, RoleKind::Count, "codes per line (lanes of its rows)"));
  c.roles.push_back(role(role::kN1, RoleKind::Count, "lines"));
  for (const char* o : {"dst", "src"}) {
    c.roles.push_back(role(std::string(o) + "_sb", RoleKind::Stride,
                           std::string("row stride of ") + o + " between a line's blocks"));
    c.roles.push_back(role(std::string(o) + "_s1", RoleKind::Stride,
                           std::string("row stride of ") + o + " between lines"));
  }
  c.timing_keys = {timing_key::kIssue, timing_key::kCyclesPerLine, timing_key::kCyclesPerRow,
                   timing_key::kCyclesPerElement, timing_key::kPipelineLatency};
  c.energy_keys = {energy_key::kIssue, energy_key::kPerElement};
  c.op_choices = {"softmax", "layernorm"};
  c.extra_check = checkNormalize;
  return c;
}

ClassSpec syncClass() {
  ClassSpec c;
  c.name = cls::kSync;
  c.id = SemanticClass::Sync;
  c.doc = "no-op on one engine that only moves dependency tokens";
  addTokens(c.roles);
  RoleSpec e = role(role::kEngine, RoleKind::Enum, "engine whose queue runs it");
  e.choices = {"load", "compute", "store"};
  c.roles.push_back(e);
  c.timing_keys = {timing_key::kIssue};
  c.energy_keys = {energy_key::kIssue};
  return c;
}

ClassSpec haltClass() {
  ClassSpec c;
  c.name = cls::kHalt;
  c.id = SemanticClass::Halt;
  c.doc = "end of program (compute engine)";
  addTokens(c.roles);
  c.timing_keys = {timing_key::kIssue};
  c.energy_keys = {energy_key::kIssue};
  return c;
}

} // namespace

ClassRegistry& ClassRegistry::global() {
  static ClassRegistry* reg = [] {
    auto* r = new ClassRegistry();
    r->add(dmaClass(true));
    r->add(dmaClass(false));
    r->add(gemmClass());
    r->add(vectorBinaryClass());
    r->add(vectorUnaryClass());
    r->add(requantizeClass());
    r->add(quantizedAddClass());
    r->add(lutClass());
    r->add(normalizeClass());
    r->add(syncClass());
    r->add(haltClass());
    r->add(depthwiseClass()); // last: the RTL numbers the classes in this order
    return r;
  }();
  return *reg;
}

void ClassRegistry::add(ClassSpec spec) {
  if (find(spec.name))
    throw Error("<registry>", spec.name, "semantic class registered twice");
  if (spec.id != SemanticClass::Custom)
    for (const auto& c : classes_)
      if (c->id == spec.id)
        throw Error("<registry>", spec.name,
                    "claims the built-in semantic class of '" + c->name +
                        "'; a class registered outside libember_isa is SemanticClass::Custom");
  classes_.push_back(std::make_unique<ClassSpec>(std::move(spec)));
}

const ClassSpec* ClassRegistry::find(const std::string& name) const {
  for (const auto& c : classes_)
    if (c->name == name)
      return c.get();
  return nullptr;
}

std::vector<std::string> ClassRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& c : classes_)
    out.push_back(c->name);
  return out;
}

} // namespace ember::isa
