#pragma once
// Code generation of the cpu backend: one unit per operator family, registered by node
// kind in a table (CodegenRegistry.cpp), never a switch over kinds. A unit says whether
// it handles a node (element kinds, attributes) and emits, into the node's own LLVM
// function `void(i64 tid, i64 nth)`, calls of libjit kernels with the node's shapes,
// attributes and buffer addresses as constants.

#include "ember/graph/Graph.h"

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
  bool (*supports)(const Node& n);
  /// Emits the node's code.
  void (*emit)(const Node& n, CodegenContext& ctx);
};

/// Adds a unit for kind `k` (a kind may have several, e.g. float and int8).
void registerCodegenUnit(NodeKind k, CodegenUnit u);
/// The first unit of n's kind that supports `n`, or nullptr.
const CodegenUnit* findCodegenUnit(const Node& n);
/// Every registered (kind, family) pair, in kind order (for docs and tests).
std::vector<std::pair<NodeKind, const char*>> codegenTable();

/// The window of a 1-D or 2-D pooling node as the libjit pool kernels take it:
/// [H, W, OH, OW, KH, KW, sh, sw, ph, pw, peh, pew, dh, dw] (1-D: H = OH = KH = 1).
/// Throws ember::Error if the attributes do not match the input's rank.
std::vector<int64_t> poolWindow(const Node& n);

/// Family registration functions, one per file in codegen/.
void registerElementwiseCodegen();
void registerConvCodegen();
void registerMatMulCodegen();
void registerPoolCodegen();
void registerMovementCodegen();
void registerNormCodegen();
void registerReduceCodegen();
void registerInt8Codegen();

/// Where the generated code finds memory and host services; owned by the compiled
/// function, which must outlive the JIT-compiled code.
class CodegenServices {
public:
  virtual ~CodegenServices() = default;
  /// Address of the memory of value `v` (arena, constant payload).
  virtual const void* addressOf(const NodeValue& v) const = 0;
  /// Keeps `bytes` alive (64-byte aligned) with the compiled function; returns their
  /// address.
  virtual const void* keep(std::vector<uint8_t> bytes) = 0;
  /// Records that a kernel needs `bytes` of scratch per thread.
  virtual void needScratch(size_t bytesPerThread) = 0;
  /// The barrier function and its argument (all threads wait for each other).
  virtual void (*barrierFn() const)(void*) = 0;
  virtual void* barrierArg() const = 0;
  /// A flag the node's kernel sets (non-zero) on a run-time error; run() then throws an
  /// ember::Error naming `node` with `reason`.
  virtual int32_t* errorFlag(const Node& node, const std::string& reason) = 0;
};

/// What a unit emits code with.
class CodegenContext {
public:
  /// Kernel instances specialised on the same constants (shapes, attributes, constant
  /// arrays) are shared between nodes: `instances` maps such a key to its function.
  using InstanceCache = std::map<std::string, llvm::Function*>;

  CodegenContext(llvm::Module& m, llvm::IRBuilder<>& b, CodegenServices& s,
                 llvm::GlobalVariable* scratch, llvm::Value* tid, llvm::Value* nth,
                 const Node* node = nullptr, InstanceCache* instances = nullptr);

  llvm::IRBuilder<>& builder() { return b_; }
  llvm::Module& module() { return m_; }
  /// A pointer constant to the memory of `v` (null pointer for an absent value).
  llvm::Value* addr(const NodeValue& v);
  /// The address of result i of node n.
  llvm::Value* result(const Node& n, unsigned i = 0);
  llvm::Value* i32(int64_t v);
  llvm::Value* i64(int64_t v);
  llvm::Value* f32(double v);
  llvm::Value* f64(double v);
  llvm::Value* nullPtr();
  /// A pointer to a private constant array holding `v`.
  llvm::Value* int64Array(const std::vector<int64_t>& v);
  /// A pointer to `data`, kept alive by the compiled function (packed weights).
  llvm::Value* keep(const std::vector<float>& data);
  llvm::Value* keep(const std::vector<int8_t>& data);
  llvm::Value* keep(const std::vector<int32_t>& data);
  /// The scratch buffer base (each thread uses its own `bytesPerThread` part).
  llvm::Value* scratch(size_t bytesPerThread);
  llvm::Value* tid() { return tid_; }
  llvm::Value* nth() { return nth_; }
  /// Calls libjit kernel `name`; integer and float constants are converted to the
  /// parameter types. ember::Error if the kernel is missing or the arity differs. With an
  /// instance cache, the call goes through a function that holds every constant argument
  /// (the specialised kernel) and takes the addresses as parameters, made once per
  /// distinct set of constants.
  void call(const std::string& name, std::vector<llvm::Value*> args);
  /// A pointer to a run-time error flag of the current node (see CodegenServices).
  llvm::Value* errorFlag(const std::string& reason);
  /// Every thread waits until all have reached this point (between the steps of a node).
  void barrier();

private:
  llvm::Module& m_;
  llvm::IRBuilder<>& b_;
  CodegenServices& s_;
  llvm::GlobalVariable* scratch_;
  llvm::Value* tid_;
  llvm::Value* nth_;
  const Node* node_;
  InstanceCache* instances_;
};

/// "Kind 'name'" for messages.
std::string nodeRef(const Node& n);

} // namespace ember::cpu
