// The im2col panel gather shared by the float and int8 packed-GEMM convolutions
// (libjit/Conv.cpp, libjit/Int8.cpp).
#pragma once

#include "Libjit.h"

namespace libjit {

/// The gather plan of one panel: NR positions split into runs of one output row.
struct Segment {
  int64_t col; ///< first column of the panel
  int64_t len; ///< positions in this run
  int64_t ih0; ///< input row of kernel row 0
  int64_t iw0; ///< input column of kernel column 0 at the first position
};

struct ConvGeom {
  int64_t C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, group;
};

/// Gathers columns [p0, p0 + NR) of X_col for the group's cg channels into panel[k][NR];
/// `pad` fills the padding and the columns past the last position.
template <int NR, typename T>
inline void packPanel(const T* x, const ConvGeom& g, int64_t cg, int64_t p0, T pad, T* panel) {
  const int64_t P = g.OH * g.OW;
  Segment seg[NR];
  int nseg = 0;
  for (int64_t j = 0; j < NR && p0 + j < P;) {
    const int64_t p = p0 + j, oh = p / g.OW, ow = p % g.OW;
    int64_t len = g.OW - ow;
    if (len > NR - j)
      len = NR - j;
    if (len > P - p)
      len = P - p;
    seg[nseg++] = Segment{j, len, oh * g.sh - g.ph, ow * g.sw - g.pw};
    j += len;
  }
  const int64_t filled = nseg ? seg[nseg - 1].col + seg[nseg - 1].len : 0;
  T* row = panel;
  for (int64_t c = 0; c < cg; ++c) {
    const T* xc = x + c * g.H * g.W;
    for (int64_t kh = 0; kh < g.KH; ++kh)
      for (int64_t kw = 0; kw < g.KW; ++kw, row += NR) {
        for (int s = 0; s < nseg; ++s) {
          const Segment& sg = seg[s];
          T* dst = row + sg.col;
          const int64_t ih = sg.ih0 + kh * g.dh;
          if (ih < 0 || ih >= g.H) {
            for (int64_t j = 0; j < sg.len; ++j)
              dst[j] = pad;
            continue;
          }
          const T* src = xc + ih * g.W;
          const int64_t iw0 = sg.iw0 + kw * g.dw;
          if (g.sw == 1 && iw0 >= 0 && iw0 + sg.len <= g.W) {
            for (int64_t j = 0; j < sg.len; ++j)
              dst[j] = src[iw0 + j];
            continue;
          }
          for (int64_t j = 0; j < sg.len; ++j) {
            const int64_t iw = iw0 + j * g.sw;
            dst[j] = iw >= 0 && iw < g.W ? src[iw] : pad;
          }
        }
        for (int64_t j = filled; j < NR; ++j)
          row[j] = pad;
      }
  }
}

} // namespace libjit
