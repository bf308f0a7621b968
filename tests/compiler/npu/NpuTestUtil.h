// Helpers of the NPU backend tests: hand-built int8 graphs (float placeholder ->
// QuantizeLinear -> int8 nodes -> DequantizeLinear -> output), running a compiled
// binary on the simulator, and the int8 interpreter as an independent reference. Where
// the cpu backend is built (EMBER_HAVE_CPU), interpretAndCpu() also runs each graph on it
// and requires the interpreter's outputs bit for bit.
#pragma once

#include "GraphBuilder.h"
#include "ember/backend/Backend.h"
#ifdef EMBER_HAVE_CPU
#include "ember/cpu/CpuBackend.h"
#endif
#include "ember/graph/Graph.h"
#include "ember/npu/Compile.h"
#include "ember/platform/Io.h"
#include "ember/sim/Simulator.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace ember::npu::test {

inline std::string isaPath(const std::string& rel) {
  return std::string(EMBER_SOURCE_DIR) + "/" + rel;
}
inline const isa::IsaDescription& refIsa() {
  static isa::IsaDescription d = isa::IsaDescription::loadFile(isaPath("isa/ember-v1.json"));
  return d;
}
inline const isa::IsaDescription& largeIsa() {
  static isa::IsaDescription d =
      isa::IsaDescription::loadFile(isaPath("isa/examples/ember-v1-large.json"));
  return d;
}

/// ember-v1 with SRAMs shrunk to the given rows (banks capped to the rows), e.g.
/// {{"act", 8}, {"acc", 4}}: the small descriptions the compiler must still serve.
inline isa::IsaDescription
refIsaWithRows(std::initializer_list<std::pair<const char*, int64_t>> rows) {
  nlohmann::json j = refIsa().json();
  std::string name = "ember-v1 with";
  for (const auto& [mem, n] : rows) {
    auto& m = j["hardware"]["memories"][mem];
    m["size_bytes"] = n * m["row_bytes"].get<int64_t>();
    m["banks"] = std::min<int64_t>(m["banks"].get<int64_t>(), n);
    name +=
        std::string(name.size() > 13 ? "," : "") + " " + std::to_string(n) + " " + mem + " rows";
  }
  return isa::IsaDescription::loadString(j.dump(), name);
}

/// `base` without its instructions of semantic class `cls` (e.g. "depthwise": the
/// backend then takes its other path, as it must for a vendor's description without it).
inline isa::IsaDescription without(const isa::IsaDescription& base, const std::string& cls) {
  nlohmann::json j = base.json();
  auto& v = j["instructions"];
  for (auto it = v.begin(); it != v.end();)
    it = (*it)["class"] == cls ? v.erase(it) : it + 1;
  return isa::IsaDescription::loadString(j.dump(), base.name() + " without " + cls);
}

/// `base` without its instructions that have `properties.<prop>` (e.g. "bias": without
/// the bias requantize the backend copies the bias into the accumulators, as it must for
/// a description that lacks the instruction).
inline isa::IsaDescription withoutProperty(const isa::IsaDescription& base,
                                           const std::string& prop) {
  nlohmann::json j = base.json();
  auto& v = j["instructions"];
  for (auto it = v.begin(); it != v.end();)
    it =
        it->contains("properties") && (*it)["properties"].value(prop, false) ? v.erase(it) : it + 1;
  return isa::IsaDescription::loadString(j.dump(), base.name() + " without " + prop);
}

using ember::test::perTensor;

/// The shared test graph builder (tests/compiler/common/GraphBuilder.h) in the NPU
/// tests' int8 vocabulary: inputs are quantized, nodes int8 of given parameters, outputs
/// dequantized.
struct G : ember::test::GraphBuilder {
  G() : GraphBuilder(1234) {}
  /// A float placeholder quantized to int8 with (s, zp).
  NodeValue input(const std::string& name, Shape dims, float s, int32_t zp) {
    return quantizedInput(name, dims, s, zp);
  }
  /// Dequantizes `v` into function output `name`.
  void output(const std::string& name, NodeValue v) { dequantizedOutput(name, v); }
  NodeValue weights(const std::string& name, Shape dims, int axis, int lim = 127) {
    return int8Weights(name, dims, axis, lim);
  }
  NodeValue bias(const std::string& name, int64_t k, int lim = 3000) {
    return int32Bias(name, k, lim);
  }
  NodeValue node(NodeKind k, const std::string& name, std::vector<NodeValue> in, Attrs a,
                 Shape dims, float s, int32_t zp) {
    return int8Node(k, name, std::move(in), std::move(a), std::move(dims), s, zp);
  }
};

