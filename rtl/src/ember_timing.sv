// The duration of an instruction: the closed-form rules D1, G1-G2, V1, N1 and S1 of the
// timing contract (docs/simulator.md section 2.2) and DW1 (docs/isa/instructions.md section 2.12),
// the same arithmetic as isa/src/timing.cpp. Purely combinational and independent of when the instruction
// starts: fetch evaluates it once and the queue carries it; at the start the engine adds
// the DRAM channel's wait (rule D2) to a DMA's duration.
//
// Sized by the description: every operand is as wide as its field role
// (ember_isa_pkg::ROLE_<R>_BITS; a signed role is used as its 64-bit sign-extended
// value, as the model's static_cast<uint64_t> does), a timing entry is at most 2^20
// cycles (isa/schema.json), and each product or sum is computed in exactly the bits its
// operands need. The model's checked uint64 arithmetic (timing.cpp, struct Ck) raises
// an overflow when any product or sum reaches 2^64; here every intermediate wider than
// 64 bits is tested for that and then carried saturated at 2^64 - 1 (only then is it
// 64 bits wide), so ovf_o is the model's overflow flag exactly. With the shipped
// descriptions no intermediate reaches 64 bits and every overflow test is a constant 0.
module ember_timing (
    input  logic [ember_isa_pkg::CLS_BITS-1:0] cls_i,
    input  logic [31:0] t_issue_i,
    input  logic [31:0] t_setup_i,
    input  logic [31:0] t_cpr_i,
    input  logic [31:0] t_pipe_i,
    input  logic [31:0] t_cpl_i,
    input  logic [31:0] t_cpe_i,
    /* verilator lint_off UNUSEDSIGNAL */  // the bus has every role; this reads a few
    input  logic [ember_npu_pkg::FIELDS_BITS-1:0] f_i,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic [63:0] dur_o,         // T when nothing waits (a DMA: channel free at once)
    output logic [63:0] mstall_o,      // memory stall inside T (bank conflicts)
    output logic ovf_o,                // the model's duration overflow (a cycle-budget fault)
    output logic books_o,              // a DMA that reserves the channel
    output logic [63:0] head_o,        // DMA: issue + setup, before the transfer begins
    output logic [63:0] xfer_o,        // DMA: X, cycles the channel is reserved
    output logic [63:0] macs_o,        // MACs it performs (gemm, depthwise), for the counters (mod 2^64)
    output logic [63:0] dram_bytes_o   // DRAM bytes it moves (DMA; mod 2^64)
);
  // ---- Widths ----
  // A timing entry (schema "cycles": at most 2^20).
  localparam int unsigned TB = 21;
  // A role as an unsigned quantity: its port width, or 64 for a signed role.
  localparam int unsigned S0B = ember_isa_pkg::ROLE_SIZE0_SIGNED || ember_isa_pkg::ROLE_SIZE0_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SIZE0_BITS;
  localparam int unsigned S1B = ember_isa_pkg::ROLE_SIZE1_SIGNED || ember_isa_pkg::ROLE_SIZE1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SIZE1_BITS;
  localparam int unsigned S2B = ember_isa_pkg::ROLE_SIZE2_SIGNED || ember_isa_pkg::ROLE_SIZE2_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SIZE2_BITS;
  localparam int unsigned PLB = ember_isa_pkg::ROLE_PAD_LEFT_SIGNED || ember_isa_pkg::ROLE_PAD_LEFT_BITS > 64 ? 64 : ember_isa_pkg::ROLE_PAD_LEFT_BITS;
  localparam int unsigned PRB = ember_isa_pkg::ROLE_PAD_RIGHT_SIGNED || ember_isa_pkg::ROLE_PAD_RIGHT_BITS > 64 ? 64 : ember_isa_pkg::ROLE_PAD_RIGHT_BITS;
  localparam int unsigned PTB = ember_isa_pkg::ROLE_PAD_TOP_SIGNED || ember_isa_pkg::ROLE_PAD_TOP_BITS > 64 ? 64 : ember_isa_pkg::ROLE_PAD_TOP_BITS;
  localparam int unsigned PBB = ember_isa_pkg::ROLE_PAD_BOTTOM_SIGNED || ember_isa_pkg::ROLE_PAD_BOTTOM_BITS > 64 ? 64 : ember_isa_pkg::ROLE_PAD_BOTTOM_BITS;
  localparam int unsigned MSB_ = ember_isa_pkg::ROLE_SRAM_SIGNED || ember_isa_pkg::ROLE_SRAM_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRAM_BITS;
  localparam int unsigned SMB = ember_isa_pkg::ROLE_SRC_MEM_SIGNED || ember_isa_pkg::ROLE_SRC_MEM_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC_MEM_BITS;
  localparam int unsigned RSB = ember_isa_pkg::ROLE_RESET_SIGNED || ember_isa_pkg::ROLE_RESET_BITS > 64 ? 64 : ember_isa_pkg::ROLE_RESET_BITS;
  localparam int unsigned N0B = ember_isa_pkg::ROLE_N0_SIGNED || ember_isa_pkg::ROLE_N0_BITS > 64 ? 64 : ember_isa_pkg::ROLE_N0_BITS;
  localparam int unsigned N1B = ember_isa_pkg::ROLE_N1_SIGNED || ember_isa_pkg::ROLE_N1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_N1_BITS;
  localparam int unsigned N2B = ember_isa_pkg::ROLE_N2_SIGNED || ember_isa_pkg::ROLE_N2_BITS > 64 ? 64 : ember_isa_pkg::ROLE_N2_BITS;
  localparam int unsigned LNB = ember_isa_pkg::ROLE_LEN_SIGNED || ember_isa_pkg::ROLE_LEN_BITS > 64 ? 64 : ember_isa_pkg::ROLE_LEN_BITS;
  // Row bytes (a power of two, at most MAX_ROW_BYTES) and its logarithm.
  localparam int unsigned RBB = $clog2(ember_isa_pkg::MAX_ROW_BYTES + 1);
  localparam int unsigned LGB = $clog2(RBB + 1);
  // Constants of the description.
  localparam longint unsigned LAT = 64'(ember_isa_pkg::DMA_LATENCY_CYCLES);
  localparam int unsigned LATB = $clog2(LAT + 1);
  localparam longint unsigned INFLIGHT = 64'(ember_isa_pkg::DMA_MAX_OUTSTANDING) * 64'(ember_isa_pkg::DMA_BURST_BYTES);
  localparam int unsigned LGI = $clog2(INFLIGHT);  // a power of two (description.cpp)
  // DRAM bytes a cycle (at least 1, as the model takes it); a power of two in every
  // shipped description (then a line's beats are a shift).
  localparam int unsigned BPC1 = ember_isa_pkg::DRAM_BYTES_PER_CYCLE > 0 ? ember_isa_pkg::DRAM_BYTES_PER_CYCLE : 1;
  localparam bit BPC_POW2 = (BPC1 & (BPC1 - 1)) == 0;
  localparam int unsigned LGBPC = $clog2(BPC1);
  localparam longint unsigned WL = 64'(ember_isa_pkg::MAC_WEIGHT_LOAD_CYCLES);
  localparam longint unsigned FD = 64'(ember_isa_pkg::MAC_FILL_CYCLES) + 64'(ember_isa_pkg::MAC_DRAIN_CYCLES);
  localparam longint unsigned RC = 64'(ember_isa_pkg::MAC_ROWS) * 64'(ember_isa_pkg::MAC_COLS);
  localparam int unsigned RCB = $clog2(RC + 1);
  // Banks (powers of two, at most MAX_BANKS): residues modulo the most banks.
  localparam int unsigned BK = ember_isa_pkg::MAX_BANKS > 1 ? $clog2(ember_isa_pkg::MAX_BANKS) : 1;
  localparam int unsigned BKW = $clog2(ember_isa_pkg::MAX_BANKS + 1);

  // ---- Per-memory constants (an id that names no memory: 1-byte rows, no banks) ----
  function automatic logic [LGB-1:0] lgRowBytes(input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) lgRowBytes = LGB'($clog2(ember_isa_pkg::MEM_ACT_ROW_BYTES));
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) lgRowBytes = LGB'($clog2(ember_isa_pkg::MEM_WEIGHT_ROW_BYTES));
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) lgRowBytes = LGB'($clog2(ember_isa_pkg::MEM_ACC_ROW_BYTES));
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) lgRowBytes = LGB'($clog2(ember_isa_pkg::MEM_PARAM_ROW_BYTES));
    else lgRowBytes = '0;
  endfunction
  // r: SRAM rows a DMA moves a cycle (rule D1, isa::timing::dmaRowsPerCycle, generated
  // into the package); an id that names no memory: 1.
  localparam int unsigned RPC_ACT = ember_isa_pkg::MEM_ACT_DMA_ROWS;
  localparam int unsigned RPC_WGT = ember_isa_pkg::MEM_WEIGHT_DMA_ROWS;
  localparam int unsigned RPC_ACC = ember_isa_pkg::MEM_ACC_DMA_ROWS;
  localparam int unsigned RPC_PAR = ember_isa_pkg::MEM_PARAM_DMA_ROWS;
  // Every r a power of two (r = bytes_per_cycle / row_bytes or banks, both usually are):
  // ceil(S / r) is a shift, else a division by the selected memory's constant.
  localparam bit RPC_POW2 = (RPC_ACT & (RPC_ACT - 1)) == 0 && (RPC_WGT & (RPC_WGT - 1)) == 0
                         && (RPC_ACC & (RPC_ACC - 1)) == 0 && (RPC_PAR & (RPC_PAR - 1)) == 0;
  function automatic logic [4:0] lgRpc(input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) lgRpc = 5'($clog2(RPC_ACT));
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) lgRpc = 5'($clog2(RPC_WGT));
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) lgRpc = 5'($clog2(RPC_ACC));
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) lgRpc = 5'($clog2(RPC_PAR));
    else lgRpc = '0;
  endfunction
  // ceil(v / r) for memory `id` (an id that names no memory: r = 1): a shift when every
  // r is a power of two, else a division by the selected memory's constant.
  function automatic logic [63:0] ceilRows(input logic [63:0] v, input logic [63:0] id);
    if (RPC_POW2) ceilRows = 64'((65'(v) + ((65'(1) << lgRpc(id)) - 65'(1))) >> lgRpc(id));
    else if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) ceilRows = 64'((65'(v) + (65'(RPC_ACT) - 65'(1))) / 65'(RPC_ACT));
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) ceilRows = 64'((65'(v) + (65'(RPC_WGT) - 65'(1))) / 65'(RPC_WGT));
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) ceilRows = 64'((65'(v) + (65'(RPC_ACC) - 65'(1))) / 65'(RPC_ACC));
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) ceilRows = 64'((65'(v) + (65'(RPC_PAR) - 65'(1))) / 65'(RPC_PAR));
    else ceilRows = v;
  endfunction
  function automatic logic [BKW-1:0] banksOf(input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) banksOf = BKW'(ember_isa_pkg::MEM_ACT_BANKS);
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) banksOf = BKW'(ember_isa_pkg::MEM_WEIGHT_BANKS);
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) banksOf = BKW'(ember_isa_pkg::MEM_ACC_BANKS);
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) banksOf = BKW'(ember_isa_pkg::MEM_PARAM_BANKS);
    else banksOf = '0;
  endfunction
  // A step whose two source rows share a bank waits ceil(2 / max(1, read_ports)) - 1
  // cycles: one with a single read port, none with more.
  function automatic logic waitsOnConflict(input logic [63:0] id);
    if (id == 64'(ember_isa_pkg::MEM_ACT_ID)) waitsOnConflict = ember_isa_pkg::MEM_ACT_READ_PORTS <= 1;
    else if (id == 64'(ember_isa_pkg::MEM_WEIGHT_ID)) waitsOnConflict = ember_isa_pkg::MEM_WEIGHT_READ_PORTS <= 1;
    else if (id == 64'(ember_isa_pkg::MEM_ACC_ID)) waitsOnConflict = ember_isa_pkg::MEM_ACC_READ_PORTS <= 1;
    else if (id == 64'(ember_isa_pkg::MEM_PARAM_ID)) waitsOnConflict = ember_isa_pkg::MEM_PARAM_READ_PORTS <= 1;
    else waitsOnConflict = 1'b0;
  endfunction

  // ---- Operands ----
  logic [TB-1:0] issue, setup, cpr, pipe, cpl, cpe;
  logic [S0B-1:0] s0;
  logic [S1B-1:0] s1;
  logic [S2B-1:0] s2;
  logic [PLB-1:0] pl;
  logic [PRB-1:0] pr;
  logic [PTB-1:0] pt;
  logic [PBB-1:0] pb;
  logic [N0B-1:0] n0;
  logic [N1B-1:0] n1;
  logic [N2B-1:0] n2;
  logic [LNB-1:0] len;
  logic [63:0] sram_id, src_id;
  logic load, reset;
  assign issue = t_issue_i[TB-1:0];
  assign setup = t_setup_i[TB-1:0];
  assign cpr = t_cpr_i[TB-1:0];
  assign pipe = t_pipe_i[TB-1:0];
  assign cpl = t_cpl_i[TB-1:0];
  assign cpe = t_cpe_i[TB-1:0];
  assign s0 = f_i[64*ember_npu_pkg::R_SIZE0 +: S0B];
  assign s1 = f_i[64*ember_npu_pkg::R_SIZE1 +: S1B];
  assign s2 = f_i[64*ember_npu_pkg::R_SIZE2 +: S2B];
  assign pl = f_i[64*ember_npu_pkg::R_PAD_LEFT +: PLB];
  assign pr = f_i[64*ember_npu_pkg::R_PAD_RIGHT +: PRB];
  assign pt = f_i[64*ember_npu_pkg::R_PAD_TOP +: PTB];
  assign pb = f_i[64*ember_npu_pkg::R_PAD_BOTTOM +: PBB];
  assign n0 = f_i[64*ember_npu_pkg::R_N0 +: N0B];
  assign n1 = f_i[64*ember_npu_pkg::R_N1 +: N1B];
  assign n2 = f_i[64*ember_npu_pkg::R_N2 +: N2B];
  assign len = f_i[64*ember_npu_pkg::R_LEN +: LNB];
  assign sram_id = 64'(f_i[64*ember_npu_pkg::R_SRAM +: MSB_]);
  assign src_id = 64'(f_i[64*ember_npu_pkg::R_SRC_MEM +: SMB]);
  assign load = cls_i == ember_isa_pkg::CLS_DMA_LOAD;
  assign reset = f_i[64*ember_npu_pkg::R_RESET +: RSB] != 0;

  // ---- D1: a DMA's rows, transfer X and duration ----
  // DRAM rows D = s0 * (s1 * s2), checked.
  localparam int unsigned W_LN = S1B + S2B;
  localparam int unsigned C_LN = W_LN > 64 ? 64 : W_LN;
  logic [W_LN-1:0] ln_x;
  logic [C_LN-1:0] lines;
  logic o_ln;
  assign ln_x = W_LN'(s1) * W_LN'(s2);
  assign o_ln = (ln_x >> 64) != 0;
  assign lines = o_ln ? '1 : C_LN'(ln_x);
  localparam int unsigned W_D = S0B + C_LN;
  localparam int unsigned C_D = W_D > 64 ? 64 : W_D;
  logic [W_D-1:0] d_x;
  logic [C_D-1:0] d_rows;
  logic o_d;
  assign d_x = W_D'(s0) * W_D'(lines);
  assign o_d = (d_x >> 64) != 0;
  assign d_rows = o_d ? '1 : C_D'(d_x);
  // SRAM rows of a load S = ((pl + s0 + pr) * (pt + s1 + pb)) * s2, checked; a store's S = D.
  localparam int unsigned W_LI = (PLB > S0B ? (PLB > PRB ? PLB : PRB) : (S0B > PRB ? S0B : PRB)) + 2;
  localparam int unsigned C_LI = W_LI > 64 ? 64 : W_LI;
  localparam int unsigned W_PL = (PTB > S1B ? (PTB > PBB ? PTB : PBB) : (S1B > PBB ? S1B : PBB)) + 2;
  localparam int unsigned C_PL = W_PL > 64 ? 64 : W_PL;
  logic [W_LI-1:0] li_x;
  logic [W_PL-1:0] pln_x;
  logic [C_LI-1:0] line;
  logic [C_PL-1:0] plane;
  logic o_li, o_pl;
  assign li_x = W_LI'(pl) + W_LI'(s0) + W_LI'(pr);
  assign pln_x = W_PL'(pt) + W_PL'(s1) + W_PL'(pb);
  assign o_li = (li_x >> 64) != 0;
  assign o_pl = (pln_x >> 64) != 0;
  assign line = o_li ? '1 : C_LI'(li_x);
  assign plane = o_pl ? '1 : C_PL'(pln_x);
  localparam int unsigned W_LP = C_LI + C_PL;
  localparam int unsigned C_LP = W_LP > 64 ? 64 : W_LP;
  logic [W_LP-1:0] lp_x;
  logic [C_LP-1:0] lp;
  logic o_lp;
  assign lp_x = W_LP'(line) * W_LP'(plane);
  assign o_lp = (lp_x >> 64) != 0;
  assign lp = o_lp ? '1 : C_LP'(lp_x);
  localparam int unsigned W_S = C_LP + S2B;
  localparam int unsigned C_S = W_S > 64 ? 64 : W_S;
  logic [W_S-1:0] s_x;
  logic [C_S-1:0] s_load;
  logic o_s;
  assign s_x = W_S'(lp) * W_S'(s2);
  assign o_s = (s_x >> 64) != 0;
  assign s_load = o_s ? '1 : C_S'(s_x);
  // Beats: lines * ceil(s0 * rb / bytes_per_cycle) (a line's rows are contiguous in
  // DRAM and move in whole beats), each product checked.
  localparam int unsigned W_LB = S0B + RBB;
  localparam int unsigned C_LB = W_LB > 64 ? 64 : W_LB;
  logic [W_LB-1:0] lb_x;
  logic [C_LB-1:0] line_bytes, bpl;
  logic o_lb;
  assign lb_x = W_LB'(s0) << lgRowBytes(sram_id);
  assign o_lb = (lb_x >> 64) != 0;
  assign line_bytes = o_lb ? '1 : C_LB'(lb_x);
  // A line's cycles: its beats, and at least its requests ceil(s0 / r) (a request
  // carries at most r rows).
  logic [C_LB-1:0] lbeats, lreqs;
  if (BPC_POW2) begin : g_bpl_shift
    assign lbeats = C_LB'(((C_LB + 1)'(line_bytes) + (C_LB + 1)'(BPC1 - 1)) >> LGBPC);
  end else begin : g_bpl_div
    assign lbeats = C_LB'(((C_LB + 1)'(line_bytes) + (C_LB + 1)'(BPC1 - 1)) / (C_LB + 1)'(BPC1));
  end
  assign lreqs = C_LB'(ceilRows(64'(s0), sram_id));
  assign bpl = lbeats > lreqs ? lbeats : lreqs;
  localparam int unsigned W_BT = C_LN + C_LB;
  localparam int unsigned C_BT = W_BT > 64 ? 64 : W_BT;
  logic [W_BT-1:0] bt_x;
  logic [C_BT-1:0] beats;
  logic o_bt;
  assign bt_x = W_BT'(lines) * W_BT'(bpl);
  assign o_bt = (bt_x >> 64) != 0;
  assign beats = o_bt ? '1 : C_BT'(bt_x);
  // Bytes D * rb (rb a power of two: a shift), checked; as a counter, modulo 2^64.
  localparam int unsigned W_BY = C_D + RBB;
  localparam int unsigned C_BY = W_BY > 64 ? 64 : W_BY;
  logic [W_BY-1:0] by_x;
  logic [C_BY-1:0] bytes_;
  logic o_by;
  assign by_x = W_BY'(d_rows) << lgRowBytes(sram_id);
  assign o_by = (by_x >> 64) != 0;
  assign bytes_ = o_by ? '1 : C_BY'(by_x);
  // Little's law: ceil(D * rb * latency / inflight), the product checked.
  localparam int unsigned W_LT = C_BY + LATB;
  localparam int unsigned C_LT = W_LT > 64 ? 64 : W_LT;
  logic [W_LT-1:0] lt_x;
  logic [C_LT-1:0] lat_bytes, little;
  logic o_lt;
  assign lt_x = W_LT'(bytes_) * W_LT'(LAT);
  assign o_lt = (lt_x >> 64) != 0;
  assign lat_bytes = o_lt ? '1 : C_LT'(lt_x);
  assign little = (lat_bytes >> LGI) + C_LT'((lat_bytes & C_LT'(INFLIGHT - 1)) != 0);
  // X = max(beats, ceil(S / r), little); T = head + X + latency with rows, else
  // head + ceil(S / r) (no channel: beats and little are 0).
  localparam int unsigned C_X0 = C_BT > C_S ? C_BT : C_S;
  localparam int unsigned C_X1 = C_X0 > C_D ? C_X0 : C_D;  // a store's S is D
  localparam int unsigned C_X = C_X1 > C_LT ? C_X1 : C_LT;
  logic [C_X-1:0] srows, scyc, xfer;
  logic [TB:0] head;
  logic o_dma;
  assign srows = load ? C_X'(s_load) : C_X'(d_rows);
  assign scyc = C_X'(ceilRows(64'(srows), sram_id));
  always_comb begin
    xfer = C_X'(beats) > scyc ? C_X'(beats) : scyc;
    if (C_X'(little) > xfer) xfer = C_X'(little);
  end
  assign head = (TB + 1)'(issue) + (TB + 1)'(setup);
  localparam int unsigned W_TD0 = C_X > LATB ? C_X : LATB;
  localparam int unsigned W_TD = (W_TD0 > TB + 1 ? W_TD0 : TB + 1) + 2;
  logic [W_TD-1:0] td_x;
  assign td_x = W_TD'(head) + W_TD'(xfer) + (d_rows != 0 ? W_TD'(LAT) : W_TD'(0));
  assign o_dma = o_ln || o_d || (load && (o_li || o_pl || o_lp || o_s)) || o_lb || o_bt || o_by
              || o_lt || (td_x >> 64) != 0;

  // ---- DW1: the cycles C of one depthwise output ----
  // C = ceil(max over banks b of N_b / read_ports) for the act memory, N_b the taps
  // (y, x), y < kh, x < kw, with y * tap_s1 + x * tap_s0 = b modulo banks = 2^m (the
  // model caps kh and kw at 64). In closed form: name x the loop whose stride has the
  // smaller 2-adic valuation v = min(v2(s_x), m) (swapping kh and kw, tap_s1 and tap_s0
  // when tap_s1's is smaller), g = 2^v, M = 2^(m - v). Every tap lies in a bank g * z,
  // and tap (y, x) in z = x + y * q modulo M, q = (s_y / g) * (s_x / g)^-1 modulo M. So
  // N = k_y * (k_x >> (m - v)) + #{y : (z - y * q) mod M < k_x mod M}, whose largest
  // value over z is that of a window of k_x mod M residues starting at a point y0 * q:
  // max over y0 < k_y of #{y < k_y : ((y - y0) * q) mod M < k_x mod M}.
  localparam int unsigned KHB = ember_isa_pkg::ROLE_KH_SIGNED || ember_isa_pkg::ROLE_KH_BITS > 64 ? 64 : ember_isa_pkg::ROLE_KH_BITS;
  localparam int unsigned KWB = ember_isa_pkg::ROLE_KW_SIGNED || ember_isa_pkg::ROLE_KW_BITS > 64 ? 64 : ember_isa_pkg::ROLE_KW_BITS;
  localparam int unsigned KHC = KHB > 7 ? 7 : KHB;  // kh after the cap, at most 64
  localparam int unsigned KWC = KWB > 7 ? 7 : KWB;
  localparam int unsigned KK = KHC > KWC ? KHC : KWC;
  localparam int unsigned KMAX = (1 << KK) - 1 > 64 ? 64 : (1 << KK) - 1;
  localparam int unsigned AM = ember_isa_pkg::MEM_ACT_BANKS > 1 ? $clog2(ember_isa_pkg::MEM_ACT_BANKS) : 0;
  localparam int unsigned AMB = AM > 0 ? AM : 1;
  localparam int unsigned KA = KK > AMB ? KK : AMB;
  localparam int unsigned CB = 2 * KK;  // the most taps in a bank, kh * kw
  localparam int unsigned APORTS = ember_isa_pkg::MEM_ACT_READ_PORTS > 1 ? ember_isa_pkg::MEM_ACT_READ_PORTS : 1;
  logic [KHB-1:0] kh_f;
  logic [KWB-1:0] kw_f;
  logic [KK-1:0] kh, kw, kx, ky, qx, rx;
  logic [AMB-1:0] ts0, ts1, sx, sy, dmm, dodd, dinv, dq, dprod;
  logic [3:0] v0, v1, dv;
  logic [KK-1:0] win, best;
  logic [2*KMAX:0] hit;  // hit[d + KMAX]: ((d * q) mod M) < k_x mod M, |d| < KMAX
  logic [CB-1:0] most, dwc;
  assign kh_f = f_i[64*ember_npu_pkg::R_KH +: KHB];
  assign kw_f = f_i[64*ember_npu_pkg::R_KW +: KWB];
  assign kh = 64'(kh_f) > 64'd64 ? KK'(64) : KK'(kh_f);
  assign kw = 64'(kw_f) > 64'd64 ? KK'(64) : KK'(kw_f);
  assign ts0 = AMB'(f_i[64*ember_npu_pkg::R_TAP_S0 +: AMB]) & AMB'(ember_isa_pkg::MEM_ACT_BANKS - 1);
  assign ts1 = AMB'(f_i[64*ember_npu_pkg::R_TAP_S1 +: AMB]) & AMB'(ember_isa_pkg::MEM_ACT_BANKS - 1);
  always_comb begin
    // v2 of each stride, capped at m.
    v0 = 4'(AM);
    v1 = 4'(AM);
    for (int s = AMB - 1; s >= 0; s--) begin
      if (ts0[s] && s < AM) v0 = 4'(s);
      if (ts1[s] && s < AM) v1 = 4'(s);
    end
    if (v1 < v0) begin
      kx = kh; ky = kw; sx = ts1; sy = ts0; dv = v1;
    end else begin
      kx = kw; ky = kh; sx = ts0; sy = ts1; dv = v0;
    end
    dmm = AMB'(ember_isa_pkg::MEM_ACT_BANKS - 1) >> dv;  // M - 1
    dodd = sx >> dv;
    dinv = dodd;
    for (int k = 3; k < AMB; k = 2 * k) dinv = dinv * (AMB'(2) - dodd * dinv);
    dq = ((sy >> dv) * dinv) & dmm;
    qx = kx >> (4'(AM) - dv);
    rx = kx & KK'(dmm);
    hit = '0;
    dprod = '0;
    for (int i = 0; i <= 2 * KMAX; i++) begin  // d = i - KMAX
      dprod = ((AMB'(i) - AMB'(KMAX)) * dq) & dmm;
      hit[i] = KA'(dprod) < KA'(rx);
    end
    best = '0;
    win = '0;
    for (int y0 = 0; y0 < KMAX; y0++) begin
      win = '0;
      for (int y = 0; y < KMAX; y++)
        if (KK'(y) < ky && hit[y - y0 + KMAX]) win = win + KK'(1);
      if (KK'(y0) < ky && win > best) best = win;
    end
    most = CB'(ky) * CB'(qx) + CB'(best);
    dwc = CB'((most + CB'(APORTS - 1)) / CB'(APORTS));
  end

  // ---- G1, G2: gemm; N1: normalize; DW1's T ----
  // Rule N1 (issue + n1 * (cycles_per_line + R * cycles_per_row + len *
  // cycles_per_element) + pipeline_latency, R = ceil(len / L)) shares the gemm's three
  // multipliers, its class selecting their operands: R * cpr on rows' (steps * cpr),
  // len * cpe on G2's (R * n2) * cpr, n1 * line on G1's (n2 - 1) * S. The overflow
  // flags of the instruction's own class are the model's.
  logic norm, dw;
  assign norm = cls_i == ember_isa_pkg::CLS_NORMALIZE;
  assign dw = cls_i == ember_isa_pkg::CLS_DEPTHWISE;
  // L a power of two (lanes = MAC rows); R = ceil(len / L) < 2^(LNB - LGL + 1).
  localparam int unsigned LGL = ember_isa_pkg::VECTOR_LANES > 1 ? $clog2(ember_isa_pkg::VECTOR_LANES) : 0;
  localparam int unsigned NRB = LNB > LGL ? LNB - LGL + 1 : 1;
  logic [NRB-1:0] nr;
  assign nr = NRB'(len >> LGL) + NRB'((len & LNB'(ember_isa_pkg::VECTOR_LANES - 1)) != 0);
  // steps R = n0 * n1 (also the vector classes' steps), checked.
  localparam int unsigned W_R = N0B + N1B;
  localparam int unsigned C_R = W_R > 64 ? 64 : W_R;
  logic [W_R-1:0] r_x;
  logic [C_R-1:0] steps;
  logic o_r;
  assign r_x = W_R'(n0) * W_R'(n1);
  assign o_r = (r_x >> 64) != 0;
  assign steps = o_r ? '1 : C_R'(r_x);
  // rows = R * cpr, checked (also the vector classes' steps * cycles_per_row; N1's
  // R * cycles_per_row).
  localparam int unsigned W_A1 = C_R > NRB ? C_R : NRB;
  localparam int unsigned W_RW = W_A1 + TB;
  localparam int unsigned C_RW = W_RW > 64 ? 64 : W_RW;
  logic [W_RW-1:0] rw_x;
  logic [C_RW-1:0] rows;
  logic o_rw;
  logic [W_A1-1:0] a1;
  assign a1 = norm ? W_A1'(nr) : W_A1'(steps);
  assign rw_x = W_RW'(a1) * W_RW'(cpr);
  assign o_rw = (rw_x >> 64) != 0;
  assign rows = o_rw ? '1 : C_RW'(rw_x);
  // G2 (reset): issue + (R * n2) * cpr, checked (N1: len * cycles_per_element; DW1:
  // (R * C) * cpr).
  localparam int unsigned W_N2C = N2B > CB ? N2B : CB;
  localparam int unsigned W_RN = C_R + W_N2C;
  localparam int unsigned C_RN = W_RN > 64 ? 64 : W_RN;
  logic [W_RN-1:0] rn_x;
  logic [C_RN-1:0] rn;
  logic o_rn;
  logic [W_N2C-1:0] n2c;
  assign n2c = dw ? W_N2C'(dwc) : W_N2C'(n2);
  assign rn_x = W_RN'(steps) * W_RN'(n2c);
  assign o_rn = (rn_x >> 64) != 0;
  assign rn = o_rn ? '1 : C_RN'(rn_x);
  localparam int unsigned W_A2 = C_RN > LNB ? C_RN : LNB;
  localparam int unsigned W_RC = W_A2 + TB;
  localparam int unsigned C_RC = W_RC > 64 ? 64 : W_RC;
  logic [W_RC-1:0] rc_x;
  logic [C_RC-1:0] rn_cpr;
  logic o_rc;
  logic [W_A2-1:0] a2;
  logic [TB-1:0] b2;
  assign a2 = norm ? W_A2'(len) : W_A2'(rn);
  assign b2 = norm ? cpe : cpr;
  assign rc_x = W_RC'(a2) * W_RC'(b2);
  assign o_rc = (rc_x >> 64) != 0;
  assign rn_cpr = o_rc ? '1 : C_RC'(rc_x);
  // N1's line: cycles_per_line + R * cycles_per_row + len * cycles_per_element, checked.
  // The model adds the first two first, then the third: either sum reaching 2^64 is an
  // overflow, and the first is below the second.
  localparam int unsigned W_NL0 = C_RW > C_RC ? C_RW : C_RC;
  localparam int unsigned W_NL = (W_NL0 > TB ? W_NL0 : TB) + 2;
  localparam int unsigned C_NL = W_NL > 64 ? 64 : W_NL;
  logic [W_NL-1:0] nl_x;
  logic [C_NL-1:0] nline;
  logic o_nl;
  assign nl_x = W_NL'(cpl) + W_NL'(rows) + W_NL'(rn_cpr);
  assign o_nl = (nl_x >> 64) != 0;
  assign nline = o_nl ? '1 : C_NL'(nl_x);
  // G1: issue + WL + (n2 - 1) * S + rows + fill + drain, S = max(rows, WL) with two
  // weight buffers, WL + rows with one; checked (N1: n1 * line).
  localparam int unsigned WLB = $clog2(WL + 1);
  localparam int unsigned W_BK = (C_RW > WLB ? C_RW : WLB) + 1;
  localparam int unsigned C_BK = W_BK > 64 ? 64 : W_BK;
  logic [W_BK-1:0] bk_x;
  logic [C_BK-1:0] blk;
  logic o_bk;
  assign bk_x = ember_isa_pkg::MAC_WEIGHT_BUFFERS >= 2 ? (W_BK'(rows) > W_BK'(WL) ? W_BK'(rows) : W_BK'(WL))
                                                      : W_BK'(WL) + W_BK'(rows);
  assign o_bk = (bk_x >> 64) != 0;
  assign blk = o_bk ? '1 : C_BK'(bk_x);
  localparam int unsigned W_A30 = N2B > N1B ? N2B : N1B;
  localparam int unsigned W_A3 = W_A30 > KHB + KWB ? W_A30 : KHB + KWB;
  localparam int unsigned W_B3 = C_BK > C_NL ? C_BK : C_NL;
  localparam int unsigned W_NB = W_A3 + W_B3;
  localparam int unsigned C_NB = W_NB > 64 ? 64 : W_NB;
  logic [W_NB-1:0] nb_x;
  logic [C_NB-1:0] nblk;
  logic o_nb;
  logic [N2B-1:0] n2m1;
  assign n2m1 = n2 - N2B'(1);
  logic [W_A3-1:0] a3;
  logic [W_B3-1:0] b3;
  // DW1's MACs share this multiplier: taps * R.
  assign a3 = norm ? W_A3'(n1) : dw ? W_A3'(kh_f) * W_A3'(kw_f) : W_A3'(n2m1);
  assign b3 = norm ? W_B3'(nline) : dw ? W_B3'(steps) : W_B3'(blk);
  assign nb_x = W_NB'(a3) * W_NB'(b3);
  assign o_nb = (nb_x >> 64) != 0;
  assign nblk = o_nb ? '1 : C_NB'(nb_x);
  localparam int unsigned FDB = $clog2(FD + 1);
  localparam int unsigned W_G0 = C_NB > C_RW ? C_NB : C_RW;
  localparam int unsigned W_G1 = W_G0 > TB ? W_G0 : TB;
  localparam int unsigned W_G2 = W_G1 > WLB ? W_G1 : WLB;
  localparam int unsigned W_G = (W_G2 > FDB ? W_G2 : FDB) + 3;
  logic [W_G-1:0] g1_x;
  localparam int unsigned W_G2X = (C_RC > TB ? C_RC : TB) + 1;
  logic [W_G2X-1:0] g2_x;
  assign g1_x = W_G'(issue) + W_G'(WL) + W_G'(nblk) + W_G'(rows) + W_G'(FD);
  assign g2_x = W_G2X'(issue) + W_G2X'(rn_cpr);
  // DW1: issue + WL + (R * C) * cpr + fill + drain, checked.
  localparam int unsigned W_DWT0 = W_G2X > WLB ? W_G2X : WLB;
  localparam int unsigned W_DWT = (W_DWT0 > FDB ? W_DWT0 : FDB) + 2;
  logic [W_DWT-1:0] dw_x;
  assign dw_x = W_DWT'(g2_x) + W_DWT'(WL) + W_DWT'(FD);
  // N1: issue + n1 * line + pipeline_latency, checked.
  localparam int unsigned W_N = (C_NB > TB ? C_NB : TB) + 2;
  logic [W_N-1:0] n_x;
  assign n_x = W_N'(issue) + W_N'(nblk) + W_N'(pipe);
  logic o_norm;
  assign o_norm = o_rw || o_rc || o_nl || o_nb || (n_x >> 64) != 0;
  // MACs: n0 * n1 * n2 * rows * cols modulo 2^64 (the model's counter wraps): R * n2
  // times the constant when R * n2 is exact.
  localparam int unsigned W_M = N0B + N1B + N2B + RCB > 64 ? 64 : N0B + N1B + N2B + RCB;
  logic [W_M-1:0] macs;
  if (W_RN <= 64) begin : g_macs
    assign macs = W_M'(rn) * W_M'(RC);
  end else begin : g_macs_wide
    assign macs = W_M'(n0) * W_M'(n1) * W_M'(n2) * W_M'(RC);
  end
  // DW1's MACs: n0 * n1 * kh * kw * cols modulo 2^64 (exact taps * R from the shared
  // multiplier, whose low 64 bits are the model's wrapped product).
  localparam int unsigned W_MD = W_NB + $clog2(ember_isa_pkg::MAC_COLS + 1) > 64 ? 64 : W_NB + $clog2(ember_isa_pkg::MAC_COLS + 1);
  logic [W_MD-1:0] macs_dw;
  assign macs_dw = W_MD'(nb_x) * W_MD'(ember_isa_pkg::MAC_COLS);

  // ---- V1: the vector classes ----
  // Bank conflicts of a vector-binary (its sources in src_mem) or a quantized-add (its
  // sources always in act): the steps (i0, i1), i0 < n0, i1 < n1, whose source rows share
  // a bank, D + i0 * d0 + i1 * d1 = 0 modulo banks = 2^m (D = a0 - b0, d0 = as0 - bs0,
  // d1 = as1 - bs1: the model's sums of residues, since banks is a power of two). In
  // closed form: with v = min(v2(d0), m) (the 2-adic valuation), g = 2^v, M = 2^(m - v),
  // the steps of a residue r1 of i1 conflict iff g divides c = -(D + r1 * d1), for
  // i0 = i0* = (c / g) * (d0 / g)^-1 modulo M, which Q + [i0* < R] of the i0 < n0 are
  // (Q = n0 >> (m - v), R = n0 mod M). Over the residues r1 < k, with A(k) of them
  // solvable and E(k) also i0* < R, that is S(k) = Q * A(k) + E(k); n1 = q1 * banks +
  // rho1 gives the count q1 * S(banks) + S(rho1). (It was the sum over the banks^2
  // residue pairs (r0, r1), 22 k cells with 16 banks.) The count is at most n0 * n1 (it
  // fits N0B + N1B bits), and the model's sum saturates at 2^64 - 1 without an overflow.
  localparam int unsigned W_CF = N0B + N1B;
  localparam int unsigned C_CF = W_CF > 64 ? 64 : W_CF;
  localparam int unsigned W_SA = N0B + BKW;  // S(k) <= n0 * banks
  logic [BKW-1:0] banks;
  logic [BK-1:0] mask, a0, as0, as1, b0, bs0, bs1, dd, d0, d1, gmask, mm, odd, inv, c, i0s, rr;
  logic [3:0] bshift, cv;
  logic per;
  logic [63:0] cf_id;
  logic [N0B-1:0] qq;
  logic [N1B-1:0] q1, rho1;
  logic [BKW-1:0] a_all, e_all, a_part, e_part;
  logic [W_SA-1:0] s_all, s_part;
  logic [W_CF-1:0] cf_x;
  logic [C_CF-1:0] confl;
  assign a0 = f_i[64*ember_npu_pkg::R_SRC0_ADDR +: BK];
  assign as0 = f_i[64*ember_npu_pkg::R_SRC0_S0 +: BK];
  assign as1 = f_i[64*ember_npu_pkg::R_SRC0_S1 +: BK];
  assign b0 = f_i[64*ember_npu_pkg::R_SRC1_ADDR +: BK];
  assign bs0 = f_i[64*ember_npu_pkg::R_SRC1_S0 +: BK];
  assign bs1 = f_i[64*ember_npu_pkg::R_SRC1_S1 +: BK];
  always_comb begin
    cf_id = cls_i == ember_isa_pkg::CLS_QUANTIZED_ADD ? 64'(ember_isa_pkg::MEM_ACT_ID) : src_id;
    banks = banksOf(cf_id);
    per = waitsOnConflict(cf_id) && (cls_i == ember_isa_pkg::CLS_VECTOR_BINARY
                                     || cls_i == ember_isa_pkg::CLS_QUANTIZED_ADD);
    mask = BK'(banks - BKW'(1));
    bshift = '0;
    for (int s = 0; s <= BK; s++)
      if (banks == BKW'(64'd1 << s)) bshift = 4'(s);
    dd = (a0 - b0) & mask;
    d0 = (as0 - bs0) & mask;
    d1 = (as1 - bs1) & mask;
    // v = min(v2(d0), m): the lowest set bit of d0 (below m), else m.
    cv = bshift;
    for (int s = BK - 1; s >= 0; s--)
      if (d0[s] && 4'(s) < bshift) cv = 4'(s);
    gmask = BK'((BKW'(1) << cv) - BKW'(1));
    mm = mask >> cv;  // M - 1
    // The inverse of the odd d0 / g modulo 2^BK (Newton: x * x = 1 modulo 8, and each
    // step doubles the correct bits); modulo M it is the inverse there too.
    odd = d0 >> cv;
    inv = odd;
    for (int k = 3; k < BK; k = 2 * k) inv = inv * (BK'(2) - odd * inv);
    qq = n0 >> (bshift - cv);
    rr = BK'(n0) & mm;
    q1 = n1 >> bshift;
    rho1 = n1 & N1B'(mask);
    a_all = '0;
    e_all = '0;
    a_part = '0;
    e_part = '0;
    c = '0;
    i0s = '0;
    for (int r1 = 0; r1 < ember_isa_pkg::MAX_BANKS; r1++) begin
      c = (BK'(0) - dd - BK'(r1) * d1) & mask;
      i0s = ((c >> cv) * inv) & mm;
      if (64'(r1) < 64'(banks) && (c & gmask) == 0) begin
        a_all = a_all + BKW'(1);
        if (i0s < rr) e_all = e_all + BKW'(1);
        if (64'(r1) < 64'(rho1)) begin
          a_part = a_part + BKW'(1);
          if (i0s < rr) e_part = e_part + BKW'(1);
        end
      end
    end
    s_all = W_SA'(qq) * W_SA'(a_all) + W_SA'(e_all);
    s_part = W_SA'(qq) * W_SA'(a_part) + W_SA'(e_part);
    cf_x = '0;
    if (banks != 0 && per) cf_x = W_CF'(q1) * W_CF'(s_all) + W_CF'(s_part);
  end
  assign confl = (cf_x >> 64) != 0 ? '1 : C_CF'(cf_x);
  // V1: issue + steps * cycles_per_row + conflicts + pipeline_latency, checked.
  localparam int unsigned W_V = (C_RW > C_CF ? C_RW : C_CF) + 2;
  logic [W_V-1:0] v_x;
  assign v_x = W_V'(issue) + W_V'(rows) + W_V'(confl) + W_V'(pipe);

  // ---- The instruction's class picks ----
  logic unused_w;
  assign unused_w = ^{t_issue_i[31:TB], t_setup_i[31:TB], t_cpr_i[31:TB], t_pipe_i[31:TB],
                      t_cpl_i[31:TB], t_cpe_i[31:TB]};
  always_comb begin
    dur_o = 64'(issue);
    ovf_o = 1'b0;
    mstall_o = '0;
    books_o = 1'b0;
    head_o = '0;
    xfer_o = '0;
    macs_o = '0;
    dram_bytes_o = '0;
    unique case (cls_i)
      ember_isa_pkg::CLS_DMA_LOAD, ember_isa_pkg::CLS_DMA_STORE: begin
        // D2 (at the start): the channel is booked for X cycles from
        // max(start + head, channel free); here the duration when it is free at once.
        dur_o = 64'(td_x);
        ovf_o = o_dma;
        dram_bytes_o = 64'(bytes_);
        if (d_rows != 0) begin
          books_o = 1'b1;
          head_o = 64'(head);
          xfer_o = 64'(xfer);
        end
      end
      ember_isa_pkg::CLS_GEMM: begin
        ovf_o = o_r;
        if (steps != 0 && n2 != 0) begin
          if (reset) begin
            dur_o = 64'(g2_x);  // G2
            ovf_o = o_r || o_rn || o_rc || (g2_x >> 64) != 0;
          end else begin
            dur_o = 64'(g1_x);  // G1
            ovf_o = o_r || o_rw || o_bk || o_nb || (g1_x >> 64) != 0;
            macs_o = 64'(macs);
          end
        end
      end
      ember_isa_pkg::CLS_DEPTHWISE: begin
        ovf_o = o_r;
        if (steps != 0 && kh != 0 && kw != 0) begin
          dur_o = 64'(dw_x);  // DW1
          ovf_o = o_r || o_rn || o_rc || (dw_x >> 64) != 0;
          macs_o = 64'(macs_dw);
        end
      end
      ember_isa_pkg::CLS_VECTOR_BINARY, ember_isa_pkg::CLS_VECTOR_UNARY, ember_isa_pkg::CLS_REQUANTIZE,
      ember_isa_pkg::CLS_QUANTIZED_ADD, ember_isa_pkg::CLS_LUT: begin
        ovf_o = o_r;
        if (steps != 0) begin
          dur_o = 64'(v_x);
          mstall_o = 64'(confl);
          ovf_o = o_r || o_rw || (v_x >> 64) != 0;
        end
      end
      ember_isa_pkg::CLS_NORMALIZE:
        if (len != 0 && n1 != 0) begin
          dur_o = 64'(n_x);
          ovf_o = o_norm;
        end
      default: ;  // sync, halt (S1): issue
    endcase
  end
endmodule : ember_timing
