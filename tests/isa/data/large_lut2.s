; For isa/examples/ember-v1-large.json: 32-lane rows, 160-bit instructions, and the
; vendor's second LUT instruction (lut2), with no code change in the toolchain.
.isa "ember-v1-large"

.region "const" const 0x0 0x4000
.region "in" input 0x100000 0x2000
.region "out" output 0x200000 0x2000
.io input "x" dtype=int8 layout=nchwc shape=1x32x16x16 scale=0.02 zp=3 offset=0x100000 size=8192
.io output "y" dtype=int8 layout=nchwc shape=1x32x16x16 scale=0.02 zp=3 offset=0x200000 size=8192

.byte 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f
.zero 16368

.node "act.tables"
  dma.ld sram=param sram_addr=0 dram_addr=0x0 size0=128 size1=1 size2=1
  dma.ld sram=act sram_addr=0 dram_addr=0x100000 size0=256 size1=1 size2=1 push_next
.node "act.apply"
  lut table=0 dst_addr=1024 src_addr=0 n0=256 n1=1 dst_s0=1 src_s0=1 pop_prev
  lut2 table=31 dst_addr=2048 src_addr=1024 n0=256 n1=1 dst_s0=1 src_s0=1
  vmax dst_mem=act src_mem=act dst_addr=2048 src0_addr=2048 src1_addr=0 n0=256 n1=1 dst_s0=1 src0_s0=1 src1_s0=1 push_next
.node "act.store"
  dma.st sram=act sram_addr=2048 dram_addr=0x200000 size0=256 size1=1 size2=1 pop_prev push_prev
.endnode
  sync engine=compute pop_next
  finish
