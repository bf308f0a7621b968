// Interpreter kernels of the data-movement node kinds. Most of them only move
// elements, so they work on bytes (any element kind) through one strided copy:
// Transpose, Slice, Expand, Tile, DepthToSpace and SpaceToDepth are each a choice of
// output shape and source strides. Resize lives in ResizeKernels.cpp.
#include "Broadcast.h"

#include "ember/graph/AttrViews.h"
#include "ember/interpreter/Kernels.h"

#include <cstring>

namespace ember {

void registerResizeKernels(); // ResizeKernels.cpp

namespace {

using namespace kernels;
using Ins = std::vector<const Tensor*>;
using Outs = std::vector<Tensor>;

/// out[o] = in[base + sum index[d] * srcStrides[d]] (strides in elements), over the
/// shape `walkDims`, whose element count equals out's.
void stridedCopy(const Tensor& in, Tensor& out, const Shape& walkDims,
                 const std::vector<int64_t>& srcStrides, int64_t base = 0) {
  const size_t es = elemSize(in.kind());
  const uint8_t* src = in.raw();
  uint8_t* dst = out.raw();
  forEachStrided<1>(walkDims, {srcStrides}, {base},
                    [&](int64_t o, const std::array<int64_t, 1>& i) {
                      std::memcpy(dst + size_t(o) * es, src + size_t(i[0]) * es, es);
                    });
}

/// Copies `in` viewed with shape `view` and permuted by `perm` into out.
void permutedCopy(const Tensor& in, Tensor& out, const Shape& view,
                  const std::vector<size_t>& perm) {
  const std::vector<int64_t> s = stridesOf(view);
  Shape walk;
  std::vector<int64_t> strides;
  for (size_t p : perm) {
    walk.push_back(view[p]);
    strides.push_back(s[p]);
  }
  stridedCopy(in, out, walk, strides);
}

int64_t axisAttr(const Node& n, size_t rank) {
  int64_t axis = axisOf(n.attrs()).axis;
  return axis < 0 ? axis + int64_t(rank) : axis;
}

void reshapeKernel(const Node&, const Ins& in, Outs& out) {
  std::memcpy(out[0].raw(), in[0]->raw(), in[0]->sizeInBytes());
}

void transposeKernel(const Node& n, const Ins& in, Outs& out) {
  const Shape& d = in[0]->dims();
  std::vector<size_t> perm;
  if (const TransposeAttrs t = transposeOf(n.attrs()); t.hasPerm)
    for (int64_t p : t.perm)
      perm.push_back(size_t(p));
  else
    for (size_t i = d.size(); i-- > 0;)
      perm.push_back(i);
  permutedCopy(*in[0], out[0], d, perm);
}

void sliceKernel(const Node& n, const Ins& in, Outs& out) {
  const Shape& d = in[0]->dims();
  const SliceAttrs sl = sliceOf(n.attrs());
  const std::vector<int64_t> starts = sl.starts.value();
  const std::vector<int64_t> steps = sl.stepsOr(d.size());
  std::vector<int64_t> s = stridesOf(d), strides(d.size());
  int64_t base = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    base += starts[i] * s[i];
    strides[i] = steps[i] * s[i];
  }
  stridedCopy(*in[0], out[0], out[0].dims(), strides, base);
}

void expandKernel(const Node&, const Ins& in, Outs& out) {
  stridedCopy(*in[0], out[0], out[0].dims(), broadcastStrides(in[0]->dims(), out[0].dims()));
}

/// Tile: the output viewed as [r0, d0, r1, d1, ...] reads the input with stride 0 on
/// the repeat dimensions.
void tileKernel(const Node& n, const Ins& in, Outs& out) {
  const Shape& d = in[0]->dims();
  const std::vector<int64_t> rep = tileOf(n.attrs()).repeats.value();
  const std::vector<int64_t> s = stridesOf(d);
  Shape walk;
  std::vector<int64_t> strides;
  for (size_t i = 0; i < d.size(); ++i) {
    walk.insert(walk.end(), {rep[i], d[i]});
    strides.insert(strides.end(), {0, s[i]});
  }
  stridedCopy(*in[0], out[0], walk, strides);
}

void depthToSpaceKernel(const Node& n, const Ins& in, Outs& out) {
  const Shape& d = in[0]->dims();
  const BlockAttrs blk = blockOf(n.attrs());
  const int64_t b = blk.blockSize, c = d[1] / (b * b);
  if (blk.mode == "CRD")
    permutedCopy(*in[0], out[0], {d[0], c, b, b, d[2], d[3]}, {0, 1, 4, 2, 5, 3});
  else
    permutedCopy(*in[0], out[0], {d[0], b, b, c, d[2], d[3]}, {0, 3, 4, 1, 5, 2});
}

void spaceToDepthKernel(const Node& n, const Ins& in, Outs& out) {
  const Shape& d = in[0]->dims();
  const int64_t b = blockOf(n.attrs()).blockSize;
  permutedCopy(*in[0], out[0], {d[0], d[1], d[2] / b, b, d[3] / b, b}, {0, 3, 5, 1, 2, 4});
}

/// The blocks that Concat joins and Split cuts: for every outer index and part p,
/// calls f(p, wholeByteOffset, partByteOffset, bytes). `parts` are the parts' shapes.
template <typename F>
void forEachBlock(const Node& n, const Shape& whole, ElemKind kind,
                  const std::vector<const Shape*>& parts, F f) {
  const size_t axis = size_t(axisAttr(n, whole.size()));
  const size_t es = elemSize(kind);
  int64_t outer, extent, inner;
  splitAround(whole, axis, &outer, &extent, &inner);
  int64_t offset = 0; // along the axis, in elements of one row
  for (size_t p = 0; p < parts.size(); ++p) {
    const int64_t pe = (*parts[p])[axis];
    const size_t rowBytes = size_t(pe * inner) * es;
    for (int64_t o = 0; o < outer; ++o)
      f(p, size_t(o * extent * inner + offset) * es, size_t(o) * rowBytes, rowBytes);
    offset += pe * inner;
  }
}

void concatKernel(const Node& n, const Ins& in, Outs& out) {
  std::vector<const Shape*> parts;
  for (const Tensor* t : in)
    parts.push_back(&t->dims());
  forEachBlock(n, out[0].dims(), out[0].kind(), parts,
               [&](size_t p, size_t w, size_t po, size_t bytes) {
                 if (bytes)
                   std::memcpy(out[0].raw() + w, in[p]->raw() + po, bytes);
               });
}

void splitKernel(const Node& n, const Ins& in, Outs& out) {
  std::vector<const Shape*> parts;
  for (const Tensor& t : out)
    parts.push_back(&t.dims());
  forEachBlock(n, in[0]->dims(), in[0]->kind(), parts,
               [&](size_t p, size_t w, size_t po, size_t bytes) {
                 if (bytes)
                   std::memcpy(out[p].raw() + po, in[0]->raw() + w, bytes);
               });
}

void gatherKernel(const Node& n, const Ins& in, Outs& out) {
  const Tensor &data = *in[0], &idx = *in[1];
  const size_t es = elemSize(data.kind());
  int64_t outer, extent, inner;
  splitAround(data.dims(), size_t(axisAttr(n, data.dims().size())), &outer, &extent, &inner);
  const int64_t m = idx.size();
  std::vector<int64_t> rows(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j)
    rows[size_t(j)] = indexAt(idx, j, extent, "an index");
  const size_t rowBytes = size_t(inner) * es;
  if (rowBytes == 0 || m == 0)
    return;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < m; ++j)
      std::memcpy(out[0].raw() + size_t(o * m + j) * rowBytes,
                  data.raw() + size_t(o * extent + rows[size_t(j)]) * rowBytes, rowBytes);
}

