// The NPU as the backend sees it: everything read from the ISA description (instructions
// found by semantic class, lane count, SRAM sizes, field limits, timing formulas of
// docs/isa/timing-energy.md section 3). No opcode, size or latency is a constant in the backend.
#pragma once

#include "ember/isa/description.h"
#include "ember/isa/instruction.h"
#include "ember/isa/timing.h"

#include <cstdint>
#include <string>
#include <utility>

namespace ember::npu {

/// Which SRAM an operand lives in.
enum class Mem { Act, Weight, Acc, Param };

/// The description plus the lookups every layer needs.
class Target {
public:
  /// Finds every instruction the backend uses; ember::Error naming the description and
  /// the missing semantic class (or vector op) if one is absent.
  explicit Target(const isa::IsaDescription& isa);

  const isa::IsaDescription& isa() const { return isa_; }
  /// L: vector lanes = MAC rows = MAC cols = act row bytes.
  int64_t lanes() const { return lanes_; }
  /// Rows of an SRAM.
  int64_t rows(Mem m) const;
  /// Bytes of one row of an SRAM.
  int64_t rowBytes(Mem m) const;
  /// The description's id of an SRAM (the value of memory-select fields).
  int64_t memId(Mem m) const;

  const isa::InstrDesc& dmaLoad() const { return *dmaLoad_; }
  const isa::InstrDesc& dmaStore() const { return *dmaStore_; }
  /// The gemm the backend emits where the engine must wait for the array: the first
  /// without properties.background (or, if every gemm has it, a background one that
  /// Program follows with a join, gemmNeedsJoin()).
  const isa::InstrDesc& gemm() const { return *gemm_; }
  /// A gemm with properties.background (docs/simulator.md rule E6), or nullptr: the
  /// convolutions then requantize block k while the array computes block k + 1.
  const isa::InstrDesc* gemmBackground() const { return gemmBg_; }
  /// The description's depthwise instruction (docs/isa/instructions.md section 2.12), or nullptr:
  /// depthwise convolutions then run as diagonal gemm blocks.
  const isa::InstrDesc* depthwise() const { return dw_; }
  /// True when gemm() is itself a background gemm: every gemm() is then followed by a
  /// compute sync (a join), so that it behaves as a foreground one.
  bool gemmNeedsJoin() const { return gemm_->background; }
  const isa::InstrDesc& requant() const { return *requant_; }
  /// Whether convolutions take their bias in the requantize (properties.bias) and start
  /// their accumulators with an overwriting gemm or depthwise instruction
  /// (properties.overwrite) instead of copying the bias into them: the description has a
  /// bias requantize and an overwriting instruction for every array instruction the
  /// convolutions emit, each holding what the plain one's fields hold.
  bool biasInRequant() const { return requantBias_ != nullptr; }
  /// The requantize with properties.bias (biasInRequant()).
  const isa::InstrDesc& requantBias() const { return *requantBias_; }
  /// The overwriting twin of gemm(), gemmBackground() or depthwise() (biasInRequant()).
  const isa::InstrDesc& overwriting(const isa::InstrDesc& d) const;
  /// Param rows of one output block's requantization: M, S (and the bias).
  int64_t paramRowsPerBlock() const {
    return (biasInRequant() ? requantBias_ : requant_)->paramRows();
  }
  const isa::InstrDesc& lut() const { return *lut_; }
  const isa::InstrDesc& sync() const { return *sync_; }
  const isa::InstrDesc& halt() const { return *halt_; }
  /// The quantized-add instruction (docs/isa/instructions.md section 2.10), or nullptr when the
  /// description has none: an Add then runs as vsub/vmul/vadd/requant in the
  /// accumulators and no residual Add is fused into a convolution.
  const isa::InstrDesc* quantizedAdd() const { return qadd_; }
  /// The description's normalize instruction of `op` ("softmax" or "layernorm"), or
  /// nullptr: then Softmax and LayerNormalization stay on the host.
  const isa::InstrDesc* normalize(const std::string& op) const;
  /// The vector-binary instruction with properties.op `op` (add, sub, mul, min, max).
  const isa::InstrDesc& vecBinary(const std::string& op) const;
  /// The vector-unary instruction with properties.op `op` (shift, clamp, copy).
  const isa::InstrDesc& vecUnary(const std::string& op) const;

  /// Largest value field `role` of `d` can hold (ember::Error if it has no such role).
  static int64_t maxOf(const isa::InstrDesc& d, const std::string& role);
  static int64_t minOf(const isa::InstrDesc& d, const std::string& role);

  // ---- timing: libember_isa's timing model (ember/isa/timing.h), as doubles ----
  /// A dma-load / dma-store moving `rows` contiguous rows of SRAM `m` (one DRAM line,
  /// rule D1) on an idle DRAM channel.
  double dmaCycles(const isa::InstrDesc& d, int64_t rows, Mem m) const;
  /// Cycles such a DMA holds the DRAM channel (the bandwidth bound of a layer).
  double channelCycles(const isa::InstrDesc& d, int64_t rows, Mem m) const;
  /// The phases of a DMA instance: cycles before its first request, cycles holding the
  /// DRAM channel, cycles of latency after it (docs/simulator.md rules D1-D3).
  struct DmaParts {
    double head = 0, transfer = 0, latency = 0;
  };
  DmaParts dmaParts(const isa::Instruction& in) const;
  /// Rule D3 as the simulator applies it (isa::timing::dmaOnChannel): a DMA instance
  /// ready at `start` takes the DRAM channel when it is free (`busFree`, which it then
  /// reserves for its transfer); returns the cycle it ends.
  double dmaEnd(const isa::Instruction& in, double start, double& busFree) const;
  /// A gemm with loop counts n2, n1, n0.
  double gemmCycles(int64_t n2, int64_t n1, int64_t n0) const;
  /// The depthwise instruction over `outputs` outputs of a kh x kw window whose taps lie
  /// tapS0 / tapS1 act rows apart (rule DW1).
  double depthwiseCycles(int64_t outputs, int64_t kh, int64_t kw, int64_t tapS0,
                         int64_t tapS1) const;
  /// A vector, requantize or lut instruction over n1 x n0 rows (no bank conflicts).
  double vectorCycles(const isa::InstrDesc& d, int64_t n1, int64_t n0) const;
  /// Cycles of any instruction instance on an idle DRAM channel.
  double cyclesOf(const isa::Instruction& in) const;

private:
  /// libember_isa's phases of a DMA of `rows` contiguous rows (one DRAM line) of `m`.
  isa::timing::DmaPhases linePhases(const isa::InstrDesc& d, int64_t rows, Mem m) const;
  const isa::InstrDesc* findClass(const std::string& cls, const std::string& op = "") const;

  isa::IsaDescription isa_;
  int64_t lanes_ = 0;
  const isa::InstrDesc *dmaLoad_, *dmaStore_, *gemm_, *requant_, *lut_, *sync_, *halt_;
  const isa::InstrDesc* qadd_ = nullptr;
  const isa::InstrDesc* gemmBg_ = nullptr;
  const isa::InstrDesc* dw_ = nullptr;
  const isa::InstrDesc* requantBias_ = nullptr; ///< Set only when biasInRequant().
  /// The overwriting twins of gemm_, gemmBg_ and dw_ (properties.overwrite), if any.
  const isa::InstrDesc *gemmZ_ = nullptr, *gemmBgZ_ = nullptr, *dwZ_ = nullptr;
  /// Finds the twins above and the bias requantize; sets requantBias_ only when every
  /// array instruction a convolution emits has its twin (biasInRequant()).
  void findBiasInRequant();
};

} // namespace ember::npu
