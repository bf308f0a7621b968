// Two NPUs on one DRAM (docs/rtl/npu.md section 5.6, rules M1-M4 of docs/systems.md
// section 5): two ember_npu with a shared DRAM channel and the arbiter that orders their
// bookings within a cycle. Each NPU keeps its own ports (prefix d0_, d1_: its own DRAM
// port, served from its own window of the DRAM; only the channel's timing is shared).
// The arbiter chains the two NPUs' bookings of a cycle (M3): with fixed priority
// (round_robin_i 0) NPU 0 books first; with round robin, the NPU after the one that
// booked last in the latest cycle with a booking (NPU 0 before any). chan_q, the
// channel's first free cycle, is registered once for both (M1). The chain is a
// combinational path through both NPUs in either order (the order is a register), so
// the netlist has a loop that no cycle closes: Verilator builds this top with
// -Wno-UNOPTFLAT.
module ember_npu_pair #(
    parameter int unsigned IMEM_WORDS = 1 << 17,
    localparam int unsigned IAW = $clog2(IMEM_WORDS)
) (
    input  logic clk_i,
    input  logic rst_ni,
    input  logic round_robin_i,  // M3: 1 round robin, 0 fixed priority (held during a job)
    input  logic d0_prog_we_i,
    input  logic [IAW-1:0] d0_prog_addr_i,
    input  logic [ember_isa_pkg::INSTR_BITS-1:0] d0_prog_data_i,
    input  logic d0_start_i,
    input  logic [31:0] d0_ninsn_i,
    input  logic [63:0] d0_budget_i,
    input  logic [63:0] d0_window_i,
    output logic d0_dram_req_valid_o,
    input  logic d0_dram_req_ready_i,
    output logic d0_dram_req_write_o,
    output logic [63:0] d0_dram_req_addr_o,
    output logic [31:0] d0_dram_req_bytes_o,
    output logic [31:0] d0_dram_req_tag_o,
    output logic [ember_isa_pkg::ROW_BITS-1:0] d0_dram_req_wdata_o,
    input  logic d0_dram_rsp_valid_i,
    input  logic [31:0] d0_dram_rsp_tag_i,
    input  logic [ember_isa_pkg::ROW_BITS-1:0] d0_dram_rsp_rdata_i,
    output logic d0_dram_conflict_o,
    output logic [63:0] d0_cyc_o,
    output logic d0_done_o,
    output logic d0_fault_o,
    output logic [2:0] d0_fault_kind_o,
    output logic [1:0] d0_fault_engine_o,
    output logic [31:0] d0_fault_index_o,
    output logic [63:0] d0_fault_cycle_o,
    output logic [63:0] d0_cycles_o,
    output logic [2:0] d0_ret_o,
    output logic [3*32-1:0] d0_ret_index_o,
    output logic [3*64-1:0] d0_ret_dispatch_o,
    output logic [3*64-1:0] d0_ret_take_o,
    output logic [3*64-1:0] d0_ret_start_o,
    output logic [3*64-1:0] d0_ret_end_o,
    output logic [3*64-1:0] d0_ret_mstall_o,
    output logic [3*64-1:0] d0_cnt_busy_o,
    output logic [3*64-1:0] d0_cnt_token_o,
    output logic [3*64-1:0] d0_cnt_memory_o,
    output logic [3*64-1:0] d0_cnt_insns_o,
    output logic [63:0] d0_cnt_fetch_stall_o,
    output logic [63:0] d0_cnt_macs_o,
    output logic [63:0] d0_cnt_dram_read_o,
    output logic [63:0] d0_cnt_dram_write_o,
    output logic d0_overrun_o,
    output logic [63:0] d0_cnt_arb_o,
    output logic [63:0] d0_isa_hash_o,
    output logic d0_chan_booked_o,
    input  logic d1_prog_we_i,
    input  logic [IAW-1:0] d1_prog_addr_i,
    input  logic [ember_isa_pkg::INSTR_BITS-1:0] d1_prog_data_i,
    input  logic d1_start_i,
    input  logic [31:0] d1_ninsn_i,
    input  logic [63:0] d1_budget_i,
    input  logic [63:0] d1_window_i,
    output logic d1_dram_req_valid_o,
    input  logic d1_dram_req_ready_i,
    output logic d1_dram_req_write_o,
    output logic [63:0] d1_dram_req_addr_o,
    output logic [31:0] d1_dram_req_bytes_o,
    output logic [31:0] d1_dram_req_tag_o,
    output logic [ember_isa_pkg::ROW_BITS-1:0] d1_dram_req_wdata_o,
    input  logic d1_dram_rsp_valid_i,
    input  logic [31:0] d1_dram_rsp_tag_i,
    input  logic [ember_isa_pkg::ROW_BITS-1:0] d1_dram_rsp_rdata_i,
    output logic d1_dram_conflict_o,
    output logic [63:0] d1_cyc_o,
    output logic d1_done_o,
    output logic d1_fault_o,
    output logic [2:0] d1_fault_kind_o,
    output logic [1:0] d1_fault_engine_o,
    output logic [31:0] d1_fault_index_o,
    output logic [63:0] d1_fault_cycle_o,
    output logic [63:0] d1_cycles_o,
    output logic [2:0] d1_ret_o,
    output logic [3*32-1:0] d1_ret_index_o,
    output logic [3*64-1:0] d1_ret_dispatch_o,
    output logic [3*64-1:0] d1_ret_take_o,
    output logic [3*64-1:0] d1_ret_start_o,
    output logic [3*64-1:0] d1_ret_end_o,
    output logic [3*64-1:0] d1_ret_mstall_o,
    output logic [3*64-1:0] d1_cnt_busy_o,
    output logic [3*64-1:0] d1_cnt_token_o,
    output logic [3*64-1:0] d1_cnt_memory_o,
    output logic [3*64-1:0] d1_cnt_insns_o,
    output logic [63:0] d1_cnt_fetch_stall_o,
    output logic [63:0] d1_cnt_macs_o,
    output logic [63:0] d1_cnt_dram_read_o,
    output logic [63:0] d1_cnt_dram_write_o,
    output logic d1_overrun_o,
    output logic [63:0] d1_cnt_arb_o,
    output logic [63:0] d1_isa_hash_o,
    output logic d1_chan_booked_o
);

  // ---- The arbiter (M1, M3) ----
  logic [63:0] chan_q, in0_w, in1_w, out0_w, out1_w;
  logic rr_q, first1_w;
  assign first1_w = round_robin_i && rr_q;  // NPU 1 books first this cycle
  assign in0_w = first1_w ? out1_w : chan_q;
  assign in1_w = first1_w ? chan_q : out0_w;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      chan_q <= '0;
      rr_q <= 1'b0;
    end else begin
      chan_q <= first1_w ? out0_w : out1_w;
      // The pointer moves past the last NPU that booked in this cycle's order.
      if (d0_chan_booked_o || d1_chan_booked_o)
        rr_q <= first1_w ? d0_chan_booked_o : !d1_chan_booked_o;
    end
  end

  ember_npu #(.IMEM_WORDS(IMEM_WORDS), .SHARED_CHAN(1'b1)) u_npu0 (
      .clk_i, .rst_ni, .prog_we_i(d0_prog_we_i), .prog_addr_i(d0_prog_addr_i),
      .prog_data_i(d0_prog_data_i), .start_i(d0_start_i), .ninsn_i(d0_ninsn_i),
      .budget_i(d0_budget_i), .window_i(d0_window_i), .dram_req_valid_o(d0_dram_req_valid_o),
      .dram_req_ready_i(d0_dram_req_ready_i), .dram_req_write_o(d0_dram_req_write_o),
      .dram_req_addr_o(d0_dram_req_addr_o), .dram_req_bytes_o(d0_dram_req_bytes_o),
      .dram_req_tag_o(d0_dram_req_tag_o), .dram_req_wdata_o(d0_dram_req_wdata_o),
      .dram_rsp_valid_i(d0_dram_rsp_valid_i), .dram_rsp_tag_i(d0_dram_rsp_tag_i),
      .dram_rsp_rdata_i(d0_dram_rsp_rdata_i), .dram_conflict_o(d0_dram_conflict_o),
      .cyc_o(d0_cyc_o), .done_o(d0_done_o), .fault_o(d0_fault_o),
      .fault_kind_o(d0_fault_kind_o), .fault_engine_o(d0_fault_engine_o),
      .fault_index_o(d0_fault_index_o), .fault_cycle_o(d0_fault_cycle_o),
      .cycles_o(d0_cycles_o), .ret_o(d0_ret_o), .ret_index_o(d0_ret_index_o),
      .ret_dispatch_o(d0_ret_dispatch_o), .ret_take_o(d0_ret_take_o),
      .ret_start_o(d0_ret_start_o), .ret_end_o(d0_ret_end_o), .ret_mstall_o(d0_ret_mstall_o),
      .cnt_busy_o(d0_cnt_busy_o), .cnt_token_o(d0_cnt_token_o), .cnt_memory_o(d0_cnt_memory_o),
      .cnt_insns_o(d0_cnt_insns_o), .cnt_fetch_stall_o(d0_cnt_fetch_stall_o),
      .cnt_macs_o(d0_cnt_macs_o), .cnt_dram_read_o(d0_cnt_dram_read_o),
      .cnt_dram_write_o(d0_cnt_dram_write_o), .overrun_o(d0_overrun_o),
      .cnt_arb_o(d0_cnt_arb_o), .isa_hash_o(d0_isa_hash_o), .chan_i(in0_w), .chan_o(out0_w),
      .chan_booked_o(d0_chan_booked_o));

  ember_npu #(.IMEM_WORDS(IMEM_WORDS), .SHARED_CHAN(1'b1)) u_npu1 (
      .clk_i, .rst_ni, .prog_we_i(d1_prog_we_i), .prog_addr_i(d1_prog_addr_i),
      .prog_data_i(d1_prog_data_i), .start_i(d1_start_i), .ninsn_i(d1_ninsn_i),
      .budget_i(d1_budget_i), .window_i(d1_window_i), .dram_req_valid_o(d1_dram_req_valid_o),
      .dram_req_ready_i(d1_dram_req_ready_i), .dram_req_write_o(d1_dram_req_write_o),
      .dram_req_addr_o(d1_dram_req_addr_o), .dram_req_bytes_o(d1_dram_req_bytes_o),
      .dram_req_tag_o(d1_dram_req_tag_o), .dram_req_wdata_o(d1_dram_req_wdata_o),
      .dram_rsp_valid_i(d1_dram_rsp_valid_i), .dram_rsp_tag_i(d1_dram_rsp_tag_i),
      .dram_rsp_rdata_i(d1_dram_rsp_rdata_i), .dram_conflict_o(d1_dram_conflict_o),
      .cyc_o(d1_cyc_o), .done_o(d1_done_o), .fault_o(d1_fault_o),
      .fault_kind_o(d1_fault_kind_o), .fault_engine_o(d1_fault_engine_o),
      .fault_index_o(d1_fault_index_o), .fault_cycle_o(d1_fault_cycle_o),
      .cycles_o(d1_cycles_o), .ret_o(d1_ret_o), .ret_index_o(d1_ret_index_o),
      .ret_dispatch_o(d1_ret_dispatch_o), .ret_take_o(d1_ret_take_o),
      .ret_start_o(d1_ret_start_o), .ret_end_o(d1_ret_end_o), .ret_mstall_o(d1_ret_mstall_o),
      .cnt_busy_o(d1_cnt_busy_o), .cnt_token_o(d1_cnt_token_o), .cnt_memory_o(d1_cnt_memory_o),
      .cnt_insns_o(d1_cnt_insns_o), .cnt_fetch_stall_o(d1_cnt_fetch_stall_o),
      .cnt_macs_o(d1_cnt_macs_o), .cnt_dram_read_o(d1_cnt_dram_read_o),
      .cnt_dram_write_o(d1_cnt_dram_write_o), .overrun_o(d1_overrun_o),
      .cnt_arb_o(d1_cnt_arb_o), .isa_hash_o(d1_isa_hash_o), .chan_i(in1_w), .chan_o(out1_w),
      .chan_booked_o(d1_chan_booked_o));

endmodule : ember_npu_pair
