// The normalize unit: softmax and lnorm (docs/isa/instructions.md section 2.11), line by line, the
// same arithmetic as simulator/src/Normalize.cpp (n0 here is the len role: codes a line).
// Its operand checks (chk_fault_o) are combinational on the held instruction; started by
// the compute engine when they pass, it reads the parameter block's rows p and p + 1 in
// the start cycle and holds them. Per line:
//   softmax:   MAX (one cycle a row: the masked largest code m), SUM (one cycle a code:
//              sum += clamp(T[m - x], 0, 2^16), one acc row read);
//   layernorm: SUM (one cycle a code: U += u, Q2 += u^2 on the shared multiplier), then
//              floor(V / n0) = n0 * Q2 - U^2 (V = n0 * (n0 * Q2 - U^2) exactly, so no
//              division), D = that + clamp(E, 0, 2^60) (W1, W2), k by shifting D two bits
//              a cycle until D >= 2^60 (NORM), r = isqrt(D * 4^k) two bits a cycle (SQRT);
// then per row: LOAD (one cycle a code: the code's dividend into its lane's divider:
// softmax e * 2^16 over sum, layernorm |c| * 2^(k+16) + floor(r / 2) over r with
// c = n0 * u - U on the shared multiplier), DIV (25 restoring steps in every lane at
// once: each quotient is below 2^25), RQ (one cycle a code: rq() on the shared lane's
// multiplier and requantization, the code's M, S, B rows read from acc), WR (the row,
// padding lanes from n0 mod L on written saturate_int8(min(max(zp_y, lo), hi))).
// The shared lane is lane 0 of the vector unit (idle during a normalize): 32 x 32 signed
// bits through mul_a_o, mul_b_o, product on mul_p_i; its requantization through rq_*.
// Cycles a line: softmax 3 * n0 + 27 * R, layernorm at most 3 * n0 + 26 * R + 64.
module ember_norm (
    input  logic clk_i,
    input  logic rst_ni,
    /* verilator lint_off UNUSEDSIGNAL */  // the bus has every role; this reads its own
    input  logic [ember_npu_pkg::FIELDS_BITS-1:0] f_i,
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic [ember_isa_pkg::VOP_BITS-1:0] op_i,
    // The operand checks of Machine::normalize on the held instruction, in its order.
    output logic chk_fault_o,
    output logic [2:0] chk_kind_o,
    input  logic start_i,
    output logic busy_o,
    // act: the source row read, the destination row written.
    output logic [31:0] src_row_o,
    input  logic [8*ember_isa_pkg::MEM_ACT_ROW_BYTES-1:0] act_i,
    output logic we_o,
    output logic [31:0] dst_row_o,
    output logic [8*ember_isa_pkg::MEM_ACT_ROW_BYTES-1:0] act_o,
    // acc: three rows read (start: p and p + 1; softmax's table row; layernorm's M, S, B).
    output logic [31:0] acc0_row_o,
    output logic [31:0] acc1_row_o,
    output logic [31:0] acc2_row_o,
    input  logic [8*ember_isa_pkg::MEM_ACC_ROW_BYTES-1:0] acc0_i,
    input  logic [8*ember_isa_pkg::MEM_ACC_ROW_BYTES-1:0] acc1_i,
    input  logic [8*ember_isa_pkg::MEM_ACC_ROW_BYTES-1:0] acc2_i,
    // The shared multiplier.
    output logic mul_en_o,
    output logic [31:0] mul_a_o,
    output logic [31:0] mul_b_o,
    input  logic [63:0] mul_p_i,
    // rq() of the current code on the same lane's requantization (rq_o: the lane
    // requantizes the product mul_a_o * mul_b_o by rq_s_o, adds rq_z_o, bounds it by
    // rq_lo_o, rq_hi_o as requantize does and saturates it to int8: rq_y_i).
    output logic rq_o,
    output logic [5:0] rq_s_o,
    output logic signed [32:0] rq_z_o,
    output logic signed [31:0] rq_lo_o,
    output logic signed [31:0] rq_hi_o,
    input  logic [7:0] rq_y_i
);
  localparam int unsigned L = ember_isa_pkg::VECTOR_LANES;
  localparam int unsigned LG = L > 1 ? $clog2(L) : 1;
  localparam int unsigned XAW = ember_isa_pkg::MEM_ACT_ROWS > 1 ? $clog2(ember_isa_pkg::MEM_ACT_ROWS) : 1;
  localparam int unsigned CAW = ember_isa_pkg::MEM_ACC_ROWS > 1 ? $clog2(ember_isa_pkg::MEM_ACC_ROWS) : 1;
  // Field roles as unsigned quantities (a signed role: its 64-bit sign-extended value).
  localparam int unsigned LNB = ember_isa_pkg::ROLE_LEN_SIGNED || ember_isa_pkg::ROLE_LEN_BITS > 64 ? 64 : ember_isa_pkg::ROLE_LEN_BITS;
  localparam int unsigned N1B = ember_isa_pkg::ROLE_N1_SIGNED || ember_isa_pkg::ROLE_N1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_N1_BITS;
  localparam int unsigned DAB = ember_isa_pkg::ROLE_DST_ADDR_SIGNED || ember_isa_pkg::ROLE_DST_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_DST_ADDR_BITS;
  localparam int unsigned DBB = ember_isa_pkg::ROLE_DST_SB_SIGNED || ember_isa_pkg::ROLE_DST_SB_BITS > 64 ? 64 : ember_isa_pkg::ROLE_DST_SB_BITS;
  localparam int unsigned D1B = ember_isa_pkg::ROLE_DST_S1_SIGNED || ember_isa_pkg::ROLE_DST_S1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_DST_S1_BITS;
  localparam int unsigned SAB = ember_isa_pkg::ROLE_SRC_ADDR_SIGNED || ember_isa_pkg::ROLE_SRC_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC_ADDR_BITS;
  localparam int unsigned SBB = ember_isa_pkg::ROLE_SRC_SB_SIGNED || ember_isa_pkg::ROLE_SRC_SB_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC_SB_BITS;
  localparam int unsigned S1B = ember_isa_pkg::ROLE_SRC_S1_SIGNED || ember_isa_pkg::ROLE_SRC_S1_BITS > 64 ? 64 : ember_isa_pkg::ROLE_SRC_S1_BITS;
  localparam int unsigned PAB = ember_isa_pkg::ROLE_BLOCK_ADDR_SIGNED || ember_isa_pkg::ROLE_BLOCK_ADDR_BITS > 64 ? 64 : ember_isa_pkg::ROLE_BLOCK_ADDR_BITS;
  // Codes a line: len <= 16384 when it starts (the operand check).
  localparam int unsigned NB = 15;
  localparam int unsigned W = 57;  // a divider: remainder [56:25], quotient [24:0]

  // ---- Operand checks (Machine::normalize, in its order): len > 16384 (bad operand);
  // the last dst or src row beyond act, the parameter block's last row beyond acc (SRAM
  // range). Exact in WC bits: len <= 16384 where the rows are compared, so R - 1 =
  // (len - 1) div L has LCB - LGL bits (the model's saturating sums compare as these).
  function automatic int unsigned mx(input int unsigned a, input int unsigned b);
    mx = a > b ? a : b;
  endfunction
  localparam int unsigned LGL = L > 1 ? $clog2(L) : 0;
  localparam int unsigned LCB = LNB < NB ? LNB : NB;
  localparam int unsigned RB = LCB > LGL ? LCB - LGL : 1;
  localparam int unsigned TROWS = (256 + L - 1) / L;
  localparam int unsigned WC = mx(mx(mx(DAB, SAB), PAB), mx(RB + mx(DBB, SBB), N1B + mx(D1B, S1B))) + 3;
  localparam int unsigned KC = WC > 33 ? WC : 33;
  logic [LNB-1:0] lenf;
  logic [N1B-1:0] n1f, n1m1;
  logic [RB-1:0] rm1;
  logic [KC-1:0] dlast, slast, plast;
  assign lenf = f_i[64*ember_npu_pkg::R_LEN +: LNB];
  assign n1f = f_i[64*ember_npu_pkg::R_N1 +: N1B];
  assign n1m1 = n1f - N1B'(1);
  assign rm1 = RB'((LCB'(lenf) - LCB'(1)) >> LGL);
  assign dlast = KC'(f_i[64*ember_npu_pkg::R_DST_ADDR +: DAB])
               + KC'(rm1) * KC'(f_i[64*ember_npu_pkg::R_DST_SB +: DBB])
               + KC'(n1m1) * KC'(f_i[64*ember_npu_pkg::R_DST_S1 +: D1B]);
  assign slast = KC'(f_i[64*ember_npu_pkg::R_SRC_ADDR +: SAB])
               + KC'(rm1) * KC'(f_i[64*ember_npu_pkg::R_SRC_SB +: SBB])
               + KC'(n1m1) * KC'(f_i[64*ember_npu_pkg::R_SRC_S1 +: S1B]);
  assign plast = KC'(f_i[64*ember_npu_pkg::R_BLOCK_ADDR +: PAB]) + KC'(1)
               + (op_i == ember_isa_pkg::VOP_SOFTMAX ? KC'(TROWS) : KC'(3) * (KC'(rm1) + KC'(1)));
  always_comb begin
    chk_fault_o = 1'b1;
    chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
    if (lenf == 0 || n1f == 0) chk_fault_o = 1'b0;
    else if (64'(lenf) > 64'd16384) chk_kind_o = ember_npu_pkg::FK_BAD_OPERAND;
    else if (dlast >= KC'(64'(ember_isa_pkg::MEM_ACT_ROWS)) || slast >= KC'(64'(ember_isa_pkg::MEM_ACT_ROWS))
             || plast >= KC'(64'(ember_isa_pkg::MEM_ACC_ROWS)))
      chk_kind_o = ember_npu_pkg::FK_SRAM_RANGE;
    else chk_fault_o = 1'b0;
  end

  typedef enum logic [3:0] {IDLE, MAX, SUM, W1, W2, NORM, SQRT, LOAD, DIV, RQ, WR} state_e;
  state_e st_q;

  // ---- Held instruction ----
  logic sm_q;
  logic [NB-1:0] n0_q;
  logic [N1B-1:0] n1_q, j_q;
  logic [XAW-1:0] ss0_q, ss1_q, ds0_q, ds1_q, sline_q, dline_q, srow_q, drow_q;
  logic [CAW-1:0] p_q, crow_q;
  logic signed [7:0] zx_q;
  logic signed [31:0] zpy_q, lo_q, hi_q, p0_q, p1_q;  // lo_q: min(lo, hi)
  logic [7:0] pad_q;
  // ---- Line and row state ----
  logic [NB-1:0] rem_q;  // codes of the line from the current row on
  logic [LG-1:0] l_q;    // the current code's lane
  logic signed [7:0] mx_q;
  logic [30:0] sum_q;      // softmax: sum <= n0 * 2^16 <= 2^30
  logic signed [23:0] u_q; // layernorm: U, |U| <= 255 * 16384
  logic [30:0] q2_q;       // layernorm: sum of u^2 < 2^30
  logic [61:0] d_q;        // D (< 2^61), shifted by the normalization and the square root
  logic [5:0] k_q;
  logic [32:0] srem_q;     // the square root's remainder (<= 2r)
  logic [30:0] root_q;     // r (< 2^31)
  logic [30:0] dv_q;       // the divisor: softmax's sum, layernorm's r
  logic [4:0] it_q;
  logic [W*L-1:0] dw_q;
  logic [L-1:0] neg_q;
  logic [8*L-1:0] out_q;

  assign busy_o = st_q != IDLE;

  // ---- Start: the instruction's fields and the parameter rows p, p + 1 ----
  logic [CAW-1:0] pf;
  assign pf = CAW'(f_i[64*ember_npu_pkg::R_BLOCK_ADDR +: 64]);
  logic [LG:0] nv;  // codes in the current row (at most L)
  logic last_code, last_row;
  assign last_row = rem_q <= NB'(L);
  assign nv = last_row ? rem_q[LG:0] : (LG + 1)'(L);
  assign last_code = (LG + 1)'(l_q) + (LG + 1)'(1) == nv;

  // The current code and its table entry (softmax).
  logic signed [7:0] x;
  logic [7:0] dd;
  logic signed [31:0] tv;
  logic [16:0] e;
  assign x = $signed(act_i[8*l_q +: 8]);
  assign dd = 8'(mx_q - x);
  assign tv = $signed(acc0_i[32*(dd[LG-1:0]) +: 32]);
  assign e = tv < 0 ? 17'd0 : tv > 32'sd65536 ? 17'd65536 : 17'(tv);
  // Layernorm: u = x - sext8(zp_x), c = n0 * u - U.
  logic signed [9:0] u;
  logic signed [24:0] c;
  logic [23:0] ca;
  assign u = 10'(x) - 10'(zx_q);
  assign c = 25'($signed(mul_p_i)) - 25'(u_q);
  assign ca = c < 0 ? 24'(-c) : 24'(c);
  // The dividend of the current code: softmax e * 2^16, layernorm |c| * 2^(k+16) + r/2.
  logic [W-1:0] nd;
  logic [30:0] half;
  assign half = root_q >> 1;
  assign nd = sm_q ? W'(e) << 16 : (W'(ca) << (k_q + 6'd16)) + W'(half);
  // Softmax: the masked largest code of the row.
  logic signed [7:0] rmax;
  always_comb begin
    rmax = -8'sd128;
    for (int j = 0; j < L; j++)
      if ((LG + 1)'(j) < nv && $signed(act_i[8*j +: 8]) > rmax) rmax = $signed(act_i[8*j +: 8]);
  end
  // rq(t, M, S, z) of the current code, s = clamp(S, 1, 62), on the vector lane (rq_o):
  // the model's min(max(y, lo), hi) is requantize's bound with lo replaced by
  // min(lo, hi) (hi when lo > hi; lo_q holds it).
  logic signed [31:0] rm, rs;
  logic signed [25:0] t;
  logic [24:0] qv;
  logic nq;
  always_comb begin
    qv = '0;
    nq = 1'b0;
    for (int j = 0; j < L; j++)
      if (l_q == LG'(j)) begin
        qv = dw_q[W*j +: 25];
        nq = neg_q[j];
      end
  end
  logic signed [25:0] tq;
  assign tq = $signed({1'b0, qv});
  assign t = dv_q == 0 ? 26'sd0 : nq ? -tq : tq;
  assign rm = sm_q ? p0_q : $signed(acc0_i[32*l_q +: 32]);
  assign rs = sm_q ? p1_q : $signed(acc1_i[32*l_q +: 32]);
  assign rq_o = st_q == RQ;
  assign rq_z_o = sm_q ? 33'(zpy_q) : 33'($signed(acc2_i[32*l_q +: 32])) + 33'(zpy_q);
  assign rq_s_o = rs < 1 ? 6'd1 : rs > 62 ? 6'd62 : 6'(rs);
  assign rq_lo_o = lo_q;
  assign rq_hi_o = hi_q;
  logic unused_w;  // the products used here are below 2^62 in magnitude
  assign unused_w = ^mul_p_i[63:62];

  // The shared multiplier's operands.
  always_comb begin
    mul_en_o = 1'b1;
    mul_a_o = '0;
    mul_b_o = '0;
    unique case (st_q)
      SUM: begin mul_a_o = 32'(u); mul_b_o = 32'(u); end
      W1: begin mul_a_o = 32'(n0_q); mul_b_o = 32'(q2_q); end
      W2: begin mul_a_o = 32'(u_q); mul_b_o = 32'(u_q); end
      LOAD: begin mul_a_o = 32'(n0_q); mul_b_o = 32'(u); end
      RQ: begin mul_a_o = 32'(t); mul_b_o = rm; end
      default: mul_en_o = 1'b0;
    endcase
  end

  // SRAM rows (modulo the acc rows: the check keeps them in range).
  logic [CAW-1:0] c1, c2, pf1, trow;
  logic [7:0] dhi;
  assign c1 = crow_q + CAW'(1);
  assign c2 = crow_q + CAW'(2);
  assign pf1 = pf + CAW'(1);
  assign dhi = dd >> LG;
  assign trow = p_q + CAW'(2) + CAW'(dhi);
  always_comb begin
    src_row_o = 32'(srow_q);
    dst_row_o = 32'(drow_q);
    acc0_row_o = 32'(crow_q);
    acc1_row_o = 32'(c1);
    acc2_row_o = 32'(c2);
    if (start_i) begin
      acc0_row_o = 32'(pf);
      acc1_row_o = 32'(pf1);
    end else if (sm_q) acc0_row_o = 32'(trow);
    we_o = st_q == WR;
    for (int j = 0; j < L; j++) act_o[8*j +: 8] = (LG + 1)'(j) < nv ? out_q[8*j +: 8] : pad_q;
  end

  // The lanes' dividers (a restoring step in every lane in DIV; LOAD writes the current
  // code's lane) and the output row (RQ writes the current code's byte).
  logic [W*L-1:0] dw_d;
  logic [L-1:0] neg_d;
  logic [8*L-1:0] out_d;
  always_comb begin
    dw_d = dw_q;
    neg_d = neg_q;
    out_d = out_q;
    for (int j = 0; j < L; j++) begin
      logic [32:0] sh, df;
      sh = {1'b0, dw_q[W*j+24 +: 32]};
      df = sh - 33'(dv_q);
      if (st_q == DIV)
        dw_d[W*j +: W] = df[32] ? {sh[31:0], dw_q[W*j +: 24], 1'b0} : {df[31:0], dw_q[W*j +: 24], 1'b1};
      else if (st_q == LOAD && l_q == LG'(j)) begin
        dw_d[W*j +: W] = nd;
        neg_d[j] = !sm_q && c < 0;
      end
      if (st_q == RQ && l_q == LG'(j)) out_d[8*j +: 8] = rq_y_i;
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) {dw_q, neg_q, out_q} <= '0;
    else {dw_q, neg_q, out_q} <= {dw_d, neg_d, out_d};
  end

  // The square root's step: two bits of D a cycle.
  logic [34:0] sr_x;
  logic [32:0] sr_t;
  assign sr_x = {srem_q[32:0], d_q[61:60]};
  assign sr_t = {root_q, 2'b01};
  // D = n0 * Q2 - U^2 + clamp(E, 0, 2^60).
  logic signed [63:0] eps;
  logic [61:0] epc;
  assign eps = {p1_q, p0_q};
  assign epc = eps < 0 ? '0 : eps > 64'sd1152921504606846976 ? 62'd1152921504606846976 : 62'(eps);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q <= IDLE;
      {sm_q, n0_q, n1_q, j_q} <= '0;
      {ss0_q, ss1_q, ds0_q, ds1_q, sline_q, dline_q, srow_q, drow_q} <= '0;
      {p_q, crow_q, zx_q, zpy_q, lo_q, hi_q, p0_q, p1_q, pad_q} <= '0;
      {rem_q, l_q, mx_q, sum_q, u_q, q2_q, d_q, k_q, srem_q, root_q, dv_q, it_q} <= '0;
    end else if (start_i) begin
      logic softmax;
      logic signed [31:0] zp, lo, hi, pc;
      softmax = op_i == ember_isa_pkg::VOP_SOFTMAX;
      zp = $signed(acc0_i[32 +: 32]);
      lo = $signed(acc0_i[64 +: 32]);
      hi = $signed(acc0_i[96 +: 32]);
      pc = zp < lo ? lo : zp;
      pc = pc > hi ? hi : pc;
      st_q <= lenf == 0 || n1f == 0 ? IDLE : softmax ? MAX : SUM;
      sm_q <= softmax;
      n0_q <= NB'(lenf);
      n1_q <= n1f;
      j_q <= '0;
      ss0_q <= XAW'(f_i[64*ember_npu_pkg::R_SRC_SB +: 64]);
      ss1_q <= XAW'(f_i[64*ember_npu_pkg::R_SRC_S1 +: 64]);
      ds0_q <= XAW'(f_i[64*ember_npu_pkg::R_DST_SB +: 64]);
      ds1_q <= XAW'(f_i[64*ember_npu_pkg::R_DST_S1 +: 64]);
      sline_q <= XAW'(f_i[64*ember_npu_pkg::R_SRC_ADDR +: 64]);
      dline_q <= XAW'(f_i[64*ember_npu_pkg::R_DST_ADDR +: 64]);
      srow_q <= XAW'(f_i[64*ember_npu_pkg::R_SRC_ADDR +: 64]);
      drow_q <= XAW'(f_i[64*ember_npu_pkg::R_DST_ADDR +: 64]);
      p_q <= pf;
      crow_q <= pf + CAW'(2);
      zx_q <= $signed(acc0_i[7:0]);
      zpy_q <= zp;
      lo_q <= lo > hi ? hi : lo;
      hi_q <= hi;
      p0_q <= $signed(acc1_i[31:0]);
      p1_q <= $signed(acc1_i[63:32]);
      pad_q <= pc < -128 ? 8'h80 : pc > 127 ? 8'h7f : pc[7:0];
      rem_q <= NB'(lenf);
      l_q <= '0;
      mx_q <= -8'sd128;
      {sum_q, u_q, q2_q} <= '0;
    end else begin
      unique case (st_q)
        MAX: begin
          if (rmax > mx_q) mx_q <= rmax;
          if (last_row) begin
            st_q <= SUM;
            srow_q <= sline_q;
            rem_q <= n0_q;
          end else begin
            srow_q <= srow_q + ss0_q;
            rem_q <= rem_q - NB'(L);
          end
        end
        SUM: begin
          if (sm_q) sum_q <= sum_q + 31'(e);
          else begin
            u_q <= u_q + 24'(u);
            q2_q <= q2_q + 31'(mul_p_i);
          end
          l_q <= l_q + LG'(1);
          if (last_code) begin
            l_q <= '0;
            if (last_row) begin
              srow_q <= sline_q;
              rem_q <= n0_q;
              // softmax: the divisor is the sum (with this code's entry)
              dv_q <= sum_q + 31'(e);
              st_q <= sm_q ? LOAD : W1;
            end else begin
              srow_q <= srow_q + ss0_q;
              rem_q <= rem_q - NB'(L);
            end
          end
        end
        W1: begin
          d_q <= 62'(mul_p_i);
          st_q <= W2;
        end
        W2: begin
          d_q <= d_q - 62'(mul_p_i) + epc;
          k_q <= '0;
          st_q <= NORM;
        end
        NORM: begin
          if (d_q == 0 || d_q[61:60] != 0) begin
            st_q <= SQRT;
            it_q <= 5'd30;
            srem_q <= '0;
            root_q <= '0;
          end else begin
            d_q <= d_q << 2;
            k_q <= k_q + 6'd1;
          end
        end
        SQRT: begin
          d_q <= d_q << 2;
          if (35'(sr_x) >= 35'(sr_t)) begin
            srem_q <= 33'(sr_x - 35'(sr_t));
            root_q <= {root_q[29:0], 1'b1};
          end else begin
            srem_q <= 33'(sr_x);
            root_q <= {root_q[29:0], 1'b0};
          end
          it_q <= it_q - 5'd1;
          if (it_q == 0) begin
            st_q <= LOAD;
            dv_q <= 35'(sr_x) >= 35'(sr_t) ? {root_q[29:0], 1'b1} : {root_q[29:0], 1'b0};
          end
        end
        LOAD: begin
          l_q <= l_q + LG'(1);
          if (last_code) begin
            st_q <= DIV;
            it_q <= 5'd24;
          end
        end
        DIV: begin
          it_q <= it_q - 5'd1;
          if (it_q == 0) begin
            st_q <= RQ;
            l_q <= '0;
          end
        end
        RQ: begin
          l_q <= l_q + LG'(1);
          if (last_code) st_q <= WR;
        end
        WR: begin
          l_q <= '0;
          if (last_row) begin
            // The next line.
            srow_q <= sline_q + ss1_q;
            sline_q <= sline_q + ss1_q;
            drow_q <= dline_q + ds1_q;
            dline_q <= dline_q + ds1_q;
            crow_q <= p_q + CAW'(2);
            rem_q <= n0_q;
            mx_q <= -8'sd128;
            {sum_q, u_q, q2_q} <= '0;
            j_q <= j_q + N1B'(1);
            st_q <= j_q + N1B'(1) == n1_q ? IDLE : sm_q ? MAX : SUM;
          end else begin
            srow_q <= srow_q + ss0_q;
            drow_q <= drow_q + ds0_q;
            crow_q <= crow_q + CAW'(3);
            rem_q <= rem_q - NB'(L);
            st_q <= LOAD;
          end
        end
        default: ;
      endcase
    end
  end
endmodule : ember_norm
