// The firmware against the Verilated RTL's own register port (docs/rtl/npu.md section 5.5):
// the same jobs through the job ring of two runtime devices, one on the SystemC platform
// (ember::sim::Platform), one on the RTL platform (ember::rtl::RtlPlatform: the firmware
// drives the Verilated SoC, ember_soc = the generated register block + the hand-written
// NPU). The two are independent implementations of one platform, so every completion
// record field, the platform cycles of every job (the whole SoC's: validation, register
// traffic, the NPU's run, the IRQ or the timer tick, recovery) and every output must be
// equal. Per shipped description: the assembly programs of tests/isa/data, a program of
// every fault kind each followed by a good job, the cycle budget running out in the NPU
// (at a start and on the clock), a watchdog timeout, a refused job, and a batch of jobs
// in flight in a 4-slot ring.
#include "ember/isa/assembler.h"
#include "ember/isa/binary.h"
#include "ember/rtl/RtlPlatform.h"
#include "ember/runtime/Runtime.h"
#include "ember/sim/Simulator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using ember::runtime::Completion;
using u64 = std::uint64_t;
using Inputs = std::map<std::string, std::vector<std::uint8_t>>;

ember::isa::IsaDescription load(const std::string& name) {
  return ember::isa::IsaDescription::loadFile(
      name == "ember-v1" ? EMBER_SOURCE_DIR "/isa/ember-v1.json"
                         : EMBER_SOURCE_DIR "/isa/examples/" + name + ".json");
}

struct Job {
  std::string what;
  ember::isa::Binary bin;
  Inputs inputs;
  u64 budget = 1u << 24; ///< The slot's (the firmware's watchdog).
  u64 npu_budget = 0;    ///< The NPU's own (JobPrepare), 0: the default.
  u64 window = 0;        ///< The job's DRAM window, 0: its memory map's extent.
  std::uint32_t status = EMBER_JOB_DONE;
};

Inputs randomInputs(const ember::isa::Binary& b, unsigned seed) {
  Inputs in;
  for (const auto& io : b.io)
    if (io.dir == ember::isa::IoDir::Input) {
      std::vector<std::uint8_t> v(io.size_bytes);
      for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = std::uint8_t((i * 2654435761u + seed * 40503u) >> 7);
      in[io.name] = v;
    }
  return in;
}

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Copies 4 rows of constants through the three engines to the output region.
ember::isa::Binary copyProgram(const ember::isa::IsaDescription& d, int salt) {
  std::string s =
      ".region \"const\" const 0x0 0x1000\n.region \"out\" output 0x10000 0x400\n"
      ".io output \"y\" dtype=int8 layout=flat shape=" +
      std::to_string(4 * d.memory("act").row_bytes) +
      " scale=1 zp=0 offset=0x10000 size=" + std::to_string(4 * d.memory("act").row_bytes) +
      "\n.byte";
  for (u64 i = 0; i < 4 * d.memory("act").row_bytes; ++i)
    s += " " + std::to_string((i * 7 + u64(salt)) & 0x7f);
  s += "\n  dma.ld sram=act sram_addr=0 dram_addr=0 size0=4 size1=1 size2=1 push_next\n"
       "  sync engine=compute pop_prev push_next\n"
       "  dma.st pop_prev sram=act sram_addr=0 dram_addr=0x10000 size0=4 size1=1 size2=1\n"
       "  finish\n";
  return ember::isa::assemble(s, d, "copy.s");
}

const char* const kLong =
    "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=255 n1=8 n2=8 act_s0=1 acc_s0=1\nfinish\n";

