// The control-core firmware (firmware/, docs/firmware.md) on the host, as the control
// core of a test device: the SystemC platform (ember/sim/Platform.h) runs each firmware
// step as its core's program, the HAL reaching the register block through the platform's
// TLM-2.0 bus, the NPU being the SystemC cycle engine. Covers every validation rule (a
// job built to break exactly it, refused without the NPU starting), every fault kind and
// the watchdog timeout each followed by a good job on the same device (recovery), and the
// ring: wrap-around, a full ring, many jobs in flight, completions in order.
#include "ember_fw.h"

#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "ember/sim/Platform.h"
#include "ember/sim/Simulator.h"
#include "ember_npu_isa.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace {

using u64 = std::uint64_t;

const ember::isa::IsaDescription& isa() {
  static auto d = ember::isa::IsaDescription::loadFile(EMBER_SOURCE_DIR "/isa/ember-v1.json");
  return d;
}

/// Device DRAM, the platform (register block, NPU) and the ring's host side of one test
/// device.
struct Device {
  std::vector<std::uint8_t> dram = std::vector<std::uint8_t>(64u << 20, 0);
  ember::sim::Platform platform{isa(), dram.data(), dram.size()};
  ember::platform::CoreBus* bus = nullptr; ///< While the core runs.
  std::uint32_t doorbell = 0, head = 0, irqs = 0;

  std::uint32_t read(std::uint32_t off) { return bus->read(off); }
  void write(std::uint32_t off, std::uint32_t v) { bus->write(off, v); }
  void idle() { bus->idle(); }
  std::uint64_t starts() const { return platform.starts(); }
  /// Runs `fn` as the control core's program.
  void core(const std::function<void()>& fn) {
    platform.run([&](ember::platform::CoreBus& b) {
      bus = &b;
      fn();
      bus = nullptr;
    });
  }
};

Device* dev = nullptr;

} // namespace

extern "C" {
std::uint32_t ember_hal_reg_read(std::uint32_t o) {
  return dev->read(o);
}
void ember_hal_reg_write(std::uint32_t o, std::uint32_t v) {
  dev->write(o, v);
}
std::uint32_t ember_hal_doorbell(void) {
  return dev->doorbell;
}
void ember_hal_set_ring_head(std::uint32_t h) {
  dev->head = h;
}
void ember_hal_notify_host(void) {
  ++dev->irqs;
}
void ember_hal_idle(void) {
  dev->idle();
}
void ember_hal_spend(std::uint64_t c) {
  dev->bus->spend(c);
}
std::uint8_t* ember_hal_dram(std::uint64_t a, std::uint64_t n) {
  if (a > dev->dram.size() || n > dev->dram.size() - a)
    return nullptr;
  return dev->dram.data() + a;
}
}

