// libember_runtime (runtime/): jobs through a device's ring, the control core running
// the firmware, the SystemC model behind the registers. Outputs and cycles are checked
// against direct runs of the model; waits never hang.
#include "ember/runtime/Runtime.h"

#include "ember/isa/assembler.h"
#include "ember/isa/error.h"

#include <gtest/gtest.h>

#include <chrono>

namespace {

using namespace std::chrono_literals;

const ember::isa::IsaDescription& isa() {
  static auto d = ember::isa::IsaDescription::loadFile(EMBER_SOURCE_DIR "/isa/ember-v1.json");
  return d;
}

/// Doubles (saturating) an int8 input of 64 bytes into the output, via the vector unit.
ember::isa::Binary doubler() {
  return ember::isa::assemble(
      ".region \"in\" input 0x0 0x100\n.region \"out\" output 0x1000 0x100\n"
      ".io input \"x\" dtype=int8 layout=flat shape=64 scale=1 zp=0 offset=0x0 size=64\n"
      ".io output \"y\" dtype=int8 layout=flat shape=64 scale=1 zp=0 offset=0x1000 size=64\n"
      "  dma.ld sram=act sram_addr=0 dram_addr=0 size0=4 size1=1 size2=1 push_next\n"
      "  vadd pop_prev push_next dst_mem=act src_mem=act dst_addr=8 src0_addr=0 src1_addr=0 "
      "n0=4 n1=1 dst_s0=1 src0_s0=1 src1_s0=1\n"
      "  dma.st pop_prev sram=act sram_addr=8 dram_addr=0x1000 size0=4 size1=1 size2=1\n"
      "  finish\n",
      isa(), "double.s");
}

std::vector<std::uint8_t> bytes(int seed) {
  std::vector<std::uint8_t> v(64);
  for (int i = 0; i < 64; ++i)
    v[std::size_t(i)] = std::uint8_t(i * 13 + seed * 7);
  return v;
}

TEST(Runtime, JobsInFlightCompleteInOrderWithTheModelsOutputs) {
  ember::runtime::Device dev(isa(), {});
  ember::runtime::Session s(dev);
  const auto bin = doubler();
  std::vector<std::uint32_t> jobs;
  for (int k = 0; k < 20; ++k) // more than the 8 slots: submit blocks while the ring is full
    jobs.push_back(s.submit(bin, {{"x", bytes(k)}}, 100000));
  for (int k = 0; k < 20; ++k) {
    auto c = s.wait(jobs[std::size_t(k)], 10s);
    ASSERT_TRUE(c.has_value()) << k;
    EXPECT_EQ(c->record.status, EMBER_JOB_DONE) << c->describe();
    EXPECT_EQ(c->record.job_id, jobs[std::size_t(k)]);
    ember::platform::Result ref = ember::sim::Simulator(isa()).run(bin, {{"x", bytes(k)}});
    EXPECT_EQ(c->outputs.at("y"), ref.dram.read(0x1000, 64)) << k;
    ASSERT_TRUE(c->report.has_value());
    EXPECT_EQ(c->report->cycles, ref.report.cycles);
    EXPECT_EQ(c->record.cycles, ref.report.cycles);
    // The platform times the core's register traffic: the ring costs some dozens of
    // register accesses per job (the IRQ wakes the core when the job ends, no tick wait).
    EXPECT_GT(c->platform_cycles, c->record.cycles);
    EXPECT_LT(c->platform_cycles - c->record.cycles,
              64 * isa().hw().control.register_access_cycles);
  }
}

TEST(Runtime, WaitNeverHangs) {
  ember::runtime::Device dev(isa(), {});
  ember::runtime::Session s(dev);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(s.wait(12345, 50ms).has_value()); // never submitted
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  auto j = s.submit(doubler(), {}, 100000);
  ASSERT_TRUE(s.wait(j, 10s).has_value());
  EXPECT_FALSE(s.wait(j, 10ms).has_value()); // collected already
}

TEST(Runtime, FaultsAndTimeoutsAreReportedAndTheDeviceRecovers) {
  ember::runtime::Device dev(isa(), {});
  ember::runtime::Session s(dev);
  auto bad = ember::isa::assemble("sync engine=compute pop_prev\nfinish\n", isa(), "bad.s");
  auto c = s.wait(s.submit(bad, {}, 100000), 10s);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->record.status, EMBER_JOB_FAULT);
  EXPECT_EQ(c->describe(), "fault: token-underflow at instruction 0");
  auto slow = ember::isa::assemble(
      "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=255 n1=8 n2=8 act_s0=1 acc_s0=1\nfinish\n", isa(),
      "slow.s");
  c = s.wait(s.submit(slow, {}, 300), 10s);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->describe(), "timeout");
  c = s.wait(s.submit(doubler(), {{"x", bytes(3)}}, 100000), 10s);
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->ok()) << c->describe();
  ember::platform::Result ref = ember::sim::Simulator(isa()).run(doubler(), {{"x", bytes(3)}});
  EXPECT_EQ(c->outputs.at("y"), ref.dram.read(0x1000, 64));
}

TEST(Runtime, BadInputsAreErrorsBeforeAnythingIsSubmitted) {
  ember::runtime::Device dev(isa(), {});
  ember::runtime::Session s(dev);
  EXPECT_THROW(s.submit(doubler(), {{"nope", bytes(0)}}, 1000), ember::isa::Error);
  EXPECT_THROW(s.submit(doubler(), {{"x", std::vector<std::uint8_t>(3)}}, 1000), ember::isa::Error);
  EXPECT_EQ(dev.ringHead(), 0u);
}

} // namespace
