// The duration of an instruction: the closed-form rules D1, G1-G2, V1 and S1 of the
// timing contract (docs/simulator.md section 2.2), the same arithmetic as
// isa/src/timing.cpp. Purely combinational and independent of when the instruction
// starts: fetch evaluates it once and the queue carries it; at the start the engine adds
// the DRAM channel's wait (rule D2) to a DMA's duration. 128-bit intermediates; a
// duration above 2^64 - 1 raises ovf_o (a cycle-budget fault).
module ember_timing (
    input  logic [ember_isa_pkg::CLS_BITS-1:0] cls_i,
    input  logic [31:0] t_issue_i,
    input  logic [31:0] t_setup_i,
    input  logic [31:0] t_cpr_i,
    input  logic [31:0] t_pipe_i,
    input  logic [ember_npu_pkg::FIELDS_BITS-1:0] f_i,
    output logic [63:0] dur_o,         // T when nothing waits (a DMA: channel free at once)
    output logic [63:0] mstall_o,      // memory stall inside T (bank conflicts)
    output logic ovf_o,                // T does not fit 64 bits
    output logic books_o,              // a DMA that reserves the channel
    output logic [63:0] head_o,        // DMA: issue + setup, before the transfer begins
    output logic [63:0] xfer_o,        // DMA: X, cycles the channel is reserved
    output logic [63:0] macs_o,        // MACs it performs (gemm), for the counters
    output logic [63:0] dram_bytes_o   // DRAM bytes it moves (DMA)
);

  function automatic logic [63:0] fld(input logic [ember_npu_pkg::FIELDS_BITS-1:0] f, input int unsigned r);
    fld = f[64*r +: 64];
  endfunction
  function automatic logic [127:0] rowBytesOf(input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) rowBytesOf = 128'(ember_isa_pkg::MEM_ACT_ROW_BYTES);
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) rowBytesOf = 128'(ember_isa_pkg::MEM_WEIGHT_ROW_BYTES);
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) rowBytesOf = 128'(ember_isa_pkg::MEM_ACC_ROW_BYTES);
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) rowBytesOf = 128'(ember_isa_pkg::MEM_PARAM_ROW_BYTES);
    else rowBytesOf = 128'd1;
  endfunction
  function automatic logic [127:0] banksOf(input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) banksOf = 128'(ember_isa_pkg::MEM_ACT_BANKS);
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) banksOf = 128'(ember_isa_pkg::MEM_WEIGHT_BANKS);
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) banksOf = 128'(ember_isa_pkg::MEM_ACC_BANKS);
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) banksOf = 128'(ember_isa_pkg::MEM_PARAM_BANKS);
    else banksOf = 128'd0;
  endfunction
  function automatic logic [127:0] portsOf(input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) portsOf = 128'(ember_isa_pkg::MEM_ACT_READ_PORTS);
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) portsOf = 128'(ember_isa_pkg::MEM_WEIGHT_READ_PORTS);
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) portsOf = 128'(ember_isa_pkg::MEM_ACC_READ_PORTS);
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) portsOf = 128'(ember_isa_pkg::MEM_PARAM_READ_PORTS);
    else portsOf = 128'd2;
  endfunction
  function automatic logic [127:0] max128(input logic [127:0] a, input logic [127:0] b);
    max128 = a > b ? a : b;
  endfunction

  localparam logic [127:0] BPC = 128'(ember_isa_pkg::DRAM_BYTES_PER_CYCLE);
  localparam logic [127:0] INFLIGHT = 128'(ember_isa_pkg::DMA_MAX_OUTSTANDING) * 128'(ember_isa_pkg::DMA_BURST_BYTES);
  localparam logic [127:0] LAT = 128'(ember_isa_pkg::DMA_LATENCY_CYCLES);
  localparam logic [127:0] WL = 128'(ember_isa_pkg::MAC_WEIGHT_LOAD_CYCLES);
  localparam logic [127:0] FD = 128'(ember_isa_pkg::MAC_FILL_CYCLES) + 128'(ember_isa_pkg::MAC_DRAIN_CYCLES);

  logic [127:0] issue, cpr, head, rb, d_rows, s_rows, beats, little, x, t;
  logic [127:0] steps, rows, blk, confl, per, banks, mask, ra, rb2, mem0, mem1;
  logic [127:0] n0, n1, n2;
  logic [6:0] bshift;

  always_comb begin
    issue = 128'(t_issue_i);
    cpr = 128'(t_cpr_i);
    head = issue + 128'(t_setup_i);
    t = issue;
    mstall_o = '0;
    books_o = 1'b0;
    head_o = '0;
    xfer_o = '0;
    macs_o = '0;
    dram_bytes_o = '0;
    rb = '0; d_rows = '0; s_rows = '0; beats = '0; little = '0; x = '0;
    steps = '0; rows = '0; blk = '0; confl = '0; per = '0; banks = '0; mask = '0;
    ra = '0; rb2 = '0; mem0 = '0; mem1 = '0; bshift = '0;
    n0 = 128'(fld(f_i, ember_npu_pkg::R_N0));
    n1 = 128'(fld(f_i, ember_npu_pkg::R_N1));
    n2 = 128'(fld(f_i, ember_npu_pkg::R_N2));
    unique case (cls_i)
      ember_isa_pkg::CLS_DMA_LOAD, ember_isa_pkg::CLS_DMA_STORE: begin
        // D1: X = max(D * ceil(rb / bytes_per_cycle), S, ceil(D * rb * latency / inflight)).
        rb = rowBytesOf(fld(f_i, ember_npu_pkg::R_SRAM));
        d_rows = 128'(fld(f_i, ember_npu_pkg::R_SIZE0)) * 128'(fld(f_i, ember_npu_pkg::R_SIZE1)) * 128'(fld(f_i, ember_npu_pkg::R_SIZE2));
        if (cls_i == ember_isa_pkg::CLS_DMA_LOAD)
          s_rows = (128'(fld(f_i, ember_npu_pkg::R_PAD_LEFT)) + 128'(fld(f_i, ember_npu_pkg::R_SIZE0)) + 128'(fld(f_i, ember_npu_pkg::R_PAD_RIGHT)))
                 * (128'(fld(f_i, ember_npu_pkg::R_PAD_TOP)) + 128'(fld(f_i, ember_npu_pkg::R_SIZE1)) + 128'(fld(f_i, ember_npu_pkg::R_PAD_BOTTOM)))
                 * 128'(fld(f_i, ember_npu_pkg::R_SIZE2));
        else
          s_rows = d_rows;
        beats = d_rows * ((rb + BPC - 1) / BPC);
        little = (d_rows * rb * LAT + INFLIGHT - 1) / INFLIGHT;
        x = max128(max128(beats, s_rows), little);
        dram_bytes_o = 64'(d_rows * rb);
        if (d_rows == 0) begin
          t = head + s_rows;
        end else begin
          // D2 (at the start): the channel is booked for X cycles from
          // max(start + head, channel free); here the duration when it is free at once.
          t = head + x + LAT;
          books_o = 1'b1;
          head_o = 64'(head);
          xfer_o = 64'(x);
        end
      end
      ember_isa_pkg::CLS_GEMM: begin
        steps = n0 * n1;
        rows = steps * cpr;
        if (steps != 0 && n2 != 0) begin
          if (fld(f_i, ember_npu_pkg::R_RESET) != 0) begin
            t = issue + steps * n2 * cpr;  // G2
          end else begin
            blk = ember_isa_pkg::MAC_WEIGHT_BUFFERS >= 2 ? max128(rows, WL) : WL + rows;
            t = issue + WL + (n2 - 1) * blk + rows + FD;  // G1
            macs_o = 64'(steps * n2 * 128'(ember_isa_pkg::MAC_ROWS) * 128'(ember_isa_pkg::MAC_COLS));
          end
        end
      end
      ember_isa_pkg::CLS_VECTOR_BINARY, ember_isa_pkg::CLS_VECTOR_UNARY, ember_isa_pkg::CLS_REQUANTIZE, ember_isa_pkg::CLS_LUT: begin
        steps = n0 * n1;
        if (cls_i == ember_isa_pkg::CLS_VECTOR_BINARY) begin
          // V1: a step whose two source rows share a bank waits ceil(2 / ports) - 1
          // cycles. Whether they share one depends on i0, i1 modulo banks only, so each
          // residue class is counted once (at most banks^2 terms).
          banks = banksOf(fld(f_i, ember_npu_pkg::R_SRC_MEM));
          per = (128'd2 + portsOf(fld(f_i, ember_npu_pkg::R_SRC_MEM)) - 1) / portsOf(fld(f_i, ember_npu_pkg::R_SRC_MEM)) - 1;
          mask = banks - 1;
          for (int s = 0; s < 7; s++)
            if (banks == (128'd1 << s)) bshift = 7'(s);
          if (banks != 0 && per != 0)
            for (int r1 = 0; r1 < ember_isa_pkg::MAX_BANKS; r1++)
              for (int r0 = 0; r0 < ember_isa_pkg::MAX_BANKS; r0++)
                if (128'(r1) < banks && 128'(r0) < banks && 128'(r1) < n1 && 128'(r0) < n0) begin
                  ra = 128'(fld(f_i, ember_npu_pkg::R_SRC0_ADDR)) + 128'(r0) * 128'(fld(f_i, ember_npu_pkg::R_SRC0_S0))
                     + 128'(r1) * 128'(fld(f_i, ember_npu_pkg::R_SRC0_S1));
                  rb2 = 128'(fld(f_i, ember_npu_pkg::R_SRC1_ADDR)) + 128'(r0) * 128'(fld(f_i, ember_npu_pkg::R_SRC1_S0))
                      + 128'(r1) * 128'(fld(f_i, ember_npu_pkg::R_SRC1_S1));
                  mem0 = ((n0 - 128'(r0) - 1) >> bshift) + 1;
                  mem1 = ((n1 - 128'(r1) - 1) >> bshift) + 1;
                  if ((ra & mask) == (rb2 & mask)) confl = confl + per * mem0 * mem1;
                end
        end
        if (steps != 0) begin
          t = issue + steps * cpr + confl + 128'(t_pipe_i);
          mstall_o = 64'(confl);
        end
      end
      default: t = issue;  // sync, halt (S1)
    endcase
    ovf_o = t[127:64] != 0;
    dur_o = 64'(t);
  end
endmodule : ember_timing
