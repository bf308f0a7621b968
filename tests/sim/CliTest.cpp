// ember-sim end to end: assembly -> ember-as -> ELF; .npy in, .npy + JSON report + trace out.
#include "ember/support/Npy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

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
  // Bad usage and missing files are errors (status 1), not crashes.
  EXPECT_EQ(sh(std::string(EMBER_SIM_EXE) + " " + (dir / "nope.elf").string() + " 2>/dev/null"), 1);
  EXPECT_EQ(
      sh(std::string(EMBER_SIM_EXE) + " " + (dir / "dead.elf").string() + " --input x 2>/dev/null"),
      1);
}

} // namespace
