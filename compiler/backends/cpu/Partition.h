#pragma once
// Splitting a generated module for parallel compilation. The code of a module is in its
// kernel instances (`instance.*`, see CodegenContext::call: each inlines a libjit kernel
// specialised on its constants) and its operations' functions (`op.*`, which call
// instances); nothing inlines either. These units are grouped into partitions of about
// equal size, and the rest (the entry points) forms the main partition. Every partition
// is a self-contained module: it holds its own copy of every function and constant its
// definitions reach (the libjit kernels to inline), and declares the units it calls in
// other partitions, which become external symbols. Each partition is returned as
// bitcode, so that a thread can read it into its own LLVMContext, and so that its bytes
// are the key of the object cache (ObjectCache.h).

#include <llvm/IR/Module.h>

#include <cstddef>
#include <string>
#include <vector>

namespace ember::cpu {

/// One partition: a self-contained module as bitcode.
struct ModulePartition {
  std::string bitcode;
  size_t instructions = 0; ///< IR instructions of its definitions (the size estimate)
};

/// Below twice this many IR instructions of units, a module is not split.
inline constexpr size_t kMinPartitionInstructions = 2000;

/// Splits `m` (prepared for the host: everything but the `keep` symbols internal) into the
/// main partition, which comes first, and at most `maxGroups` partitions of units of at
/// least kMinPartitionInstructions each (the largest units first, each to the partition
/// with the fewest instructions). A small module, or one with a writable global variable
/// (which one copy per partition would break), stays one partition. The result depends
/// only on `m` and `maxGroups`. `m` is changed: the units become external.
std::vector<ModulePartition> splitModule(llvm::Module& m, const std::vector<std::string>& keep,
                                         size_t maxGroups);

/// The bitcode of `m`.
std::string writeBitcode(const llvm::Module& m);

} // namespace ember::cpu
