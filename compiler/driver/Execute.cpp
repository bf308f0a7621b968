// Running a partition::Plan segment by segment.
#include "ember/driver/Execute.h"

#include "ember/support/Error.h"

#include <chrono>
#include <cstdio>

namespace ember::partition {

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The value a segment's output `b` holds, from what the NPU stored (`raw`): an int8
/// boundary value as it is (in its own shape and parameters), a float value as the
/// DequantizeLinear producing it computes (whole plans: the model's outputs).
Tensor fromNpu(const BoundaryValue& b, const Tensor& raw) {
  if (raw.size() != b.type.size())
    throw InternalError("value '" + b.key + "'", "the NPU stored " + std::to_string(raw.size()) +
                                                     " elements, the value has " +
                                                     std::to_string(b.type.size()));
  if (!b.dequantizedFrom) {
    Tensor t = raw.reshaped(b.type.dims);
    t.mutableType().quant = b.type.quant;
    return t;
  }
  return dequantizeCodes(raw, b.dequantizedFrom->scales.at(0), b.dequantizedFrom->zeroPoints.at(0),
                         b.type.dims);
}

} // namespace

Tensor dequantizeCodes(const Tensor& codes, float scale, int64_t zeroPoint, const Shape& dims) {
  Tensor out(ElemKind::Float32, dims);
  for (int64_t i = 0; i < codes.size(); ++i)
    out.data<float>()[i] = static_cast<float>(codes.getAsInt(i) - zeroPoint) * scale;
  return out;
}

PlanExecutor::PlanExecutor(const Plan& plan, NpuRunner npu) : plan_(plan), npu_(std::move(npu)) {
  for (const Segment& s : plan_.segments) {
    if (s.backend == "npu") {
      host_.emplace_back();
      continue;
    }
    std::unique_ptr<Backend> b = createBackend(s.backend);
    requireSupported(*b, *s.function, "backend '" + s.backend + "'", "its segment");
    host_.push_back(b->compile(*s.function));
  }
}

PlanExecutor::~PlanExecutor() = default;

TensorMap PlanExecutor::run(const TensorMap& inputs, std::vector<SegmentRun>* runs) {
  std::vector<Tensor> values(plan_.values.size());
  std::vector<bool> have(plan_.values.size(), false);
  for (size_t i = 0; i < plan_.values.size(); ++i) {
    const BoundaryValue& b = plan_.values[i];
    if (b.producer >= 0)
      continue;
    if (b.constant) {
      values[i] = *b.constant;
    } else {
      auto it = inputs.find(b.input);
      if (it == inputs.end())
        throw Error("input '" + b.input + "'",
                    "no value given (expects " + b.type.toString() + ")");
      if (it->second.kind() != b.type.kind || it->second.dims() != b.type.dims)
        throw Error("input '" + b.input + "'", "given " + it->second.type().toString() +
                                                   ", the model expects " + b.type.toString());
      values[i] = it->second;
      values[i].mutableType().quant = b.type.quant;
    }
    have[i] = true;
  }
  if (runs)
    runs->clear();
  for (size_t s = 0; s < plan_.segments.size(); ++s) {
    const Segment& seg = plan_.segments[s];
    SegmentRun r;
    r.backend = seg.backend;
    TensorMap in;
    for (size_t i : seg.inputs) {
      if (!have[i])
        throw InternalError("segment " + std::to_string(s),
                            "input '" + plan_.values[i].key + "' is not computed yet");
      // A whole plan's function reads the model's placeholders under their own names.
      in.emplace(plan_.whole ? plan_.values[i].value.node->name() : plan_.values[i].key, values[i]);
      r.inBytes += values[i].sizeInBytes();
    }
    const auto t0 = std::chrono::steady_clock::now();
    TensorMap out = seg.backend == "npu" ? npu_(seg, in, r) : host_[s]->run(in);
    r.seconds = secondsSince(t0);
    for (size_t k = 0; k < seg.outputs.size(); ++k) {
      const size_t i = seg.outputs[k];
      const BoundaryValue& b = plan_.values[i];
      const std::string& name = seg.outputNames[k];
      auto it = out.find(name);
      if (it == out.end())
        throw InternalError("segment " + std::to_string(s), "no output '" + name + "'");
      values[i] = seg.backend == "npu" ? fromNpu(b, it->second) : it->second;
      have[i] = true;
      r.outBytes += values[i].sizeInBytes();
    }
    if (runs)
      runs->push_back(r);
  }
  TensorMap result;
  for (const auto& [name, i] : plan_.outputs) {
    if (!have[i])
      throw InternalError("output '" + name + "'", "not computed by any segment");
    result[name] = values[i];
  }
  return result;
}

std::string formatSegmentRuns(const Plan& plan, const std::vector<SegmentRun>& runs) {
  std::string out;
  char buf[200];
  std::snprintf(buf, sizeof buf, "  %-4s %-7s %6s %12s %12s %14s %12s %10s\n", "seg", "backend",
                "nodes", "in bytes", "out bytes", "NPU cycles", "energy uJ", "host ms");
  out += buf;
  uint64_t cycles = 0, bytes = 0;
  double energy = 0, npuSeconds = 0, hostSeconds = 0;
  for (size_t s = 0; s < runs.size() && s < plan.segments.size(); ++s) {
    const SegmentRun& r = runs[s];
    const bool npu = r.backend == "npu";
    std::snprintf(buf, sizeof buf, "  %-4zu %-7s %6zu %12llu %12llu %14s %12s %10s\n", s,
                  r.backend.c_str(), plan.segments[s].numNodes,
                  static_cast<unsigned long long>(r.inBytes),
                  static_cast<unsigned long long>(r.outBytes),
                  npu ? std::to_string(r.npuCycles).c_str() : "-",
                  npu ? std::to_string(r.npuEnergyJoules * 1e6).c_str() : "-",
                  npu ? "-" : std::to_string(r.seconds * 1e3).c_str());
    out += buf;
    if (npu) {
      cycles += r.npuCycles;
      energy += r.npuEnergyJoules;
      npuSeconds += r.npuSeconds;
      if (!plan.whole)
        bytes += r.inBytes + r.outBytes;
    } else {
      hostSeconds += r.seconds;
    }
  }
  std::snprintf(buf, sizeof buf,
                "  total: %llu NPU cycles (%.3f ms), %.3f uJ on the NPU, %.3f ms on the host, "
                "%llu bytes between host and NPU\n",
                static_cast<unsigned long long>(cycles), npuSeconds * 1e3, energy * 1e6,
                hostSeconds * 1e3, static_cast<unsigned long long>(bytes));
  return out + buf;
}

} // namespace ember::partition
