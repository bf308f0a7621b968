// Hand-written package of the NPU RTL: the layout of the decoded-field bus that
// ember_fields drives, fault and engine codes. Everything sized by the description
// comes from ember_isa_pkg (generated, including the RTL's derived sizes MAX_ROW_BYTES,
// ROW_BITS, MAX_BANKS, TABLE_ROWS); nothing here depends on a description.
package ember_npu_pkg;
  /* verilator lint_off UNUSEDPARAM */
  // Field roles on the bus: role R occupies bits [64*R_X +: 64], sign- or zero-extended.
  localparam int unsigned R_POP_PREV = 0;
  localparam int unsigned R_POP_NEXT = 1;
  localparam int unsigned R_PUSH_PREV = 2;
  localparam int unsigned R_PUSH_NEXT = 3;
  localparam int unsigned R_SRAM = 4;
  localparam int unsigned R_SRAM_ADDR = 5;
  localparam int unsigned R_DRAM_ADDR = 6;
  localparam int unsigned R_SIZE0 = 7;
  localparam int unsigned R_SIZE1 = 8;
  localparam int unsigned R_SIZE2 = 9;
  localparam int unsigned R_STRIDE1 = 10;
  localparam int unsigned R_STRIDE2 = 11;
  localparam int unsigned R_PAD_LEFT = 12;
  localparam int unsigned R_PAD_RIGHT = 13;
  localparam int unsigned R_PAD_TOP = 14;
  localparam int unsigned R_PAD_BOTTOM = 15;
  localparam int unsigned R_PAD_VALUE = 16;
  localparam int unsigned R_RESET = 17;
  localparam int unsigned R_ACT_ADDR = 18;
  localparam int unsigned R_ACC_ADDR = 19;
  localparam int unsigned R_WGT_ADDR = 20;
  localparam int unsigned R_N0 = 21;
  localparam int unsigned R_N1 = 22;
  localparam int unsigned R_N2 = 23;
  localparam int unsigned R_ACT_S0 = 24;
  localparam int unsigned R_ACT_S1 = 25;
  localparam int unsigned R_ACT_S2 = 26;
  localparam int unsigned R_ACC_S0 = 27;
  localparam int unsigned R_ACC_S1 = 28;
  localparam int unsigned R_ACC_S2 = 29;
  localparam int unsigned R_WGT_S2 = 30;
  localparam int unsigned R_DST_MEM = 31;
  localparam int unsigned R_SRC_MEM = 32;
  localparam int unsigned R_DST_ADDR = 33;
  localparam int unsigned R_SRC_ADDR = 34;
  localparam int unsigned R_SRC0_ADDR = 35;
  localparam int unsigned R_SRC1_ADDR = 36;
  localparam int unsigned R_DST_S0 = 37;
  localparam int unsigned R_DST_S1 = 38;
  localparam int unsigned R_SRC_S0 = 39;
  localparam int unsigned R_SRC_S1 = 40;
  localparam int unsigned R_SRC0_S0 = 41;
  localparam int unsigned R_SRC0_S1 = 42;
  localparam int unsigned R_SRC1_S0 = 43;
  localparam int unsigned R_SRC1_S1 = 44;
  localparam int unsigned R_IMM0 = 45;
  localparam int unsigned R_IMM1 = 46;
  localparam int unsigned R_PARAM_ADDR = 47;
  localparam int unsigned R_ZERO_POINT = 48;
  localparam int unsigned R_LO = 49;
  localparam int unsigned R_HI = 50;
  localparam int unsigned R_TABLE = 51;
  localparam int unsigned R_ENGINE = 52;
  // normalize's own roles (docs/isa/instructions.md section 2.11).
  localparam int unsigned R_BLOCK_ADDR = 53;
  localparam int unsigned R_LEN = 54;
  localparam int unsigned R_DST_SB = 55;
  localparam int unsigned R_SRC_SB = 56;
  // depthwise's own roles (docs/isa/instructions.md section 2.12).
  localparam int unsigned R_KH = 57;
  localparam int unsigned R_KW = 58;
  localparam int unsigned R_TAP_S0 = 59;
  localparam int unsigned R_TAP_S1 = 60;
  localparam int unsigned NUM_ROLES = 61;
  localparam int unsigned FIELDS_BITS = 64 * NUM_ROLES;
  // Fault kinds, in the order of ember::sim::FaultKind (simulator/include/ember/sim/Report.h).
  localparam logic [2:0] FK_ILLEGAL_OPCODE = 3'd0;
  localparam logic [2:0] FK_SRAM_RANGE = 3'd1;
  localparam logic [2:0] FK_DRAM_RANGE = 3'd2;
  localparam logic [2:0] FK_TOKEN_UNDERFLOW = 3'd3;
  localparam logic [2:0] FK_TOKEN_OVERFLOW = 3'd4;
  localparam logic [2:0] FK_DEADLOCK = 3'd5;
  localparam logic [2:0] FK_CYCLE_BUDGET = 3'd6;
  localparam logic [2:0] FK_BAD_OPERAND = 3'd7;
  // Engines of a fault record (0 load, 1 compute, 2 store as everywhere; 3 fetch).
  localparam logic [1:0] ENG_FETCH = 2'd3;
  /* verilator lint_on UNUSEDPARAM */
endpackage : ember_npu_pkg
