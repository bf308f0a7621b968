// A seeded random chain of NPU layers (conv, depthwise conv, add with a skip, mul by a
// per-channel vector, max/average pool, relu, lut, rescale, concat), shared by the
// NPU's random tests (RandomChainTest.cpp) and the partitioner's (PartitionTest.cpp).
#pragma once

#include "NpuTestUtil.h"

#include "ember/graph/attrs/FusedActivation.h"

namespace ember::npu::test {

struct Chain {
  G g;
  std::mt19937 rng;
  NodeValue cur;
  int64_t C = 0, H = 0, W = 0;
  int n = 0;

  explicit Chain(unsigned seed) : rng(seed) {}

  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  float scale() { return std::uniform_real_distribution<float>(0.02f, 0.2f)(rng); }
  int32_t zp() { return int32_t(pick(-60, 60)); }
  std::string name(const char* k) { return std::string(k) + std::to_string(n++); }

  void conv(int64_t K, int64_t k, int64_t stride, int64_t group) {
    Attrs a;
    const int64_t p = k / 2;
    a.set("kernel_shape", std::vector<int64_t>{k, k});
    a.set("pads", std::vector<int64_t>{p, p, p, p});
    a.set("strides", std::vector<int64_t>{stride, stride});
    a.set("group", group);
    if (pick(0, 1)) {
      FusedActivation fa;
      fa.kind = FusedActivation::Kind::Relu;
      fa.writeTo(a);
    }
    const int64_t OH = (H + 2 * p - k) / stride + 1, OW = (W + 2 * p - k) / stride + 1;
    const std::string nm = name("conv");
    cur = g.node(NodeKind::Conv, nm,
                 {cur, g.weights(nm + "_w", {K, C / group, k, k}, 0), g.bias(nm + "_b", K)}, a,
                 {1, K, OH, OW}, scale(), zp());
    C = K, H = OH, W = OW;
  }

  void step() {
    switch (pick(0, 8)) {
    case 0:
      conv(pick(1, 40), pick(0, 1) ? 3 : 1, pick(1, 2), 1);
      break;
    case 1:
      conv(C, 3, 1, C); // depthwise
      break;
    case 2: { // residual add with a 1x1 branch
      NodeValue in = cur;
      const int64_t c0 = C;
      conv(c0, 1, 1, 1);
      cur = g.node(NodeKind::Add, name("add"), {in, cur}, {}, {1, C, H, W}, scale(), zp());
      break;
    }
    case 3: { // squeeze-and-excitation style scale
      NodeValue v =
          g.node(NodeKind::GlobalAveragePool, name("gap"), {cur}, {}, {1, C, 1, 1}, scale(), zp());
      cur = g.node(NodeKind::Mul, name("mul"), {cur, v}, {}, {1, C, H, W}, scale(), zp());
      break;
    }
    case 4:
      if (H >= 2 && W >= 2) {
        Attrs a;
        a.set("kernel_shape", std::vector<int64_t>{2, 2});
        a.set("strides", std::vector<int64_t>{2, 2});
        const QuantParams q = cur.type().quant;
        cur = g.node(pick(0, 1) ? NodeKind::MaxPool : NodeKind::AveragePool, name("pool"), {cur}, a,
                     {1, C, H / 2, W / 2}, q.scales[0], q.zeroPoints[0]);
        H /= 2, W /= 2;
      }
      break;
    case 5: {
      const QuantParams q = cur.type().quant;
      cur = g.node(NodeKind::Relu, name("relu"), {cur}, {}, {1, C, H, W}, q.scales[0],
                   q.zeroPoints[0]);
      break;
    }
    case 6: {
      Tensor tab(ElemKind::Int8, {256});
      for (int i = 0; i < 256; ++i)
        tab.data<int8_t>()[i] = static_cast<int8_t>(pick(-128, 127));
      NodeValue t = g.m.createConstant(name("table"), tab)->result();
      cur = g.node(NodeKind::Lut, name("lut"), {cur, t}, {}, {1, C, H, W}, scale(), zp());
      break;
    }
    case 7:
      cur = g.node(NodeKind::Rescale, name("rescale"), {cur}, {}, {1, C, H, W}, scale(), zp());
      break;
    default: { // concat with a 32-channel conv of itself (offset a multiple of L = 16, 32)
      NodeValue in = cur;
      const int64_t c0 = C;
      if (c0 % 32 != 0)
        conv(32 * pick(1, 2), 1, 1, 1), in = cur;
      const QuantParams q = in.type().quant;
      Attrs a;
      a.set("kernel_shape", std::vector<int64_t>{1, 1});
      const std::string nm = name("side");
      NodeValue side = g.node(NodeKind::Conv, nm,
                              {in, g.weights(nm + "_w", {32, C, 1, 1}, 0), g.bias(nm + "_b", 32)},
                              a, {1, 32, H, W}, q.scales[0], q.zeroPoints[0]);
      Attrs ca;
      ca.set("axis", int64_t(1));
      cur = g.node(NodeKind::Concat, name("cat"), {in, side}, ca, {1, C + 32, H, W}, q.scales[0],
                   q.zeroPoints[0]);
      C += 32;
      break;
    }
    }
  }
};

/// A chain of 4 to 9 layers on a random input, its output "y".
inline void buildRandomChain(Chain& ch) {
  ch.C = ch.pick(3, 24);
  ch.H = ch.pick(6, 20);
  ch.W = ch.pick(6, 20);
  ch.cur = ch.g.input("x", {1, ch.C, ch.H, ch.W}, 0.05f, int32_t(ch.pick(-20, 20)));
  const int layers = int(ch.pick(4, 9));
  for (int i = 0; i < layers; ++i)
    ch.step();
  ch.g.output("y", ch.cur);
}

} // namespace ember::npu::test
