// Typed views of window and Gemm attributes, with ONNX's defaults: the one place that
// reads them by name (type inference validates through the same reader).
#include "ember/graph/AttrViews.h"

#include "ember/support/Error.h"

#include <string>

namespace ember {

namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

/// Reads an int list attribute of `count` values (or `def` repeated when absent) whose
/// values are all >= `min`.
std::vector<int64_t> readList(const Attrs& a, const char* name, size_t count, int64_t def,
                              int64_t min) {
  std::vector<int64_t> v = a.getInts(name, std::vector<int64_t>(count, def));
  if (v.size() != count)
    throw Error(std::string("attribute ") + name + " has " + str(int64_t(v.size())) +
                " values, expected " + str(int64_t(count)));
  for (int64_t x : v)
    if (x < min)
      throw Error(std::string("attribute ") + name + " has value " + str(x) +
                  ", must be >= " + str(min));
  return v;
}

} // namespace

WindowAttrs windowOf(const Attrs& a, size_t nsp, const Shape* filterSpatial) {
  WindowAttrs w;
  if (filterSpatial) {
    w.kernel = readList(a, "kernel_shape", nsp, 1, 1);
    if (!a.has("kernel_shape"))
      w.kernel = *filterSpatial;
    else if (w.kernel != *filterSpatial)
      throw Error("attribute kernel_shape " + shapeToString(w.kernel) +
                  " disagrees with the filter's spatial shape " + shapeToString(*filterSpatial));
  } else {
    if (!a.has("kernel_shape"))
      throw Error("attribute kernel_shape is required");
    w.kernel = readList(a, "kernel_shape", nsp, 1, 1);
  }
  w.strides = readList(a, "strides", nsp, 1, 1);
  w.pads = readList(a, "pads", 2 * nsp, 0, 0);
  w.dilations = readList(a, "dilations", nsp, 1, 1);
  w.outputPadding = readList(a, "output_padding", nsp, 0, 0);
  w.group = groupOf(a);
  w.ceilMode = a.getInt("ceil_mode", 0) != 0;
  w.countIncludePad = a.getInt("count_include_pad", 0) != 0;
  w.autoPad = a.getString("auto_pad", "NOTSET");
  return w;
}

int64_t groupOf(const Attrs& a) {
  return a.getInt("group", 1);
}

GemmAttrs gemmOf(const Attrs& a) {
  GemmAttrs g;
  g.transA = a.getInt("transA", 0) != 0;
  g.transB = a.getInt("transB", 0) != 0;
  g.alpha = a.getFloat("alpha", 1.0);
  g.beta = a.getFloat("beta", 1.0);
  g.anyWritten = a.has("transA") || a.has("transB") || a.has("alpha") || a.has("beta");
  return g;
}

} // namespace ember
