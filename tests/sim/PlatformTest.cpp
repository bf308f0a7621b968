// The platform (ember/sim/Platform.h, docs/firmware.md section 6): a control-core program
// written here (no firmware) drives the register block through the TLM-2.0 bus. Every
// expected cycle follows from the description's control parameters and a direct run of
// the same job on the simulator: a register access issued in cycle t acts in t and the
// core resumes register_access_cycles later; a job whose START is written in cycle T
// runs its cycle 0 in T + 1 and shows DONE (or FAULT) and raises the IRQ in the cycle
// after its last, T + 1 + C + 1 for a job of C cycles; an idle core wakes at the IRQ or
// the next multiple of tick_cycles.
#include "ember/sim/Platform.h"
#include "SimTestUtil.h"
#include "ember/isa/error.h"
#include "ember/platform/CopyDma.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

using namespace simtest;
using ember::platform::CoreBus;
using ember::sim::Platform;
using u64 = std::uint64_t;
using u32 = std::uint32_t;

namespace {

ember::isa::IsaDescription withControl(u64 access, u64 tick) {
  auto j = refIsa().json();
  j["hardware"]["control"]["register_access_cycles"] = access;
  j["hardware"]["control"]["tick_cycles"] = tick;
  return ember::isa::IsaDescription::loadString(j.dump(), "control.json");
}

u32 reg(const ember::isa::IsaDescription& isa, const char* name) {
  for (const auto& r : isa.registers())
    if (r.name == name)
      return r.offset;
  ADD_FAILURE() << "no register " << name;
  return 0;
}
u32 bit(const ember::isa::IsaDescription& isa, const char* r, const char* f) {
  for (const auto& x : isa.registers())
    if (x.name == r)
      for (const auto& y : x.fields)
        if (y.name == f)
          return u32(1) << y.bits.lsb;
  ADD_FAILURE() << "no field " << r << "." << f;
  return 0;
}

constexpr u64 kText = 0x100000, kWindow = 0x1000000, kWindowSize = 1 << 20;

/// Device DRAM with a job's text and window placed, and its reference run.
struct Fixture {
  explicit Fixture(const ember::isa::IsaDescription& d, const std::string& text,
                   std::vector<std::uint8_t> image = {})
      : isa(d), job(makeJob(d, text, std::move(image))) {
    std::memcpy(dram.data() + kText, job.text.data(), job.text.size());
    job.dram.forEachPage([&](u64 a, const std::uint8_t* p, u64 n) {
      std::memcpy(dram.data() + kWindow + a, p, std::min<u64>(n, kWindowSize - a));
    });
    ember::platform::Options o;
    o.dram_window_bytes = kWindowSize;
    ember::platform::Job noDebug = job;
    noDebug.debug.clear();
    ref = ember::sim::Simulator(d).run(noDebug, o);
  }
  /// The 7 register writes that describe the job (INSN_*, DRAM_*).
  void program(CoreBus& b) const {
    b.write(reg(isa, "INSN_BASE_LO"), u32(kText));
    b.write(reg(isa, "INSN_BASE_HI"), 0);
    b.write(reg(isa, "INSN_COUNT"), u32(job.text.size() / isa.instructionBytes()));
    b.write(reg(isa, "DRAM_BASE_LO"), u32(kWindow));
    b.write(reg(isa, "DRAM_BASE_HI"), 0);
    b.write(reg(isa, "DRAM_SIZE_LO"), u32(kWindowSize));
    b.write(reg(isa, "DRAM_SIZE_HI"), 0);
  }
  u32 start() const { return bit(isa, "CTRL", "START") | bit(isa, "CTRL", "IRQ_EN"); }
  std::vector<std::uint8_t> window(u64 at, u64 n) const {
    return {dram.begin() + long(kWindow + at), dram.begin() + long(kWindow + at + n)};
  }

