// Codegen of the int8 operators (docs/numerics.md section 4): QuantizeLinear /
// DequantizeLinear (per tensor), Conv (packed GEMM with the zero point folded into the
// bias, or depthwise; 3-D: a direct loop), Gemm and MatMul with constant B, rescaled Add and
// Mul, Relu/Clip on codes, Rescale, Lut, PRelu per channel, MaxPool, AveragePool (1-D to 3-D) and
// the global pools. Every multiplier is chosen here, at compile time, by the functions of
// ember/quantization/Numerics.h, so the kernels compute exactly the interpreter's integers.
// Per-channel tables (multipliers, folded biases) are data kept by the compiled function, not
// constants of the code, so layers of the same shape share one kernel instance.
#include "Codegen.h"
#include "Int8Packing.h"
#include "Jit.h"
#include "Strides.h"
#include "libjit/ConvScratch.h"

#include "ember/graph/AttrViews.h"
#include "ember/quantization/Numerics.h"

#include <algorithm>

namespace ember::cpu {

namespace {

float scaleOf(const Type& t) {
  return t.quant.scales[0];
}
int32_t zpOf(const Type& t) {
  return t.quant.zeroPoints[0];
}

/// Weights of zero point 0, per tensor or per channel along `axis` with `channels` scales.
bool symmetricWeights(const OpInput& w, int axis, int64_t channels) {
  if (!w || !w.isConstant() || w.kind() != ElemKind::Int8)
    return false;
  const QuantParams& q = w.type().quant;
  const bool perTensor = q.scales.size() == 1 && q.axis < 0;
  const bool perChannel = int64_t(q.scales.size()) == channels && q.axis == axis;
  if (!(perTensor || perChannel) || q.zeroPoints.size() != q.scales.size())
    return false;
  for (int32_t z : q.zeroPoints)
    if (z != 0)
      return false;
  return true;
}

float channelScale(const OpInput& w, int64_t c) {
  const auto& s = w.type().quant.scales;
  return s.size() == 1 ? s[0] : s[size_t(c)];
}

bool constantBias(const OpInput& b, int64_t channels, bool allowOne) {
  return !b || (b.isConstant() && b.kind() == ElemKind::Int32 &&
                (b.type().size() == channels || (allowOne && b.type().size() == 1)));
}

/// The (M, S) of each output channel: s_x * s_w[c] / s_y.
void channelMultipliers(const Type& x, const OpInput& w, const Type& y, int64_t channels,
                        std::vector<int32_t>* M, std::vector<int32_t>* S) {
  for (int64_t c = 0; c < channels; ++c) {
    const quant::Multiplier m =
        quant::productMultiplier(scaleOf(x), channelScale(w, c), scaleOf(y));
    M->push_back(m.M);
    S->push_back(m.S);
  }
}

// ---- QuantizeLinear / DequantizeLinear ------------------------------------------

bool supportsQuantize(const Op& n) {
  return n.input(0).kind() == ElemKind::Float32 && n.resultType().isPerTensorInt8() &&
         !quantOf(n.attrs()).scales && n.numInputs() == 1;
}

void emitQuantize(const Op& n, CodegenContext& ctx) {
  const QuantAttrs a = quantOf(n.attrs());
  const double s = a.scale ? *a.scale : scaleOf(n.resultType());
  const int64_t zp = a.scale ? a.zeroPoint.value_or(0) : zpOf(n.resultType());
  ctx.call("ember_quantize_i8",
           {ctx.addr(n.input(0)), ctx.result(n), ctx.i64(n.resultType().size()), ctx.f32(float(s)),
            ctx.i32(zp), ctx.tid(), ctx.nth()});
}

bool supportsDequantize(const Op& n) {
  return n.input(0).type().isPerTensorInt8() && n.resultType().kind == ElemKind::Float32 &&
         !quantOf(n.attrs()).scales && n.numInputs() == 1;
}

void emitDequantize(const Op& n, CodegenContext& ctx) {
  const QuantAttrs a = quantOf(n.attrs());
  const Type& x = n.input(0).type();
  const double s = a.scale ? *a.scale : scaleOf(x);
  const int64_t zp = a.scale ? a.zeroPoint.value_or(0) : zpOf(x);
  ctx.call("ember_dequantize_i8",
           {ctx.addr(n.input(0)), ctx.result(n), ctx.i64(n.resultType().size()), ctx.f32(float(s)),
            ctx.i32(zp), ctx.tid(), ctx.nth()});
}

// ---- Conv ----------------------------------------------------------------------

bool supportsConv(const Op& n) {
  if (n.numInputs() < 2 || !n.input(0).type().isPerTensorInt8() ||
      !n.resultType().isPerTensorInt8())
    return false;
  const Shape& x = n.input(0).dims();
  if (x.size() < 3 || x.size() > 5)
    return false;
  const int64_t m = n.resultType().dims[1];
  return symmetricWeights(n.input(1), 0, m) && constantBias(n.optionalInput(2), m, false);
}

/// [N, C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw] of a 1-D or 2-D Conv.
std::vector<int64_t> convGeom(const Op& n) {
  const Shape& x = n.input(0).dims();
  const Shape& w = n.input(1).dims();
  const Shape& y = n.resultType().dims;
  const size_t nsp = x.size() - 2;
  const Shape filter(w.begin() + 2, w.end());
  const WindowAttrs a = windowOf(n.attrs(), nsp, &filter);
  const std::vector<int64_t>&s = a.strides, &p = a.pads, &d = a.dilations;
  if (nsp == 1)
    return {x[0], x[1], 1, x[2], y[1], 1, y[2], 1, w[2], 1, s[0], 0, p[0], 1, d[0]};
  return {x[0], x[1], x[2], x[3], y[1], y[2], y[3], w[2], w[3], s[0], s[1], p[0], p[1], d[0], d[1]};
}

/// A 3-D Conv: ember_conv3d_i8 on the weights as they are (a direct loop).
void emitConv3d(const Op& n, CodegenContext& ctx) {
  const Type &xt = n.input(0).type(), &yt = n.resultType();
  const int64_t M = yt.dims[1];
  const quant::Bounds bd = quant::activationBounds(n.node(), yt.quant);
  std::vector<int32_t> Mq, Sq;
  channelMultipliers(xt, n.input(1), yt, M, &Mq, &Sq);
  ctx.call("ember_conv3d_i8",
           {ctx.addr(n.input(0)), ctx.addr(n.input(1)), ctx.addr(n.optionalInput(2)), ctx.keep(Mq),
            ctx.keep(Sq), ctx.result(n), ctx.int64Array(convNdGeom(n)), ctx.i32(zpOf(xt)),
            ctx.i32(zpOf(yt)), ctx.i32(bd.lo), ctx.i32(bd.hi),
            ctx.scratch(size_t(yt.dims.back()) * 4), ctx.tid(), ctx.nth()});
}

/// The bytes of an image's quad plane in ember_conv_i8_vnni_t (its quadPlane): the
/// padded rows the windows reach by columns rounded up to 16, by 4 * ceil(C / 4).
int64_t quadPlaneBytes(const std::vector<int64_t>& g) {
  const int64_t C = g[1], OH = g[5], OW = g[6], KH = g[7], KW = g[8];
  const int64_t Hp = (OH - 1) * g[9] + (KH - 1) * g[13] + 1;
  const int64_t Wp = ((OW - 1) * g[10] + (KW - 1) * g[14] + 1 + 15) / 16 * 16;
  return Hp * Wp * 4 * ((C + 3) / 4);
}

/// A convolution of one group on ember_conv_i8_vnni_t (int8ConvByChannels).
void emitConvByChannels(const Op& n, CodegenContext& ctx, const std::vector<int64_t>& g,
                        const std::vector<int32_t>& Mq, const std::vector<int32_t>& Sq,
                        const quant::Bounds& bd) {
  const Type &xt = n.input(0).type(), &yt = n.resultType();
  const OpInput b = n.optionalInput(2);
  const Int8GemmPacking pk = packInt8ConvByChannels(n.input(1).constantData<int8_t>(),
                                                    b ? b.constantData<int32_t>() : nullptr, Mq, Sq,
                                                    g[4], g[1], g[7] * g[8], zpOf(xt));
  std::vector<llvm::Value*> args = {ctx.addr(n.input(0)), ctx.keep(pk.weights), ctx.keep(pk.fold),
                                    ctx.keep(pk.M),       ctx.keep(pk.S),       ctx.result(n)};
  for (int64_t v : g)
    args.push_back(ctx.i64(v));
  for (int64_t v : {int64_t(zpOf(xt)), int64_t(zpOf(yt)), int64_t(bd.lo), int64_t(bd.hi)})
    args.push_back(ctx.i32(v));
  args.push_back(ctx.scratch(size_t(quadPlaneBytes(g))));
  args.push_back(ctx.tid());
  args.push_back(ctx.nth());
  ctx.call(pk.kernel, args);
  // Split by channel groups, every part lays out its image's whole quad plane: two parts
  // per image, not eight (ResNet-50's layer4 at two threads laid it out eight times).
  if (!jitops::int8ConvByChannelsOnBands(g[1], g[4], g[7] * g[8]))
    ctx.limitParts(2 * g[0]);
}

void emitConv(const Op& n, CodegenContext& ctx) {
  if (n.input(0).dims().size() == 5)
    return emitConv3d(n, ctx);
  const std::vector<int64_t> g = convGeom(n);
  const int64_t C = g[1], M = g[4], KH = g[7], KW = g[8];
  const int64_t group = groupOf(n.attrs()), cg = C / group;
  const int64_t K = cg * KH * KW;
  const Type &xt = n.input(0).type(), &yt = n.resultType();
  const quant::Bounds bd = quant::activationBounds(n.node(), yt.quant);
  std::vector<int32_t> Mq, Sq;
  channelMultipliers(xt, n.input(1), yt, M, &Mq, &Sq);
  if (int8ConvByChannels(int8Isa(), group, C, M, KH * KW, g[5] * g[6], quadPlaneBytes(g)))
    return emitConvByChannels(n, ctx, g, Mq, Sq, bd);
  const int8_t* w = n.input(1).constantData<int8_t>();
  const OpInput b = n.optionalInput(2);
  const int32_t* bias = b ? b.constantData<int32_t>() : nullptr;
  std::vector<llvm::Value*> args = {ctx.addr(n.input(0))};
  const bool depthwise = C == group && group > 1;
  const Int8Isa isa = int8Isa();
  Int8ConvPacking pk;
  if (depthwise) {
    args.push_back(ctx.addr(n.input(1)));
    args.push_back(ctx.addr(b));
  } else {
    pk = packInt8Conv(w, bias, M, group, K, KH * KW, zpOf(xt), isa);
    args.push_back(ctx.keep(pk.weights));
    args.push_back(ctx.keep(pk.fold));
  }
  args.push_back(ctx.keep(Mq));
  args.push_back(ctx.keep(Sq));
  args.push_back(ctx.result(n));
  for (int64_t v : g)
    args.push_back(ctx.i64(v));
  if (!depthwise)
    args.push_back(ctx.i64(group));
  for (int64_t v : {int64_t(zpOf(xt)), int64_t(zpOf(yt)), int64_t(bd.lo), int64_t(bd.hi)})
    args.push_back(ctx.i32(v));
  if (depthwise) {
    args.push_back(ctx.scratch(size_t(g[6]) * 4));
    args.push_back(ctx.tid());
    args.push_back(ctx.nth());
    // The depthwise kernel on quads needs AVX-512 (avx2 and portable: ember_dwconv_i8).
    const bool quads = isa == Int8Isa::Vnni || isa == Int8Isa::Avx512Bw;
    ctx.call(quads ? std::string("ember_dwconv_i8_") + int8IsaName(isa) : "ember_dwconv_i8", args);
    return;
  }
  args.push_back(ctx.scratch(pk.scratchBytes));
  args.push_back(ctx.tid());
  args.push_back(ctx.nth());
  // Every argument stays a constant, the quantization too: with the zero points and
  // bounds at run time (one instance per window), DenseNet-121 int8 took 2.5% and
  // MobileNetV2 int8 9% longer per inference (a same-process A/B on AVX512-VNNI).
  ctx.call(pk.kernel, args);
}

// ---- Gemm ----------------------------------------------------------------------

/// Whether a Gemm's B is stored transposed ([N, K], per-channel scales along axis 0).
bool transposedB(const Op& n) {
  return gemmOf(n.attrs()).transB;
}

bool supportsGemm(const Op& n) {
  if (!gemmOf(n.attrs()).normalized() || !n.input(0).type().isPerTensorInt8() ||
      !n.resultType().isPerTensorInt8() || n.input(0).dims().size() != 2 ||
      n.input(1).dims().size() != 2)
    return false;
  const bool tb = transposedB(n);
  const int64_t N = n.input(1).dims()[tb ? 0 : 1];
  return symmetricWeights(n.input(1), tb ? 0 : 1, N) && constantBias(n.optionalInput(2), N, true);
}

/// rows x K times the constant B [K, N] (`b`; `bt` when stored [N, K], then transposed
/// into the constant region), plus the constant C broadcast over rows, requantized per
/// output channel.
void emitProduct(const Op& n, CodegenContext& ctx, int64_t rows, int64_t K, int64_t N, bool bt,
                 const OpInput& c) {
  const Type &xt = n.input(0).type(), &yt = n.resultType();
  const quant::Bounds bd = quant::activationBounds(n.node(), yt.quant);
  std::vector<int32_t> Mq, Sq;
  channelMultipliers(xt, n.input(1), yt, N, &Mq, &Sq);
  const int8_t* src = n.input(1).constantData<int8_t>();
  std::vector<int8_t> transposed;
  if (bt) {
    transposed.resize(static_cast<size_t>(K * N));
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k)
        transposed[size_t(k * N + j)] = src[j * K + k];
  }
  const int8_t* w = bt ? transposed.data() : src;
  const int32_t* cp = nullptr;
  std::vector<int32_t> cv;
  if (c) {
    const int32_t* cd = c.constantData<int32_t>();
    for (int64_t j = 0; j < N; ++j)
      cv.push_back(cd[c.type().size() == 1 ? 0 : j]);
    cp = cv.data();
  }
  const Int8GemmPacking pk = packInt8Gemm(w, cp, Mq, Sq, K, N, zpOf(xt), int8Isa());
  llvm::Value* wAddr = !pk.weights.empty() ? ctx.keep(pk.weights)
                       : bt                ? ctx.keep(transposed)
                                           : ctx.addr(n.input(1));
  ctx.call(pk.kernel,
           {ctx.addr(n.input(0)), wAddr, ctx.keep(pk.fold), ctx.keep(pk.M), ctx.keep(pk.S),
            ctx.result(n), ctx.i64(rows), ctx.i64(N), ctx.i64(K), ctx.i32(zpOf(yt)), ctx.i32(bd.lo),
            ctx.i32(bd.hi), ctx.scratch(pk.scratchBytes), ctx.tid(), ctx.nth()});
}

void emitGemm(const Op& n, CodegenContext& ctx) {
  const bool tb = transposedB(n);
  const int64_t rows = n.input(0).dims()[0], K = n.input(0).dims()[1];
  const int64_t N = n.input(1).dims()[tb ? 0 : 1];
  emitProduct(n, ctx, rows, K, N, tb, n.optionalInput(2));
}

/// MatMul with a constant B [K, N]: the batch of A folds into rows, as a Gemm without C.
bool supportsMatMul(const Op& n) {
  if (!n.input(0).type().isPerTensorInt8() || !n.resultType().isPerTensorInt8() ||
      n.input(0).dims().size() < 2 || n.input(1).dims().size() != 2)
    return false;
  return symmetricWeights(n.input(1), 1, n.input(1).dims()[1]);
}

void emitMatMul(const Op& n, CodegenContext& ctx) {
  const Shape& a = n.input(0).dims();
  const int64_t K = a.back();
  emitProduct(n, ctx, numElements(a) / K, K, n.input(1).dims()[1], false, OpInput());
}

// ---- elementwise ---------------------------------------------------------------

bool supportsBinary(const Op& n) {
  return n.numInputs() == 2 && n.input(0).type().isPerTensorInt8() &&
         n.input(1).type().isPerTensorInt8() && n.resultType().isPerTensorInt8();
}

void emitBinary(const Op& n, CodegenContext& ctx) {
  const Type &a = n.input(0).type(), &b = n.input(1).type(), &y = n.resultType();
  const quant::Bounds bd = quant::activationBounds(n.node(), y.quant);
  int32_t Ma, Mb = 0, S;
  const bool isMul = n.kind() == NodeKind::Mul;
  if (isMul) {
    const quant::Multiplier m = quant::productMultiplier(scaleOf(a), scaleOf(b), scaleOf(y));
    Ma = m.M;
    S = m.S;
  } else {
    const quant::AddMultipliers m = quant::addMultipliers(scaleOf(a), scaleOf(b), scaleOf(y));
    Ma = m.Ma;
    Mb = m.Mb;
    S = m.S;
  }
  const Box6<2> box =
      simplifyBox<2>(y.dims, {broadcastStrides(a.dims, y.dims), broadcastStrides(b.dims, y.dims)});
  ctx.call("ember_binary_i8",
           {ctx.i32(isMul), ctx.addr(n.input(0)), ctx.addr(n.input(1)), ctx.result(n),
            ctx.int64Array(box.dims), ctx.int64Array(box.strides[0]),
            ctx.int64Array(box.strides[1]), ctx.i32(zpOf(a)), ctx.i32(zpOf(b)), ctx.i32(Ma),
            ctx.i32(Mb), ctx.i32(S), ctx.i32(zpOf(y)), ctx.i32(bd.lo), ctx.i32(bd.hi), ctx.tid(),
            ctx.nth()},
           {7, 8, 9, 10, 11, 12, 13, 14}); // the quantization at run time
}

bool supportsClamp(const Op& n) {
  return n.resultType().isPerTensorInt8() && n.input(0).type() == n.resultType();
}

void emitClamp(const Op& n, CodegenContext& ctx) {
  const quant::Bounds bd = quant::activationBounds(n.node(), n.resultType().quant);
  ctx.call("ember_clamp_i8",
           {ctx.addr(n.input(0)), ctx.result(n), ctx.i64(n.resultType().size()), ctx.i32(bd.lo),
            ctx.i32(bd.hi), ctx.tid(), ctx.nth()},
           {2, 3, 4});
}

bool supportsRescale(const Op& n) {
  return n.input(0).type().isPerTensorInt8() && n.resultType().isPerTensorInt8();
}

void emitRescale(const Op& n, CodegenContext& ctx) {
  const Type &x = n.input(0).type(), &y = n.resultType();
  const quant::Multiplier m = quant::averageMultiplier(scaleOf(x), scaleOf(y), 1);
  const quant::Bounds bd = quant::activationBounds(n.node(), y.quant);
  // All constants: with the size and the quantization at run time, DenseNet-121 int8
  // took 2% longer per inference (its ~190 Rescales have distinct parameters anyway).
  ctx.call("ember_rescale_i8",
           {ctx.addr(n.input(0)), ctx.result(n), ctx.i64(y.size()), ctx.i32(zpOf(x)), ctx.i32(m.M),
            ctx.i32(m.S), ctx.i32(zpOf(y)), ctx.i32(bd.lo), ctx.i32(bd.hi), ctx.tid(), ctx.nth()});
}

bool supportsLut(const Op& n) {
  return n.numInputs() == 2 && n.input(0).kind() == ElemKind::Int8 &&
         n.input(1).kind() == ElemKind::Int8 && n.input(1).type().size() == 256 &&
         n.resultType().kind == ElemKind::Int8;
}

void emitLut(const Op& n, CodegenContext& ctx) {
  ctx.call("ember_lut_i8",
           {ctx.addr(n.input(0)), ctx.addr(n.input(1)), ctx.result(n),
            ctx.i64(n.resultType().size()), ctx.tid(), ctx.nth()},
           {3});
}

/// PRelu's slopes per channel (section 4.12), empty when the operation has none.
std::vector<float> preluSlopes(const Op& n) {
  const OpInput s = n.input(1);
  if (!s.isConstant() || s.kind() != ElemKind::Float32)
    return {};
  const float* p = s.constantData<float>();
  return quant::preluChannelSlopes(n.input(0).dims(), s.dims(), [p](int64_t i) { return p[i]; });
}

bool supportsPRelu(const Op& n) {
  return n.numInputs() == 2 && n.input(0).type().isPerTensorInt8() &&
         n.resultType().isPerTensorInt8() && n.resultType().dims == n.input(0).dims() &&
         !preluSlopes(n).empty();
}

void emitPRelu(const Op& n, CodegenContext& ctx) {
  const Type &x = n.input(0).type(), &y = n.resultType();
  const quant::PReluMultipliers m = quant::preluMultipliers(scaleOf(x), scaleOf(y), preluSlopes(n));
  const quant::Bounds bd = quant::activationBounds(n.node(), y.quant);
  int64_t inner = 1;
  for (size_t i = 2; i < x.dims.size(); ++i)
    inner *= x.dims[i];
  const int64_t C = x.dims[1];
  ctx.call("ember_prelu_i8",
           {ctx.addr(n.input(0)), ctx.keep(m.Mn), ctx.result(n), ctx.i64(y.size() / (C * inner)),
            ctx.i64(C), ctx.i64(inner), ctx.i32(zpOf(x)), ctx.i32(m.Mp), ctx.i32(m.S),
            ctx.i32(zpOf(y)), ctx.i32(bd.lo), ctx.i32(bd.hi), ctx.tid(), ctx.nth()});
}

// ---- pools ---------------------------------------------------------------------

bool supportsMaxPool(const Op& n) {
  const size_t rank = n.input(0).dims().size();
  return n.resultType().isPerTensorInt8() && n.input(0).kind() == ElemKind::Int8 &&
         n.input(0).type().quant == n.resultType().quant && rank >= 3 && rank <= 5;
}

/// The taps [lo, hi) of one dimension whose position start + t * dil lies in [0, in)
/// (the interpreter's window walk).
int64_t tapCount(int64_t start, int64_t in, int64_t k, int64_t dil) {
  int64_t lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
  const int64_t hi = start >= in ? 0 : std::min(k, (in - start + dil - 1) / dil);
  lo = std::min(lo, hi);
  return hi - lo;
}

/// A 3-D MaxPool or AveragePool: ember_pool3d_i8, the average's multipliers indexed by
/// the window counts that occur.
void emitPool3d(const Op& n, CodegenContext& ctx) {
  const Shape& x = n.input(0).dims();
  const std::vector<int64_t> g = pool3Geom(n); // in, out, k, s, d, pb, pe (three each)
  const bool includePad = windowOf(n.attrs(), 3).countIncludePad;
  const bool isMax = n.kind() == NodeKind::MaxPool;
  std::vector<int32_t> Mc(size_t(g[6] * g[7] * g[8] + 1), 0), Sc(Mc.size(), 1);
  std::vector<bool> done(Mc.size(), false);
  for (int64_t od = 0; od < g[3] && !isMax; ++od)
    for (int64_t oh = 0; oh < g[4]; ++oh)
      for (int64_t ow = 0; ow < g[5]; ++ow) {
        const int64_t o[3] = {od, oh, ow};
        int64_t count = 1;
        for (int d = 0; d < 3; ++d) {
          const int64_t st = o[d] * g[9 + d] - g[15 + d];
          count *= includePad
                       ? tapCount(st + g[15 + d], g[d] + g[15 + d] + g[18 + d], g[6 + d], g[12 + d])
                       : tapCount(st, g[d], g[6 + d], g[12 + d]);
        }
        if (count > 0 && !done[size_t(count)]) {
          done[size_t(count)] = true;
          const quant::Multiplier m =
              quant::averageMultiplier(scaleOf(n.input(0).type()), scaleOf(n.resultType()), count);
          Mc[size_t(count)] = m.M;
          Sc[size_t(count)] = m.S;
        }
      }
  ctx.call("ember_pool3d_i8",
           {ctx.i32(isMax), ctx.i32(includePad), ctx.addr(n.input(0)), ctx.result(n),
            ctx.i64(x[0] * x[1]), ctx.int64Array(g), ctx.keep(Mc), ctx.keep(Sc),
            ctx.i32(zpOf(n.input(0).type())), ctx.i32(zpOf(n.resultType())), ctx.tid(), ctx.nth()});
}

void emitMaxPool(const Op& n, CodegenContext& ctx) {
  const Shape& x = n.input(0).dims();
  if (x.size() == 5)
    return emitPool3d(n, ctx);
  const std::vector<int64_t> w = poolWindow(n);
  // The int8 max pool takes no end pads (they add nothing to a maximum).
  std::vector<int64_t> v;
  for (size_t i : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13})
    v.push_back(w[i]);
  std::vector<llvm::Value*> args = {ctx.addr(n.input(0)), ctx.result(n), ctx.i64(x[0] * x[1])};
  for (int64_t e : v)
    args.push_back(ctx.i64(e));
  // The padded plane rows of ember_maxpool_i8: [H, W, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw].
  const int64_t blocks = (v[3] + 63) / 64;
  const int64_t rows = (v[2] - 1) * v[6] + (v[4] - 1) * v[10] + 1;
  const int64_t cols = (blocks * 64 - 1) * v[7] + (v[5] - 1) * v[11] + 1 + 64;
  args.push_back(ctx.scratch(size_t(rows * cols)));
  args.push_back(ctx.tid());
  args.push_back(ctx.nth());
  ctx.call("ember_maxpool_i8", args);
}

