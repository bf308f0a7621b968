// The weight-stationary MAC array: MAC_ROWS x MAC_COLS int8 multipliers, int32
// accumulation in the acc SRAM. One step a cycle (i0 innermost, then i1, then i2, as
// docs/isa.md defines gemm): read an act row and an acc row, add the array's products,
// write the acc row back. The weight block of step (0, 0, i2) is read from the weight
// SRAM in that step and held in the stationary register for the rest of the block (the
// second buffer of the description is the SRAM output itself). reset clears acc rows.
// It takes n0 * n1 * n2 cycles, within the contract's duration (rules G1, G2), which
// adds weight-load, fill and drain cycles this datapath does not need. A background gemm
// (rule E6) runs the same way while the compute engine goes on: the array has SRAM ports
// of its own (ember_npu), so the vector unit's instructions run beside it.
module ember_gemm (
    input  logic clk_i,
    input  logic rst_ni,
    /* verilator lint_off UNUSEDSIGNAL */  // the bus has every role; this reads its own
    input  logic [ember_npu_pkg::FIELDS_BITS-1:0] f_i,
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic bg_i,  // the instruction is a background gemm (properties.background)
    output logic chk_fault_o,
    output logic [2:0] chk_kind_o,
    input  logic start_i,
    output logic busy_o,
    output logic [31:0] act_row_o,
    input  logic [8*ember_isa_pkg::MEM_ACT_ROW_BYTES-1:0] act_i,
    output logic [31:0] wgt_row_o,
    input  logic [8*ember_isa_pkg::MEM_WEIGHT_ROW_BYTES-1:0] wgt_i,
    output logic [31:0] acc_row_o,
    input  logic [8*ember_isa_pkg::MEM_ACC_ROW_BYTES-1:0] acc_i,
    output logic acc_we_o,
    output logic [8*ember_isa_pkg::MEM_ACC_ROW_BYTES-1:0] acc_o
);
  localparam int unsigned R = ember_isa_pkg::MAC_ROWS;
  localparam int unsigned C = ember_isa_pkg::MAC_COLS;
  // Field roles as unsigned quantities (a signed role: its 64-bit sign-extended value).
  localparam int unsigned N0B = ember_isa_pkg::ROLE_N0_SIGNED || ember_isa_pkg::ROLE_N0_BITS > 64 ? 64 : ember_isa_pkg::ROLE_N0_BITS;
  localparam int unsigned N1B = ember_isa_pkg::ROLE_N1_SIGNED || ember_isa_pkg::ROLE_N1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_N1_BITS;
  localparam int unsigned N2B = ember_isa_pkg::ROLE_N2_SIGNED || ember_isa_pkg::ROLE_N2_BITS > 64 ? 64 : ember_isa_pkg::ROLE_N2_BITS;
  localparam int unsigned XAB = ember_isa_pkg::ROLE_ACT_ADDR_SIGNED || ember_isa_pkg::ROLE_ACT_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_ACT_ADDR_BITS;
  localparam int unsigned X0B = ember_isa_pkg::ROLE_ACT_S0_SIGNED || ember_isa_pkg::ROLE_ACT_S0_BITS > 64 ? 64 : ember_isa_pkg::ROLE_ACT_S0_BITS;
  localparam int unsigned X1B = ember_isa_pkg::ROLE_ACT_S1_SIGNED || ember_isa_pkg::ROLE_ACT_S1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_ACT_S1_BITS;
  localparam int unsigned X2B = ember_isa_pkg::ROLE_ACT_S2_SIGNED || ember_isa_pkg::ROLE_ACT_S2_BITS > 64 ? 64 : ember_isa_pkg::ROLE_ACT_S2_BITS;
  localparam int unsigned CAB = ember_isa_pkg::ROLE_ACC_ADDR_SIGNED || ember_isa_pkg::ROLE_ACC_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_ACC_ADDR_BITS;
  localparam int unsigned C0B = ember_isa_pkg::ROLE_ACC_S0_SIGNED || ember_isa_pkg::ROLE_ACC_S0_BITS > 64 ? 64 : ember_isa_pkg::ROLE_ACC_S0_BITS;
  localparam int unsigned C1B = ember_isa_pkg::ROLE_ACC_S1_SIGNED || ember_isa_pkg::ROLE_ACC_S1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_ACC_S1_BITS;
  localparam int unsigned C2B = ember_isa_pkg::ROLE_ACC_S2_SIGNED || ember_isa_pkg::ROLE_ACC_S2_BITS > 64 ? 64 : ember_isa_pkg::ROLE_ACC_S2_BITS;
  localparam int unsigned WAB = ember_isa_pkg::ROLE_WGT_ADDR_SIGNED || ember_isa_pkg::ROLE_WGT_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_WGT_ADDR_BITS;
  localparam int unsigned W2B = ember_isa_pkg::ROLE_WGT_S2_SIGNED || ember_isa_pkg::ROLE_WGT_S2_BITS > 64 ? 64 : ember_isa_pkg::ROLE_WGT_S2_BITS;
  localparam int unsigned RSB = ember_isa_pkg::ROLE_RESET_SIGNED || ember_isa_pkg::ROLE_RESET_BITS > 64 ? 64 : ember_isa_pkg::ROLE_RESET_BITS;
  // Row address bits of each memory (rows are a power of two): the datapath's row
  // arithmetic is modulo 2^AW, exact because the checks keep every row in range (and
  // ember_npu uses the low AW bits of a row output only).
  localparam int unsigned XAW = ember_isa_pkg::MEM_ACT_ROWS > 1 ? $clog2(ember_isa_pkg::MEM_ACT_ROWS) : 1;
  localparam int unsigned CAW = ember_isa_pkg::MEM_ACC_ROWS > 1 ? $clog2(ember_isa_pkg::MEM_ACC_ROWS) : 1;
  localparam int unsigned WAW = ember_isa_pkg::MEM_WEIGHT_ROWS > 1 ? $clog2(ember_isa_pkg::MEM_WEIGHT_ROWS) : 1;
  // The operand checks' last rows, exact: base + (n0 - 1) * s0 + (n1 - 1) * s1 + (n2 - 1) * s2.
  localparam int unsigned WX0 = (N0B + X0B > N1B + X1B ? N0B + X0B : N1B + X1B);
  localparam int unsigned WX1 = (N2B + X2B > XAB ? N2B + X2B : XAB);
  localparam int unsigned WX = (WX0 > WX1 ? WX0 : WX1) + 2;
  localparam int unsigned WC0 = (N0B + C0B > N1B + C1B ? N0B + C0B : N1B + C1B);
  localparam int unsigned WC1 = (N2B + C2B > CAB ? N2B + C2B : CAB);
  localparam int unsigned WC = (WC0 > WC1 ? WC0 : WC1) + 2;
  localparam int unsigned WW = (N2B + W2B > WAB ? N2B + W2B : WAB) + 1;
  // ... compared with a row count (at most 2^32) in at least 33 bits.
  localparam int unsigned KX = WX > 33 ? WX : 33;
  localparam int unsigned KC = WC > 33 ? WC : 33;
  localparam int unsigned KW = WW > 33 ? WW : 33;

  logic [N0B-1:0] n0, n0m1;
  logic [N1B-1:0] n1, n1m1;
  logic [N2B-1:0] n2, n2m1;
  logic reset;
  logic [WX-1:0] last_act;
  logic [WC-1:0] last_acc;
  logic [WW-1:0] last_wgt;
  always_comb begin
    n0 = f_i[64*ember_npu_pkg::R_N0 +: N0B];
    n1 = f_i[64*ember_npu_pkg::R_N1 +: N1B];
    n2 = f_i[64*ember_npu_pkg::R_N2 +: N2B];
    n0m1 = n0 - N0B'(1);
    n1m1 = n1 - N1B'(1);
    n2m1 = n2 - N2B'(1);
    reset = f_i[64*ember_npu_pkg::R_RESET +: RSB] != 0;
    last_act = WX'(f_i[64*ember_npu_pkg::R_ACT_ADDR +: XAB]) + WX'(n0m1) * WX'(f_i[64*ember_npu_pkg::R_ACT_S0 +: X0B])
             + WX'(n1m1) * WX'(f_i[64*ember_npu_pkg::R_ACT_S1 +: X1B]) + WX'(n2m1) * WX'(f_i[64*ember_npu_pkg::R_ACT_S2 +: X2B]);
    last_acc = WC'(f_i[64*ember_npu_pkg::R_ACC_ADDR +: CAB]) + WC'(n0m1) * WC'(f_i[64*ember_npu_pkg::R_ACC_S0 +: C0B])
             + WC'(n1m1) * WC'(f_i[64*ember_npu_pkg::R_ACC_S1 +: C1B]) + WC'(n2m1) * WC'(f_i[64*ember_npu_pkg::R_ACC_S2 +: C2B]);
    last_wgt = WW'(f_i[64*ember_npu_pkg::R_WGT_ADDR +: WAB]) + WW'(n2m1) * WW'(f_i[64*ember_npu_pkg::R_WGT_S2 +: W2B]);
  end

  // Operand checks (Machine::gemm order: a background gemm's push flags (rule E6: its
  // data is not complete when it retires), then acc, then act and weight unless reset).
  // The model's last rows saturate at 2^64 - 1, which compares with a row count as the
  // exact value does.
  always_comb begin
    chk_fault_o = 1'b0;
    chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
    if (bg_i && (f_i[64*ember_npu_pkg::R_PUSH_PREV +: ember_isa_pkg::ROLE_PUSH_PREV_BITS] != 0
                 || f_i[64*ember_npu_pkg::R_PUSH_NEXT +: ember_isa_pkg::ROLE_PUSH_NEXT_BITS] != 0)) begin
      chk_fault_o = 1'b1;
      chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    end else if (n0 != 0 && n1 != 0 && n2 != 0) begin
      if (KC'(last_acc) >= KC'(64'(ember_isa_pkg::MEM_ACC_ROWS)))
        chk_fault_o = 1'b1;
      else if (!reset && (KX'(last_act) >= KX'(64'(ember_isa_pkg::MEM_ACT_ROWS))
                          || KW'(last_wgt) >= KW'(64'(ember_isa_pkg::MEM_WEIGHT_ROWS))))
        chk_fault_o = 1'b1;
    end
  end

  logic active_q, reset_q;
  logic [N0B-1:0] n0_q, i0_q;
  logic [N1B-1:0] n1_q, i1_q;
  logic [N2B-1:0] n2_q, i2_q;
  logic [XAW-1:0] xa_q, xs0_q, xs1_q, xs2_q;
  logic [CAW-1:0] ca_q, cs0_q, cs1_q, cs2_q;
  logic [WAW-1:0] wa_q, ws2_q;
  logic [8*ember_isa_pkg::MEM_WEIGHT_ROW_BYTES-1:0] wreg_q;

  assign busy_o = active_q;
  logic [XAW-1:0] act_row;
  logic [CAW-1:0] acc_row;
  logic [WAW-1:0] wgt_row;
  assign act_row = xa_q + XAW'(i0_q) * xs0_q + XAW'(i1_q) * xs1_q + XAW'(i2_q) * xs2_q;
  assign acc_row = ca_q + CAW'(i0_q) * cs0_q + CAW'(i1_q) * cs1_q + CAW'(i2_q) * cs2_q;
  assign wgt_row = wa_q + WAW'(i2_q) * ws2_q;
  assign act_row_o = 32'(act_row);
  assign acc_row_o = 32'(acc_row);
  assign wgt_row_o = 32'(wgt_row);

  // The weight block of this step: fresh from the SRAM on the block's first step.
  logic first_w;
  logic [8*ember_isa_pkg::MEM_WEIGHT_ROW_BYTES-1:0] w_w;
  assign first_w = i0_q == 0 && i1_q == 0;
  assign w_w = first_w ? wgt_i : wreg_q;

  // The array: output channel k sums act lane c times W[k][c] (weight byte k * R + c).
  for (genvar k = 0; k < C; k++) begin : g_col
    ember_mac_column u_col (
        .act_i(act_i[0 +: 8*R]), .wgt_i(w_w[8*k*R +: 8*R]), .acc_i(acc_i[32*k +: 32]),
        .clear_i(reset_q), .acc_o(acc_o[32*k +: 32]));
  end
  assign acc_we_o = active_q;

  // A field's low bits (row arithmetic modulo 2^AW; a narrower role zero-extended).
  function automatic logic [63:0] fld(input int unsigned r);
    fld = f_i[64*r +: 64];
  endfunction
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q <= 1'b0;
      reset_q <= 1'b0;
      {n0_q, n1_q, n2_q, i0_q, i1_q, i2_q} <= '0;
      {xa_q, xs0_q, xs1_q, xs2_q, ca_q, cs0_q, cs1_q, cs2_q, wa_q, ws2_q} <= '0;
      wreg_q <= '0;
    end else if (start_i) begin
      active_q <= n0 != 0 && n1 != 0 && n2 != 0;
      reset_q <= reset;
      n0_q <= n0; n1_q <= n1; n2_q <= n2;
      {i0_q, i1_q, i2_q} <= '0;
      xa_q <= XAW'(fld(ember_npu_pkg::R_ACT_ADDR)); xs0_q <= XAW'(fld(ember_npu_pkg::R_ACT_S0));
      xs1_q <= XAW'(fld(ember_npu_pkg::R_ACT_S1)); xs2_q <= XAW'(fld(ember_npu_pkg::R_ACT_S2));
      ca_q <= CAW'(fld(ember_npu_pkg::R_ACC_ADDR)); cs0_q <= CAW'(fld(ember_npu_pkg::R_ACC_S0));
      cs1_q <= CAW'(fld(ember_npu_pkg::R_ACC_S1)); cs2_q <= CAW'(fld(ember_npu_pkg::R_ACC_S2));
      wa_q <= WAW'(fld(ember_npu_pkg::R_WGT_ADDR)); ws2_q <= WAW'(fld(ember_npu_pkg::R_WGT_S2));
    end else if (active_q) begin
      wreg_q <= w_w;
      if (i0_q + N0B'(1) < n0_q) i0_q <= i0_q + N0B'(1);
      else begin
        i0_q <= '0;
        if (i1_q + N1B'(1) < n1_q) i1_q <= i1_q + N1B'(1);
        else begin
          i1_q <= '0;
          if (i2_q + N2B'(1) < n2_q) i2_q <= i2_q + N2B'(1);
          else active_q <= 1'b0;
        end
      end
    end
  end
endmodule : ember_gemm
