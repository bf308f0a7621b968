// Seeded random chains of NPU layers (conv, depthwise conv, add with a skip, mul by a
// per-channel vector, max/average pool, relu, lut, rescale, concat) with forced small
// tiles and both buffering depths, compiled, simulated and compared bit for bit with the
// int8 interpreter (and the cpu backend with it, where built). Many small steps stress
// the token protocol and buffer reuse. A fifth variant runs on ember-v1 shrunk to 8 act
// rows, 2 weight blocks and 4 acc rows: tap chunks loading only their pixels, pools in
// chunks of taps, Pad in lines x columns, single-buffered layers.
#include "RandomChain.h"

namespace ember::npu::test {
namespace {

class RandomChain : public ::testing::TestWithParam<unsigned> {};

TEST_P(RandomChain, BitExactAgainstInt8Interpreter) {
  Chain ch(GetParam());
  buildRandomChain(ch);
  static const isa::IsaDescription tiny = refIsaWithRows({{"act", 8}, {"weight", 2}, {"acc", 4}});
  for (int variant = 0; variant < 5; ++variant) {
    CompileOptions o;
    o.doubleBuffer = variant == 4 || (variant & 1);
    o.maxTileHeight = (variant & 2) ? 1 : 0;
    o.maxTileKBlocks = (variant & 2) ? 1 : 0;
    const isa::IsaDescription& isa = variant == 4 ? tiny : variant == 3 ? largeIsa() : refIsa();
    CompileResult r = compile(*ch.g.f, isa, o);
    auto in = randomInputs(r.binary, GetParam());
    SimOut s = simulate(r.binary, isa, in);
    // Same graph and inputs in every variant: the cpu backend runs once (odd seeds on 1
    // thread, even seeds on 2).
    auto want = variant == 0 ? interpretAndCpu(*ch.g.f, in, GetParam() % 2 ? 1 : 2,
                                               "seed " + std::to_string(GetParam()))
                             : interpret(*ch.g.f, in);
    EXPECT_EQ(mismatches(s.outputs["y"], want["y"]), 0u)
        << "seed " << GetParam() << " variant " << variant << "\n"
        << formatSummary(r.summary);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomChain, ::testing::Range(1u, 25u));

} // namespace
} // namespace ember::npu::test
