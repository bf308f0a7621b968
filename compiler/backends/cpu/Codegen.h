#pragma once
// Code generation of the cpu backend: one unit per operator family, registered by node
// kind in a table (CodegenRegistry.cpp), never a switch over kinds. A unit says whether
// it handles an operation (element kinds, attributes) and emits, into the operation's
// own LLVM function `void(ptr env, i64 chunk, i64 chunks, ptr scratch)`, calls of libjit
// kernels with the operation's shapes and attributes as constants. The kernels' last two
// arguments, `tid` and `nth`, are the part `chunk` of `chunks` that one call computes
// (see ThreadTeam.h: whichever thread takes a part, it computes the same outputs with the
// same arithmetic), and `scratch` is the calling thread's own scratch buffer. Addresses are never
// constants: every buffer is a byte offset into one of the regions the environment `env` points to,
// so the same code runs in the JIT and, linked into a C program, as an AOT bundle.

#include "Op.h"

#include "ember/graph/attrs/FusedActivation.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ember::cpu {

class CodegenContext;

/// One code-generation unit: the node kinds of one family share a unit.
struct CodegenUnit {
  const char* family;
  /// Whether the unit can compile this node as it is (types and attributes).
  bool (*supports)(const Op& n);
  /// Emits the node's code.
  void (*emit)(const Op& n, CodegenContext& ctx);
  /// Whether emit can also compute a residual Add of n's result and another value of
  /// the same shape, with the Add's activation (CodegenContext::residual); null: never.
  bool (*takesResidualAdd)(const Op& n) = nullptr;
};

/// Adds a unit for kind `k` (a kind may have several, e.g. float and int8).
void registerCodegenUnit(NodeKind k, CodegenUnit u);
/// The first unit of n's kind that supports `n`, or nullptr.
const CodegenUnit* findCodegenUnit(const Op& n);
/// Every registered (kind, family) pair, in kind order (for docs and tests).
std::vector<std::pair<NodeKind, const char*>> codegenTable();

/// The window of a 1-D or 2-D pooling node as the libjit pool kernels take it:
/// [H, W, OH, OW, KH, KW, sh, sw, ph, pw, peh, pew, dh, dw] (1-D: H = OH = KH = 1).
/// Throws ember::Error if the attributes do not match the input's rank.
std::vector<int64_t> poolWindow(const Op& n);

/// The window of a 1-D to 3-D Conv or ConvTranspose as libjit/ConvNd.h's NdGeom, in its
/// field order (the `geom` array of the kernels of libjit/ConvNd.cpp and ember_conv3d_i8).
std::vector<int64_t> convNdGeom(const Op& n);

/// The window of a 3-D pooling node as libjit/Pool3.h's Pool3 (21 values: input, output,
/// kernel, strides, dilations extents, then the pads at the beginnings and at the ends).
std::vector<int64_t> pool3Geom(const Op& n);

/// Family registration functions, one per file in codegen/.
void registerElementwiseCodegen();
void registerConvCodegen();
void registerMatMulCodegen();
void registerPoolCodegen();
void registerResizeCodegen();
void registerMovementCodegen();
void registerNormCodegen();
void registerReduceCodegen();
void registerInt8Codegen();
void registerInt8AttentionCodegen();

/// The environment of the generated code: an array of pointers every generated
/// function receives; the host (JIT) or the bundle's entry point fills it.
enum EnvField : unsigned {
  kEnvConstants,   ///< constant region: weights and repacked weights (read only)
  kEnvIo,          ///< inputs and outputs
  kEnvActivations, ///< activations (the static memory plan of the low-level IR)
  kEnvScratch,     ///< per-thread scratch, threads x scratchPerThread bytes
  kEnvErrors,      ///< int32 run-time error flags, one per error site
  kEnvBarrier,     ///< void (*)(void*): all threads wait for each other (bundles only)
  kEnvTeam,        ///< the first argument of the three functions: the team, or the
                   ///< bundle's barrier argument
  /// void (*)(team, env, i64 node, i64 chunks, chunk function, scratch, i64 tid, i64 nth):
  /// runs the parts of a node that this thread takes (ThreadTeam::runNodeEntry)
  kEnvRunNode,
  /// void (*)(team, barrier, const i64* nodes, i64 count, i64 before, i64 tid, i64 nth):
  /// returns once the `count` nodes (pairs: node index, chunks) are finished, as far as
  /// this thread needs (ThreadTeam::waitEntry)
  kEnvWaitNodes,
  kEnvFields
};

/// What the units register while code is generated.
class CodegenServices {
public:
  virtual ~CodegenServices() = default;
  /// Appends `bytes` (64-byte aligned) to the constant region; returns their offset.
  virtual size_t keep(std::vector<uint8_t> bytes) = 0;
  /// Records that a kernel needs `bytes` of scratch per thread.
  virtual void needScratch(size_t bytesPerThread) = 0;
  /// A new error flag (its index in the flag array): a kernel sets it (non-zero) on a
  /// run-time error of operation `where`, described by `reason`.
  virtual size_t errorFlag(const std::string& where, const std::string& reason) = 0;
};

/// What a unit emits code with.
class CodegenContext {
public:
  /// Kernel instances specialised on the same constants (shapes, attributes, constant
  /// arrays) are shared between nodes: `instances` maps such a key to its function.
  using InstanceCache = std::map<std::string, llvm::Function*>;

