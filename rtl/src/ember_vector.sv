// The vector unit: vector-binary, vector-unary, requantize, quantized-add and lut over
// n0 x n1 row steps (i0 innermost), one step a cycle, VECTOR_LANES lanes of int64 (act
// lanes sign-extended int8, acc lanes int32; results saturate to int8 into act and wrap
// to int32 into acc). Requantize's multiplier and shift rows, quantized-add's eight
// scalars (lanes 0..3 of the same two rows), a bias requantize's bias row (param_addr + 2,
// properties.bias: added to the acc lanes, wrapping, before the multiply) and lut's
// 256-byte table are read from the param SRAM in the start cycle and held. The
// contract's duration (rule V1) adds the
// issue, bank-conflict and pipeline cycles around these n0 * n1 steps. The arithmetic
// is docs/numerics.md's NPU part, the same as simulator/src/Vector.cpp.
module ember_vector (
    input  logic clk_i,
    input  logic rst_ni,
    /* verilator lint_off UNUSEDSIGNAL */  // the bus has every role; this reads its own
    input  logic [ember_npu_pkg::FIELDS_BITS-1:0] f_i,
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic [ember_isa_pkg::CLS_BITS-1:0] cls_i,
    input  logic [ember_isa_pkg::VOP_BITS-1:0] op_i,
    input  logic [31:0] table_off_i,
    input  logic bias_i,  // a requantize with properties.bias
    output logic chk_fault_o,
    output logic [2:0] chk_kind_o,
    input  logic start_i,
    output logic busy_o,
    // Param SRAM reads in the start cycle: rows param_addr, param_addr + 1 and
    // param_addr + 2, and the TABLE_ROWS rows of the lut table.
    output logic [31:0] prow_o,
    input  logic [8*ember_isa_pkg::MEM_PARAM_ROW_BYTES-1:0] pm_i,
    input  logic [8*ember_isa_pkg::MEM_PARAM_ROW_BYTES-1:0] ps_i,
    /* verilator lint_off UNUSEDSIGNAL */  // a row wider than the lanes: its first 4L bytes
    input  logic [8*ember_isa_pkg::MEM_PARAM_ROW_BYTES-1:0] pb_i,
    /* verilator lint_on UNUSEDSIGNAL */
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
    output logic [8*ember_isa_pkg::MEM_ACC_ROW_BYTES-1:0] acc_o,
    // The normalize unit's multiplier and requantization: lane 0's (idle while a
    // normalize runs). With nrq_i, lane 0 requantizes nmul_a_i * nmul_b_i as requantize
    // does, with shift nrq_s_i, zero point nrq_z_i and bounds nrq_lo_i, nrq_hi_i: nrq_y_o.
    input  logic nmul_en_i,
    input  logic [31:0] nmul_a_i,
    input  logic [31:0] nmul_b_i,
    output logic [63:0] nmul_p_o,
    input  logic nrq_i,
    input  logic [5:0] nrq_s_i,
    input  logic signed [32:0] nrq_z_i,
    input  logic signed [31:0] nrq_lo_i,
    input  logic signed [31:0] nrq_hi_i,
    output logic [7:0] nrq_y_o
);
  localparam int unsigned L = ember_isa_pkg::VECTOR_LANES;
  // Field roles as unsigned quantities (a signed role: its 64-bit sign-extended value).
  localparam int unsigned N0B = ember_isa_pkg::ROLE_N0_SIGNED || ember_isa_pkg::ROLE_N0_BITS > 64 ? 64 : ember_isa_pkg::ROLE_N0_BITS;
  localparam int unsigned N1B = ember_isa_pkg::ROLE_N1_SIGNED || ember_isa_pkg::ROLE_N1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_N1_BITS;
  localparam int unsigned DAB = ember_isa_pkg::ROLE_DST_ADDR_SIGNED || ember_isa_pkg::ROLE_DST_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_DST_ADDR_BITS;
  localparam int unsigned D0B = ember_isa_pkg::ROLE_DST_S0_SIGNED || ember_isa_pkg::ROLE_DST_S0_BITS > 64 ? 64 : ember_isa_pkg::ROLE_DST_S0_BITS;
  localparam int unsigned D1B = ember_isa_pkg::ROLE_DST_S1_SIGNED || ember_isa_pkg::ROLE_DST_S1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_DST_S1_BITS;
  localparam int unsigned AAB = ember_isa_pkg::ROLE_SRC0_ADDR_SIGNED || ember_isa_pkg::ROLE_SRC0_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC0_ADDR_BITS;
  localparam int unsigned A0B = ember_isa_pkg::ROLE_SRC0_S0_SIGNED || ember_isa_pkg::ROLE_SRC0_S0_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC0_S0_BITS;
  localparam int unsigned A1B = ember_isa_pkg::ROLE_SRC0_S1_SIGNED || ember_isa_pkg::ROLE_SRC0_S1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC0_S1_BITS;
  localparam int unsigned BAB = ember_isa_pkg::ROLE_SRC1_ADDR_SIGNED || ember_isa_pkg::ROLE_SRC1_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC1_ADDR_BITS;
  localparam int unsigned B0B = ember_isa_pkg::ROLE_SRC1_S0_SIGNED || ember_isa_pkg::ROLE_SRC1_S0_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC1_S0_BITS;
  localparam int unsigned B1B = ember_isa_pkg::ROLE_SRC1_S1_SIGNED || ember_isa_pkg::ROLE_SRC1_S1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC1_S1_BITS;
  localparam int unsigned SAB = ember_isa_pkg::ROLE_SRC_ADDR_SIGNED || ember_isa_pkg::ROLE_SRC_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC_ADDR_BITS;
  localparam int unsigned S0B = ember_isa_pkg::ROLE_SRC_S0_SIGNED || ember_isa_pkg::ROLE_SRC_S0_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC_S0_BITS;
  localparam int unsigned S1B = ember_isa_pkg::ROLE_SRC_S1_SIGNED || ember_isa_pkg::ROLE_SRC_S1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC_S1_BITS;
  localparam int unsigned PAB = ember_isa_pkg::ROLE_PARAM_ADDR_SIGNED || ember_isa_pkg::ROLE_PARAM_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_PARAM_ADDR_BITS;
  localparam int unsigned TBB = ember_isa_pkg::ROLE_TABLE_SIGNED || ember_isa_pkg::ROLE_TABLE_BITS > 64 ? 64 : ember_isa_pkg::ROLE_TABLE_BITS;
  localparam int unsigned DMB = ember_isa_pkg::ROLE_DST_MEM_SIGNED || ember_isa_pkg::ROLE_DST_MEM_BITS > 64 ? 64 : ember_isa_pkg::ROLE_DST_MEM_BITS;
  localparam int unsigned SMB = ember_isa_pkg::ROLE_SRC_MEM_SIGNED || ember_isa_pkg::ROLE_SRC_MEM_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC_MEM_BITS;
  // The widest base, n0 - 1 times s0, n1 - 1 times s1 of any operand: the range checks'
  // last rows are exact in WL bits (the model's saturate at 2^64 - 1, which compares
  // with a row count as the exact value does).
  function automatic int unsigned mx(input int unsigned a, input int unsigned b);
    mx = a > b ? a : b;
  endfunction
  localparam int unsigned WBASE = mx(mx(DAB, AAB), mx(BAB, SAB));
  localparam int unsigned WS0 = N0B + mx(mx(D0B, A0B), mx(B0B, S0B));
  localparam int unsigned WS1 = N1B + mx(mx(D1B, A1B), mx(B1B, S1B));
  localparam int unsigned WL = mx(WBASE, mx(WS0, WS1)) + 2;
  // Row address bits: sources and destination live in act or acc (rows are powers of
  // two); the datapath's row arithmetic is modulo 2^VAW, exact because the checks keep
  // every row in range (ember_npu uses the low address bits of a row output only).
  localparam int unsigned XAW = ember_isa_pkg::MEM_ACT_ROWS > 1 ? $clog2(ember_isa_pkg::MEM_ACT_ROWS) : 1;
  localparam int unsigned CAW = ember_isa_pkg::MEM_ACC_ROWS > 1 ? $clog2(ember_isa_pkg::MEM_ACC_ROWS) : 1;
  localparam int unsigned VAW = mx(XAW, CAW);
  // Signed operands: a signed role's bits, an unsigned role's bits and a zero above (the
  // bus value read as a signed 64-bit number, as the model's int64 reads it).
  localparam int unsigned IB0 = ember_isa_pkg::ROLE_IMM0_BITS >= 64 ? 64 : ember_isa_pkg::ROLE_IMM0_SIGNED ? ember_isa_pkg::ROLE_IMM0_BITS : ember_isa_pkg::ROLE_IMM0_BITS + 1;
  localparam int unsigned IB1 = ember_isa_pkg::ROLE_IMM1_BITS >= 64 ? 64 : ember_isa_pkg::ROLE_IMM1_SIGNED ? ember_isa_pkg::ROLE_IMM1_BITS : ember_isa_pkg::ROLE_IMM1_BITS + 1;
  localparam int unsigned ZPB = ember_isa_pkg::ROLE_ZERO_POINT_BITS >= 64 ? 64 : ember_isa_pkg::ROLE_ZERO_POINT_SIGNED ? ember_isa_pkg::ROLE_ZERO_POINT_BITS : ember_isa_pkg::ROLE_ZERO_POINT_BITS + 1;
  localparam int unsigned LOB = ember_isa_pkg::ROLE_LO_BITS >= 64 ? 64 : ember_isa_pkg::ROLE_LO_SIGNED ? ember_isa_pkg::ROLE_LO_BITS : ember_isa_pkg::ROLE_LO_BITS + 1;
  localparam int unsigned HIB = ember_isa_pkg::ROLE_HI_BITS >= 64 ? 64 : ember_isa_pkg::ROLE_HI_SIGNED ? ember_isa_pkg::ROLE_HI_BITS : ember_isa_pkg::ROLE_HI_BITS + 1;
  // The held zp, lo and hi: requantize's roles, or quantized-add's int32 scalars (zp:
  // 33 bits, lane 0 also takes normalize's zp_y + B).
  localparam int unsigned ZPW = ZPB > 33 ? ZPB : 33;
  localparam int unsigned LOW = LOB > 32 ? LOB : 32;
  localparam int unsigned HIW = HIB > 32 ? HIB : 32;
  // lut: (table + table_offset + 1) * 256, modulo 2^64 as in the model.
  localparam int unsigned WT = mx(TBB, 32) + 10 > 64 ? 64 : mx(TBB, 32) + 10;

  // A role zero-extended from its bits (sign-extended for a signed role, on the bus).
  function automatic logic [63:0] fld(input int unsigned r);
    fld = f_i[64*r +: 64];
  endfunction
  // A row count (at most 2^32) in at least 33 bits, to compare a last row with.
  localparam int unsigned KL = WL > 33 ? WL : 33;
  function automatic logic [KL-1:0] rowsOf(input logic accMem);
    rowsOf = accMem ? KL'(64'(ember_isa_pkg::MEM_ACC_ROWS)) : KL'(64'(ember_isa_pkg::MEM_ACT_ROWS));
  endfunction
  logic [N0B-1:0] n0, n0m1;
  logic [N1B-1:0] n1, n1m1;
  assign n0 = f_i[64*ember_npu_pkg::R_N0 +: N0B];
  assign n1 = f_i[64*ember_npu_pkg::R_N1 +: N1B];
  assign n0m1 = n0 - N0B'(1);
  assign n1m1 = n1 - N1B'(1);
  function automatic logic [WL-1:0] last(input logic [WL-1:0] a, input logic [WL-1:0] s0,
                                         input logic [WL-1:0] s1);
    last = WL'(a) + WL'(n0m1) * WL'(s0) + WL'(n1m1) * WL'(s1);
  endfunction

  // Operand selection (Machine::vector): binary/unary name their memories, requantize
  // reads acc and writes act, lut and quantized-add (Machine::quantizedAdd, sources
  // src0 and src1) read and write act.
  logic ew, dst_acc_w, src_acc_w, dst_bad_w, src_bad_w, binary_w;
  logic [WL-1:0] d_a, d_s0, d_s1, a_a, a_s0, a_s1, b_a, b_s0, b_s1;
  logic [63:0] dmem, smem;
  logic [WT-1:0] tbl_w;
  logic signed [IB0-1:0] imm0_w;
  always_comb begin
    ew = cls_i == ember_isa_pkg::CLS_VECTOR_BINARY || cls_i == ember_isa_pkg::CLS_VECTOR_UNARY;
    binary_w = cls_i == ember_isa_pkg::CLS_VECTOR_BINARY || cls_i == ember_isa_pkg::CLS_QUANTIZED_ADD;
    dmem = 64'(f_i[64*ember_npu_pkg::R_DST_MEM +: DMB]);
    smem = 64'(f_i[64*ember_npu_pkg::R_SRC_MEM +: SMB]);
    dst_acc_w = ew && dmem == 64'(ember_isa_pkg::MEM_ACC_ID);
    src_acc_w = cls_i == ember_isa_pkg::CLS_REQUANTIZE || (ew && smem == 64'(ember_isa_pkg::MEM_ACC_ID));
    dst_bad_w = ew && dmem != 64'(ember_isa_pkg::MEM_ACT_ID) && dmem != 64'(ember_isa_pkg::MEM_ACC_ID);
    src_bad_w = ew && smem != 64'(ember_isa_pkg::MEM_ACT_ID) && smem != 64'(ember_isa_pkg::MEM_ACC_ID);
    d_a = WL'(f_i[64*ember_npu_pkg::R_DST_ADDR +: DAB]);
    d_s0 = WL'(f_i[64*ember_npu_pkg::R_DST_S0 +: D0B]);
    d_s1 = WL'(f_i[64*ember_npu_pkg::R_DST_S1 +: D1B]);
    if (binary_w) begin
      a_a = WL'(f_i[64*ember_npu_pkg::R_SRC0_ADDR +: AAB]);
      a_s0 = WL'(f_i[64*ember_npu_pkg::R_SRC0_S0 +: A0B]);
      a_s1 = WL'(f_i[64*ember_npu_pkg::R_SRC0_S1 +: A1B]);
      b_a = WL'(f_i[64*ember_npu_pkg::R_SRC1_ADDR +: BAB]);
      b_s0 = WL'(f_i[64*ember_npu_pkg::R_SRC1_S0 +: B0B]);
      b_s1 = WL'(f_i[64*ember_npu_pkg::R_SRC1_S1 +: B1B]);
    end else begin
      a_a = WL'(f_i[64*ember_npu_pkg::R_SRC_ADDR +: SAB]);
      a_s0 = WL'(f_i[64*ember_npu_pkg::R_SRC_S0 +: S0B]);
      a_s1 = WL'(f_i[64*ember_npu_pkg::R_SRC_S1 +: S1B]);
      b_a = a_a; b_s0 = a_s0; b_s1 = a_s1;
    end
    imm0_w = $signed(f_i[64*ember_npu_pkg::R_IMM0 +: IB0]);
    tbl_w = WT'(f_i[64*ember_npu_pkg::R_TABLE +: TBB]) + WT'(table_off_i);
  end
  assign prow_o = 32'(f_i[64*ember_npu_pkg::R_PARAM_ADDR +: PAB]);
  logic [31:0] trow_w;
  logic [WT-1:0] tend_w;
  assign trow_w = 32'(tbl_w) * 32'(ember_isa_pkg::TABLE_ROWS);
  assign tend_w = (tbl_w + WT'(1)) << 8;
  assign trow_o = 32'(trow_w);

  // Requantize's shift lanes must lie in 1..62.
  logic s_bad_w;
  always_comb begin
    s_bad_w = 1'b0;
    for (int j = 0; j < L; j++)
      if ($signed(ps_i[32*j +: 32]) < 1 || $signed(ps_i[32*j +: 32]) > 62) s_bad_w = 1'b1;
  end

  // quantized-add's scalars: lanes 0..3 of param rows param_addr (M0, M1, S, zp) and
  // param_addr + 1 (zp0, zp1, lo, hi); a description with the class has at least 4
  // lanes (zero-extended here for one without it). S must lie in 1..62.
  logic qadd_w, qs_bad_w;
  logic [127:0] qp0_w, qp1_w;
  logic signed [31:0] qs_w;
  assign qadd_w = cls_i == ember_isa_pkg::CLS_QUANTIZED_ADD;
  assign qp0_w = 128'(pm_i);
  assign qp1_w = 128'(ps_i);
  assign qs_w = $signed(qp0_w[64 +: 32]);
  assign qs_bad_w = qs_w < 1 || qs_w > 62;
  logic rqb_w;  // a bias requantize (properties.bias): three param rows
  assign rqb_w = bias_i && cls_i == ember_isa_pkg::CLS_REQUANTIZE;

  always_comb begin
    chk_fault_o = 1'b1;
    chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    if (dst_bad_w || src_bad_w) chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    else if (n0 == 0 || n1 == 0) chk_fault_o = 1'b0;
    else if (KL'(last(d_a, d_s0, d_s1)) >= rowsOf(dst_acc_w)
             || KL'(last(a_a, a_s0, a_s1)) >= rowsOf(src_acc_w)
             || KL'(last(b_a, b_s0, b_s1)) >= rowsOf(src_acc_w))
      chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
    else if ((cls_i == ember_isa_pkg::CLS_REQUANTIZE || qadd_w)
             && 65'(f_i[64*ember_npu_pkg::R_PARAM_ADDR +: PAB]) + (rqb_w ? 65'd3 : 65'd2)
                > 65'(ember_isa_pkg::MEM_PARAM_ROWS))  // M, S (and the bias) rows
      chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
    else if (cls_i == ember_isa_pkg::CLS_REQUANTIZE && s_bad_w) chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    else if (qadd_w && qs_bad_w) chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    else if (cls_i == ember_isa_pkg::CLS_LUT
             && 64'(tend_w) > 64'(ember_isa_pkg::MEM_PARAM_SIZE_BYTES))
      chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
    else if (cls_i == ember_isa_pkg::CLS_VECTOR_UNARY && op_i == ember_isa_pkg::VOP_SHIFT && (64'(imm0_w) < -31 || 64'(imm0_w) > 31))
      chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    else chk_fault_o = 1'b0;
  end

  // ---- Latched instruction ----
  logic active_q, dacc_q, sacc_q;
  logic [ember_isa_pkg::CLS_BITS-1:0] cls_q;
  logic [ember_isa_pkg::VOP_BITS-1:0] op_q;
  logic [N0B-1:0] n0_q, i0_q;
  logic [N1B-1:0] n1_q, i1_q;
  logic [VAW-1:0] da_q, ds0_q, ds1_q, aa_q, as0_q, as1_q, ba_q, bs0_q, bs1_q;
  logic signed [IB0-1:0] imm0_q;
  logic signed [IB1-1:0] imm1_q;
  logic signed [ZPW-1:0] zp_q;
  logic signed [LOW-1:0] lo_q;
  logic signed [HIW-1:0] hi_q;
  logic [32*L-1:0] m_q;  // requantize's multipliers (quantized-add: M0 in every lane)
  logic [6*L-1:0] s_q;  // requantize's shifts: 1..62 when it starts (the operand check)
  logic [32*L-1:0] b_q;  // a bias requantize's bias (param_addr + 2), else 0
  // quantized-add: in its start cycle (prep_w; the lanes are idle then, or the engine
  // would have overrun) the multipliers of lanes 0 and 1 compute zp0 * M0 and zp1 * M1,
  // and k = 2^(S-1) - zp0 * M0 - zp1 * M1 is held for the row steps.
  logic prep_w, qhilo_q;
  logic [31:0] qm1_q;
  logic [65:0] qk_q;
  logic [64*L-1:0] prod_w;
  logic [127:0] prod01_w;  // lanes 0 and 1 (zero-extended for a unit of fewer lanes)
  logic [65:0] qk_w;
  assign prep_w = start_i && qadd_w;
  assign prod01_w = 128'(prod_w);
  assign qk_w = (66'sd1 <<< (qp0_w[64 +: 6] - 6'd1)) - 66'($signed(prod01_w[0 +: 64]))
              - 66'($signed(prod01_w[64 +: 64]));
  logic [2047:0] table_q;

  assign busy_o = active_q;
  logic [VAW-1:0] src0_row, src1_row, dst_row;
  assign src0_row = aa_q + VAW'(i0_q) * as0_q + VAW'(i1_q) * as1_q;
  assign src1_row = ba_q + VAW'(i0_q) * bs0_q + VAW'(i1_q) * bs1_q;
  assign dst_row = da_q + VAW'(i0_q) * ds0_q + VAW'(i1_q) * ds1_q;
  assign src0_row_o = 32'(src0_row);
  assign src1_row_o = 32'(src1_row);
  assign dst_row_o = 32'(dst_row);
  assign src_acc_o = sacc_q;
  assign dst_acc_o = dacc_q;
  assign we_o = active_q;

  // The lanes (ember_vector_lane); lane 0 requantizes for the normalize unit (nrq_i).
  // The lanes' class: the instruction's while it runs, else lut (a table read), whose
  // result nobody reads (we_o is low; the norm unit's requantize takes lane 0 with its
  // own class, its multiplier reads the product, which the class does not select when
  // prep_i is high): a simulator then skips the idle lanes' requantize arithmetic.
  logic [ember_isa_pkg::CLS_BITS-1:0] lane_cls;
  assign lane_cls = active_q ? cls_q : ember_isa_pkg::CLS_LUT;
  for (genvar j = 0; j < L; j++) begin : g_lane
    logic nrq;
    assign nrq = j == 0 && nrq_i;
    ember_vector_lane #(.IB0(IB0), .IB1(IB1), .ZPB(ZPW), .LOB(LOW), .HIB(HIW)) u_lane (
        .cls_i(nrq ? ember_isa_pkg::CLS_REQUANTIZE : lane_cls), .op_i(op_q), .acc_src_i(sacc_q),
        .act0_i(act0_i[8*j +: 8]), .act1_i(act1_i[8*j +: 8]),
        .acc0_i(acc0_i[32*j +: 32]), .acc1_i(acc1_i[32*j +: 32]),
        .imm0_i(imm0_q), .imm1_i(imm1_q), .zp_i(nrq ? ZPW'(nrq_z_i) : zp_q),
        .lo_i(nrq ? LOW'(nrq_lo_i) : lo_q), .hi_i(nrq ? HIW'(nrq_hi_i) : hi_q),
        .m_i(m_q[32*j +: 32]), .s_i(nrq ? nrq_s_i : s_q[6*j +: 6]), .bias_i(b_q[32*j +: 32]),
        .qm1_i(qm1_q), .qk_i(qk_q),
        .qhilo_i(qhilo_q), .prep_i(prep_w || (j == 0 && nmul_en_i)),
        .pa_i(j == 0 ? (nmul_en_i ? nmul_a_i : qp1_w[0 +: 32]) : j == 1 ? qp1_w[32 +: 32] : '0),
        .pb_i(j == 0 ? (nmul_en_i ? nmul_b_i : qp0_w[0 +: 32]) : j == 1 ? qp0_w[32 +: 32] : '0),
        .prod_o(prod_w[64*j +: 64]),
        .table_i(table_q),
        .act_o(act_o[8*j +: 8]), .acc_o(acc_o[32*j +: 32]));
  end

  logic unused_w;  // the products of lanes 2 and up (the start cycle uses two)
  assign unused_w = ^prod_w;
  assign nmul_p_o = prod_w[63:0];
  assign nrq_y_o = act_o[7:0];

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q <= 1'b0;
      {dacc_q, sacc_q} <= '0;
      cls_q <= '0;
      op_q <= '0;
      {n0_q, n1_q, i0_q, i1_q, da_q, ds0_q, ds1_q, aa_q, as0_q, as1_q, ba_q, bs0_q, bs1_q} <= '0;
      {imm0_q, imm1_q, zp_q, lo_q, hi_q} <= '0;
      {m_q, s_q, b_q} <= '0;
      {qhilo_q, qm1_q, qk_q} <= '0;
      table_q <= '0;
    end else if (start_i) begin
      active_q <= n0 != 0 && n1 != 0;
      dacc_q <= dst_acc_w;
      sacc_q <= src_acc_w;
      cls_q <= cls_i;
      op_q <= op_i;
      n0_q <= n0; n1_q <= n1;
      {i0_q, i1_q} <= '0;
      da_q <= VAW'(d_a); ds0_q <= VAW'(d_s0); ds1_q <= VAW'(d_s1);
      aa_q <= VAW'(a_a); as0_q <= VAW'(a_s0); as1_q <= VAW'(a_s1);
      ba_q <= VAW'(b_a); bs0_q <= VAW'(b_s0); bs1_q <= VAW'(b_s1);
      imm0_q <= imm0_w;
      imm1_q <= $signed(f_i[64*ember_npu_pkg::R_IMM1 +: IB1]);
      if (qadd_w) begin
        zp_q <= ZPW'($signed(qp0_w[96 +: 32]));
        lo_q <= LOW'($signed(qp1_w[64 +: 32]));
        hi_q <= HIW'($signed(qp1_w[96 +: 32]));
        for (int j = 0; j < L; j++) begin
          m_q[32*j +: 32] <= qp0_w[0 +: 32];
          s_q[6*j +: 6] <= qp0_w[64 +: 6];
        end
      end else begin
        zp_q <= ZPW'($signed(f_i[64*ember_npu_pkg::R_ZERO_POINT +: ZPB]));
        lo_q <= LOW'($signed(f_i[64*ember_npu_pkg::R_LO +: LOB]));
        hi_q <= HIW'($signed(f_i[64*ember_npu_pkg::R_HI +: HIB]));
        m_q <= pm_i[32*L-1:0];
        for (int j = 0; j < L; j++) s_q[6*j +: 6] <= ps_i[32*j +: 6];
      end
      b_q <= rqb_w ? pb_i[32*L-1:0] : '0;
      qhilo_q <= $signed(qp1_w[96 +: 32]) < $signed(qp1_w[64 +: 32]);
      qm1_q <= qp0_w[32 +: 32];
      qk_q <= qk_w;
      table_q <= table_i;
    end else if (active_q) begin
      if (i0_q + N0B'(1) < n0_q) i0_q <= i0_q + N0B'(1);
      else begin
        i0_q <= '0;
        if (i1_q + N1B'(1) < n1_q) i1_q <= i1_q + N1B'(1);
        else active_q <= 1'b0;
      end
    end
  end
endmodule : ember_vector
