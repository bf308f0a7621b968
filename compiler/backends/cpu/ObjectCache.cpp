#include "ObjectCache.h"

#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/BLAKE3.h>
#include <llvm/Support/CachePruning.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <cstdlib>
#include <list>
#include <mutex>
#include <unordered_map>

namespace ember::cpu {

namespace {

/// First line of a disk entry; the number changes with the entry's layout.
constexpr llvm::StringLiteral kMagic = "ember-jit-object 1\n";

std::string hashHex(llvm::StringRef a, llvm::StringRef b = {}) {
  llvm::BLAKE3 h;
  h.update(a);
  if (!b.empty()) {
    // The length of the first part keeps ("ab", "c") and ("a", "bc") apart.
    h.update(std::to_string(a.size()) + "\n");
    h.update(b);
  }
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

/// The process-wide memory cache: least recently used entries are dropped beyond
/// kMemoryCacheBytes.
class MemoryCache {
public:
  static MemoryCache& get() {
    static MemoryCache cache;
    return cache;
  }
  std::shared_ptr<const std::string> find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end())
      return nullptr;
    order_.splice(order_.begin(), order_, it->second.position);
    return it->second.object;
  }
  void store(const std::string& key, std::shared_ptr<const std::string> object) {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.count(key) || object->size() > kMemoryCacheBytes)
      return;
    bytes_ += object->size();
    order_.push_front(key);
    entries_[key] = Entry{std::move(object), order_.begin()};
    while (bytes_ > kMemoryCacheBytes) {
      auto last = entries_.find(order_.back());
      bytes_ -= last->second.object->size();
      entries_.erase(last);
      order_.pop_back();
    }
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.clear();
    order_.clear();
    bytes_ = 0;
  }

private:
  struct Entry {
    std::shared_ptr<const std::string> object;
    std::list<std::string>::iterator position;
  };
  std::mutex mu_;
  std::list<std::string> order_; ///< most recently used first
  std::unordered_map<std::string, Entry> entries_;
  size_t bytes_ = 0;
};

/// The payload of a disk entry for `key`, or null when the bytes are not a whole,
/// intact entry of that key.
std::shared_ptr<const std::string> parseEntry(const std::string& bytes, const std::string& key) {
  llvm::StringRef rest(bytes);
  if (!rest.consume_front(kMagic))
    return nullptr;
  auto line = [&rest]() {
    auto [head, tail] = rest.split('\n');
    rest = tail;
    return head;
  };
  const llvm::StringRef storedKey = line(), sizeText = line(), payloadHash = line();
  uint64_t size = 0;
  if (storedKey != key || sizeText.getAsInteger(10, size) || size != rest.size() ||
      payloadHash != hashHex(rest))
    return nullptr;
  return std::make_shared<const std::string>(rest.str());
}

} // namespace

std::string objectCacheKey(const std::string& bitcode, const std::string& signature) {
  return hashHex(signature, bitcode);
}

std::string resolveCacheDir(const std::string& option) {
  if (option == "off")
    return "";
  if (!option.empty())
    return option;
  if (const char* env = std::getenv("EMBER_JIT_CACHE_DIR"))
    return std::string(env) == "off" ? "" : std::string(env);
  llvm::SmallString<256> dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    dir = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home)
    llvm::sys::path::append(dir, home, ".cache");
  else
    return "";
  llvm::sys::path::append(dir, "ember", "jit");
  return std::string(dir);
}

std::string ObjectCache::pathOf(const std::string& key) const {
  // pruneCache only ever deletes files named llvmcache-*.
  llvm::SmallString<256> p(dir_);
  llvm::sys::path::append(p, "llvmcache-ember-" + key);
  return std::string(p);
}

std::shared_ptr<const std::string> ObjectCache::find(const std::string& key) const {
  if (memory_)
    if (auto hit = MemoryCache::get().find(key))
      return hit;
  if (dir_.empty())
    return nullptr;
  const std::string path = pathOf(key);
  if (!llvm::sys::fs::exists(path))
    return nullptr;
  std::shared_ptr<const std::string> object;
  try {
    object = parseEntry(readFileBytes(path), key);
  } catch (const Error&) {
    return nullptr; // unreadable: a miss, replaced by the next store
  }
  if (object && memory_)
    MemoryCache::get().store(key, object);
  return object;
}

void ObjectCache::store(const std::string& key, std::shared_ptr<const std::string> object) const {
  if (memory_)
    MemoryCache::get().store(key, object);
  if (dir_.empty())
    return;
  if (llvm::sys::fs::create_directories(dir_))
    return;
  std::string entry =
      kMagic.str() + key + "\n" + std::to_string(object->size()) + "\n" + hashHex(*object) + "\n";
  entry += *object;
  try {
    writeFileAtomic(pathOf(key), entry);
  } catch (const Error&) {
    // A read-only or full disk costs only the entry: the object is still returned.
  }
}

void ObjectCache::prune() const {
  if (dir_.empty() || !llvm::sys::fs::is_directory(dir_))
    return;
  llvm::CachePruningPolicy policy;
  policy.MaxSizeBytes = kDiskCacheBytes;
  llvm::pruneCache(dir_, policy);
}

void ObjectCache::clearMemory() {
  MemoryCache::get().clear();
}

} // namespace ember::cpu
