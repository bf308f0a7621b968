// The vector unit: vector-binary, vector-unary, requantize and lut over n0 x n1 row steps
// (i0 innermost), one step a cycle, VECTOR_LANES lanes of int64 (act lanes sign-extended
// int8, acc lanes int32; results saturate to int8 into act and wrap to int32 into acc).
// Requantize's multiplier and shift rows and lut's 256-byte table are read from the
// param SRAM in the start cycle and held. The contract's duration (rule V1) adds the
// issue, bank-conflict and pipeline cycles around these n0 * n1 steps. The arithmetic
// is docs/numerics.md's NPU part, the same as simulator/src/Vector.cpp.
module ember_vector (
    input  logic clk_i,
    input  logic rst_ni,
    input  logic [ember_npu_pkg::FIELDS_BITS-1:0] f_i,
    input  logic [ember_isa_pkg::CLS_BITS-1:0] cls_i,
    input  logic [ember_isa_pkg::VOP_BITS-1:0] op_i,
    input  logic [31:0] table_off_i,
    output logic chk_fault_o,
    output logic [2:0] chk_kind_o,
    input  logic start_i,
    output logic busy_o,
    // Param SRAM reads in the start cycle: rows param_addr and param_addr + 1, and the
    // TABLE_ROWS rows of the lut table.
    output logic [31:0] prow_o,
    input  logic [8*ember_isa_pkg::MEM_PARAM_ROW_BYTES-1:0] pm_i,
    input  logic [8*ember_isa_pkg::MEM_PARAM_ROW_BYTES-1:0] ps_i,
    output logic [31:0] trow_o,
    input  logic [2048-1:0] table_i,
    // Source rows (memory by src mem), destination row.
    output logic [31:0] src0_row_o,
    output logic [31:0] src1_row_o,
    output logic src_acc_o,  // sources live in acc (else act)
    input  logic [8*ember_isa_pkg::MEM_ACT_ROW_BYTES-1:0] act0_i,
    input  logic [8*ember_isa_pkg::MEM_ACT_ROW_BYTES-1:0] act1_i,
    input  logic [8*ember_isa_pkg::MEM_ACC_ROW_BYTES-1:0] acc0_i,
    input  logic [8*ember_isa_pkg::MEM_ACC_ROW_BYTES-1:0] acc1_i,
    output logic we_o,
    output logic dst_acc_o,
    output logic [31:0] dst_row_o,
    output logic [8*ember_isa_pkg::MEM_ACT_ROW_BYTES-1:0] act_o,
    output logic [8*ember_isa_pkg::MEM_ACC_ROW_BYTES-1:0] acc_o
);
  localparam int unsigned L = ember_isa_pkg::VECTOR_LANES;

  function automatic logic [63:0] fld(input int unsigned r);
    fld = f_i[64*r +: 64];
  endfunction
  function automatic logic [63:0] rowsOf(input logic accMem);
    rowsOf = accMem ? 64'(ember_isa_pkg::MEM_ACC_ROWS) : 64'(ember_isa_pkg::MEM_ACT_ROWS);
  endfunction
  function automatic logic [127:0] last(input logic [63:0] a, input logic [63:0] s0,
                                        input logic [63:0] s1);
    last = 128'(a) + (128'(fld(ember_npu_pkg::R_N0)) - 1) * 128'(s0) + (128'(fld(ember_npu_pkg::R_N1)) - 1) * 128'(s1);
  endfunction

  // Operand selection (Machine::vector): binary/unary name their memories, requantize
  // reads acc and writes act, lut reads and writes act.
  logic ew, dst_acc_w, src_acc_w, dst_bad_w, src_bad_w, binary_w;
  logic [63:0] d_a, d_s0, d_s1, a_a, a_s0, a_s1, b_a, b_s0, b_s1, tbl_w;
  logic signed [63:0] imm0_w;
  always_comb begin
    ew = cls_i == ember_isa_pkg::CLS_VECTOR_BINARY || cls_i == ember_isa_pkg::CLS_VECTOR_UNARY;
    binary_w = cls_i == ember_isa_pkg::CLS_VECTOR_BINARY;
    dst_acc_w = ew && fld(ember_npu_pkg::R_DST_MEM) == 64'(ember_isa_pkg::MEM_ACC_ID);
    src_acc_w = cls_i == ember_isa_pkg::CLS_REQUANTIZE || (ew && fld(ember_npu_pkg::R_SRC_MEM) == 64'(ember_isa_pkg::MEM_ACC_ID));
    dst_bad_w = ew && fld(ember_npu_pkg::R_DST_MEM) != 64'(ember_isa_pkg::MEM_ACT_ID) && fld(ember_npu_pkg::R_DST_MEM) != 64'(ember_isa_pkg::MEM_ACC_ID);
    src_bad_w = ew && fld(ember_npu_pkg::R_SRC_MEM) != 64'(ember_isa_pkg::MEM_ACT_ID) && fld(ember_npu_pkg::R_SRC_MEM) != 64'(ember_isa_pkg::MEM_ACC_ID);
    d_a = fld(ember_npu_pkg::R_DST_ADDR); d_s0 = fld(ember_npu_pkg::R_DST_S0); d_s1 = fld(ember_npu_pkg::R_DST_S1);
    if (binary_w) begin
      a_a = fld(ember_npu_pkg::R_SRC0_ADDR); a_s0 = fld(ember_npu_pkg::R_SRC0_S0); a_s1 = fld(ember_npu_pkg::R_SRC0_S1);
      b_a = fld(ember_npu_pkg::R_SRC1_ADDR); b_s0 = fld(ember_npu_pkg::R_SRC1_S0); b_s1 = fld(ember_npu_pkg::R_SRC1_S1);
    end else begin
      a_a = fld(ember_npu_pkg::R_SRC_ADDR); a_s0 = fld(ember_npu_pkg::R_SRC_S0); a_s1 = fld(ember_npu_pkg::R_SRC_S1);
      b_a = a_a; b_s0 = a_s0; b_s1 = a_s1;
    end
    imm0_w = $signed(fld(ember_npu_pkg::R_IMM0));
    tbl_w = fld(ember_npu_pkg::R_TABLE) + 64'(table_off_i);
  end
  assign prow_o = 32'(fld(ember_npu_pkg::R_PARAM_ADDR));
  assign trow_o = 32'(tbl_w * 64'(ember_isa_pkg::TABLE_ROWS));

  // Requantize's shift lanes must lie in 1..62.
  logic s_bad_w;
  always_comb begin
    s_bad_w = 1'b0;
    for (int j = 0; j < L; j++)
      if ($signed(ps_i[32*j +: 32]) < 1 || $signed(ps_i[32*j +: 32]) > 62) s_bad_w = 1'b1;
  end

  always_comb begin
    chk_fault_o = 1'b1;
    chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    if (dst_bad_w || src_bad_w) chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    else if (fld(ember_npu_pkg::R_N0) == 0 || fld(ember_npu_pkg::R_N1) == 0) chk_fault_o = 1'b0;
    else if (last(d_a, d_s0, d_s1) >= 128'(rowsOf(dst_acc_w))
             || last(a_a, a_s0, a_s1) >= 128'(rowsOf(src_acc_w))
             || last(b_a, b_s0, b_s1) >= 128'(rowsOf(src_acc_w)))
      chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
    else if (cls_i == ember_isa_pkg::CLS_REQUANTIZE && fld(ember_npu_pkg::R_PARAM_ADDR) >= 64'(ember_isa_pkg::MEM_PARAM_ROWS) - 1)
      chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
    else if (cls_i == ember_isa_pkg::CLS_REQUANTIZE && s_bad_w) chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    else if (cls_i == ember_isa_pkg::CLS_LUT
             && (128'(tbl_w) + 1) * 256 > 128'(ember_isa_pkg::MEM_PARAM_SIZE_BYTES))
      chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
    else if (cls_i == ember_isa_pkg::CLS_VECTOR_UNARY && op_i == ember_isa_pkg::VOP_SHIFT && (imm0_w < -31 || imm0_w > 31))
      chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    else chk_fault_o = 1'b0;
  end

  // ---- Latched instruction ----
  logic active_q, dacc_q, sacc_q;
  logic [ember_isa_pkg::CLS_BITS-1:0] cls_q;
  logic [ember_isa_pkg::VOP_BITS-1:0] op_q;
  logic [63:0] n0_q, n1_q, i0_q, i1_q, da_q, ds0_q, ds1_q, aa_q, as0_q, as1_q, ba_q, bs0_q, bs1_q;
  logic signed [63:0] imm0_q, imm1_q, zp_q, lo_q, hi_q;
  logic [32*L-1:0] m_q, s_q;
  logic [2047:0] table_q;

  assign busy_o = active_q;
  assign src0_row_o = 32'(aa_q + i0_q * as0_q + i1_q * as1_q);
  assign src1_row_o = 32'(ba_q + i0_q * bs0_q + i1_q * bs1_q);
  assign dst_row_o = 32'(da_q + i0_q * ds0_q + i1_q * ds1_q);
  assign src_acc_o = sacc_q;
  assign dst_acc_o = dacc_q;
  assign we_o = active_q;

  function automatic logic signed [63:0] roundShift(input logic signed [63:0] x,
                                                    input logic signed [63:0] s);
    logic signed [63:0] sh;
    sh = '0;
    roundShift = x;
    if (s > 0) begin
      sh = s > 62 ? 64'sd62 : s;
      roundShift = (x + (64'sd1 <<< (sh - 1))) >>> sh;
    end else if (s < 0) begin
      sh = -s > 32 ? 64'sd32 : -s;
      roundShift = x <<< sh;
    end
  endfunction

  always_comb begin
    for (int j = 0; j < L; j++) begin
      logic signed [63:0] a, b, y, prod;
      a = sacc_q ? 64'($signed(acc0_i[32*j +: 32])) : 64'($signed(act0_i[8*j +: 8]));
      b = sacc_q ? 64'($signed(acc1_i[32*j +: 32])) : 64'($signed(act1_i[8*j +: 8]));
      y = a;
      prod = '0;
      unique case (cls_q)
        ember_isa_pkg::CLS_VECTOR_BINARY:
          unique case (op_q)
            ember_isa_pkg::VOP_ADD: y = a + b;
            ember_isa_pkg::VOP_SUB: y = a - b;
            ember_isa_pkg::VOP_MUL: y = a * b;
            ember_isa_pkg::VOP_MIN: y = a < b ? a : b;
            default: y = a > b ? a : b;
          endcase
        ember_isa_pkg::CLS_VECTOR_UNARY:
          if (op_q == ember_isa_pkg::VOP_SHIFT) y = roundShift(a, imm0_q);
          else if (op_q == ember_isa_pkg::VOP_CLAMP) y = (a < imm0_q ? imm0_q : a) > imm1_q ? imm1_q
                                        : (a < imm0_q ? imm0_q : a);
          else y = a;
        ember_isa_pkg::CLS_REQUANTIZE: begin
          prod = a * 64'($signed(m_q[32*j +: 32]));
          y = ((prod + (64'sd1 <<< (64'($signed(s_q[32*j +: 32])) - 1)))
               >>> 64'($signed(s_q[32*j +: 32]))) + zp_q;
          y = y < lo_q ? lo_q : y > hi_q ? hi_q : y;
        end
        default: y = 64'($signed(table_q[8*(a[7:0] ^ 8'h80) +: 8]));  // lut: table[a + 128]
      endcase
      act_o[8*j +: 8] = y < -128 ? 8'h80 : y > 127 ? 8'h7f : y[7:0];
      acc_o[32*j +: 32] = y[31:0];
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q <= 1'b0;
      {dacc_q, sacc_q} <= '0;
      cls_q <= '0;
      op_q <= '0;
      {n0_q, n1_q, i0_q, i1_q, da_q, ds0_q, ds1_q, aa_q, as0_q, as1_q, ba_q, bs0_q, bs1_q} <= '0;
      {imm0_q, imm1_q, zp_q, lo_q, hi_q} <= '0;
      {m_q, s_q} <= '0;
      table_q <= '0;
    end else if (start_i) begin
      active_q <= fld(ember_npu_pkg::R_N0) != 0 && fld(ember_npu_pkg::R_N1) != 0;
      dacc_q <= dst_acc_w;
      sacc_q <= src_acc_w;
      cls_q <= cls_i;
      op_q <= op_i;
      n0_q <= fld(ember_npu_pkg::R_N0); n1_q <= fld(ember_npu_pkg::R_N1);
      {i0_q, i1_q} <= '0;
      da_q <= d_a; ds0_q <= d_s0; ds1_q <= d_s1;
      aa_q <= a_a; as0_q <= a_s0; as1_q <= a_s1;
      ba_q <= b_a; bs0_q <= b_s0; bs1_q <= b_s1;
      imm0_q <= imm0_w;
      imm1_q <= $signed(fld(ember_npu_pkg::R_IMM1));
      zp_q <= $signed(fld(ember_npu_pkg::R_ZERO_POINT));
      lo_q <= $signed(fld(ember_npu_pkg::R_LO));
      hi_q <= $signed(fld(ember_npu_pkg::R_HI));
      m_q <= pm_i[32*L-1:0];
      s_q <= ps_i[32*L-1:0];
      table_q <= table_i;
    end else if (active_q) begin
      if (i0_q + 1 < n0_q) i0_q <= i0_q + 1;
      else begin
        i0_q <= '0;
        if (i1_q + 1 < n1_q) i1_q <= i1_q + 1;
        else active_q <= 1'b0;
      end
    end
  end
endmodule : ember_vector
