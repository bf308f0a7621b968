// One output channel of the MAC array (ember_gemm): acc + sum over c of act[c] * w[c],
// MAC_ROWS int8 x int8 products, int32 two's-complement accumulation; clear_i gives 0
// (gemm with reset). Combinational. A module of its own so that synthesis maps one
// column and counts it MAC_COLS times (docs/rtl.md section 8).
module ember_mac_column (
    input  logic [8*ember_isa_pkg::MAC_ROWS-1:0] act_i,  // act lane c: int8
    input  logic [8*ember_isa_pkg::MAC_ROWS-1:0] wgt_i,  // W[k][c]: int8
    input  logic [31:0] acc_i,
    input  logic clear_i,
    output logic [31:0] acc_o
);
  always_comb begin
    logic [31:0] sum;
    sum = acc_i;
    for (int c = 0; c < ember_isa_pkg::MAC_ROWS; c++)
      sum = sum + 32'($signed(act_i[8*c +: 8]) * $signed(wgt_i[8*c +: 8]));
    acc_o = clear_i ? 32'd0 : sum;
  end
endmodule : ember_mac_column
