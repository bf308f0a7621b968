// The generated decoder (ember_decode, Verilated) against the reference decoder,
// isa::Instruction::decode, for one description (EMBER_RTL_ISA_JSON). Expected values
// come only from libember_isa and from this file: never from the generated SystemVerilog
// or its package.
#include "Vember_decode.h"
#include "ember/isa/error.h"
#include "ember/isa/instruction.h"
#include "ember/isa/roles.h"
#include "ember/progen/ProgramGenerator.h"
#include "rtl_ports.h"
#include "verilated.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace ember::isa;

const IsaDescription& isa() {
  static const IsaDescription d = IsaDescription::loadFile(EMBER_RTL_ISA_JSON);
  return d;
}

/// What the test expects of a role port: its width (the widest field of the role; one
/// bit more for an unsigned field of a role that is signed elsewhere).
struct Role {
  std::string name;
  unsigned width = 0;
  std::function<std::uint64_t(const Vember_decode&)> value;
  std::function<int(const Vember_decode&)> has; ///< -1: the port does not exist.
};

std::vector<Role> roles() {
  std::vector<Role> r;
#define EMBER_ROLE(port, role_name)                                                                \
  r.push_back(Role{role_name, 0, [](const Vember_decode& t) { return std::uint64_t(t.port##_o); }, \
                   [](const Vember_decode&) { return -1; }});
  EMBER_RTL_ROLES(EMBER_ROLE)
#undef EMBER_ROLE
#define EMBER_HAS(port, role_name)                                                                 \
  for (auto& x : r)                                                                                \
    if (x.name == role_name)                                                                       \
      x.has = [](const Vember_decode& t) { return int(t.has_##port##_o); };
  EMBER_RTL_OPTIONAL_ROLES(EMBER_HAS)
#undef EMBER_HAS
  for (auto& x : r) {
    bool any_signed = false;
    for (const auto& in : isa().instructions())
      if (const FieldDesc* f = in.field(x.name))
        any_signed = any_signed || f->is_signed;
    for (const auto& in : isa().instructions())
      if (const FieldDesc* f = in.field(x.name))
        x.width = std::max(x.width, f->bits.width + (any_signed && !f->is_signed ? 1u : 0u));
  }
  return r;
}

std::uint64_t mask(unsigned width) {
  return width >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << width) - 1;
}

/// The vector-op code the decoder interface defines (docs/rtl/generated.md): 0 for none, then the
/// ops of the registered classes numbered from 1 in registry order.
std::uint64_t opCode(const std::string& op) {
  if (op.empty())
    return 0;
  std::vector<std::string> ops;
  for (const auto& c : ClassRegistry::global().names())
    for (const auto& o : ClassRegistry::global().find(c)->op_choices)
      if (std::find(ops.begin(), ops.end(), o) == ops.end())
        ops.push_back(o);
  return std::uint64_t(std::find(ops.begin(), ops.end(), op) - ops.begin()) + 1;
}

/// unit_o of a known opcode: the engine whose queue takes it, as
/// Instruction::engine() decides (0 load, 1 compute, 2 store): through an "engine" enum
/// field whose raw value names it, compute when the value names none; else the class's.
std::uint64_t unitOf(const InstrDesc& d, const std::vector<std::uint8_t>& word) {
  for (const FieldDesc& f : d.fields)
    if (f.role == role::kEngine && f.kind == RoleKind::Enum) {
      const std::uint64_t raw = extractBits(word.data(), f.bits.lsb, f.bits.width);
      for (const auto& [name, value] : f.names)
        if (std::uint64_t(value) == raw)
          return name == "load" ? 0 : name == "store" ? 2 : 1;
      return 1;
    }
  return std::uint64_t(d.cls->engine);
}

/// A timing entry of the instruction (0 when its class has no such key).
std::uint64_t timingOf(const InstrDesc& d, const char* key) {
  auto it = d.timing.find(key);
  return it == d.timing.end() ? 0 : std::uint64_t(it->second);
}

std::uint64_t classIndex(const ClassSpec* c) {
  auto names = ClassRegistry::global().names();
  return std::uint64_t(std::find(names.begin(), names.end(), c->name) - names.begin());
}

template <std::size_t N> void put(VlWide<N>& w, const std::vector<std::uint8_t>& b) {
  for (std::size_t i = 0; i < N; ++i)
    w[i] = std::uint32_t(b[4 * i]) | std::uint32_t(b[4 * i + 1]) << 8 |
           std::uint32_t(b[4 * i + 2]) << 16 | std::uint32_t(b[4 * i + 3]) << 24;
}
[[maybe_unused]] void put(QData& q, const std::vector<std::uint8_t>& b) {
  q = extractBits(b.data(), 0, 64);
}
[[maybe_unused]] void put(IData& q, const std::vector<std::uint8_t>& b) {
  q = IData(extractBits(b.data(), 0, 32));
}

std::string hex(const std::vector<std::uint8_t>& b) {
  std::ostringstream o;
  o << std::hex;
  for (std::size_t i = b.size(); i-- > 0;)
    o << "0123456789abcdef"[b[i] >> 4] << "0123456789abcdef"[b[i] & 15];
  return o.str();
}

class Decoder : public ::testing::Test {
protected:
  Decoder() : top_(std::make_unique<Vember_decode>(&ctx_)), roles_(roles()) {}
  ~Decoder() override { top_->final(); }

  /// Drives `word` and compares every output with the reference. Returns false on a
  /// mismatch (reported once per word).
  bool check(const std::vector<std::uint8_t>& word) {
    put(top_->instr_i, word);
    top_->eval();
    const EncodingDesc& e = isa().encoding();
    const InstrDesc* d = isa().findOpcode(extractBits(word.data(), e.opcode.lsb, e.opcode.width));
    bool ok = true;
    std::vector<std::int64_t> values;
    try {
      values = Instruction::decode(isa(), word.data()).values();
    } catch (const Error&) {
      ok = false;
    }
    std::ostringstream err;
    auto expect = [&](const char* what, std::uint64_t got, std::uint64_t want) {
      if (got != want)
        err << " " << what << "=" << got << " (expected " << want << ")";
    };
    expect("valid_o", top_->valid_o, ok);
    expect("known_o", top_->known_o, d != nullptr);
    expect("cls_o", top_->cls_o, d ? classIndex(d->cls) : 0);
    expect("insn_o", top_->insn_o, d ? std::uint64_t(d - isa().instructions().data()) : 0);
    expect("op_o", top_->op_o, d ? opCode(d->op) : 0);
    // An unknown opcode's unit is compute (1), its timing and table offset 0.
    expect("unit_o", top_->unit_o, d ? unitOf(*d, word) : 1);
    expect("t_issue_o", top_->t_issue_o, d ? timingOf(*d, timing_key::kIssue) : 0);
    expect("t_setup_o", top_->t_setup_o, d ? timingOf(*d, timing_key::kSetup) : 0);
    expect("t_cpr_o", top_->t_cpr_o, d ? timingOf(*d, timing_key::kCyclesPerRow) : 0);
    expect("t_pipe_o", top_->t_pipe_o, d ? timingOf(*d, timing_key::kPipelineLatency) : 0);
    expect("t_cpl_o", top_->t_cpl_o, d ? timingOf(*d, timing_key::kCyclesPerLine) : 0);
    expect("t_cpe_o", top_->t_cpe_o, d ? timingOf(*d, timing_key::kCyclesPerElement) : 0);
    expect("table_off_o", top_->table_off_o,
           d && d->cls->allows_table_offset ? std::uint64_t(std::uint32_t(d->table_offset)) : 0);
    expect("bg_o", top_->bg_o, d && d->background);
    expect("ovw_o", top_->ovw_o, d && d->overwrite);
    expect("bias_o", top_->bias_o, d && d->bias);
    for (const Role& r : roles_) {
      int i = d ? d->fieldIndex(r.name) : -1;
      std::uint64_t want = 0;
      if (i >= 0) {
        const FieldDesc& f = d->fields[std::size_t(i)];
        std::uint64_t raw = extractBits(word.data(), f.bits.lsb, f.bits.width);
        if (ok) // the reference's value; else the raw field, extended as documented
          want = std::uint64_t(values[std::size_t(i)]);
        else if (f.is_signed && f.bits.width < 64 && ((raw >> (f.bits.width - 1)) & 1))
          want = raw | ~mask(f.bits.width);
        else
          want = raw;
      }
      expect((r.name + "_o").c_str(), r.value(*top_), want & mask(r.width));
      if (r.has(*top_) >= 0)
        expect(("has_" + r.name + "_o").c_str(), std::uint64_t(r.has(*top_)), i >= 0);
      else if (i < 0 && d)
        err << " role " << r.name << " is missing from " << d->name << " but has no has_ port";
    }
    if (err.str().empty())
      return true;
    ADD_FAILURE() << "word 0x" << hex(word) << " (" << (d ? d->name : "unknown opcode")
                  << "):" << err.str();
    return false;
  }

  /// Checks many words, giving up after a few mismatching ones.
  void checkAll(const std::vector<std::vector<std::uint8_t>>& words) {
    int bad = 0;
    for (const auto& w : words)
      if (!check(w) && ++bad == 5)
        FAIL() << "giving up after 5 mismatching words";
  }

  /// A legal instance of `d` with random field values (named fields take a name).
  Instruction randomInstance(const InstrDesc& d) {
    Instruction in(d);
    for (std::size_t i = 0; i < d.fields.size(); ++i) {
      const FieldDesc& f = d.fields[i];
      if (!f.names.empty()) {
        in.setIndex(i, f.names[rng_() % f.names.size()].second);
        continue;
      }
      // Edge values as often as random ones: 0, all ones, the sign bit.
      std::uint64_t raw = rng_();
      switch (rng_() % 4) {
      case 0:
        raw = rng_() % 2 ? 0 : ~std::uint64_t(0);
        break;
      case 1:
        raw = std::uint64_t(1) << (f.bits.width - 1);
        break;
      default:
        break;
      }
      raw &= mask(f.bits.width);
      std::int64_t v = std::int64_t(raw);
      if (f.is_signed && f.bits.width < 64 && ((raw >> (f.bits.width - 1)) & 1))
        v = std::int64_t(raw | ~mask(f.bits.width));
      if (!f.is_signed && f.bits.width >= 64)
        v &= INT64_MAX;
      in.setIndex(i, v);
    }
    return in;
  }

  VerilatedContext ctx_;
  std::unique_ptr<Vember_decode> top_;
  std::vector<Role> roles_;
  std::mt19937_64 rng_{20261123};
};

TEST_F(Decoder, EveryInstructionWithRandomFields) {
  std::vector<std::vector<std::uint8_t>> words;
  for (const auto& d : isa().instructions())
    for (int k = 0; k < 300; ++k)
      words.push_back(randomInstance(d).encode());
  checkAll(words);
  // Every one of them is legal: the decoder must say so (checkAll compares with the
  // reference, which accepts them; this catches a reference that rejects everything).
  for (const auto& w : words) {
    put(top_->instr_i, w);
    top_->eval();
    ASSERT_EQ(top_->valid_o, 1) << hex(w);
  }
}

TEST_F(Decoder, RandomWords) {
  const unsigned bytes = isa().instructionBytes();
  const EncodingDesc& e = isa().encoding();
  std::vector<std::vector<std::uint8_t>> words;
  for (int k = 0; k < 20000; ++k) {
    std::vector<std::uint8_t> w(bytes);
    for (auto& b : w)
      b = std::uint8_t(rng_());
    if (k % 2) { // a known opcode, so the reserved-bit and enum checks get exercised
      const auto& all = isa().instructions();
      depositBits(w.data(), e.opcode.lsb, e.opcode.width, all[rng_() % all.size()].opcode);
    }
    words.push_back(w);
  }
  checkAll(words);
}

TEST_F(Decoder, LegalWordsWithOneBitFlipped) {
  std::vector<std::vector<std::uint8_t>> words;
  for (const auto& d : isa().instructions())
    for (unsigned b = 0; b < isa().encoding().instruction_bits; ++b) {
      std::vector<std::uint8_t> w = randomInstance(d).encode();
      w[b / 8] = std::uint8_t(w[b / 8] ^ (1u << (b % 8)));
      words.push_back(w);
    }
  checkAll(words);
}

TEST_F(Decoder, RandomLegalPrograms) {
  std::vector<std::vector<std::uint8_t>> words;
  for (std::uint64_t seed = 1; seed <= 40; ++seed)
    for (const Instruction& in : ember::progen::generate(isa(), seed).code)
      words.push_back(in.encode());
  ASSERT_GT(words.size(), 40u);
  checkAll(words);
}

} // namespace