  ember::isa::IsaDescription isa;
  ember::platform::Job job;
  ember::platform::Result ref;
  std::vector<std::uint8_t> dram = std::vector<std::uint8_t>(32u << 20, 0);
};

const char* const kCopy =
    ".region \"in\" input 0x0 0x100\n.region \"out\" output 0x1000 0x100\n"
    "  dma.ld sram=act sram_addr=0 dram_addr=0 size0=4 size1=1 size2=1 push_next\n"
    "  vadd pop_prev push_next dst_mem=act src_mem=act dst_addr=8 src0_addr=0 src1_addr=0 "
    "n0=4 n1=1 dst_s0=1 src0_s0=1 src1_s0=1\n"
    "  dma.st pop_prev sram=act sram_addr=8 dram_addr=0x1000 size0=4 size1=1 size2=1\n"
    "  finish\n";

std::vector<std::uint8_t> input() {
  std::vector<std::uint8_t> v(64);
  for (int i = 0; i < 64; ++i)
    v[std::size_t(i)] = std::uint8_t(i * 5 + 1);
  return v;
}

const char* const kLong =
    "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=255 n1=8 n2=8 act_s0=1 acc_s0=1\nfinish\n";

} // namespace

TEST(Platform, AJobStartsWhenCtrlStartIsWrittenAndRaisesTheIrqItsCyclesLater) {
  const u64 A = 3;
  Fixture f(withControl(A, u64(1) << 20), kCopy, input());
  ASSERT_TRUE(f.ref.ok());
  Platform p(f.isa, f.dram.data(), f.dram.size());
  u64 started = 0, woke = 0;
  u32 status = 0, cycles = 0, irq = 0, macs = 0;
  p.run([&](CoreBus& b) {
    f.program(b); // 7 writes: the core is at 7A
    started = b.now();
    b.write(reg(f.isa, "CTRL"), f.start()); // cycle 0 at 7A + 1, the core resumes at 8A
    b.idle();                               // the IRQ wakes it
    woke = b.now();
    status = b.read(reg(f.isa, "STATUS"));
    cycles = b.read(reg(f.isa, "CYCLES_LO"));
    irq = b.read(reg(f.isa, "IRQ_STATUS"));
    macs = b.read(reg(f.isa, "MACS_LO"));
  });
  EXPECT_EQ(started, 7 * A);
  EXPECT_EQ(woke, 7 * A + 1 + f.ref.report.cycles + 1);
  EXPECT_EQ(status, bit(f.isa, "STATUS", "DONE"));
  EXPECT_EQ(cycles, f.ref.report.cycles);
  EXPECT_EQ(irq, bit(f.isa, "IRQ_STATUS", "DONE"));
  EXPECT_EQ(macs, f.ref.report.macs);
  EXPECT_EQ(p.cycles(), woke + 4 * A) << "the clock ends with the core's last access";
  EXPECT_EQ(f.window(0x1000, 64), f.ref.dram.read(0x1000, 64));
  auto r = p.takeReport();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->cycles, f.ref.report.cycles);
  EXPECT_FALSE(p.takeReport().has_value()) << "handed out once";
  EXPECT_EQ(p.starts(), 1u);
}

TEST(Platform, AnIdleCoreWakesAtTheNextTickAndTheClockCarriesOver) {
  Fixture f(withControl(4, 100), "finish\n");
  Platform p(f.isa, f.dram.data(), f.dram.size());
  std::vector<u64> t;
  p.run([&](CoreBus& b) {
    b.write(reg(f.isa, "RING_SIZE"), 4); // 4
    b.idle();                            // tick at 100
    t.push_back(b.now());
    b.idle(); // 200
    t.push_back(b.now());
  });
  EXPECT_EQ(t, (std::vector<u64>{100, 200}));
  EXPECT_EQ(p.cycles(), 200u);
  u32 ring = 0;
  p.run([&](CoreBus& b) {
    ring = b.read(reg(f.isa, "RING_SIZE")); // registers carry over too
    t.push_back(b.now());
  });
  EXPECT_EQ(ring, 4u);
  EXPECT_EQ(t.back(), 204u);
}