  /// Gives the address of the operation's input i (isResult false) or result i; asked
  /// only for the operands a unit uses, so constants nobody reads take no space.
  using AddressFn = std::function<llvm::Value*(bool isResult, unsigned i)>;

  /// `env` is the generated function's environment pointer.
  CodegenContext(llvm::Module& m, llvm::IRBuilder<>& b, CodegenServices& s, llvm::Value* env,
                 llvm::Value* tid, llvm::Value* nth, const Op* op = nullptr,
                 AddressFn address = nullptr, InstanceCache* instances = nullptr);

  llvm::IRBuilder<>& builder() { return b_; }
  llvm::Module& module() { return m_; }
  /// The address of input `v` of the operation (null pointer for an absent input).
  llvm::Value* addr(const OpInput& v);
  /// The address of result i of the operation.
  llvm::Value* result(const Op& n, unsigned i = 0);
  /// The base address of region `f` of the environment (a pointer field).
  llvm::Value* field(EnvField f);
  /// The address `offset` bytes into region `f`.
  llvm::Value* at(EnvField f, size_t offset);
  llvm::Value* i32(int64_t v);
  llvm::Value* i64(int64_t v);
  llvm::Value* f32(double v);
  llvm::Value* f64(double v);
  llvm::Value* nullPtr();
  /// A pointer to a private constant array holding `v`.
  llvm::Value* int64Array(const std::vector<int64_t>& v);
  /// A pointer to `data`, placed in the constant region (packed weights).
  llvm::Value* keep(const std::vector<float>& data);
  llvm::Value* keep(const std::vector<int8_t>& data);
  llvm::Value* keep(const std::vector<int32_t>& data);
  llvm::Value* keep(const std::vector<int64_t>& data);
  llvm::Value* keep(const std::vector<double>& data);
  /// The calling thread's own scratch buffer, of at least `bytesPerThread` bytes.
  llvm::Value* scratch(size_t bytesPerThread);
  /// Sets the value scratch() returns (the chunk function's scratch parameter).
  void setScratch(llvm::Value* scratch) { scratch_ = scratch; }
  /// The value set by setScratch (null if none).
  llvm::Value* scratchValue() const { return scratch_; }
  llvm::Value* tid() { return tid_; }
  llvm::Value* nth() { return nth_; }
  llvm::Value* env() { return env_; }
  /// Declares whether a result of the operation may share memory with one of its
  /// inputs (an in-place pair of the low-level IR). When it may not (the default), the
  /// instances' pointer parameters are `noalias`: every other pair of operands is
  /// disjoint (the LIR verifier checks it), so the vectoriser needs no overlap checks.
  void setOperandsMayAlias(bool mayAlias) { mayAlias_ = mayAlias; }
  /// A residual Add fused into the operation (ModuleGen decides, see
  /// `takesResidualAdd`): the address of the Add's other operand and the Add's
  /// activation; the operation's results are then the Add's.
  struct Residual {
    llvm::Value* addend = nullptr;
    FusedActivation activation;
  };
  void setResidual(const Residual& r) { residual_ = r; }
  /// The fused residual Add, or null.
  const Residual* residual() const { return residual_.addend ? &residual_ : nullptr; }
  /// Calls libjit kernel `name`; integer and float constants are converted to the
  /// parameter types. ember::Error if the kernel is missing or the arity differs. With an
  /// instance cache, the call goes through a function that holds every constant argument
  /// (the specialised kernel) and takes the addresses as parameters, made once per
  /// distinct set of constants. The arguments at the indices `runtimeArgs` are passed at
  /// run time even when constant (sizes that only bound loops: one instance then serves
  /// layers that differ in them only).
  void call(const std::string& name, std::vector<llvm::Value*> args,
            const std::vector<size_t>& runtimeArgs = {});
  /// A pointer to a new run-time error flag of the current operation (see CodegenServices).
  llvm::Value* errorFlag(const std::string& reason);
  /// Declares that the operation's steps must run one after the other over all its
  /// outputs (a fill, then a copy over part of it): the operation is then run as one
  /// part, by one thread. Emits nothing.
  void barrier() { onePart_ = true; }
  /// Whether barrier() was called.
  bool needsOnePart() const { return onePart_; }
  /// Declares that every part of the operation repeats some of its work (a Winograd
  /// band's input transform, a direct 1x1 band's copy, an int8 quad plane's layout: done
  /// once by each part that takes a share of the band's output channels), so that it is
  /// cut into at most `n` parts (at least 2; one part is barrier()'s). Only a matter of
  /// speed: the bits do not depend on the parts, and $EMBER_CPU_PARTS still forces any
  /// count.
  void limitParts(int64_t n) { partLimit_ = n < 2 ? 2 : n; }
  /// The limit set by limitParts, 0 when none.
  int64_t partLimit() const { return partLimit_; }

private:
  llvm::Module& m_;
  llvm::IRBuilder<>& b_;
  CodegenServices& s_;
  llvm::Value* env_;
  llvm::Value* tid_;
  llvm::Value* nth_;
  const Op* op_;
  AddressFn address_;
  InstanceCache* instances_;
  bool mayAlias_ = false;
  bool onePart_ = false;
  int64_t partLimit_ = 0;
  llvm::Value* scratch_ = nullptr;
  Residual residual_;
};

} // namespace ember::cpu
