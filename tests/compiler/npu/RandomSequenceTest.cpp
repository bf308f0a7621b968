// Seeded random chains of the NPU's sequence layers, the pieces attention is made of:
// Transpose of a [G, T, C] sequence (perm 1, 0, 2 as strided row copies; 0, 2, 1 and the
// keys' 1, 2, 0 through the array's block transposes), MatMul of two activations (b a
// further input, or the keys' transpose of one), Mul by a constant scalar, Add of a
// constant, Softmax and LayerNormalization along the channels (the normalize
// instructions), the Reshape to rows and the mean over tokens. Random extents (partial lane
// blocks both ways) and zero points (-128 among them); each chain compiled on ember-v1
// double- and single-buffered, on the 32-lane description and on ember-v1 shrunk to 64
// act rows, 8 weight blocks and 32 acc rows (Softmax's parameter block is 18), simulated and
// compared bit for bit with the int8 interpreter (and once with the cpu backend).
#include "NpuTestUtil.h"

namespace ember::npu::test {
namespace {

using ember::test::ints;

struct Sequence {
  G g;
  std::mt19937 rng;
  NodeValue cur;
  int64_t Gs = 1, T = 1, C = 1; ///< The current value is [Gs, T, C].
  int n = 0;

  explicit Sequence(unsigned seed) : rng(seed) {}

  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  float scale() { return std::uniform_real_distribution<float>(0.02f, 0.2f)(rng); }
  int32_t zp() { return pick(0, 4) == 0 ? -128 : int32_t(pick(-60, 60)); }
  std::string name(const char* k) { return std::string(k) + std::to_string(n++); }
  /// `cur` under a new shape with parameters (codes move unchanged).
  void same(NodeKind k, const char* what, Attrs a, Shape dims) {
    const QuantParams q = cur.type().quant;
    cur = g.node(k, name(what), {cur}, std::move(a), std::move(dims), q.scales[0], q.zeroPoints[0]);
  }