TEST(Platform, CyclesCountLiveAndResetStopsARunningJob) {
  const u64 A = 4, tick = 1024;
  Fixture f(withControl(A, tick), kLong);
  ASSERT_TRUE(f.ref.ok());
  ASSERT_GT(f.ref.report.cycles, 2 * tick);
  Fixture good(withControl(A, tick), kCopy, input());
  Platform p(f.isa, f.dram.data(), f.dram.size());
  u64 readAt = 0;
  u32 busy = 0, cycles = 0, after = 0, afterCycles = 0;
  p.run([&](CoreBus& b) {
    f.program(b);
    b.write(reg(f.isa, "CTRL"), f.start()); // cycle 0 at 7A + 1
    b.idle();                               // the tick at 1024
    readAt = b.now();
    busy = b.read(reg(f.isa, "STATUS"));
    cycles = b.read(reg(f.isa, "CYCLES_LO")); // issued at 1024 + A
    b.write(reg(f.isa, "CTRL"), bit(f.isa, "CTRL", "RESET"));
    after = b.read(reg(f.isa, "STATUS"));
    afterCycles = b.read(reg(f.isa, "CYCLES_LO"));
  });
  EXPECT_EQ(readAt, tick);
  EXPECT_TRUE(busy & bit(f.isa, "STATUS", "BUSY"));
  EXPECT_EQ(cycles, tick + A - (7 * A + 1));
  EXPECT_EQ(after, 0u);
  EXPECT_EQ(afterCycles, 0u);
  EXPECT_FALSE(p.takeReport().has_value()) << "a reset job has no report";
  // The next job on the same platform runs from reset: the reference's cycles and outputs.
  std::memcpy(f.dram.data() + kText, good.job.text.data(), good.job.text.size());
  std::memcpy(f.dram.data() + kWindow, good.dram.data() + kWindow, 0x2000);
  u32 status = 0;
  p.run([&](CoreBus& b) {
    good.program(b);
    b.write(reg(f.isa, "CTRL"), good.start());
    while (!((status = b.read(reg(f.isa, "STATUS"))) & bit(f.isa, "STATUS", "DONE")))
      b.idle();
  });
  auto r = p.takeReport();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->cycles, good.ref.report.cycles);
  EXPECT_EQ(f.window(0x1000, 64), good.ref.dram.read(0x1000, 64));
  EXPECT_EQ(p.starts(), 2u);
}

TEST(Platform, AFaultIsReportedInTheRegisters) {
  Fixture f(withControl(2, 1 << 20), "sync engine=compute pop_prev\nfinish\n");
  ASSERT_TRUE(f.ref.report.fault.has_value());
  Platform p(f.isa, f.dram.data(), f.dram.size());
  u32 status = 0, code = 0, pc = 0, irq = 0;
  p.run([&](CoreBus& b) {
    f.program(b);
    b.write(reg(f.isa, "CTRL"), f.start());
    b.idle();
    status = b.read(reg(f.isa, "STATUS"));
    code = b.read(reg(f.isa, "FAULT_CODE"));
    pc = b.read(reg(f.isa, "FAULT_PC"));
    irq = b.read(reg(f.isa, "IRQ_STATUS"));
  });
  EXPECT_EQ(status, bit(f.isa, "STATUS", "FAULT"));
  EXPECT_EQ(code & 0xff, u32(f.ref.report.fault->kind) + 1);
  EXPECT_EQ(std::int64_t(pc), f.ref.report.fault->instruction);
  EXPECT_EQ(irq, bit(f.isa, "IRQ_STATUS", "FAULT"));
}

