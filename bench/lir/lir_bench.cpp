// Low-level IR memory figures per zoo model (docs/compiler/lir.md): every
// model folder with a model.onnx under --models is imported, optimised with the default
// graph pipeline (with --int8: quantized, calibrated on the folder's input.npy),
// scheduled, lowered to the IR, optimised and planned. Prints figures; never fails on time.
//   lir_bench [--models DIR] [--alignment N] [--fit first|best] [--int8] [--dump MODEL]
// --dump also prints MODEL's low-level IR after the passes and its memory plan.
#include "ember/importer/OnnxImporter.h"
#include "ember/lir/IRGen.h"
#include "ember/lir/Stats.h"
#include "ember/passes/Pass.h"
#include "ember/passes/Passes.h"
#include "ember/quantization/Quantize.h"
#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

/// The function's IR after the passes, then every buffer's offset, size and live range.
void printIR(const ember::Function& f, const ember::lir::MemoryPlanOptions& opts) {
  const std::unique_ptr<ember::lir::Function> ir = ember::lir::compileToLir(f);
  std::cout << ember::lir::dump(*ir);
  const ember::lir::FunctionMemoryPlan plan = ember::lir::planMemory(*ir, opts);
  const std::vector<ember::lir::BufferInterval> live = ember::lir::bufferIntervals(*ir);
  std::cout << "memory plan: " << plan.plan.arenaBytes << " bytes\n";
  for (size_t i = 0; i < plan.allocs.size(); ++i)
    std::cout << "  %" << plan.allocs[i]->name() << " @" << plan.plan.offsets[i] << " +"
              << live[i].size << " live [" << live[i].begin << ", " << live[i].end << "]\n";
}

} // namespace

int main(int argc, char** argv) {
  std::string models = std::getenv("EMBER_MODELS_DIR") ? std::getenv("EMBER_MODELS_DIR") : "models";
  ember::lir::MemoryPlanOptions opts;
  bool int8 = false;
  std::string dump;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--models" && i + 1 < argc)
      models = argv[++i];
    else if (a == "--alignment" && i + 1 < argc)
      opts.alignment = std::strtoul(argv[++i], nullptr, 10);
    else if (a == "--int8")
      int8 = true;
    else if (a == "--dump" && i + 1 < argc)
      dump = argv[++i];
    else if (a == "--fit" && i + 1 < argc &&
             (!std::strcmp(argv[i + 1], "first") || !std::strcmp(argv[i + 1], "best")))
      opts.fit = std::strcmp(argv[++i], "first") == 0 ? ember::lir::MemoryPlanOptions::Fit::First
                                                      : ember::lir::MemoryPlanOptions::Fit::Best;
    else {
      std::cerr << "usage: lir_bench [--models DIR] [--alignment N] [--fit first|best] [--int8] "
                   "[--dump MODEL]\n";
      return 2;
    }
  }
  if (!fs::is_directory(models)) {
    std::cerr << "lir_bench: no model folder " << models << " (run `ninja models`)\n";
    return 1;
  }
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(models))
    if (fs::exists(e.path() / "model.onnx") &&
        (dump.empty() || e.path().filename().string() == dump))
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  std::cout << "alignment " << opts.alignment << ", "
            << (opts.fit == ember::lir::MemoryPlanOptions::Fit::Best ? "best" : "first") << " fit; "
            << (int8 ? "int8 (quantized, calibrated on input.npy)" : "float32") << "; KiB\n";
  ember::lir::printMemoryStatsHeader(std::cout);
  int failures = 0;
  for (const fs::path& d : dirs) {
    try {
      std::unique_ptr<ember::Module> m = ember::importOnnxFile((d / "model.onnx").string());
      ember::Function* f = m->functions().front().get();
      if (int8) {
        if (!fs::exists(d / "input.npy") || f->inputs().size() != 1)
          continue; // nothing to calibrate on
        const ember::TensorMap in = {
            {f->inputs()[0]->name(), ember::readNpy((d / "input.npy").string())}};
        f = ember::quant::quantizeModel(*f, {in});
      } else {
        ember::runPipeline(*f, ember::defaultPipeline());
      }
      const auto t0 = std::chrono::steady_clock::now();
      const ember::lir::MemoryStats s = ember::lir::measureMemory(*f, opts);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      ember::lir::printMemoryStatsRow(std::cout, d.filename().string(), s);
      if (!dump.empty())
        printIR(*f, opts);
      std::cerr << "  (" << d.filename().string() << ": schedules, IR and plan in " << ms
                << " ms)\n";
    } catch (const ember::Error& e) {
      std::cout << d.filename().string() << ": " << e.what() << "\n";
      ++failures;
    }
  }
  return failures ? 1 : 0;
}
