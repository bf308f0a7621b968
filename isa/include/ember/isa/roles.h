// The names every part of Ember uses to talk about the ISA's semantic classes: class
// names, field roles, timing and energy keys, the SRAMs the classes require. They are
// compile-time constants so that the simulator, the compiler, the generators and the
// RTL harness cannot drift apart by a typo; a misspelt constant does not compile, a
// misspelt string literal only fails at run time.
#pragma once

namespace ember::isa {

/// Names of the built-in semantic classes (the JSON's "class" values).
namespace cls {
inline constexpr char kDmaLoad[] = "dma-load";
inline constexpr char kDmaStore[] = "dma-store";
inline constexpr char kGemm[] = "gemm";
inline constexpr char kVectorBinary[] = "vector-binary";
inline constexpr char kVectorUnary[] = "vector-unary";
inline constexpr char kRequantize[] = "requantize";
inline constexpr char kQuantizedAdd[] = "quantized-add";
inline constexpr char kLut[] = "lut";
inline constexpr char kNormalize[] = "normalize";
inline constexpr char kSync[] = "sync";
inline constexpr char kHalt[] = "halt";
inline constexpr char kDepthwise[] = "depthwise";
} // namespace cls

/// Field roles (the assembly keys). docs/isa/instructions.md section 2 says what each means.
namespace role {
// Dependency tokens (every class).
inline constexpr char kPopPrev[] = "pop_prev";
inline constexpr char kPopNext[] = "pop_next";
inline constexpr char kPushPrev[] = "push_prev";
inline constexpr char kPushNext[] = "push_next";
// DMA.
inline constexpr char kSram[] = "sram";
inline constexpr char kSramAddr[] = "sram_addr";
inline constexpr char kDramAddr[] = "dram_addr";
inline constexpr char kSize0[] = "size0";
inline constexpr char kSize1[] = "size1";
inline constexpr char kSize2[] = "size2";
inline constexpr char kStride1[] = "stride1";
inline constexpr char kStride2[] = "stride2";
inline constexpr char kPadLeft[] = "pad_left";
inline constexpr char kPadRight[] = "pad_right";
inline constexpr char kPadTop[] = "pad_top";
inline constexpr char kPadBottom[] = "pad_bottom";
inline constexpr char kPadValue[] = "pad_value";
// Loops (gemm, vector classes).
inline constexpr char kN0[] = "n0";
inline constexpr char kN1[] = "n1";
inline constexpr char kN2[] = "n2";
// GEMM.
inline constexpr char kReset[] = "reset";
inline constexpr char kActAddr[] = "act_addr";
inline constexpr char kAccAddr[] = "acc_addr";
inline constexpr char kWgtAddr[] = "wgt_addr";
inline constexpr char kActS0[] = "act_s0";
inline constexpr char kActS1[] = "act_s1";
inline constexpr char kActS2[] = "act_s2";
inline constexpr char kAccS0[] = "acc_s0";
inline constexpr char kAccS1[] = "acc_s1";
inline constexpr char kAccS2[] = "acc_s2";
inline constexpr char kWgtS2[] = "wgt_s2";
// Depthwise: the kernel window of each output row.
inline constexpr char kKh[] = "kh";
inline constexpr char kKw[] = "kw";
inline constexpr char kTapS0[] = "tap_s0";
inline constexpr char kTapS1[] = "tap_s1";
// Vector classes.
inline constexpr char kDstMem[] = "dst_mem";
inline constexpr char kSrcMem[] = "src_mem";
inline constexpr char kDstAddr[] = "dst_addr";
inline constexpr char kSrcAddr[] = "src_addr";
inline constexpr char kSrc0Addr[] = "src0_addr";
inline constexpr char kSrc1Addr[] = "src1_addr";
inline constexpr char kDstS0[] = "dst_s0";
inline constexpr char kDstS1[] = "dst_s1";
inline constexpr char kSrcS0[] = "src_s0";
inline constexpr char kSrcS1[] = "src_s1";
inline constexpr char kSrc0S0[] = "src0_s0";
inline constexpr char kSrc0S1[] = "src0_s1";
inline constexpr char kSrc1S0[] = "src1_s0";
inline constexpr char kSrc1S1[] = "src1_s1";
inline constexpr char kImm0[] = "imm0";
inline constexpr char kImm1[] = "imm1";
// Requantize and LUT.
inline constexpr char kParamAddr[] = "param_addr";
inline constexpr char kZeroPoint[] = "zero_point";
inline constexpr char kLo[] = "lo";
inline constexpr char kHi[] = "hi";
inline constexpr char kTable[] = "table";
// Normalize (their own roles, so that the vector classes' fields stay as narrow as
// their descriptions make them).
inline constexpr char kLen[] = "len";
inline constexpr char kDstSb[] = "dst_sb";
inline constexpr char kSrcSb[] = "src_sb";
inline constexpr char kBlockAddr[] = "block_addr";
// Sync.
inline constexpr char kEngine[] = "engine";
} // namespace role

/// Keys of an instruction's `timing` object (cycles).
namespace timing_key {
inline constexpr char kIssue[] = "issue";
inline constexpr char kSetup[] = "setup";
inline constexpr char kCyclesPerRow[] = "cycles_per_row";
inline constexpr char kPipelineLatency[] = "pipeline_latency";
inline constexpr char kCyclesPerElement[] = "cycles_per_element";
inline constexpr char kCyclesPerLine[] = "cycles_per_line";
} // namespace timing_key

/// Keys of an instruction's `energy` object (pJ).
namespace energy_key {
inline constexpr char kIssue[] = "issue";
inline constexpr char kPerBurst[] = "per_burst";
inline constexpr char kPerLane[] = "per_lane";
inline constexpr char kPerElement[] = "per_element";
} // namespace energy_key

/// The SRAMs the built-in classes name (hardware.memories keys).
namespace mem {
inline constexpr char kAct[] = "act";
inline constexpr char kWeight[] = "weight";
inline constexpr char kAcc[] = "acc";
inline constexpr char kParam[] = "param";
} // namespace mem

} // namespace ember::isa
