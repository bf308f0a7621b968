// The int8 operators of attention blocks (docs/numerics.md sections 4.1, 4.10, 4.11):
// MatMul of two activations, Softmax along one axis and LayerNormalization over lines
// (rows, or each pixel's channels for ChannelLayerNormalization).
// Softmax and LayerNormalization run the lines of ember/quantization/IntegerLines.h,
// the same code the interpreter runs; the MatMul sums (a - zp_a) * (b - zp_b) directly,
// which equals the interpreter's expansion modulo 2^32.
#include "Libjit.h"

#include "ember/quantization/IntegerLines.h"

/// y[t, i, :] = requantize(sum over k of (a[t, i, k] - za) * (b[t, k, :] - zb)) for
/// `batches` matrices of `rows` x K times K x N (b advances by bStride per batch: 0 for
/// one shared b). Threads split the (batch, row) pairs; acc is N uint32 per thread.
EMBER_KERNEL void ember_matmul_act_i8(const int8_t* a, const int8_t* b, int8_t* y, int64_t batches,
                                      int64_t rows, int64_t K, int64_t N, int64_t bStride,
                                      int32_t za, int32_t zb, int32_t M, int32_t S, int32_t zpy,
                                      int32_t lo, int32_t hi, uint32_t* scratch, int64_t tid,
                                      int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(batches * rows, tid, nth, &begin, &end);
  uint32_t* acc = scratch;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t t = item / rows;
    const int8_t* ar = a + item * K;
    const int8_t* bm = b + t * bStride;
    for (int64_t j = 0; j < N; ++j)
      acc[j] = 0;
    for (int64_t k = 0; k < K; ++k) {
      const int32_t av = ar[k] - za;
      const int8_t* br = bm + k * N;
      for (int64_t j = 0; j < N; ++j)
        acc[j] += static_cast<uint32_t>(av * (br[j] - zb));
    }
    int8_t* yr = y + item * N;
    for (int64_t j = 0; j < N; ++j)
      yr[j] = ember::qline::requantize64(static_cast<int32_t>(acc[j]), M, S, zpy, lo, hi);
  }
}

/// Softmax of every (outer, inner) line of `len` codes; T the 256-entry exp table.
EMBER_KERNEL void ember_softmax_i8(const int8_t* x, int8_t* y, int64_t outer, int64_t len,
                                   int64_t inner, const int32_t* T, int32_t M, int32_t S,
                                   int32_t zpy, int32_t lo, int32_t hi, int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(outer * inner, tid, nth, &begin, &end);
  for (int64_t line = begin; line < end; ++line) {
    const int64_t base = (line / inner) * len * inner + line % inner;
    ember::qline::softmaxLine(x + base, y + base, len, inner, T, M, S, zpy, lo, hi);
  }
}

/// LayerNormalization of `outer * inner` lines of n codes `inner` apart (rows when inner
/// is 1, a pixel's channels of NCHW when inner is H * W); the Mean and InvStdDev results
/// (when the node has them) are zeros, as in the interpreter.
EMBER_KERNEL void ember_layernorm_i8(const int8_t* x, int8_t* y, float* meanOut, float* invOut,
                                     int64_t outer, int64_t n, int64_t inner, int32_t zpx,
                                     int64_t E, const int32_t* M, const int32_t* S,
                                     const int32_t* B, int32_t zpy, int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(outer * inner, tid, nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t base = (r / inner) * n * inner + r % inner;
    ember::qline::layerNormLine(x + base, y + base, n, inner, zpx, E, M, S, B, zpy);
    if (meanOut)
      meanOut[r] = 0.f;
    if (invOut)
      invOut[r] = 0.f;
  }
}