/// The job list of description `d`: every kind of job the firmware handles.
std::vector<Job> jobList(const ember::isa::IsaDescription& d) {
  std::vector<Job> jobs;
  auto add = [&](std::string what, ember::isa::Binary bin, std::uint32_t status) {
    Job j;
    j.what = std::move(what);
    j.inputs = randomInputs(bin, unsigned(jobs.size()));
    j.bin = std::move(bin);
    j.status = status;
    jobs.push_back(std::move(j));
  };
  // The assembly programs of the tests that are built for this description.
  for (const char* p : {"empty", "conv_tile", "double_buffer", "large_lut2"}) {
    const std::string text = readFile(std::string(EMBER_SOURCE_DIR "/tests/isa/data/") + p + ".s");
    if (text.find(".isa \"" + d.name() + "\"") == std::string::npos &&
        !(std::string(p) == "empty" && text.find(".isa") == std::string::npos))
      continue;
    add(p, ember::isa::assemble(text, d, std::string(p) + ".s"), EMBER_JOB_DONE);
  }
  add("copy", copyProgram(d, 1), EMBER_JOB_DONE);
  // Every fault kind the NPU raises, each followed by a good job (recovery).
  const std::string rows = std::to_string(d.memory("act").rows() - 2);
  const std::string faults[] = {
      "dma.ld sram=act sram_addr=" + rows + " dram_addr=0 size0=4 size1=1 size2=1\nfinish\n",
      "vshr dst_mem=act src_mem=act dst_addr=0 src_addr=0 n0=1 n1=1 imm0=40\nfinish\n",
      "sync engine=compute pop_prev\nfinish\n",
      [] {
        std::string s;
        for (int i = 0; i < 40; ++i)
          s += "sync engine=load push_next\n";
        return s + "finish\n";
      }(),
      "sync engine=load pop_next\nsync engine=compute pop_prev\nfinish\n",
  };
  int k = 0;
  for (const std::string& f : faults) {
    add("fault " + std::to_string(k), ember::isa::assemble(f, d, "fault.s"), EMBER_JOB_FAULT);
    add("good after fault " + std::to_string(k), copyProgram(d, 10 + k), EMBER_JOB_DONE);
    ++k;
  }
  // The NPU's own cycle budget: at the start of a long gemm, and on the clock.
  add("npu budget at a start", ember::isa::assemble(kLong, d, "long.s"), EMBER_JOB_FAULT);
  jobs.back().npu_budget = 300;
  add("good after the npu budget", copyProgram(d, 30), EMBER_JOB_DONE);
  // (cycle 1: compute waits for a token, fetch writes the second instruction; nothing
  // can happen in the budget, which the NPU finds in cycle 2)
  add("npu budget on the clock",
      ember::isa::assemble("sync engine=compute pop_prev\nsync engine=load push_next\nfinish\n", d,
                           "wait.s"),
      EMBER_JOB_FAULT);
  jobs.back().npu_budget = 1;
  add("good after the clock", copyProgram(d, 31), EMBER_JOB_DONE);
  // The firmware's watchdog, then a refused job, each followed by a good one.
  add("watchdog",
      ember::isa::assemble(
          "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=255 n1=9 n2=8 act_s0=1 acc_s0=1\nfinish\n", d,
          "long2.s"),
      EMBER_JOB_TIMEOUT);
  jobs.back().budget = 500;
  add("good after the watchdog", copyProgram(d, 32), EMBER_JOB_DONE);
  add("refused", copyProgram(d, 33), EMBER_JOB_REFUSED);
  jobs.back().window = 0x1000; // its output region lies outside: rule MEMMAP
  add("good after a refusal", copyProgram(d, 34), EMBER_JOB_DONE);
  return jobs;
}

struct Outcome {
  std::vector<Completion> done;
  u64 starts = 0;
};

