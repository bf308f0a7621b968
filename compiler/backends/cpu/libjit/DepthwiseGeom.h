// The scratch layout of the float depthwise convolution (libjit/Conv.cpp,
// ember_dwconv_f32), shared with its code generator (codegen/ConvGen.cpp), which sizes the
// per-thread scratch: one definition, so the two sides cannot disagree on a size.
//
// Each input plane is copied, zero-padded, into its stride phases: phase (a, b) holds the
// input pixels (sh * i + a - ph, sw * j + b - pw) for i < Hq, j < Wq. Kernel tap (kh, kw)
// of output (oh, ow) then reads element (oh + kh * dh / sh, ow + kw * dw / sw) of phase
// ((kh * dh) % sh, (kw * dw) % sw): a stride-1 access, so a run of output positions
// flattened over the phase's width Wq is one contiguous load per tap.
#pragma once

#include <cstdint>

namespace ember::jitops {

/// Floats of one vector step of the depthwise kernel (positions computed at once).
constexpr int64_t kDwStep = 16;

/// The phase geometry of one depthwise convolution.
struct DwGeom {
  int64_t Hq = 0, Wq = 0; ///< Rows and columns of each phase.
  int64_t plane = 0;      ///< Floats of one phase (with the tail the last step reads).
  int64_t outLen = 0;     ///< Flattened output positions OH x Wq, rounded up to kDwStep.
  /// Floats of scratch one thread needs: every phase, then the OH x Wq output rows.
  int64_t scratchFloats() const { return plane * phases + outLen; }
  int64_t phases = 1; ///< sh x sw.
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

} // namespace ember::jitops
