// The assembler and disassembler: programs, round trips, and error messages.
#include "ember/isa/assembler.h"
#include "test_util.h"

namespace ember::isa::test {
namespace {

Binary asmFile(const std::string& rel, const IsaDescription& isa) {
  return assemble(readText(sourcePath(rel)), isa, rel);
}

void expectRoundTrip(const Binary& b, const IsaDescription& isa) {
  std::string text = disassemble(b, isa);
  Binary again = assemble(text, isa, "disasm.s");
  EXPECT_EQ(again, b) << text;
  EXPECT_EQ(serializeElf(again, isa), serializeElf(b, isa));
  DisasmOptions bare;
  bare.show_encoding = false;
  bare.show_summary = false;
  EXPECT_EQ(assemble(disassemble(b, isa, bare), isa), b);
}

TEST(Assembler, ShippedProgramsRoundTrip) {
  for (const char* p :
       {"tests/isa/data/conv_tile.s", "tests/isa/data/double_buffer.s", "tests/isa/data/empty.s"})
    expectRoundTrip(asmFile(p, reference()), reference());
  expectRoundTrip(asmFile("tests/isa/data/large_lut2.s", large()), large());
}

TEST(Assembler, LargeVariantNeedsItsOwnDescription) {
  EXPECT_ISA_ERROR(asmFile("tests/isa/data/large_lut2.s", reference()), "line 3",
                   "written for ISA \"ember-v1-large\"");
  EXPECT_ISA_ERROR(assemble("  lut2 table=1", reference()), "line 1", "unknown instruction");
  Binary b = assemble("  lut2 table=31 n0=4\n  finish", large());
  EXPECT_EQ(b.code[0].name(), "lut2");
  EXPECT_EQ(b.code[0].get("table"), 31);
}

TEST(Assembler, DisassemblyShowsDebugNamesAndTables) {
  Binary b = asmFile("tests/isa/data/conv_tile.s", reference());
  std::string t = disassemble(b, reference());
  for (const char* s : {".node \"conv1\"", ".node \"relu1\"", ".endnode", ".io input \"x\"",
                        ".region \"in\" input 0x10000 0x400", "; ISA ember-v1", "[compute]",
                        "dma.ld sram=weight", "finish pop_next"})
    EXPECT_NE(t.find(s), std::string::npos) << s;
}

TEST(Assembler, FieldsAndFlags) {
  Binary b = assemble(".isa \"ember-v1\"\n gemm n0=3, n1=2 acc_addr=0x10 reset push_next ; c\n"
                      " sync engine=store pop_prev\n finish",
                      reference());
  ASSERT_EQ(b.code.size(), 3u);
  EXPECT_EQ(b.code[0].get("n0"), 3);
  EXPECT_EQ(b.code[0].get("acc_addr"), 16);
  EXPECT_EQ(b.code[0].get("reset"), 1);
  EXPECT_EQ(b.code[0].get("push_next"), 1);
  EXPECT_EQ(b.code[0].get("pop_prev"), 0);
  EXPECT_EQ(b.code[1].engine(), Engine::Store);
  EXPECT_EQ(formatInstruction(b.code[1]), "sync engine=store pop_prev");
}

TEST(Assembler, QuotedNamesRoundTrip) {
  Binary b = Binary::forIsa(reference());
  b.code.emplace_back(*reference().findInstruction("finish"));
  b.debug.push_back({0, 1, "odd \"name\"\\ with\ttab and \xc3\xa9"});
  EXPECT_EQ(assemble(disassemble(b, reference()), reference()), b);
}

struct BadAsm {
  const char* text;
  const char* where;
  const char* reason;
};

class AssemblerErrors : public ::testing::TestWithParam<BadAsm> {};

TEST_P(AssemblerErrors, MessageNamesLineAndReason) {
  EXPECT_ISA_ERROR(assemble(GetParam().text, reference(), "t.s"), GetParam().where,
                   GetParam().reason);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AssemblerErrors,
    ::testing::Values(
        BadAsm{"  frobnicate x=1", "line 1", "unknown instruction or directive \"frobnicate\""},
        BadAsm{"\n  gemm n9=1", "line 2", "unknown field \"n9\""},
        BadAsm{"  gemm n2=64", "line 1", "does not fit its 6-bit field [0, 63]"},
        BadAsm{"  gemm n0=-1", "line 1", "does not fit"},
        BadAsm{"  gemm n0=abc", "line 1", "bad value \"abc\" for n0"},
        BadAsm{"  gemm n0=1 n0=2", "line 1", "given twice"},
        BadAsm{"  gemm n0", "line 1", "needs a value"},
        BadAsm{"  dma.ld sram=flash", "line 1",
               "is not a choice of sram (act, weight, acc, param)"},
        BadAsm{"  dma.st sram=weight", "line 1", "is not a choice of sram (act, acc)"},
        BadAsm{"  dma.ld pop_prev", "line 1", "load engine, which has no previous engine"},
        BadAsm{"  dma.st push_next", "line 1", "store engine, which has no next engine"},
        BadAsm{"  sync engine=load push_prev", "line 1", "load engine"},
        BadAsm{".isa \"other\"", "line 1", "written for ISA \"other\""},
        BadAsm{".frob", "line 1", "unknown directive \".frob\""},
        BadAsm{".byte 256", "line 1", "bad .byte value \"256\""},
        BadAsm{".word 0x100000000", "line 1", "bad .word value"},
        BadAsm{".region \"a\" heap 0 16", "line 1", "unknown region kind \"heap\""},
        BadAsm{".io input \"x\" dtype=int8 shape=4", "line 1", "missing offset="},
        BadAsm{".io sideways \"x\"", "line 1", "expected input or output"},
        BadAsm{".io input \"x\" dtype=int4 shape=4 offset=0 size=4", "line 1",
               "unknown dtype \"int4\""},
        BadAsm{".node \"a", "line 1", "unterminated string"},
        BadAsm{".region \"in\" input 0 16\n.io input \"x\" dtype=int8 shape=32 offset=0 size=32",
               "section .ember.io: entry \"x\"", "not inside any input region"},
        BadAsm{".byte 1", "section .ember.memmap", "no const region"}));

} // namespace
} // namespace ember::isa::test
