// Decodes one instruction word with the generated decoder (ember_decode) and lays
// every field role out on one bus, 64 bits a role (ember_npu_pkg::R_*), sign-extended
// for signed roles. Modules slice the roles they use; synthesis drops the rest.
module ember_fields (
    input  logic [ember_isa_pkg::INSTR_BITS-1:0] instr_i,
    output logic valid_o,
    output logic [ember_isa_pkg::CLS_BITS-1:0] cls_o,
    output logic [ember_isa_pkg::VOP_BITS-1:0] op_o,
    output logic [ember_isa_pkg::INSN_IDX_BITS-1:0] insn_o,
    output logic [1:0] unit_o,
    output logic [31:0] t_issue_o,
    output logic [31:0] t_setup_o,
    output logic [31:0] t_cpr_o,
    output logic [31:0] t_pipe_o,
    output logic [31:0] t_cpl_o,
    output logic [31:0] t_cpe_o,
    output logic [31:0] table_off_o,
    output logic bg_o,  // a gemm the array runs in the background (rule E6)
    output logic ovw_o,  // properties.overwrite: the first accumulation writes the products
    output logic bias_o,  // properties.bias: a requantize adds param row param_addr + 2
    output logic [ember_npu_pkg::FIELDS_BITS-1:0] f_o
);

  logic [ember_isa_pkg::ROLE_POP_PREV_BITS-1:0] pop_prev_w;
  logic [ember_isa_pkg::ROLE_POP_NEXT_BITS-1:0] pop_next_w;
  logic [ember_isa_pkg::ROLE_PUSH_PREV_BITS-1:0] push_prev_w;
  logic [ember_isa_pkg::ROLE_PUSH_NEXT_BITS-1:0] push_next_w;
  logic [ember_isa_pkg::ROLE_SRAM_BITS-1:0] sram_w;
  logic has_sram_w;
  logic [ember_isa_pkg::ROLE_SRAM_ADDR_BITS-1:0] sram_addr_w;
  logic has_sram_addr_w;
  logic [ember_isa_pkg::ROLE_DRAM_ADDR_BITS-1:0] dram_addr_w;
  logic has_dram_addr_w;
  logic [ember_isa_pkg::ROLE_SIZE0_BITS-1:0] size0_w;
  logic has_size0_w;
  logic [ember_isa_pkg::ROLE_SIZE1_BITS-1:0] size1_w;
  logic has_size1_w;
  logic [ember_isa_pkg::ROLE_SIZE2_BITS-1:0] size2_w;
  logic has_size2_w;
  logic [ember_isa_pkg::ROLE_STRIDE1_BITS-1:0] stride1_w;
  logic has_stride1_w;
  logic [ember_isa_pkg::ROLE_STRIDE2_BITS-1:0] stride2_w;
  logic has_stride2_w;
  logic [ember_isa_pkg::ROLE_PAD_LEFT_BITS-1:0] pad_left_w;
  logic has_pad_left_w;
  logic [ember_isa_pkg::ROLE_PAD_RIGHT_BITS-1:0] pad_right_w;
  logic has_pad_right_w;
  logic [ember_isa_pkg::ROLE_PAD_TOP_BITS-1:0] pad_top_w;
  logic has_pad_top_w;
  logic [ember_isa_pkg::ROLE_PAD_BOTTOM_BITS-1:0] pad_bottom_w;
  logic has_pad_bottom_w;
  logic [ember_isa_pkg::ROLE_PAD_VALUE_BITS-1:0] pad_value_w;
  logic has_pad_value_w;
  logic [ember_isa_pkg::ROLE_RESET_BITS-1:0] reset_w;
  logic has_reset_w;
  logic [ember_isa_pkg::ROLE_ACT_ADDR_BITS-1:0] act_addr_w;
  logic has_act_addr_w;
  logic [ember_isa_pkg::ROLE_ACC_ADDR_BITS-1:0] acc_addr_w;
  logic has_acc_addr_w;
  logic [ember_isa_pkg::ROLE_WGT_ADDR_BITS-1:0] wgt_addr_w;
  logic has_wgt_addr_w;
  logic [ember_isa_pkg::ROLE_N0_BITS-1:0] n0_w;
  logic has_n0_w;
  logic [ember_isa_pkg::ROLE_N1_BITS-1:0] n1_w;
  logic has_n1_w;
  logic [ember_isa_pkg::ROLE_N2_BITS-1:0] n2_w;
  logic has_n2_w;
  logic [ember_isa_pkg::ROLE_ACT_S0_BITS-1:0] act_s0_w;
  logic has_act_s0_w;
  logic [ember_isa_pkg::ROLE_ACT_S1_BITS-1:0] act_s1_w;
  logic has_act_s1_w;
  logic [ember_isa_pkg::ROLE_ACT_S2_BITS-1:0] act_s2_w;
  logic has_act_s2_w;
  logic [ember_isa_pkg::ROLE_ACC_S0_BITS-1:0] acc_s0_w;
  logic has_acc_s0_w;
  logic [ember_isa_pkg::ROLE_ACC_S1_BITS-1:0] acc_s1_w;
  logic has_acc_s1_w;
  logic [ember_isa_pkg::ROLE_ACC_S2_BITS-1:0] acc_s2_w;
  logic has_acc_s2_w;
  logic [ember_isa_pkg::ROLE_WGT_S2_BITS-1:0] wgt_s2_w;
  logic has_wgt_s2_w;
  logic [ember_isa_pkg::ROLE_DST_MEM_BITS-1:0] dst_mem_w;
  logic has_dst_mem_w;
  logic [ember_isa_pkg::ROLE_SRC_MEM_BITS-1:0] src_mem_w;
  logic has_src_mem_w;
  logic [ember_isa_pkg::ROLE_DST_ADDR_BITS-1:0] dst_addr_w;
  logic has_dst_addr_w;
  logic [ember_isa_pkg::ROLE_SRC_ADDR_BITS-1:0] src_addr_w;
  logic has_src_addr_w;
  logic [ember_isa_pkg::ROLE_SRC0_ADDR_BITS-1:0] src0_addr_w;
  logic has_src0_addr_w;
  logic [ember_isa_pkg::ROLE_SRC1_ADDR_BITS-1:0] src1_addr_w;
  logic has_src1_addr_w;
  logic [ember_isa_pkg::ROLE_DST_S0_BITS-1:0] dst_s0_w;
  logic has_dst_s0_w;
  logic [ember_isa_pkg::ROLE_DST_S1_BITS-1:0] dst_s1_w;
  logic has_dst_s1_w;
  logic [ember_isa_pkg::ROLE_SRC_S0_BITS-1:0] src_s0_w;
  logic has_src_s0_w;
  logic [ember_isa_pkg::ROLE_SRC_S1_BITS-1:0] src_s1_w;
  logic has_src_s1_w;
  logic [ember_isa_pkg::ROLE_SRC0_S0_BITS-1:0] src0_s0_w;
  logic has_src0_s0_w;
  logic [ember_isa_pkg::ROLE_SRC0_S1_BITS-1:0] src0_s1_w;
  logic has_src0_s1_w;
  logic [ember_isa_pkg::ROLE_SRC1_S0_BITS-1:0] src1_s0_w;
  logic has_src1_s0_w;
  logic [ember_isa_pkg::ROLE_SRC1_S1_BITS-1:0] src1_s1_w;
  logic has_src1_s1_w;
  logic [ember_isa_pkg::ROLE_IMM0_BITS-1:0] imm0_w;
  logic has_imm0_w;
  logic [ember_isa_pkg::ROLE_IMM1_BITS-1:0] imm1_w;
  logic has_imm1_w;
  logic [ember_isa_pkg::ROLE_PARAM_ADDR_BITS-1:0] param_addr_w;
  logic has_param_addr_w;
  logic [ember_isa_pkg::ROLE_ZERO_POINT_BITS-1:0] zero_point_w;
  logic has_zero_point_w;
  logic [ember_isa_pkg::ROLE_LO_BITS-1:0] lo_w;
  logic has_lo_w;
  logic [ember_isa_pkg::ROLE_HI_BITS-1:0] hi_w;
  logic has_hi_w;
  logic [ember_isa_pkg::ROLE_TABLE_BITS-1:0] table_w;
  logic has_table_w;
  logic [ember_isa_pkg::ROLE_ENGINE_BITS-1:0] engine_w;
  logic has_engine_w;
  logic [ember_isa_pkg::ROLE_BLOCK_ADDR_BITS-1:0] block_addr_w;
  logic has_block_addr_w;
  logic [ember_isa_pkg::ROLE_LEN_BITS-1:0] len_w;
  logic has_len_w;
  logic [ember_isa_pkg::ROLE_DST_SB_BITS-1:0] dst_sb_w;
  logic has_dst_sb_w;
  logic [ember_isa_pkg::ROLE_SRC_SB_BITS-1:0] src_sb_w;
  logic has_src_sb_w;
  logic [ember_isa_pkg::ROLE_KH_BITS-1:0] kh_w;
  logic has_kh_w;
  logic [ember_isa_pkg::ROLE_KW_BITS-1:0] kw_w;
  logic has_kw_w;
  logic [ember_isa_pkg::ROLE_TAP_S0_BITS-1:0] tap_s0_w;
  logic has_tap_s0_w;
  logic [ember_isa_pkg::ROLE_TAP_S1_BITS-1:0] tap_s1_w;
  logic has_tap_s1_w;
  logic known_w;

  ember_decode u_dec (
    .instr_i(instr_i),
    .valid_o(valid_o),
    .known_o(known_w),
    .cls_o(cls_o),
    .insn_o(insn_o),
    .op_o(op_o),
    .unit_o(unit_o),
    .t_issue_o(t_issue_o),
    .t_setup_o(t_setup_o),
    .t_cpr_o(t_cpr_o),
    .t_pipe_o(t_pipe_o),
    .t_cpl_o(t_cpl_o),
    .t_cpe_o(t_cpe_o),
    .table_off_o(table_off_o),
    .bg_o(bg_o),
    .ovw_o(ovw_o),
    .bias_o(bias_o),
    .pop_prev_o(pop_prev_w),
    .pop_next_o(pop_next_w),
    .push_prev_o(push_prev_w),
    .push_next_o(push_next_w),
    .sram_o(sram_w),
    .has_sram_o(has_sram_w),
    .sram_addr_o(sram_addr_w),
    .has_sram_addr_o(has_sram_addr_w),
    .dram_addr_o(dram_addr_w),
    .has_dram_addr_o(has_dram_addr_w),
    .size0_o(size0_w),
    .has_size0_o(has_size0_w),
    .size1_o(size1_w),
    .has_size1_o(has_size1_w),
    .size2_o(size2_w),
    .has_size2_o(has_size2_w),
    .stride1_o(stride1_w),
    .has_stride1_o(has_stride1_w),
    .stride2_o(stride2_w),
    .has_stride2_o(has_stride2_w),
    .pad_left_o(pad_left_w),
    .has_pad_left_o(has_pad_left_w),
    .pad_right_o(pad_right_w),
    .has_pad_right_o(has_pad_right_w),
    .pad_top_o(pad_top_w),
    .has_pad_top_o(has_pad_top_w),
    .pad_bottom_o(pad_bottom_w),
    .has_pad_bottom_o(has_pad_bottom_w),
    .pad_value_o(pad_value_w),
    .has_pad_value_o(has_pad_value_w),
    .reset_o(reset_w),
    .has_reset_o(has_reset_w),
    .act_addr_o(act_addr_w),
    .has_act_addr_o(has_act_addr_w),
    .acc_addr_o(acc_addr_w),
    .has_acc_addr_o(has_acc_addr_w),
    .wgt_addr_o(wgt_addr_w),
    .has_wgt_addr_o(has_wgt_addr_w),
    .n0_o(n0_w),
    .has_n0_o(has_n0_w),
    .n1_o(n1_w),
    .has_n1_o(has_n1_w),
    .n2_o(n2_w),
    .has_n2_o(has_n2_w),
    .act_s0_o(act_s0_w),
    .has_act_s0_o(has_act_s0_w),
    .act_s1_o(act_s1_w),
    .has_act_s1_o(has_act_s1_w),
    .act_s2_o(act_s2_w),
    .has_act_s2_o(has_act_s2_w),
    .acc_s0_o(acc_s0_w),
    .has_acc_s0_o(has_acc_s0_w),
    .acc_s1_o(acc_s1_w),
    .has_acc_s1_o(has_acc_s1_w),
    .acc_s2_o(acc_s2_w),
    .has_acc_s2_o(has_acc_s2_w),
    .wgt_s2_o(wgt_s2_w),
    .has_wgt_s2_o(has_wgt_s2_w),
    .dst_mem_o(dst_mem_w),
    .has_dst_mem_o(has_dst_mem_w),
    .src_mem_o(src_mem_w),
    .has_src_mem_o(has_src_mem_w),
    .dst_addr_o(dst_addr_w),
    .has_dst_addr_o(has_dst_addr_w),
    .src_addr_o(src_addr_w),
    .has_src_addr_o(has_src_addr_w),
    .src0_addr_o(src0_addr_w),
    .has_src0_addr_o(has_src0_addr_w),
    .src1_addr_o(src1_addr_w),
    .has_src1_addr_o(has_src1_addr_w),
    .dst_s0_o(dst_s0_w),
    .has_dst_s0_o(has_dst_s0_w),
    .dst_s1_o(dst_s1_w),
    .has_dst_s1_o(has_dst_s1_w),
    .src_s0_o(src_s0_w),
    .has_src_s0_o(has_src_s0_w),
    .src_s1_o(src_s1_w),
    .has_src_s1_o(has_src_s1_w),
    .src0_s0_o(src0_s0_w),
    .has_src0_s0_o(has_src0_s0_w),
    .src0_s1_o(src0_s1_w),
    .has_src0_s1_o(has_src0_s1_w),
    .src1_s0_o(src1_s0_w),
    .has_src1_s0_o(has_src1_s0_w),
    .src1_s1_o(src1_s1_w),
    .has_src1_s1_o(has_src1_s1_w),
    .imm0_o(imm0_w),
    .has_imm0_o(has_imm0_w),
    .imm1_o(imm1_w),
    .has_imm1_o(has_imm1_w),
    .param_addr_o(param_addr_w),
    .has_param_addr_o(has_param_addr_w),
    .zero_point_o(zero_point_w),
    .has_zero_point_o(has_zero_point_w),
    .lo_o(lo_w),
    .has_lo_o(has_lo_w),
    .hi_o(hi_w),
    .has_hi_o(has_hi_w),
    .table_o(table_w),
    .has_table_o(has_table_w),
    .block_addr_o(block_addr_w),
    .has_block_addr_o(has_block_addr_w),
    .len_o(len_w),
    .has_len_o(has_len_w),
    .dst_sb_o(dst_sb_w),
    .has_dst_sb_o(has_dst_sb_w),
    .src_sb_o(src_sb_w),
    .has_src_sb_o(has_src_sb_w),
    .kh_o(kh_w),
    .has_kh_o(has_kh_w),
    .kw_o(kw_w),
    .has_kw_o(has_kw_w),
    .tap_s0_o(tap_s0_w),
    .has_tap_s0_o(has_tap_s0_w),
    .tap_s1_o(tap_s1_w),
    .has_tap_s1_o(has_tap_s1_w),
    .engine_o(engine_w),
    .has_engine_o(has_engine_w)
  );

  // has_* and known only matter to the decoder's own test; every field of an absent
  // role is 0, which is what the engines expect.
  logic unused_w;
  assign unused_w = known_w ^ has_sram_w ^ has_sram_addr_w ^ has_dram_addr_w ^ has_size0_w ^ has_size1_w ^ has_size2_w ^ has_stride1_w ^ has_stride2_w ^ has_pad_left_w ^ has_pad_right_w ^ has_pad_top_w ^ has_pad_bottom_w ^ has_pad_value_w ^ has_reset_w ^ has_act_addr_w ^ has_acc_addr_w ^ has_wgt_addr_w ^ has_n0_w ^ has_n1_w ^ has_n2_w ^ has_act_s0_w ^ has_act_s1_w ^ has_act_s2_w ^ has_acc_s0_w ^ has_acc_s1_w ^ has_acc_s2_w ^ has_wgt_s2_w ^ has_dst_mem_w ^ has_src_mem_w ^ has_dst_addr_w ^ has_src_addr_w ^ has_src0_addr_w ^ has_src1_addr_w ^ has_dst_s0_w ^ has_dst_s1_w ^ has_src_s0_w ^ has_src_s1_w ^ has_src0_s0_w ^ has_src0_s1_w ^ has_src1_s0_w ^ has_src1_s1_w ^ has_imm0_w ^ has_imm1_w ^ has_param_addr_w ^ has_zero_point_w ^ has_lo_w ^ has_hi_w ^ has_table_w ^ has_engine_w ^ has_block_addr_w ^ has_len_w ^ has_dst_sb_w ^ has_src_sb_w ^ has_kh_w ^ has_kw_w ^ has_tap_s0_w ^ has_tap_s1_w;

  always_comb begin
    f_o[64*ember_npu_pkg::R_POP_PREV +: 64] = ember_isa_pkg::ROLE_POP_PREV_SIGNED ? 64'($signed(pop_prev_w)) : 64'(pop_prev_w);
    f_o[64*ember_npu_pkg::R_POP_NEXT +: 64] = ember_isa_pkg::ROLE_POP_NEXT_SIGNED ? 64'($signed(pop_next_w)) : 64'(pop_next_w);
    f_o[64*ember_npu_pkg::R_PUSH_PREV +: 64] = ember_isa_pkg::ROLE_PUSH_PREV_SIGNED ? 64'($signed(push_prev_w)) : 64'(push_prev_w);
    f_o[64*ember_npu_pkg::R_PUSH_NEXT +: 64] = ember_isa_pkg::ROLE_PUSH_NEXT_SIGNED ? 64'($signed(push_next_w)) : 64'(push_next_w);
    f_o[64*ember_npu_pkg::R_SRAM +: 64] = ember_isa_pkg::ROLE_SRAM_SIGNED ? 64'($signed(sram_w)) : 64'(sram_w);
    f_o[64*ember_npu_pkg::R_SRAM_ADDR +: 64] = ember_isa_pkg::ROLE_SRAM_ADDR_SIGNED ? 64'($signed(sram_addr_w)) : 64'(sram_addr_w);
    f_o[64*ember_npu_pkg::R_DRAM_ADDR +: 64] = ember_isa_pkg::ROLE_DRAM_ADDR_SIGNED ? 64'($signed(dram_addr_w)) : 64'(dram_addr_w);
    f_o[64*ember_npu_pkg::R_SIZE0 +: 64] = ember_isa_pkg::ROLE_SIZE0_SIGNED ? 64'($signed(size0_w)) : 64'(size0_w);
    f_o[64*ember_npu_pkg::R_SIZE1 +: 64] = ember_isa_pkg::ROLE_SIZE1_SIGNED ? 64'($signed(size1_w)) : 64'(size1_w);
    f_o[64*ember_npu_pkg::R_SIZE2 +: 64] = ember_isa_pkg::ROLE_SIZE2_SIGNED ? 64'($signed(size2_w)) : 64'(size2_w);
    f_o[64*ember_npu_pkg::R_STRIDE1 +: 64] = ember_isa_pkg::ROLE_STRIDE1_SIGNED ? 64'($signed(stride1_w)) : 64'(stride1_w);
    f_o[64*ember_npu_pkg::R_STRIDE2 +: 64] = ember_isa_pkg::ROLE_STRIDE2_SIGNED ? 64'($signed(stride2_w)) : 64'(stride2_w);
    f_o[64*ember_npu_pkg::R_PAD_LEFT +: 64] = ember_isa_pkg::ROLE_PAD_LEFT_SIGNED ? 64'($signed(pad_left_w)) : 64'(pad_left_w);
    f_o[64*ember_npu_pkg::R_PAD_RIGHT +: 64] = ember_isa_pkg::ROLE_PAD_RIGHT_SIGNED ? 64'($signed(pad_right_w)) : 64'(pad_right_w);
    f_o[64*ember_npu_pkg::R_PAD_TOP +: 64] = ember_isa_pkg::ROLE_PAD_TOP_SIGNED ? 64'($signed(pad_top_w)) : 64'(pad_top_w);
    f_o[64*ember_npu_pkg::R_PAD_BOTTOM +: 64] = ember_isa_pkg::ROLE_PAD_BOTTOM_SIGNED ? 64'($signed(pad_bottom_w)) : 64'(pad_bottom_w);
    f_o[64*ember_npu_pkg::R_PAD_VALUE +: 64] = ember_isa_pkg::ROLE_PAD_VALUE_SIGNED ? 64'($signed(pad_value_w)) : 64'(pad_value_w);
    f_o[64*ember_npu_pkg::R_RESET +: 64] = ember_isa_pkg::ROLE_RESET_SIGNED ? 64'($signed(reset_w)) : 64'(reset_w);
    f_o[64*ember_npu_pkg::R_ACT_ADDR +: 64] = ember_isa_pkg::ROLE_ACT_ADDR_SIGNED ? 64'($signed(act_addr_w)) : 64'(act_addr_w);
    f_o[64*ember_npu_pkg::R_ACC_ADDR +: 64] = ember_isa_pkg::ROLE_ACC_ADDR_SIGNED ? 64'($signed(acc_addr_w)) : 64'(acc_addr_w);
    f_o[64*ember_npu_pkg::R_WGT_ADDR +: 64] = ember_isa_pkg::ROLE_WGT_ADDR_SIGNED ? 64'($signed(wgt_addr_w)) : 64'(wgt_addr_w);
    f_o[64*ember_npu_pkg::R_N0 +: 64] = ember_isa_pkg::ROLE_N0_SIGNED ? 64'($signed(n0_w)) : 64'(n0_w);
    f_o[64*ember_npu_pkg::R_N1 +: 64] = ember_isa_pkg::ROLE_N1_SIGNED ? 64'($signed(n1_w)) : 64'(n1_w);
    f_o[64*ember_npu_pkg::R_N2 +: 64] = ember_isa_pkg::ROLE_N2_SIGNED ? 64'($signed(n2_w)) : 64'(n2_w);
    f_o[64*ember_npu_pkg::R_ACT_S0 +: 64] = ember_isa_pkg::ROLE_ACT_S0_SIGNED ? 64'($signed(act_s0_w)) : 64'(act_s0_w);
    f_o[64*ember_npu_pkg::R_ACT_S1 +: 64] = ember_isa_pkg::ROLE_ACT_S1_SIGNED ? 64'($signed(act_s1_w)) : 64'(act_s1_w);
    f_o[64*ember_npu_pkg::R_ACT_S2 +: 64] = ember_isa_pkg::ROLE_ACT_S2_SIGNED ? 64'($signed(act_s2_w)) : 64'(act_s2_w);
    f_o[64*ember_npu_pkg::R_ACC_S0 +: 64] = ember_isa_pkg::ROLE_ACC_S0_SIGNED ? 64'($signed(acc_s0_w)) : 64'(acc_s0_w);
    f_o[64*ember_npu_pkg::R_ACC_S1 +: 64] = ember_isa_pkg::ROLE_ACC_S1_SIGNED ? 64'($signed(acc_s1_w)) : 64'(acc_s1_w);
    f_o[64*ember_npu_pkg::R_ACC_S2 +: 64] = ember_isa_pkg::ROLE_ACC_S2_SIGNED ? 64'($signed(acc_s2_w)) : 64'(acc_s2_w);
    f_o[64*ember_npu_pkg::R_WGT_S2 +: 64] = ember_isa_pkg::ROLE_WGT_S2_SIGNED ? 64'($signed(wgt_s2_w)) : 64'(wgt_s2_w);
    f_o[64*ember_npu_pkg::R_DST_MEM +: 64] = ember_isa_pkg::ROLE_DST_MEM_SIGNED ? 64'($signed(dst_mem_w)) : 64'(dst_mem_w);
    f_o[64*ember_npu_pkg::R_SRC_MEM +: 64] = ember_isa_pkg::ROLE_SRC_MEM_SIGNED ? 64'($signed(src_mem_w)) : 64'(src_mem_w);
    f_o[64*ember_npu_pkg::R_DST_ADDR +: 64] = ember_isa_pkg::ROLE_DST_ADDR_SIGNED ? 64'($signed(dst_addr_w)) : 64'(dst_addr_w);
    f_o[64*ember_npu_pkg::R_SRC_ADDR +: 64] = ember_isa_pkg::ROLE_SRC_ADDR_SIGNED ? 64'($signed(src_addr_w)) : 64'(src_addr_w);
    f_o[64*ember_npu_pkg::R_SRC0_ADDR +: 64] = ember_isa_pkg::ROLE_SRC0_ADDR_SIGNED ? 64'($signed(src0_addr_w)) : 64'(src0_addr_w);
    f_o[64*ember_npu_pkg::R_SRC1_ADDR +: 64] = ember_isa_pkg::ROLE_SRC1_ADDR_SIGNED ? 64'($signed(src1_addr_w)) : 64'(src1_addr_w);
    f_o[64*ember_npu_pkg::R_DST_S0 +: 64] = ember_isa_pkg::ROLE_DST_S0_SIGNED ? 64'($signed(dst_s0_w)) : 64'(dst_s0_w);
    f_o[64*ember_npu_pkg::R_DST_S1 +: 64] = ember_isa_pkg::ROLE_DST_S1_SIGNED ? 64'($signed(dst_s1_w)) : 64'(dst_s1_w);
    f_o[64*ember_npu_pkg::R_SRC_S0 +: 64] = ember_isa_pkg::ROLE_SRC_S0_SIGNED ? 64'($signed(src_s0_w)) : 64'(src_s0_w);
    f_o[64*ember_npu_pkg::R_SRC_S1 +: 64] = ember_isa_pkg::ROLE_SRC_S1_SIGNED ? 64'($signed(src_s1_w)) : 64'(src_s1_w);
    f_o[64*ember_npu_pkg::R_SRC0_S0 +: 64] = ember_isa_pkg::ROLE_SRC0_S0_SIGNED ? 64'($signed(src0_s0_w)) : 64'(src0_s0_w);
    f_o[64*ember_npu_pkg::R_SRC0_S1 +: 64] = ember_isa_pkg::ROLE_SRC0_S1_SIGNED ? 64'($signed(src0_s1_w)) : 64'(src0_s1_w);
    f_o[64*ember_npu_pkg::R_SRC1_S0 +: 64] = ember_isa_pkg::ROLE_SRC1_S0_SIGNED ? 64'($signed(src1_s0_w)) : 64'(src1_s0_w);
    f_o[64*ember_npu_pkg::R_SRC1_S1 +: 64] = ember_isa_pkg::ROLE_SRC1_S1_SIGNED ? 64'($signed(src1_s1_w)) : 64'(src1_s1_w);
    f_o[64*ember_npu_pkg::R_IMM0 +: 64] = ember_isa_pkg::ROLE_IMM0_SIGNED ? 64'($signed(imm0_w)) : 64'(imm0_w);
    f_o[64*ember_npu_pkg::R_IMM1 +: 64] = ember_isa_pkg::ROLE_IMM1_SIGNED ? 64'($signed(imm1_w)) : 64'(imm1_w);
    f_o[64*ember_npu_pkg::R_PARAM_ADDR +: 64] = ember_isa_pkg::ROLE_PARAM_ADDR_SIGNED ? 64'($signed(param_addr_w)) : 64'(param_addr_w);
    f_o[64*ember_npu_pkg::R_ZERO_POINT +: 64] = ember_isa_pkg::ROLE_ZERO_POINT_SIGNED ? 64'($signed(zero_point_w)) : 64'(zero_point_w);
    f_o[64*ember_npu_pkg::R_LO +: 64] = ember_isa_pkg::ROLE_LO_SIGNED ? 64'($signed(lo_w)) : 64'(lo_w);
    f_o[64*ember_npu_pkg::R_HI +: 64] = ember_isa_pkg::ROLE_HI_SIGNED ? 64'($signed(hi_w)) : 64'(hi_w);
    f_o[64*ember_npu_pkg::R_TABLE +: 64] = ember_isa_pkg::ROLE_TABLE_SIGNED ? 64'($signed(table_w)) : 64'(table_w);
    f_o[64*ember_npu_pkg::R_ENGINE +: 64] = ember_isa_pkg::ROLE_ENGINE_SIGNED ? 64'($signed(engine_w)) : 64'(engine_w);
    f_o[64*ember_npu_pkg::R_BLOCK_ADDR +: 64] = ember_isa_pkg::ROLE_BLOCK_ADDR_SIGNED ? 64'($signed(block_addr_w)) : 64'(block_addr_w);
    f_o[64*ember_npu_pkg::R_LEN +: 64] = ember_isa_pkg::ROLE_LEN_SIGNED ? 64'($signed(len_w)) : 64'(len_w);
    f_o[64*ember_npu_pkg::R_DST_SB +: 64] = ember_isa_pkg::ROLE_DST_SB_SIGNED ? 64'($signed(dst_sb_w)) : 64'(dst_sb_w);
    f_o[64*ember_npu_pkg::R_SRC_SB +: 64] = ember_isa_pkg::ROLE_SRC_SB_SIGNED ? 64'($signed(src_sb_w)) : 64'(src_sb_w);
    f_o[64*ember_npu_pkg::R_KH +: 64] = ember_isa_pkg::ROLE_KH_SIGNED ? 64'($signed(kh_w)) : 64'(kh_w);
    f_o[64*ember_npu_pkg::R_KW +: 64] = ember_isa_pkg::ROLE_KW_SIGNED ? 64'($signed(kw_w)) : 64'(kw_w);
    f_o[64*ember_npu_pkg::R_TAP_S0 +: 64] = ember_isa_pkg::ROLE_TAP_S0_SIGNED ? 64'($signed(tap_s0_w)) : 64'(tap_s0_w);
    f_o[64*ember_npu_pkg::R_TAP_S1 +: 64] = ember_isa_pkg::ROLE_TAP_S1_SIGNED ? 64'($signed(tap_s1_w)) : 64'(tap_s1_w);
  end
endmodule : ember_fields
