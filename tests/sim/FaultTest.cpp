// Every fault kind stops the run with a record (cycle, engine, instruction, reason);
// nothing throws, crashes or hangs, and the next run in the process works.
#include "SimTestUtil.h"

#include "ember/isa/instruction.h"

#include <gtest/gtest.h>

using namespace simtest;
using ember::platform::FaultKind;
using ember::platform::Result;

namespace {

void expectFault(const Result& r, FaultKind kind, const std::string& engine, std::int64_t index,
                 const std::string& text) {
  ASSERT_FALSE(r.ok()) << "expected a " << ember::platform::faultKindName(kind) << " fault";
  const auto& f = *r.report.fault;
  EXPECT_EQ(f.kind, kind) << f.message();
  EXPECT_EQ(f.engine, engine) << f.message();
  EXPECT_EQ(f.instruction, index) << f.message();
  EXPECT_NE(f.reason.find(text), std::string::npos) << f.message();
  EXPECT_NE(f.message().find(std::string("fault ") + ember::platform::faultKindName(kind)),
            std::string::npos);
}

TEST(SimFaults, IllegalOpcodeAndReservedBits) {
  const auto& isa = refIsa();
  ember::sim::Simulator sim(isa);
  auto job = makeJob(isa, "sync engine=compute\nsync engine=compute\nfinish\n");
  const auto& op = isa.encoding().opcode;
  const unsigned W = isa.instructionBytes();
  // An opcode no instruction has.
  std::uint64_t unused = (std::uint64_t(1) << op.width) - 1;
  while (isa.findOpcode(unused))
    --unused;
  ember::isa::depositBits(job.text.data() + W, op.lsb, op.width, unused);
  Result r = sim.run(job);
  expectFault(r, FaultKind::IllegalOpcode, "fetch", 1, "opcode");
  // Rules F1/F4: fetch reaches instruction 1 in cycle fetch.latency_cycles.
  EXPECT_EQ(r.report.fault->cycle, isa.hw().fetch.latency_cycles);
  // Reserved bits set in the finish instruction.
  job = makeJob(isa, "sync engine=compute\nfinish\n");
  job.text[2 * W - 1] |= 0x80;
  expectFault(sim.run(job), FaultKind::IllegalOpcode, "fetch", 1, "reserved");
  // A memory select the instruction cannot use (dma.st into weight) does not decode.
  ember::isa::Instruction insn(*isa.findInstruction("dma.st"));
  job.text = insn.encode();
  ember::isa::depositBits(job.text.data(), insn.desc().field("sram")->bits.lsb,
                          insn.desc().field("sram")->bits.width, isa.memory("weight").id);
  expectFault(sim.run(job), FaultKind::IllegalOpcode, "fetch", 0, "names no allowed choice");
}

TEST(SimFaults, SramAccessOutOfRange) {
  const auto& isa = refIsa();
  const auto rows = isa.memory("act").rows();
  std::string prog = "sync engine=compute\ngemm act_addr=" + std::to_string(rows - 4) +
                     " acc_addr=0 wgt_addr=0 n0=10 n1=1 n2=1 act_s0=1 acc_s0=1\nfinish\n";
  Result r = run(isa, prog);
  expectFault(r, FaultKind::SramOutOfRange, "compute", 1,
              "act_addr reaches act row " + std::to_string(rows + 5));
  // The sync is taken in cycle L (rule F1) and ends after its issue cycle; the gemm,
  // fetched a cycle later, starts in that cycle (E1) and faults there.
  EXPECT_EQ(r.report.fault->cycle,
            isa.hw().fetch.latency_cycles +
                std::uint64_t(isa.findInstruction("sync")->timingOf("issue")));
  expectFault(run(isa, "dma.ld sram=acc sram_addr=1020 dram_addr=0 size0=2 size1=3 size2=1\n"),
              FaultKind::SramOutOfRange, "load", 0, "beyond its 1024 rows");
  expectFault(run(isa, "vadd dst_mem=acc src_mem=acc dst_addr=0 src0_addr=0 src1_addr=1000 n0=30 "
                       "n1=1 src1_s0=1\n"),
              FaultKind::SramOutOfRange, "compute", 0, "src1_addr");
}

TEST(SimFaults, DramAccessOutOfRange) {
  const auto& isa = refIsa();
  // Beyond hardware.dram.size_bytes (the default window).
  expectFault(
      run(isa, "dma.ld sram=act sram_addr=0 dram_addr=0xfffffff0 size0=2 size1=1 size2=1\n"),
      FaultKind::DramOutOfRange, "load", 0, "leave the job's DRAM window");
  // Beyond a smaller job window.
  ember::platform::Options o;
  o.dram_window_bytes = 0x1000;
  Result r = run(isa,
                 "dma.ld sram=act sram_addr=0 dram_addr=0 size0=4 size1=1 size2=1 push_next\n"
                 "sync engine=compute pop_prev push_next\n"
                 "dma.st sram=act sram_addr=0 dram_addr=0xff8 size0=1 size1=1 size2=1 pop_prev\n",
                 {}, o);
  expectFault(r, FaultKind::DramOutOfRange, "store", 2, "4096 bytes");
}

TEST(SimFaults, TokenUnderflow) {
  const auto& isa = refIsa();
  // compute pops a token the load engine never sends.
  Result r = run(isa, "dma.ld sram=act sram_addr=0 dram_addr=0 size0=1 size1=1 size2=1\n"
                      "sync engine=compute pop_prev\nfinish\n");
  expectFault(r, FaultKind::TokenUnderflow, "compute", 1, "empty load->compute token FIFO");
  // pop_prev on the load engine (the assembler refuses it; a raw binary can hold it).
  ember::isa::Instruction insn(*isa.findInstruction("dma.ld"));
  insn.set("pop_prev", 1);
  ember::platform::Job job;
  job.text = insn.encode();
  expectFault(ember::sim::Simulator(isa).run(job), FaultKind::TokenUnderflow, "load", 0,
              "has no previous engine");
}

TEST(SimFaults, TokenOverflow) {
  const auto& isa = refIsa();
  const auto depth = isa.hw().queues.token_fifo_depth;
  std::string prog;
  for (std::uint64_t i = 0; i <= depth; ++i)
    prog += "sync engine=compute push_next\n";
  Result r = run(isa, prog + "finish\n");
  expectFault(r, FaultKind::TokenOverflow, "compute", std::int64_t(depth),
              "full compute->store token FIFO (depth " + std::to_string(depth) + ")");
  // push_next on the store engine (raw binary).
  ember::isa::Instruction insn(*isa.findInstruction("dma.st"));
  insn.set("push_next", 1);
  ember::platform::Job job;
  job.text = insn.encode();
  expectFault(ember::sim::Simulator(isa).run(job), FaultKind::TokenOverflow, "store", 0,
              "has no next engine");
}

TEST(SimFaults, DeadlockListsTheWaitingInstructions) {
  const auto& isa = refIsa();
  Result r = run(
      isa, "sync engine=load pop_next push_next\nsync engine=compute pop_prev push_prev\nfinish\n");
  expectFault(r, FaultKind::Deadlock, "load", 0,
              "load waits at instruction 0 (sync) for a token from compute");
  EXPECT_NE(r.report.fault->reason.find("compute waits at instruction 1"), std::string::npos);
  EXPECT_NE(r.report.fault->reason.find("store has finished"), std::string::npos);
}

TEST(SimFaults, CycleBudgetExceeded) {
  const auto& isa = refIsa();
  ember::platform::Options o;
  o.cycle_budget = 100;
  Result r = run(
      isa,
      "gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=200 n1=1 n2=4 act_s0=1 acc_s0=1 wgt_s2=1\nfinish\n",
      {}, o);
  expectFault(r, FaultKind::CycleBudget, "compute", 0, "cycle budget of 100 cycles exceeded");
  EXPECT_EQ(r.report.fault->cycle, 100u);
}

TEST(SimFaults, BadOperands) {
  const auto& isa = refIsa();
  // Requantization shift S = 0 (param SRAM is all zeros).
  expectFault(run(isa, "requant dst_addr=0 src_addr=0 param_addr=0 n0=1 n1=1\n"),
              FaultKind::BadOperand, "compute", 0, "outside 1..62");
  expectFault(run(isa, "vshr dst_mem=acc src_mem=acc dst_addr=0 src_addr=0 n0=1 n1=1 imm0=40\n"),
              FaultKind::BadOperand, "compute", 0, "outside -31..31");
}

TEST(SimFaults, RunsAfterAFaultStillWork) {
  const auto& isa = refIsa();
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(run(isa, "sync engine=load pop_next\nfinish\n").ok());
    Result ok =
        run(isa, "dma.ld sram=act sram_addr=0 dram_addr=0 size0=4 size1=1 size2=1\nfinish\n");
    EXPECT_TRUE(ok.ok());
    EXPECT_GT(ok.report.cycles, 100u);
  }
}

} // namespace
