// The control path of the NPU: fetch, the three instruction queues, the three engines'
// take / start / end / retire sequencing, the four token FIFOs (counters: tokens carry
// no data), the DRAM channel booking, the performance counters and fault detection.
// Every rule of the timing contract (docs/simulator.md section 2) is implemented here,
// evaluated each cycle in the contract's order: retire (E3, E4), then take and start for
// load, compute, store (E1, E2, D2), then fetch (F1-F4). The datapaths (ember_dma,
// ember_gemm, ember_vector) get a start pulse and finish within the duration that
// ember_timing gives; the operand checks they compute decide whether a start faults.
// Rule E6: the MAC array holds one gemm or depthwise instruction at a time for its whole
// duration T, from its start s to a = s + T (the array's end, a_q), while a background
// one holds the compute engine for its issue cycles only; a gemm, a depthwise, a compute
// sync and the halt start only from cycle a on.
module ember_control #(
    // 1: the DRAM channel is shared with other NPUs (docs/rtl/npu.md section 5.6): its
    // free cycle comes in on chan_i and leaves on chan_o; 0: this NPU's own register.
    parameter bit SHARED = 1'b0
) (
    input  logic clk_i,
    input  logic rst_ni,
    input  logic start_i,              // pulse: the job starts, cycle 0 is the next cycle
    input  logic [31:0] ninsn_i,       // instructions in the stream (held from the start)
    input  logic [63:0] budget_i,      // cycle budget
    output logic [31:0] imem_addr_o,   // fetch's read of the instruction buffer
    input  logic [ember_isa_pkg::INSTR_BITS-1:0] imem_data_i,
    // Held instruction of each engine (the queue head in its take cycle), decoded.
    output logic [ember_npu_pkg::FIELDS_BITS-1:0] f0_o,
    output logic [ember_npu_pkg::FIELDS_BITS-1:0] f1_o,
    output logic [ember_npu_pkg::FIELDS_BITS-1:0] f2_o,
    output logic [ember_isa_pkg::CLS_BITS-1:0] cls0_o,
    output logic [ember_isa_pkg::CLS_BITS-1:0] cls1_o,
    output logic [ember_isa_pkg::CLS_BITS-1:0] cls2_o,
    output logic [ember_isa_pkg::VOP_BITS-1:0] op1_o,
    output logic [31:0] table_off1_o,
    output logic bg1_o,                // the compute engine's array instruction runs in the background (E6)
    output logic ovw1_o,               // ... overwrites its first accumulation (properties.overwrite)
    output logic bias1_o,              // its requantize adds param row param_addr + 2 (properties.bias)
    // Operand checks of the held instructions (from the datapaths).
    input  logic chk0_i,
    input  logic [2:0] kind0_i,
    input  logic chk1_i,
    input  logic [2:0] kind1_i,
    input  logic chk2_i,
    input  logic [2:0] kind2_i,
    // Starts, and the DMA transfer window of the load (0) and store (2) engines.
    output logic start0_o,
    output logic start1_o,
    output logic start2_o,
    output logic [63:0] begin0_o,
    output logic [63:0] xfer0_o,
    output logic [63:0] begin2_o,
    output logic [63:0] xfer2_o,
    output logic [63:0] cyc_o,
    // Status.
    output logic done_o,
    output logic fault_o,
    output logic [2:0] fault_kind_o,
    output logic [1:0] fault_engine_o,   // 0 load, 1 compute, 2 store, 3 fetch
    output logic [31:0] fault_index_o,   // 32'hFFFF_FFFF: none
    output logic [63:0] fault_cycle_o,
    output logic [63:0] cycles_o,        // total, valid with done_o
    // Retirements of this cycle (one slice per engine, for co-simulation).
    output logic [2:0] ret_o,
    output logic [3*32-1:0] ret_index_o,
    output logic [3*64-1:0] ret_dispatch_o,
    output logic [3*64-1:0] ret_take_o,
    output logic [3*64-1:0] ret_start_o,
    output logic [3*64-1:0] ret_end_o,
    output logic [3*64-1:0] ret_mstall_o,
    // Counters (docs/simulator.md: busy + token + memory stall + idle = cycles).
    output logic [3*64-1:0] cnt_busy_o,
    output logic [3*64-1:0] cnt_token_o,
    output logic [3*64-1:0] cnt_memory_o,
    output logic [3*64-1:0] cnt_insns_o,
    output logic [63:0] cnt_fetch_stall_o,
    output logic [63:0] cnt_macs_o,
    output logic [63:0] cnt_dram_read_o,
    output logic [63:0] cnt_dram_write_o,
    // The shared DRAM channel (SHARED = 1; rules M1-M4 of docs/systems.md section 5): the
    // channel's free cycle this cycle starts with, the value after this NPU's bookings of
    // the cycle, whether it booked, and its arbitration stall (M4). SHARED = 0: chan_i is
    // not read, the three outputs are 0.
    input  logic [63:0] chan_i,
    output logic [63:0] chan_o,
    output logic booked_o,
    output logic [63:0] cnt_arb_o
);

  localparam logic [1:0] IDLE = 2'd0, WAITPOP = 2'd1, BUSY = 2'd2, WAITPUSH = 2'd3;
  // A queue entry: the word, its index, its dispatch cycle, and its timing (evaluated once
  // by fetch): duration, DMA head and transfer, memory stall, MACs, DRAM bytes, flags.
  localparam int unsigned TW = 6 * 64 + 2;
  localparam int unsigned QW = ember_isa_pkg::INSTR_BITS + 32 + 64 + TW;
  // A queue stores only what its instructions can have: a DMA (load and store queues) no
  // memory stall and no MACs (ember_timing gives them 0), and its head, issue + setup,
  // has at most 22 bits (two timing entries of 21); a compute instruction no head,
  // transfer, DRAM bytes or booking. (A sync, in any queue, has a duration only.)
  localparam int unsigned HB = 22;
  localparam int unsigned TWD = 3 * 64 + HB + 2;
  localparam int unsigned TWC = 3 * 64 + 1;
  localparam int unsigned QWD = QW - TW + TWD;
  localparam int unsigned QWC = QW - TW + TWC;
  // {word, index, dispatch, base, head, xfer, mstall, macs, dbytes, books, ovf}
  /* verilator lint_off UNUSEDSIGNAL */  // a pack drops the fields its queue has not
  function automatic logic [QWD-1:0] packDma(input logic [QW-1:0] x);
    packDma = {x[QW-1:TW], x[2+5*64 +: 64], x[2+4*64 +: HB], x[2+3*64 +: 64], x[2 +: 64], x[1:0]};
  endfunction
  function automatic logic [QW-1:0] unpackDma(input logic [QWD-1:0] y);
    unpackDma = {y[QWD-1:TWD], y[2+64+HB+64 +: 64], 64'(y[2+64+64 +: HB]), y[2+64 +: 64], 128'd0,
                 y[2 +: 64], y[1:0]};
  endfunction
  function automatic logic [QWC-1:0] packCompute(input logic [QW-1:0] x);
    packCompute = {x[QW-1:TW], x[2+5*64 +: 64], x[2+64 +: 128], x[0]};
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */
  function automatic logic [QW-1:0] unpackCompute(input logic [QWC-1:0] y);
    unpackCompute = {y[QWC-1:TWC], y[1+128 +: 64], 128'd0, y[1 +: 128], 65'd0, y[0]};
  endfunction
  localparam logic [63:0] TOKD = 64'(ember_isa_pkg::TOKEN_FIFO_DEPTH);

  // ---- State ----
  logic run_q, done_q, fault_q;
  logic [63:0] cyc_q, total_q, chan_q;
  logic [2:0] fk_q;
  logic [1:0] fe_q;
  logic [31:0] fi_q;
  logic [63:0] fc_q;
  logic [31:0] next_q;
  logic fdone_q, fblk_q, fwrote_q, popped_q;
  logic [1:0] ph_q[3];
  logic [ember_isa_pkg::INSTR_BITS-1:0] word_q[3];
  logic [31:0] idx_q[3];
  logic [63:0] disp_q[3], take_q[3], start_q[3], end_q[3], mst_q[3], work_q[3];
  logic [63:0] tok_q[4];
  logic [63:0] arr_q;  // E6: the end s + T of the last array instruction (0 before any)
  logic [63:0] busy_c[3], tokc_c[3], mem_c[3], ins_c[3];
  logic [63:0] fstall_c, macs_c, drd_c, dwr_c;

  // ---- Queues ----
  logic [2:0] qpush_w, qpop_w;
  logic [QW-1:0] qdata_w;
  logic [QW-1:0] qhead_w[3];
  logic [QWD-1:0] qhead_ld, qhead_st;
  logic [QWC-1:0] qhead_cp;
  logic [31:0] qcnt_w[3];
  ember_queue #(.DEPTH(ember_isa_pkg::QUEUE_LOAD_DEPTH), .W(QWD)) u_qload (
      .clk_i, .rst_ni, .push_i(qpush_w[0]), .data_i(packDma(qdata_w)), .pop_i(qpop_w[0]),
      .head_o(qhead_ld), .count_o(qcnt_w[0]));
  ember_queue #(.DEPTH(ember_isa_pkg::QUEUE_COMPUTE_DEPTH), .W(QWC)) u_qcompute (
      .clk_i, .rst_ni, .push_i(qpush_w[1]), .data_i(packCompute(qdata_w)), .pop_i(qpop_w[1]),
      .head_o(qhead_cp), .count_o(qcnt_w[1]));
  ember_queue #(.DEPTH(ember_isa_pkg::QUEUE_STORE_DEPTH), .W(QWD)) u_qstore (
      .clk_i, .rst_ni, .push_i(qpush_w[2]), .data_i(packDma(qdata_w)), .pop_i(qpop_w[2]),
      .head_o(qhead_st), .count_o(qcnt_w[2]));
  assign qhead_w[0] = unpackDma(qhead_ld);
  assign qhead_w[1] = unpackCompute(qhead_cp);
  assign qhead_w[2] = unpackDma(qhead_st);
  function automatic logic [31:0] qdepth(input logic [1:0] u);
    qdepth = u == 2'd0 ? 32'(ember_isa_pkg::QUEUE_LOAD_DEPTH)
           : u == 2'd1 ? 32'(ember_isa_pkg::QUEUE_COMPUTE_DEPTH)
                       : 32'(ember_isa_pkg::QUEUE_STORE_DEPTH);
  endfunction

  // ---- Held instructions: decoded, timed ----
  logic take_w[3];
  logic [ember_isa_pkg::INSTR_BITS-1:0] held_w[3];
  logic [ember_npu_pkg::FIELDS_BITS-1:0] f_w[3];
  logic [ember_isa_pkg::CLS_BITS-1:0] cls_w[3];
  logic [ember_isa_pkg::VOP_BITS-1:0] op_w[3];
  logic [31:0] toff_w[3];
  logic bg_w[3];
  logic ovw_w[3], bias_w[3];
  logic [31:0] issue_w[3];
  logic [63:0] dur_w[3] /* verilator split_var */;
  logic [63:0] chan_out_w[3] /* verilator split_var */;
  logic [63:0] mst_w[3], beg_w[3], xfer_w[3], macs_w[3], dbytes_w[3];
  logic [63:0] chan_in_w[3] /* verilator split_var */;
  logic ovf_w[3] /* verilator split_var */;
  logic books_w[3] /* verilator split_var */;
  // The token flags of the instruction an engine holds from an earlier cycle, for the
  // retire phase and the starvation checks (which must not depend on this cycle's take):
  // registered from the engine's decoder at the take (a decoder of the held word would
  // give the same four bits). Bits: 0 pop_prev, 1 pop_next, 2 push_prev, 3 push_next.
  localparam int unsigned TF_POP_PREV = 0, TF_POP_NEXT = 1, TF_PUSH_PREV = 2, TF_PUSH_NEXT = 3;
  logic [3:0] tf_q[3];
  // The held instruction's timing: from the queue in its take cycle, else as taken.
  logic [TW-1:0] tq_q[3];
  logic [TW-1:0] th_w[3];
  for (genvar e = 0; e < 3; e++) begin : g_eng
    logic unused_valid;
    logic [ember_isa_pkg::INSN_IDX_BITS-1:0] unused_insn;
    logic [1:0] unused_unit;
    logic [31:0] unused_t1, unused_t2, unused_t3, unused_t5, unused_t6;
    ember_fields u_fields (
        .instr_i(held_w[e]), .valid_o(unused_valid), .cls_o(cls_w[e]), .op_o(op_w[e]),
        .insn_o(unused_insn), .unit_o(unused_unit), .t_issue_o(issue_w[e]),
        .t_setup_o(unused_t1), .t_cpr_o(unused_t2), .t_pipe_o(unused_t3),
        .t_cpl_o(unused_t5), .t_cpe_o(unused_t6),
        .table_off_o(toff_w[e]), .bg_o(bg_w[e]), .ovw_o(ovw_w[e]), .bias_o(bias_w[e]),
        .f_o(f_w[e]));
    // D2 at the start: a DMA's transfer begins at max(start + head, channel free); the
    // wait is a memory stall. th = {base, head, xfer, mstall, macs, dbytes, books, ovf}.
    // E6: a background gemm or depthwise holds its engine for its issue cycles (base, its
    // full T, is the array's); ovf is still T's overflow, as in the model.
    logic [64:0] ready, beg, dur;
    logic books, ovf;
    always_comb begin
      th_w[e] = take_w[e] ? qhead_w[e][TW-1:0] : tq_q[e];
      books = th_w[e][1];
      ovf = th_w[e][0];
      ready = 65'(cyc_q) + 65'(th_w[e][2+4*64 +: 64]);
      beg = 65'(chan_in_w[e]) > ready ? 65'(chan_in_w[e]) : ready;
      dur = 65'(th_w[e][2+5*64 +: 64]) + (books ? beg - ready : 65'd0);
      books_w[e] = books;
      ovf_w[e] = ovf || dur[64] || (books && (ready[64] || beg + 65'(th_w[e][2+3*64 +: 64]) > 65'({64{1'b1}})));
      dur_w[e] = bg_w[e] ? 64'(issue_w[e]) : dur[63:0];
      mst_w[e] = books ? 64'(beg - ready) : th_w[e][2+2*64 +: 64];
      beg_w[e] = beg[63:0];
      xfer_w[e] = th_w[e][2+3*64 +: 64];
      chan_out_w[e] = 64'(beg) + th_w[e][2+3*64 +: 64];
      macs_w[e] = th_w[e][2+64 +: 64];
      dbytes_w[e] = th_w[e][2 +: 64];
    end
  end
  assign f0_o = f_w[0];
  assign f1_o = f_w[1];
  assign f2_o = f_w[2];
  assign cls0_o = cls_w[0];
  assign cls1_o = cls_w[1];
  assign cls2_o = cls_w[2];
  assign op1_o = op_w[1];
  assign table_off1_o = toff_w[1];
  assign bg1_o = bg_w[1];
  assign ovw1_o = ovw_w[1];
  assign bias1_o = bias_w[1];
  // The load and store engines hold no array or requantize instruction.
  logic unused_props;
  assign unused_props = ovw_w[0] ^ bias_w[0] ^ ovw_w[2] ^ bias_w[2];
  assign begin0_o = beg_w[0];
  assign xfer0_o = xfer_w[0];
  assign begin2_o = beg_w[2];
  assign xfer2_o = xfer_w[2];
  assign cyc_o = cyc_q;

  // ---- Fetch decode ----
  logic fvalid_w;
  logic [ember_isa_pkg::CLS_BITS-1:0] fcls_w;
  logic [1:0] funit_w;
  logic [TW-1:0] ftime_w;
  begin : g_fetch_dec
    logic [ember_npu_pkg::FIELDS_BITS-1:0] ff;
    logic [ember_isa_pkg::VOP_BITS-1:0] unused_op;
    logic [ember_isa_pkg::INSN_IDX_BITS-1:0] unused_insn;
    logic [31:0] ti, ts, tc, tp, tl, te, unused_toff;
    logic unused_bg, unused_ovw, unused_bias;
    logic [63:0] base, mst, head, xfer, macs, dbytes;
    logic books, ovf;
    // A gemm's or depthwise's duration here is the full T of G1-G2 or DW1, background or
    // not: the queue carries it for the array (E6).
    ember_fields u_fetch_fields (
        .instr_i(imem_data_i), .valid_o(fvalid_w), .cls_o(fcls_w), .op_o(unused_op),
        .insn_o(unused_insn), .unit_o(funit_w), .t_issue_o(ti), .t_setup_o(ts),
        .t_cpr_o(tc), .t_pipe_o(tp), .t_cpl_o(tl), .t_cpe_o(te),
        .table_off_o(unused_toff), .bg_o(unused_bg), .ovw_o(unused_ovw), .bias_o(unused_bias),
        .f_o(ff));
    ember_timing u_timing (
        .cls_i(fcls_w), .t_issue_i(ti), .t_setup_i(ts), .t_cpr_i(tc), .t_pipe_i(tp),
        .t_cpl_i(tl), .t_cpe_i(te), .f_i(ff),
        .dur_o(base), .mstall_o(mst), .ovf_o(ovf), .books_o(books), .head_o(head),
        .xfer_o(xfer), .macs_o(macs), .dram_bytes_o(dbytes));
    assign ftime_w = {base, head, xfer, mst, macs, dbytes, books, ovf};
  end
  assign imem_addr_o = next_q;

  // FIFO indices (docs/isa/programmers-model.md section 1): 0 load->compute, 1 compute->load,
  // 2 compute->store, 3 store->compute. Pushing to / popping from the next (prev) engine.
  function automatic int fifoOut(input int e, input bit toNext);
    fifoOut = toNext ? (e < 2 ? e * 2 : -1) : (e > 0 ? (e - 1) * 2 + 1 : -1);
  endfunction
  function automatic int fifoIn(input int e, input bit fromNext);
    fifoIn = fromNext ? (e < 2 ? e * 2 + 1 : -1) : (e > 0 ? (e - 1) * 2 : -1);
  endfunction
  // The token flags of each engine's held instruction this cycle (bits as tf_q), read
  // from its decoded fields once: a function taking the whole field bus as an argument
  // costs a copy of the bus (FIELDS_BITS bits) at every call, every cycle, in simulation.
  logic [3:0] tf_w[3];
  always_comb
    for (int e = 0; e < 3; e++)
      tf_w[e] = {f_w[e][64*ember_npu_pkg::R_PUSH_NEXT +: 64] != 0,
                 f_w[e][64*ember_npu_pkg::R_PUSH_PREV +: 64] != 0,
                 f_w[e][64*ember_npu_pkg::R_POP_NEXT +: 64] != 0,
                 f_w[e][64*ember_npu_pkg::R_POP_PREV +: 64] != 0};

  // ---- One cycle, in contract order ----
  // Each phase computes its effects and a fault candidate; a fault anywhere discards the
  // whole cycle (the state freezes), so a later phase may ignore an earlier one's fault
  // and the candidates are merged by priority at the end.
  logic retire_w[3];
  logic start_w[3] /* verilator split_var */;
  logic ending_w[3], holding_w[3];
  logic push_w[4];
  logic pop_w[4];
  logic fwrite_w, factive_w, fblocked_w;
  logic [1:0] ph_d[3];
  // Copies of the split arrays for loops with run-time indices.
  logic [2:0] start_v;
  logic [63:0] dur_v[3];
  assign start_v = {start_w[2], start_w[1], start_w[0]};
  assign dur_v[0] = dur_w[0];
  assign dur_v[1] = dur_w[1];
  assign dur_v[2] = dur_w[2];
  logic flt_w;
  logic [2:0] fk_w;
  logic [1:0] fe_w;
  logic [31:0] fi_w;
  logic [63:0] fc_w;
  logic drained_q[3];
  logic busy_any, waitpush_any;
  logic [63:0] oldest;
  logic [1:0] oldest_e;

  // Checks on the state the previous cycle left (the simulator makes them after that
  // cycle, so they carry its number): starvation, deadlock, then the cycle budget. An
  // array still running (E6: its end a_q after that cycle) is progress: the
  // simulator wakes up in cycle a_q.
  logic pre_flt;
  logic [2:0] pre_fk;
  logic [1:0] pre_fe;
  logic [31:0] pre_fi;
  logic [63:0] pre_fc;
  always_comb begin
    int nb;
    logic [1:0] fin, fout;
    pre_flt = 1'b0;
    pre_fk = ember_npu_pkg::FK_DEADLOCK;
    pre_fe = 2'd1;
    pre_fi = 32'hFFFF_FFFF;
    pre_fc = cyc_q - 1;
    busy_any = 1'b0;
    waitpush_any = 1'b0;
    oldest = 64'hFFFF_FFFF_FFFF_FFFF;
    oldest_e = ember_npu_pkg::ENG_FETCH;
    nb = 0;
    fin = '0;
    fout = '0;
    for (int e = 0; e < 3; e++) begin
      drained_q[e] = fdone_q && qcnt_w[e] == 0 && ph_q[e] == IDLE;
      busy_any = busy_any || ph_q[e] == BUSY;
      waitpush_any = waitpush_any || ph_q[e] == WAITPUSH;
      if (ph_q[e] != IDLE && 64'(idx_q[e]) < oldest) begin
        oldest = 64'(idx_q[e]);
        oldest_e = 2'(e);
      end
    end
    if (run_q && cyc_q != 0) begin
      for (int e = 0; e < 3; e++)
        for (int nx = 0; nx < 2; nx++) begin
          nb = nx == 1 ? e + 1 : e - 1;
          fin = 2'(fifoIn(e, nx == 1));
          fout = 2'(fifoOut(e, nx == 1));
          if (!pre_flt && nb >= 0 && nb <= 2) begin
            if (ph_q[e] == WAITPOP && tf_q[e][nx == 1 ? TF_POP_NEXT : TF_POP_PREV]
                && tok_q[fin] == 0 && drained_q[nb]) begin
              pre_flt = 1'b1; pre_fk = ember_npu_pkg::FK_TOKEN_UNDERFLOW; pre_fe = 2'(e); pre_fi = idx_q[e];
            end
            if (ph_q[e] == WAITPUSH && tf_q[e][nx == 1 ? TF_PUSH_NEXT : TF_PUSH_PREV]
                && tok_q[fout] >= TOKD && drained_q[nb]) begin
              pre_flt = 1'b1; pre_fk = ember_npu_pkg::FK_TOKEN_OVERFLOW; pre_fe = 2'(e); pre_fi = idx_q[e];
            end
          end
        end
      if (!pre_flt && !busy_any && !(popped_q && waitpush_any) && !fwrote_q
          && (fdone_q || fblk_q) && arr_q < cyc_q) begin
        pre_flt = 1'b1;
        for (int e = 2; e >= 0; e--)
          if ((ph_q[e] == WAITPOP || ph_q[e] == WAITPUSH) && !drained_q[e]
              && (pre_fi == 32'hFFFF_FFFF || idx_q[e] < pre_fi)) begin
            pre_fe = 2'(e);
            pre_fi = idx_q[e];
          end
      end
    end
    if (run_q && !pre_flt && cyc_q == budget_i + 1) begin
      pre_flt = 1'b1; pre_fk = ember_npu_pkg::FK_CYCLE_BUDGET; pre_fe = oldest_e; pre_fc = budget_i;
      pre_fi = oldest_e != ember_npu_pkg::ENG_FETCH ? 32'(oldest) : (next_q == 0 ? 32'd0 : 32'hFFFF_FFFF);
    end
  end

  // E3/E4 retire: an instruction ends at start + T; it retires when every FIFO it pushes
  // into had room at the start of the cycle. A push towards a missing neighbour faults.
  logic ret_flt[3];
  always_comb begin
    logic pn, pp, room;
    for (int f = 0; f < 4; f++) push_w[f] = 1'b0;
    for (int e = 0; e < 3; e++) begin
      ending_w[e] = run_q && ((ph_q[e] == BUSY && end_q[e] <= cyc_q) || ph_q[e] == WAITPUSH);
      pn = tf_q[e][TF_PUSH_NEXT];
      pp = tf_q[e][TF_PUSH_PREV];
      room = (!pn || e == 2 || tok_q[fifoOut(e, 1'b1)] < TOKD)
          && (!pp || e == 0 || tok_q[fifoOut(e, 1'b0)] < TOKD);
      ret_flt[e] = ending_w[e] && ((e == 2 && pn) || (e == 0 && pp));
      retire_w[e] = ending_w[e] && !ret_flt[e] && room;
      if (retire_w[e] && pn) push_w[fifoOut(e, 1'b1)] = 1'b1;
      if (retire_w[e] && pp) push_w[fifoOut(e, 1'b0)] = 1'b1;
    end
  end

  // E1 take: a free engine (idle, or retiring now) takes the head of its queue.
  always_comb begin
    for (int e = 0; e < 3; e++) begin
      take_w[e] = run_q && (ph_q[e] == IDLE || retire_w[e]) && qcnt_w[e] != 0;
      holding_w[e] = take_w[e] || ph_q[e] == WAITPOP;
      held_w[e] = take_w[e] ? qhead_w[e][QW-1 -: ember_isa_pkg::INSTR_BITS] : word_q[e];
    end
  end

  // E2 start, per engine: once every FIFO it pops from holds a token, counting this
  // cycle's pushes; then the duration (overflow, budget) and the operand checks decide.
  // The load engine books the DRAM channel before the store engine (D2). A shared
  // channel's free cycle comes from the arbiter (M1, M3), after the bookings of the NPUs
  // that go before this one in the cycle.
  logic [63:0] chan_w;
  assign chan_w = SHARED ? chan_i : chan_q;
  assign chan_in_w[0] = chan_w;
  assign chan_in_w[1] = chan_w;
  assign chan_in_w[2] = (start_w[0] && books_w[0]) ? chan_out_w[0] : chan_w;
  logic st_flt[3];
  logic [2:0] st_fk[3];
  logic [63:0] st_fc[3];
  logic [31:0] hidx_w[3];
  logic chk_w[3];
  logic [2:0] kind_w[3];
  assign chk_w[0] = chk0_i;
  assign chk_w[1] = chk1_i;
  assign chk_w[2] = chk2_i;
  assign kind_w[0] = kind0_i;
  assign kind_w[1] = kind1_i;
  assign kind_w[2] = kind2_i;
  // E6: a gemm, a depthwise, a sync and the halt on the compute engine wait for the
  // array (cycle a_q), after the tokens and before the duration, as in the model.
  logic arr_w, arr_wait_w;
  assign arr_w = cls_w[1] == ember_isa_pkg::CLS_GEMM || cls_w[1] == ember_isa_pkg::CLS_DEPTHWISE;
  assign arr_wait_w = (arr_w || cls_w[1] == ember_isa_pkg::CLS_SYNC
                       || cls_w[1] == ember_isa_pkg::CLS_HALT) && cyc_q < arr_q;
  for (genvar e = 0; e < 3; e++) begin : g_start
    logic pn, pp, ok;
    always_comb begin
      pn = tf_w[e][TF_POP_NEXT];
      pp = tf_w[e][TF_POP_PREV];
      hidx_w[e] = take_w[e] ? qhead_w[e][TW+64 +: 32] : idx_q[e];
      st_flt[e] = 1'b0;
      st_fk[e] = ember_npu_pkg::FK_TOKEN_UNDERFLOW;
      st_fc[e] = cyc_q;
      start_w[e] = 1'b0;
      ok = 1'b0;
      if (holding_w[e]) begin
        if ((e == 2 && pn) || (e == 0 && pp)) begin
          st_flt[e] = 1'b1;
        end else begin
          ok = (!pn || e == 2 || tok_q[fifoIn(e, 1'b1)] != 0 || push_w[fifoIn(e, 1'b1)])
            && (!pp || e == 0 || tok_q[fifoIn(e, 1'b0)] != 0 || push_w[fifoIn(e, 1'b0)])
            && !(e == 1 && arr_wait_w);
          if (ok) begin
            if (ovf_w[e]) begin
              st_flt[e] = 1'b1; st_fk[e] = ember_npu_pkg::FK_CYCLE_BUDGET;
            end else if (cyc_q > budget_i || dur_w[e] > budget_i - cyc_q) begin
              st_flt[e] = 1'b1; st_fk[e] = ember_npu_pkg::FK_CYCLE_BUDGET; st_fc[e] = budget_i;
            end else if (chk_w[e]) begin
              st_flt[e] = 1'b1; st_fk[e] = kind_w[e];
            end else begin
              start_w[e] = 1'b1;
            end
          end
        end
      end
    end
  end
  always_comb begin
    for (int f = 0; f < 4; f++) pop_w[f] = 1'b0;
    for (int e = 0; e < 3; e++) begin
      if (start_v[e] && e < 2 && tf_w[e][TF_POP_NEXT]) pop_w[fifoIn(e, 1'b1)] = 1'b1;
      if (start_v[e] && e > 0 && tf_w[e][TF_POP_PREV]) pop_w[fifoIn(e, 1'b0)] = 1'b1;
    end
  end

  // F1/F2 fetch: one instruction a cycle from cycle latency - 1, into its queue when the
  // queue has room after this cycle's take; F4: a word that does not decode faults.
  always_comb begin
    factive_w = run_q && !fdone_q && ninsn_i != 0 && cyc_q + 1 >= 64'(ember_isa_pkg::FETCH_LATENCY_CYCLES);
    fwrite_w = 1'b0;
    fblocked_w = 1'b0;
    if (factive_w && fvalid_w) begin
      if (qcnt_w[funit_w] - (take_w[funit_w] ? 32'd1 : 32'd0) < qdepth(funit_w)) fwrite_w = 1'b1;
      else fblocked_w = 1'b1;
    end
  end

  // The cycle's fault, by the contract's order.
  always_comb begin
    flt_w = pre_flt;
    fk_w = pre_fk;
    fe_w = pre_fe;
    fi_w = pre_fi;
    fc_w = pre_fc;
    for (int e = 0; e < 3; e++)
      if (!flt_w && ret_flt[e]) begin
        flt_w = 1'b1; fk_w = ember_npu_pkg::FK_TOKEN_OVERFLOW; fe_w = 2'(e); fi_w = idx_q[e]; fc_w = cyc_q;
      end
    for (int e = 0; e < 3; e++)
      if (!flt_w && st_flt[e]) begin
        flt_w = 1'b1; fk_w = st_fk[e]; fe_w = 2'(e); fi_w = hidx_w[e]; fc_w = st_fc[e];
      end
    if (!flt_w && factive_w && !fvalid_w) begin
      flt_w = 1'b1; fk_w = ember_npu_pkg::FK_ILLEGAL_OPCODE; fe_w = ember_npu_pkg::ENG_FETCH; fi_w = next_q; fc_w = cyc_q;
    end
  end

  // Engine phases after this cycle.
  always_comb begin
    for (int e = 0; e < 3; e++) begin
      if (start_v[e]) ph_d[e] = BUSY;
      else if (holding_w[e]) ph_d[e] = WAITPOP;
      else if (retire_w[e]) ph_d[e] = IDLE;
      else if (ending_w[e]) ph_d[e] = WAITPUSH;
      else ph_d[e] = ph_q[e];
    end
  end

  always_comb begin
    for (int e = 0; e < 3; e++) begin
      qpush_w[e] = fwrite_w && !flt_w && funit_w == 2'(e);
      qpop_w[e] = take_w[e] && !flt_w;
    end
    qdata_w = {imem_data_i, next_q, cyc_q, ftime_w};
  end

  // Finished after this cycle: fetch done, every engine drained and the array done (E6:
  // DONE never comes before the array's end).
  logic fdone_d, fin_d;
  always_comb begin
    fdone_d = fdone_q || ninsn_i == 0 || (fwrite_w && (fcls_w == ember_isa_pkg::CLS_HALT || next_q + 1 >= ninsn_i));
    fin_d = fdone_d && cyc_q >= arr_q;
    for (int e = 0; e < 3; e++)
      if (32'(qcnt_w[e]) + (qpush_w[e] ? 32'd1 : 32'd0) - (qpop_w[e] ? 32'd1 : 32'd0) != 0
          || ph_d[e] != IDLE)
        fin_d = 1'b0;
  end

  // ---- The DRAM channel after this cycle's bookings (M1-M4) ----
  // A cycle's bookings stand when the cycle does (running, no fault): the channel's free
  // cycle after the load's and then the store's booking.
  logic unused_chan_i;
  assign unused_chan_i = ^chan_i;  // not read by an NPU with its own channel
  if (SHARED) begin : g_arb
    logic commit_w, bk0_w, bk2_w;
    assign commit_w = run_q && !start_i && !flt_w;
    assign bk0_w = commit_w && start_w[0] && books_w[0];
    assign bk2_w = commit_w && start_w[2] && books_w[2];
    // M4: a DMA's wait beyond this NPU's own previous booking (own_q, the end of its last
    // transfer; the load's, for a store that books in the same cycle) is arbitration.
    logic [63:0] own_q, arb_c, own2_w, arb0_w, arb2_w, rdy0_w, rdy2_w;
    assign rdy0_w = cyc_q + th_w[0][2+4*64 +: 64];  // s + head (D2)
    assign rdy2_w = cyc_q + th_w[2][2+4*64 +: 64];
    assign own2_w = bk0_w ? chan_out_w[0] : own_q;
    assign arb0_w = beg_w[0] - (own_q > rdy0_w ? own_q : rdy0_w);
    assign arb2_w = beg_w[2] - (own2_w > rdy2_w ? own2_w : rdy2_w);
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        own_q <= '0;
        arb_c <= '0;
      end else begin
        if (bk0_w || bk2_w) own_q <= chan_o;
        arb_c <= arb_c + (bk0_w ? arb0_w : 64'd0) + (bk2_w ? arb2_w : 64'd0);
      end
    end
    assign chan_o = bk2_w ? chan_out_w[2] : bk0_w ? chan_out_w[0] : chan_w;
    assign booked_o = bk0_w || bk2_w;
    assign cnt_arb_o = arb_c;
  end else begin : g_noarb
    // Its own register (chan_q, below): no port logic, the NPU's area unchanged.
    assign chan_o = '0;
    assign booked_o = 1'b0;
    assign cnt_arb_o = '0;
  end

  assign start0_o = start_w[0] && !flt_w;
  assign start1_o = start_w[1] && !flt_w;
  assign start2_o = start_w[2] && !flt_w;
  assign done_o = done_q;
  assign fault_o = fault_q;
  assign fault_kind_o = fk_q;
  assign fault_engine_o = fe_q;
  assign fault_index_o = fi_q;
  assign fault_cycle_o = fc_q;
  assign cycles_o = total_q;
  assign cnt_fetch_stall_o = fstall_c;
  assign cnt_macs_o = macs_c;
  assign cnt_dram_read_o = drd_c;
  assign cnt_dram_write_o = dwr_c;
  for (genvar e = 0; e < 3; e++) begin : g_out
    assign ret_o[e] = retire_w[e] && !flt_w;
    assign ret_index_o[32*e +: 32] = idx_q[e];
    assign ret_dispatch_o[64*e +: 64] = disp_q[e];
    assign ret_take_o[64*e +: 64] = take_q[e];
    assign ret_start_o[64*e +: 64] = start_q[e];
    assign ret_end_o[64*e +: 64] = end_q[e];
    assign ret_mstall_o[64*e +: 64] = mst_q[e];
    assign cnt_busy_o[64*e +: 64] = busy_c[e];
    assign cnt_token_o[64*e +: 64] = tokc_c[e];
    assign cnt_memory_o[64*e +: 64] = mem_c[e];
    assign cnt_insns_o[64*e +: 64] = ins_c[e];
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      run_q <= 1'b0; done_q <= 1'b0; fault_q <= 1'b0;
      cyc_q <= '0; total_q <= '0; chan_q <= '0;
      fk_q <= '0; fe_q <= '0; fi_q <= '0; fc_q <= '0;
      next_q <= '0; fdone_q <= 1'b0; fblk_q <= 1'b0; fwrote_q <= 1'b0; popped_q <= 1'b0;
      for (int e = 0; e < 3; e++) begin
        ph_q[e] <= IDLE; word_q[e] <= '0; tf_q[e] <= '0; idx_q[e] <= '0; tq_q[e] <= '0;
        disp_q[e] <= '0; take_q[e] <= '0; start_q[e] <= '0; end_q[e] <= '0; mst_q[e] <= '0;
        work_q[e] <= '0; busy_c[e] <= '0; tokc_c[e] <= '0; mem_c[e] <= '0; ins_c[e] <= '0;
      end
      for (int f = 0; f < 4; f++) tok_q[f] <= '0;
      arr_q <= '0;
      fstall_c <= '0; macs_c <= '0; drd_c <= '0; dwr_c <= '0;
    end else if (start_i) begin
      // ninsn_i is the value held from this start on (ember_npu registers it).
      run_q <= 1'b1;
    end else if (run_q) begin
      if (flt_w) begin
        run_q <= 1'b0;
        fault_q <= 1'b1;
        fk_q <= fk_w; fe_q <= fe_w; fi_q <= fi_w; fc_q <= fc_w;
      end else begin
        cyc_q <= cyc_q + 1;
        if (fin_d) begin
          run_q <= 1'b0;
          done_q <= 1'b1;
          total_q <= cyc_q;
        end
        popped_q <= pop_w[0] || pop_w[1] || pop_w[2] || pop_w[3];
        fwrote_q <= fwrite_w;
        if (fwrite_w) begin
          next_q <= next_q + 1;
          fblk_q <= 1'b0;
        end else if (fblocked_w) begin
          fblk_q <= 1'b1;
          fstall_c <= fstall_c + 1;
        end
        fdone_q <= fdone_d;
        for (int f = 0; f < 4; f++)
          tok_q[f] <= tok_q[f] + (push_w[f] ? 64'd1 : 64'd0) - (pop_w[f] ? 64'd1 : 64'd0);
        if (start_w[1] && arr_w) arr_q <= cyc_q + th_w[1][2+5*64 +: 64];
        if (start_w[0] && books_w[0]) chan_q <= chan_out_w[0];
        if (start_w[2] && books_w[2]) chan_q <= chan_out_w[2];
        for (int e = 0; e < 3; e++) begin
          ph_q[e] <= ph_d[e];
          if (retire_w[e]) begin
            busy_c[e] <= busy_c[e] + (end_q[e] - start_q[e]) - mst_q[e];
            mem_c[e] <= mem_c[e] + mst_q[e];
            tokc_c[e] <= tokc_c[e] + (start_q[e] - take_q[e]) + (cyc_q - end_q[e]);
            ins_c[e] <= ins_c[e] + 1;
            if (e == 1) macs_c <= macs_c + work_q[e];
            if (e == 0) drd_c <= drd_c + work_q[e];
            if (e == 2) dwr_c <= dwr_c + work_q[e];
          end
          if (take_w[e]) begin
            tq_q[e] <= qhead_w[e][TW-1:0];
            word_q[e] <= qhead_w[e][QW-1 -: ember_isa_pkg::INSTR_BITS];
            tf_q[e] <= tf_w[e];
            idx_q[e] <= qhead_w[e][TW+64 +: 32];
            disp_q[e] <= qhead_w[e][TW +: 64];
            take_q[e] <= cyc_q;
          end
          if (start_v[e]) begin
            start_q[e] <= cyc_q;
            end_q[e] <= cyc_q + dur_v[e];
            mst_q[e] <= mst_w[e];
            work_q[e] <= e == 1 ? macs_w[e] : dbytes_w[e];
          end
        end
      end
    end
  end
endmodule : ember_control