/// The jobs one by one, then the good ones again as a batch in flight (the ring of 4
/// slots fills), on a device made by `platform` (empty: the SystemC platform).
Outcome runAll(const ember::isa::IsaDescription& d, const std::vector<Job>& jobs,
               ember::platform::PlatformFactory platform) {
  // The NPU's own budget per job, by its first instruction word and length.
  std::map<std::vector<std::uint8_t>, u64> budgets;
  for (const auto& j : jobs)
    if (j.npu_budget) {
      std::vector<std::uint8_t> text;
      for (const auto& in : j.bin.code) {
        const auto w = in.encode();
        text.insert(text.end(), w.begin(), w.end());
      }
      budgets[text] = j.npu_budget;
    }
  ember::runtime::Device::Options o;
  o.ring_slots = 4;
  o.dram_bytes = u64(1) << 33;
  o.platform = std::move(platform);
  o.prepare = [&](ember::platform::Job& job, ember::platform::Options& opts) {
    auto it = budgets.find(job.text);
    if (it != budgets.end())
      opts.cycle_budget = it->second;
  };
  ember::runtime::Device dev(d, o);
  ember::runtime::Session s(dev);
  Outcome r;
  for (const auto& j : jobs) {
    auto c = s.wait(s.submit(j.bin, j.inputs, j.budget, j.window), 600s);
    EXPECT_TRUE(c.has_value()) << j.what;
    if (c)
      r.done.push_back(std::move(*c));
  }
  std::vector<std::uint32_t> ids;
  for (const auto& j : jobs)
    if (j.status == EMBER_JOB_DONE)
      ids.push_back(s.submit(j.bin, j.inputs, j.budget)); // blocks while the ring is full
  for (auto id : ids) {
    auto c = s.wait(id, 600s);
    EXPECT_TRUE(c.has_value()) << "in flight " << id;
    if (c)
      r.done.push_back(std::move(*c));
  }
  return r;
}

class PlatformEquality : public ::testing::TestWithParam<std::string> {};

TEST_P(PlatformEquality, EveryJobCompletesAlikeWithEqualPlatformCycles) {
  const ember::isa::IsaDescription d = load(GetParam());
  const std::vector<Job> jobs = jobList(d);
  const Outcome sc = runAll(d, jobs, {});
  const Outcome rtl = runAll(d, jobs, ember::rtl::RtlPlatform::factory());
  ASSERT_EQ(sc.done.size(), rtl.done.size());
  std::vector<const Job*> order;
  for (const auto& j : jobs)
    order.push_back(&j);
  for (const auto& j : jobs)
    if (j.status == EMBER_JOB_DONE)
      order.push_back(&j);
  ASSERT_EQ(order.size(), sc.done.size());
  int dones = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Job& j = *order[i];
    const Completion &a = sc.done[i], &b = rtl.done[i];
    const std::string what = "job " + std::to_string(i) + " (" + j.what + ")";
    // The job did what it was built for (on the SystemC platform, the reference)...
    EXPECT_EQ(a.record.status, j.status) << what << ": " << a.describe();
    if (a.record.status == EMBER_JOB_DONE) {
      ++dones;
      const auto ref = ember::sim::Simulator(d).run(j.bin, j.inputs);
      for (const auto& io : j.bin.io) {
        if (io.dir == ember::isa::IoDir::Output) {
          EXPECT_EQ(a.outputs.at(io.name), ref.dram.read(io.dram_offset, io.size_bytes)) << what;
        }
      }
      EXPECT_EQ(a.record.cycles, ref.report.cycles) << what;
    }
    // ... and the RTL platform the same, field by field.
    EXPECT_EQ(b.record.magic, a.record.magic) << what;
    EXPECT_EQ(b.record.job_id, a.record.job_id) << what;
    EXPECT_EQ(b.record.status, a.record.status)
        << what << ": sc " << a.describe() << ", rtl " << b.describe();
    EXPECT_EQ(b.record.detail, a.record.detail) << what;
    EXPECT_EQ(b.record.cycles, a.record.cycles) << what;
    EXPECT_EQ(b.record.macs, a.record.macs) << what;
    for (int e = 0; e < 3; ++e)
      EXPECT_EQ(b.record.busy[e], a.record.busy[e]) << what << " engine " << e;
    EXPECT_EQ(b.record.fault_index, a.record.fault_index) << what;
    EXPECT_EQ(b.record.fault_engine, a.record.fault_engine) << what;
    EXPECT_EQ(b.platform_cycles, a.platform_cycles) << what;
    // Its split: the host link, the firmware (its own work, the copy DMA's streams, the
    // register traffic) and the NPU, equal (Session::collect adds them up).
    EXPECT_EQ(b.link_cycles, a.link_cycles) << what;
    EXPECT_EQ(b.firmware_cycles, a.firmware_cycles) << what;
    EXPECT_EQ(b.npu_cycles, a.npu_cycles) << what;
    EXPECT_GE(a.firmware_cycles, d.hw().control.job_cycles) << what;
    EXPECT_EQ(b.outputs, a.outputs) << what;
    EXPECT_EQ(b.report.has_value(), a.report.has_value()) << what;
    if (a.report && b.report) {
      EXPECT_EQ(b.report->cycles, a.report->cycles) << what;
    }
  }
  EXPECT_GE(dones, 10);
  std::printf("%s: %zu jobs, %d done, equal on both platforms\n", d.name().c_str(), order.size(),
              dones);
}

