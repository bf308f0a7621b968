// Every ONNX backend node test Ember imports, compiled to the low-level IR (both
// schedules, default IR passes) and run on the LIR interpreter: outputs must be
// bit-identical to the graph interpreter's on the same imported function.
#include "LirTestUtil.h"
#include "OnnxNodeCases.h"

#include "ember/importer/OnnxImporter.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace ember {
namespace {

namespace fs = std::filesystem;
using namespace lirtest;
using namespace nodecases;

TEST(LirOnNodeTests, BitIdenticalToTheGraphInterpreter) {
  if (!fs::exists(dataDir()))
    GTEST_SKIP() << "no ONNX node tests at " << dataDir() << " (package libonnx-testdata)";
  const std::vector<fs::path> cases = listCases();
  size_t checked = 0, views = 0, inPlace = 0;
  for (const fs::path& dir : cases) {
    std::unique_ptr<Module> m;
    TensorMap in;
    if (!loadCase(dir, &m, &in))
      continue;
    const ember::Function& g = *m->functions().front();
    TensorMap ref;
    try {
      ref = Interpreter(g).run(in);
    } catch (const Error&) {
      continue; // a case the interpreter itself rejects
    }
    for (bool greedy : {false, true}) {
      lir::LirOptions opts;
      opts.minimizeMemorySchedule = greedy;
      std::unique_ptr<lir::Function> f;
      try {
        f = lir::compileToLir(g, opts);
      } catch (const Error& e) {
        ADD_FAILURE() << dir.filename() << ": " << e.what();
        continue;
      }
      views += f->count(lir::ValueKind::View);
      for (const auto& i : f->instructions())
        if (i->valueKind() == lir::ValueKind::Compute)
          for (size_t o = 0; o < i->numResults(); ++o)
            for (size_t k = i->numResults(); k < i->operands().size(); ++k)
              inPlace += i->operand(k).value && lir::locate(i->operand(o).value).root ==
                                                    lir::locate(i->operand(k).value).root;
      const std::string diff = bitDifference(lir::LirInterpreter(*f).run(in), ref);
      EXPECT_EQ(diff, "") << dir.filename() << (greedy ? " (greedy)" : " (topological)");
    }
    ++checked;
  }
  std::cout << "[lir node tests] " << checked << " cases bit-identical on both schedules; " << views
            << " views, " << inPlace << " in-place operand pairs\n";
  EXPECT_GT(checked, 400u);
}

} // namespace
} // namespace ember
