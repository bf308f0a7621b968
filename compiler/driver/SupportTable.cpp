// The operator support table of docs/compiler/operators.md.
#include "ember/driver/SupportTable.h"

#include "ember/backend/Backend.h"
#include "ember/graph/OpInfo.h"
#ifdef EMBER_DRIVER_HAVE_ONNX
#include "ember/importer/OnnxPlugin.h"
#endif
#include "ember/npu/Compile.h"
#include "ember/quantization/Quantize.h"
#include "ember/support/Error.h"

#include <memory>
#include <set>
#include <vector>

namespace ember::driver {

std::string operatorSupportTable() {
  std::vector<std::unique_ptr<Backend>> backends;
  for (const std::string& name : backendNames())
    backends.push_back(createBackend(name));
  if (!isBackendRegistered("npu")) // the compiler's answers; the device layer registers it
    backends.push_back(npu::createNpuBackend());
  std::set<NodeKind> int8;
  for (const auto& r : quant::quantizeRules())
    int8.insert(r.kind);
#ifdef EMBER_DRIVER_HAVE_ONNX
  const std::vector<std::string> ops = loadOnnxImporter().supportedOps();
#else
  const std::vector<std::string> ops;
#endif
  const std::set<std::string> onnxOps(ops.begin(), ops.end());
  std::string out = "| kind | ONNX | traits | int8 rule |";
  std::string rule = "| --- | --- | --- | --- |";
  for (const auto& b : backends) {
    out += " " + b->name() + " |";
    rule += " --- |";
  }
  out += "\n" + rule + "\n";
  auto cell = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  for (size_t i = 0; i < numNodeKinds(); ++i) {
    const NodeKind k = static_cast<NodeKind>(i);
    if (k == NodeKind::Placeholder || k == NodeKind::Constant)
      continue;
    const bool onnx = onnxOps.count(nodeKindName(k)) != 0;
    std::string row = std::string("| ") + nodeKindName(k) + " | " + (onnx ? "yes" : "-") + " | " +
                      cell(traitNames(k)) + " | ";
    row +=
        int8.count(k) ? (hasTrait(k, OpTrait::KeepsQuantization) ? "codes" : "requantized") : "-";
    row += " |";
    for (const auto& b : backends)
      row += " " + cell(b->kindSupport(k)) + " |";
    out += row + "\n";
  }
#ifdef EMBER_DRIVER_HAVE_ONNX
  out += "\nThe ONNX operators the importer takes (" + std::to_string(ops.size()) + "):";
  for (size_t i = 0; i < ops.size(); ++i)
    out += std::string(i ? ", `" : " `") + ops[i] + "`";
  out += ".\n";
#endif
  return out;
}

std::string withSupportTable(const std::string& doc, const std::string& table,
                             const std::string& docPath) {
  const size_t b = doc.find(kSupportTableBegin);
  const size_t e = doc.find(kSupportTableEnd);
  if (b == std::string::npos || e == std::string::npos || e < b)
    throw Error(docPath, "the generated operator table's markers are missing");
  const size_t start = b + std::string(kSupportTableBegin).size();
  return doc.substr(0, start) + table + doc.substr(e);
}

} // namespace ember::driver
