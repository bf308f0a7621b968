// libember_runtime (runtime/): jobs through a device's ring, the control core running
// the firmware, the SystemC model behind the registers. Outputs and cycles are checked
// against direct runs of the model; waits never hang.
#include "ember/runtime/Runtime.h"

#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "ember/isa/error.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

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

std::uint64_t le(const std::vector<std::uint8_t>& b, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = v << 8 | b[at + std::size_t(i)];
  return v;
}

/// The cycles the firmware's job costs at least and at most, derived by hand from
/// docs/firmware.md section 6 and the ELF image's section table (read here, not by the
/// firmware): its own work (job_cycles + check_cycles_per_instruction per instruction),
/// one copy-DMA check stream per CRC of the digest check (latency + ceil(n / DRAM
/// bytes per cycle) each: the digest table less its CRC, the ELF header, the section
/// headers, every other section), the constants' copy (latency + 2 * ceil(n / DRAM bytes
/// per cycle)); at most 64 register accesses of the ring and 8 per DMA transfer (7
/// accesses and the poll's last wait) more.
std::pair<std::uint64_t, std::uint64_t> firmwareBounds(const ember::isa::Binary& bin) {
  const auto img = ember::isa::serializeElf(bin, isa());
  const auto& hw = isa().hw();
  auto stream = [&](std::uint64_t n) {
    return hw.dma.latency_cycles + (n + hw.dram.bytes_per_cycle - 1) / hw.dram.bytes_per_cycle;
  };
  const std::uint64_t shoff = le(img, 40, 8), shnum = le(img, 60, 2);
  std::uint64_t lo = hw.control.job_cycles +
                     bin.code.size() * hw.control.check_cycles_per_instruction,
                dmas = 0;
  for (std::uint64_t i = 1; i < shnum; ++i) {
    const std::size_t sh = std::size_t(shoff + 64 * i);
    const std::uint64_t type = le(img, sh + 4, 4), size = le(img, sh + 32, 8);
    lo += type == 0x8000EB07u ? stream(size - 4) + stream(64) + stream(shnum * 64) : stream(size);
    dmas += type == 0x8000EB07u ? 3 : 1;
    if (type == 0x8000EB02u && size) { // .ember.const: copied into the window too
      lo += stream(size) - hw.dma.latency_cycles + stream(size);
      ++dmas;
    }
  }
  const std::uint64_t a = hw.control.register_access_cycles;
  return {lo, lo + 64 * a + dmas * 8 * a};
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
    // platform = link + firmware + NPU. The link: the image and the 64 input bytes up,
    // the 64 output bytes down, each latency + ceil(bytes / bytes_per_cycle).
    const auto& link = isa().hw().host_link;
    const std::uint64_t up = ember::isa::serializeElf(bin, isa()).size() + 64;
    EXPECT_EQ(c->link_cycles, link.latency_cycles +
                                  (up + link.bytes_per_cycle - 1) / link.bytes_per_cycle +
                                  link.latency_cycles + 64 / link.bytes_per_cycle);
    EXPECT_EQ(c->npu_cycles, ref.report.cycles);
    // The firmware: its own work and the digest check's DMA streams, then some dozens of
    // register accesses (the IRQ wakes the core when the job ends, no tick wait).
    const auto [lo, hi] = firmwareBounds(bin);
    EXPECT_GE(c->firmware_cycles, lo);
    EXPECT_LT(c->firmware_cycles, hi);
  }
}

TEST(Runtime, TheConstantsAreCopiedByTheDmaAndTheirCopyIsTimed) {
  // tests/isa/data/conv_tile.s: 4 KiB of constants (weights, biases, requantization).
  std::ifstream in(EMBER_SOURCE_DIR "/tests/isa/data/conv_tile.s");
  std::stringstream text;
  text << in.rdbuf();
  const auto bin = ember::isa::assemble(text.str(), isa(), "conv_tile.s");
  ASSERT_FALSE(bin.constants.empty());
  std::vector<std::uint8_t> x(1024);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = std::uint8_t(i * 29 + 3);
  ember::runtime::Device dev(isa(), {});
  ember::runtime::Session s(dev);
  auto c = s.wait(s.submit(bin, {{"x", x}}, 1000000), 10s);
  ASSERT_TRUE(c.has_value());
  ASSERT_TRUE(c->ok()) << c->describe();
  // The outputs need the constants in the window: the model's own, bit for bit.
  ember::platform::Result ref = ember::sim::Simulator(isa()).run(bin, {{"x", x}});
  EXPECT_EQ(c->outputs.at("y"), ref.dram.read(0x20000, 256));
  EXPECT_EQ(c->npu_cycles, ref.report.cycles);
  const auto [lo, hi] = firmwareBounds(bin);
  EXPECT_GE(c->firmware_cycles, lo);
  EXPECT_LT(c->firmware_cycles, hi);
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