bool supportsAvgPool(const Op& n) {
  const size_t rank = n.input(0).dims().size();
  return n.input(0).type().isPerTensorInt8() && n.resultType().isPerTensorInt8() && rank >= 3 &&
         rank <= 5;
}

void emitAvgPool(const Op& n, CodegenContext& ctx) {
  const Shape& x = n.input(0).dims();
  if (x.size() == 5)
    return emitPool3d(n, ctx);
  // [H, W, OH, OW, KH, KW, sh, sw, ph, pw, peh, pew, dh, dw]
  const std::vector<int64_t> v = poolWindow(n);
  const bool includePad = windowOf(n.attrs(), x.size() - 2).countIncludePad;
  const Type &xt = n.input(0).type(), &yt = n.resultType();
  std::vector<int32_t> Mpos, Spos;
  for (int64_t oh = 0; oh < v[2]; ++oh)
    for (int64_t ow = 0; ow < v[3]; ++ow) {
      const int64_t sth = oh * v[6] - v[8], stw = ow * v[7] - v[9];
      const int64_t count =
          includePad ? tapCount(sth + v[8], v[0] + v[8] + v[10], v[4], v[12]) *
                           tapCount(stw + v[9], v[1] + v[9] + v[11], v[5], v[13])
                     : tapCount(sth, v[0], v[4], v[12]) * tapCount(stw, v[1], v[5], v[13]);
      quant::Multiplier m{-1, 1};
      if (count > 0)
        m = quant::averageMultiplier(scaleOf(xt), scaleOf(yt), count);
      Mpos.push_back(m.M);
      Spos.push_back(m.S);
    }
  std::vector<llvm::Value*> args = {ctx.addr(n.input(0)), ctx.result(n), ctx.i64(x[0] * x[1])};
  for (size_t i : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13})
    args.push_back(ctx.i64(v[i]));
  args.push_back(ctx.keep(Mpos));
  args.push_back(ctx.keep(Spos));
  args.push_back(ctx.i32(zpOf(xt)));
  args.push_back(ctx.i32(zpOf(yt)));
  args.push_back(ctx.tid());
  args.push_back(ctx.nth());
  ctx.call("ember_avgpool_i8", args);
}

