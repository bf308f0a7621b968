// The scratch layouts of the float convolution and max pool kernels (libjit/Conv.cpp,
// ConvDirect.cpp, Pool.cpp), shared with their code generators (codegen/ConvGen.cpp,
// PoolGen.cpp), which size the per-thread scratch: one definition, so the two sides
// cannot disagree on a size.
//
// Depthwise (ember_dwconv_f32): each input plane is copied, zero-padded, into its stride
// phases: phase (a, b) holds the input pixels (sh * i + a - ph, sw * j + b - pw) for
// i < Hq, j < Wq. Kernel tap (kh, kw) of output (oh, ow) then reads element (oh + kh * dh /
// sh, ow + kw * dw / sw) of phase ((kh * dh) % sh, (kw * dw) % sw): a stride-1 access, so
// a run of output positions flattened over the phase's width Wq is one contiguous load
// per tap.
#pragma once

#include <cstdint>

namespace ember::jitops {

/// Floats of one vector step of the depthwise kernel (positions computed at once).
constexpr int64_t kDwStep = 16;

/// Most kernel taps whose weights the depthwise kernels keep in registers.
constexpr int64_t kDwMaxTaps = 25;

/// Bytes of the 16-channel depthwise kernel's scratch per thread (a band's padded plane
/// and outputs), so that it stays in the L2 cache.
constexpr int64_t kDwC16BandBytes = int64_t(256) << 10;

/// The scratch of the 16-channel depthwise kernel (ember_dwconv_f32_c16, one thread) for
/// a band of R output rows: the padded plane of Hb x Wp pixel vectors the band's taps read
/// (column q holds input column q - pw, zeros outside the image), then its R x OW output
/// vectors.
struct DwC16Geom {
  int64_t R = 0, Hb = 0, Wp = 0, OW = 0;
  int64_t scratchFloats() const { return (Hb * Wp + R * OW) * 16; }
};

inline DwC16Geom dwC16Geom(int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                           int64_t dh, int64_t dw) {
  DwC16Geom g;
  g.Wp = (OW - 1) * sw + (KW - 1) * dw + 1;
  g.OW = OW;
  // The most output rows (at least one) whose plane and outputs fit kDwC16BandBytes.
  for (g.R = OH;; --g.R) {
    g.Hb = (g.R - 1) * sh + (KH - 1) * dh + 1; // input rows the band reads
    if (g.R == 1 || g.scratchFloats() * 4 <= kDwC16BandBytes)
      return g;
  }
}

/// The phase geometry of one depthwise convolution.
struct DwGeom {
  int64_t Hq = 0, Wq = 0; ///< Rows and columns of each phase.
  int64_t plane = 0;      ///< Floats of one phase (with the tail the last step reads).
  int64_t outLen = 0;     ///< Flattened output positions OH x Wq, rounded up to kDwStep.
  int64_t phases = 1;     ///< sh x sw.
  /// Floats of scratch one thread needs: every phase, then the OH x Wq output rows.
  int64_t scratchFloats() const { return plane * phases + outLen; }
};

inline DwGeom dwGeom(int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                     int64_t dh, int64_t dw) {
  DwGeom g;
  g.Hq = OH + (KH - 1) * dh / sh;
  g.Wq = OW + (KW - 1) * dw / sw;
  g.outLen = (OH * g.Wq + kDwStep - 1) / kDwStep * kDwStep;
  // The last step of a tap at the largest offset, (Hq - OH) * Wq + Wq - OW, reads up to
  // outLen + that offset: one spare row and one step past the phase.
  g.plane = (g.Hq + 1) * g.Wq + kDwStep;
  g.phases = sh * sw;
  return g;
}

/// Output positions of one slice of the direct convolution (ember_conv_f32_direct_mr7_nr32:
/// its MR; seven divides the 112, 56, 28, 14 and 7 columns of a CNN's planes) and its
/// output channels per weight block (NR); and the same for the narrow variant
/// (ember_conv_f32_direct_mr14_nr16), for groups of at most 16 output channels.
constexpr int64_t kDirectSlice = 7, kDirectBlock = 32;
constexpr int64_t kDirectNarrowSlice = 14, kDirectNarrowBlock = 16;

/// Bytes the zero-padded input band of one thread of the direct convolution may take, so
/// that it stays in the L2 cache beside a weight block.
constexpr int64_t kDirectBandBytes = int64_t(512) << 10;

/// The band geometry of the direct convolution: each thread copies the input rows of a
/// band of output rows, zero-padded, for the group's cg channels ([c][row][Wp]), and
/// computes every weight block's outputs in the band from it.
struct DirectGeom {
  int64_t Wp = 0; ///< Columns of a padded row: (OW - 1) * sw + (KW - 1) * dw + 1 (1x1: OW
                  ///< rounded up to kDirectNarrowSlice).
  /// A 1x1 convolution: the band holds its output rows' slices of positions
  /// ([tile][c][slice], copySlices in ConvDirect.cpp), not padded input rows.
  bool slices = false;
  int64_t bandRows = 0; ///< Most output rows of one band.
  int64_t inRows = 0;   ///< Padded input rows of a band of bandRows output rows.
  /// Floats past the band that the last slice of a row may read (its positions past OW
  /// are computed and dropped).
  int64_t slack = 0;
  /// Floats of scratch one thread needs: the band and its slack.
  int64_t scratchFloats(int64_t cg) const { return cg * inRows * Wp + slack; }
};

inline DirectGeom directGeom(int64_t cg, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                             int64_t sw, int64_t dh, int64_t dw) {
  DirectGeom g;
  // A 1x1 convolution's band is its output rows' slices of positions ([tile][c][slice]),
  // each row rounded up to the longer slice; no slack.
  g.slices = KH == 1 && KW == 1;
  const bool slices = g.slices;
  g.Wp = slices ? (OW + kDirectNarrowSlice - 1) / kDirectNarrowSlice * kDirectNarrowSlice
                : (OW - 1) * sw + (KW - 1) * dw + 1;
  const int64_t perRow = cg * (slices ? 1 : sh) * g.Wp * 4;
  int64_t rows = perRow > 0 ? kDirectBandBytes / perRow : OH;
  rows = rows < 1 ? 1 : (rows > OH ? OH : rows);
  g.bandRows = rows;
  g.inRows = slices ? rows : (rows - 1) * sh + (KH - 1) * dh + 1;
  g.slack = slices ? 0 : kDirectNarrowSlice * sw + 16; // the longer slice
  return g;
}

/// Most bytes of the transformed inputs V of one work item of the Winograd convolution
/// (ember_conv_f32_winograd2x3, ConvWinograd.cpp): a 14x14 plane of 256 channels (ResNet's
/// layer3, 802 KB) is one item, so that its transformed weights stream once per run.
constexpr int64_t kWinogradBandBytes = int64_t(832) << 10;

/// The blocking of the Winograd F(2x2, 3x3) convolution (3x3, stride 1, no dilation, one
/// group): output tiles of 2x2 positions, th x tw of them; a work item is a block of R
/// tile rows (TB = R tw tiles) of one image by a group of output channels. Scratch per thread: V =
/// [16][C][TBp] (the item's transformed input tiles), Mo = [16][TS][32] (one block of 32 output
/// channels' products, TS = TB rounded up to the 7-tile slices of the GEMM), and one padded input
/// channel of the item (rowsIn x Wp).
struct WinogradGeom {
  int64_t th = 0, tw = 0, R = 0, TS = 0, TBp = 0, rowsIn = 0, Wp = 0;
  /// Groups of blocks of 32 output channels: a work item is (image, band of R tile rows,
  /// group), so that a plane of few bands still makes one item per part while each part
  /// streams only its group's share of the transformed weights.
  int64_t mgroups = 1;
  int64_t scratchFloats(int64_t C) const { return 16 * C * TBp + 16 * TS * 32 + rowsIn * Wp + 32; }
};

/// The blocking for N images of C -> M channels cut into nth parts. R depends on the plane
/// and C only (as many tile rows as fit kWinogradBandBytes), so an item's transformed
/// weights are reused over as many tiles as with one part; when the bands are fewer than
/// the parts, the output channels are split into groups instead of the bands into thinner
/// ones (thin bands stream every transformed weight once per band: ResNet-18's 14x14
/// layers, 4 MB of them, 7 times at 8 parts).
inline WinogradGeom winogradGeom(int64_t N, int64_t C, int64_t M, int64_t OH, int64_t OW,
                                 int64_t nth) {
  WinogradGeom g;
  g.th = (OH + 1) / 2;
  g.tw = (OW + 1) / 2;
  const int64_t perRow = 16 * C * g.tw * 4;
  int64_t R = perRow > 0 ? kWinogradBandBytes / perRow : g.th;
  R = R < 1 ? 1 : (R > g.th ? g.th : R);
  g.R = R;
  const int64_t items = N * ((g.th + R - 1) / R), mblocks = (M + 31) / 32;
  if (items < nth) {
    const int64_t want = (nth + items - 1) / items;
    g.mgroups = want < mblocks ? want : (mblocks > 0 ? mblocks : 1);
  }
  g.TS = (R * g.tw + 6) / 7 * 7;
  g.TBp = g.TS + 16; // a row's last 16-tile vector of the input transform spills past TB
  g.rowsIn = 2 * R + 2;
  g.Wp = 2 * ((g.tw + 15) / 16 * 16) + 4;
  return g;
}

/// Whether ember_conv_i8_vnni_t (Int8Vnni.cpp) splits a convolution of C -> M channels
/// and `taps` kernel taps by bands of tiles: when its packed weights (blocks of 16
/// channels by ceil(C / 4) quads per tap, 64 bytes each) take at most 256 KiB (the large
/// planes), so that each part lays out only the rows its band reads. Otherwise by groups of
/// output channels, so that a group's weights stay in the cache across the tiles, and
/// every part lays out the image's whole quad plane (codegen/Int8Gen.cpp then cuts the
/// node into few parts).
inline bool int8ConvByChannelsOnBands(int64_t C, int64_t M, int64_t taps) {
  return (M + 15) / 16 * taps * ((C + 3) / 4) * 64 <= (int64_t(256) << 10);
}

/// The outputs of a max pool's row that ember_pool_f32 computes 16 at a time
/// (libjit/Pool.cpp): those whose taps all lie inside the row, at strides 1 and 2.
struct MaxPoolRowBlocks {
  int64_t lo = 0, hi = 0; ///< outputs whose taps all lie inside the row
  int64_t lastStart = -1; ///< the last output a block of 16 may start at
  bool vector = false;    ///< whether there are blocks at all
};

inline MaxPoolRowBlocks maxPoolRowBlocks(int64_t W, int64_t OW, int64_t KW, int64_t sw, int64_t pw,
                                         int64_t dw) {
  MaxPoolRowBlocks r;
  // Outputs [lo, hi) have all KW taps inside the row: ow * sw + kw * dw - pw in [0, W).
  const int64_t offMax = (KW - 1) * dw - pw;
  r.lo = pw <= 0 ? 0 : (pw + sw - 1) / sw;
  r.hi = W - offMax <= 0 ? 0 : (W - offMax + sw - 1) / sw;
  r.hi = r.hi < OW ? r.hi : OW;
  // A block of 16 at ow reads up to x[ow * sw + offMax + 16 * sw): the last start inside.
  const int64_t span = 16 * sw;
  r.lastStart = W - offMax - span >= 0 ? (W - offMax - span) / sw : -1;
  r.vector = (sw == 1 || sw == 2) && r.hi - r.lo >= 16 && r.lastStart >= r.lo;
  return r;
}

/// Largest stride of a max pool computed on stride phases (a phase per stride^2).
constexpr int64_t kMaxPoolPhaseStride = 3;

/// Whether a max pool runs on the stride phases of each plane (its scratch then is
/// dwGeom(...).scratchFloats() per thread): planes too narrow for blocks of a row.
inline bool maxPoolOnPhases(int64_t W, int64_t OW, int64_t KW, int64_t sh, int64_t sw, int64_t pw,
                            int64_t dw) {
  return !maxPoolRowBlocks(W, OW, KW, sw, pw, dw).vector && sh <= kMaxPoolPhaseStride &&
         sw <= kMaxPoolPhaseStride;
}

/// Positions of one slice of the channel-vectorised convolution
/// (ember_conv_f32_t_mr8_nr32: its MR) and of the panel it gathers slices from.
constexpr int64_t kConvTSlice = 8, kConvTPanel = 32;

/// Floats of scratch one thread of ember_conv_f32_t_mr8_nr32 needs for K = (C / group) x
/// KH x KW and P output positions: X_col in slices of kConvTSlice positions ([slice][k][8]),
/// the panel of kConvTPanel positions they are split from, and an 8 x 32 tile.
inline int64_t convTScratchFloats(int64_t K, int64_t P) {
  return K * (P + kConvTSlice - 1) / kConvTSlice * kConvTSlice + K * kConvTPanel + kConvTSlice * 32;
}

} // namespace ember::jitops
