// A DMA engine's datapath (LOAD = 1: dma-load, DRAM -> SRAM with padding; LOAD = 0:
// dma-store, SRAM -> DRAM). The controller starts it (start_i, in the start cycle s,
// with the instruction's fields) and ends the instruction at the contract's cycle; this
// datapath finishes within it (docs/rtl/npu.md section 5.1):
//  - a DRAM request carries up to r contiguous rows of one DRAM line (r = the selected
//    memory's rows a cycle, rule D1: max(1, min(bytes_per_cycle / row_bytes, banks,
//    widest row / row_bytes)),
//    so at most bytes_per_cycle bytes), never crossing a line: N = lines * ceil(s0 / r)
//    requests, at most X. They are paced evenly over the X cycles the channel is
//    reserved (request j at begin + ceil(j * X / N)), so about max_outstanding bursts
//    are in flight and the last response arrives by begin + X - 1 + latency < end;
//  - the SRAM side has RMAX row slots a cycle (r of them for the selected memory): a
//    load writes a response's rows (tag, tag + 1, ...: r consecutive rows lie in r
//    different banks) the cycle it arrives, and padding rows in every slot no response
//    row takes, from the cycle after the start; S rows need ceil(S / r) <= X cycles of
//    slots, and the window s + 1 .. end - 1 has at least X + latency of them. A store
//    reads a request's rows in the cycle it issues it (ember_npu packs them).
// chk_fault_o/chk_kind_o are the operand checks of the instruction on f_i (rule: the
// simulator's Machine::dma), evaluated combinationally in the start cycle.
module ember_dma #(
    parameter bit LOAD = 1'b1,
    // SRAM row slots a cycle (the largest r of any memory) and the width of slots 1 and
    // up (the widest row of a memory with r > 1); ember_npu computes both.
    parameter int unsigned RMAX = 1,
    parameter int unsigned SW1 = 8,
    localparam int unsigned WDW = ember_isa_pkg::ROW_BITS + (RMAX - 1) * SW1
) (
    input  logic clk_i,
    input  logic rst_ni,
    /* verilator lint_off UNUSEDSIGNAL */  // the bus has every role; this reads its own
    input  logic [ember_npu_pkg::FIELDS_BITS-1:0] f_i,
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic [63:0] window_i,
    output logic chk_fault_o,
    output logic [2:0] chk_kind_o,
    input  logic start_i,
    input  logic [63:0] cyc_i,
    input  logic [63:0] begin_i,
    input  logic [63:0] xfer_i,
    output logic busy_o,
    // SRAM side: loads write, stores read (asynchronous read). Slot i: row
    // sram_row_o[32*i +: 32], data slot 0 sram_wdata_o[0 +: ROW_BITS], slot i >= 1
    // [ROW_BITS + (i-1)*SW1 +: SW1]. A store reads rows row, row + 1, ... of slot 0's
    // request: sram_rdata_i holds them packed (row i at byte i * row_bytes).
    output logic [RMAX-1:0] sram_we_o,
    output logic sram_re_o,
    output logic [1:0] sram_mem_o,  // memory id
    output logic [RMAX*32-1:0] sram_row_o,
    output logic [WDW-1:0] sram_wdata_o,
    input  logic [ember_isa_pkg::ROW_BITS-1:0] sram_rdata_i,
    // DRAM request / response (up to r contiguous rows of a line, packed; tag = the SRAM
    // row of the first).
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

  // ---- Widths ----
  // Field roles as unsigned quantities (a signed role: its 64-bit sign-extended value).
  localparam int unsigned S0B = ember_isa_pkg::ROLE_SIZE0_SIGNED || ember_isa_pkg::ROLE_SIZE0_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SIZE0_BITS;
  localparam int unsigned S1B = ember_isa_pkg::ROLE_SIZE1_SIGNED || ember_isa_pkg::ROLE_SIZE1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SIZE1_BITS;
  localparam int unsigned S2B = ember_isa_pkg::ROLE_SIZE2_SIGNED || ember_isa_pkg::ROLE_SIZE2_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SIZE2_BITS;
  localparam int unsigned T1B = ember_isa_pkg::ROLE_STRIDE1_SIGNED || ember_isa_pkg::ROLE_STRIDE1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_STRIDE1_BITS;
  localparam int unsigned T2B = ember_isa_pkg::ROLE_STRIDE2_SIGNED || ember_isa_pkg::ROLE_STRIDE2_BITS > 64 ? 64 : ember_isa_pkg::ROLE_STRIDE2_BITS;
  localparam int unsigned PLB = ember_isa_pkg::ROLE_PAD_LEFT_SIGNED || ember_isa_pkg::ROLE_PAD_LEFT_BITS > 64 ? 64 : ember_isa_pkg::ROLE_PAD_LEFT_BITS;
  localparam int unsigned PRB = ember_isa_pkg::ROLE_PAD_RIGHT_SIGNED || ember_isa_pkg::ROLE_PAD_RIGHT_BITS > 64 ? 64 : ember_isa_pkg::ROLE_PAD_RIGHT_BITS;
  localparam int unsigned PTB = ember_isa_pkg::ROLE_PAD_TOP_SIGNED || ember_isa_pkg::ROLE_PAD_TOP_BITS > 64 ? 64 : ember_isa_pkg::ROLE_PAD_TOP_BITS;
  localparam int unsigned PBB = ember_isa_pkg::ROLE_PAD_BOTTOM_SIGNED || ember_isa_pkg::ROLE_PAD_BOTTOM_BITS > 64 ? 64 : ember_isa_pkg::ROLE_PAD_BOTTOM_BITS;
  localparam int unsigned SAB = ember_isa_pkg::ROLE_SRAM_ADDR_SIGNED || ember_isa_pkg::ROLE_SRAM_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRAM_ADDR_BITS;
  localparam int unsigned DAB = ember_isa_pkg::ROLE_DRAM_ADDR_SIGNED || ember_isa_pkg::ROLE_DRAM_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_DRAM_ADDR_BITS;
  localparam int unsigned MSB_ = ember_isa_pkg::ROLE_SRAM_SIGNED || ember_isa_pkg::ROLE_SRAM_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRAM_BITS;
  function automatic int unsigned mx(input int unsigned a, input int unsigned b);
    mx = a > b ? a : b;
  endfunction
  // Row bytes (a power of two, at most MAX_ROW_BYTES) as a shift.
  localparam int unsigned RBB = $clog2(ember_isa_pkg::MAX_ROW_BYTES + 1);
  localparam int unsigned LGB = $clog2(RBB + 1);
  // Rows of a line (pl + s0 + pr), lines of a plane (pt + s1 + pb), SRAM rows S (exact),
  // DRAM rows D = s0 * s1 * s2 (exact).
  localparam int unsigned LIW = (LOAD ? mx(mx(PLB, S0B), PRB) : S0B) + 2;
  localparam int unsigned PLW = (LOAD ? mx(mx(PTB, S1B), PBB) : S1B) + 2;
  localparam int unsigned SRW = LIW + PLW + S2B;
  localparam int unsigned RW = S0B + S1B + S2B;
  // The end of the DRAM bytes, exact: daddr + ((s2 - 1) * stride2 + (s1 - 1) * stride1 + s0) * rb.
  localparam int unsigned EIW = mx(mx(S2B + T2B, S1B + T1B), S0B) + 2;
  localparam int unsigned EW = mx(EIW + RBB, DAB) + 1;
  // A DRAM address: below the end, which the check keeps within the 64-bit window.
  localparam int unsigned DW = EW > 64 ? 64 : EW;
  // An SRAM row, modulo the largest memory (rows are powers of two; ember_npu uses the
  // low address bits of the selected memory, which the checks keep in range).
  localparam int unsigned AW0 = mx(ember_isa_pkg::MEM_ACT_ROWS, ember_isa_pkg::MEM_WEIGHT_ROWS);
  localparam int unsigned AW1 = mx(ember_isa_pkg::MEM_ACC_ROWS, ember_isa_pkg::MEM_PARAM_ROWS);
  localparam int unsigned SAW = mx(AW0, AW1) > 1 ? $clog2(mx(AW0, AW1)) : 1;

  // The SRAM range test: address + S against a row count (at most 2^32).
  localparam int unsigned CW = mx(mx(SAB, SRW), 33) + 1;

  function automatic logic [63:0] rowsOf(input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) rowsOf = 64'(ember_isa_pkg::MEM_ACT_ROWS);
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) rowsOf = 64'(ember_isa_pkg::MEM_WEIGHT_ROWS);
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) rowsOf = 64'(ember_isa_pkg::MEM_ACC_ROWS);
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) rowsOf = 64'(ember_isa_pkg::MEM_PARAM_ROWS);
    else rowsOf = 64'd0;
  endfunction
  function automatic logic [LGB-1:0] lgRowBytes(input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) lgRowBytes = LGB'($clog2(ember_isa_pkg::MEM_ACT_ROW_BYTES));
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) lgRowBytes = LGB'($clog2(ember_isa_pkg::MEM_WEIGHT_ROW_BYTES));
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) lgRowBytes = LGB'($clog2(ember_isa_pkg::MEM_ACC_ROW_BYTES));
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) lgRowBytes = LGB'($clog2(ember_isa_pkg::MEM_PARAM_ROW_BYTES));
    else lgRowBytes = '0;
  endfunction

  // r: rows a cycle (rule D1, isa::timing::dmaRowsPerCycle, generated into the package).
  localparam int unsigned RPC_ACT = ember_isa_pkg::MEM_ACT_DMA_ROWS;
  localparam int unsigned RPC_WGT = ember_isa_pkg::MEM_WEIGHT_DMA_ROWS;
  localparam int unsigned RPC_ACC = ember_isa_pkg::MEM_ACC_DMA_ROWS;
  localparam int unsigned RPC_PAR = ember_isa_pkg::MEM_PARAM_DMA_ROWS;
  localparam int unsigned RCW = $clog2(RMAX + 1);
  function automatic logic [RCW-1:0] rpcOf(input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) rpcOf = RCW'(RPC_ACT);
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) rpcOf = RCW'(RPC_WGT);
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) rpcOf = RCW'(RPC_ACC);
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) rpcOf = RCW'(RPC_PAR);
    else rpcOf = RCW'(1);
  endfunction

  // ceil(s0 / r): requests of a line (a division by the memory's constant: a shift when
  // r is a power of two).
  function automatic logic [S0B-1:0] perLine(input logic [S0B-1:0] s0, input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) perLine = S0B'(((S0B + 1)'(s0) + (S0B + 1)'(RPC_ACT - 1)) / (S0B + 1)'(RPC_ACT));
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) perLine = S0B'(((S0B + 1)'(s0) + (S0B + 1)'(RPC_WGT - 1)) / (S0B + 1)'(RPC_WGT));
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) perLine = S0B'(((S0B + 1)'(s0) + (S0B + 1)'(RPC_ACC - 1)) / (S0B + 1)'(RPC_ACC));
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) perLine = S0B'(((S0B + 1)'(s0) + (S0B + 1)'(RPC_PAR - 1)) / (S0B + 1)'(RPC_PAR));
    else perLine = s0;
  endfunction

  // ---- The instruction's fields ----
  logic [S0B-1:0] f_s0;
  logic [S1B-1:0] f_s1;
  logic [S2B-1:0] f_s2;
  logic [T1B-1:0] f_st1;
  logic [T2B-1:0] f_st2;
  logic [LIW-1:0] f_pl, f_pr;
  logic [PLW-1:0] f_pt, f_pb;
  logic [SAB-1:0] f_saddr;
  logic [DAB-1:0] f_daddr;
  logic [63:0] f_mem;
  always_comb begin
    f_s0 = f_i[64*ember_npu_pkg::R_SIZE0 +: S0B];
    f_s1 = f_i[64*ember_npu_pkg::R_SIZE1 +: S1B];
    f_s2 = f_i[64*ember_npu_pkg::R_SIZE2 +: S2B];
    f_st1 = f_i[64*ember_npu_pkg::R_STRIDE1 +: T1B];
    f_st2 = f_i[64*ember_npu_pkg::R_STRIDE2 +: T2B];
    f_pl = LOAD ? LIW'(f_i[64*ember_npu_pkg::R_PAD_LEFT +: PLB]) : '0;
    f_pr = LOAD ? LIW'(f_i[64*ember_npu_pkg::R_PAD_RIGHT +: PRB]) : '0;
    f_pt = LOAD ? PLW'(f_i[64*ember_npu_pkg::R_PAD_TOP +: PTB]) : '0;
    f_pb = LOAD ? PLW'(f_i[64*ember_npu_pkg::R_PAD_BOTTOM +: PBB]) : '0;
    f_saddr = f_i[64*ember_npu_pkg::R_SRAM_ADDR +: SAB];
    f_daddr = f_i[64*ember_npu_pkg::R_DRAM_ADDR +: DAB];
    f_mem = 64'(f_i[64*ember_npu_pkg::R_SRAM +: MSB_]);
  end

  // ---- Operand checks (start cycle; Machine::dma). The model's sums and products
  // saturate at 2^64 - 1: the SRAM test compares as the exact value does (a row count is
  // smaller), the DRAM end saturates before it meets the 64-bit window. ----
  logic [LIW-1:0] line_w;
  logic [PLW-1:0] plane_w;
  logic [SRW-1:0] srows_w;
  logic [S1B+S2B-1:0] lines_w;
  logic [S0B-1:0] cpl_w;
  logic [RW-1:0] nreq_w;
  logic [EIW-1:0] dspan_w;
  logic [EW-1:0] dend_w;
  logic [63:0] dend_sat;
  logic [S1B-1:0] s1m1;
  logic [S2B-1:0] s2m1;
  always_comb begin
    line_w = f_pl + LIW'(f_s0) + f_pr;
    plane_w = f_pt + PLW'(f_s1) + f_pb;
    srows_w = SRW'(line_w) * SRW'(plane_w) * SRW'(f_s2);
    // Requests: ceil(s0 / r) a line, lines = s1 * s2.
    lines_w = (S1B + S2B)'(f_s1) * (S1B + S2B)'(f_s2);
    cpl_w = perLine(f_s0, f_mem);
    nreq_w = RW'(lines_w) * RW'(cpl_w);
    s1m1 = f_s1 - S1B'(1);
    s2m1 = f_s2 - S2B'(1);
    dspan_w = EIW'(s2m1) * EIW'(f_st2) + EIW'(s1m1) * EIW'(f_st1) + EIW'(f_s0);
    dend_w = EW'(f_daddr) + (EW'(dspan_w) << lgRowBytes(f_mem));
    dend_sat = (dend_w >> 64) != 0 ? '1 : 64'(dend_w);
    chk_fault_o = 1'b0;
    chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    if (rowsOf(f_mem) == 0) begin
      chk_fault_o = 1'b1;
    end else if (srows_w != 0) begin
      if (CW'(f_saddr) + CW'(srows_w) > CW'(rowsOf(f_mem))) begin
        chk_fault_o = 1'b1;
        chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
      end else if (f_s0 != 0 && f_s1 != 0 && f_s2 != 0 && dend_sat > window_i) begin
        chk_fault_o = 1'b1;
        chk_kind_o = ember_npu_pkg::FK_DRAM_RANGE;
      end
    end
  end

  // ---- Latched instruction ----
  logic [1:0] mem_q;
  logic [LGB-1:0] lgrb_q;
  logic [RCW-1:0] r_q;
  logic [SAW-1:0] saddr_q, blk_q;
  logic [DW-1:0] daddr_q, st1_q, st2_q;
  logic [S0B-1:0] s0_q;
  logic [S1B-1:0] s1_q;
  logic [S2B-1:0] s2_q;
  logic [LIW-1:0] pl_q, pr_q, line_q;
  logic [PLW-1:0] pt_q, plane_q;
  logic [RW-1:0] nreq_q;
  logic [63:0] x_q, beg_q;
  logic [7:0] pv_q;
  // Requests: issued, position of the next one (its first row x0 in line l of plane p),
  // pacing credit. The credit stays below X + N while the DRAM port is ready (X >= N);
  // it saturates, never wraps.
  logic [RW-1:0] issued_q;
  logic [S0B-1:0] x0_q;
  logic [S1B-1:0] l_q;
  logic [S2B-1:0] p_q;
  logic [64:0] credit_q;
  logic req_active_q;
  // Responses (loads, in order): the first row of the next one in its line.
  logic [S0B-1:0] xr_q;
  // Padding scan (loads): next pad row position (x in line L of plane p), its SRAM row,
  // whether pad rows remain.
  logic [S2B-1:0] pp_q;
  logic [PLW-1:0] pL_q;
  logic [LIW-1:0] px_q;
  logic [SAW-1:0] prow_q;
  logic pad_active_q;
  logic [RW-1:0] inflight_q;

  // ---- Request path ----
  logic issue_w, due_w;
  logic [DW-1:0] dline_w, dx_w;  // DRAM address of line (l, p), and of its row x0
  logic [SAW-1:0] tag_w;
  logic [S0B:0] left_w;  // rows of the line from x0 on
  logic [RCW-1:0] kreq_w;  // rows of this request: min(r, left)
  always_comb begin
    dline_w = daddr_q + ((DW'(p_q) * st2_q + DW'(l_q) * st1_q) << lgrb_q);
    dx_w = dline_w + (DW'(x0_q) << lgrb_q);
    due_w = req_active_q && cyc_i >= beg_q && credit_q >= 65'(x_q);
    issue_w = due_w && dram_req_ready_i;
    left_w = (S0B + 1)'(s0_q) - (S0B + 1)'(x0_q);
    kreq_w = left_w < (S0B + 1)'(r_q) ? RCW'(left_w) : r_q;
    dram_req_valid_o = due_w;
    dram_req_write_o = !LOAD;
    dram_req_addr_o = 64'(dx_w);
    dram_req_bytes_o = 32'(kreq_w) << lgrb_q;
    tag_w = saddr_q + (SAW'(p_q) * SAW'(plane_q) + SAW'(pt_q) + SAW'(l_q)) * SAW'(line_q) + SAW'(pl_q) + SAW'(x0_q);
    dram_req_tag_o = 32'(tag_w);
    sram_re_o = !LOAD && dram_req_valid_o;
    dram_req_wdata_o = sram_rdata_i;
  end

  // ---- Padding positions (loads) ----
  // The pad rows of a plane: whole lines above and below the data, and pad_left /
  // pad_right rows around each data line; data lines without side padding are skipped
  // in one step. The scan walks the rows in SRAM order, so a pad row's SRAM row is the
  // previous one's plus 1 plus the data rows it skips (s0 within a data line, s0 * s1
  // for the data lines when they have no side padding). Positions 0..RMAX of this cycle
  // are chained: slot j takes position j (at most r of them, after the response's rows).
  function automatic logic isData(input logic [PLW-1:0] L);
    isData = L >= pt_q && L < pt_q + PLW'(s1_q);
  endfunction
  logic [(RMAX+1)*S2B-1:0] cp_w;
  logic [(RMAX+1)*PLW-1:0] cL_w;
  logic [(RMAX+1)*LIW-1:0] cx_w;
  logic [(RMAX+1)*SAW-1:0] crow_w;
  logic [RMAX:0] cact_w;
  always_comb begin
    logic [S2B-1:0] p, np;
    logic [PLW-1:0] L, nL;
    logic [LIW-1:0] x, nx;
    logic [SAW-1:0] row, nrow;
    logic act;
    p = pp_q;
    L = pL_q;
    x = px_q;
    row = prow_q;
    act = LOAD && pad_active_q;
    for (int j = 0; j <= RMAX; j++) begin
      cp_w[j*S2B +: S2B] = p;
      cL_w[j*PLW +: PLW] = L;
      cx_w[j*LIW +: LIW] = x;
      crow_w[j*SAW +: SAW] = row;
      cact_w[j] = act;
      np = p;
      nL = L;
      nx = x + LIW'(1);
      nrow = row + SAW'(1);
      if (isData(L) && nx == pl_q) begin
        nx = pl_q + LIW'(s0_q);
        nrow = nrow + SAW'(s0_q);
      end
      if (nx >= line_q) begin
        nL = L + PLW'(1);
        if (isData(nL) && pl_q + pr_q == 0) begin
          nL = pt_q + PLW'(s1_q);
          nrow = nrow + blk_q;
        end
        if (nL >= plane_q) begin
          np = p + S2B'(1);
          nL = '0;
          if (isData('0) && pl_q + pr_q == 0) begin
            nL = pt_q + PLW'(s1_q);
            nrow = nrow + blk_q;
          end
          if (np >= s2_q || nL >= plane_q) act = 1'b0;
        end
        nx = '0;
        if (isData(nL) && pl_q == 0) begin
          nx = LIW'(s0_q);
          nrow = nrow + SAW'(s0_q);
        end
      end
      p = np;
      L = nL;
      x = nx;
      row = nrow;
    end
  end

  // ---- SRAM slots (loads: a response's rows, then pad rows; stores: the request's) ----
  localparam int unsigned RB_ACT = ember_isa_pkg::MEM_ACT_ROW_BYTES;
  localparam int unsigned RB_WGT = ember_isa_pkg::MEM_WEIGHT_ROW_BYTES;
  localparam int unsigned RB_ACC = ember_isa_pkg::MEM_ACC_ROW_BYTES;
  localparam int unsigned RB_PAR = ember_isa_pkg::MEM_PARAM_ROW_BYTES;
  logic [S0B:0] rleft_w;
  logic [RCW-1:0] krsp_w, npad_w;
  logic [RMAX-1:0] slot_rsp_w, slot_pad_w;
  always_comb begin
    logic [RCW-1:0] j;
    logic [SW1-1:0] rrow;
    rleft_w = (S0B + 1)'(s0_q) - (S0B + 1)'(xr_q);
    krsp_w = '0;
    if (LOAD && dram_rsp_valid_i) krsp_w = rleft_w < (S0B + 1)'(r_q) ? RCW'(rleft_w) : r_q;
    npad_w = '0;
    sram_mem_o = mem_q;
    sram_we_o = '0;
    sram_row_o = '0;
    for (int i = 0; i < RMAX; i++) begin
      slot_rsp_w[i] = RCW'(i) < krsp_w;
      j = RCW'(i) - krsp_w;
      slot_pad_w[i] = LOAD && !slot_rsp_w[i] && RCW'(i) < r_q && cact_w[j];
      if (slot_pad_w[i]) npad_w = npad_w + RCW'(1);
      sram_we_o[i] = LOAD && (slot_rsp_w[i] || slot_pad_w[i]);
      if (!LOAD) sram_row_o[32*i +: 32] = 32'(SAW'(tag_w + SAW'(i)));
      else if (slot_rsp_w[i]) sram_row_o[32*i +: 32] = 32'(SAW'(SAW'(dram_rsp_tag_i) + SAW'(i)));
      else sram_row_o[32*i +: 32] = 32'(crow_w[j*SAW +: SAW]);
      if (i == 0) begin
        sram_wdata_o[0 +: ember_isa_pkg::ROW_BITS] = slot_rsp_w[0] ? dram_rsp_rdata_i
                                                    : {ember_isa_pkg::MAX_ROW_BYTES{pv_q}};
      end else begin
        // Row i of the response: its bytes i * rb .. (i + 1) * rb - 1 (rb of the memory).
        rrow = '0;
        if (mem_q == 2'(ember_isa_pkg::MEM_ACT_ID) && i < RPC_ACT) rrow = SW1'(dram_rsp_rdata_i >> (8 * RB_ACT * i));
        if (mem_q == 2'(ember_isa_pkg::MEM_WEIGHT_ID) && i < RPC_WGT) rrow = SW1'(dram_rsp_rdata_i >> (8 * RB_WGT * i));
        if (mem_q == 2'(ember_isa_pkg::MEM_ACC_ID) && i < RPC_ACC) rrow = SW1'(dram_rsp_rdata_i >> (8 * RB_ACC * i));
        if (mem_q == 2'(ember_isa_pkg::MEM_PARAM_ID) && i < RPC_PAR) rrow = SW1'(dram_rsp_rdata_i >> (8 * RB_PAR * i));
        sram_wdata_o[ember_isa_pkg::ROW_BITS + (i - 1) * SW1 +: SW1] = slot_rsp_w[i] ? rrow : {(SW1 / 8){pv_q}};
      end
    end
  end

  assign busy_o = req_active_q || pad_active_q || inflight_q != 0;

  // First pad position of a fresh instruction (plane 0), computed from f_i.
  logic [PLW-1:0] fL_w;
  logic [LIW-1:0] fx_w;
  logic [SAW-1:0] fblk_w, frow_w;
  logic fpad_w;
  always_comb begin
    // Line 0 is a data line when there is no top padding: start after its left padding
    // (or at its right padding, or below the data when data lines have no side pads).
    fL_w = (f_pt == 0 && f_s1 != 0 && f_pl + f_pr == 0) ? PLW'(f_s1) : '0;
    fx_w = (f_pt == 0 && f_s1 != 0 && f_pl == 0 && f_pr != 0) ? LIW'(f_s0) : '0;
    fblk_w = SAW'(f_s0) * SAW'(f_s1);
    frow_w = SAW'(f_saddr) + (fL_w != 0 ? fblk_w : '0) + SAW'(fx_w);
    // Pad rows exist when there are SRAM rows and some padding (then S > D).
    fpad_w = LOAD && srows_w != 0 && (f_pl != 0 || f_pr != 0 || f_pt != 0 || f_pb != 0);
  end

  // The credit after this cycle: + N each cycle from the transfer's begin, - X per request.
  logic [65:0] credit_n;
  assign credit_n = 66'(credit_q) - (issue_w ? 66'(x_q) : 66'd0) + 66'(nreq_q);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      req_active_q <= 1'b0;
      pad_active_q <= 1'b0;
      mem_q <= '0;
      lgrb_q <= '0; r_q <= '0; saddr_q <= '0; blk_q <= '0; daddr_q <= '0;
      s0_q <= '0; s1_q <= '0; s2_q <= '0;
      st1_q <= '0; st2_q <= '0; pl_q <= '0; pr_q <= '0; pt_q <= '0;
      line_q <= '0; plane_q <= '0; nreq_q <= '0; x_q <= '0; beg_q <= '0; pv_q <= '0;
      issued_q <= '0; x0_q <= '0; l_q <= '0; p_q <= '0; credit_q <= '0; xr_q <= '0;
      pp_q <= '0; pL_q <= '0; px_q <= '0; prow_q <= '0;
    end else if (start_i) begin
      mem_q <= f_i[64*ember_npu_pkg::R_SRAM +: 2];
      lgrb_q <= lgRowBytes(f_mem);
      r_q <= rpcOf(f_mem);
      saddr_q <= SAW'(f_saddr);
      blk_q <= fblk_w;
      daddr_q <= DW'(f_daddr);
      s0_q <= f_s0; s1_q <= f_s1; s2_q <= f_s2;
      st1_q <= DW'(f_st1); st2_q <= DW'(f_st2);
      pl_q <= f_pl; pr_q <= f_pr; pt_q <= f_pt;
      line_q <= line_w;
      plane_q <= plane_w;
      nreq_q <= nreq_w;
      x_q <= xfer_i;
      beg_q <= begin_i;
      pv_q <= LOAD ? f_i[64*ember_npu_pkg::R_PAD_VALUE +: 8] : 8'd0;
      issued_q <= '0; x0_q <= '0; l_q <= '0; p_q <= '0; xr_q <= '0;
      credit_q <= 65'(xfer_i);
      req_active_q <= f_s0 != 0 && f_s1 != 0 && f_s2 != 0;
      pp_q <= '0; pL_q <= fL_w; px_q <= fx_w; prow_q <= frow_w;
      pad_active_q <= fpad_w;
    end else begin
      if (req_active_q && cyc_i >= beg_q) begin
        credit_q <= credit_n[65] ? '1 : credit_n[64:0];
        if (issue_w) begin
          issued_q <= issued_q + RW'(1);
          if (issued_q + RW'(1) == nreq_q) req_active_q <= 1'b0;
          if ((S0B + 1)'(x0_q) + (S0B + 1)'(r_q) < (S0B + 1)'(s0_q)) x0_q <= x0_q + S0B'(r_q);
          else begin
            x0_q <= '0;
            if (l_q + S1B'(1) < s1_q) l_q <= l_q + S1B'(1);
            else begin
              l_q <= '0;
              p_q <= p_q + S2B'(1);
            end
          end
        end
      end
      if (LOAD && dram_rsp_valid_i) begin
        if ((S0B + 1)'(xr_q) + (S0B + 1)'(r_q) < (S0B + 1)'(s0_q)) xr_q <= xr_q + S0B'(r_q);
        else xr_q <= '0;
      end
      if (npad_w != 0) begin
        pp_q <= cp_w[npad_w*S2B +: S2B];
        pL_q <= cL_w[npad_w*PLW +: PLW];
        px_q <= cx_w[npad_w*LIW +: LIW];
        prow_q <= crow_w[npad_w*SAW +: SAW];
        pad_active_q <= cact_w[npad_w];
      end
    end
  end

  // Requests not yet answered (loads; a store's writes need no response).
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) inflight_q <= '0;
    else if (LOAD)
      inflight_q <= inflight_q + (issue_w && !start_i ? RW'(1) : RW'(0))
                    - (dram_rsp_valid_i ? RW'(1) : RW'(0));
  end

  logic unused_w;
  assign unused_w = ^{dram_rsp_tag_i, slot_pad_w};
endmodule : ember_dma
