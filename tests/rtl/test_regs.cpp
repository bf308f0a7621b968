// The generated register block (ember_regs, Verilated) against the description's register
// map (EMBER_RTL_ISA_JSON): reset values, rw read-back, wo, ro inputs, w1c, write pulses,
// the 1-cycle read latency and the error response. Expected values come from the
// description (libember_isa) and this file only.
#include "Vember_regs.h"
#include "ember/isa/description.h"
#include "rtl_ports.h"
#include "verilated.h"

#include <cstdint>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace ember::isa;

const IsaDescription& isa() {
  static const IsaDescription d = IsaDescription::loadFile(EMBER_RTL_ISA_JSON);
  return d;
}

std::uint32_t mask(unsigned width) {
  return width >= 32 ? 0xffffffffu : (std::uint32_t(1) << width) - 1;
}

/// Bits of `r` that hold state or data: its fields, or all 32 bits.
std::uint32_t fieldMask(const RegisterDesc& r) {
  if (r.fields.empty())
    return 0xffffffffu;
  std::uint32_t m = 0;
  for (const auto& f : r.fields)
    m |= mask(f.bits.width) << f.bits.lsb;
  return m;
}

/// A port of one field (or of a whole fieldless register).
struct Slot {
  std::string reg;
  unsigned lsb, width;
  std::function<std::uint64_t(const Vember_regs&)> get;
  std::function<void(Vember_regs&, std::uint64_t)> set;
};

