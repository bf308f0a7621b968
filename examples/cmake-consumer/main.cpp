// npu_check MODEL.onnx [DESCRIPTION.json]: compiles an ONNX model for the Ember NPU with
// the installed libember (import, quantize, partition, compile), runs it on the
// cycle-accurate simulator through the runtime, runs the same int8 function on the
// interpreter, and says whether the two agree bit for bit. Exit status 0 when they do.
#include "ember/backend/Backend.h"
#include "ember/driver/Driver.h"
#include "ember/session/Devices.h"
#include "ember/session/PackageSession.h"
#include "ember/support/Error.h"
#include "ember/support/Version.h"

#include <cstdio>
#include <cstring>
#include <random>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: npu_check MODEL.onnx [DESCRIPTION.json]\n");
    return 2;
  }
  try {
    using namespace ember;
    const isa::IsaDescription isa =
        isa::IsaDescription::loadFile(argc > 2 ? argv[2] : EMBER_DEFAULT_ISA);
    driver::QuantizeRequest q;
    q.calibrate = "random:4";
    const driver::CompiledModel m = driver::compileModel(argv[1], isa, q, {});
    std::printf("Ember %s, %s: %s\n", versionString(), isa.name().c_str(),
                partition::placementSummaryLine(m.plan).c_str());

    TensorMap inputs;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    for (const Node* ph : m.quantized->inputs()) {
      Tensor t(ElemKind::Float32, ph->resultType().dims);
      for (int64_t i = 0; i < t.size(); ++i)
        t.data<float>()[i] = d(rng);
      inputs.emplace(ph->name(), std::move(t));
    }
    session::PlanSession npu(m.plan, isa, "sim");
    const TensorMap got = npu.run(inputs);
    const TensorMap want = createBackend("interp")->compile(*m.quantized)->run(inputs);
    bool same = true;
    for (const auto& [name, t] : want)
      same = same && got.count(name) && got.at(name).sizeInBytes() == t.sizeInBytes() &&
             std::memcmp(got.at(name).raw(), t.raw(), t.sizeInBytes()) == 0;
    uint64_t cycles = 0;
    for (const auto& r : npu.reports())
      cycles += r.cycles;
    std::printf("NPU: %llu cycles; bit-exact with the int8 interpreter: %s\n",
                static_cast<unsigned long long>(cycles), same ? "yes" : "NO");
    return same ? 0 : 1;
  } catch (const ember::Error& e) {
    std::fprintf(stderr, "npu_check: %s\n", e.what());
    return 1;
  }
}