/// Random int8 codes for every input entry of `bin`, logical row-major.
inline std::map<std::string, std::vector<int8_t>> randomInputs(const isa::Binary& bin,
                                                               unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-128, 127);
  std::map<std::string, std::vector<int8_t>> out;
  for (const auto& e : bin.io)
    if (e.dir == isa::IoDir::Input) {
      std::vector<int8_t> v(size_t(numElements(e.shape)));
      for (auto& x : v)
        x = static_cast<int8_t>(d(rng));
      out[e.name] = v;
    }
  return out;
}

/// What one simulation gave.
struct SimOut {
  std::map<std::string, std::vector<int8_t>> outputs;
  platform::Report report;
};

/// Runs `bin` on the simulator with int8 inputs (logical layout); fails the test on a fault.
inline SimOut simulate(const isa::Binary& bin, const isa::IsaDescription& isa,
                       const std::map<std::string, std::vector<int8_t>>& in) {
  const unsigned L = isa.hw().vector.lanes;
  std::map<std::string, std::vector<uint8_t>> packed;
  for (const auto& e : bin.io)
    if (e.dir == isa::IoDir::Input) {
      const auto& v = in.at(e.name);
      packed[e.name] = platform::packIo(e, std::vector<uint8_t>(v.begin(), v.end()), L);
    }
  sim::Simulator s(isa);
  platform::Options o;
  o.record_slices = false;
  platform::Result r = s.run(bin, packed, o);
  SimOut out;
  out.report = r.report;
  EXPECT_TRUE(r.ok()) << (r.report.fault ? r.report.fault->message() : "");
  if (!r.ok())
    return out;
  for (const auto& e : bin.io)
    if (e.dir == isa::IoDir::Output) {
      auto v = platform::unpackIo(e, r.dram.read(e.dram_offset, e.size_bytes).data(), L);
      out.outputs[e.name] = std::vector<int8_t>(v.begin(), v.end());
    }
  return out;
}

/// Number of positions where a and b differ (sizes must agree).
inline size_t mismatches(const std::vector<int8_t>& a, const std::vector<int8_t>& b) {
  if (a.size() != b.size())
    return std::max(a.size(), b.size());
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i)
    n += a[i] != b[i];
  return n;
}

/// The float feeds of `f` that its QuantizeLinear nodes map back to the int8 codes `in`
/// exactly (each placeholder is read by one QuantizeLinear).
inline TensorMap floatFeeds(const Function& f,
                            const std::map<std::string, std::vector<int8_t>>& in) {
  TensorMap feeds;
  for (Node* ph : f.inputs()) {
    const Node* q = nullptr;
    for (const auto& n : f.nodes())
      if (n->kind() == NodeKind::QuantizeLinear && n->input(0).node == ph)
        q = n.get();
    const auto& qp = q->resultType(0).quant;
    const auto& codes = in.at(ph->name());
    Tensor t(ElemKind::Float32, ph->resultType(0).dims);
    for (size_t i = 0; i < codes.size(); ++i)
      t.data<float>()[i] = (float(codes[i]) - float(qp.zeroPoints[0])) * qp.scales[0];
    feeds[ph->name()] = t;
  }
  return feeds;
}

