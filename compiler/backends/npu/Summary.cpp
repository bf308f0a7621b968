// The compile summary as a table, and the NPU as an ember::Backend.
#include "Layer.h"

#include "ember/isa/description.h"
#include "ember/quantization/Numerics.h"
#include "ember/support/Error.h"
#include "ember/support/Format.h"

#include <cstdio>
#include <map>
#include <sstream>

namespace ember::npu {

namespace {
std::string human(uint64_t bytes) {
  if (bytes >= (1u << 20))
    return formatNumber("%.2f MiB", double(bytes) / double(1u << 20));
  if (bytes >= 1024)
    return formatNumber("%.1f KiB", double(bytes) / 1024.0);
  return std::to_string(bytes) + " B";
}

std::string pad(const std::string& s, size_t w) {
  return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}
} // namespace

std::vector<std::string> layerNodeNames(const std::string& layerName) {
  std::vector<std::string> names;
  for (size_t at = 0;;) {
    const size_t end = layerName.find(" + ", at);
    names.push_back(layerName.substr(at, end == std::string::npos ? end : end - at));
    if (end == std::string::npos)
      return names;
    at = end + 3;
  }
}

std::map<std::string, double> cyclesByNode(const CompileSummary& s) {
  std::map<std::string, double> out;
  for (const LayerSummary& l : s.layers)
    out[layerNodeNames(l.name).front()] += l.cycles;
  return out;
}

std::string formatSummary(const CompileSummary& s) {
  std::ostringstream o;
  o << "NPU compile summary (" << s.isaName << ")\n";
  o << pad("layer", 28) << pad("kind", 18) << pad("tiles", 7) << pad("insns", 8)
    << pad("est. cycles", 13) << pad("MACs", 12) << pad("MAC util", 9) << "tiling\n";
  for (const auto& l : s.layers) {
    const double util = l.cycles > 0 && s.peakMacsPerCycle
                            ? double(l.macs) / (l.cycles * double(s.peakMacsPerCycle))
                            : 0.0;
    o << pad(l.name, 28) << pad(l.kind, 18) << pad(std::to_string(l.tiles), 7)
      << pad(std::to_string(l.instructions), 8) << pad(formatNumber("%.0f", l.cycles), 13)
      << pad(std::to_string(l.macs), 12) << pad(formatNumber("%.1f%%", 100.0 * util), 9) << l.tiling
      << "\n";
  }
  o << "layers: " << s.layers.size() << ", instructions: " << s.instructions << ", MACs: " << s.macs
    << "\n";
  o << "estimated cycles: " << formatNumber("%.0f", s.cycles);
  if (s.clockHz)
    o << " (" << formatNumber("%.3f", s.cycles / double(s.clockHz) * 1e3) << " ms at "
      << formatNumber("%.0f", double(s.clockHz) / 1e6) << " MHz)";
  if (s.cycles > 0 && s.peakMacsPerCycle)
    o << ", MAC utilisation "
      << formatNumber("%.1f%%", 100.0 * double(s.macs) / (s.cycles * double(s.peakMacsPerCycle)));
  o << "\nSRAM peak use:";
  for (const auto& m : s.sram)
    o << " " << m.name << " " << m.peakRows << "/" << m.rows << " rows"
      << formatNumber(" (%.0f%%)", m.rows ? 100.0 * double(m.peakRows) / double(m.rows) : 0.0);
  o << "\nDRAM: constants " << human(s.constantBytes) << ", scratch " << human(s.scratchBytes)
    << ", I/O " << human(s.ioBytes) << "; binary " << human(s.binaryBytes) << "\n";
  o << "compile time: " << formatNumber("%.3f", s.compileSeconds) << " s\n";
  return o.str();
}

namespace {

/// How a kind with no NPU layer of its own reaches the NPU as other kinds (the operator
/// table's npu column, docs/compiler/operators.md): "" when it does not.
std::string routeToNpu(NodeKind k) {
  if (quant::hasLutForm(k))
    return "via Lut (int8)"; // the quantizer's table of the function, docs/numerics.md 4.6
  static const std::map<NodeKind, const char*> passes = {
      {NodeKind::Split, "via Slices (split-to-slices)"},
      {NodeKind::ConvTranspose, "via Conv + DepthToSpace (+ a crop Slice): 2-D, one group, "
                                "dilation 1 (convtranspose-to-depthtospace)"}};
  const auto it = passes.find(k);
  return it == passes.end() ? "" : it->second;
}

/// The NPU behind the Backend interface: answers `supports` per node; cannot execute.
class NpuBackend : public Backend {
public:
  explicit NpuBackend(isa::IsaDescription isa) : isa_(std::move(isa)), t_(isa_) {}
  std::string name() const override { return "npu"; }
  std::string kindSupport(NodeKind k) const override {
    if (k == NodeKind::QuantizeLinear || k == NodeKind::DequantizeLinear)
      return "host boundary";
    return findLayer(k) ? "layer" : routeToNpu(k);
  }
  bool supports(const Node& n) const override {
    if (n.kind() == NodeKind::QuantizeLinear || n.kind() == NodeKind::DequantizeLinear)
      return true;
    const Layer* l = findLayer(n.kind());
    if (!l)
      return false;
    try {
      return l->check(n, t_).empty();
    } catch (const Error&) {
      return false;
    }
  }
  std::unique_ptr<CompiledFunction> compile(const Function& f) const override {
    throw Error("backend 'npu', function '" + f.name() + "'",
                "this NPU backend only answers what the NPU supports: the compiler does not "
                "link the simulator. Programs that link the device layer get an executing "
                "one from createBackend(\"npu\") after ember::session::registerNpuBackend(); "
                "or compile with emberc and run `ember-run BIN.elf --device sim`");
  }

private:
  isa::IsaDescription isa_;
  Target t_;
};

} // namespace

std::unique_ptr<Backend> createNpuBackend() {
  return std::make_unique<NpuBackend>(isa::IsaDescription::loadDefault());
}

std::unique_ptr<Backend> createNpuBackend(const isa::IsaDescription& isa) {
  return std::make_unique<NpuBackend>(isa);
}

} // namespace ember::npu