void gatherElementsKernel(const Node& n, const Ins& in, Outs& out) {
  const Tensor &data = *in[0], &idx = *in[1];
  const size_t es = elemSize(data.kind());
  const size_t axis = size_t(axisAttr(n, data.dims().size()));
  const std::vector<int64_t> s = stridesOf(data.dims());
  std::vector<int64_t> mi;
  for (int64_t o = 0, e = idx.size(); o < e; ++o) {
    unravel(o, idx.dims(), mi);
    mi[axis] = indexAt(idx, o, data.dims()[axis], "an index");
    int64_t src = 0;
    for (size_t k = 0; k < mi.size(); ++k)
      src += mi[k] * s[k];
    std::memcpy(out[0].raw() + size_t(o) * es, data.raw() + size_t(src) * es, es);
  }
}

/// Source coordinate of padded coordinate c in a dimension of extent n (-1 = pad value).
int64_t padSource(int64_t c, int64_t n, int mode) {
  if (c >= 0 && c < n)
    return c;
  if (mode == 0)
    return -1;
  if (mode == 2) // edge
    return c < 0 ? 0 : n - 1;
  // reflect (without repeating the edge); pads < n so one reflection suffices.
  if (n == 1)
    return 0;
  const int64_t period = 2 * (n - 1);
  int64_t m = ((c % period) + period) % period;
  return m < n ? m : period - m;
}

