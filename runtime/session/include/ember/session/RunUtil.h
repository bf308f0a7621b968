#pragma once
/// \file
/// Small helpers of ember-run that are worth testing on their own: output file names,
/// deterministic random inputs, tensor summaries and comparisons.

#include "ember/tensor/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ember::session {

/// The file stem of output `name`: every character outside [A-Za-z0-9_.-] becomes '_'
/// (an empty name becomes "_"), so that any ONNX output name is a safe file name.
std::string sanitizeOutputName(const std::string& name);

/// A deterministic random tensor of type `t` for input number `index` of a model,
/// from `seed` (same seed, index and type -> same bytes, on every platform):
/// float32 uniform in [-1, 1); integers uniform in [0, 16); bool uniform.
Tensor randomTensor(const Type& t, uint64_t seed, uint64_t index);

/// "float32[1, 1000]  min -3.1  max 4.2  mean 0.01  first [0.1, ...]".
std::string summarize(const Tensor& t);

/// The k largest elements of `t` (flattened, any kind) as (index, value), largest first.
std::vector<std::pair<int64_t, double>> topK(const Tensor& t, size_t k);

/// Max |a - b| over all elements (as doubles); +inf if kinds or shapes differ, and NaN
/// on either side counts as +inf unless both are NaN.
double maxAbsDiff(const Tensor& a, const Tensor& b);

/// Max |a| over all elements (0 for an empty tensor).
double maxAbs(const Tensor& a);

/// NaN has no int8 code: an int8 path refuses it rather than quantizing it to a number.
/// ember::Error naming the input's file (from `files`, the --input pairs) and the element.
void refuseNaN(const std::vector<std::pair<std::string, std::string>>& files,
               const std::map<std::string, Tensor>& inputs);

/// Median of `v` (0 for empty).
double median(std::vector<double> v);

} // namespace ember::session
