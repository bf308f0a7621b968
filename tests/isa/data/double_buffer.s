; Double-buffered 3x3 convolution (16 -> 16 channels, 8x8 output) for ember-v1, in four
; tiles of two output rows. The load engine fills act buffers A (rows 0..39) and B (rows
; 64..103) alternately; compute frees a buffer with push_prev and load waits for it with
; pop_next. Output rows go through two act buffers (128.., 144..) to the store engine,
; which frees them with push_prev; finish waits for the last store.
.isa "ember-v1"

.region "const" const 0x0 0xa00
.region "in" input 0x10000 0x400
.region "out" output 0x20000 0x400
.io input "x" dtype=int8 layout=nchwc shape=1x16x8x8 scale=0.05 zp=0 offset=0x10000 size=1024
.io output "y" dtype=int8 layout=nchwc shape=1x16x8x8 scale=0.1 zp=-10 offset=0x20000 size=1024

.zero 2304                   ; 0x000: nine 16x16 weight blocks (KH, KW)
.word 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7   ; 0x900: bias
.word 1518500250, 1518500250, 1518500250, 1518500250, 1518500250, 1518500250, 1518500250, 1518500250
.word 1518500250, 1518500250, 1518500250, 1518500250, 1518500250, 1518500250, 1518500250, 1518500250
.word 38, 38, 38, 38, 38, 38, 38, 38, 38, 38, 38, 38, 38, 38, 38, 38

.node "conv1.setup"
  dma.ld sram=weight sram_addr=0 dram_addr=0x0 size0=9 size1=1 size2=1
  dma.ld sram=acc sram_addr=16 dram_addr=0x900 size0=1 size1=1 size2=1
  dma.ld sram=param sram_addr=0 dram_addr=0x940 size0=2 size1=1 size2=1
.node "conv1.load"
  dma.ld sram=act sram_addr=0 dram_addr=0x10000 size0=8 size1=3 size2=1 stride1=8 pad_left=1 pad_right=1 pad_top=1 pad_bottom=0 push_next   ; tile 0 -> A
  dma.ld sram=act sram_addr=64 dram_addr=0x10080 size0=8 size1=4 size2=1 stride1=8 pad_left=1 pad_right=1 pad_top=0 pad_bottom=0 push_next   ; tile 1 -> B
  dma.ld sram=act sram_addr=0 dram_addr=0x10180 size0=8 size1=4 size2=1 stride1=8 pad_left=1 pad_right=1 pad_top=0 pad_bottom=0 push_next pop_next   ; tile 2 -> A
  dma.ld sram=act sram_addr=64 dram_addr=0x10280 size0=8 size1=3 size2=1 stride1=8 pad_left=1 pad_right=1 pad_top=0 pad_bottom=1 push_next pop_next   ; tile 3 -> B
.node "conv1.tile0"
  vmov dst_mem=acc src_mem=acc dst_addr=0 src_addr=16 n0=16 n1=1 dst_s0=1 src_s0=0
  gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=8 n1=2 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1 pop_prev
  gemm act_addr=10 acc_addr=0 wgt_addr=3 n0=8 n1=2 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1
  gemm act_addr=20 acc_addr=0 wgt_addr=6 n0=8 n1=2 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1 push_prev
  requant dst_addr=128 src_addr=0 param_addr=0 zero_point=-10 lo=-10 hi=127 n0=16 n1=1 dst_s0=1 src_s0=1 push_next
.node "conv1.tile1"
  vmov dst_mem=acc src_mem=acc dst_addr=0 src_addr=16 n0=16 n1=1 dst_s0=1 src_s0=0
  gemm act_addr=64 acc_addr=0 wgt_addr=0 n0=8 n1=2 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1 pop_prev
  gemm act_addr=74 acc_addr=0 wgt_addr=3 n0=8 n1=2 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1
  gemm act_addr=84 acc_addr=0 wgt_addr=6 n0=8 n1=2 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1 push_prev
  requant dst_addr=144 src_addr=0 param_addr=0 zero_point=-10 lo=-10 hi=127 n0=16 n1=1 dst_s0=1 src_s0=1 push_next
.node "conv1.tile2"
  vmov dst_mem=acc src_mem=acc dst_addr=0 src_addr=16 n0=16 n1=1 dst_s0=1 src_s0=0
  gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=8 n1=2 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1 pop_prev
  gemm act_addr=10 acc_addr=0 wgt_addr=3 n0=8 n1=2 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1
  gemm act_addr=20 acc_addr=0 wgt_addr=6 n0=8 n1=2 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1
  requant dst_addr=128 src_addr=0 param_addr=0 zero_point=-10 lo=-10 hi=127 n0=16 n1=1 dst_s0=1 src_s0=1 push_next pop_next
.node "conv1.tile3"
  vmov dst_mem=acc src_mem=acc dst_addr=0 src_addr=16 n0=16 n1=1 dst_s0=1 src_s0=0
  gemm act_addr=64 acc_addr=0 wgt_addr=0 n0=8 n1=2 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1 pop_prev
  gemm act_addr=74 acc_addr=0 wgt_addr=3 n0=8 n1=2 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1
  gemm act_addr=84 acc_addr=0 wgt_addr=6 n0=8 n1=2 n2=3 act_s0=1 act_s1=10 act_s2=1 acc_s0=1 acc_s1=8 wgt_s2=1
  requant dst_addr=144 src_addr=0 param_addr=0 zero_point=-10 lo=-10 hi=127 n0=16 n1=1 dst_s0=1 src_s0=1 push_next pop_next
.node "conv1.store"
  dma.st sram=act sram_addr=128 dram_addr=0x20000 size0=16 size1=1 size2=1 pop_prev push_prev
  dma.st sram=act sram_addr=144 dram_addr=0x20100 size0=16 size1=1 size2=1 pop_prev push_prev
  dma.st sram=act sram_addr=128 dram_addr=0x20200 size0=16 size1=1 size2=1 pop_prev
  dma.st sram=act sram_addr=144 dram_addr=0x20300 size0=16 size1=1 size2=1 pop_prev push_prev
.endnode
  finish pop_next
