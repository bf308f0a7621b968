// The weight-stationary MAC array: MAC_ROWS x MAC_COLS int8 multipliers, int32
// accumulation in the acc SRAM. One step a cycle (i0 innermost, then i1, then i2, as
// docs/isa.md defines gemm): read an act row and an acc row, add the array's products,
// write the acc row back. The weight block of step (0, 0, i2) is read from the weight
// SRAM in that step and held in the stationary register for the rest of the block (the
// second buffer of the description is the SRAM output itself). reset clears acc rows.
// It takes n0 * n1 * n2 cycles, within the contract's duration (rules G1, G2), which
// adds weight-load, fill and drain cycles this datapath does not need.
module ember_gemm (
    input  logic clk_i,
    input  logic rst_ni,
    input  logic [ember_npu_pkg::FIELDS_BITS-1:0] f_i,
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

  function automatic logic [63:0] fld(input int unsigned r);
    fld = f_i[64*r +: 64];
  endfunction
  function automatic logic [127:0] last(input logic [63:0] base, input logic [63:0] s0,
                                        input logic [63:0] s1, input logic [63:0] s2);
    last = 128'(base) + (128'(fld(ember_npu_pkg::R_N0)) - 1) * 128'(s0) + (128'(fld(ember_npu_pkg::R_N1)) - 1) * 128'(s1)
         + (128'(fld(ember_npu_pkg::R_N2)) - 1) * 128'(s2);
  endfunction

  // Operand checks (Machine::gemm order: acc, then act and weight unless reset).
  always_comb begin
    chk_fault_o = 1'b0;
    chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
    if (fld(ember_npu_pkg::R_N0) != 0 && fld(ember_npu_pkg::R_N1) != 0 && fld(ember_npu_pkg::R_N2) != 0) begin
      if (last(fld(ember_npu_pkg::R_ACC_ADDR), fld(ember_npu_pkg::R_ACC_S0), fld(ember_npu_pkg::R_ACC_S1), fld(ember_npu_pkg::R_ACC_S2)) >= 128'(ember_isa_pkg::MEM_ACC_ROWS))
        chk_fault_o = 1'b1;
      else if (fld(ember_npu_pkg::R_RESET) == 0
               && (last(fld(ember_npu_pkg::R_ACT_ADDR), fld(ember_npu_pkg::R_ACT_S0), fld(ember_npu_pkg::R_ACT_S1), fld(ember_npu_pkg::R_ACT_S2))
                       >= 128'(ember_isa_pkg::MEM_ACT_ROWS)
                   || 128'(fld(ember_npu_pkg::R_WGT_ADDR)) + (128'(fld(ember_npu_pkg::R_N2)) - 1) * 128'(fld(ember_npu_pkg::R_WGT_S2))
                       >= 128'(ember_isa_pkg::MEM_WEIGHT_ROWS)))
        chk_fault_o = 1'b1;
    end
  end

  logic active_q, reset_q;
  logic [63:0] n0_q, n1_q, n2_q, i0_q, i1_q, i2_q;
  logic [63:0] xa_q, xs0_q, xs1_q, xs2_q, ca_q, cs0_q, cs1_q, cs2_q, wa_q, ws2_q;
  logic [8*ember_isa_pkg::MEM_WEIGHT_ROW_BYTES-1:0] wreg_q;

  assign busy_o = active_q;
  assign act_row_o = 32'(xa_q + i0_q * xs0_q + i1_q * xs1_q + i2_q * xs2_q);
  assign acc_row_o = 32'(ca_q + i0_q * cs0_q + i1_q * cs1_q + i2_q * cs2_q);
  assign wgt_row_o = 32'(wa_q + i2_q * ws2_q);

  // The weight block of this step: fresh from the SRAM on the block's first step.
  logic first_w;
  logic [8*ember_isa_pkg::MEM_WEIGHT_ROW_BYTES-1:0] w_w;
  assign first_w = i0_q == 0 && i1_q == 0;
  assign w_w = first_w ? wgt_i : wreg_q;

  // The array: output channel k sums act lane c times W[k][c] (weight byte k * R + c).
  always_comb begin
    for (int k = 0; k < C; k++) begin
      logic [31:0] sum;
      sum = acc_i[32*k +: 32];
      for (int c = 0; c < R; c++)
        sum = sum + 32'($signed(act_i[8*c +: 8]) * $signed(w_w[8*(k*R+c) +: 8]));
      acc_o[32*k +: 32] = reset_q ? 32'd0 : sum;
    end
  end
  assign acc_we_o = active_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q <= 1'b0;
      reset_q <= 1'b0;
      {n0_q, n1_q, n2_q, i0_q, i1_q, i2_q} <= '0;
      {xa_q, xs0_q, xs1_q, xs2_q, ca_q, cs0_q, cs1_q, cs2_q, wa_q, ws2_q} <= '0;
      wreg_q <= '0;
    end else if (start_i) begin
      active_q <= fld(ember_npu_pkg::R_N0) != 0 && fld(ember_npu_pkg::R_N1) != 0 && fld(ember_npu_pkg::R_N2) != 0;
      reset_q <= fld(ember_npu_pkg::R_RESET) != 0;
      n0_q <= fld(ember_npu_pkg::R_N0); n1_q <= fld(ember_npu_pkg::R_N1); n2_q <= fld(ember_npu_pkg::R_N2);
      {i0_q, i1_q, i2_q} <= '0;
      xa_q <= fld(ember_npu_pkg::R_ACT_ADDR); xs0_q <= fld(ember_npu_pkg::R_ACT_S0); xs1_q <= fld(ember_npu_pkg::R_ACT_S1);
      xs2_q <= fld(ember_npu_pkg::R_ACT_S2);
      ca_q <= fld(ember_npu_pkg::R_ACC_ADDR); cs0_q <= fld(ember_npu_pkg::R_ACC_S0); cs1_q <= fld(ember_npu_pkg::R_ACC_S1);
      cs2_q <= fld(ember_npu_pkg::R_ACC_S2);
      wa_q <= fld(ember_npu_pkg::R_WGT_ADDR); ws2_q <= fld(ember_npu_pkg::R_WGT_S2);
    end else if (active_q) begin
      wreg_q <= w_w;
      if (i0_q + 1 < n0_q) i0_q <= i0_q + 1;
      else begin
        i0_q <= '0;
        if (i1_q + 1 < n1_q) i1_q <= i1_q + 1;
        else begin
          i1_q <= '0;
          if (i2_q + 1 < n2_q) i2_q <= i2_q + 1;
          else active_q <= 1'b0;
        end
      end
    end
  end
endmodule : ember_gemm
