// Encoding properties: random valid instructions of every instruction of both
// descriptions survive encode -> decode -> print -> parse -> encode unchanged.
#include "ember/isa/assembler.h"
#include "ember/isa/dma.h"
#include "ember/isa/instruction.h"
#include "test_util.h"

#include <random>

namespace ember::isa::test {
namespace {

/// A random valid value for a field: named choices pick a name, others span the range
/// with extra weight on the edges (0, min, max).
std::int64_t randomValue(const FieldDesc& f, std::mt19937_64& rng) {
  if (!f.names.empty())
    return f.names[rng() % f.names.size()].second;
  std::int64_t lo = f.minValue(), hi = f.maxValue();
  switch (rng() % 8) {
  case 0:
    return lo;
  case 1:
    return hi;
  case 2:
    return 0;
  default:
    break;
  }
  std::uint64_t span = std::uint64_t(hi) - std::uint64_t(lo);
  std::uint64_t r = span == UINT64_MAX ? rng() : rng() % (span + 1);
  return std::int64_t(std::uint64_t(lo) + r);
}

Instruction randomInstruction(const InstrDesc& d, std::mt19937_64& rng) {
  Instruction insn(d);
  for (std::size_t i = 0; i < d.fields.size(); ++i)
    insn.setIndex(i, randomValue(d.fields[i], rng));
  return insn;
}

void roundTripAll(const IsaDescription& isa, int per_instruction, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::size_t checked = 0;
  for (const InstrDesc& d : isa.instructions()) {
    for (int n = 0; n < per_instruction; ++n) {
      Instruction a = randomInstruction(d, rng);
      std::vector<std::uint8_t> bytes = a.encode();
      ASSERT_EQ(bytes.size(), isa.instructionBytes());
      Instruction b = Instruction::decode(isa, bytes.data());
      ASSERT_EQ(a, b) << d.name << ": " << formatInstruction(a) << " vs " << formatInstruction(b);
      std::string text = formatInstruction(b);
      Instruction c = parseInstruction(text, isa);
      ASSERT_EQ(a, c) << text;
      ASSERT_EQ(c.encode(), bytes) << text;
      ++checked;
    }
  }
  EXPECT_EQ(checked, isa.instructions().size() * std::size_t(per_instruction));
}

TEST(EncodingProperty, ReferenceRoundTrip) {
  roundTripAll(reference(), 1000, 42);
}
TEST(EncodingProperty, LargeVariantRoundTrip) {
  roundTripAll(large(), 1000, 43);
}

// The DRAM box of a DMA (docs/firmware.md rule DMA_EXTENT), figures by hand: act rows are
// 16 bytes and weight rows 256 on the reference description.
TEST(Encoding, DmaDramEnd) {
  const IsaDescription& isa = reference();
  Instruction ld = parseInstruction("dma.ld sram=act sram_addr=0 dram_addr=1000 size0=4 size1=3 "
                                    "size2=2 stride1=10 stride2=100",
                                    isa);
  // 1000 + ((2-1)*100 + (3-1)*10 + 4) * 16 = 1000 + 124 * 16
  EXPECT_EQ(dmaDramEnd(isa, ld), std::optional<std::uint64_t>(2984));
  ld.set("sram", 1); // weight
  EXPECT_EQ(dmaDramEnd(isa, ld), std::optional<std::uint64_t>(1000 + 124 * 256));
  ld.set("size1", 0); // moves nothing
  EXPECT_EQ(dmaDramEnd(isa, ld), std::nullopt);
  Instruction st = parseInstruction("dma.st sram=act sram_addr=0 dram_addr=0 size0=1 size1=1 "
                                    "size2=1",
                                    isa);
  EXPECT_EQ(dmaDramEnd(isa, st), std::optional<std::uint64_t>(16));
  st.set("dram_addr", st.desc().fields[std::size_t(st.desc().fieldIndex("dram_addr"))].maxValue());
  st.set("size2", st.desc().fields[std::size_t(st.desc().fieldIndex("size2"))].maxValue());
  st.set("stride2", st.desc().fields[std::size_t(st.desc().fieldIndex("stride2"))].maxValue());
  const auto end = dmaDramEnd(isa, st); // large, and never wrapped round below the address
  ASSERT_TRUE(end.has_value());
  EXPECT_GT(*end, std::uint64_t(st.get("dram_addr")));
  EXPECT_EQ(dmaDramEnd(isa, parseInstruction("finish", isa)), std::nullopt);
}

TEST(Encoding, BitHelpers) {
  std::uint8_t b[16] = {};
  depositBits(b, 3, 13, 0x1abc);
  EXPECT_EQ(extractBits(b, 3, 13), 0x1abcu);
  depositBits(b, 60, 64, 0xfedcba9876543210ull);
  EXPECT_EQ(extractBits(b, 60, 64), 0xfedcba9876543210ull);
  EXPECT_EQ(extractBits(b, 3, 13), 0x1abcu);
}

TEST(Encoding, OpcodeAndFieldsLandWhereJsonSays) {
  const IsaDescription& isa = reference();
  Instruction g(*isa.findInstruction("gemm"));
  g.set("n0", 0xab);
  auto bytes = g.encode();
  const FieldDesc* f = g.desc().field("n0");
  EXPECT_EQ(extractBits(bytes.data(), f->bits.lsb, f->bits.width), 0xabu);
  EXPECT_EQ(extractBits(bytes.data(), isa.encoding().opcode.lsb, isa.encoding().opcode.width),
            g.desc().opcode);
}

TEST(Encoding, SignedFieldsSignExtend) {
  Instruction r(*reference().findInstruction("requant"));
  r.set("zero_point", -128);
  r.set("lo", -1);
  r.set("hi", 127);
  Instruction back = Instruction::decode(reference(), r.encode().data());
  EXPECT_EQ(back.get("zero_point"), -128);
  EXPECT_EQ(back.get("lo"), -1);
  EXPECT_EQ(back.get("hi"), 127);
}

TEST(Encoding, SetRejectsOutOfRangeAndUnknown) {
  Instruction g(*reference().findInstruction("gemm"));
  EXPECT_ISA_ERROR(g.set("n2", 64), "gemm", "outside [0, 63]");
  EXPECT_ISA_ERROR(g.set("n0", -1), "gemm", "outside");
  EXPECT_ISA_ERROR(g.set("nope", 1), "gemm", "has no field \"nope\"");
  Instruction r(*reference().findInstruction("requant"));
  EXPECT_ISA_ERROR(r.set("zero_point", 128), "requant", "8-bit signed");
  Instruction d(*reference().findInstruction("dma.ld"));
  EXPECT_ISA_ERROR(d.set("sram", 3 + 1), "dma.ld", "outside");
}

TEST(Encoding, DecodeRejectsUnknownOpcodeAndReservedBits) {
  const IsaDescription& isa = reference();
  std::vector<std::uint8_t> w(16, 0);
  EXPECT_ISA_ERROR(Instruction::decode(isa, w.data(), "f", "insn 0"), "insn 0", "unknown opcode 0");
  Instruction fin(*isa.findInstruction("finish"));
  w = fin.encode();
  w[15] = 0x80;
  EXPECT_ISA_ERROR(Instruction::decode(isa, w.data(), "f", "insn 1"), "insn 1",
                   "reserved bits set in byte 15");
  Instruction sync(*isa.findInstruction("sync"));
  w = sync.encode();
  const FieldDesc* e = sync.desc().field("engine");
  depositBits(w.data(), e->bits.lsb, e->bits.width, 3);
  EXPECT_ISA_ERROR(Instruction::decode(isa, w.data(), "f", "insn 2"), "insn 2",
                   "names no allowed choice");
}

TEST(Encoding, EnginesFollowClasses) {
  const IsaDescription& isa = reference();
  EXPECT_EQ(Instruction(*isa.findInstruction("dma.ld")).engine(), Engine::Load);
  EXPECT_EQ(Instruction(*isa.findInstruction("dma.st")).engine(), Engine::Store);
  EXPECT_EQ(Instruction(*isa.findInstruction("gemm")).engine(), Engine::Compute);
  Instruction s(*isa.findInstruction("sync"));
  s.set("engine", 2);
  EXPECT_EQ(s.engine(), Engine::Store);
}

} // namespace
} // namespace ember::isa::test
