// The pass registry, the default pipeline and the pipeline runner.
#include "ember/graph/Verifier.h"
#include "ember/graph/attrs/FusedActivation.h"
#include "ember/passes/Passes.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <map>
#include <mutex>

namespace ember {

namespace {

std::map<std::string, PassInfo>& table() {
  static std::map<std::string, PassInfo> t;
  return t;
}

/// The built-in passes: one row each (name, description, function).
void registerBuiltinPasses() {
  const PassInfo builtins[] = {
      {"dce", "remove nodes that reach no output, then unused constants", runDce},
      {"cse", "merge nodes with equal kind, inputs, attributes and types, and equal constants",
       runCse},
      {"constant-fold",
       "evaluate nodes whose inputs are all constants (interpreter kernels, size-capped)",
       runConstantFold},
      {"fold-batchnorm",
       "fold BatchNormalization and per-channel Mul/Add after a Conv into its weights/bias",
       runFoldBatchNorm},
      {"sink-transpose",
       "merge Transpose pairs, drop identity transposes, sink transposes below unary ops",
       runSinkTranspose},
      {"sink-permutation",
       "rewrite a region between Transpose P and P^-1 in the layout before P (MatMul by a "
       "constant -> 1x1 Conv, per-channel constants reshaped) and drop the transposes",
       runSinkPermutation},
      {"merge-reshape", "merge Reshape chains and drop reshapes to the same shape",
       runMergeReshape},
      {"fuse-silu-gelu", "x*Sigmoid(x) -> Silu; torch's erf GELU decomposition -> Gelu",
       runFuseSiluGelu},
      {"fuse-layernorm",
       "(x - mean) / Sqrt(mean of squares + eps) [* scale] [+ bias] -> LayerNormalization",
       runFuseLayerNorm},
      {"fuse-activation",
       "Relu/Clip after a single-use Conv, Gemm, MatMul or Add -> its 'activation' attribute",
       runFuseActivation},
      {"normalize-gemm",
       "Gemm -> A*B+C form: fold transB/alpha into constant B, beta into C, transA out",
       runNormalizeGemm},
      {"channel-shuffle-to-gather",
       "Reshape to [N, g, C/g, H, W] + Transpose(0, 2, 1, 3, 4) + Reshape back -> Gather of "
       "channels",
       runChannelShuffleToGather},
      {"collapse-batch-axes",
       "below a LayerNorm over the last axis of rank > 3: last-axis nodes of rank > 3 on "
       "[P, C] (MatMuls of two values on [P, M, K]) between Reshapes",
       runCollapseBatchAxes},
      {"moves-to-gather",
       "a Reshape/Transpose/Slice/Concat chain through rank > 3 that moves whole rows of a "
       "rank <= 3 value -> Reshape + Gather of rows + Reshape",
       runMovesToGather},
      {"spatial-mean-to-pool",
       "ReduceMean / ReduceSum over the spatial axes of an NCHW value -> GlobalAveragePool (x H*W "
       "for a sum) (+ Reshape)",
       runSpatialMeanToPool},
      {"matmul-bias-to-gemm",
       "MatMul by a constant [K, M] + a constant bias of M values -> Gemm (between Reshapes "
       "for rank > 2)",
       runMatMulBiasToGemm},
      {"flatten-gemm-to-conv",
       "Gemm on a flattened [N, C, H, W] map (H*W > 1) -> Conv with an H x W kernel + Reshape",
       runFlattenGemmToConv},
      {"convtranspose-to-depthtospace",
       "ConvTranspose of stride s (any kernel, pads, output padding; one group, dilation 1) -> "
       "Conv over its phase sub-kernels to s*s*Cout channels + DepthToSpace(s, DCR) (+ a crop "
       "Slice when an output length is not a multiple of s)",
       runConvTransposeToDepthToSpace},
      {"conv1d-to-conv2d",
       "Conv on [N, C, T] -> Conv on [N, C, 1, T] (1 x k kernel), the element-wise nodes "
       "between such convolutions carried into rank 4 with them",
       runConv1dToConv2d},
      {"split-to-slices", "Split -> one Slice per result", runSplitToSlices},
      {"patches-to-sequence",
       "Reshape [1, C, H, W] -> [1, C, H*W] + Transpose(0, 2, 1) (a ViT's patch embedding), and "
       "back, -> Reshapes around a channel-keeping Transpose(3, 1, 2, 0)",
       runPatchesToSequence},
      {"sink-token-concat",
       "a Concat of [B, T, C] tokens with a constant part (a ViT's class token) moved below the "
       "LayerNorms, element-wise ops and one-token Gathers that read it, each run per part",
       runSinkTokenConcat},
      {"lower", "rewrite high-level nodes the backend asks for (shouldLower) into primitives",
       runLower},
  };
  for (const PassInfo& p : builtins)
    table()[p.name] = p;
}

std::map<std::string, PassInfo>& registry() {
  static std::once_flag once;
  std::call_once(once, registerBuiltinPasses);
  return table();
}

std::string knownPasses() {
  std::string s;
  for (const auto& [name, _] : registry())
    s += (s.empty() ? "" : ", ") + name;
  return s;
}

} // namespace

void registerPass(PassInfo info) {
  if (info.name.empty() || !info.run)
    throw Error("pass registry", "a pass needs a name and a function");
  registry()[info.name] = std::move(info);
}

const PassInfo* findPass(const std::string& name) {
  auto& r = registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : &it->second;
}

std::vector<std::string> passNames() {
  std::vector<std::string> names;
  for (const auto& [name, _] : registry())
    names.push_back(name);
  return names;
}

std::vector<std::string> defaultPipeline() {
  // Clean up the import first, so that patterns are visible (sink-permutation before
  // matmul-bias-to-gemm, so that channels-last Linear layers become 1x1 convolutions rather
  // than Gemms between Reshapes; matmul-bias-to-gemm before
  // merge-reshape, which merges the Reshapes it adds with the model's); fold batch norms and fuse
  // SiLU/GELU before lowering (lowering may expand what they match); after lowering,
  // fold constants and the per-channel Mul/Add it produced after convolutions; fuse
  // activations last, on the final producers.
  return {"dce",
          "constant-fold",
          "cse",
          "conv1d-to-conv2d",
          "split-to-slices",
          "patches-to-sequence",
          "sink-permutation",
          "matmul-bias-to-gemm",
          "merge-reshape",
          "sink-transpose",
          "fold-batchnorm",
          "fuse-silu-gelu",
          "fuse-layernorm",
          "normalize-gemm",
          "flatten-gemm-to-conv",
          "convtranspose-to-depthtospace",
          "spatial-mean-to-pool",
          "channel-shuffle-to-gather",
          "collapse-batch-axes",
          "merge-reshape",
          "moves-to-gather",
          "merge-reshape",
          "sink-token-concat",
          "lower",
          "constant-fold",
          "fold-batchnorm",
          "cse",
          "fuse-activation",
          "dce"};
}

std::vector<PassStats> runPipeline(Function& f, const std::vector<std::string>& names) {
  return runPipeline(f, names, PassContext{});
}

namespace {

/// Every problem of `f`: the verifier's, and fused-activation attributes that break the
/// contract of FusedActivation.h.
std::vector<std::string> problemsOf(const Function& f) {
  std::vector<std::string> problems = verifyFunction(f);
  for (const auto& n : f.nodes()) {
    try {
      FusedActivation::of(*n);
    } catch (const Error& e) {
      problems.push_back(e.what());
    }
  }
  return problems;
}

void throwIfInvalid(const Function& f, const std::string& where, const std::string& what) {
  const std::vector<std::string> problems = problemsOf(f);
  if (problems.empty())
    return;
  std::string msg = what + ":";
  for (const std::string& pr : problems)
    msg += "\n  " + pr;
  throw Error(where, msg);
}

} // namespace

std::vector<PassStats> runPipeline(Function& f, const std::vector<std::string>& names,
                                   const PassContext& ctx) {
  std::vector<const PassInfo*> passes;
  for (const std::string& n : names) {
    const PassInfo* p = findPass(n);
    if (!p)
      throw Error("pipeline", "unknown pass '" + n + "' (known passes: " + knownPasses() + ")");
    passes.push_back(p);
  }
  // Passes assume a valid function: check it once before, then after every pass.
  if (ctx.verify)
    throwIfInvalid(f, "pipeline on function '" + f.name() + "'", "the input is invalid");
  std::vector<PassStats> stats;
  for (const PassInfo* p : passes) {
    PassStats s;
    s.pass = p->name;
    s.nodesBefore = f.numNodes();
    const auto t0 = std::chrono::steady_clock::now();
    s.changed = p->run(f, ctx);
    s.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    s.nodesAfter = f.numNodes();
    if (ctx.verify)
      throwIfInvalid(f, "pass '" + p->name + "'", "left an invalid function");
    stats.push_back(s);
  }
  return stats;
}

void printPipeline(std::ostream& os) {
  printPipeline(os, defaultPipeline());
}

void printPipeline(std::ostream& os, const std::vector<std::string>& pipeline) {
  size_t width = 0;
  for (const std::string& n : pipeline)
    width = std::max(width, n.size());
  for (size_t i = 0; i < pipeline.size(); ++i) {
    const PassInfo* p = findPass(pipeline[i]);
    os << std::setw(3) << i + 1 << ". " << std::left << std::setw(static_cast<int>(width))
       << pipeline[i] << std::right << "  " << (p ? p->description : "(unknown pass)") << "\n";
  }
}

void printPassStats(std::ostream& os, const std::vector<PassStats>& stats) {
  os << std::left << std::setw(18) << "pass" << std::right << std::setw(8) << "before"
     << std::setw(8) << "after" << std::setw(9) << "changed" << std::setw(10) << "ms"
     << "\n";
  for (const PassStats& s : stats)
    os << std::left << std::setw(18) << s.pass << std::right << std::setw(8) << s.nodesBefore
       << std::setw(8) << s.nodesAfter << std::setw(9) << s.changed << std::setw(10) << std::fixed
       << std::setprecision(2) << s.milliseconds << "\n";
  os.unsetf(std::ios::floatfield);
}

} // namespace ember
