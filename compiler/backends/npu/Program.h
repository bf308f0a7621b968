// The instruction stream under construction: instruction builders by role name, the
// pipelined "step" protocol that inserts every dependency token, layer barriers, the
// debug map and the cycle estimate of docs/isa/timing-energy.md section 3.
//
// A layer is a sequence of steps. A step is a group of loads (DRAM -> SRAM), a group of
// compute instructions and a group of stores (SRAM -> DRAM). With pipeline depth D
// (2 = double buffering), the SRAM buffers of step k are those of step k - D, so:
//   - load k waits until compute k - D has finished (token compute -> load);
//   - compute k waits for load k (token load -> compute) and, before overwriting its
//     output buffer, for store k - D (token store -> compute);
//   - store k waits for compute k (token compute -> store).
// Loads of step k + 1 are placed in the stream before compute k so that the load engine
// runs ahead. A barrier between layers waits for every store (so the next layer reads
// what this one wrote) and drains every token.
#pragma once

#include "Target.h"

#include "ember/isa/binary.h"

#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace ember::npu {

/// One step's instructions (token flags are set by Program::commitStep).
struct Step {
  std::vector<isa::Instruction> loads, computes, stores;
  /// Compute instructions that may run after the next step's first gemm: when `computes`
  /// ends with background gemms (rule E6), the requantize of the last block. Program
  /// defers them into the next step (after its first gemm, which waits for the array),
  /// or appends a join and them here when it cannot; they carry this step's push tokens.
  std::vector<isa::Instruction> tail;
};

/// Cycle figures of a finished layer.
struct LayerTiming {
  double cycles = 0;        ///< Estimated cycles from the first to the last instruction.
  int64_t instructions = 0; ///< Instructions emitted for the layer.
  int64_t steps = 0;        ///< Pipeline steps (tiles).
};

class Program {
public:
  /// A program of pipeline depth `depth` (1 or 2) holding at most `maxInstructions`
  /// instructions (CompileOptions::maxInstructions; beyond it emit throws ProgramTooLong).
  Program(const Target& t, int depth, size_t maxInstructions);

  const Target& target() const { return t_; }
  /// The current layer's pipeline depth (the program's, unless setLayerDepth lowered it).
  int depth() const { return depth_; }
  /// Runs the current layer, before its first step, at depth `d` (<= the program's): a
  /// layer whose tiles do not fit the SRAMs twice runs single-buffered rather than not at
  /// all. The layer's closing barrier drains every token; the next layer is back at the
  /// program's depth.
  void setLayerDepth(int d);
  /// Whether the current layer runs below the program's depth (setLayerDepth).
  bool layerDepthLowered() const { return depth_ < programDepth_; }

