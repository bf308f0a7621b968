// AOT bundles: emitBundle's files, a C program built at test time against a bundle
// (outputs equal to the interpreter's, a run-time error reported by code and message),
// refusals that write nothing, and the emberc options that make bundles.
#include "CpuTestUtil.h"

#include "ember/cpu/Bundle.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace ember {
namespace {

using namespace cputest;
namespace fs = std::filesystem;

std::string testDir() {
  const std::string d = std::string(EMBER_BINARY_DIR) + "/cpu_bundle/" +
                        ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

int shell(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/// x [5, 4] and run-time indices idx [2, 3] -> Gather along axis 0, and Relu(x).
void gatherGraph(G& g) {
  NodeValue x = g.input("x", {5, 4});
  NodeValue idx = g.m.createPlaceholder("idx", Type(ElemKind::Int64, {2, 3}))->result();
  g.output("y", g.node(NodeKind::Gather, "gather", {x, idx}));
  g.output("r", g.node(NodeKind::Relu, "relu", {g.node(NodeKind::Mul, "m", {x, x})}));
}

// The C side: x[i] = 0.25 * i - 2, idx from argv; writes outputs y and r (raw) into
// the files named by argv[8] and argv[9]; exit 3 with the message on a run-time error.
const char* kDriver = R"(#include "gatherb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static uint8_t* slurp(const char* p, long* n) {
  FILE* f = fopen(p, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END); *n = ftell(f); fseek(f, 0, SEEK_SET);
  uint8_t* d = aligned_alloc(64, (size_t)(*n + 64) / 64 * 64);
  if (fread(d, 1, (size_t)*n, f) != (size_t)*n) return NULL;
  fclose(f);
  return d;
}
int main(int argc, char** argv) {
  if (argc != 10) return 2;
  long n = 0;
  uint8_t* constants = slurp(argv[1], &n);
  if (!constants || n != GATHERB_CONSTANT_BYTES) return 2;
  uint8_t* io = aligned_alloc(64, (GATHERB_IO_BYTES + 63) / 64 * 64);
  uint8_t* act = aligned_alloc(64, (GATHERB_ACTIVATION_BYTES + 64) / 64 * 64);
  uint8_t* scratch = aligned_alloc(64, (GATHERB_SCRATCH_BYTES + 63) / 64 * 64);
  float* x = (float*)(io + GATHERB_INPUT_X_OFFSET);
  for (int i = 0; i < GATHERB_INPUT_X_ELEMENTS; ++i) x[i] = 0.25f * (float)i - 2.f;
  int64_t* idx = (int64_t*)(io + GATHERB_INPUT_IDX_OFFSET);
  for (int i = 0; i < 6; ++i) idx[i] = atoll(argv[2 + i]);
  for (int k = 0; k < 2; ++k) { /* twice: a bundle runs again and again */
    int32_t s = gatherb_run(constants, io, act, scratch);
    if (s != 0) { fprintf(stderr, "error %d: %s\n", s, gatherb_error_message(s)); return 3; }
  }
  FILE* y = fopen(argv[8], "wb");
  FILE* r = fopen(argv[9], "wb");
  fwrite(io + GATHERB_OUTPUT_Y_OFFSET, 1, GATHERB_OUTPUT_Y_BYTES, y);
  fwrite(io + GATHERB_OUTPUT_R_OFFSET, 1, GATHERB_OUTPUT_R_BYTES, r);
  fclose(y); fclose(r);
  return 0;
}
)";

TEST(Bundle, CProgramMatchesTheInterpreterAndReportsRunTimeErrors) {
  const std::string dir = testDir();
  G g;
  gatherGraph(g);
  BundleOptions bo;
  bo.name = "gatherb";
  const BundleInfo info = emitBundle(*g.f, dir + "/b", bo);
  EXPECT_EQ(fs::file_size(info.weightsPath), info.constantBytes);
  const std::string h = readFileBytes(info.headerPath);
  for (const char* want : {"int32_t gatherb_run(", "gatherb_error_message(", "GATHERB_IO_BYTES",
                           "GATHERB_INPUT0_OFFSET", "GATHERB_INPUT_IDX_OFFSET", "int64 [2, 3]",
                           "GATHERB_OUTPUT_Y_BYTES 96"})
    EXPECT_NE(h.find(want), std::string::npos) << want << " in\n" << h;

  fs::path src = fs::path(dir) / "driver.c";
  std::ofstream(src) << kDriver;
  const std::string exe = dir + "/driver";
  ASSERT_EQ(shell(std::string(EMBER_C_COMPILER) + " -std=c11 -Wall -Wextra -Werror -I " + dir +
                  "/b " + src.string() + " " + info.objectPath + " -lm -o " + exe),
            0);

  TensorMap in;
  in["x"] = Tensor(ElemKind::Float32, {5, 4});
  for (int i = 0; i < 20; ++i)
    in["x"].data<float>()[i] = 0.25f * float(i) - 2.f;
  in["idx"] = Tensor::fromVector<int64_t>({2, 3}, {4, 0, -1, 2, 2, -5});
  const TensorMap ref = createInterpreterBackend()->compile(*g.f)->run(in);
  const std::string run =
      exe + " " + info.weightsPath + " 4 0 -1 2 2 -5 " + dir + "/y " + dir + "/r";
  ASSERT_EQ(shell(run), 0) << run;
  for (const char* name : {"y", "r"}) {
    const std::string bytes = readFileBytes(dir + "/" + name);
    const Tensor& want = ref.at(name);
    ASSERT_EQ(bytes.size(), want.sizeInBytes()) << name;
    EXPECT_EQ(std::memcmp(bytes.data(), want.raw(), bytes.size()), 0) << name;
  }

  const std::string bad = exe + " " + info.weightsPath + " 4 0 5 2 2 1 " + dir + "/y " + dir +
                          "/r 2> " + dir + "/err.txt";
  EXPECT_EQ(shell(bad), 3);
  const std::string err = readFileBytes(dir + "/err.txt");
  EXPECT_NE(err.find("error 1: Gather 'gather': an index is out of range"), std::string::npos)
      << err;
}

// Threads of the program's own (pthreads): x[i] = sin(i), one run with convb_run, then
// one on 3 threads with convb_run_thread; exit 4 if the bytes differ, else output y is
// written to argv[2].
const char* kThreadsDriver = R"(#define _POSIX_C_SOURCE 200809L
#include "convb.h"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static pthread_barrier_t bar;
static void wait_all(void* a) { pthread_barrier_wait((pthread_barrier_t*)a); }
static uint8_t *constants, *io, *act, *scratch;
static int32_t errors[CONVB_ERROR_FLAGS];
enum { NTH = 3 };
static void* work(void* p) {
  convb_run_thread(constants, io, act, scratch, errors, (int64_t)(intptr_t)p, NTH, wait_all, &bar);
  return NULL;
}
static uint8_t* region(size_t n) { return aligned_alloc(64, (n + 64) / 64 * 64); }
int main(int argc, char** argv) {
  if (argc != 3) return 2;
  FILE* f = fopen(argv[1], "rb");
  constants = region(CONVB_CONSTANT_BYTES);
  if (!f || fread(constants, 1, CONVB_CONSTANT_BYTES, f) != CONVB_CONSTANT_BYTES) return 2;
  fclose(f);
  io = region(CONVB_IO_BYTES);
  act = region(CONVB_ACTIVATION_BYTES);
  scratch = region(NTH * CONVB_SCRATCH_BYTES);
  float* x = (float*)(io + CONVB_INPUT_X_OFFSET);
  for (int i = 0; i < CONVB_INPUT_X_ELEMENTS; ++i) x[i] = (float)sin((double)i);
  if (convb_run(constants, io, act, scratch) != 0) return 3;
  static uint8_t one[CONVB_OUTPUT_Y_BYTES];
  memcpy(one, io + CONVB_OUTPUT_Y_OFFSET, sizeof one);
  memset(io + CONVB_OUTPUT_Y_OFFSET, 0, sizeof one);
  pthread_barrier_init(&bar, NULL, NTH);
  pthread_t t[NTH];
  for (intptr_t i = 1; i < NTH; ++i) pthread_create(&t[i], NULL, work, (void*)i);
  work((void*)0);
  for (int i = 1; i < NTH; ++i) pthread_join(t[i], NULL);
  if (convb_first_error(errors) != 0) return 3;
  if (memcmp(one, io + CONVB_OUTPUT_Y_OFFSET, sizeof one) != 0) return 4;
  FILE* y = fopen(argv[2], "wb");
  fwrite(one, 1, sizeof one, y);
  fclose(y);
  return 0;
}
)";

TEST(Bundle, ThreadsOfTheProgramGiveTheSameBytes) {
  const std::string dir = testDir();
  G g;
  Attrs pads;
  pads.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  NodeValue x = g.input("x", {1, 8, 12, 12});
  NodeValue a = g.node(NodeKind::Conv, "c1", {x, g.constant("w1", {16, 8, 3, 3})}, pads);
  NodeValue r = g.node(NodeKind::Relu, "r", {a});
  NodeValue b = g.node(NodeKind::Conv, "c2", {r, g.constant("w2", {16, 16, 3, 3})}, pads);
  g.output("y", g.node(NodeKind::Add, "add", {a, b}));
  BundleOptions bo;
  bo.name = "convb";
  const BundleInfo info = emitBundle(*g.f, dir + "/b", bo);
  std::ofstream(dir + "/driver.c") << kThreadsDriver;
  const std::string exe = dir + "/driver";
  ASSERT_EQ(shell(std::string(EMBER_C_COMPILER) + " -std=c11 -Wall -Wextra -Werror -I " + dir +
                  "/b " + dir + "/driver.c " + info.objectPath + " -lm -lpthread -o " + exe),
            0);
  ASSERT_EQ(shell(exe + " " + info.weightsPath + " " + dir + "/y"), 0);
  TensorMap in;
  in["x"] = Tensor(ElemKind::Float32, {1, 8, 12, 12});
  for (int64_t i = 0; i < in["x"].size(); ++i)
    in["x"].data<float>()[i] = static_cast<float>(std::sin(double(i)));
  const TensorMap ref = createInterpreterBackend()->compile(*g.f)->run(in);
  Tensor y(ref.at("y").type());
  const std::string bytes = readFileBytes(dir + "/y");
  ASSERT_EQ(bytes.size(), y.sizeInBytes());
  std::memcpy(y.raw(), bytes.data(), bytes.size());
  EXPECT_EQ(compare({{"y", y}}, ref, 1e-5), "");
}

TEST(Bundle, RefusalsWriteNothing) {
  const std::string dir = testDir();
  G g;
  gatherGraph(g);
  BundleOptions bo;
  bo.name = "9lives";
  try {
    emitBundle(*g.f, dir + "/a", bo);
    FAIL() << "a name that is not a C identifier was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("C identifier"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir + "/a"));

  // Hardmax has no cpu kernel (a rarely used operator, kept host-interpreter only): both
  // nodes are listed at once.
  G h;
  NodeValue d1 = h.node(NodeKind::Hardmax, "d1", {h.input("x", {1, 16, 6, 6})});
  h.output("y", h.node(NodeKind::Hardmax, "d2", {d1}));
  try {
    emitBundle(*h.f, dir + "/b");
    FAIL() << "unsupported nodes were accepted";
  } catch (const Unsupported& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("Hardmax 'd1'"), std::string::npos) << m;
    EXPECT_NE(m.find("Hardmax 'd2'"), std::string::npos) << m;
  }
  EXPECT_FALSE(fs::exists(dir + "/b"));
}

#ifdef EMBERC_PATH
struct CliRun {
  int status = -1;
  std::string out, err;
};

CliRun emberc(const std::string& dir, const std::string& args) {
  CliRun r;
  r.status = shell(std::string(EMBERC_PATH) + " " + args + " > " + dir + "/out.txt 2> " + dir +
                   "/err.txt");
  r.out = readFileBytes(dir + "/out.txt");
  r.err = readFileBytes(dir + "/err.txt");
  return r;
}

TEST(Bundle, EmbercOptions) {
  const std::string dir = testDir();
  ASSERT_EQ(shell(std::string(EMBER_PYTHON) + " " + EMBER_SOURCE_DIR +
                  "/tests/compiler/npu/make_tiny_models.py --out " + dir + " > /dev/null"),
            0);
  const std::string model = dir + "/tiny_cnn.onnx";
  CliRun r = emberc(dir, "--help");
  EXPECT_EQ(r.status, 0);
  for (const char* o : {"--backend", "--emit-bundle", "--bundle-name", "--precision"})
    EXPECT_NE(r.out.find(o), std::string::npos) << o;
  r = emberc(dir, model + " --backend cpu");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--emit-bundle"), std::string::npos) << r.err;
  r = emberc(dir, model + " --backend gpu --emit-bundle " + dir + "/x");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--backend: gpu not in {npu,cpu}"), std::string::npos) << r.err;
  r = emberc(dir, model + " -o x.elf --emit-bundle " + dir + "/x");
  EXPECT_EQ(r.status, 2);
  r = emberc(dir, model + " -o x.elf --precision float");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("int8 only"), std::string::npos) << r.err;
  r = emberc(dir, model + " --backend cpu --emit-bundle " + dir + "/x --bundle-name a-b");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bundle name 'a-b'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x"));

  r = emberc(dir, model + " --backend cpu --precision int8 --calibrate random:2 --emit-bundle " +
                      dir + "/q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("int8 bundle 'tiny_cnn'"), std::string::npos) << r.out;
  for (const char* f : {"/q/tiny_cnn.o", "/q/tiny_cnn.h", "/q/tiny_cnn.weights"})
    EXPECT_TRUE(fs::exists(dir + f)) << f;
}
#endif

} // namespace
} // namespace ember
