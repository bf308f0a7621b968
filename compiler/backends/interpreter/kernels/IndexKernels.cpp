// Interpreter kernels of the index node kinds: TopK, OneHot, GatherND, ScatterElements
// and ScatterND (ONNX semantics, opset 16-18 reductions).
#include "Broadcast.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/interpreter/Kernels.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace ember {

namespace {

using namespace kernels;
using Ins = std::vector<const Tensor*>;
using Outs = std::vector<Tensor>;

/// TopK: per line along axis, the k largest (smallest) values; equal values keep the
/// lower index first, as ONNX specifies. `sorted` = 0 still returns them sorted.
void topKKernel(const Node& n, const Ins& in, Outs& out) {
  const Shape& dims = in[0]->dims();
  const TopKAttrs t = topKOf(n.attrs());
  const size_t axis = size_t(normalizeAxis(t.axis, dims.size()));
  const int64_t k = t.k;
  const bool largest = t.largest;
  int64_t outer, extent, inner;
  splitAround(dims, axis, &outer, &extent, &inner);
  int64_t* yi = out[1].data<int64_t>();
  dispatchKind<kWideNumeric>(in[0]->kind(), "TopK", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0]->data<T>();
    T* yv = out[0].data<T>();
    std::vector<int64_t> order(static_cast<size_t>(extent));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T* line = x + o * extent * inner + i;
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          return largest ? line[a * inner] > line[b * inner] : line[a * inner] < line[b * inner];
        });
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = (o * k + j) * inner + i;
          yi[at] = order[size_t(j)];
          yv[at] = line[order[size_t(j)] * inner];
        }
      }
  });
}

/// OneHot: values[1] where the index (negative counts from depth) equals the position
/// along axis, values[0] elsewhere; an index outside [-depth, depth) gives a line of
/// values[0].
void oneHotKernel(const Node& n, const Ins& in, Outs& out) {
  const OneHotAttrs oh = oneHotOf(n.attrs());
  const int64_t depth = oh.depth;
  const int64_t rank = int64_t(out[0].dims().size());
  int64_t axis = oh.axis;
  if (axis < 0)
    axis += rank;
  int64_t outer, extent, inner;
  splitAround(out[0].dims(), size_t(axis), &outer, &extent, &inner);
  const size_t es = elemSize(out[0].kind());
  const uint8_t* off = in[1]->raw();
  const uint8_t* on = in[1]->raw() + es;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t v = static_cast<int64_t>(in[0]->getAsDouble(o * inner + i));
      if (v < 0)
        v += depth;
      for (int64_t d = 0; d < extent; ++d)
        std::memcpy(out[0].raw() + size_t((o * extent + d) * inner + i) * es, d == v ? on : off,
                    es);
    }
}

/// The element offset in `data` of the first `m` coordinates read from index tuple
/// `t` of `idx` (tuples of length m), after `batchOffset`.
int64_t tupleOffset(const Tensor& idx, int64_t t, int64_t m, const Shape& d,
                    const std::vector<int64_t>& strides, size_t first) {
  int64_t off = 0;
  for (int64_t j = 0; j < m; ++j) {
    const size_t dim = first + size_t(j);
    off += indexAt(idx, t * m + j, d[dim], "an index") * strides[dim];
  }
  return off;
}

void gatherNDKernel(const Node& n, const Ins& in, Outs& out) {
  const Tensor &data = *in[0], &idx = *in[1];
  const Shape& d = data.dims();
  const int64_t b = gatherNDOf(n.attrs()).batchDims;
  const int64_t m = idx.dims().back();
  const std::vector<int64_t> strides = stridesOf(d);
  int64_t batches = 1;
  for (int64_t i = 0; i < b; ++i)
    batches *= d[size_t(i)];
  const int64_t tuples = m ? idx.size() / m : 0;
  const int64_t perBatch = batches ? tuples / batches : 0;
  const int64_t slice = b + m < int64_t(d.size()) ? strides[size_t(b + m - 1)] : 1;
  const int64_t batchStride = b > 0 ? strides[size_t(b - 1)] : 0;
  const size_t es = elemSize(data.kind());
  for (int64_t t = 0; t < tuples; ++t) {
    const int64_t src =
        (perBatch ? t / perBatch : 0) * batchStride + tupleOffset(idx, t, m, d, strides, size_t(b));
    std::memcpy(out[0].raw() + size_t(t * slice) * es, data.raw() + size_t(src) * es,
                size_t(slice) * es);
  }
}

