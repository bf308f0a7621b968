; A self-contained NPU test program for ember-v1: 3x3 convolution (16 -> 16 channels,
; 8x8 output, zero-padded halo from the DMA), bias, requantize + ReLU epilogue and a
; 2x2/2 max-pool, then the 4x4 result goes back to DRAM.
.isa "ember-v1"

.region "const" const 0x0 0x1000
.region "in" input 0x10000 0x400
.region "out" output 0x20000 0x100
.io input "x" dtype=int8 layout=nchwc shape=1x16x8x8 scale=0.05 zp=0 offset=0x10000 size=1024
.io output "y" dtype=int8 layout=nchwc shape=1x16x4x4 scale=0.1 zp=-10 offset=0x20000 size=256

; 0x000: nine 16x16 weight blocks (KH, KW), identity on the centre tap
.zero 1024
.byte 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.zero 1264
; 0x900: bias, one int32 per output channel
.word 100, -100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5
; 0x940: requantization multipliers M, then shifts S (per channel)
.word 1073741824, 1073741824, 1073741824, 1073741824, 1073741824, 1073741824, 1073741824, 1073741824
.word 1073741824, 1073741824, 1073741824, 1073741824, 1073741824, 1073741824, 1073741824, 1073741824
.word 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31

.node "conv1"
  dma.ld sram=weight sram_addr=0 dram_addr=0x0 size0=9 size1=1 size2=1
  dma.ld sram=param sram_addr=0 dram_addr=0x940 size0=2 size1=1 size2=1
  dma.ld sram=acc sram_addr=0 dram_addr=0x900 size0=1 size1=64 size2=1 stride1=0
  dma.ld sram=act sram_addr=0 dram_addr=0x10000 size0=8 size1=8 size2=1 stride1=8 pad_left=1 pad_right=1 pad_top=1 pad_bottom=1 push_next
  gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=8 n1=8 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1 pop_prev
  gemm act_addr=10 acc_addr=0 wgt_addr=3 n0=8 n1=8 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1
  gemm act_addr=20 acc_addr=0 wgt_addr=6 n0=8 n1=8 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1
.node "relu1"
  requant dst_addr=128 src_addr=0 param_addr=0 zero_point=-10 lo=-10 hi=127 n0=64 n1=1 dst_s0=1 src_s0=1
.node "pool1"
  vmov dst_mem=act src_mem=act dst_addr=256 src_addr=128 n0=4 n1=4 dst_s0=1 dst_s1=4 src_s0=2 src_s1=16
  vmax dst_mem=act src_mem=act dst_addr=256 src0_addr=256 src1_addr=129 n0=4 n1=4 dst_s0=1 dst_s1=4 src0_s0=1 src0_s1=4 src1_s0=2 src1_s1=16
  vmax dst_mem=act src_mem=act dst_addr=256 src0_addr=256 src1_addr=136 n0=4 n1=4 dst_s0=1 dst_s1=4 src0_s0=1 src0_s1=4 src1_s0=2 src1_s1=16
  vmax dst_mem=act src_mem=act dst_addr=256 src0_addr=256 src1_addr=137 n0=4 n1=4 dst_s0=1 dst_s1=4 src0_s0=1 src0_s1=4 src1_s0=2 src1_s1=16 push_next
  dma.st sram=act sram_addr=256 dram_addr=0x20000 size0=16 size1=1 size2=1 pop_prev push_prev
.endnode
  finish pop_next
