// Generated C header, SystemVerilog package and Markdown tables.
#include "ember/isa/binary.h"
#include "ember/isa/codegen.h"
#include "test_util.h"

#include <cstdio>
#include <cstdlib>

namespace ember::isa::test {
namespace {

TEST(Codegen, CHeaderHasRegistersParamsAndOpcodes) {
  std::string h = generateCHeader(reference());
  for (const char* s :
       {"#define EMBER_MAC_ROWS 16u", "#define EMBER_REG_CTRL 0x00000000u",
        "#define EMBER_REG_CTRL_START_MASK 0x00000001u", "#define EMBER_OP_GEMM 3u",
        "#define EMBER_DRAM_SIZE_BYTES 4294967296ull", "#define EMBER_MEM_ACT_ROWS 16384u",
        "#define EMBER_F_DMA_LD_SRAM_ADDR_LSB", "#define EMBER_ISA_NAME \"ember-v1\""})
    EXPECT_NE(h.find(s), std::string::npos) << s;
  EXPECT_NE(generateCHeader(large()).find("#define EMBER_OP_LUT2 16u"), std::string::npos);
}

TEST(Codegen, CHeaderCompilesFreestanding) {
  std::string cc = EMBER_CC;
  if (cc.empty() || cc.find("NOTFOUND") != std::string::npos)
    GTEST_SKIP() << "no C compiler";
  for (const IsaDescription* isa : {&reference(), &large()}) {
    std::string hdr = tempPath("ember_npu_isa.h");
    std::string src = hdr + ".c";
    std::string h = generateCHeader(*isa);
    writeFileAtomic(hdr, h.data(), h.size());
    std::string c = "#include \"" + hdr +
                    "\"\n_Static_assert(EMBER_MAC_ROWS * EMBER_MAC_COLS > 0, \"\");\n"
                    "static const unsigned char h[] = EMBER_ISA_SHA256;\n"
                    "int f(void) { return (int)(EMBER_REG_STATUS + h[0] + EMBER_OP_GEMM); }\n";
    writeFileAtomic(src, c.data(), c.size());
    std::string cmd =
        cc + " -std=c11 -ffreestanding -Wall -Wextra -Werror -pedantic -fsyntax-only " + src;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::remove(hdr.c_str());
    std::remove(src.c_str());
  }
}

TEST(Codegen, SvPackage) {
  std::string sv = generateSvPackage(reference());
  EXPECT_EQ(sv.find("package ember_isa_pkg;"), sv.find("package"));
  EXPECT_NE(sv.find("localparam int unsigned MAC_ROWS = 32'd16;"), std::string::npos);
  EXPECT_NE(sv.find("localparam longint unsigned DRAM_SIZE_BYTES = 64'd4294967296;"),
            std::string::npos);
  EXPECT_NE(sv.find("endpackage"), std::string::npos);
}

TEST(Codegen, SvDecoderInterface) {
  std::string pkg = generateSvPackage(reference());
  for (const char* s : {"localparam int unsigned INSTR_BITS = 32'd128;",
                        "localparam logic [CLS_BITS-1:0] CLS_DMA_LOAD = 4'd0;",
                        "localparam logic [CLS_BITS-1:0] CLS_QUANTIZED_ADD = 4'd6;",
                        "localparam logic [CLS_BITS-1:0] CLS_HALT = 4'd10;",
                        "localparam logic [VOP_BITS-1:0] VOP_NONE = 4'd0;",
                        "localparam logic [VOP_BITS-1:0] VOP_ADD = 4'd1;",
                        "localparam logic [VOP_BITS-1:0] VOP_COPY = 4'd8;",
                        "localparam logic [INSN_IDX_BITS-1:0] INSN_GEMM_IDX = 5'd2;",
                        "localparam logic [OPCODE_WIDTH-1:0] OPC_GEMM = 5'd3;",
                        "localparam int unsigned ROLE_DRAM_ADDR_BITS = 32'd32;",
                        "localparam bit ROLE_IMM0_SIGNED = 1'b1;",
                        "localparam logic [3:0] MEMORIES_DMA_ST = 4'b0101;",
                        "localparam int unsigned TABLE_OFFSET_LUT = 32'd0;"})
    EXPECT_NE(pkg.find(s), std::string::npos) << s;
  std::string dec = generateSvDecoder(large());
  for (const char* s :
       {"module ember_decode (", "input  logic [ember_isa_pkg::INSTR_BITS-1:0] instr_i",
        "output logic has_table_o", "ember_isa_pkg::OPC_LUT2: begin"})
    EXPECT_NE(dec.find(s), std::string::npos) << s;
  std::string regs = generateSvRegs(reference());
  for (const char* s : {"module ember_regs (", "output logic [31:0] doorbell_o",
                        "output logic doorbell_wr_o", "input  logic [7:0] fault_code_code_i",
                        "input  logic irq_status_done_set_i", "32'h00000014: begin  // DOORBELL"})
    EXPECT_NE(regs.find(s), std::string::npos) << s;
}

TEST(Codegen, SvNameClashesAreErrors) {
  // (Mnemonics that map to one name are rejected by the loader already.)
  nlohmann::json k = referenceJson();
  k["registers"]["list"].push_back(
      {{"name", "CTRL_START"}, {"offset", 200}, {"access", "rw"}, {"reset", 0}});
  IsaDescription b = IsaDescription::loadString(k.dump(), "clash.json");
  EXPECT_ISA_ERROR(generateSvRegs(b), "/registers",
                   "register CTRL_START: generated port ctrl_start_o is used twice");
}

TEST(Codegen, MarkdownTablesAndSplice) {
  std::string t = generateMarkdownTables(reference());
  for (const char* s :
       {"### Encodings", "#### `gemm`", "| act_addr | [10, 24) | 14 | address |", "### Energy (pJ)",
        "### Registers", "| roofline ridge | 8 MAC per DRAM byte |",
        "| `gemm.bgz` | 22 | gemm | compute | background, overwrite |",
        "| `requant.b` | 24 | requantize | compute | bias |"})
    EXPECT_NE(t.find(s), std::string::npos) << s;
  // A twin with gemm's very fields names gemm's table instead of repeating it; gemm.bg's
  // table is printed once, at gemm's.
  const std::size_t z = t.find("#### `gemm.z` (opcode 21");
  ASSERT_NE(z, std::string::npos);
  EXPECT_EQ(t.find("\n\nThe fields of `gemm`: the same roles, bits and meanings.", z),
            t.find("\n\n", z));
  EXPECT_EQ(t.find("| act_addr | [10, 24) | 14 | address |"),
            t.rfind("| act_addr | [10, 24) | 14 | address |"));
  std::string doc = std::string("intro\n") + kMdBeginMarker + "\nold\n" + kMdEndMarker + "\ntail\n";
  std::string out = spliceMarkdown(doc, t, "doc.md");
  EXPECT_EQ(extractMarkdown(out, "doc.md"), t);
  EXPECT_EQ(out.rfind("intro\n", 0), 0u);
  EXPECT_ISA_ERROR(extractMarkdown("no markers", "doc.md"), "", "markers not found");
}

TEST(Codegen, CommittedDocTablesAreCurrent) {
  std::string doc = readText(sourcePath("docs/isa/tables.md"));
  EXPECT_EQ(extractMarkdown(doc, "docs/isa/tables.md"), generateMarkdownTables(reference()))
      << "run: ember-isa gen --update-md docs/isa/tables.md";
}

TEST(Codegen, SummaryHasRooflineFigures) {
  std::string s = summarize(reference());
  for (const char* k :
       {"256 MAC/cycle", "32 B/cycle", "ridge    8 MAC per DRAM byte", "SRAM act", "256 KiB"})
    EXPECT_NE(s.find(k), std::string::npos) << k << "\n" << s;
}

} // namespace
} // namespace ember::isa::test
