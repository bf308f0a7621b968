// ember-sim end to end: assembly -> ember-as -> ELF; .npy in, .npy + JSON report + trace out.
#include "ember/support/Npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

int sh(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// y = max(x, 0) on a 1x20x2x3 int8 tensor (two channel blocks, 12 act rows).
const char* kRelu = R"(.isa "ember-v1"
.region "in" input 0x0 0x200
.region "out" output 0x1000 0x200
.io input "x" dtype=int8 layout=nchwc shape=1x20x2x3 scale=0.1 zp=0 offset=0x0 size=192
.io output "y" dtype=int8 layout=nchwc shape=1x20x2x3 scale=0.1 zp=0 offset=0x1000 size=192
.node "relu"
  dma.ld sram=act sram_addr=0 dram_addr=0x0 size0=12 size1=1 size2=1 push_next
  vclamp dst_mem=act src_mem=act dst_addr=0 src_addr=0 n0=12 n1=1 dst_s0=1 src_s0=1 imm0=0 imm1=127 pop_prev push_next
  dma.st sram=act sram_addr=0 dram_addr=0x1000 size0=12 size1=1 size2=1 pop_prev push_prev
.endnode
  finish pop_next
)";

TEST(SimCli, RunsABinaryFromNpyToNpyWithReports) {
  fs::path dir = fs::path(EMBER_BINARY_DIR) / "tests" / "sim" / "cli_relu";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "relu.s") << kRelu;
  ASSERT_EQ(sh(std::string(EMBER_AS_EXE) + " " + (dir / "relu.s").string() + " -o " +
               (dir / "relu.elf").string()),
            0);
  std::vector<std::int8_t> x(120);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<std::int8_t>(int(i * 7 % 256) - 128);
  ember::writeNpy((dir / "x.npy").string(),
                  ember::Tensor::fromVector<std::int8_t>({1, 20, 2, 3}, x));
  std::string cmd = std::string(EMBER_SIM_EXE) + " " + (dir / "relu.elf").string() +
                    " --input x=" + (dir / "x.npy").string() + " --out " + (dir / "out").string() +
                    " --report " + (dir / "r.json").string() + " --trace " +
                    (dir / "t.json").string() + " > " + (dir / "table.txt").string();
  ASSERT_EQ(sh(cmd), 0);
  ember::Tensor y = ember::readNpy((dir / "out" / "y.npy").string());
  ASSERT_EQ(y.dims(), (ember::Shape{1, 20, 2, 3}));
  auto yv = y.toVector<std::int8_t>();
  for (std::size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(yv[i], std::max<std::int8_t>(x[i], 0)) << i;
  auto rep = nlohmann::json::parse(slurp(dir / "r.json"));
  EXPECT_GT(rep["cycles"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(rep["layers"][0]["name"], "relu");
  auto trace = nlohmann::json::parse(slurp(dir / "t.json"));
  EXPECT_TRUE(trace.contains("traceEvents"));
  EXPECT_NE(slurp(dir / "table.txt").find("energy component"), std::string::npos);
}

TEST(SimCli, FaultingProgramExitsNonZeroWithTheRecord) {
  fs::path dir = fs::path(EMBER_BINARY_DIR) / "tests" / "sim" / "cli_fault";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "dead.s")
      << "sync engine=load pop_next push_next\nsync engine=compute pop_prev push_prev\nfinish\n";
  ASSERT_EQ(sh(std::string(EMBER_AS_EXE) + " " + (dir / "dead.s").string() + " -o " +
               (dir / "dead.elf").string()),
            0);
  int rc =
      sh(std::string(EMBER_SIM_EXE) + " " + (dir / "dead.elf").string() + " --no-table --report " +
         (dir / "r.json").string() + " 2> " + (dir / "err.txt").string());
  EXPECT_EQ(rc, 3);
  EXPECT_NE(slurp(dir / "err.txt").find("fault deadlock at cycle"), std::string::npos);
  auto rep = nlohmann::json::parse(slurp(dir / "r.json"));
  EXPECT_EQ(rep["fault"]["kind"], "deadlock");
  // A missing file is bad input (status 1) and a malformed option a usage error (2), not
  // crashes.
  EXPECT_EQ(sh(std::string(EMBER_SIM_EXE) + " " + (dir / "nope.elf").string() + " 2>/dev/null"), 1);
  EXPECT_EQ(
      sh(std::string(EMBER_SIM_EXE) + " " + (dir / "dead.elf").string() + " --input x 2>/dev/null"),
      2);
}

// Issue 16: a --dram-window smaller than the memory map is bad input (1), not an NPU
// fault (3); a cycle budget of 0 or a negative one is a usage error (2).
TEST(SimCli, WindowAndBudgetOptionsAreChecked) {
  fs::path dir = fs::path(EMBER_BINARY_DIR) / "tests" / "sim" / "cli_bounds";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "relu.s") << kRelu;
  const std::string elf = (dir / "relu.elf").string(), err = (dir / "err.txt").string();
  ASSERT_EQ(sh(std::string(EMBER_AS_EXE) + " " + (dir / "relu.s").string() + " -o " + elf), 0);
  const std::string sim = std::string(EMBER_SIM_EXE) + " " + elf + " --no-table ";
  EXPECT_EQ(sh(sim + "--dram-window 0x1000 2> " + err), 1);
  EXPECT_NE(slurp(err).find(elf + ": section .ember.memmap: region \"out\": [4096, 4608) does "
                                  "not fit the job's DRAM window of 4096 bytes (--dram-window)"),
            std::string::npos)
      << slurp(err);
  EXPECT_EQ(sh(sim + "--dram-window 0x1200 2> " + err), 0) << slurp(err);
  EXPECT_EQ(sh(sim + "--cycle-budget -1 2> " + err), 2);
  EXPECT_NE(slurp(err).find("--cycle-budget: expected a positive number, got \"-1\""),
            std::string::npos)
      << slurp(err);
  EXPECT_EQ(sh(sim + "--cycle-budget 0 2> " + err), 2);
  EXPECT_EQ(sh(sim + "--dram-window -5 2> " + err), 2);
  EXPECT_EQ(sh(sim + "--cycle-budget 10 2> " + err), 3);
  EXPECT_NE(slurp(err).find("fault cycle-budget"), std::string::npos) << slurp(err);
}

