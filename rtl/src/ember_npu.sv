// The Ember NPU (docs/rtl.md): the control path (ember_control), the load and store DMA
// engines, the MAC array, the vector unit and the four SRAMs, sized by the description
// (ember_isa_pkg). The instruction stream sits in an instruction buffer written through
// the prog_* port before the job starts. One DRAM port (valid/ready requests of up to r
// contiguous rows of a DRAM line, at most bytes_per_cycle bytes; in-order responses)
// serves both DMA engines: the contract books the channel per
// DMA instruction, so their request windows never overlap (dram_conflict_o says if they
// ever did).
module ember_npu #(
    parameter int unsigned IMEM_WORDS = 1 << 17,
    // 1: the DRAM channel is shared with other NPUs through chan_* (ember_npu_pair).
    parameter bit SHARED_CHAN = 1'b0,
    localparam int unsigned IAW = $clog2(IMEM_WORDS)
) (
    input  logic clk_i,
    input  logic rst_ni,
    // Program load and job start.
    input  logic prog_we_i,
    input  logic [IAW-1:0] prog_addr_i,
    input  logic [ember_isa_pkg::INSTR_BITS-1:0] prog_data_i,
    input  logic start_i,
    input  logic [31:0] ninsn_i,
    input  logic [63:0] budget_i,
    input  logic [63:0] window_i,
    // DRAM.
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
    // Status, fault record, counters, retirements.
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
    output logic overrun_o,  // a datapath was still busy when its engine started again
    // The shared DRAM channel (SHARED_CHAN; docs/rtl/npu.md section 5.6): its free cycle
    // before and after this NPU's bookings of the cycle, whether it booked, and the
    // arbitration stall (rule M4). SHARED_CHAN = 0: chan_i is not read, the outputs are 0.
    input  logic [63:0] chan_i,
    output logic [63:0] chan_o,
    output logic chan_booked_o,
    output logic [63:0] cnt_arb_o,
    output logic [63:0] isa_hash_o  // the description's hash (its first 8 bytes)
);

  localparam int unsigned ACT_B = 8 * ember_isa_pkg::MEM_ACT_ROW_BYTES;
  localparam int unsigned ACC_B = 8 * ember_isa_pkg::MEM_ACC_ROW_BYTES;
  localparam int unsigned WGT_B = 8 * ember_isa_pkg::MEM_WEIGHT_ROW_BYTES;
  localparam int unsigned PAR_B = 8 * ember_isa_pkg::MEM_PARAM_ROW_BYTES;
  localparam int unsigned ACT_AW = $clog2(ember_isa_pkg::MEM_ACT_ROWS);
  localparam int unsigned ACC_AW = $clog2(ember_isa_pkg::MEM_ACC_ROWS);
  localparam int unsigned WGT_AW = $clog2(ember_isa_pkg::MEM_WEIGHT_ROWS);
  localparam int unsigned PAR_AW = $clog2(ember_isa_pkg::MEM_PARAM_ROWS);
  // SRAM rows a DMA moves a cycle (rule D1's r per memory, generated into the package);
  // each DMA has r write (load) or read (store) ports on it, rows row, row + 1, ... (r
  // consecutive rows lie in r different banks).
  function automatic int unsigned mx(input int unsigned a, input int unsigned b);
    mx = a > b ? a : b;
  endfunction
  localparam int unsigned RA = ember_isa_pkg::MEM_ACT_DMA_ROWS;
  localparam int unsigned RWG = ember_isa_pkg::MEM_WEIGHT_DMA_ROWS;
  localparam int unsigned RC = ember_isa_pkg::MEM_ACC_DMA_ROWS;
  localparam int unsigned RP = ember_isa_pkg::MEM_PARAM_DMA_ROWS;
  localparam int unsigned RMAX = mx(mx(RA, RWG), mx(RC, RP));
  // The DMA's slots 1 and up are as wide as the widest row of a memory with r > 1.
  localparam int unsigned SW1 = mx(mx(RA > 1 ? ACT_B : 8, RWG > 1 ? WGT_B : 8),
                                   mx(RC > 1 ? ACC_B : 8, RP > 1 ? PAR_B : 8));
  localparam int unsigned WDW = ember_isa_pkg::ROW_BITS + (RMAX - 1) * SW1;
  localparam int unsigned RB = ember_isa_pkg::ROW_BITS;
  localparam int unsigned PAR_NR = RP + 3 + ember_isa_pkg::TABLE_ROWS;

  // ---- Instruction buffer ----
  logic [31:0] imem_addr_w;
  logic [ember_isa_pkg::INSTR_BITS-1:0] imem_data_w;
  ember_sram #(.ROWS(IMEM_WORDS), .ROW_BYTES(ember_isa_pkg::INSTR_BITS / 8), .NR(1), .NW(1)) u_imem (
      .clk_i, .we_i(prog_we_i), .waddr_i(prog_addr_i), .wdata_i(prog_data_i),
      .raddr_i(imem_addr_w[IAW-1:0]), .rdata_o(imem_data_w));

  // ---- Job parameters, held from the start (no input reaches the datapaths'
  // combinational logic) ----
  logic [31:0] ninsn_q;
  logic [63:0] budget_q, window_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ninsn_q <= '0;
      budget_q <= '0;
      window_q <= '0;
    end else if (start_i) begin
      ninsn_q <= ninsn_i;
      budget_q <= budget_i;
      window_q <= window_i;
    end
  end

  // ---- Control ----
  logic [ember_npu_pkg::FIELDS_BITS-1:0] f0_w, f1_w, f2_w;
  logic [ember_isa_pkg::CLS_BITS-1:0] cls0_w, cls1_w, cls2_w;
  logic [ember_isa_pkg::VOP_BITS-1:0] op1_w;
  logic [31:0] toff1_w;
  logic bg1_w, ovw1_w, bias1_w;
  logic chk0_w, chk1_w, chk2_w;
  logic [2:0] kind0_w, kind1_w, kind2_w;
  logic start0_w, start1_w, start2_w;
  logic [63:0] begin0_w, xfer0_w, begin2_w, xfer2_w;

  ember_control #(.SHARED(SHARED_CHAN)) u_control (
      .clk_i, .rst_ni, .start_i, .ninsn_i(ninsn_q), .budget_i(budget_q),
      .imem_addr_o(imem_addr_w), .imem_data_i(imem_data_w),
      .f0_o(f0_w), .f1_o(f1_w), .f2_o(f2_w), .cls0_o(cls0_w), .cls1_o(cls1_w), .cls2_o(cls2_w),
      .op1_o(op1_w), .table_off1_o(toff1_w), .bg1_o(bg1_w), .ovw1_o(ovw1_w), .bias1_o(bias1_w),
      .chk0_i(chk0_w), .kind0_i(kind0_w), .chk1_i(chk1_w), .kind1_i(kind1_w),
      .chk2_i(chk2_w), .kind2_i(kind2_w),
      .start0_o(start0_w), .start1_o(start1_w), .start2_o(start2_w),
      .begin0_o(begin0_w), .xfer0_o(xfer0_w), .begin2_o(begin2_w), .xfer2_o(xfer2_w),
      .cyc_o, .done_o, .fault_o, .fault_kind_o, .fault_engine_o, .fault_index_o,
      .fault_cycle_o, .cycles_o, .ret_o, .ret_index_o, .ret_dispatch_o, .ret_take_o,
      .ret_start_o, .ret_end_o, .ret_mstall_o, .cnt_busy_o, .cnt_token_o, .cnt_memory_o,
      .cnt_insns_o, .cnt_fetch_stall_o, .cnt_macs_o, .cnt_dram_read_o, .cnt_dram_write_o,
      .chan_i, .chan_o, .booked_o(chan_booked_o), .cnt_arb_o);

  // ---- Load DMA ----
  logic ld_chk, ld_busy, ld_re, ld_vld, ld_wr;
  logic [RMAX-1:0] ld_we;
  logic [2:0] ld_kind;
  logic [1:0] ld_mem;
  logic [RMAX*32-1:0] ld_row;
  logic [31:0] ld_bytes, ld_tag;
  logic [63:0] ld_addr;
  logic [WDW-1:0] ld_wdata;
  logic [RB-1:0] ld_reqdata;
  ember_dma #(.LOAD(1'b1), .RMAX(RMAX), .SW1(SW1)) u_load (
      .clk_i, .rst_ni, .f_i(f0_w), .window_i(window_q), .chk_fault_o(ld_chk), .chk_kind_o(ld_kind),
      .start_i(start0_w && cls0_w == ember_isa_pkg::CLS_DMA_LOAD), .cyc_i(cyc_o), .begin_i(begin0_w),
      .xfer_i(xfer0_w), .busy_o(ld_busy), .sram_we_o(ld_we), .sram_re_o(ld_re),
      .sram_mem_o(ld_mem), .sram_row_o(ld_row), .sram_wdata_o(ld_wdata), .sram_rdata_i('0),
      .dram_req_valid_o(ld_vld), .dram_req_ready_i(dram_req_ready_i),
      .dram_req_write_o(ld_wr), .dram_req_addr_o(ld_addr), .dram_req_bytes_o(ld_bytes),
      .dram_req_tag_o(ld_tag), .dram_req_wdata_o(ld_reqdata),
      .dram_rsp_valid_i(dram_rsp_valid_i), .dram_rsp_tag_i(dram_rsp_tag_i),
      .dram_rsp_rdata_i(dram_rsp_rdata_i));

  // ---- Store DMA ----
  logic st_chk, st_busy, st_re, st_vld, st_wr;
  logic [RMAX-1:0] st_we;
  logic [2:0] st_kind;
  logic [1:0] st_mem;
  logic [RMAX*32-1:0] st_row;
  logic [31:0] st_bytes, st_tag;
  logic [63:0] st_addr;
  logic [WDW-1:0] st_wdata;
  logic [RB-1:0] st_reqdata, st_rdata;
  ember_dma #(.LOAD(1'b0), .RMAX(RMAX), .SW1(SW1)) u_store (
      .clk_i, .rst_ni, .f_i(f2_w), .window_i(window_q), .chk_fault_o(st_chk), .chk_kind_o(st_kind),
      .start_i(start2_w && cls2_w == ember_isa_pkg::CLS_DMA_STORE), .cyc_i(cyc_o), .begin_i(begin2_w),
      .xfer_i(xfer2_w), .busy_o(st_busy), .sram_we_o(st_we), .sram_re_o(st_re),
      .sram_mem_o(st_mem), .sram_row_o(st_row), .sram_wdata_o(st_wdata),
      .sram_rdata_i(st_rdata), .dram_req_valid_o(st_vld),
      .dram_req_ready_i(dram_req_ready_i), .dram_req_write_o(st_wr),
      .dram_req_addr_o(st_addr), .dram_req_bytes_o(st_bytes), .dram_req_tag_o(st_tag),
      .dram_req_wdata_o(st_reqdata), .dram_rsp_valid_i(1'b0), .dram_rsp_tag_i('0),
      .dram_rsp_rdata_i('0));

  assign dram_req_valid_o = ld_vld || st_vld;
  assign dram_req_write_o = ld_vld ? ld_wr : st_wr;
  assign dram_req_addr_o = ld_vld ? ld_addr : st_addr;
  assign dram_req_bytes_o = ld_vld ? ld_bytes : st_bytes;
  assign dram_req_tag_o = ld_vld ? ld_tag : st_tag;
  assign dram_req_wdata_o = st_reqdata;
  assign dram_conflict_o = ld_vld && st_vld;

  // ---- Compute: MAC array and vector unit ----
  // The array (gemm and depthwise) has SRAM ports of its own (an act read port per array
  // row, acc read and write, weight read): a background instruction (rule E6) streams
  // while the vector and normalize units run the compute engine's next instructions on
  // theirs.
  localparam int unsigned MR = ember_isa_pkg::MAC_ROWS;
  logic arr_cls, dw_cls, gm_chk, gm_busy, gm_we, gm_bank_err;
  logic [2:0] gm_kind;
  logic [32*MR-1:0] gm_act_rows;
  logic [31:0] gm_wgt_row, gm_acc_row;
  logic [ACT_B-1:0] act_r1, act_r2;
  logic [MR*ACT_B-1:0] act_gm;
  logic [ACC_B-1:0] acc_r1, acc_r2, acc_gm, gm_acc;
  logic [WGT_B-1:0] wgt_r1;
  assign dw_cls = cls1_w == ember_isa_pkg::CLS_DEPTHWISE;
  assign arr_cls = cls1_w == ember_isa_pkg::CLS_GEMM || dw_cls;
  ember_gemm u_gemm (
      .clk_i, .rst_ni, .f_i(f1_w), .bg_i(bg1_w), .ovw_i(ovw1_w), .dw_i(dw_cls), .chk_fault_o(gm_chk),
      .chk_kind_o(gm_kind), .start_i(start1_w && arr_cls), .busy_o(gm_busy),
      .act_rows_o(gm_act_rows), .act_i(act_gm), .wgt_row_o(gm_wgt_row), .wgt_i(wgt_r1),
      .acc_row_o(gm_acc_row), .acc_i(acc_gm), .acc_we_o(gm_we), .acc_o(gm_acc),
      .bank_err_o(gm_bank_err));

  logic vec_cls, norm_cls, vc_chk, vc_busy, vc_we, vc_sacc, vc_dacc;
  logic [2:0] vc_kind;
  logic [31:0] vc_prow, vc_trow, vc_s0, vc_s1, vc_dst;
  logic [PAR_B-1:0] par_m, par_s, par_b;
  logic [2047:0] par_table;
  logic [ACT_B-1:0] vc_act;
  logic [ACC_B-1:0] vc_acc;
  assign vec_cls = cls1_w == ember_isa_pkg::CLS_VECTOR_BINARY || cls1_w == ember_isa_pkg::CLS_VECTOR_UNARY
                || cls1_w == ember_isa_pkg::CLS_REQUANTIZE || cls1_w == ember_isa_pkg::CLS_LUT
                || cls1_w == ember_isa_pkg::CLS_QUANTIZED_ADD;
  assign norm_cls = cls1_w == ember_isa_pkg::CLS_NORMALIZE;
  // The normalize unit (its multiplier is the vector unit's lane 0).
  logic nm_chk, nm_busy, nm_we, nm_mul_en, nm_sel;
  logic [2:0] nm_kind;
  logic [31:0] nm_src, nm_dst, nm_c0, nm_c1, nm_c2, nm_mul_a, nm_mul_b;
  logic [63:0] nm_mul_p;
  logic nm_rq;
  logic [5:0] nm_rq_s;
  logic signed [32:0] nm_rq_z;
  logic signed [31:0] nm_rq_lo, nm_rq_hi;
  logic [7:0] nm_rq_y;
  logic [ACT_B-1:0] nm_act;
  logic [ACC_B-1:0] acc_r3;
  ember_norm u_norm (
      .clk_i, .rst_ni, .f_i(f1_w), .op_i(op1_w), .chk_fault_o(nm_chk), .chk_kind_o(nm_kind),
      .start_i(start1_w && norm_cls), .busy_o(nm_busy),
      .src_row_o(nm_src), .act_i(act_r1), .we_o(nm_we), .dst_row_o(nm_dst), .act_o(nm_act),
      .acc0_row_o(nm_c0), .acc1_row_o(nm_c1), .acc2_row_o(nm_c2), .acc0_i(acc_r1),
      .acc1_i(acc_r2), .acc2_i(acc_r3), .mul_en_o(nm_mul_en), .mul_a_o(nm_mul_a),
      .mul_b_o(nm_mul_b), .mul_p_i(nm_mul_p), .rq_o(nm_rq), .rq_s_o(nm_rq_s), .rq_z_o(nm_rq_z),
      .rq_lo_o(nm_rq_lo), .rq_hi_o(nm_rq_hi), .rq_y_i(nm_rq_y));
  // The compute read ports serve the normalize unit from its start cycle to its end.
  assign nm_sel = nm_busy || (start1_w && norm_cls);
  ember_vector u_vector (
      .clk_i, .rst_ni, .f_i(f1_w), .cls_i(cls1_w), .op_i(op1_w), .table_off_i(toff1_w),
      .bias_i(bias1_w), .chk_fault_o(vc_chk), .chk_kind_o(vc_kind), .start_i(start1_w && vec_cls),
      .busy_o(vc_busy), .prow_o(vc_prow), .pm_i(par_m), .ps_i(par_s), .pb_i(par_b), .trow_o(vc_trow),
      .table_i(par_table), .src0_row_o(vc_s0), .src1_row_o(vc_s1), .src_acc_o(vc_sacc),
      .act0_i(act_r1), .act1_i(act_r2), .acc0_i(acc_r1), .acc1_i(acc_r2), .we_o(vc_we),
      .dst_acc_o(vc_dacc), .dst_row_o(vc_dst), .act_o(vc_act), .acc_o(vc_acc),
      .nmul_en_i(nm_mul_en), .nmul_a_i(nm_mul_a), .nmul_b_i(nm_mul_b), .nmul_p_o(nm_mul_p),
      .nrq_i(nm_rq), .nrq_s_i(nm_rq_s), .nrq_z_i(nm_rq_z), .nrq_lo_i(nm_rq_lo), .nrq_hi_i(nm_rq_hi),
      .nrq_y_o(nm_rq_y));

  assign chk0_w = cls0_w == ember_isa_pkg::CLS_DMA_LOAD && ld_chk;
  assign kind0_w = ld_kind;
  assign chk1_w = arr_cls ? gm_chk : norm_cls ? nm_chk : vec_cls && vc_chk;
  assign kind1_w = arr_cls ? gm_kind : norm_cls ? nm_kind : vc_kind;
  assign chk2_w = cls2_w == ember_isa_pkg::CLS_DMA_STORE && st_chk;
  assign kind2_w = st_kind;
  // A compute start while the vector or normalize unit is still busy overran that
  // unit's instruction; one while the array is busy is legal for the vector classes
  // only (E6: a gemm, depthwise, sync or halt starts from the array's end on). Also
  // (a simulation-only self-check) a depthwise cycle reading more rows of an act bank
  // than it has read ports (rule DW1).
  assign overrun_o = (start0_w && ld_busy) || (start2_w && st_busy)
                  || (start1_w && (vc_busy || nm_busy || (gm_busy && !vec_cls && !norm_cls)))
                  || gm_bank_err;

  // ---- SRAMs ----
  // The DMAs' ports of each memory: load slot i writes, store slot i reads (i < r).
  logic [RA-1:0] act_dwe;
  logic [RA*ACT_AW-1:0] act_dwa, act_dra;
  logic [RA*ACT_B-1:0] act_dwd, act_drd;
  logic [RWG-1:0] wgt_dwe;
  logic [RWG*WGT_AW-1:0] wgt_dwa, wgt_dra;
  logic [RWG*WGT_B-1:0] wgt_dwd, wgt_drd;
  logic [RC-1:0] acc_dwe;
  logic [RC*ACC_AW-1:0] acc_dwa, acc_dra;
  logic [RC*ACC_B-1:0] acc_dwd, acc_drd;
  logic [RP-1:0] par_dwe;
  logic [RP*PAR_AW-1:0] par_dwa, par_dra;
  logic [RP*PAR_B-1:0] par_dwd, par_drd;
  ember_dma_ports #(.R(RA), .RMAX(RMAX), .AW(ACT_AW), .B(ACT_B), .RB(RB), .SW1(SW1), .WDW(WDW),
                   .MEM_ID(2'(ember_isa_pkg::MEM_ACT_ID))) u_act_dma (
      .ld_we_i(ld_we), .ld_mem_i(ld_mem), .ld_row_i(ld_row), .ld_wdata_i(ld_wdata),
      .st_row_i(st_row), .we_o(act_dwe), .waddr_o(act_dwa), .wdata_o(act_dwd),
      .raddr_o(act_dra));
  ember_dma_ports #(.R(RWG), .RMAX(RMAX), .AW(WGT_AW), .B(WGT_B), .RB(RB), .SW1(SW1), .WDW(WDW),
                   .MEM_ID(2'(ember_isa_pkg::MEM_WEIGHT_ID))) u_wgt_dma (
      .ld_we_i(ld_we), .ld_mem_i(ld_mem), .ld_row_i(ld_row), .ld_wdata_i(ld_wdata),
      .st_row_i(st_row), .we_o(wgt_dwe), .waddr_o(wgt_dwa), .wdata_o(wgt_dwd),
      .raddr_o(wgt_dra));
  ember_dma_ports #(.R(RC), .RMAX(RMAX), .AW(ACC_AW), .B(ACC_B), .RB(RB), .SW1(SW1), .WDW(WDW),
                   .MEM_ID(2'(ember_isa_pkg::MEM_ACC_ID))) u_acc_dma (
      .ld_we_i(ld_we), .ld_mem_i(ld_mem), .ld_row_i(ld_row), .ld_wdata_i(ld_wdata),
      .st_row_i(st_row), .we_o(acc_dwe), .waddr_o(acc_dwa), .wdata_o(acc_dwd),
      .raddr_o(acc_dra));
  ember_dma_ports #(.R(RP), .RMAX(RMAX), .AW(PAR_AW), .B(PAR_B), .RB(RB), .SW1(SW1), .WDW(WDW),
                   .MEM_ID(2'(ember_isa_pkg::MEM_PARAM_ID))) u_par_dma (
      .ld_we_i(ld_we), .ld_mem_i(ld_mem), .ld_row_i(ld_row), .ld_wdata_i(ld_wdata),
      .st_row_i(st_row), .we_o(par_dwe), .waddr_o(par_dwa), .wdata_o(par_dwd),
      .raddr_o(par_dra));
  // act: writes load DMA (r ports), vector or normalize; reads store DMA (r ports),
  // vector source 0 or normalize's source, vector source 1, then the array's MAC_ROWS
  // ports (a gemm's row on the first; a depthwise output's taps, at most read_ports of
  // them from a bank in a cycle: a banked SRAM's ports, DW1).
  logic [MR*ACT_AW-1:0] gm_act_raddr;
  always_comb
    for (int t = 0; t < MR; t++) gm_act_raddr[ACT_AW*t +: ACT_AW] = gm_act_rows[32*t +: ACT_AW];
  ember_sram #(.ROWS(ember_isa_pkg::MEM_ACT_ROWS), .ROW_BYTES(ember_isa_pkg::MEM_ACT_ROW_BYTES), .NR(2 + RA + MR), .NW(1 + RA)) u_act (
      .clk_i,
      .we_i({(vc_we && !vc_dacc) || nm_we, act_dwe}),
      .waddr_i({nm_busy ? nm_dst[ACT_AW-1:0] : vc_dst[ACT_AW-1:0], act_dwa}),
      .wdata_i({nm_busy ? nm_act : vc_act, act_dwd}),
      .raddr_i({gm_act_raddr, vc_s1[ACT_AW-1:0],
                nm_busy ? nm_src[ACT_AW-1:0] : vc_s0[ACT_AW-1:0], act_dra}),
      .rdata_o({act_gm, act_r2, act_r1, act_drd}));
  // acc: writes load DMA (r ports), vector, the array; reads store DMA (r ports), vector
  // 0 or normalize's first row, vector 1 or normalize's second, normalize's third
  // (layernorm's B row), the array.
  ember_sram #(.ROWS(ember_isa_pkg::MEM_ACC_ROWS), .ROW_BYTES(ember_isa_pkg::MEM_ACC_ROW_BYTES), .NR(4 + RC), .NW(2 + RC)) u_acc (
      .clk_i,
      .we_i({gm_we, vc_we && vc_dacc, acc_dwe}),
      .waddr_i({gm_acc_row[ACC_AW-1:0], vc_dst[ACC_AW-1:0], acc_dwa}),
      .wdata_i({gm_acc, vc_acc, acc_dwd}),
      .raddr_i({gm_acc_row[ACC_AW-1:0], nm_c2[ACC_AW-1:0], nm_sel ? nm_c1[ACC_AW-1:0] : vc_s1[ACC_AW-1:0],
                nm_sel ? nm_c0[ACC_AW-1:0] : vc_s0[ACC_AW-1:0], acc_dra}),
      .rdata_o({acc_gm, acc_r3, acc_r2, acc_r1, acc_drd}));
  // weight: writes load DMA (r ports); reads store DMA (r ports), gemm.
  ember_sram #(.ROWS(ember_isa_pkg::MEM_WEIGHT_ROWS), .ROW_BYTES(ember_isa_pkg::MEM_WEIGHT_ROW_BYTES), .NR(1 + RWG), .NW(RWG)) u_wgt (
      .clk_i, .we_i(wgt_dwe), .waddr_i(wgt_dwa), .wdata_i(wgt_dwd),
      .raddr_i({gm_wgt_row[WGT_AW-1:0], wgt_dra}), .rdata_o({wgt_r1, wgt_drd}));
  // param: writes load DMA (r ports); reads store DMA (r ports), requantize's
  // (quantized-add's) two rows and a bias requantize's third, the lut table.
  logic [PAR_NR*PAR_AW-1:0] par_raddr;
  logic [PAR_NR*PAR_B-1:0] par_rdata;
  always_comb begin
    par_raddr[0 +: RP*PAR_AW] = par_dra;
    par_raddr[RP*PAR_AW +: PAR_AW] = vc_prow[PAR_AW-1:0];
    par_raddr[(RP+1)*PAR_AW +: PAR_AW] = PAR_AW'(vc_prow + 1);
    par_raddr[(RP+2)*PAR_AW +: PAR_AW] = PAR_AW'(vc_prow + 2);
    for (int t = 0; t < ember_isa_pkg::TABLE_ROWS; t++)
      par_raddr[(RP+3+t)*PAR_AW +: PAR_AW] = PAR_AW'(vc_trow + 32'(t));
    par_drd = par_rdata[0 +: RP*PAR_B];
    par_m = par_rdata[RP*PAR_B +: PAR_B];
    par_s = par_rdata[(RP+1)*PAR_B +: PAR_B];
    par_b = par_rdata[(RP+2)*PAR_B +: PAR_B];
    par_table = par_rdata[(RP+3)*PAR_B +: 2048];
  end
  ember_sram #(.ROWS(ember_isa_pkg::MEM_PARAM_ROWS), .ROW_BYTES(ember_isa_pkg::MEM_PARAM_ROW_BYTES), .NR(PAR_NR), .NW(RP)) u_par (
      .clk_i, .we_i(par_dwe), .waddr_i(par_dwa), .wdata_i(par_dwd), .raddr_i(par_raddr),
      .rdata_o(par_rdata));

  // The store's rows, packed (row i at byte i * row_bytes; r * row_bytes is at most
  // bytes_per_cycle, which the RTL assumes is at most MAX_ROW_BYTES, docs/rtl/npu.md 5.2).
  always_comb begin
    if (st_mem == 2'(ember_isa_pkg::MEM_ACT_ID)) st_rdata = RB'(act_drd);
    else if (st_mem == 2'(ember_isa_pkg::MEM_ACC_ID)) st_rdata = RB'(acc_drd);
    else if (st_mem == 2'(ember_isa_pkg::MEM_WEIGHT_ID)) st_rdata = RB'(wgt_drd);
    else st_rdata = RB'(par_drd);
  end

  assign isa_hash_o = {ember_isa_pkg::ISA_HASH_HI, ember_isa_pkg::ISA_HASH_LO};

  logic unused_w;
  assign unused_w = ^{ld_re, ld_reqdata, st_we, st_wdata, st_re, imem_addr_w, ld_row, st_row,
                      gm_act_rows, gm_wgt_row, gm_acc_row, vc_sacc, vc_s0, vc_s1, vc_dst, nm_src,
                      nm_dst, nm_c0, nm_c1, nm_c2};
endmodule : ember_npu
