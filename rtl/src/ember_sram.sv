// Behavioural SRAM of the NPU: ROWS rows of ROW_BYTES, NR asynchronous read ports and NW
// write ports (written at the clock edge; on a same-row write, the higher port wins).
// Every engine reaches a memory through ports of its own (docs/rtl/npu.md section 5), so
// cross-engine traffic never contends, as the timing contract assumes. For synthesis
// this module is a black box: the area table counts its ROWS * ROW_BYTES * 8 bits.
module ember_sram #(
    parameter int unsigned ROWS = 16,
    parameter int unsigned ROW_BYTES = 16,
    parameter int unsigned NR = 1,
    parameter int unsigned NW = 1,
    localparam int unsigned AW = ROWS > 1 ? $clog2(ROWS) : 1,
    localparam int unsigned W = 8 * ROW_BYTES
) (
    input  logic clk_i,
    input  logic [NW-1:0] we_i,
    input  logic [NW*AW-1:0] waddr_i,
    input  logic [NW*W-1:0] wdata_i,
    input  logic [NR*AW-1:0] raddr_i,
    output logic [NR*W-1:0] rdata_o
);
  logic [W-1:0] mem_q[ROWS];

  always_ff @(posedge clk_i) begin
    for (int p = 0; p < NW; p++)
      if (we_i[p]) mem_q[waddr_i[p*AW +: AW]] <= wdata_i[p*W +: W];
  end

  always_comb begin
    for (int p = 0; p < NR; p++) rdata_o[p*W +: W] = mem_q[raddr_i[p*AW +: AW]];
  end
endmodule : ember_sram