class Regs : public ::testing::Test {
protected:
  Regs() : top_(std::make_unique<Vember_regs>(&ctx_)) {
#define EMBER_OUT(reg_name, port, lsb, w)                                                          \
  outs_.push_back(Slot{reg_name, lsb, w,                                                           \
                       [](const Vember_regs& t) { return std::uint64_t(t.port##_o); }, nullptr});
    EMBER_RTL_REG_OUT(EMBER_OUT)
#undef EMBER_OUT
#define EMBER_RO(reg_name, port, lsb, w)                                                           \
  ros_.push_back(Slot{reg_name, lsb, w, nullptr, [](Vember_regs& t, std::uint64_t v) {             \
                        t.port##_i =                                                               \
                            static_cast<std::remove_reference_t<decltype(t.port##_i)>>(v);         \
                      }});
    EMBER_RTL_REG_RO(EMBER_RO)
#undef EMBER_RO
#define EMBER_SET(reg_name, port, lsb, w)                                                          \
  sets_.push_back(Slot{reg_name, lsb, w, nullptr, [](Vember_regs& t, std::uint64_t v) {            \
                         t.port##_set_i =                                                          \
                             static_cast<std::remove_reference_t<decltype(t.port##_set_i)>>(v);    \
                       }});
    EMBER_RTL_REG_W1C(EMBER_SET)
#undef EMBER_SET
#define EMBER_WR(reg_name, port)                                                                   \
  wrs_[reg_name] = [](const Vember_regs& t) { return int(t.port##_wr_o); };
    EMBER_RTL_REG_WR(EMBER_WR)
#undef EMBER_WR
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->eval();
    tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~Regs() override {
    top_->final();
  }

  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    top_->eval();
  }

  /// One write request; returns err_o of its response (the next cycle).
  int write(std::uint32_t addr, std::uint32_t data) {
    top_->req_i = 1;
    top_->we_i = 1;
    top_->addr_i = addr;
    top_->wdata_i = data;
    tick();
    top_->req_i = 0;
    top_->we_i = 0;
    top_->eval();
    EXPECT_EQ(top_->ack_o, 1);
    EXPECT_EQ(top_->rdata_o, 0u);
    return top_->err_o;
  }

  /// One read request; the data arrives exactly one cycle later.
  std::uint32_t read(std::uint32_t addr, int* err = nullptr) {
    const std::uint8_t ack_before = top_->ack_o; // of the previous request, if any
    top_->req_i = 1;
    top_->we_i = 0;
    top_->addr_i = addr;
    top_->wdata_i = 0xdeadbeefu;
    top_->eval();
    EXPECT_EQ(top_->ack_o, ack_before) << "response before the clock edge";
    tick();
    top_->req_i = 0;
    top_->eval();
    EXPECT_EQ(top_->ack_o, 1);
    if (err)
      *err = top_->err_o;
    else
      EXPECT_EQ(top_->err_o, 0) << "offset " << addr;
    std::uint32_t v = top_->rdata_o;
    tick(); // idle cycle: the response goes away
    EXPECT_EQ(top_->ack_o, 0);
    return v;
  }

  /// The register value the output ports of `r` show.
  std::uint32_t outputs(const RegisterDesc& r) {
    std::uint32_t v = 0;
    for (const Slot& s : outs_)
      if (s.reg == r.name)
        v |= (std::uint32_t(s.get(*top_)) & mask(s.width)) << s.lsb;
    return v;
  }

  VerilatedContext ctx_;
  std::unique_ptr<Vember_regs> top_;
  std::vector<Slot> outs_, ros_, sets_;
  std::map<std::string, std::function<int(const Vember_regs&)>> wrs_;
  std::mt19937_64 rng_{7};
};

TEST_F(Regs, ResetValues) {
  for (const auto& r : isa().registers()) {
    std::uint32_t want = r.access == "rw" || r.access == "w1c" ? r.reset & fieldMask(r) : 0;
    EXPECT_EQ(read(r.offset), want) << r.name;
    if (r.access != "ro") {
      EXPECT_EQ(outputs(r), r.reset & fieldMask(r)) << r.name << " output ports";
    }
  }
}

TEST_F(Regs, ReadWriteAndWriteOnly) {
  int checked = 0;
  for (const auto& r : isa().registers()) {
    if (r.access != "rw" && r.access != "wo")
      continue;
    ASSERT_TRUE(wrs_.count(r.name)) << r.name;
    for (int k = 0; k < 4; ++k) {
      std::uint32_t v = k == 0 ? 0xffffffffu : k == 1 ? 0 : std::uint32_t(rng_());
      EXPECT_EQ(write(r.offset, v), 0) << r.name;
      EXPECT_EQ(wrs_[r.name](*top_), 1) << r.name << " write pulse";
      for (const auto& [other, wr] : wrs_)
        if (other != r.name) {
          EXPECT_EQ(wr(*top_), 0) << other << " pulses on a write to " << r.name;
        }
      EXPECT_EQ(outputs(r), v & fieldMask(r)) << r.name;
      EXPECT_EQ(read(r.offset), r.access == "rw" ? v & fieldMask(r) : 0u) << r.name;
      EXPECT_EQ(wrs_[r.name](*top_), 0) << r.name << " pulse lasts one cycle";
      EXPECT_EQ(outputs(r), v & fieldMask(r)) << r.name << " holds its value";
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST_F(Regs, ReadOnlyInputs) {
  for (int k = 0; k < 8; ++k) {
    std::map<std::string, std::uint32_t> want;
    for (const Slot& s : ros_) {
      std::uint32_t v = std::uint32_t(rng_()) & mask(s.width);
      s.set(*top_, v);
      want[s.reg] |= v << s.lsb;
    }
    top_->eval();
    for (const auto& r : isa().registers())
      if (r.access == "ro") {
        EXPECT_EQ(read(r.offset), want[r.name]) << r.name;
        std::uint32_t before = read(r.offset);
        EXPECT_EQ(write(r.offset, ~before), 0) << r.name; // ignored
        EXPECT_EQ(read(r.offset), before) << r.name << " changed by a write";
      }
  }
}

TEST_F(Regs, WriteOneToClear) {
  int checked = 0;
  for (const auto& r : isa().registers()) {
    if (r.access != "w1c")
      continue;
    std::uint32_t m = fieldMask(r);
    std::uint32_t state = read(r.offset);
    for (int k = 0; k < 6; ++k) {
      std::uint32_t set = std::uint32_t(rng_());
      for (const Slot& s : sets_)
        if (s.reg == r.name)
          s.set(*top_, (set >> s.lsb) & mask(s.width));
      tick();
      for (const Slot& s : sets_)
        s.set(*top_, 0);
      top_->eval();
      state |= set & m;
      EXPECT_EQ(read(r.offset), state) << r.name << " after set";
      EXPECT_EQ(outputs(r), state) << r.name;
      std::uint32_t clear = std::uint32_t(rng_());
      EXPECT_EQ(write(r.offset, clear), 0);
      state &= ~clear;
      EXPECT_EQ(read(r.offset), state) << r.name << " after clearing " << clear;
      ++checked;
    }
    // A set in the cycle of a clearing write wins.
    for (const Slot& s : sets_)
      if (s.reg == r.name)
        s.set(*top_, mask(s.width));
    EXPECT_EQ(write(r.offset, 0xffffffffu), 0);
    for (const Slot& s : sets_)
      s.set(*top_, 0);
    top_->eval();
    EXPECT_EQ(read(r.offset), m) << r.name;
  }
  if (!sets_.empty()) {
    EXPECT_GT(checked, 0);
  }
}

TEST_F(Regs, UnmappedOffsetsAnswerWithAnError) {
  std::vector<std::uint32_t> probes = {0xfffffffcu, 2, 0x10000u};
  for (const auto& r : isa().registers())
    probes.push_back(r.offset + 1);
  for (std::uint32_t a : probes) {
    bool mapped = false;
    for (const auto& r : isa().registers())
      mapped = mapped || r.offset == a;
    if (mapped)
      continue;
    int err = 0;
    EXPECT_EQ(read(a, &err), 0u) << a;
    EXPECT_EQ(err, 1) << a;
    EXPECT_EQ(write(a, 0xffffffffu), 1) << a;
  }
  for (const auto& r : isa().registers())
    EXPECT_EQ(outputs(r), r.reset & fieldMask(r)) << r.name << " changed by an unmapped write";
}

} // namespace