  // ---- instruction builders (values range-checked against the field widths) ----
  isa::Instruction make(const isa::InstrDesc& d) const { return isa::Instruction(d); }
  /// Sets `role`, throwing ember::Error naming the instruction if the value does not fit.
  static void set(isa::Instruction& in, const std::string& role, int64_t v);
  isa::Instruction dmaLoad(Mem m, int64_t sramAddr, uint64_t dramByte, int64_t size0, int64_t size1,
                           int64_t size2, int64_t stride1, int64_t stride2) const;
  isa::Instruction dmaStore(Mem m, int64_t sramAddr, uint64_t dramByte, int64_t size0,
                            int64_t size1, int64_t size2, int64_t stride1, int64_t stride2) const;
  /// Padding of a dma-load (pad rows are filled with `value`).
  static void setPads(isa::Instruction& in, int64_t left, int64_t right, int64_t top,
                      int64_t bottom, int64_t value);
  /// Contiguous copies of `rows` rows (split as the size/stride fields require).
  std::vector<isa::Instruction> loadRows(Mem m, int64_t sramAddr, uint64_t dramByte,
                                         int64_t rows) const;
  std::vector<isa::Instruction> storeRows(Mem m, int64_t sramAddr, uint64_t dramByte,
                                          int64_t rows) const;
  /// `groups` runs of `groupRows` rows, `strideRows` rows apart in DRAM, packed in SRAM
  /// (2-D loads where the size/stride fields allow, else one run per load).
  std::vector<isa::Instruction> loadGroups(Mem m, int64_t sramAddr, uint64_t dramByte,
                                           int64_t groupRows, int64_t groups,
                                           int64_t strideRows) const {
    return this->groups(true, m, sramAddr, dramByte, groupRows, groups, strideRows);
  }
  /// The same from SRAM to DRAM: `groups` runs of `groupRows` rows, packed in SRAM, land
  /// `strideRows` rows apart in DRAM.
  std::vector<isa::Instruction> storeGroups(Mem m, int64_t sramAddr, uint64_t dramByte,
                                            int64_t groupRows, int64_t groups,
                                            int64_t strideRows) const {
    return this->groups(false, m, sramAddr, dramByte, groupRows, groups, strideRows);
  }
  /// Strides of one loop level of a vector instruction.
  struct Walk {
    int64_t addr = 0, s0 = 1, s1 = 0;
  };
  isa::Instruction vecBinary(const std::string& op, Mem dstMem, Mem srcMem, Walk dst, Walk a,
                             Walk b, int64_t n0, int64_t n1) const;
  isa::Instruction vecUnary(const std::string& op, Mem dstMem, Mem srcMem, Walk dst, Walk src,
                            int64_t n0, int64_t n1, int64_t imm0 = 0, int64_t imm1 = 0) const;
  isa::Instruction requant(Walk dst, Walk src, int64_t paramRow, int64_t zp, int64_t lo, int64_t hi,
                           int64_t n0, int64_t n1) const;
  isa::Instruction lut(int64_t table, Walk dst, Walk src, int64_t n0, int64_t n1) const;
  /// The loop nest of one gemm (docs/isa/instructions.md section 2.3): start rows, counts and
  /// strides.
  struct GemmLoops {
    int64_t act = 0, acc = 0, wgt = 0;
    int64_t n0 = 1, n1 = 1, n2 = 1;
    int64_t actS0 = 1, actS1 = 0, actS2 = 0, accS0 = 1, accS1 = 0, accS2 = 0, wgtS2 = 0;
    bool reset = false; ///< Zero the accumulators instead of multiplying.
  };
  isa::Instruction gemm(const GemmLoops& g) const;
  /// A quantized add (the description must have one, Target::quantizedAdd) of act rows
  /// `a` and `b` into act rows `dst`, its scalars in param rows paramRow, paramRow + 1.
  isa::Instruction qadd(Walk dst, Walk a, Walk b, int64_t paramRow, int64_t n0, int64_t n1) const;
  /// A normalize instruction `d` (Target::normalize) over n1 lines of n0 codes (its
  /// `len`), each line's rows s0 apart (its `_sb`), lines s1 apart, its parameter block
  /// at acc row `paramRow`.
  isa::Instruction normalize(const isa::InstrDesc& d, Walk dst, Walk src, int64_t paramRow,
                             int64_t n0, int64_t n1) const;
  /// Splits `rows` contiguous rows into (offset, n0, n1) chunks that fit n0/n1 of `d`.
  static std::vector<std::array<int64_t, 3>> rowChunks(const isa::InstrDesc& d, int64_t rows);
  /// The same for chunks that every instruction of `ds` walks with the same n0/n1 (each
  /// instruction has its own field widths: a re-encoded description may give vsub a
  /// narrower n0 than vadd).
  static std::vector<std::array<int64_t, 3>>
  rowChunks(std::initializer_list<const isa::InstrDesc*> ds, int64_t rows);

  // ---- steps, layers, end ----
  /// Starts the instructions of graph node `name` (its debug range).
  void beginLayer(const std::string& name);
  /// Index of the next step since the last barrier (a layer's buffer slot is
  /// stepIndex() % depth()).
  int64_t stepIndex() const { return stepsSinceBarrier_; }
  /// Adds one step (sets its token flags; see the file comment).
  void commitStep(Step s);
  /// A barrier inside a layer: every store so far completes before any later load
  /// (a layer that reads back what it wrote, e.g. a packing pass), tokens drained.
  void barrier();
  /// Ends the layer: emits what is pending and a barrier (for the `last` layer instead
  /// the end of the program: tokens drained and `finish` popping the last store's
  /// token). Returns its figures.
  LayerTiming endLayer(bool last = false);
  /// Ends the program with `finish` unless the last layer already did.
  void finish();

