// Shared by the partitioner's and the package tests: NPU segments run on the simulator,
// random int8 codes for a function's inputs, and the small graphs both build.
#pragma once

#include "RandomChain.h"

#include "ember/driver/Execute.h"

namespace ember::npu::test {

/// NPU segments on the SystemC model: int8 boundary values in, the stored int8 out.
inline partition::NpuRunner simRunner(const isa::IsaDescription& isa) {
  return [&isa](const partition::Segment& s, const TensorMap& in, partition::SegmentRun& run) {
    std::map<std::string, std::vector<int8_t>> codes;
    for (const auto& [name, t] : in) {
      EXPECT_EQ(t.kind(), ElemKind::Int8) << name;
      codes[name] = t.toVector<int8_t>();
    }
    SimOut o = simulate(s.npu->binary, isa, codes);
    run.npuCycles = o.report.cycles;
    TensorMap out;
    for (const auto& e : s.npu->binary.io)
      if (e.dir == isa::IoDir::Output)
        out[e.name] =
            Tensor::fromVector<int8_t>(Shape(e.shape.begin(), e.shape.end()), o.outputs.at(e.name));
    return out;
  };
}

inline std::map<std::string, std::vector<int8_t>> randomCodes(const Function& f, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-128, 127);
  std::map<std::string, std::vector<int8_t>> out;
  for (const Node* p : f.inputs()) {
    std::vector<int8_t> v(size_t(p->resultType().size()));
    for (auto& x : v)
      x = static_cast<int8_t>(d(rng));
    out[p->name()] = v;
  }
  return out;
}

/// A 1x1 convolution of a [1, 16, 8, 8] value to 16 channels.
inline NodeValue conv16(G& g, const std::string& name, NodeValue x, float s, int32_t zp) {
  Attrs a;
  a.set("kernel_shape", std::vector<int64_t>{1, 1});
  return g.node(NodeKind::Conv, name,
                {x, g.weights(name + "_w", {16, 16, 1, 1}, 0), g.bias(name + "_b", 16)}, a,
                {1, 16, 8, 8}, s, zp);
}

/// An Expand of a value to its own shape: codes moved unchanged, but no NPU layer runs the
/// kind, so it runs on the host. (A transpose of H and W served here until the NPU ran
/// channel-keeping transposes.)
inline NodeValue hostOnly(G& g, const std::string& name, NodeValue x) {
  Attrs t;
  t.set("shape", x.dims());
  const QuantParams& q = x.type().quant;
  return g.node(NodeKind::Expand, name, {x}, t, x.dims(), q.scales[0], q.zeroPoints[0]);
}

} // namespace ember::npu::test
