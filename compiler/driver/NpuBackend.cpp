// The executing NPU backend: the compiler's answers, a whole plan, a runner.
#include "ember/driver/NpuBackend.h"

#include "ember/driver/Partition.h"
#include "ember/npu/Compile.h"
#include "ember/support/Error.h"

namespace ember::partition {

namespace {

/// One function compiled for the NPU: its whole plan, run by a PlanExecutor.
class NpuFunction : public CompiledFunction {
public:
  NpuFunction(Plan plan, NpuRunner runner)
      : plan_(std::move(plan)), executor_(plan_, std::move(runner)) {}
  TensorMap run(const TensorMap& inputs) override { return executor_.run(inputs); }

private:
  Plan plan_; // before executor_, which keeps a reference to it
  PlanExecutor executor_;
};

class ExecutingNpuBackend : public Backend {
public:
  ExecutingNpuBackend(const isa::IsaDescription& isa, NpuRunner runner, npu::CompileOptions o)
      : isa_(isa), support_(npu::createNpuBackend(isa)), runner_(std::move(runner)),
        options_(std::move(o)) {}
  std::string name() const override { return "npu"; }
  bool supports(const Node& n) const override { return support_->supports(n); }
  std::string kindSupport(NodeKind k) const override { return support_->kindSupport(k); }
  std::unique_ptr<CompiledFunction> compile(const Function& f) const override {
    PartitionOptions o;
    o.fallback = Fallback::None;
    o.npu = options_;
    Plan plan = partition(f, isa_, o); // Unsupported lists every node the NPU cannot take
    if (!plan.whole || plan.segments.size() != 1)
      throw InternalError("backend 'npu', function '" + f.name() + "'",
                          "the plan without fallback is not one NPU segment");
    return std::make_unique<NpuFunction>(std::move(plan), runner_);
  }

private:
  isa::IsaDescription isa_;
  std::unique_ptr<Backend> support_;
  NpuRunner runner_;
  npu::CompileOptions options_;
};

} // namespace

std::unique_ptr<Backend> createNpuBackend(const isa::IsaDescription& isa, NpuRunner runner,
                                          npu::CompileOptions options) {
  return std::make_unique<ExecutingNpuBackend>(isa, std::move(runner), std::move(options));
}

} // namespace ember::partition