  /// The instructions and debug map, ready for the binary.
  std::vector<isa::Instruction>& code() { return code_; }
  std::vector<isa::DebugRange>& debug() { return debug_; }
  /// Estimated total cycles so far.
  double cycles() const { return now_; }

  /// A sync on engine `e` (no tokens); on the compute engine it joins the array (rule E6).
  isa::Instruction syncOn(isa::Engine e) const;

private:
  std::vector<isa::Instruction> groups(bool load, Mem m, int64_t sramAddr, uint64_t dramByte,
                                       int64_t groupRows, int64_t n, int64_t strideRows) const;
  void emitPending();
  /// Appends a join and the deferred tail (if any) to the pending step's computes.
  void flushTail();
  /// Places the previous step's deferred tail into `s`, and this step's tail after a
  /// join unless it can be deferred; returns where the previous tail ends in s.computes
  /// (0: none).
  size_t placeTails(Step& s);
  /// Every gemm followed by a join (rule E6, when every gemm is a background one), so that
  /// the step keeps the program's order of array and vector work.
  void joinGemms(Step& s) const;
  /// Gives each of the step's queues at least one instruction (a sync) and sets its token
  /// flags (see the file comment); `prevTailEnd` as placeTails returned it.
  void setTokens(Step& s, size_t prevTailEnd) const;
  /// When the instructions `v` started at `start` end on one engine (docs/isa/timing-energy.md
  /// section 3; rule E6 as the simulator reads it, isa::timing::waitsForArray and
  /// engineCycles: a gemm, a compute sync and finish wait for the array; a background gemm
  /// holds the engine for its issue cycles while the array runs it). DMAs book the shared
  /// DRAM bus (busFree_). `*marked` (when `mark` > 0) receives when instruction mark - 1 ended.
  double runEstimate(double start, const std::vector<isa::Instruction>& v, size_t mark = 0,
                     double* marked = nullptr);
  /// Adds the step to the cycle estimate: the three-stage recurrence over loadEnd_,
  /// computeEnd_ and storeEnd_ (its stores are timed with the next step, or at the end).
  void estimateStep(const Step& s, size_t prevTailEnd);
  /// Emits the step into the stream: with a second buffer its loads now and its computes
  /// and stores held pending (the load engine runs ahead); with one, all at once.
  void emitStep(Step s, size_t prevTailEnd);
  void emit(std::vector<isa::Instruction>& v);
  /// Throws ProgramTooLong unless `n` more instructions stay within the limit.
  void reserve(size_t n) const;
  /// Appends one instruction within the limit.
  void push(const isa::Instruction& in);

  const Target& t_;
  int depth_;
  int programDepth_;
  size_t maxInstructions_;
  std::vector<isa::Instruction> code_;
  std::vector<isa::DebugRange> debug_;
  std::optional<Step> pending_;        ///< Compute and stores of the last committed step.
  std::vector<isa::Instruction> tail_; ///< The last step's deferred tail, tokens set.
  bool pendingHasTail_ = false;        ///< pending_'s computes hold a deferred tail.
  int64_t stepsSinceBarrier_ = 0;
  bool finished_ = false;
  // Layer bookkeeping.
  std::string layer_;
  size_t layerFirst_ = 0;
  int64_t layerSteps_ = 0;
  double layerStart_ = 0;
  // Cycle estimate: a three-stage pipeline recurrence over the steps.
  double now_ = 0;
  double busFree_ = 0;                                 ///< When the DRAM bus is next free.
  std::vector<isa::Instruction> pendingStoreEstimate_; ///< Stores of the last step, not yet timed.
  void estimatePendingStores(double base);
  /// Moves the estimate past the last step (+ `syncs` + 1 sync instructions).
  void advanceClock(int64_t syncs);
  std::vector<double> loadEnd_, computeEnd_, storeEnd_;
};

} // namespace ember::npu
