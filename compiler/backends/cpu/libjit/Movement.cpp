// Data movement on raw element codes (any element kind: 1, 4 or 8 bytes): a strided
// copy over six coalesced dimensions (Transpose, Slice, Concat, Expand, Pad's interior,
// copies into outputs), a fill (Pad's border) and Gather along one axis.
#include "Libjit.h"

namespace {

template <typename T>
void stridedCopy(const T* x, T* y, const int64_t* d, const int64_t* xs, const int64_t* ys,
                 int64_t tid, int64_t nth) {
  const int64_t rows = d[0] * d[1] * d[2] * d[3] * d[4];
  int64_t begin, end;
  libjit::threadRange(rows, tid, nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    const libjit::Row5 row = libjit::decodeRow(r, d);
    const T* xr = x + row.offset(xs);
    T* yr = y + row.offset(ys);
    const int64_t sx = xs[5], sy = ys[5];
    if (sx == 1 && sy == 1)
      memcpy(yr, xr, sizeof(T) * static_cast<size_t>(d[5]));
    else
      for (int64_t i = 0; i < d[5]; ++i)
        yr[i * sy] = xr[i * sx];
  }
}

} // namespace

/// y[sum i_k ys[k]] = x[sum i_k xs[k]] over the index box d[0..5]; strides in elements
/// of `elemBytes` (1, 4 or 8) bytes.
EMBER_KERNEL void ember_copy_strided(int32_t elemBytes, const void* x, void* y, const int64_t* d,
                                     const int64_t* xs, const int64_t* ys, int64_t tid,
                                     int64_t nth) {
  if (elemBytes == 1)
    stridedCopy(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), d, xs, ys, tid, nth);
  else if (elemBytes == 4)
    stridedCopy(static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y), d, xs, ys, tid, nth);
  else
    stridedCopy(static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y), d, xs, ys, tid, nth);
}

/// Fills n elements of `elemBytes` bytes with the bit pattern `value`.
EMBER_KERNEL void ember_fill(int32_t elemBytes, void* y, int64_t n, uint64_t value, int64_t tid,
                             int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(n, tid, nth, &begin, &end);
  if (elemBytes == 1)
    for (int64_t i = begin; i < end; ++i)
      static_cast<uint8_t*>(y)[i] = static_cast<uint8_t>(value);
  else if (elemBytes == 4)
    for (int64_t i = begin; i < end; ++i)
      static_cast<uint32_t*>(y)[i] = static_cast<uint32_t>(value);
  else
    for (int64_t i = begin; i < end; ++i)
      static_cast<uint64_t*>(y)[i] = value;
}

/// Gather along an axis: x viewed as [outer, axisLen, inner], indices (int64 when
/// idxBytes is 8, else int32; negative ones count from the end) as [count], y as
/// [outer, count, inner]. An index out of range writes zeros and sets *status to 1, which
/// the host turns into an error naming the node.
EMBER_KERNEL void ember_gather(int32_t elemBytes, const void* x, const void* idx, int32_t idxBytes,
                               void* y, int64_t outer, int64_t axisLen, int64_t inner,
                               int64_t count, int32_t* status, int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(outer * count, tid, nth, &begin, &end);
  const size_t row = static_cast<size_t>(inner * elemBytes);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t o = r / count, c = r % count;
    int64_t i =
        idxBytes == 8 ? static_cast<const int64_t*>(idx)[c] : static_cast<const int32_t*>(idx)[c];
    if (i < 0)
      i += axisLen;
    uint8_t* dst = static_cast<uint8_t*>(y) + r * row;
    if (i < 0 || i >= axisLen) {
      memset(dst, 0, row);
      __atomic_store_n(status, 1, __ATOMIC_RELAXED);
    } else {
      memcpy(dst, static_cast<const uint8_t*>(x) + (o * axisLen + i) * row, row);
    }
  }
}
