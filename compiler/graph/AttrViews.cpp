// Typed views of window and Gemm attributes, with ONNX's defaults.
#include "ember/graph/AttrViews.h"

#include "ember/support/Error.h"

#include <string>

namespace ember {

WindowAttrs windowOf(const Attrs& a, size_t nsp, const Shape* filterSpatial) {
  WindowAttrs w;
  w.kernel = filterSpatial ? *filterSpatial : a.getInts("kernel_shape");
  w.strides = a.getInts("strides", std::vector<int64_t>(nsp, 1));
  w.pads = a.getInts("pads", std::vector<int64_t>(2 * nsp, 0));
  w.dilations = a.getInts("dilations", std::vector<int64_t>(nsp, 1));
  w.group = a.getInt("group", 1);
  if (w.kernel.size() != nsp || w.strides.size() != nsp || w.pads.size() != 2 * nsp ||
      w.dilations.size() != nsp)
    throw Error("window attributes do not match " + std::to_string(nsp) + " spatial dimension(s)");
  return w;
}

GemmAttrs gemmOf(const Attrs& a) {
  GemmAttrs g;
  g.transA = a.getInt("transA", 0) != 0;
  g.transB = a.getInt("transB", 0) != 0;
  g.alpha = a.getFloat("alpha", 1.0);
  g.beta = a.getFloat("beta", 1.0);
  return g;
}

} // namespace ember
