// The weight-stationary MAC array: MAC_ROWS x MAC_COLS int8 multipliers, int32
// accumulation in the acc SRAM, for the gemm and depthwise classes
// (docs/isa/instructions.md sections 2.3 and 2.12). A background instruction (rule E6) runs the same way while the compute
// engine goes on: the array has SRAM ports of its own (ember_npu), so the vector unit's
// instructions run beside it.
//
// gemm: one step a cycle (i0 innermost, then i1, then i2): read an act row and an acc
// row, add the array's products, write the acc row back. The weight block of i2 = 0 is
// read in the start cycle and each next one in the last step of the block before it,
// into the stationary register, which the columns read. It takes n0 * n1 * n2 cycles,
// within the contract's duration (rules G1, G2), which adds weight-load, fill and drain
// cycles this datapath does not need. reset clears acc rows. properties.overwrite: the
// steps of the i2 = 0 pass add the products to 0 instead of the acc row they read (a row
// two steps share keeps the later step's products, as in the model).
//
// depthwise: array row t takes kernel tap t = y * kw + x (act row a + y * tap_s1 + x *
// tap_s0 of the output's first row a) and column c channel c, so PE (t, c) multiplies
// tap t's lane c by weight byte t * L + c (the block read in the start cycle, as a
// gemm's, and fed to the columns transposed) and column c sums the taps. After the start,
// one cycle per tap computes its offset and its read cycle: the taps of an output are read
// in C cycles, in cycle j those whose rank among the taps of their act bank (offset modulo
// banks: the same for every output) is j * read_ports .. j * read_ports + read_ports - 1,
// so no bank gives more than read_ports rows a cycle (rule DW1). Each array row has an act
// read port and a register that takes its tap's row in its cycle; the cycle after an
// output's C cycles (the first of the next output's) adds the registers' products to its
// acc row (properties.overwrite: writes them, the acc row not read). It takes kh * kw +
// n0 * n1 * C + 1 cycles after the start, within DW1's T when issue + weight_load + fill +
// drain >= kh * kw + 2 (docs/rtl/npu.md section 5.1).
module ember_gemm (
    input  logic clk_i,
    input  logic rst_ni,
    /* verilator lint_off UNUSEDSIGNAL */  // the bus has every role; this reads its own
    input  logic [ember_npu_pkg::FIELDS_BITS-1:0] f_i,
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic bg_i,  // the instruction runs in the background (properties.background)
    input  logic ovw_i,  // its first accumulation writes the products (properties.overwrite)
    input  logic dw_i,  // the instruction is a depthwise one (else a gemm)
    output logic chk_fault_o,
    output logic [2:0] chk_kind_o,
    input  logic start_i,
    output logic busy_o,
    // One act read port per array row: port 0 a gemm's row or a depthwise output's first
    // tap, port t depthwise tap t (32 bits each).
    output logic [32*ember_isa_pkg::MAC_ROWS-1:0] act_rows_o,
    input  logic [8*ember_isa_pkg::MEM_ACT_ROW_BYTES*ember_isa_pkg::MAC_ROWS-1:0] act_i,
    output logic [31:0] wgt_row_o,
    input  logic [8*ember_isa_pkg::MEM_WEIGHT_ROW_BYTES-1:0] wgt_i,
    output logic [31:0] acc_row_o,
    input  logic [8*ember_isa_pkg::MEM_ACC_ROW_BYTES-1:0] acc_i,
    output logic acc_we_o,
    output logic [8*ember_isa_pkg::MEM_ACC_ROW_BYTES-1:0] acc_o,
    output logic bank_err_o  // simulation only: a depthwise cycle read too many rows of a bank
);
  localparam int unsigned R = ember_isa_pkg::MAC_ROWS;
  localparam int unsigned C = ember_isa_pkg::MAC_COLS;
  localparam int unsigned AB = 8 * ember_isa_pkg::MEM_ACT_ROW_BYTES;
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
  localparam int unsigned KHB = ember_isa_pkg::ROLE_KH_SIGNED || ember_isa_pkg::ROLE_KH_BITS > 64 ? 64 : ember_isa_pkg::ROLE_KH_BITS;
  localparam int unsigned KWB = ember_isa_pkg::ROLE_KW_SIGNED || ember_isa_pkg::ROLE_KW_BITS > 64 ? 64 : ember_isa_pkg::ROLE_KW_BITS;
  localparam int unsigned T0B = ember_isa_pkg::ROLE_TAP_S0_SIGNED || ember_isa_pkg::ROLE_TAP_S0_BITS > 64 ? 64 : ember_isa_pkg::ROLE_TAP_S0_BITS;
  localparam int unsigned T1B = ember_isa_pkg::ROLE_TAP_S1_SIGNED || ember_isa_pkg::ROLE_TAP_S1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_TAP_S1_BITS;
  // Row address bits of each memory (rows are a power of two): the datapath's row
  // arithmetic is modulo 2^AW, exact because the checks keep every row in range (and
  // ember_npu uses the low AW bits of a row output only).
  localparam int unsigned XAW = ember_isa_pkg::MEM_ACT_ROWS > 1 ? $clog2(ember_isa_pkg::MEM_ACT_ROWS) : 1;
  localparam int unsigned CAW = ember_isa_pkg::MEM_ACC_ROWS > 1 ? $clog2(ember_isa_pkg::MEM_ACC_ROWS) : 1;
  localparam int unsigned WAW = ember_isa_pkg::MEM_WEIGHT_ROWS > 1 ? $clog2(ember_isa_pkg::MEM_WEIGHT_ROWS) : 1;
  // The operand checks' last rows, exact: base + (n0 - 1) * s0 + (n1 - 1) * s1 + (n2 - 1) *
  // s2, and for act + (kh - 1) * tap_s1 + (kw - 1) * tap_s0 (a field an instruction lacks
  // is 0 on the bus, so a gemm's tap terms and a depthwise one's n2 terms are 0, but for
  // its acc walk, whose n2 - 1 is masked).
  localparam int unsigned WX0 = (N0B + X0B > N1B + X1B ? N0B + X0B : N1B + X1B);
  localparam int unsigned WX1 = (N2B + X2B > XAB ? N2B + X2B : XAB);
  localparam int unsigned WX2 = (KHB + T1B > KWB + T0B ? KHB + T1B : KWB + T0B);
  localparam int unsigned WX3 = (WX0 > WX1 ? WX0 : WX1);
  localparam int unsigned WX = (WX3 > WX2 ? WX3 : WX2) + 3;
  localparam int unsigned WC0 = (N0B + C0B > N1B + C1B ? N0B + C0B : N1B + C1B);
  localparam int unsigned WC1 = (N2B + C2B > CAB ? N2B + C2B : CAB);
  localparam int unsigned WC = (WC0 > WC1 ? WC0 : WC1) + 2;
  localparam int unsigned WW = (N2B + W2B > WAB ? N2B + W2B : WAB) + 1;
  // ... compared with a row count (at most 2^32) in at least 33 bits.
  localparam int unsigned KX = WX > 33 ? WX : 33;
  localparam int unsigned KC = WC > 33 ? WC : 33;
  localparam int unsigned KW = WW > 33 ? WW : 33;
  localparam int unsigned KTB = KHB + KWB;  // kh * kw
  // Depthwise: the act banks (a power of two), read ports, and the tap schedule's sizes.
  localparam int unsigned NB = ember_isa_pkg::MEM_ACT_BANKS > 1 ? ember_isa_pkg::MEM_ACT_BANKS : 1;
  localparam int unsigned AM = NB > 1 ? $clog2(NB) : 1;
  localparam int unsigned NP = ember_isa_pkg::MEM_ACT_READ_PORTS > 1 ? ember_isa_pkg::MEM_ACT_READ_PORTS : 1;
  localparam int unsigned TB = $clog2(R + 1);  // a tap index or count, 0..R

  // a + b modulo 2^XAW as a ripple-carry adder: the depthwise tap rows take MAC_ROWS - 1
  // of these, and Yosys' generic adder is about twice as many cells.
  function automatic logic [XAW-1:0] ripple(input logic [XAW-1:0] a, input logic [XAW-1:0] b);
    logic c;
    c = 1'b0;
    for (int i = 0; i < XAW; i++) begin
      ripple[i] = a[i] ^ b[i] ^ c;
      c = (a[i] ^ b[i]) ? c : a[i];
    end
  endfunction
  // A field's low bits (row arithmetic modulo 2^AW; a narrower role zero-extended).
  function automatic logic [63:0] fld(input int unsigned r);
    fld = f_i[64*r +: 64];
  endfunction

  logic [N0B-1:0] n0, n0m1;
  logic [N1B-1:0] n1, n1m1;
  logic [N2B-1:0] n2, n2m1;
  logic [KHB-1:0] kh, khm1;
  logic [KWB-1:0] kw, kwm1;
  logic [KTB-1:0] taps;
  logic reset;
  logic [WX-1:0] last_act;
  logic [WC-1:0] last_acc;
  logic [WW-1:0] last_wgt;
  always_comb begin
    n0 = f_i[64*ember_npu_pkg::R_N0 +: N0B];
    n1 = f_i[64*ember_npu_pkg::R_N1 +: N1B];
    n2 = f_i[64*ember_npu_pkg::R_N2 +: N2B];
    kh = f_i[64*ember_npu_pkg::R_KH +: KHB];
    kw = f_i[64*ember_npu_pkg::R_KW +: KWB];
    n0m1 = n0 - N0B'(1);
    n1m1 = n1 - N1B'(1);
    n2m1 = dw_i ? '0 : n2 - N2B'(1);
    khm1 = kh - KHB'(1);
    kwm1 = kw - KWB'(1);
    taps = KTB'(kh) * KTB'(kw);
    reset = f_i[64*ember_npu_pkg::R_RESET +: RSB] != 0;
    last_act = WX'(f_i[64*ember_npu_pkg::R_ACT_ADDR +: XAB]) + WX'(n0m1) * WX'(f_i[64*ember_npu_pkg::R_ACT_S0 +: X0B])
             + WX'(n1m1) * WX'(f_i[64*ember_npu_pkg::R_ACT_S1 +: X1B])
             + (dw_i ? WX'(khm1) * WX'(f_i[64*ember_npu_pkg::R_TAP_S1 +: T1B])
                     : WX'(n2m1) * WX'(f_i[64*ember_npu_pkg::R_ACT_S2 +: X2B]))
             + WX'(kwm1) * WX'(f_i[64*ember_npu_pkg::R_TAP_S0 +: T0B]);
    last_acc = WC'(f_i[64*ember_npu_pkg::R_ACC_ADDR +: CAB]) + WC'(n0m1) * WC'(f_i[64*ember_npu_pkg::R_ACC_S0 +: C0B])
             + WC'(n1m1) * WC'(f_i[64*ember_npu_pkg::R_ACC_S1 +: C1B]) + WC'(n2m1) * WC'(f_i[64*ember_npu_pkg::R_ACC_S2 +: C2B]);
    last_wgt = WW'(f_i[64*ember_npu_pkg::R_WGT_ADDR +: WAB]) + WW'(n2m1) * WW'(f_i[64*ember_npu_pkg::R_WGT_S2 +: W2B]);
  end

  // Operand checks (Machine::gemm and Machine::depthwise order: a background
  // instruction's push flags (rule E6: its data is not complete when it retires); then a
  // gemm's acc, then act and weight unless reset; a depthwise one's taps (at most the
  // array's rows), acc, act, weight). The model's last rows saturate at 2^64 - 1, which
  // compares with a row count as the exact value does.
  logic work;  // the loops are not empty
  assign work = n0 != 0 && n1 != 0 && (dw_i ? kh != 0 && kw != 0 : n2 != 0);
  always_comb begin
    chk_fault_o = 1'b0;
    chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
    if (bg_i && (f_i[64*ember_npu_pkg::R_PUSH_PREV +: ember_isa_pkg::ROLE_PUSH_PREV_BITS] != 0
                 || f_i[64*ember_npu_pkg::R_PUSH_NEXT +: ember_isa_pkg::ROLE_PUSH_NEXT_BITS] != 0)) begin
      chk_fault_o = 1'b1;
      chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    end else if (work) begin
      if (dw_i && 64'(taps) > 64'(R)) begin
        chk_fault_o = 1'b1;
        chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
      end else if (KC'(last_acc) >= KC'(64'(ember_isa_pkg::MEM_ACC_ROWS)))
        chk_fault_o = 1'b1;
      else if ((dw_i || !reset) && (KX'(last_act) >= KX'(64'(ember_isa_pkg::MEM_ACT_ROWS))
                                    || KW'(last_wgt) >= KW'(64'(ember_isa_pkg::MEM_WEIGHT_ROWS))))
        chk_fault_o = 1'b1;
    end
  end

  // ---- Loops and rows ----
  // The current act and acc rows and the bases of their line and block, updated by adding
  // a stride (the rows base + i0 * s0 + i1 * s1 + i2 * s2 modulo 2^AW).
  logic active_q, reset_q, dw_q, ovw_q;
  logic [N0B-1:0] n0_q, i0_q;
  logic [N1B-1:0] n1_q, i1_q;
  logic [N2B-1:0] n2_q, i2_q;
  logic [XAW-1:0] xa_q, xl1_q, xl2_q, xs0_q, xs1_q, xs2_q;
  logic [CAW-1:0] ca_q, cl1_q, cl2_q, cs0_q, cs1_q, cs2_q;
  logic [WAW-1:0] wn_q, ws2_q;
  logic [8*ember_isa_pkg::MEM_WEIGHT_ROW_BYTES-1:0] wreg_q;
  // Depthwise: the schedule phase (one tap a cycle: tap t_q of row offset roff_q, at
  // column x_q and offset off_q), the streaming phase (cycle j_q of an output), a pending
  // MAC.
  logic sched_q, stream_q, mac_q;
  logic [CAW-1:0] dacc_q;  // the acc row of the pending MAC
  logic [TB-1:0] t_q, ntap_q, cmax_q, j_q;
  logic [KWB-1:0] kw_q, x_q;
  logic [XAW-1:0] ts0_q, ts1_q, off_q, roff_q;
  logic [XAW-1:0] toff_q[R];  // tap t's row offset
  logic [TB-1:0] tcyc_q[R];   // the cycle of an output in which tap t is read
  logic [R-1:0] tapv_q;       // tap t exists
  logic [TB-1:0] bcnt_q[NB];  // taps scheduled so far per bank (offset modulo banks)
  logic [AB-1:0] areg_q[R];   // tap t's act row of the output being read

  // One step of the loop nest (a gemm step, a depthwise output).
  logic step, l0, l1, l2;
  assign l0 = i0_q + N0B'(1) >= n0_q;
  assign l1 = i1_q + N1B'(1) >= n1_q;
  assign l2 = i2_q + N2B'(1) >= n2_q;
  assign step = active_q && (!dw_q || (stream_q && j_q + TB'(1) >= cmax_q));
  logic [XAW-1:0] xa_d, xl1_d;
  logic [CAW-1:0] ca_d, cl1_d;
  always_comb begin
    xl1_d = xl1_q;
    cl1_d = cl1_q;
    if (!l0) begin
      xa_d = xa_q + xs0_q;
      ca_d = ca_q + cs0_q;
    end else begin
      xl1_d = !l1 ? xl1_q + xs1_q : xl2_q + xs2_q;
      cl1_d = !l1 ? cl1_q + cs1_q : cl2_q + cs2_q;
      xa_d = xl1_d;
      ca_d = cl1_d;
    end
  end
  assign busy_o = active_q || mac_q;
  // Port 0 reads the current act row (tap 0's offset is 0), port t tap t's; ports 1 and
  // up only in a depthwise instruction (row 0 otherwise: a gemm reads port 0 alone, and a
  // simulator skips the tap adders).
  always_comb begin
    act_rows_o = '0;
    act_rows_o[0 +: 32] = 32'(xa_q);
    if (dw_q)
      for (int t = 1; t < R; t++) act_rows_o[32*t +: 32] = 32'(ripple(xa_q, toff_q[t]));
  end
  assign acc_row_o = 32'(CAW'(dw_q ? dacc_q : ca_q));
  // The weight block: the instruction's first in the start cycle (the engine holds it,
  // the array is idle), the next one of a gemm in the last step of a block.
  assign wgt_row_o = 32'(WAW'(active_q ? wn_q : WAW'(fld(ember_npu_pkg::R_WGT_ADDR))));
  logic wload;
  assign wload = start_i || (active_q && !dw_q && l0 && l1 && !l2);

  // ---- The depthwise schedule: tap t_q's bank, rank and read cycle ----
  logic [AM-1:0] bank;
  logic [TB-1:0] rank, tcyc;
  assign bank = AM'(off_q) & AM'(NB - 1);
  assign rank = bcnt_q[bank];
  assign tcyc = NP == 1 ? rank : TB'(rank / TB'(NP));
  logic [R-1:0] tload;  // tap t's act row is read this cycle
  always_comb
    for (int t = 0; t < R; t++) tload[t] = stream_q && tapv_q[t] && tcyc_q[t] == j_q;

  // properties.overwrite: the columns add the products to 0, not to the acc row, in a
  // gemm's i2 = 0 pass (i2_q stays 0 through a depthwise instruction: every output).
  logic acc0;
  assign acc0 = ovw_q && i2_q == '0;

  // ---- The array ----
  // gemm: output channel k sums act lane c times W[k][c] (weight byte k * R + c), the act
  // row from port 0. depthwise: column c sums over rows t tap t's lane c (its register)
  // times weight byte t * C + c.
  for (genvar k = 0; k < C; k++) begin : g_col
    logic [8*R-1:0] xin, win;
    // (The same muxes as a per-byte `dw_q ? ... : ...`; a gemm's operands are whole
    // slices, which a simulator copies word by word.)
    always_comb
      if (dw_q)
        for (int t = 0; t < R; t++) begin
          xin[8*t +: 8] = areg_q[t][8*k +: 8];
          win[8*t +: 8] = wreg_q[8*(t*C + k) +: 8];
        end
      else begin
        xin = act_i[0 +: 8*R];
        win = wreg_q[8*k*R +: 8*R];
      end
    // Cleared also when no acc row is written (acc_o is read only with acc_we_o): the
    // same value where it matters, and a simulator skips the products.
    ember_mac_column u_col (
        .act_i(xin), .wgt_i(win), .acc_i(acc0 ? 32'd0 : acc_i[32*k +: 32]),
        .clear_i((reset_q && !dw_q) || !acc_we_o), .acc_o(acc_o[32*k +: 32]));
  end
  assign acc_we_o = dw_q ? mac_q : active_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q <= 1'b0;
      reset_q <= 1'b0;
      dw_q <= 1'b0;
      ovw_q <= 1'b0;
      {n0_q, n1_q, n2_q, i0_q, i1_q, i2_q} <= '0;
      {xa_q, xl1_q, xl2_q, xs0_q, xs1_q, xs2_q, ca_q, cl1_q, cl2_q, cs0_q, cs1_q, cs2_q} <= '0;
      {wn_q, ws2_q} <= '0;
      wreg_q <= '0;
      {sched_q, stream_q, mac_q} <= '0;
      dacc_q <= '0;
      {t_q, ntap_q, cmax_q, j_q} <= '0;
      {kw_q, x_q, ts0_q, ts1_q, off_q, roff_q} <= '0;
    end else begin
      if (wload) wreg_q <= wgt_i;
      mac_q <= dw_q && step;
      if (step) dacc_q <= ca_q;
      if (start_i) begin
        active_q <= work;
        reset_q <= reset;
        dw_q <= dw_i;
        ovw_q <= ovw_i;
        n0_q <= n0; n1_q <= n1; n2_q <= dw_i ? N2B'(1) : n2;
        {i0_q, i1_q, i2_q} <= '0;
        xa_q <= XAW'(fld(ember_npu_pkg::R_ACT_ADDR));
        xl1_q <= XAW'(fld(ember_npu_pkg::R_ACT_ADDR));
        xl2_q <= XAW'(fld(ember_npu_pkg::R_ACT_ADDR));
        xs0_q <= XAW'(fld(ember_npu_pkg::R_ACT_S0)); xs1_q <= XAW'(fld(ember_npu_pkg::R_ACT_S1));
        xs2_q <= XAW'(fld(ember_npu_pkg::R_ACT_S2));
        ca_q <= CAW'(fld(ember_npu_pkg::R_ACC_ADDR));
        cl1_q <= CAW'(fld(ember_npu_pkg::R_ACC_ADDR));
        cl2_q <= CAW'(fld(ember_npu_pkg::R_ACC_ADDR));
        cs0_q <= CAW'(fld(ember_npu_pkg::R_ACC_S0)); cs1_q <= CAW'(fld(ember_npu_pkg::R_ACC_S1));
        cs2_q <= CAW'(fld(ember_npu_pkg::R_ACC_S2));
        wn_q <= WAW'(fld(ember_npu_pkg::R_WGT_ADDR)) + WAW'(fld(ember_npu_pkg::R_WGT_S2));
        ws2_q <= WAW'(fld(ember_npu_pkg::R_WGT_S2));
        sched_q <= dw_i && work;
        stream_q <= 1'b0;
        {t_q, cmax_q, j_q} <= '0;
        ntap_q <= TB'(taps);
        kw_q <= kw; x_q <= '0;
        ts0_q <= XAW'(fld(ember_npu_pkg::R_TAP_S0)); ts1_q <= XAW'(fld(ember_npu_pkg::R_TAP_S1));
        off_q <= '0; roff_q <= '0;
      end else if (sched_q) begin
        // Tap t_q: its offset and read cycle (below); then the next tap's offset.
        if (tcyc + TB'(1) > cmax_q) cmax_q <= tcyc + TB'(1);
        t_q <= t_q + TB'(1);
        if (x_q + KWB'(1) < kw_q) begin
          x_q <= x_q + KWB'(1);
          off_q <= off_q + ts0_q;
        end else begin
          x_q <= '0;
          roff_q <= roff_q + ts1_q;
          off_q <= roff_q + ts1_q;
        end
        if (t_q + TB'(1) >= ntap_q) begin
          sched_q <= 1'b0;
          stream_q <= 1'b1;
        end
      end else if (step) begin
        j_q <= '0;
        xa_q <= xa_d; xl1_q <= xl1_d; ca_q <= ca_d; cl1_q <= cl1_d;
        if (!l0) i0_q <= i0_q + N0B'(1);
        else begin
          i0_q <= '0;
          if (!l1) i1_q <= i1_q + N1B'(1);
          else begin
            i1_q <= '0;
            if (!l2) begin
              i2_q <= i2_q + N2B'(1);
              xl2_q <= xl2_q + xs2_q;
              cl2_q <= cl2_q + cs2_q;
              wn_q <= wn_q + ws2_q;
            end else begin
              active_q <= 1'b0;
              stream_q <= 1'b0;
            end
          end
        end
      end else if (stream_q) begin
        j_q <= j_q + TB'(1);
      end
    end
  end

  // The schedule's per-tap and per-bank registers (no reset: each instruction sets the
  // ones it uses before it reads them; the tap flags and bank counts are cleared at its
  // start) and the rows' act registers (cleared at the start, so a row without a tap
  // adds 0).
  always_ff @(posedge clk_i) begin
    for (int t = 0; t < R; t++) begin
      if (start_i) tapv_q[t] <= 1'b0;
      else if (sched_q && t_q == TB'(t)) tapv_q[t] <= 1'b1;
      if (sched_q && t_q == TB'(t)) begin
        toff_q[t] <= off_q;
        tcyc_q[t] <= tcyc;
      end
      if (start_i) areg_q[t] <= '0;
      else if (tload[t]) areg_q[t] <= act_i[AB*t +: AB];
    end
    for (int b = 0; b < NB; b++)
      if (start_i) bcnt_q[b] <= '0;
      else if (sched_q && bank == AM'(b)) bcnt_q[b] <= rank + TB'(1);
  end

  // Self-check (simulation only, not synthesized): no cycle reads more than read_ports
  // rows of one act bank (rule DW1's model), whatever the act base.
`ifndef SYNTHESIS
  always_comb begin
    int n;
    n = 0;
    bank_err_o = 1'b0;
    if (stream_q)  // tload is 0 outside the streaming phase
      for (int b = 0; b < NB; b++) begin
        n = 0;
        for (int t = 0; t < R; t++)
          if (tload[t] && (AM'(act_rows_o[32*t +: 32]) & AM'(NB - 1)) == AM'(b)) n = n + 1;
        if (n > int'(NP)) bank_err_o = 1'b1;
      end
  end
`else
  assign bank_err_o = 1'b0;
`endif
endmodule : ember_gemm