void padKernel(const Node& n, const Ins& in, Outs& out) {
  const Shape& d = in[0]->dims();
  const PadAttrs pa = padOf(n.attrs());
  const std::vector<int64_t> pads = pa.pads.value();
  const std::string& modeName = pa.mode;
  const int mode = modeName == "reflect" ? 1 : (modeName == "edge" ? 2 : 0);
  // The pad value: the optional run-time operand, else attribute value.
  Tensor value(in[0]->kind(), {});
  value.setFromDouble(0, pa.value);
  if (in.size() > 1 && in[1])
    std::memcpy(value.raw(), in[1]->raw(), value.sizeInBytes());
  const size_t es = elemSize(in[0]->kind());
  const std::vector<int64_t> s = stridesOf(d);
  std::vector<int64_t> mi;
  for (int64_t o = 0, e = out[0].size(); o < e; ++o) {
    unravel(o, out[0].dims(), mi);
    int64_t src = 0;
    for (size_t k = 0; k < d.size() && src >= 0; ++k) {
      const int64_t c = padSource(mi[k] - pads[k], d[k], mode);
      src = c < 0 ? -1 : src + c * s[k];
    }
    std::memcpy(out[0].raw() + size_t(o) * es,
                src < 0 ? value.raw() : in[0]->raw() + size_t(src) * es, es);
  }
}

void cumSumKernel(const Node& n, const Ins& in, Outs& out) {
  const CumSumAttrs cs = cumSumOf(n.attrs());
  const bool exclusive = cs.exclusive, reverse = cs.reverse;
  int64_t outer, extent, inner;
  splitAround(in[0]->dims(), size_t(axisAttr(n, in[0]->dims().size())), &outer, &extent, &inner);
  dispatchKind<kWideNumeric>(in[0]->kind(), "CumSum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0]->data<T>();
    T* y = out[0].data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        T acc = 0;
        for (int64_t k = 0; k < extent; ++k) {
          const int64_t kk = reverse ? extent - 1 - k : k;
          const int64_t at = (o * extent + kk) * inner + i;
          if (exclusive) {
            y[at] = acc;
            acc = static_cast<T>(acc + x[at]);
          } else {
            acc = static_cast<T>(acc + x[at]);
            y[at] = acc;
          }
        }
      }
  });
}

void triluKernel(const Node& n, const Ins& in, Outs& out) {
  const TriluAttrs tr = triluOf(n.attrs());
  const bool upper = tr.upper;
  const int64_t k = tr.k;
  const Shape& d = in[0]->dims();
  const int64_t rows = d[d.size() - 2], cols = d.back();
  const size_t es = elemSize(in[0]->kind());
  std::memcpy(out[0].raw(), in[0]->raw(), in[0]->sizeInBytes());
  for (int64_t b = 0, nb = rows * cols != 0 ? in[0]->size() / (rows * cols) : 0; b < nb; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        if (upper ? j - i < k : j - i > k)
          std::memset(out[0].raw() + size_t((b * rows + i) * cols + j) * es, 0, es);
}

} // namespace

void registerDataMovementKernels() {
  using K = NodeKind;
  registerKernel(K::Reshape, reshapeKernel);
  registerKernel(K::Transpose, transposeKernel);
  registerKernel(K::Slice, sliceKernel);
  registerKernel(K::Expand, expandKernel);
  registerKernel(K::Tile, tileKernel);
  registerKernel(K::DepthToSpace, depthToSpaceKernel);
  registerKernel(K::SpaceToDepth, spaceToDepthKernel);
  registerKernel(K::Concat, concatKernel);
  registerKernel(K::Split, splitKernel);
  registerKernel(K::Gather, gatherKernel);
  registerKernel(K::GatherElements, gatherElementsKernel);
  registerKernel(K::Pad, padKernel);
  registerKernel(K::CumSum, cumSumKernel);
  registerKernel(K::Trilu, triluKernel);
  registerResizeKernels();
}

} // namespace ember
