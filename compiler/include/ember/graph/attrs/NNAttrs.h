#pragma once
/// \file
/// Typed views of the attributes of the neural-network kinds other than windows and
/// Gemm (those are in AttrViews.h): normalisations, LRN, the softmax family, Einsum and
/// NegativeLogLikelihoodLoss, with ONNX's defaults.

#include "ember/graph/Node.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ember {

/// BatchNormalization, InstanceNormalization and LayerNormalization: epsilon; for
/// LayerNormalization also the first normalised axis (default -1) and stash_type.
struct NormAttrs {
  double epsilon = 1e-5;
  int64_t axis = -1;
  int64_t stashType = 1;
};
NormAttrs normOf(const Attrs& a);

/// LRN. `size` is required: 0 when absent, which type inference rejects.
struct LrnAttrs {
  double alpha = 1e-4, beta = 0.75, bias = 1.0;
  int64_t size = 0;
};
LrnAttrs lrnOf(const Attrs& a);

/// Softmax, LogSoftmax and Hardmax (opset 13): the axis, default -1.
struct SoftmaxAttrs {
  int64_t axis = -1;
};
SoftmaxAttrs softmaxOf(const Attrs& a);

/// Einsum: the equation ("" when absent).
struct EinsumAttrs {
  std::string equation;
};
EinsumAttrs einsumOf(const Attrs& a);

/// NegativeLogLikelihoodLoss: reduction (default "mean") and the optional ignore_index.
struct NllLossAttrs {
  std::string reduction = "mean";
  std::optional<int64_t> ignoreIndex;
};
NllLossAttrs nllLossOf(const Attrs& a);

} // namespace ember
