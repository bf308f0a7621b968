// One lane of the vector unit (ember_vector): the arithmetic of vector-binary,
// vector-unary, requantize, quantized-add and lut on one int32 (acc) or int8 (act) element, as
// docs/numerics.md's NPU part and simulator/src/Vector.cpp define it; results saturate
// to int8 (act_o) and wrap to int32 (acc_o). Combinational. A module of its own so that
// synthesis maps one lane and counts it VECTOR_LANES times (docs/rtl/area.md section 8). The
// signed operands are as wide as their roles (parameters from ember_vector).
module ember_vector_lane #(
    parameter int unsigned IB0 = 16,  // imm0
    parameter int unsigned IB1 = 16,  // imm1
    parameter int unsigned ZPB = 8,   // zero_point
    parameter int unsigned LOB = 8,   // lo
    parameter int unsigned HIB = 8    // hi
) (
    input  logic [ember_isa_pkg::CLS_BITS-1:0] cls_i,
    input  logic [ember_isa_pkg::VOP_BITS-1:0] op_i,
    input  logic acc_src_i,                 // sources are acc lanes (int32), else act (int8)
    input  logic [7:0] act0_i,
    input  logic [7:0] act1_i,
    input  logic [31:0] acc0_i,
    input  logic [31:0] acc1_i,
    input  logic signed [IB0-1:0] imm0_i,
    input  logic signed [IB1-1:0] imm1_i,
    input  logic signed [ZPB-1:0] zp_i,
    input  logic signed [LOB-1:0] lo_i,
    input  logic signed [HIB-1:0] hi_i,
    input  logic [31:0] m_i,                // requantize's multiplier M (quantized-add: M0)
    input  logic [5:0] s_i,                 // requantize's shift S (1..62 when it starts; quantized-add: S)
    input  logic [31:0] bias_i,             // added to an acc source, wrapping (properties.bias; else 0)
    // quantized-add: M1, k = 2^(S-1) - zp0 * M0 - zp1 * M1 and whether hi < lo (zp, lo
    // and hi arrive on zp_i, lo_i, hi_i). ember_vector computes k in the start cycle
    // (prep_i, the lanes idle) from the products pa_i * pb_i of lanes 0 and 1 (prod_o).
    input  logic [31:0] qm1_i,
    input  logic [65:0] qk_i,
    input  logic qhilo_i,
    input  logic prep_i,
    input  logic [31:0] pa_i,
    input  logic [31:0] pb_i,
    output logic [63:0] prod_o,
    input  logic [2047:0] table_i,          // lut's 256-byte table
    output logic [7:0] act_o,
    output logic [31:0] acc_o
);
  // vshr's shift: imm0 lies in -31..31 when it starts (the operand check), so five bits
  // of magnitude are enough (docs/numerics.md: s > 0 rounds right, s < 0 shifts left).
  function automatic logic signed [63:0] roundShift(input logic signed [31:0] x,
                                                    input logic signed [IB0-1:0] s);
    logic [4:0] sh;
    sh = '0;
    roundShift = 64'(x);
    if (s > 0) begin
      sh = 5'(s);
      roundShift = (64'(x) + (64'sd1 <<< (sh - 5'd1))) >>> sh;
    end else if (s < 0) begin
      sh = 5'(-s);
      roundShift = 64'(x) <<< sh;
    end
  endfunction

  // Operands are int32 or int8, so every product is 32 x 32 bits. quantized-add's
  // t + 2^(S-1) = (a - zp0) * M0 + (b - zp1) * M1 + 2^(S-1) = a * M0 + b * M1 + k: the
  // shared multiplier takes a * M0, a small int8 x int32 one b * M1; |a * M0|, |b * M1|
  // < 2^39 and |k| < 2^64, so the 66-bit sum is exact.
  always_comb begin
    logic signed [31:0] a, b, ma, mb;
    logic signed [63:0] y, prod;
    logic signed [39:0] p1;
    logic signed [65:0] x, r;
    logic qadd, ylo, yhi;
    qadd = cls_i == ember_isa_pkg::CLS_QUANTIZED_ADD;
    // An acc source plus the held bias (0 but for a bias requantize): int32 wrap-around.
    a = acc_src_i ? $signed(acc0_i + bias_i) : 32'($signed(act0_i));
    b = acc_src_i ? $signed(acc1_i) : 32'($signed(act1_i));
    y = 64'(a);
    // One multiplier: vmul's a * b, requantize's a * M, quantized-add's a * M0 (and in its
    // start cycle pa * pb).
    ma = prep_i ? $signed(pa_i) : a;
    mb = prep_i ? $signed(pb_i) : cls_i == ember_isa_pkg::CLS_REQUANTIZE || qadd ? $signed(m_i) : b;
    prod = 64'(ma) * 64'(mb);
    prod_o = prod;
    p1 = 40'($signed(act1_i)) * 40'($signed(qm1_i));
    // Requantize and quantized-add: round right by S, add zp, clamp. Requantize clamps
    // as lo if y < lo, else hi if y > hi; quantized-add as max(lo, min(y, hi)) (the same
    // unless hi < lo: then lo).
    // (Computed in their case only: the same logic, and a simulator skips the 66-bit
    // arithmetic for the other classes.)
    {x, r, yhi, ylo} = '0;
    unique case (cls_i)
      ember_isa_pkg::CLS_VECTOR_BINARY:
        unique case (op_i)
          ember_isa_pkg::VOP_ADD: y = 64'(a) + 64'(b);
          ember_isa_pkg::VOP_SUB: y = 64'(a) - 64'(b);
          ember_isa_pkg::VOP_MUL: y = 64'(prod);
          ember_isa_pkg::VOP_MIN: y = a < b ? 64'(a) : 64'(b);
          default: y = a > b ? 64'(a) : 64'(b);
        endcase
      ember_isa_pkg::CLS_VECTOR_UNARY:
        if (op_i == ember_isa_pkg::VOP_SHIFT) y = roundShift(a, imm0_i);
        else if (op_i == ember_isa_pkg::VOP_CLAMP) y = (64'(a) < 64'(imm0_i) ? 64'(imm0_i) : 64'(a)) > 64'(imm1_i) ? 64'(imm1_i)
                                      : (64'(a) < 64'(imm0_i) ? 64'(imm0_i) : 64'(a));
        else y = 64'(a);
      ember_isa_pkg::CLS_REQUANTIZE, ember_isa_pkg::CLS_QUANTIZED_ADD: begin
        x = 66'(prod) + (qadd ? 66'(p1) + $signed(qk_i) : 66'sd1 <<< (s_i - 6'd1));
        r = (x >>> s_i) + 66'(zp_i);
        yhi = r > 66'(hi_i);
        ylo = qadd && yhi ? qhilo_i : r < 66'(lo_i);
        y = ylo ? 64'(lo_i) : yhi ? 64'(hi_i) : 64'(r);
      end
      default: y = 64'($signed(table_i[8*(a[7:0] ^ 8'h80) +: 8]));  // lut: table[a + 128]
    endcase
    act_o = y < -128 ? 8'h80 : y > 127 ? 8'h7f : y[7:0];
    acc_o = y[31:0];
  end
endmodule : ember_vector_lane
