// A DMA engine's datapath (LOAD = 1: dma-load, DRAM -> SRAM with padding; LOAD = 0:
// dma-store, SRAM -> DRAM). The controller starts it (start_i, in the start cycle s,
// with the instruction's fields) and ends the instruction at the contract's cycle; this
// datapath finishes within it (docs/rtl.md section 4):
//  - DRAM rows are requested paced evenly over the X cycles the channel is reserved
//    (row i at begin + ceil(i * X / D)), so at most about max_outstanding bursts are in
//    flight and the last response arrives by begin + X - 1 + latency < end;
//  - a load writes each response into the SRAM the cycle it arrives, and the padding
//    rows (S - D of them) in the cycles no response arrives.
// chk_fault_o/chk_kind_o are the operand checks of the instruction on f_i (rule: the
// simulator's Machine::dma), evaluated combinationally in the start cycle.
module ember_dma #(
    parameter bit LOAD = 1'b1
) (
    input  logic clk_i,
    input  logic rst_ni,
    input  logic [ember_npu_pkg::FIELDS_BITS-1:0] f_i,
    input  logic [63:0] window_i,
    output logic chk_fault_o,
    output logic [2:0] chk_kind_o,
    input  logic start_i,
    input  logic [63:0] cyc_i,
    input  logic [63:0] begin_i,
    input  logic [63:0] xfer_i,
    output logic busy_o,
    // SRAM side: loads write, stores read (asynchronous read).
    output logic sram_we_o,
    output logic sram_re_o,
    output logic [1:0] sram_mem_o,  // memory id
    output logic [31:0] sram_row_o,
    output logic [ember_isa_pkg::ROW_BITS-1:0] sram_wdata_o,
    input  logic [ember_isa_pkg::ROW_BITS-1:0] sram_rdata_i,
    // DRAM request / response (one SRAM row each; tag = SRAM row).
    output logic dram_req_valid_o,
    input  logic dram_req_ready_i,
    output logic dram_req_write_o,
    output logic [63:0] dram_req_addr_o,
    output logic [31:0] dram_req_bytes_o,
    output logic [31:0] dram_req_tag_o,
    output logic [ember_isa_pkg::ROW_BITS-1:0] dram_req_wdata_o,
    input  logic dram_rsp_valid_i,
    input  logic [31:0] dram_rsp_tag_i,
    input  logic [ember_isa_pkg::ROW_BITS-1:0] dram_rsp_rdata_i
);

  function automatic logic [63:0] fld(input int unsigned r);
    fld = f_i[64*r +: 64];
  endfunction
  function automatic logic [63:0] rowsOf(input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) rowsOf = 64'(ember_isa_pkg::MEM_ACT_ROWS);
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) rowsOf = 64'(ember_isa_pkg::MEM_WEIGHT_ROWS);
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) rowsOf = 64'(ember_isa_pkg::MEM_ACC_ROWS);
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) rowsOf = 64'(ember_isa_pkg::MEM_PARAM_ROWS);
    else rowsOf = 64'd0;
  endfunction
  function automatic logic [63:0] rowBytesOf(input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) rowBytesOf = 64'(ember_isa_pkg::MEM_ACT_ROW_BYTES);
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) rowBytesOf = 64'(ember_isa_pkg::MEM_WEIGHT_ROW_BYTES);
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) rowBytesOf = 64'(ember_isa_pkg::MEM_ACC_ROW_BYTES);
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) rowBytesOf = 64'(ember_isa_pkg::MEM_PARAM_ROW_BYTES);
    else rowBytesOf = 64'd1;
  endfunction

  // ---- Operand checks (start cycle) ----
  logic [127:0] line_w, plane_w, srows_w, dend_w;
  always_comb begin
    line_w = LOAD ? 128'(fld(ember_npu_pkg::R_PAD_LEFT)) + 128'(fld(ember_npu_pkg::R_SIZE0)) + 128'(fld(ember_npu_pkg::R_PAD_RIGHT))
                  : 128'(fld(ember_npu_pkg::R_SIZE0));
    plane_w = LOAD ? 128'(fld(ember_npu_pkg::R_PAD_TOP)) + 128'(fld(ember_npu_pkg::R_SIZE1)) + 128'(fld(ember_npu_pkg::R_PAD_BOTTOM))
                   : 128'(fld(ember_npu_pkg::R_SIZE1));
    srows_w = line_w * plane_w * 128'(fld(ember_npu_pkg::R_SIZE2));
    dend_w = 128'(fld(ember_npu_pkg::R_DRAM_ADDR))
           + ((128'(fld(ember_npu_pkg::R_SIZE2)) - 1) * 128'(fld(ember_npu_pkg::R_STRIDE2))
              + (128'(fld(ember_npu_pkg::R_SIZE1)) - 1) * 128'(fld(ember_npu_pkg::R_STRIDE1)) + 128'(fld(ember_npu_pkg::R_SIZE0)))
             * 128'(rowBytesOf(fld(ember_npu_pkg::R_SRAM)));
    chk_fault_o = 1'b0;
    chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    if (rowsOf(fld(ember_npu_pkg::R_SRAM)) == 0) begin
      chk_fault_o = 1'b1;
    end else if (srows_w != 0) begin
      if (128'(fld(ember_npu_pkg::R_SRAM_ADDR)) + srows_w > 128'(rowsOf(fld(ember_npu_pkg::R_SRAM)))) begin
        chk_fault_o = 1'b1;
        chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
      end else if (fld(ember_npu_pkg::R_SIZE0) != 0 && fld(ember_npu_pkg::R_SIZE1) != 0 && fld(ember_npu_pkg::R_SIZE2) != 0
                   && dend_w > 128'(window_i)) begin
        chk_fault_o = 1'b1;
        chk_kind_o = ember_npu_pkg::FK_DRAM_RANGE;
      end
    end
  end

  // ---- Latched instruction ----
  logic [1:0] mem_q;
  logic [63:0] rb_q, saddr_q, daddr_q, s0_q, s1_q, s2_q, st1_q, st2_q;
  logic [63:0] pl_q, pr_q, pt_q, pb_q, line_q, plane_q, rows_q, x_q, beg_q;
  logic [7:0] pv_q;
  // Data rows: requests issued, position (x0, l, p), pacing credit.
  logic [63:0] issued_q, x0_q, l_q, p_q;
  logic [127:0] credit_q;
  logic req_active_q;
  // Padding scan (loads): next pad row position, done flag.
  logic [63:0] pp_q, pL_q, px_q;
  logic pad_active_q;
  logic [63:0] inflight_q;

  // ---- Request path ----
  logic issue_w;
  logic [63:0] dline_w;  // DRAM line address of (l, p)
  always_comb begin
    dline_w = daddr_q + (p_q * st2_q + l_q * st1_q) * rb_q;
    issue_w = req_active_q && cyc_i >= beg_q && credit_q >= 128'(x_q) && dram_req_ready_i;
    dram_req_valid_o = req_active_q && cyc_i >= beg_q && credit_q >= 128'(x_q);
    dram_req_write_o = !LOAD;
    dram_req_addr_o = dline_w + x0_q * rb_q;
    dram_req_bytes_o = 32'(rb_q);
    dram_req_tag_o = 32'(saddr_q + (p_q * plane_q + pt_q + l_q) * line_q + pl_q + x0_q);
    sram_re_o = !LOAD && dram_req_valid_o;
    dram_req_wdata_o = sram_rdata_i;
  end

  // ---- Padding positions (loads) ----
  // The pad rows of a plane: whole lines above and below the data, and pad_left /
  // pad_right rows around each data line; data lines without side padding are skipped
  // in one step.
  function automatic logic isData(input logic [63:0] L);
    isData = L >= pt_q && L < pt_q + s1_q;
  endfunction
  logic [63:0] np_w, nL_w, nx_w;
  logic ndone_w;
  always_comb begin
    np_w = pp_q;
    nL_w = pL_q;
    nx_w = px_q + 1;
    ndone_w = 1'b0;
    if (isData(pL_q) && nx_w == pl_q) nx_w = pl_q + s0_q;
    if (nx_w >= line_q) begin
      nL_w = pL_q + 1;
      if (isData(nL_w) && pl_q + pr_q == 0) nL_w = pt_q + s1_q;
      if (nL_w >= plane_q) begin
        np_w = pp_q + 1;
        nL_w = 0;
        if (isData(0) && pl_q + pr_q == 0) nL_w = pt_q + s1_q;
        if (np_w >= s2_q || nL_w >= plane_q) ndone_w = 1'b1;
      end
      nx_w = (isData(nL_w) && pl_q == 0) ? s0_q : 64'd0;
    end
  end

  // ---- SRAM write port (loads): a response, else a pad row ----
  logic pad_write_w;
  always_comb begin
    pad_write_w = LOAD && pad_active_q && !dram_rsp_valid_i;
    sram_we_o = LOAD && (dram_rsp_valid_i || pad_write_w);
    sram_mem_o = mem_q;
    sram_wdata_o = dram_rsp_valid_i ? dram_rsp_rdata_i : {ember_isa_pkg::MAX_ROW_BYTES{pv_q}};
    if (!LOAD) sram_row_o = dram_req_tag_o;
    else if (dram_rsp_valid_i) sram_row_o = dram_rsp_tag_i;
    else sram_row_o = 32'(saddr_q + (pp_q * plane_q + pL_q) * line_q + px_q);
  end

  assign busy_o = req_active_q || pad_active_q || inflight_q != 0;

  // First pad position of a fresh instruction (plane 0), computed from f_i.
  logic [63:0] f_pl, f_pr, f_pt, f_pb, f_s0, f_s1, f_s2, fL_w, fx_w;
  logic fpad_w;
  always_comb begin
    f_pl = LOAD ? fld(ember_npu_pkg::R_PAD_LEFT) : 64'd0;
    f_pr = LOAD ? fld(ember_npu_pkg::R_PAD_RIGHT) : 64'd0;
    f_pt = LOAD ? fld(ember_npu_pkg::R_PAD_TOP) : 64'd0;
    f_pb = LOAD ? fld(ember_npu_pkg::R_PAD_BOTTOM) : 64'd0;
    f_s0 = fld(ember_npu_pkg::R_SIZE0);
    f_s1 = fld(ember_npu_pkg::R_SIZE1);
    f_s2 = fld(ember_npu_pkg::R_SIZE2);
    // Line 0 is a data line when there is no top padding: start after its left padding
    // (or at its right padding, or below the data when data lines have no side pads).
    fL_w = (f_pt == 0 && f_s1 != 0 && f_pl + f_pr == 0) ? f_s1 : 64'd0;
    fx_w = (f_pt == 0 && f_s1 != 0 && f_pl == 0 && f_pr != 0) ? f_s0 : 64'd0;
    fpad_w = LOAD && srows_w != 0 && srows_w != 128'(f_s0) * 128'(f_s1) * 128'(f_s2);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      req_active_q <= 1'b0;
      pad_active_q <= 1'b0;
      mem_q <= '0;
      rb_q <= '0; saddr_q <= '0; daddr_q <= '0; s0_q <= '0; s1_q <= '0; s2_q <= '0;
      st1_q <= '0; st2_q <= '0; pl_q <= '0; pr_q <= '0; pt_q <= '0; pb_q <= '0;
      line_q <= '0; plane_q <= '0; rows_q <= '0; x_q <= '0; beg_q <= '0; pv_q <= '0;
      issued_q <= '0; x0_q <= '0; l_q <= '0; p_q <= '0; credit_q <= '0;
      pp_q <= '0; pL_q <= '0; px_q <= '0;
    end else if (start_i) begin
      mem_q <= f_i[64*ember_npu_pkg::R_SRAM +: 2];
      rb_q <= rowBytesOf(fld(ember_npu_pkg::R_SRAM));
      saddr_q <= fld(ember_npu_pkg::R_SRAM_ADDR);
      daddr_q <= fld(ember_npu_pkg::R_DRAM_ADDR);
      s0_q <= f_s0; s1_q <= f_s1; s2_q <= f_s2;
      st1_q <= fld(ember_npu_pkg::R_STRIDE1); st2_q <= fld(ember_npu_pkg::R_STRIDE2);
      pl_q <= f_pl; pr_q <= f_pr; pt_q <= f_pt; pb_q <= f_pb;
      line_q <= 64'(line_w);
      plane_q <= 64'(plane_w);
      rows_q <= f_s0 * f_s1 * f_s2;
      x_q <= xfer_i;
      beg_q <= begin_i;
      pv_q <= LOAD ? f_i[64*ember_npu_pkg::R_PAD_VALUE +: 8] : 8'd0;
      issued_q <= '0; x0_q <= '0; l_q <= '0; p_q <= '0;
      credit_q <= 128'(xfer_i);
      req_active_q <= f_s0 != 0 && f_s1 != 0 && f_s2 != 0;
      pp_q <= '0; pL_q <= fL_w; px_q <= fx_w;
      pad_active_q <= fpad_w;
    end else begin
      if (req_active_q && cyc_i >= beg_q) begin
        credit_q <= credit_q - (issue_w ? 128'(x_q) : 128'd0) + 128'(rows_q);
        if (issue_w) begin
          issued_q <= issued_q + 1;
          if (issued_q + 1 == rows_q) req_active_q <= 1'b0;
          if (x0_q + 1 < s0_q) x0_q <= x0_q + 1;
          else begin
            x0_q <= '0;
            if (l_q + 1 < s1_q) l_q <= l_q + 1;
            else begin
              l_q <= '0;
              p_q <= p_q + 1;
            end
          end
        end
      end
      if (pad_write_w) begin
        pp_q <= np_w; pL_q <= nL_w; px_q <= nx_w;
        if (ndone_w) pad_active_q <= 1'b0;
      end
    end
  end

  // Rows requested and not yet answered (loads; a store's writes need no response).
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) inflight_q <= '0;
    else if (LOAD)
      inflight_q <= inflight_q + (issue_w && !start_i ? 64'd1 : 64'd0)
                    - (dram_rsp_valid_i ? 64'd1 : 64'd0);
  end

  logic unused_w;
  assign unused_w = ^{pb_q, dram_rsp_tag_i[0]};
endmodule : ember_dma