/// An instruction word no decoder accepts (the binary's digest resealed over it), written
/// into the ring by hand (a Session submits only well-formed binaries), then a good job:
/// the completion records and platform cycles of both are equal on both platforms.
struct RawRun {
  std::vector<ember_completion> records;
  std::vector<u64> cycles;
};
RawRun runIllegal(const ember::isa::IsaDescription& d, ember::platform::PlatformFactory platform) {
  ember::runtime::Device::Options o;
  o.ring_slots = 4;
  o.dram_bytes = u64(1) << 28;
  o.platform = std::move(platform);
  ember::runtime::Device dev(d, o);
  RawRun r;
  std::vector<std::vector<std::uint8_t>> images;
  images.push_back(ember::isa::serializeElf(
      ember::isa::assemble("sync engine=load\nsync engine=load\nfinish\n", d, "bad.s"), d));
  for (const auto& sec : ember::isa::listSections(images[0].data(), images[0].size()))
    if (sec.name == ".ember.text")
      std::memset(images[0].data() + sec.offset + d.instructionBytes(), 0xff, 4);
  ember::isa::resealElf(images[0]);
  images.push_back(ember::isa::serializeElf(copyProgram(d, 7), d));
  for (std::uint32_t k = 0; k < images.size(); ++k) {
    const u64 bin = 0x100000, window = 0x1000000;
    std::memcpy(dev.dram(bin, images[k].size()), images[k].data(), images[k].size());
    dev.zero(window, 0x100000);
    ember_job_slot slot{};
    slot.magic = EMBER_SLOT_MAGIC;
    slot.job_id = 100 + k;
    slot.binary_addr = bin;
    slot.binary_size = images[k].size();
    slot.window_base = window;
    slot.window_size = 0x100000;
    slot.cycle_budget = 1u << 20;
    std::memcpy(dev.dram(dev.ringBase() + 64 * (k % 4), 64), &slot, 64);
    dev.ringDoorbell(k + 1);
    EXPECT_TRUE(dev.waitHead(k, 600s));
    ember_completion c;
    std::memcpy(&c, dev.dram(dev.ringBase() + 64 * (4 + k % 4), 64), 64);
    r.records.push_back(c);
    r.cycles.push_back(dev.takeJobCycles(k).value_or(0));
  }
  return r;
}

TEST_P(PlatformEquality, AnIllegalOpcodeFaultsAlikeAndTheNextJobRuns) {
  const ember::isa::IsaDescription d = load(GetParam());
  const RawRun sc = runIllegal(d, {});
  const RawRun rtl = runIllegal(d, ember::rtl::RtlPlatform::factory());
  ASSERT_EQ(sc.records.size(), 2u);
  ASSERT_EQ(rtl.records.size(), 2u);
  EXPECT_EQ(sc.records[0].status, EMBER_JOB_FAULT);
  EXPECT_EQ(sc.records[0].detail, 0u) << "illegal-opcode";
  EXPECT_EQ(sc.records[0].fault_index, 1u);
  EXPECT_EQ(sc.records[1].status, EMBER_JOB_DONE);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(std::memcmp(&sc.records[k], &rtl.records[k], sizeof(ember_completion)), 0)
        << "job " << k << ": status " << sc.records[k].status << "/" << rtl.records[k].status
        << ", cycles " << sc.records[k].cycles << "/" << rtl.records[k].cycles;
    EXPECT_EQ(sc.cycles[k], rtl.cycles[k]) << "job " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Descriptions, PlatformEquality,
                         ::testing::Values("ember-v1", "ember-v1-large"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& ch : n)
                             if (ch == '-')
                               ch = '_';
                           return n;
                         });

} // namespace
