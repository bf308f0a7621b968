#pragma once
// The compiled-object cache of the cpu backend. The JIT compiles a model's module in
// partitions (Partition.h); the machine code of each partition is kept under a content
// hash of everything it was made from: the partition's LLVM bitcode (which includes the
// libjit kernels it inlines) and the compile signature (LLVM's version, target triple,
// CPU, features, optimisation pipeline, relocation model, this cache's format). An
// identical partition is therefore never compiled twice in a process (memory cache), and
// not at all when a disk cache folder holds it. A disk entry names its key and carries a
// hash of its bytes: a truncated, corrupted or mismatching file is ignored (and replaced
// by the next store), never returned.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ember::cpu {

/// The key of an object: hex BLAKE3 of the signature and the bitcode.
std::string objectCacheKey(const std::string& bitcode, const std::string& signature);

/// The compile signature of the JIT's objects on this host (Jit.cpp): everything besides
/// a partition's bitcode that its machine code depends on.
const std::string& jitSignature();

/// Default bound of the process-wide memory cache (least recently used entries go first).
inline constexpr size_t kMemoryCacheBytes = size_t(256) << 20;
/// Default bound of a disk cache folder (llvm::pruneCache, oldest first).
inline constexpr uint64_t kDiskCacheBytes = uint64_t(1) << 30;

/// The disk cache folder for an option value: "off" = none (""); "" = the environment
/// variable EMBER_JIT_CACHE_DIR ("off" = none), else $XDG_CACHE_HOME/ember/jit, else
/// $HOME/.cache/ember/jit (none without HOME); anything else is the folder itself.
std::string resolveCacheDir(const std::string& option);

/// A view of the memory cache and, when `diskDir` is not empty, one disk folder.
class ObjectCache {
public:
  ObjectCache(bool memory, std::string diskDir) : memory_(memory), dir_(std::move(diskDir)) {}

  /// The object stored under `key`, or null. A disk hit is added to the memory cache.
  std::shared_ptr<const std::string> find(const std::string& key) const;
  /// Keeps `object` under `key` (memory, and disk when enabled: written atomically; a
  /// folder that cannot be written only loses the entry).
  void store(const std::string& key, std::shared_ptr<const std::string> object) const;
  /// Trims the disk folder to kDiskCacheBytes (at most once every 20 minutes).
  void prune() const;

  /// The file of `key` in the disk folder.
  std::string pathOf(const std::string& key) const;

  /// Empties the process-wide memory cache (for tests and benches of cold compiles).
  static void clearMemory();

private:
  bool memory_;
  std::string dir_;
};

} // namespace ember::cpu