namespace {

constexpr u64 kRing = 0x10000, kBinary = 0x100000, kWindow = 0x1000000, kWindowSize = 8u << 20;

/// A program that copies 64 constant bytes to the output region (`salt` varies them).
ember::isa::Binary copyProgram(int salt) {
  std::string s = ".region \"const\" const 0x0 0x1000\n.region \"out\" output 0x10000 0x100\n";
  s += ".byte";
  for (int i = 0; i < 64; ++i)
    s += " " + std::to_string((i * 7 + salt) & 0x7f);
  s += "\n  dma.ld sram=act sram_addr=0 dram_addr=0 size0=4 size1=1 size2=1 push_next\n"
       "  sync engine=compute pop_prev push_next\n"
       "  dma.st pop_prev sram=act sram_addr=0 dram_addr=0x10000 size0=4 size1=1 size2=1\n"
       "  finish\n";
  return ember::isa::assemble(s, isa(), "copy.s");
}

struct Fixture : ::testing::Test {
  Device d;
  std::uint32_t fwHead = 0;
  void SetUp() override {
    dev = &d;
    d.core([&] {
      d.write(EMBER_REG_RING_BASE_LO, std::uint32_t(kRing));
      d.write(EMBER_REG_RING_SIZE, 4);
    });
  }
  /// One firmware step on the control core.
  int step() {
    int r = 0;
    d.core([&] { r = ember_fw_step(&fwHead); });
    return r;
  }
  ember_job_slot slotFor(u64 binAddr, std::size_t size, std::uint32_t id) {
    ember_job_slot s{};
    s.magic = EMBER_SLOT_MAGIC;
    s.job_id = id;
    s.binary_addr = binAddr;
    s.binary_size = size;
    s.window_base = kWindow;
    s.window_size = kWindowSize;
    s.cycle_budget = 1u << 20;
    return s;
  }
  /// Places `image` at kBinary + k * 64 KiB and submits a job for it (tail += 1).
  ember_job_slot submit(const std::vector<std::uint8_t>& image, std::uint32_t id,
                        void (*edit)(ember_job_slot&) = nullptr) {
    const u64 at = kBinary + u64(id % 16) * 0x10000;
    std::memcpy(d.dram.data() + at, image.data(), image.size());
    ember_job_slot s = slotFor(at, image.size(), id);
    if (edit)
      edit(s);
    std::memcpy(d.dram.data() + kRing + (d.doorbell % 4) * 64, &s, sizeof s);
    ++d.doorbell;
    return s;
  }
  ember_completion completion(std::uint32_t index) {
    ember_completion c;
    std::memcpy(&c, d.dram.data() + kRing + (4 + index % 4) * 64, sizeof c);
    return c;
  }
  ember_completion runOne(const std::vector<std::uint8_t>& image, std::uint32_t id,
                          void (*edit)(ember_job_slot&) = nullptr) {
    submit(image, id, edit);
    EXPECT_EQ(step(), 1);
    return completion(fwHead - 1);
  }
  std::vector<std::uint8_t> output() const {
    return {d.dram.begin() + long(kWindow + 0x10000), d.dram.begin() + long(kWindow + 0x10040)};
  }
};

std::vector<std::uint8_t> image(const ember::isa::Binary& b) {
  return ember::isa::serializeElf(b, isa());
}

TEST_F(Fixture, AGoodJobRunsAndItsOutputsAreTheModelsOwn) {
  ember::isa::Binary bin = copyProgram(3);
  ember_completion c = runOne(image(bin), 41);
  EXPECT_EQ(c.magic, EMBER_COMPLETION_MAGIC);
  EXPECT_EQ(c.job_id, 41u);
  EXPECT_EQ(c.status, EMBER_JOB_DONE) << c.detail;
  ember::platform::Result fresh = ember::sim::Simulator(isa()).run(bin, {});
  EXPECT_EQ(c.cycles, fresh.report.cycles);
  EXPECT_EQ(output(), fresh.dram.read(0x10000, 64));
  EXPECT_EQ(d.head, 1u);
  EXPECT_EQ(d.irqs, 1u);
}

/// One job per rule, built to break exactly that rule.
struct RuleCase {
  std::uint32_t rule;
  const char* name;
};

TEST_F(Fixture, EveryValidationRuleRefusesItsJobWithoutStartingTheNpu) {
  const auto good = image(copyProgram(1));
  std::set<std::uint32_t> covered;
  auto expectRefused = [&](const ember_completion& c, std::uint32_t rule, const char* what) {
    EXPECT_EQ(c.status, EMBER_JOB_REFUSED) << what;
    EXPECT_EQ(c.detail, rule) << what;
    covered.insert(rule);
  };
  std::uint32_t id = 0;
  // Slot fields.
  expectRefused(runOne(good, ++id, [](ember_job_slot& s) { s.magic ^= 1; }), EMBER_RULE_SLOT_MAGIC,
                "magic");
  expectRefused(runOne(good, ++id, [](ember_job_slot& s) { s.reserved[1] = 1; }),
                EMBER_RULE_SLOT_RESERVED, "reserved");
  expectRefused(runOne(good, ++id, [](ember_job_slot& s) { s.cycle_budget = 0; }),
                EMBER_RULE_BUDGET, "budget");
  expectRefused(runOne(good, ++id, [](ember_job_slot& s) { s.binary_addr = u64(1) << 40; }),
                EMBER_RULE_BINARY_RANGE, "binary outside DRAM");
  expectRefused(runOne(good, ++id, [](ember_job_slot& s) { s.binary_addr = ~u64(0) - 8; }),
                EMBER_RULE_BINARY_RANGE, "binary wraps");
  expectRefused(runOne(good, ++id, [](ember_job_slot& s) { s.window_size = u64(1) << 40; }),
                EMBER_RULE_WINDOW_RANGE, "window outside DRAM");
  expectRefused(runOne(good, ++id, [](ember_job_slot& s) { s.window_base = s.binary_addr - 16; }),
                EMBER_RULE_OVERLAP, "binary inside the window");
  // The binary.
  auto patched = [&](std::size_t at, std::uint8_t v, bool reseal) {
    auto img = good;
    img[at] = v;
    if (reseal)
      ember::isa::resealElf(img);
    return img;
  };
  expectRefused(runOne(patched(18, 0x02, false), ++id), EMBER_RULE_ELF_HEADER, "e_machine");
  expectRefused(runOne(patched(48, 1, false), ++id), EMBER_RULE_FORMAT_VERSION, "format 1");
  auto far = good;
  far[40 + 5] = 1; // e_shoff beyond the file
  expectRefused(runOne(far, ++id), EMBER_RULE_SECTIONS, "section table");
  {
    auto img = good;
    const auto secs = ember::isa::listSections(good.data(), good.size());
    for (std::size_t i = 0; i < secs.size(); ++i)
      if (secs[i].name == ".ember.debug") // its type becomes an unknown one
        img[std::size_t(good[40] | good[41] << 8) + i * 64 + 4] = 0x09;
    expectRefused(runOne(img, ++id), EMBER_RULE_SECTION_SET, "unknown section type");
  }
  {
    auto img = good;
    const auto secs = ember::isa::listSections(good.data(), good.size());
    for (const auto& s : secs)
      if (s.name == ".ember.const")
        img[s.offset] ^= 0x40;
    expectRefused(runOne(img, ++id), EMBER_RULE_DIGEST, "flipped constant");
  }
  {
    static const auto large =
        ember::isa::IsaDescription::loadFile(EMBER_SOURCE_DIR "/isa/examples/ember-v1-large.json");
    auto other =
        ember::isa::serializeElf(ember::isa::assemble("finish\n", large, "other.s"), large);
    expectRefused(runOne(other, ++id), EMBER_RULE_ISA, "another description's binary");
  }
  expectRefused(runOne(good, ++id, [](ember_job_slot& s) { s.window_size = 0x1000; }),
                EMBER_RULE_MEMMAP, "output region beyond a 4 KiB window");
  {
    ember::isa::Binary empty = ember::isa::assemble("finish\n", isa(), "e.s");
    empty.code.clear();
    auto img = ember::isa::serializeElf(empty, isa());
    expectRefused(runOne(img, ++id), EMBER_RULE_TEXT, "no instructions");
  }
  expectRefused(
      runOne(image(ember::isa::assemble(
                 "dma.ld sram=act sram_addr=0 dram_addr=0x7ffff0 size0=2 size1=1 size2=1\nfinish\n",
                 isa(), "far.s")),
             ++id),
      EMBER_RULE_DMA_EXTENT, "a DMA past the window's end");
  // The ring: a tail more than RING_SIZE ahead of the head.
  submit(good, ++id);
  d.doorbell = fwHead + 9;
  EXPECT_EQ(step(), 1);
  expectRefused(completion(fwHead - 1), EMBER_RULE_RING_INDEX, "ring index");
  EXPECT_EQ(d.starts(), 0u) << "a refused job touched the NPU";
  EXPECT_EQ(covered.size(), std::size_t(EMBER_RULE_COUNT - 1)) << "a job for every rule";
}

/// A program of each fault kind, with the kind the model reports.
const char* const kFaults[] = {
    "dma.ld sram=act sram_addr=16383 dram_addr=0 size0=4 size1=1 size2=1\nfinish\n",
    "vshr dst_mem=act src_mem=act dst_addr=0 src_addr=0 n0=1 n1=1 imm0=40\nfinish\n",
    "sync engine=compute pop_prev\nfinish\n",
    "sync engine=load push_next\nsync engine=load push_next\nsync engine=load push_next\n"
    "sync engine=load push_next\nsync engine=load push_next\nsync engine=load push_next\n"
    "sync engine=load push_next\nsync engine=load push_next\nsync engine=load push_next\nfinish\n",
    "sync engine=load pop_next\nsync engine=compute pop_prev\nfinish\n",
};

TEST_F(Fixture, EveryFaultAndTheWatchdogAreRecoveredFrom) {
  const auto good = image(copyProgram(5));
  ember::platform::Result fresh = ember::sim::Simulator(isa()).run(copyProgram(5), {});
  std::uint32_t id = 100;
  auto recover = [&](const char* what) {
    std::fill(d.dram.begin() + long(kWindow), d.dram.begin() + long(kWindow + kWindowSize), 0);
    ember_completion ok = runOne(good, ++id);
    EXPECT_EQ(ok.status, EMBER_JOB_DONE) << "after " << what;
    EXPECT_EQ(output(), fresh.dram.read(0x10000, 64)) << "after " << what;
    EXPECT_EQ(ok.cycles, fresh.report.cycles) << "after " << what;
  };
  for (const char* text : kFaults) {
    ember::isa::Binary bin = ember::isa::assemble(text, isa(), "fault.s");
    ember::platform::Result ref = ember::sim::Simulator(isa()).run(bin, {});
    ASSERT_TRUE(ref.report.fault.has_value()) << text;
    ember_completion c = runOne(image(bin), ++id);
    EXPECT_EQ(c.status, EMBER_JOB_FAULT) << text;
    EXPECT_EQ(c.detail, std::uint32_t(ref.report.fault->kind)) << text;
    EXPECT_EQ(std::int64_t(c.fault_index), ref.report.fault->instruction) << text;
    recover(text);
  }
  // An illegal opcode: the digest is resealed over a corrupted instruction word.
  {
    auto img = image(ember::isa::assemble("sync engine=load\nfinish\n", isa(), "bad.s"));
    for (const auto& s : ember::isa::listSections(img.data(), img.size()))
      if (s.name == ".ember.text")
        std::memset(img.data() + s.offset, 0xff, 4);
    ember::isa::resealElf(img);
    ember_completion c = runOne(img, ++id);
    EXPECT_EQ(c.status, EMBER_JOB_FAULT);
    EXPECT_EQ(c.detail, EMBER_FAULT_ILLEGAL_OPCODE);
    recover("illegal opcode");
  }
  // The watchdog: a long gemm under a 500-cycle budget.
  ember_completion t = runOne(
      image(ember::isa::assemble(
          "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=255 n1=8 n2=8 act_s0=1 acc_s0=1\nfinish\n",
          isa(), "long.s")),
      ++id, [](ember_job_slot& s) { s.cycle_budget = 500; });
  EXPECT_EQ(t.status, EMBER_JOB_TIMEOUT);
  EXPECT_GE(t.cycles, 500u);
  // The watchdog's latency: the core sees the overrun at its next timer tick at the latest.
  EXPECT_LT(t.cycles,
            500u + isa().hw().control.tick_cycles + 16 * isa().hw().control.register_access_cycles);
  recover("the watchdog");
}

TEST_F(Fixture, TheRingWrapsFillsAndCompletesInOrder) {
  // 4-slot ring, 11 jobs: submitted four at a time (a full ring: tail - head == 4), the
  // firmware drains them; indices run past the ring size (wrap-around).
  std::vector<std::vector<std::uint8_t>> imgs;
  for (int k = 0; k < 11; ++k)
    imgs.push_back(image(copyProgram(k)));
  std::uint32_t next = 0, done = 0;
  while (done < 11) {
    while (next < 11 && d.doorbell - fwHead < 4) {
      submit(imgs[next], next);
      ++next;
    }
    if (next - done == 4) {
      EXPECT_EQ(d.doorbell - fwHead, 4u) << "a full ring";
    }
    while (step()) {
      ember_completion c = completion(fwHead - 1);
      EXPECT_EQ(c.job_id, done) << "completions in submission order";
      EXPECT_EQ(c.status, EMBER_JOB_DONE);
      EXPECT_EQ(
          output(),
          ember::sim::Simulator(isa()).run(copyProgram(int(done)), {}).dram.read(0x10000, 64));
      ++done;
      if (d.doorbell - fwHead == 0)
        break;
    }
  }
  EXPECT_EQ(d.head, 11u);
  EXPECT_EQ(step(), 0) << "an empty ring";
}

} // namespace
