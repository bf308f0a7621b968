// One output channel of the MAC array (ember_gemm): acc + sum over c of act[c] * w[c],
// MAC_ROWS int8 x int8 products, int32 two's-complement accumulation; clear_i gives 0
// (gemm with reset, or no acc row written this cycle). Combinational. A module of its
// own so that synthesis maps one column and counts it MAC_COLS times (docs/rtl/area.md
// section 8).
//
// The products are summed in PW = 17 + log2(MAC_ROWS) bits (their sum lies within
// +-MAC_ROWS * 2^14, so it is exact there) and then added to acc, sign-extended: the
// int32 result is the wrapped sum of acc and every product, as before. Each signed
// product is written as unsigned partial-product rows (Baugh-Wooley): with a = -a7 * 2^7 +
// A and b = -b7 * 2^7 + B (A, B the low 7 bits), a * b = A * B + a7 * b7 * 2^14 +
// 2^7 * (~(b7 * A) + ~(a7 * B)) - 2 * 127 * 2^7, the inverted rows 7 bits wide and the
// constants of all products folded into the sum's start. Synthesis maps the rows to one
// carry-save tree: 6,675 generic cells a column instead of 8,727 for the sign-extended
// 32-bit products (Yosys 0.23, ember-v1).
module ember_mac_column (
    input  logic [8*ember_isa_pkg::MAC_ROWS-1:0] act_i,  // act lane c: int8
    input  logic [8*ember_isa_pkg::MAC_ROWS-1:0] wgt_i,  // W[k][c]: int8
    input  logic [31:0] acc_i,
    input  logic clear_i,
    output logic [31:0] acc_o
);
  localparam int unsigned R = ember_isa_pkg::MAC_ROWS;
  localparam int unsigned PW = 17 + (R > 1 ? $clog2(R) : 0);
  // The sum is computed under `if (!clear_i)`: the same mux as `clear_i ? 0 : sum` for
  // synthesis, but Verilator's C++ skips the products in a cycle whose column is cleared,
  // which ember_gemm asks for whenever the array writes no acc row.
  always_comb begin
    logic [PW-1:0] p;
    logic [7:0] a, b;
    logic [6:0] row, na, nb;
    logic s;
    {p, a, b, row, na, nb, s} = '0;
    acc_o = 32'd0;
    if (!clear_i) begin
      p = PW'(0) - PW'(R) * PW'(2 * 127 * 128);
      for (int c = 0; c < R; c++) begin
        a = act_i[8*c +: 8];
        b = wgt_i[8*c +: 8];
        for (int j = 0; j < 7; j++) begin
          row = a[6:0] & {7{b[j]}};
          p = p + (PW'(row) << j);
        end
        na = ~(a[6:0] & {7{b[7]}});
        nb = ~(b[6:0] & {7{a[7]}});
        s = a[7] & b[7];
        p = p + (PW'(s) << 14) + (PW'(na) << 7) + (PW'(nb) << 7);
      end
      acc_o = acc_i + 32'($signed(p));
    end
  end
endmodule : ember_mac_column