  void step() {
    switch (pick(0, 8)) {
    case 0:
      same(NodeKind::Transpose, "swap", ints({{"perm", {1, 0, 2}}}), {T, Gs, C});
      std::swap(Gs, T);
      break;
    case 1:
      same(NodeKind::Transpose, "t021", ints({{"perm", {0, 2, 1}}}), {Gs, C, T});
      std::swap(T, C);
      break;
    case 2: { // x b, b a further input
      const int64_t K = pick(1, 40);
      NodeValue b = g.input(name("b"), {Gs, C, K}, scale(), zp());
      cur = g.node(NodeKind::MatMul, name("mm"), {cur, b}, {}, {Gs, T, K}, scale(), zp());
      C = K;
      break;
    }
    case 3: { // scores against keys [T2, Gs, C] transposed to [Gs, C, T2]
      const int64_t T2 = pick(1, 24);
      NodeValue k = g.input(name("k"), {T2, Gs, C}, scale(), zp());
      if (pick(0, 1)) { // computed keys: the padding lanes of an Add need not be zero
        Tensor e(ElemKind::Int8, {T2, Gs, C});
        for (int64_t i = 0; i < e.size(); ++i)
          e.data<int8_t>()[i] = static_cast<int8_t>(pick(-128, 127));
        e.mutableType().quant = perTensor(scale(), zp());
        k = g.node(NodeKind::Add, name("kadd"), {k, g.constant(name("kbias"), std::move(e))}, {},
                   {T2, Gs, C}, scale(), zp());
      }
      const QuantParams q = k.type().quant;
      NodeValue kt = g.node(NodeKind::Transpose, name("keys"), {k}, ints({{"perm", {1, 2, 0}}}),
                            {Gs, C, T2}, q.scales[0], q.zeroPoints[0]);
      cur = g.node(NodeKind::MatMul, name("qk"), {cur, kt}, {}, {Gs, T, T2}, scale(), zp());
      C = T2;
      break;
    }
    case 4: {
      Tensor s(ElemKind::Int8, {});
      s.data<int8_t>()[0] = static_cast<int8_t>(pick(-127, 127));
      s.mutableType().quant = perTensor(scale(), zp());
      NodeValue c = g.constant(name("scalar"), std::move(s));
      cur = g.node(NodeKind::Mul, name("mul"), {cur, c}, {}, {Gs, T, C}, scale(), zp());
      break;
    }
    case 5: {
      Tensor e(ElemKind::Int8, {Gs, T, C});
      for (int64_t i = 0; i < e.size(); ++i)
        e.data<int8_t>()[i] = static_cast<int8_t>(pick(-128, 127));
      e.mutableType().quant = perTensor(scale(), zp());
      NodeValue c = g.constant(name("embed"), std::move(e));
      cur = g.node(NodeKind::Add, name("add"), {c, cur}, {}, {Gs, T, C}, scale(), zp());
      break;
    }
    case 6: { // Softmax along the channels (the quantizer's [0, 1] result, or any)
      Attrs a;
      a.set("axis", int64_t(-1));
      const bool q01 = pick(0, 1) == 0;
      cur = g.node(NodeKind::Softmax, name("softmax"), {cur}, a, {Gs, T, C},
                   q01 ? 1.f / 255 : scale() / 10, q01 ? -128 : zp());
      break;
    }
    case 7: { // LayerNormalization along the channels, per-channel or one scale, a bias or none
      Attrs a;
      a.set("axis", int64_t(-1));
      a.set("epsilon", pick(0, 1) ? 1e-5f : 0.3f);
      std::vector<NodeValue> in{cur, g.constant(name("gamma"), {pick(0, 1) ? C : 1}, -2.f, 2.f)};
      if (pick(0, 1))
        in.push_back(g.constant(name("beta"), {C}, -1.f, 1.f));
      cur =
          g.f->create(NodeKind::LayerNormalization, name("norm"), in, a,
                      std::vector<Type>{Type(ElemKind::Int8, {Gs, T, C}, perTensor(scale(), zp())),
                                        Type(ElemKind::Float32, {Gs, T, 1}),
                                        Type(ElemKind::Float32, {Gs, T, 1})})
              ->result();
      break;
    }
    default:
      if (T > 1) { // the mean over tokens, kept as [Gs, 1, C]
        cur = g.node(NodeKind::ReduceMean, name("mean"), {cur}, ints({{"axes", {1}}}), {Gs, 1, C},
                     scale(), zp());
        T = 1;
      }
      break;
    }
  }
};

class RandomSequence : public ::testing::TestWithParam<unsigned> {};

TEST_P(RandomSequence, BitExactAgainstInt8Interpreter) {
  Sequence sq(GetParam());
  sq.Gs = sq.pick(1, 3);
  sq.T = sq.pick(1, 20);
  sq.C = sq.pick(1, 40);
  sq.cur = sq.g.input("x", {sq.Gs, sq.T, sq.C}, 0.05f, sq.zp());
  const int layers = int(sq.pick(3, 7));
  for (int i = 0; i < layers; ++i)
    sq.step();
  sq.same(NodeKind::Reshape, "rows", ints({{"shape", {sq.Gs * sq.T, sq.C}}}), {sq.Gs * sq.T, sq.C});
  sq.g.output("y", sq.cur);
  static const isa::IsaDescription tiny = refIsaWithRows({{"act", 64}, {"weight", 8}, {"acc", 32}});
  for (int variant = 0; variant < 4; ++variant) {
    CompileOptions o;
    o.doubleBuffer = variant != 1;
    const isa::IsaDescription& isa = variant == 2 ? largeIsa() : variant == 3 ? tiny : refIsa();
    CompileResult r = compile(*sq.g.f, isa, o);
    auto in = randomInputs(r.binary, GetParam());
    SimOut s = simulate(r.binary, isa, in);
    auto want = variant == 0 ? interpretAndCpu(*sq.g.f, in, 1, "seed " + std::to_string(GetParam()))
                             : interpret(*sq.g.f, in);
    EXPECT_EQ(mismatches(s.outputs["y"], want["y"]), 0u)
        << "seed " << GetParam() << " variant " << variant << "\n"
        << formatSummary(r.summary);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomSequence, ::testing::Range(1u, 21u));

} // namespace
} // namespace ember::npu::test
