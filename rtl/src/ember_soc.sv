// The NPU as the control core sees it (docs/rtl/npu.md section 5.5): the register block
// generated from the description (ember_regs) in front of the hand-written NPU
// (ember_npu), and the glue between them. The control core reaches the registers through
// the reg_* port (ember_regs' protocol: one request a cycle, answered the next); the
// NPU's DRAM port and its instruction buffer's write port pass through to the platform.
//
// - A write of CTRL with START (and not RESET) starts the job when the NPU is ready (reset
//   and not started since): start_i pulses in the write's cycle T, so the job's cycle 0
//   is T + 1. The job takes INSN_COUNT instructions, the DRAM window DRAM_SIZE and the
//   cycle budget budget_i.
// - A write of CTRL with RESET holds the NPU in reset in the next cycle (its registers,
//   counters and status clear; a read issued then sees STATUS 0).
// - STATUS: BUSY from the start until DONE or FAULT; DONE and FAULT from the NPU; the
//   per-engine busy bits read 0. CYCLES: the NPU's live cycle while it runs, its total
//   after DONE, the fault's cycle after FAULT. MACS and the busy counters from the NPU's
//   counters; FAULT_CODE (CODE = 1 + the fault kind, ENGINE) and FAULT_PC from the fault
//   record; ISA_HASH_LO/HI from the package; RING_HEAD from ring_head_i.
// - IRQ_STATUS.DONE/FAULT are set on the rising edge of DONE/FAULT; irq_o is CTRL.IRQ_EN
//   and a pending cause, up in the cycle DONE or FAULT first shows (a read of IRQ_STATUS
//   issued in that cycle sees the new cause too).
// - COPY_*: the copy DMA's registers are stored here; the platform sees a COPY_CTRL write
//   on the register port, reads COPY_SRC/DST/LEN/SEED from copy_*_o, runs the transfer
//   (platform/CopyDma.h, the same model as the SystemC platform's) and drives
//   COPY_STATUS and COPY_CRC through copy_busy_i/done_i/error_i and copy_crc_i.
module ember_soc #(
    parameter int unsigned IMEM_WORDS = 1 << 17,
    localparam int unsigned IAW = $clog2(IMEM_WORDS)
) (
    input  logic clk_i,
    input  logic rst_ni,
    // The control core's register port (ember_regs' protocol).
    input  logic reg_req_i,
    input  logic reg_we_i,
    input  logic [31:0] reg_addr_i,
    input  logic [31:0] reg_wdata_i,
    output logic reg_ack_o,
    output logic reg_err_o,
    output logic [31:0] reg_rdata_o,
    output logic irq_o,
    input  logic [31:0] ring_head_i,   // the core's ring head (RING_HEAD)
    input  logic [63:0] budget_i,      // the NPU's cycle budget of the next job
    // Registers the platform reads: the ring, the job's text and window.
    output logic [31:0] doorbell_o,
    output logic doorbell_wr_o,
    output logic [63:0] ring_base_o,
    output logic [31:0] ring_size_o,
    output logic [63:0] insn_base_o,
    output logic [31:0] insn_count_o,
    output logic [63:0] dram_base_o,   // the NPU's DRAM addresses are relative to it
    output logic ready_o,              // a START would start a job now
    // The copy DMA's registers (COPY_*): the platform runs the transfer a COPY_CTRL write
    // with START asks for and drives its state back (docs/rtl/npu.md section 5.5).
    output logic [63:0] copy_src_o,
    output logic [63:0] copy_dst_o,
    output logic [31:0] copy_len_o,
    output logic [31:0] copy_seed_o,
    input  logic copy_busy_i,
    input  logic copy_done_i,
    input  logic copy_error_i,
    input  logic [31:0] copy_crc_i,
    output logic start_o,              // the job starts: its cycle 0 is the next cycle
    // The instruction buffer's write port (the platform's backdoor load before START).
    input  logic prog_we_i,
    input  logic [IAW-1:0] prog_addr_i,
    input  logic [ember_isa_pkg::INSTR_BITS-1:0] prog_data_i,
    // The NPU's DRAM port.
    output logic dram_req_valid_o,
    input  logic dram_req_ready_i,
    output logic dram_req_write_o,
    output logic [63:0] dram_req_addr_o,
    output logic [31:0] dram_req_bytes_o,
    output logic [31:0] dram_req_tag_o,
    output logic [ember_isa_pkg::ROW_BITS-1:0] dram_req_wdata_o,
    input  logic dram_rsp_valid_i,
    input  logic [31:0] dram_rsp_tag_i,
    input  logic [ember_isa_pkg::ROW_BITS-1:0] dram_rsp_rdata_i,
    output logic dram_conflict_o,
    // The NPU's status, fault record, counters and retirements (as ember_npu's).
    output logic [63:0] cyc_o,
    output logic done_o,
    output logic fault_o,
    output logic [2:0] fault_kind_o,
    output logic [1:0] fault_engine_o,
    output logic [31:0] fault_index_o,
    output logic [63:0] fault_cycle_o,
    output logic [63:0] cycles_o,
    output logic [2:0] ret_o,
    output logic [3*32-1:0] ret_index_o,
    output logic [3*64-1:0] ret_dispatch_o,
    output logic [3*64-1:0] ret_take_o,
    output logic [3*64-1:0] ret_start_o,
    output logic [3*64-1:0] ret_end_o,
    output logic [3*64-1:0] ret_mstall_o,
    output logic [3*64-1:0] cnt_busy_o,
    output logic [3*64-1:0] cnt_token_o,
    output logic [3*64-1:0] cnt_memory_o,
    output logic [3*64-1:0] cnt_insns_o,
    output logic [63:0] cnt_fetch_stall_o,
    output logic [63:0] cnt_macs_o,
    output logic [63:0] cnt_dram_read_o,
    output logic [63:0] cnt_dram_write_o,
    output logic overrun_o,
    output logic [63:0] isa_hash_o
);

  // ---- The register block ----
  logic ctrl_start, ctrl_reset, ctrl_irq_en, unused_ctrl_wr;
  logic irq_done, irq_fault;
  logic [31:0] ring_base_lo, ring_base_hi, insn_base_lo, insn_base_hi;
  logic [31:0] dram_base_lo, dram_base_hi, dram_size_lo, dram_size_hi;
  logic unused_ring_base_lo_wr, unused_ring_base_hi_wr, unused_ring_size_wr;
  logic unused_insn_base_lo_wr, unused_insn_base_hi_wr, unused_insn_count_wr;
  logic unused_dram_base_lo_wr, unused_dram_base_hi_wr, unused_dram_size_lo_wr;
  logic unused_dram_size_hi_wr;
  logic unused_ctrl_start, unused_ctrl_reset;
  logic busy, done_rise, fault_rise;
  logic [63:0] cycles_w;
  logic [31:0] regs_rdata;
  logic [7:0] code_w;
  logic [1:0] engine_w;
  logic [31:0] pc_w;
  logic [31:0] copy_src_lo, copy_src_hi, copy_dst_lo, copy_dst_hi;
  logic unused_copy_src_lo_wr, unused_copy_src_hi_wr, unused_copy_dst_lo_wr;
  logic unused_copy_dst_hi_wr, unused_copy_len_wr, unused_copy_seed_wr;
  logic unused_copy_ctrl_start, unused_copy_ctrl_check, unused_copy_ctrl_wr;

  ember_regs u_regs (
      .clk_i, .rst_ni, .req_i(reg_req_i), .we_i(reg_we_i), .addr_i(reg_addr_i),
      .wdata_i(reg_wdata_i), .ack_o(reg_ack_o), .err_o(reg_err_o), .rdata_o(regs_rdata),
      .ctrl_start_o(ctrl_start), .ctrl_reset_o(ctrl_reset), .ctrl_irq_en_o(ctrl_irq_en),
      .ctrl_wr_o(unused_ctrl_wr),
      .status_busy_i(busy), .status_done_i(done_o), .status_fault_i(fault_o),
      .status_load_busy_i(1'b0), .status_compute_busy_i(1'b0), .status_store_busy_i(1'b0),
      .irq_status_done_set_i(done_rise), .irq_status_done_o(irq_done),
      .irq_status_fault_set_i(fault_rise), .irq_status_fault_o(irq_fault),
      .fault_code_code_i(code_w), .fault_code_engine_i(engine_w), .fault_pc_i(pc_w),
      .doorbell_o, .doorbell_wr_o,
      .ring_base_lo_o(ring_base_lo), .ring_base_lo_wr_o(unused_ring_base_lo_wr),
      .ring_base_hi_o(ring_base_hi), .ring_base_hi_wr_o(unused_ring_base_hi_wr),
      .ring_size_o, .ring_size_wr_o(unused_ring_size_wr),
      .ring_head_i,
      .insn_base_lo_o(insn_base_lo), .insn_base_lo_wr_o(unused_insn_base_lo_wr),
      .insn_base_hi_o(insn_base_hi), .insn_base_hi_wr_o(unused_insn_base_hi_wr),
      .insn_count_o, .insn_count_wr_o(unused_insn_count_wr),
      .dram_base_lo_o(dram_base_lo), .dram_base_lo_wr_o(unused_dram_base_lo_wr),
      .dram_base_hi_o(dram_base_hi), .dram_base_hi_wr_o(unused_dram_base_hi_wr),
      .dram_size_lo_o(dram_size_lo), .dram_size_lo_wr_o(unused_dram_size_lo_wr),
      .dram_size_hi_o(dram_size_hi), .dram_size_hi_wr_o(unused_dram_size_hi_wr),
      .isa_hash_lo_i(ember_isa_pkg::ISA_HASH_LO), .isa_hash_hi_i(ember_isa_pkg::ISA_HASH_HI),
      .cycles_lo_i(cycles_w[31:0]), .cycles_hi_i(cycles_w[63:32]),
      .load_busy_cycles_i(cnt_busy_o[31:0]), .compute_busy_cycles_i(cnt_busy_o[64 +: 32]),
      .store_busy_cycles_i(cnt_busy_o[128 +: 32]),
      .macs_lo_i(cnt_macs_o[31:0]), .macs_hi_i(cnt_macs_o[63:32]),
      .copy_src_lo_o(copy_src_lo), .copy_src_lo_wr_o(unused_copy_src_lo_wr),
      .copy_src_hi_o(copy_src_hi), .copy_src_hi_wr_o(unused_copy_src_hi_wr),
      .copy_dst_lo_o(copy_dst_lo), .copy_dst_lo_wr_o(unused_copy_dst_lo_wr),
      .copy_dst_hi_o(copy_dst_hi), .copy_dst_hi_wr_o(unused_copy_dst_hi_wr),
      .copy_len_o, .copy_len_wr_o(unused_copy_len_wr),
      .copy_seed_o, .copy_seed_wr_o(unused_copy_seed_wr),
      .copy_ctrl_start_o(unused_copy_ctrl_start), .copy_ctrl_check_o(unused_copy_ctrl_check),
      .copy_ctrl_wr_o(unused_copy_ctrl_wr),
      .copy_status_busy_i(copy_busy_i), .copy_status_done_i(copy_done_i),
      .copy_status_error_i(copy_error_i), .copy_crc_i);
  // START and RESET act on the write itself (below), not on the stored CTRL.
  assign unused_ctrl_start = ctrl_start;
  assign unused_ctrl_reset = ctrl_reset;
  assign ring_base_o = {ring_base_hi, ring_base_lo};
  assign insn_base_o = {insn_base_hi, insn_base_lo};
  assign dram_base_o = {dram_base_hi, dram_base_lo};
  assign copy_src_o = {copy_src_hi, copy_src_lo};
  assign copy_dst_o = {copy_dst_hi, copy_dst_lo};

  // ---- CTRL writes: START and RESET ----
  logic ctrl_write, reset_w, npu_rst_q, ready_q;
  assign ctrl_write = reg_req_i && reg_we_i && reg_addr_i == ember_isa_pkg::REG_CTRL;
  assign reset_w = ctrl_write && reg_wdata_i[ember_isa_pkg::REG_CTRL_RESET_SHIFT];
  assign start_o = ctrl_write && reg_wdata_i[ember_isa_pkg::REG_CTRL_START_SHIFT] && !reset_w
                   && ready_q && !npu_rst_q;
  assign ready_o = ready_q && !npu_rst_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      npu_rst_q <= 1'b0;
      ready_q <= 1'b1;
    end else begin
      npu_rst_q <= reset_w;
      if (reset_w) ready_q <= 1'b1;
      else if (start_o) ready_q <= 1'b0;
    end
  end
  logic npu_rst_n;
  assign npu_rst_n = rst_ni && !npu_rst_q;

  // ---- Status, the interrupt ----
  logic done_q, fault_q, irq_fix_done_q, irq_fix_fault_q;
  assign busy = !ready_q && !done_o && !fault_o;
  assign done_rise = done_o && !done_q;
  assign fault_rise = fault_o && !fault_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      done_q <= 1'b0;
      fault_q <= 1'b0;
      irq_fix_done_q <= 1'b0;
      irq_fix_fault_q <= 1'b0;
    end else begin
      done_q <= done_o;
      fault_q <= fault_o;
      // A read of IRQ_STATUS in the cycle a cause rises: the block answers with its
      // stored bits, which take the cause from the next cycle; add it to the answer.
      irq_fix_done_q <= reg_req_i && !reg_we_i && reg_addr_i == ember_isa_pkg::REG_IRQ_STATUS
                        && done_rise;
      irq_fix_fault_q <= reg_req_i && !reg_we_i
                         && reg_addr_i == ember_isa_pkg::REG_IRQ_STATUS && fault_rise;
    end
  end
  always_comb begin
    reg_rdata_o = regs_rdata;
    if (irq_fix_done_q) reg_rdata_o[ember_isa_pkg::REG_IRQ_STATUS_DONE_SHIFT] = 1'b1;
    if (irq_fix_fault_q) reg_rdata_o[ember_isa_pkg::REG_IRQ_STATUS_FAULT_SHIFT] = 1'b1;
  end
  assign irq_o = ctrl_irq_en && (irq_done || irq_fault || done_rise || fault_rise);
  assign cycles_w = fault_o ? fault_cycle_o : done_o ? cycles_o : cyc_o;
  assign code_w = fault_o ? 8'(fault_kind_o) + 8'd1 : 8'd0;
  assign engine_w = fault_o ? fault_engine_o : 2'd0;
  assign pc_w = fault_o ? fault_index_o : 32'd0;

  // ---- The NPU ----
  // Its DRAM channel is its own (ember_npu_pair shares one between two NPUs).
  logic [63:0] unused_chan, unused_arb;
  logic unused_booked;
  ember_npu #(.IMEM_WORDS(IMEM_WORDS)) u_npu (
      .clk_i, .rst_ni(npu_rst_n), .prog_we_i, .prog_addr_i, .prog_data_i, .start_i(start_o),
      .ninsn_i(insn_count_o), .budget_i, .window_i({dram_size_hi, dram_size_lo}),
      .dram_req_valid_o, .dram_req_ready_i, .dram_req_write_o, .dram_req_addr_o,
      .dram_req_bytes_o, .dram_req_tag_o, .dram_req_wdata_o, .dram_rsp_valid_i,
      .dram_rsp_tag_i, .dram_rsp_rdata_i, .dram_conflict_o,
      .cyc_o, .done_o, .fault_o, .fault_kind_o, .fault_engine_o, .fault_index_o,
      .fault_cycle_o, .cycles_o, .ret_o, .ret_index_o, .ret_dispatch_o, .ret_take_o,
      .ret_start_o, .ret_end_o, .ret_mstall_o, .cnt_busy_o, .cnt_token_o, .cnt_memory_o,
      .cnt_insns_o, .cnt_fetch_stall_o, .cnt_macs_o, .cnt_dram_read_o, .cnt_dram_write_o,
      .overrun_o, .isa_hash_o, .chan_i(64'd0), .chan_o(unused_chan), .chan_booked_o(unused_booked),
      .cnt_arb_o(unused_arb));
endmodule : ember_soc