/// A scatter's `reduction` attribute (type inference admits only these three).
enum class Reduction { None, Add, Mul };

Reduction reductionOf(const Node& n) {
  const std::string r = scatterOf(n.attrs()).reduction;
  return r == "add" ? Reduction::Add : r == "mul" ? Reduction::Mul : Reduction::None;
}

/// dst = reduction(dst, src) for one element.
template <typename T> void combine(T& dst, T src, Reduction r) {
  if (r == Reduction::Add)
    dst = static_cast<T>(dst + src);
  else if (r == Reduction::Mul)
    dst = static_cast<T>(dst * src);
  else
    dst = src;
}

void scatterElementsKernel(const Node& n, const Ins& in, Outs& out) {
  const Tensor &idx = *in[1], &upd = *in[2];
  const Shape& d = in[0]->dims();
  const size_t axis = size_t(normalizeAxis(scatterOf(n.attrs()).axis, d.size()));
  const Reduction reduction = reductionOf(n);
  const std::vector<int64_t> s = stridesOf(d);
  std::memcpy(out[0].raw(), in[0]->raw(), in[0]->sizeInBytes());
  dispatchKind<kWideAll>(in[0]->kind(), "ScatterElements", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* y = out[0].data<T>();
    const T* u = upd.data<T>();
    std::vector<int64_t> mi;
    for (int64_t o = 0, e = idx.size(); o < e; ++o) {
      unravel(o, idx.dims(), mi);
      mi[axis] = indexAt(idx, o, d[axis], "an index");
      int64_t dst = 0;
      for (size_t k = 0; k < mi.size(); ++k)
        dst += mi[k] * s[k];
      if constexpr (std::is_same_v<T, bool>)
        y[dst] = u[o];
      else
        combine(y[dst], u[o], reduction);
    }
  });
}

void scatterNDKernel(const Node& n, const Ins& in, Outs& out) {
  const Tensor &idx = *in[1], &upd = *in[2];
  const Shape& d = in[0]->dims();
  const int64_t m = idx.dims().back();
  const Reduction reduction = reductionOf(n);
  const std::vector<int64_t> strides = stridesOf(d);
  const int64_t slice = m < int64_t(d.size()) ? strides[size_t(m - 1)] : 1;
  std::memcpy(out[0].raw(), in[0]->raw(), in[0]->sizeInBytes());
  dispatchKind<kWideAll>(in[0]->kind(), "ScatterND", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* y = out[0].data<T>();
    const T* u = upd.data<T>();
    for (int64_t t = 0, tuples = idx.size() / m; t < tuples; ++t) {
      const int64_t dst = tupleOffset(idx, t, m, d, strides, 0);
      for (int64_t j = 0; j < slice; ++j) {
        if constexpr (std::is_same_v<T, bool>)
          y[dst + j] = u[t * slice + j];
        else
          combine(y[dst + j], u[t * slice + j], reduction);
      }
    }
  });
}

} // namespace

void registerIndexKernels() {
  registerKernel(NodeKind::TopK, topKKernel);
  registerKernel(NodeKind::OneHot, oneHotKernel);
  registerKernel(NodeKind::GatherND, gatherNDKernel);
  registerKernel(NodeKind::ScatterElements, scatterElementsKernel);
  registerKernel(NodeKind::ScatterND, scatterNDKernel);
}

} // namespace ember
