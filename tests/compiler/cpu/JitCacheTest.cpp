// The cpu backend's parallel, cached JIT (Partition.h, ObjectCache.h): a module split into
// partitions gives the interpreter's results and the same bytes whatever the number of
// compile threads; a cache hit gives the same bytes as a compile; a different module or
// compile signature gets a different key; corrupted, truncated or mismatching disk
// entries are ignored (and replaced), and a folder that cannot be written costs nothing.
#include "CpuTestUtil.h"
#include "ObjectCache.h"
#include "OpCases.h"

#include "ember/backend/Backend.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace ember {
namespace {

using namespace cputest;
using test::ints;
namespace fs = std::filesystem;

/// A fresh folder under the temporary directory, removed at the end of the test.
struct TempDir {
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("ember-jit-cache-test-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::vector<fs::path> entries() const {
    std::vector<fs::path> out;
    if (fs::exists(path))
      for (const auto& e : fs::directory_iterator(path))
        if (e.path().filename().string().rfind("llvmcache-ember-", 0) == 0)
          out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path path;
};

/// A graph of several operator families (so that its module is split), two layers of one
/// shape among them (one kernel instance); `stride` of the last convolution varies it.
void buildNetwork(G& g, int64_t stride = 1) {
  NodeValue x = g.input("x", {1, 8, 12, 12});
  Attrs pads = ints({{"pads", {1, 1, 1, 1}}});
  NodeValue a = g.node(NodeKind::Conv, "c1", {x, g.constant("w1", {8, 8, 3, 3})}, pads);
  NodeValue b = g.node(NodeKind::Relu, "r1", {a});
  NodeValue c = g.node(NodeKind::Conv, "c2", {b, g.constant("w2", {8, 8, 3, 3})}, pads);
  NodeValue d = g.node(NodeKind::Conv, "dw", {c, g.constant("wd", {8, 1, 3, 3})},
                       test::with(pads, "group", int64_t(8)));
  NodeValue e = g.node(NodeKind::Add, "add", {d, a});
  NodeValue p =
      g.node(NodeKind::MaxPool, "pool", {e}, ints({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}));
  NodeValue q = g.node(NodeKind::Conv, "c3", {p, g.constant("w3", {16, 8, 3, 3})},
                       ints({{"pads", {1, 1, 1, 1}}, {"strides", {stride, stride}}}));
  // Three more windows (1x1, 5x5, dilated 3x3): three more instances.
  NodeValue q1 = g.node(NodeKind::Conv, "c4", {q, g.constant("w4", {16, 16, 1, 1})});
  NodeValue q2 = g.node(NodeKind::Conv, "c5", {q1, g.constant("w5", {16, 16, 5, 5})},
                        ints({{"pads", {2, 2, 2, 2}}}));
  NodeValue q3 = g.node(NodeKind::Conv, "c6", {q2, g.constant("w6", {16, 16, 3, 3})},
                        ints({{"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}}));
  NodeValue s = g.node(NodeKind::Sigmoid, "sig", {q3});
  NodeValue gap = g.node(NodeKind::GlobalAveragePool, "gap", {s});
  NodeValue flat = g.node(NodeKind::Reshape, "flat", {gap}, ints({{"shape", {1, 16}}}));
  NodeValue fc = g.node(NodeKind::MatMul, "fc", {flat, g.constant("wf", {16, 10})});
  g.output("y", g.node(NodeKind::Softmax, "softmax", {fc}));
}

CpuOptions options(const std::string& cacheDir, bool memory = false, int compileThreads = 2) {
  CpuOptions o;
  o.threads = 1;
  o.compileThreads = compileThreads;
  o.memoryCache = memory;
  o.cacheDir = cacheDir;
  return o;
}

struct Compiled {
  std::unique_ptr<CompiledFunction> fn;
  CpuCompileStats stats;
};

Compiled compile(const Function& f, const CpuOptions& o) {
  Compiled c;
  c.fn = createCpuBackend(o)->compile(f);
  c.stats = dynamic_cast<const CpuCompiledFunction&>(*c.fn).stats();
  return c;
}

void expectSameBytes(const TensorMap& a, const TensorMap& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a)
    EXPECT_TRUE(b.at(name) == t) << name << " differs";
}

TEST(JitCache, SplitModuleMatchesTheInterpreterWithAnyCompileThreads) {
  G g;
  buildNetwork(g);
  const TensorMap in = g.randomInputs();
  const Compiled one = compile(*g.f, options("off", false, 1));
  const Compiled three = compile(*g.f, options("off", false, 3));
  EXPECT_GT(one.stats.partitions, 2u) << "the module was not split";
  EXPECT_EQ(one.stats.partitions, three.stats.partitions);
  EXPECT_EQ(one.stats.cachedPartitions, 0u);
  EXPECT_EQ(one.stats.compileThreads, 1);
  EXPECT_EQ(three.stats.compileThreads, 3);
  EXPECT_LT(one.stats.kernelInstances, one.stats.nodes); // c1 and c2 share an instance
  const TensorMap ref = createInterpreterBackend()->compile(*g.f)->run(in);
  const TensorMap out = one.fn->run(in);
  EXPECT_EQ(compare(out, ref, 1e-5), "");
  expectSameBytes(three.fn->run(in), out);
}

TEST(JitCache, DiskHitGivesTheSameBytesWhateverTheCompileThreads) {
  TempDir dir("hit");
  G g;
  buildNetwork(g);
  const TensorMap in = g.randomInputs();
  const Compiled cold = compile(*g.f, options(dir.path.string(), false, 3));
  EXPECT_EQ(cold.stats.cachedPartitions, 0u);
  EXPECT_EQ(dir.entries().size(), cold.stats.partitions);
  const Compiled warm = compile(*g.f, options(dir.path.string(), false, 1));
  EXPECT_EQ(warm.stats.partitions, cold.stats.partitions);
  EXPECT_EQ(warm.stats.cachedPartitions, warm.stats.partitions);
  EXPECT_EQ(warm.stats.compileThreads, 0); // nothing compiled
  expectSameBytes(warm.fn->run(in), cold.fn->run(in));
}

TEST(JitCache, MemoryHitGivesTheSameBytes) {
  G g;
  buildNetwork(g);
  const TensorMap in = g.randomInputs();
  const Compiled first = compile(*g.f, options("off", true));
  const Compiled second = compile(*g.f, options("off", true));
  EXPECT_EQ(second.stats.cachedPartitions, second.stats.partitions);
  expectSameBytes(second.fn->run(in), first.fn->run(in));
  EXPECT_EQ(compare(second.fn->run(in), createInterpreterBackend()->compile(*g.f)->run(in), 1e-5),
            "");
}

TEST(JitCache, AnotherModuleIsNotTakenFromTheCache) {
  TempDir dir("other");
  G a, b;
  buildNetwork(a, 1);
  buildNetwork(b, 2); // c3 with stride 2: another instance, other offsets
  compile(*a.f, options(dir.path.string()));
  const size_t before = dir.entries().size();
  const Compiled other = compile(*b.f, options(dir.path.string()));
  EXPECT_LT(other.stats.cachedPartitions, other.stats.partitions);
  EXPECT_GT(dir.entries().size(), before);
  const TensorMap in = b.randomInputs();
  EXPECT_EQ(compare(other.fn->run(in), createInterpreterBackend()->compile(*b.f)->run(in), 1e-5),
            "");
}

TEST(JitCache, KeyCoversTheSignatureAndTheBitcode) {
  const std::string sig = "llvm 19\ncpu x\nfeatures +a\npipeline p";
  const std::string key = cpu::objectCacheKey("bitcode", sig);
  EXPECT_EQ(key, cpu::objectCacheKey("bitcode", sig));
  EXPECT_EQ(key.size(), 64u);
  EXPECT_NE(key, cpu::objectCacheKey("bitcodf", sig));
  EXPECT_NE(key, cpu::objectCacheKey("bitcode", "llvm 18\ncpu x\nfeatures +a\npipeline p"));
  EXPECT_NE(key, cpu::objectCacheKey("bitcode", "llvm 19\ncpu y\nfeatures +a\npipeline p"));
  EXPECT_NE(key, cpu::objectCacheKey("bitcode", "llvm 19\ncpu x\nfeatures -a\npipeline p"));
  EXPECT_NE(key, cpu::objectCacheKey("bitcode", "llvm 19\ncpu x\nfeatures +a\npipeline q"));
  // The boundary between the two parts counts.
  EXPECT_NE(cpu::objectCacheKey("cd", "ab"), cpu::objectCacheKey("d", "abc"));
}

TEST(JitCache, SignatureNamesWhatTheObjectsDependOn) {
  const std::string& sig = cpu::jitSignature();
  EXPECT_EQ(sig.rfind("ember-jit-object-", 0), 0u) << sig;
  for (const char* part : {"\nllvm 19.", "\ntriple ", "\ncpu ", "\nfeatures ", "\nreloc ",
                           "\ncodegen-level ", "\npipeline "})
    EXPECT_NE(sig.find(part), std::string::npos) << part << " missing from:\n" << sig;
}

void overwrite(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

std::string slurp(const fs::path& p) {
  std::ifstream is(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(is), {});
}

TEST(JitCache, DamagedOrMismatchingEntriesAreIgnoredAndReplaced) {
  TempDir dir("damaged");
  G g;
  buildNetwork(g);
  const TensorMap in = g.randomInputs();
  const Compiled cold = compile(*g.f, options(dir.path.string()));
  const TensorMap ref = cold.fn->run(in);
  std::vector<fs::path> files = dir.entries();
  ASSERT_GE(files.size(), 4u);
  std::vector<std::string> original;
  for (const fs::path& p : files)
    original.push_back(slurp(p));
  // Truncated, a flipped byte in the machine code, empty, another key's entry, and every
  // further one a different partition's bytes under this name.
  overwrite(files[0], original[0].substr(0, original[0].size() / 2));
  std::string flipped = original[1];
  flipped[flipped.size() - 10] ^= 0x5a;
  overwrite(files[1], flipped);
  overwrite(files[2], "");
  for (size_t i = 3; i < files.size(); ++i)
    overwrite(files[i], original[(i + 1) % files.size()]);
  const Compiled again = compile(*g.f, options(dir.path.string()));
  EXPECT_EQ(again.stats.cachedPartitions, 0u);
  expectSameBytes(again.fn->run(in), ref);
  for (size_t i = 0; i < files.size(); ++i)
    EXPECT_EQ(slurp(files[i]), original[i]) << files[i] << " was not replaced";
  const Compiled third = compile(*g.f, options(dir.path.string()));
  EXPECT_EQ(third.stats.cachedPartitions, third.stats.partitions);
  expectSameBytes(third.fn->run(in), ref);
}

TEST(JitCache, UnwritableFolderOnlyCostsTheEntries) {
  TempDir dir("unwritable");
  fs::create_directories(dir.path);
  overwrite(dir.path / "file", "not a folder");
  G g;
  buildNetwork(g);
  const TensorMap in = g.randomInputs();
  const Compiled c = compile(*g.f, options((dir.path / "file" / "cache").string()));
  EXPECT_EQ(c.stats.cachedPartitions, 0u);
  EXPECT_EQ(compare(c.fn->run(in), createInterpreterBackend()->compile(*g.f)->run(in), 1e-5), "");
}

/// Sets (or, for null, unsets) an environment variable until the end of the scope.
class ScopedEnv {
public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    old_ = had_ ? old : "";
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { had_ ? ::setenv(name_, old_.c_str(), 1) : ::unsetenv(name_); }

private:
  const char* name_;
  bool had_;
  std::string old_;
};

TEST(JitCache, FolderComesFromTheOptionThenTheEnvironment) {
  EXPECT_EQ(cpu::resolveCacheDir("off"), "");
  EXPECT_EQ(cpu::resolveCacheDir("/some/folder"), "/some/folder");
  {
    ScopedEnv env("EMBER_JIT_CACHE_DIR", "off");
    EXPECT_EQ(cpu::resolveCacheDir(""), "");
  }
  {
    ScopedEnv env("EMBER_JIT_CACHE_DIR", "/from/env");
    EXPECT_EQ(cpu::resolveCacheDir(""), "/from/env");
    EXPECT_EQ(cpu::resolveCacheDir("/option"), "/option");
  }
  ScopedEnv none("EMBER_JIT_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(cpu::resolveCacheDir(""), "/xdg/ember/jit");
  }
  ScopedEnv noXdg("XDG_CACHE_HOME", nullptr);
  {
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(cpu::resolveCacheDir(""), "/home/u/.cache/ember/jit");
  }
  ScopedEnv noHome("HOME", nullptr);
  EXPECT_EQ(cpu::resolveCacheDir(""), "");
}

} // namespace
} // namespace ember