bool supportsGlobalPool(const Op& n) {
  if (!n.input(0).type().isPerTensorInt8() || !n.resultType().isPerTensorInt8() ||
      n.input(0).dims().size() < 3)
    return false;
  return n.kind() == NodeKind::GlobalAveragePool || n.input(0).type() == n.resultType() ||
         n.input(0).type().quant == n.resultType().quant;
}

void emitGlobalPool(const Op& n, CodegenContext& ctx) {
  const Type &x = n.input(0).type(), &y = n.resultType();
  const int64_t planes = x.dims[0] * x.dims[1], size = planes ? x.size() / planes : 0;
  const bool isMax = n.kind() == NodeKind::GlobalMaxPool;
  quant::Multiplier m;
  if (!isMax)
    m = quant::averageMultiplier(scaleOf(x), scaleOf(y), size);
  ctx.call("ember_global_pool_i8",
           {ctx.i32(isMax), ctx.addr(n.input(0)), ctx.result(n), ctx.i64(planes), ctx.i64(size),
            ctx.i32(zpOf(x)), ctx.i32(m.M), ctx.i32(m.S), ctx.i32(zpOf(y)), ctx.tid(), ctx.nth()});
}

} // namespace

void registerInt8Codegen() {
  using K = NodeKind;
  registerCodegenUnit(K::QuantizeLinear, {"int8", supportsQuantize, emitQuantize});
  registerCodegenUnit(K::DequantizeLinear, {"int8", supportsDequantize, emitDequantize});
  registerCodegenUnit(K::Conv, {"int8", supportsConv, emitConv});
  registerCodegenUnit(K::Gemm, {"int8", supportsGemm, emitGemm});
  registerCodegenUnit(K::MatMul, {"int8", supportsMatMul, emitMatMul});
  registerCodegenUnit(K::Add, {"int8", supportsBinary, emitBinary});
  registerCodegenUnit(K::Mul, {"int8", supportsBinary, emitBinary});
  registerCodegenUnit(K::Relu, {"int8", supportsClamp, emitClamp});
  registerCodegenUnit(K::Clip, {"int8", supportsClamp, emitClamp});
  registerCodegenUnit(K::Rescale, {"int8", supportsRescale, emitRescale});
  registerCodegenUnit(K::Lut, {"int8", supportsLut, emitLut});
  registerCodegenUnit(K::PRelu, {"int8", supportsPRelu, emitPRelu});
  registerCodegenUnit(K::MaxPool, {"int8", supportsMaxPool, emitMaxPool});
  registerCodegenUnit(K::AveragePool, {"int8", supportsAvgPool, emitAvgPool});
  registerCodegenUnit(K::GlobalAveragePool, {"int8", supportsGlobalPool, emitGlobalPool});
  registerCodegenUnit(K::GlobalMaxPool, {"int8", supportsGlobalPool, emitGlobalPool});
}

} // namespace ember::cpu