TEST(Platform, FaultShowsTheCycleAfterTheNpuSignalsIt) {
  // A check made as an instruction starts signals in the fault's cycle F: FAULT shows in
  // T + 1 + F + 1. Starvation is checked on the state a cycle left, so it signals in
  // F + 1 and shows a cycle later (the RTL checks it at the start of the next cycle).
  const u64 A = 2;
  struct Case {
    const char* text;
    u64 late;
  } cases[] = {{"dma.ld sram=act sram_addr=16383 dram_addr=0 size0=4 size1=1 size2=1\nfinish\n", 0},
               {"sync engine=compute pop_prev\nfinish\n", 1}};
  for (const Case& c : cases) {
    Fixture f(withControl(A, u64(1) << 20), c.text);
    ASSERT_TRUE(f.ref.report.fault.has_value()) << c.text;
    Platform p(f.isa, f.dram.data(), f.dram.size());
    u64 woke = 0;
    u32 status = 0, cycles = 0;
    p.run([&](CoreBus& b) {
      f.program(b);
      b.write(reg(f.isa, "CTRL"), f.start()); // T = 7A
      b.idle();
      woke = b.now();
      status = b.read(reg(f.isa, "STATUS"));
      cycles = b.read(reg(f.isa, "CYCLES_LO"));
    });
    EXPECT_EQ(woke, 7 * A + 1 + f.ref.report.fault->cycle + c.late + 1) << c.text;
    EXPECT_EQ(status, bit(f.isa, "STATUS", "FAULT")) << c.text;
    EXPECT_EQ(cycles, f.ref.report.fault->cycle) << c.text;
  }
}

TEST(Platform, AnEngineThatRunsAJobAtOnceIsPlayedBackInTime) {
  Fixture f(withControl(4, u64(1) << 20), kCopy, input());
  // The engine stands for the Verilated RTL (no SystemC inside: one simulation at a time),
  // here the reference run of the same job, handed back once the job's text checks out.
  int calls = 0;
  Platform p(f.isa, f.dram.data(), f.dram.size(),
             [&](const ember::isa::IsaDescription&, const ember::platform::Job& j,
                 const ember::platform::Options& o) {
               ++calls;
               EXPECT_EQ(j.text, f.job.text);
               EXPECT_EQ(o.dram_window_bytes, kWindowSize);
               return f.ref;
             });
  u64 woke = 0;
  p.run([&](CoreBus& b) {
    f.program(b);
    b.write(reg(f.isa, "CTRL"), f.start());
    b.idle();
    woke = b.now();
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(woke, 7 * 4 + 1 + f.ref.report.cycles + 1);
  EXPECT_EQ(f.window(0x1000, 64), f.ref.dram.read(0x1000, 64));
}

TEST(Platform, AnOffsetOutsideTheMapIsABusError) {
  Fixture f(refIsa(), "finish\n");
  Platform p(f.isa, f.dram.data(), f.dram.size());
  try {
    p.run([&](CoreBus& b) { b.read(0x1000); });
    FAIL() << "no error";
  } catch (const ember::isa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("offset 4096, where the map has no register"),
              std::string::npos)
        << e.what();
  }
}

TEST(Platform, AnEngineMayNotStartASimulationOfItsOwn) {
  Fixture f(withControl(4, u64(1) << 20), kCopy, input());
  Platform p(f.isa, f.dram.data(), f.dram.size(),
             [&](const ember::isa::IsaDescription& d, const ember::platform::Job& j,
                 const ember::platform::Options& o) { return ember::sim::Simulator(d).run(j, o); });
  try {
    p.run([&](CoreBus& b) {
      f.program(b);
      b.write(reg(f.isa, "CTRL"), f.start());
      b.idle();
    });
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("inside another"), std::string::npos) << e.what();
  }
}