#ifdef EMBER_RUN_EXE
// ember-run BIN.elf --device sim: float inputs quantized from the I/O table, outputs,
// report, trace and the table; errors for the wrong device, unknown inputs, NaN.
TEST(SimCli, EmberRunRunsABinaryOnTheSimDevice) {
  fs::path dir = fs::path(EMBER_BINARY_DIR) / "tests" / "sim" / "cli_run_relu";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "relu.s") << kRelu;
  const std::string elf = (dir / "relu.elf").string();
  ASSERT_EQ(sh(std::string(EMBER_AS_EXE) + " " + (dir / "relu.s").string() + " -o " + elf), 0);
  // Float input: quantized with scale 0.1, zero point 0 as QuantizeLinear does (float32
  // division, round half to even, saturate).
  std::vector<float> x(120);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = -20.0f + 0.35f * float(i);
  ember::writeNpy((dir / "x.npy").string(), ember::Tensor::fromVector<float>({1, 20, 2, 3}, x));
  const std::string run = std::string(EMBER_RUN_EXE) + " " + elf;
  ASSERT_EQ(sh(run + " --device sim --input x=" + (dir / "x.npy").string() + " --out " +
               (dir / "out").string() + " --report " + (dir / "r.json").string() + " --trace " +
               (dir / "t.json").string() + " > " + (dir / "stdout.txt").string()),
            0);
  auto yv = ember::readNpy((dir / "out" / "y.npy").string()).toVector<std::int8_t>();
  ASSERT_EQ(yv.size(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    double q = std::min(127.0, std::max(-128.0, double(std::nearbyint(x[i] / 0.1f))));
    EXPECT_EQ(int(yv[i]), int(std::max(q, 0.0))) << i;
  }
  const std::string table = slurp(dir / "stdout.txt");
  EXPECT_NE(table.find("energy component"), std::string::npos);
  EXPECT_NE(table.find("output y: int8[1, 20, 2, 3]"), std::string::npos);
  EXPECT_NE(table.find("NPU cycles"), std::string::npos);
  auto rep = nlohmann::json::parse(slurp(dir / "r.json"));
  EXPECT_EQ(rep["layers"][0]["name"], "relu");
  EXPECT_TRUE(nlohmann::json::parse(slurp(dir / "t.json")).contains("traceEvents"));
  // Random inputs for what is not given.
  EXPECT_EQ(sh(run + " --random-input 7 --quiet > /dev/null"), 0);
  // Errors name the problem and exit with 1.
  const std::string err = (dir / "err.txt").string();
  EXPECT_EQ(sh(run + " --device interp 2> " + err), 1);
  EXPECT_NE(slurp(err).find("runs only on the NPU devices (sim, rtl), not 'interp'"),
            std::string::npos);
  EXPECT_EQ(sh(run + " --input z=" + (dir / "x.npy").string() + " 2> " + err), 1);
  EXPECT_NE(slurp(err).find("no input named 'z' (its inputs: x)"), std::string::npos);
  std::vector<float> nan(120, std::nanf(""));
  ember::writeNpy((dir / "nan.npy").string(), ember::Tensor::fromVector<float>({1, 20, 2, 3}, nan));
  EXPECT_EQ(sh(run + " --input x=" + (dir / "nan.npy").string() + " 2> " + err), 1);
  EXPECT_NE(slurp(err).find("element 0 is NaN"), std::string::npos);
  std::vector<float> few(7, 0.0f);
  ember::writeNpy((dir / "few.npy").string(), ember::Tensor::fromVector<float>({7}, few));
  EXPECT_EQ(sh(run + " --input x=" + (dir / "few.npy").string() + " 2> " + err), 1);
  EXPECT_NE(slurp(err).find("holds shape [7], the binary's input 'x' is [1, 20, 2, 3]"),
            std::string::npos);
}

