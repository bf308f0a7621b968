// An engine's instruction queue: DEPTH entries of W bits, written by fetch, read by the
// engine. Registered (an entry written in cycle f is visible from f + 1, rule F3); a
// pop in the same cycle as a push is allowed, and the caller checks room after the
// pop (rule F2).
module ember_queue #(
    parameter int unsigned DEPTH = 4,
    parameter int unsigned W = 8,
    localparam int unsigned AW = DEPTH > 1 ? $clog2(DEPTH) : 1
) (
    input  logic clk_i,
    input  logic rst_ni,
    input  logic push_i,
    input  logic [W-1:0] data_i,
    input  logic pop_i,
    output logic [W-1:0] head_o,
    output logic [31:0] count_o
);
  logic [W-1:0] mem_q[DEPTH];
  logic [AW-1:0] rd_q, wr_q;
  logic [31:0] cnt_q;

  function automatic logic [AW-1:0] inc(input logic [AW-1:0] p);
    inc = 32'(p) + 1 == DEPTH ? '0 : p + 1'b1;
  endfunction

  assign head_o = mem_q[rd_q];
  assign count_o = cnt_q;

  always_ff @(posedge clk_i) begin
    if (push_i) mem_q[wr_q] <= data_i;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_q <= '0;
      wr_q <= '0;
      cnt_q <= '0;
    end else begin
      if (push_i) wr_q <= inc(wr_q);
      if (pop_i) rd_q <= inc(rd_q);
      cnt_q <= cnt_q + (push_i ? 32'd1 : 32'd0) - (pop_i ? 32'd1 : 32'd0);
    end
  end
endmodule : ember_queue