TEST(Platform, TheCopyDmaStreamsAtTheDescriptionsBandwidthAndComputesCrc32c) {
  // ember-v1 with register accesses of 2 cycles: DMA latency 100, DRAM 32 bytes a cycle.
  Fixture f(withControl(2, u64(1) << 20), "finish\n");
  const char kNine[] = "123456789"; // CRC-32C check value 0xE3069283 (RFC 3720, B.4)
  std::memcpy(f.dram.data() + 0x200000, kNine, 9);
  for (u32 i = 0; i < 100; ++i)
    f.dram[0x300000 + i] = std::uint8_t(i * 7 + 1);
  Platform p(f.isa, f.dram.data(), f.dram.size());
  const u32 status = reg(f.isa, "COPY_STATUS"), busy = bit(f.isa, "COPY_STATUS", "BUSY"),
            done = bit(f.isa, "COPY_STATUS", "DONE"), error = bit(f.isa, "COPY_STATUS", "ERROR");
  const u32 start = bit(f.isa, "COPY_CTRL", "START"), check = bit(f.isa, "COPY_CTRL", "CHECK");
  // Programs a transfer; `at` is the cycle of its START write, `first` the state a read
  // right after it sees; returns the cycle of the first poll (one every 2 cycles from
  // T + 4) that sees DONE.
  auto transfer = [&](CoreBus& b, u64 src, u64 dst, u32 len, u32 ctrl, u64& at, u32& first) {
    b.write(reg(f.isa, "COPY_SRC_LO"), u32(src));
    b.write(reg(f.isa, "COPY_SRC_HI"), u32(src >> 32));
    b.write(reg(f.isa, "COPY_DST_LO"), u32(dst));
    b.write(reg(f.isa, "COPY_DST_HI"), 0);
    b.write(reg(f.isa, "COPY_LEN"), len);
    b.write(reg(f.isa, "COPY_SEED"), 0);
    at = b.now();
    b.write(reg(f.isa, "COPY_CTRL"), ctrl);
    first = b.read(status);
    u64 issued = 0;
    do
      issued = b.now();
    while (!(b.read(status) & done));
    return issued;
  };
  u64 t1 = 0, t2 = 0, t3 = 0, d1 = 0, d2 = 0, d3 = 0;
  u32 first1 = 0, first2 = 0, first3 = 0, crc1 = 0, st2 = 0, st3 = 0;
  p.run([&](CoreBus& b) {
    d1 = transfer(b, 0x200000, 0, 9, start | check, t1, first1);
    crc1 = b.read(reg(f.isa, "COPY_CRC"));
    d2 = transfer(b, 0x300000, 0x400000, 100, start, t2, first2);
    st2 = b.read(status);
    d3 = transfer(b, f.dram.size() - 4, 0, 9, start | check, t3, first3); // past DRAM
    st3 = b.read(status);
  });
  EXPECT_EQ(first1, busy);
  EXPECT_EQ(crc1, 0xE3069283u);
  // A CHECK of 9 bytes: DONE at T + 1 + 100 + ceil(9 / 32) = T + 102, seen by the first poll
  // at or after it (polls at T + 4, T + 6, ...).
  EXPECT_EQ(d1, t1 + 102);
  // A copy of 100 bytes: T + 1 + 100 + 2 * ceil(100 / 32) = T + 109, polled at T + 110.
  EXPECT_EQ(first2, busy);
  EXPECT_EQ(d2, t2 + 110);
  EXPECT_EQ(st2, done);
  for (u32 i = 0; i < 100; ++i)
    ASSERT_EQ(f.dram[0x400000 + i], std::uint8_t(i * 7 + 1)) << i;
  // Outside device DRAM: nothing moves, DONE | ERROR the cycle after the write.
  EXPECT_EQ(first3, done | error);
  EXPECT_EQ(d3, t3 + 4);
  EXPECT_EQ(st3, done | error);
}

