// Typed views of the neural-network kinds' attributes (other than windows and Gemm),
// with ONNX's defaults.
#include "ember/graph/attrs/NNAttrs.h"

namespace ember {

NormAttrs normOf(const Attrs& a) {
  NormAttrs r;
  r.epsilon = a.getFloat("epsilon", 1e-5);
  r.axis = a.getInt("axis", -1);
  r.stashType = a.getInt("stash_type", 1);
  return r;
}

LrnAttrs lrnOf(const Attrs& a) {
  LrnAttrs r;
  r.alpha = a.getFloat("alpha", 1e-4);
  r.beta = a.getFloat("beta", 0.75);
  r.bias = a.getFloat("bias", 1.0);
  r.size = a.getInt("size", 0);
  return r;
}

SoftmaxAttrs softmaxOf(const Attrs& a) {
  return {a.getInt("axis", -1)};
}

EinsumAttrs einsumOf(const Attrs& a) {
  return {a.getString("equation", "")};
}

NllLossAttrs nllLossOf(const Attrs& a) {
  NllLossAttrs r;
  r.reduction = a.getString("reduction", "mean");
  if (a.has("ignore_index"))
    r.ignoreIndex = a.getInt("ignore_index");
  return r;
}

} // namespace ember