/// The int8 codes behind the float outputs of `f` (each a DequantizeLinear of an int8
/// value): dequantized floats map back exactly.
inline std::map<std::string, std::vector<int8_t>> outputCodes(const Function& f,
                                                              const TensorMap& res) {
  std::map<std::string, std::vector<int8_t>> out;
  for (const auto& o : f.outputs()) {
    const auto& qp = o.value.node->input(0).type().quant;
    const Tensor& t = res.at(o.name);
    std::vector<int8_t> codes(size_t(t.size()));
    for (int64_t i = 0; i < t.size(); ++i) {
      const float r = t.data<float>()[i] / qp.scales[0];
      codes[size_t(i)] = static_cast<int8_t>(std::lrint(r) + qp.zeroPoints[0]);
    }
    out[o.name] = codes;
  }
  return out;
}

/// The int8 interpreter's result codes for every output of `f` (the input values given
/// as int8 codes are dequantized to floats that QuantizeLinear maps back exactly).
inline std::map<std::string, std::vector<int8_t>>
interpret(const Function& f, const std::map<std::string, std::vector<int8_t>>& in) {
  return outputCodes(f, createBackend("interp")->compile(f)->run(floatFeeds(f, in)));
}

#ifdef EMBER_HAVE_CPU
/// Runs `f` on the cpu backend with `threads` threads on the feeds the interpreter got
/// and fails the test unless every output tensor is bit-identical to the interpreter's
/// `ref` (type and bytes). A refusal (ember::Unsupported) fails the test, unless
/// `knownGap` names an operator form the cpu backend does not implement: then the
/// refusal is printed with that reason (and an accepted graph must still be bit-exact).
inline void expectCpuBitExact(const Function& f, const TensorMap& feeds, const TensorMap& ref,
                              int threads, const std::string& what,
                              const char* knownGap = nullptr) {
  TensorMap got;
  try {
    got = createCpuBackend(CpuOptions{threads})->compile(f)->run(feeds);
  } catch (const Unsupported& e) {
    if (knownGap) {
      std::printf("[ cpu leg ] %s: not run on the cpu backend (%s): %s\n", what.c_str(), knownGap,
                  e.what());
      return;
    }
    ADD_FAILURE() << what << ": the cpu backend refused the graph: " << e.what();
    return;
  }
  for (const auto& o : f.outputs()) {
    const Tensor& r = ref.at(o.name);
    auto it = got.find(o.name);
    if (it == got.end()) {
      ADD_FAILURE() << what << ": no output " << o.name << " from the cpu backend";
      continue;
    }
    const Tensor& g = it->second;
    if (g == r)
      continue;
    std::string detail = g.type().toString() + " vs " + r.type().toString();
    if (g.type() == r.type()) {
      const auto gc = outputCodes(f, got).at(o.name), rc = outputCodes(f, ref).at(o.name);
      size_t first = 0;
      while (first < rc.size() && gc[first] == rc[first])
        ++first;
      detail += ", " + std::to_string(mismatches(gc, rc)) + " of " + std::to_string(rc.size()) +
                " int8 codes differ";
      if (first < rc.size())
        detail += ", first at " + std::to_string(first) + ": cpu " + std::to_string(gc[first]) +
                  ", interp " + std::to_string(rc[first]);
    }
    ADD_FAILURE() << what << ": output " << o.name << " on the cpu backend (" << threads
                  << " thread(s)) differs from the int8 interpreter: " << detail;
  }
}
#endif

/// The int8 interpreter's result codes (as interpret()); where the cpu backend is built,
/// the same graph also runs on it with `threads` threads and must give the interpreter's
/// outputs bit for bit (see expectCpuBitExact() for `knownGap`).
inline std::map<std::string, std::vector<int8_t>>
interpretAndCpu(const Function& f, const std::map<std::string, std::vector<int8_t>>& in,
                int threads, const std::string& what, const char* knownGap = nullptr) {
  const TensorMap feeds = floatFeeds(f, in);
  const TensorMap ref = createBackend("interp")->compile(f)->run(feeds);
#ifdef EMBER_HAVE_CPU
  expectCpuBitExact(f, feeds, ref, threads, what, knownGap);
#else
  (void)threads;
  (void)what;
  (void)knownGap;
#endif
  return outputCodes(f, ref);
}

} // namespace ember::npu::test