/// CRC-32C bit by bit (reflected polynomial 0x82F63B78, RFC 3720 B.4), continuing `crc`.
u32 bitwiseCrc32c(const std::uint8_t* p, u64 n, u32 crc) {
  crc = ~crc;
  for (u64 i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k)
      crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

TEST(Platform, TheCopyDmaCopiesLongAndOverlappingRangesWithTheSourcesCrc32c) {
  // Copies longer than the model's pass over the source in pieces (64 KiB), one not a
  // whole number of them, with a seed; then ranges that overlap either way, whose CRC is
  // the source's as it was before the move.
  const auto isa = refIsa();
  std::vector<std::uint8_t> dram(u64(4) << 20);
  u32 x = 12345;
  for (auto& b : dram) {
    x = x * 1664525u + 1013904223u;
    b = std::uint8_t(x >> 24);
  }
  struct Case {
    u64 src, dst, len;
    u32 seed;
  };
  for (const Case& c :
       {Case{0x10003, 0x200001, 200003, 0x1234567u}, Case{0x10000, 0x10400, 300000, 0},
        Case{0x20400, 0x20000, 300000, 7}, Case{0x30000, 0x30000, 70000, 0}}) {
    const std::vector<std::uint8_t> before(dram.begin() + std::ptrdiff_t(c.src),
                                           dram.begin() + std::ptrdiff_t(c.src + c.len));
    const u32 want = bitwiseCrc32c(before.data(), c.len, c.seed);
    ember::platform::CopyDma dma(isa);
    dma.start(0, dram.data(), dram.size(), c.src, c.dst, u32(c.len), c.seed, false);
    EXPECT_EQ(dma.crc(u64(1) << 40), want) << c.src << " -> " << c.dst;
    EXPECT_TRUE(std::equal(before.begin(), before.end(), dram.begin() + std::ptrdiff_t(c.dst)))
        << c.src << " -> " << c.dst;
  }
}

TEST(Platform, PollsOfTheCopyDmaEndWhereWaitingAfterEachReadWouldHaveEnded) {
  // Reads of COPY_STATUS while no job runs take no SystemC wait each (the core runs ahead,
  // NpuBlock::readsAhead); every read must still see its own cycle and the clock must
  // stand where waiting 4 cycles after each would have left it: at the end of the run
  // (the platform's cycles, which carry over to the next run), at idle() and at the
  // next access.
  Fixture f(withControl(4, 100), "finish\n");
  Platform p(f.isa, f.dram.data(), f.dram.size());
  const u32 status = reg(f.isa, "COPY_STATUS"), done = bit(f.isa, "COPY_STATUS", "DONE");
  u64 start = 0, seen = 0, after = 0, ended = 0, carried = 0, woke = 0, next = 0;
  int polls = 0;
  p.run([&](CoreBus& b) {
    b.write(reg(f.isa, "COPY_SRC_LO"), 0x1000); // 4
    b.write(reg(f.isa, "COPY_SRC_HI"), 0);      // 8
    b.write(reg(f.isa, "COPY_DST_LO"), 0x2000); // 12
    b.write(reg(f.isa, "COPY_DST_HI"), 0);      // 16
    b.write(reg(f.isa, "COPY_LEN"), 320);       // 20
    b.write(reg(f.isa, "COPY_SEED"), 0);        // 24
    start = b.now();
    b.write(reg(f.isa, "COPY_CTRL"), bit(f.isa, "COPY_CTRL", "START")); // 28
    u32 st = 0;
    do {
      seen = b.now();
      st = b.read(status);
      ++polls;
    } while (!(st & done));
    after = b.now(); // the run ends with the last poll
  });
  ended = p.cycles();
  p.run([&](CoreBus& b) {
    carried = b.now();
    b.idle(); // the next tick
    woke = b.now();
    b.write(reg(f.isa, "COPY_SEED"), 1);
    next = b.now();
  });
  // START written in cycle 24: DONE from 24 + 1 + 100 + 2 * (320 / 32) = 145. Polls issued
  // at 28, 32, ..., the first at or after 145 is issued at 148: 31 polls.
  EXPECT_EQ(start, 24u);
  EXPECT_EQ(polls, 31);
  EXPECT_EQ(seen, 148u);
  EXPECT_EQ(after, 152u);
  EXPECT_EQ(ended, 152u);
  EXPECT_EQ(carried, 152u);
  EXPECT_EQ(woke, 200u);
  EXPECT_EQ(next, 204u);
  EXPECT_EQ(p.cycles(), 204u);
}