// Inputs are checked against the I/O entry's logical shape and element type, never
// reinterpreted (issue 16, item 4): an NHWC array for an NCHW input, int64/int32/bool
// data for an int8 input, and out-of-range values for a uint8 input are refused.
TEST(SimCli, InputsMustHaveTheLogicalShapeAndAFittingType) {
  fs::path dir = fs::path(EMBER_BINARY_DIR) / "tests" / "sim" / "cli_input_checks";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string src = kRelu;
  std::ofstream(dir / "relu.s") << src;
  // The same program with a uint8 input (zero point 128).
  std::string u8 = src;
  u8.replace(u8.find(R"(.io input "x" dtype=int8)"), 24, R"(.io input "x" dtype=uint8)");
  std::ofstream(dir / "relu_u8.s") << u8;
  const std::string elf = (dir / "relu.elf").string(), elf8 = (dir / "relu_u8.elf").string();
  ASSERT_EQ(sh(std::string(EMBER_AS_EXE) + " " + (dir / "relu.s").string() + " -o " + elf), 0);
  ASSERT_EQ(sh(std::string(EMBER_AS_EXE) + " " + (dir / "relu_u8.s").string() + " -o " + elf8), 0);
  const std::string err = (dir / "err.txt").string();
  auto run = [&](const std::string& bin, const std::string& npy) {
    return sh(std::string(EMBER_SIM_EXE) + " " + bin +
              " --no-table --input x=" + (dir / npy).string() + " 2> " + err + " > /dev/null");
  };
  using ember::Tensor;
  // Right shape, float32 and int8: accepted.
  ember::writeNpy((dir / "f.npy").string(),
                  Tensor::fromVector<float>({1, 20, 2, 3}, std::vector<float>(120, 0.5f)));
  ember::writeNpy((dir / "i8.npy").string(),
                  Tensor::fromVector<std::int8_t>({1, 20, 2, 3}, std::vector<std::int8_t>(120, 3)));
  EXPECT_EQ(run(elf, "f.npy"), 0) << slurp(err);
  EXPECT_EQ(run(elf, "i8.npy"), 0) << slurp(err);
  // NHWC data for the NCHW input: same element count, refused.
  ember::writeNpy((dir / "nhwc.npy").string(),
                  Tensor::fromVector<float>({1, 2, 3, 20}, std::vector<float>(120, 0.5f)));
  EXPECT_EQ(run(elf, "nhwc.npy"), 1);
  EXPECT_NE(slurp(err).find("holds shape [1, 2, 3, 20], the binary's input 'x' is "
                            "[1, 20, 2, 3]"),
            std::string::npos)
      << slurp(err);
  // Integer data of another type than the entry's: refused, not reinterpreted.
  ember::writeNpy(
      (dir / "i64.npy").string(),
      Tensor::fromVector<std::int64_t>({1, 20, 2, 3}, std::vector<std::int64_t>(120, 1)));
  ember::writeNpy(
      (dir / "i32.npy").string(),
      Tensor::fromVector<std::int32_t>({1, 20, 2, 3}, std::vector<std::int32_t>(120, 1)));
  Tensor b(ember::ElemKind::Bool, {1, 20, 2, 3});
  ember::writeNpy((dir / "bool.npy").string(), b);
  for (const char* f : {"i64.npy", "i32.npy", "bool.npy"}) {
    EXPECT_EQ(run(elf, f), 1) << f;
    EXPECT_NE(slurp(err).find("input 'x' takes float32 or int8"), std::string::npos)
        << f << ": " << slurp(err);
  }
  // uint8 input: int32 data in [0, 255] is accepted, outside it refused (no saturation).
  std::vector<std::int32_t> ok(120, 200), bad(120, 7);
  bad[5] = 300;
  ember::writeNpy((dir / "u_ok.npy").string(), Tensor::fromVector<std::int32_t>({1, 20, 2, 3}, ok));
  ember::writeNpy((dir / "u_bad.npy").string(),
                  Tensor::fromVector<std::int32_t>({1, 20, 2, 3}, bad));
  EXPECT_EQ(run(elf8, "u_ok.npy"), 0) << slurp(err);
  EXPECT_EQ(run(elf8, "u_bad.npy"), 1);
  EXPECT_NE(slurp(err).find("element 5 is 300, outside [0, 255]"), std::string::npos) << slurp(err);
  // An endless input (/dev/zero) fails on its first bytes instead of filling memory.
  EXPECT_EQ(
      sh(std::string(EMBER_SIM_EXE) + " " + elf + " --no-table --input x=/dev/zero 2> " + err), 1);
  EXPECT_NE(slurp(err).find("/dev/zero: not a .npy file"), std::string::npos) << slurp(err);
}

// A faulting binary: status 3, the fault printed, no outputs written.
TEST(SimCli, EmberRunReportsAFaultAndWritesNoOutputs) {
  fs::path dir = fs::path(EMBER_BINARY_DIR) / "tests" / "sim" / "cli_run_fault";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string bad = kRelu;
  // Store 12 act rows from row 16380 of 16384: sram-out-of-range.
  bad.replace(bad.find("dma.st sram=act sram_addr=0"), 27, "dma.st sram=act sram_addr=16380");
  std::ofstream(dir / "bad.s") << bad;
  const std::string elf = (dir / "bad.elf").string();
  ASSERT_EQ(sh(std::string(EMBER_AS_EXE) + " " + (dir / "bad.s").string() + " -o " + elf), 0);
  EXPECT_EQ(sh(std::string(EMBER_RUN_EXE) + " " + elf + " --random-input 1 --out " +
               (dir / "out").string() + " > /dev/null 2> " + (dir / "err.txt").string()),
            3);
  EXPECT_NE(slurp(dir / "err.txt").find("fault sram-out-of-range"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "out" / "y.npy"));
}
#endif

} // namespace
