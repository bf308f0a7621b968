#pragma once
/// \file
/// The quantize pass: from a float function and a calibration profile to the quantized
/// form of docs/numerics.md section 5,
///   float Placeholder -> QuantizeLinear -> int8 nodes -> DequantizeLinear -> outputs.
///
/// The quantized function is a NEW function of the same Module (placeholders and float
/// constants are shared; int8 weights, int32 biases and LUT tables are new constants),
/// named `options.functionName` (default: the float function's name + "_int8"); the float
/// function is left unchanged, so both can run and be compared. Node names are the float
/// nodes' names made unique in the module (the Module's usual "__N" suffix).
///
/// Each node kind has one rule in a table (quantizeRules(), docs/compiler/quantization.md): compute
/// kinds (Conv, Gemm, MatMul with constant B, Add, Mul, pools, Relu/Clip, Concat, the LUT
/// activations) become int8 nodes whose parameters come from the profile; data movement
/// becomes int8 when its input already is, keeping the input's parameters. A node of
/// another kind, or one whose rule does not apply (a run-time weight, an unprofiled value,
/// a multiplier out of range), stays float between a DequantizeLinear and a
/// QuantizeLinear. Quantize/dequantize nodes are made only where a value crosses between
/// the two worlds, each at most once per value, so no DQ -> Q pair is ever made.
///
/// The float function is expected to have been through ember::defaultPipeline() (the
/// fused activations are honoured by the int8 kernels); the profile must have been taken
/// on that same function (keys are its node names).

#include "ember/graph/Graph.h"
#include "ember/quantization/Profile.h"

#include <set>
#include <string>
#include <vector>

namespace ember {
namespace quant {

/// How to quantize.
struct QuantizeOptions {
  /// How activation ranges are chosen from the profile.
  CalibrationMethod method = CalibrationMethod::MinMax;
  /// For CalibrationMethod::Percentile: the central percentage kept.
  double percentile = 99.99;
  /// Name of the new function ("" = float function's name + "_int8").
  std::string functionName;
  /// Names of float nodes to leave in float whatever their kind.
  std::set<std::string> keepFloat;
};

/// What quantize() produced.
struct QuantizeStats {
  size_t int8Nodes = 0;   ///< nodes computing on int8 values (Rescale included)
  size_t floatNodes = 0;  ///< nodes left in float
  size_t quantizes = 0;   ///< QuantizeLinear nodes inserted
  size_t dequantizes = 0; ///< DequantizeLinear nodes inserted
  size_t rescales = 0;    ///< Rescale nodes inserted (Concat inputs)
};

/// One row of the rule table: a node kind and what the quantizer makes of it.
struct QuantizeRuleInfo {
  NodeKind kind;
  std::string rule;
};
/// The rule table, one entry per kind the quantizer can express in int8.
std::vector<QuantizeRuleInfo> quantizeRules();

/// Quantizes `floatFn` with the ranges of `profile` (see the file comment). Returns the
/// new function (owned by floatFn's module), verified. `stats` (optional) receives counts.
Function* quantize(const Function& floatFn, const Profile& profile,
                   const QuantizeOptions& options = {}, QuantizeStats* stats = nullptr);

/// Convenience: runs ember::defaultPipeline() on `f` (in place), profiles it on
/// `calibration`, and quantizes it. `profileOut` (optional) receives the profile.
Function* quantizeModel(Function& f, const std::vector<TensorMap>& calibration,
                        const QuantizeOptions& options = {}, Profile* profileOut = nullptr,
                        QuantizeStats* stats = nullptr);

} // namespace quant
} // namespace ember
