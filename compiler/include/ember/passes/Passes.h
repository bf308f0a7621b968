#pragma once
/// \file
/// The built-in graph passes, callable one by one (tests, tools) or by name through the
/// registry of Pass.h. Each returns the number of rewrites it made and leaves the
/// function verified-valid and topologically sorted; the nodes it makes dead are
/// removed (unused Constants stay in the Module until `dce`).

#include "ember/passes/Pass.h"

namespace ember {

/// `dce`: removes nodes whose results reach no output, then unused Constants.
size_t runDce(Function& f, const PassContext& ctx = {});

/// `cse`: merges nodes of the same kind, inputs, attributes and result types, and
/// Constants of identical type and content.
size_t runCse(Function& f, const PassContext& ctx = {});

/// `constant-fold`: evaluates nodes whose inputs are all Constants with the
/// interpreter's kernels and replaces them by Constants (size cap:
/// PassContext::foldLimitElements). Quantize/DequantizeLinear are kept, so QDQ
/// patterns survive for the quantizer.
size_t runConstantFold(Function& f, const PassContext& ctx = {});

/// `fold-batchnorm`: BatchNormalization (constant parameters) after a single-use Conv
/// with constant weights becomes new weights and bias; so do Mul / Add by per-channel
/// constants after such a Conv.
size_t runFoldBatchNorm(Function& f, const PassContext& ctx = {});

/// `sink-transpose`: merges Transpose of Transpose, removes identity transposes, and
/// moves a single-use Transpose below an elementwise unary op (so that transposes meet
/// and cancel).
size_t runSinkTranspose(Function& f, const PassContext& ctx = {});

/// `sink-permutation`: a region between a Transpose P and the Transposes that read its
/// values (ConvNeXt's channels-last [0, 2, 3, 1] ... [0, 3, 1, 2]) is rewritten in the
/// layout before P and the Transposes are dropped: element-wise ops unchanged (constants
/// transposed by P^-1, a [C] bias becoming [1, C, 1, 1]), Softmax along P[axis], MatMul by a
/// constant [C, K] plus a constant bias -> 1x1 Conv, LayerNormalization over the last axis
/// -> ChannelLayerNormalization when that axis is the layout's axis 1 (else kept between its
/// own Transpose pair). Only when every node of the region
/// has such a form, no value of it is a function output and the rewrite removes more
/// Transposes than it adds or makes a Conv of a MatMul.
size_t runSinkPermutation(Function& f, const PassContext& ctx = {});

/// `merge-reshape`: Reshape of Reshape becomes one Reshape; a Reshape to its input's
/// shape is removed.
size_t runMergeReshape(Function& f, const PassContext& ctx = {});

/// `normalize-gemm`: brings every Gemm to one form, Y = A * B + C with alpha = beta = 1
/// and no transposition flags (B [K, N], as MatMul's): transB and alpha are folded into
/// a constant B, beta into a constant C (beta = 0 drops C), transA becomes a Transpose
/// (folded when A is constant). A Gemm whose B is not constant keeps transB / alpha.
size_t runNormalizeGemm(Function& f, const PassContext& ctx = {});

/// `matmul-bias-to-gemm`: MatMul(x [.., K], W [K, M]) + b with constant W and a constant
/// bias of M values (nn.Linear on a sequence) becomes Gemm(x, W, b), between Reshapes to
/// [P, K] and back when x has rank > 2, so the bias is added in the accumulator rather
/// than by a separate elementwise Add; a Relu/Clip that is the Add's only user moves
/// onto the Gemm's rows.
size_t runMatMulBiasToGemm(Function& f, const PassContext& ctx = {});

/// `flatten-gemm-to-conv`: a normal-form Gemm on Reshape(x [N, C, H, W] -> [N, C*H*W])
/// with a constant B (and a constant bias of M values, or none) and H*W > 1 becomes a Conv
/// with an H x W kernel (B's rows permuted into the filter at compile time) and a Reshape
/// of its [N, M, 1, 1] result: a classifier head on a flattened feature map needs no
/// flattening of the activations.
size_t runFlattenGemmToConv(Function& f, const PassContext& ctx = {});

/// `convtranspose-to-depthtospace`: a 2-D ConvTranspose of stride s >= 2 on both axes (any
/// kernel, pads and output padding; dilation 1, one group, constant weights) becomes one
/// Conv producing s * s * Cout channels (phase (a_h, a_w) of output channel co: the
/// ConvTranspose's taps that reach output pixels s q + a, zero elsewhere in the common
/// window), a DepthToSpace(s, DCR) and, only when an output length is not a multiple of s, a
/// Slice keeping its first pixels: the same sums. k = s with no pads gives a 1 x 1 Conv.
size_t runConvTransposeToDepthToSpace(Function& f, const PassContext& ctx = {});

/// `spatial-mean-to-pool`: ReduceMean over axes {2, 3} of a rank-4 float value becomes
/// GlobalAveragePool, a ReduceSum over them GlobalAveragePool times H * W (a Mul by a
/// constant scalar), then a Reshape to [N, C] without keepdims: the same mean or sum, in
/// the form a backend with pooling but no general reduction (the NPU) runs.
size_t runSpatialMeanToPool(Function& f, const PassContext& ctx = {});

/// `channel-shuffle-to-gather`: Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose
/// (0, 2, 1, 3, 4), Reshape back to [N, C, H, W] (ShuffleNet's channel shuffle) becomes
/// one Gather of the channels with constant indices: the same values, no rank-5 value.
size_t runChannelShuffleToGather(Function& f, const PassContext& ctx = {});

/// `collapse-batch-axes`: downstream of a LayerNormalization over the last axis of a value
/// of rank > 3 (a windowed transformer's [N, H, W, C] tokens), every node of rank > 3 that
/// works along the last axis (LayerNorm, Softmax, element-wise ops, MatMul, Concat along the
/// last axis, the Transpose of the last two axes) runs on its value with the leading axes
/// merged ([P, C], or [P, M, K] for a MatMul of two values), between Reshapes; a constant
/// operand that varies along more than the last axis is broadcast to the full shape.
size_t runCollapseBatchAxes(Function& f, const PassContext& ctx = {});

/// `moves-to-gather`: a chain of Reshape / Transpose / Slice / Concat / Gather (constant
/// indices) / Pad (by nothing) from one value of rank <= 3 to a value of rank <= 3 through
/// values of rank > 3 that moves whole runs of u values of its source (u divides the
/// source's last axis; found by running the chain on the source's element indices)
/// becomes Reshape(source, [rows, u]) -> Gather(axis 0, constant rows) -> Reshape.
size_t runMovesToGather(Function& f, const PassContext& ctx = {});

/// `fuse-activation`: Relu, or Clip, whose producer is a single-use float Conv, Gemm,
/// MatMul or Add becomes the producer's `activation` attribute (FusedActivation.h).
size_t runFuseActivation(Function& f, const PassContext& ctx = {});

/// `fuse-silu-gelu`: x * Sigmoid(x) -> Silu(x); torch's erf form of GELU
/// (x * 0.5 * (1 + Erf(x / sqrt 2)), any association and operand order, division by
/// sqrt 2 or multiplication by 1 / sqrt 2) -> Gelu(x).
size_t runFuseSiluGelu(Function& f, const PassContext& ctx = {});

/// `fuse-layernorm`: the decomposed layer normalisation of opsets below 17
/// (x - mean) / Sqrt(mean of the square + eps) [* scale] [+ bias], over trailing axes,
/// -> LayerNormalization(x, scale, bias) (scale ones when absent).
size_t runFuseLayerNorm(Function& f, const PassContext& ctx = {});

/// `conv1d-to-conv2d`: Conv on [N, C, T] (1-D, depthwise included) with constant weights
/// becomes Conv on [N, C, 1, T] with a 1 x k kernel, between Reshapes; the element-wise
/// nodes between such convolutions (Split / Concat of channels, BatchNormalization, unary
/// and binary element-wise ops, PRelu) are carried into rank 4 with them. With N = 1 a
/// Transpose(0, 2, 1) into or out of the region becomes a channel-keeping rank-4
/// Transpose of [T, C, 1, 1] (the bytes of the channels-last sequence on the NPU).
size_t runConv1dToConv2d(Function& f, const PassContext& ctx = {});

/// `split-to-slices`: a Split becomes one Slice per result.
size_t runSplitToSlices(Function& f, const PassContext& ctx = {});

/// `patches-to-sequence`: with one image, Reshape(x [1, C, H, W] -> [1, C, H*W]) followed by
/// Transpose(0, 2, 1) (a vision transformer's patch embedding) becomes Reshape [1, C, 1, H*W]
/// -> Transpose(3, 1, 2, 0) -> Reshape [1, H*W, C], and Transpose(0, 2, 1) of a sequence
/// [1, T, C] followed by a Reshape to [1, C, H, W] (H*W = T) becomes Reshape [T, C, 1, 1] ->
/// Transpose(3, 1, 2, 0) -> Reshape [1, C, H, W]: the same values through a transpose that
/// keeps the channel axis, which the NPU runs as a row permutation.
size_t runPatchesToSequence(Function& f, const PassContext& ctx = {});

/// `sink-token-concat`: a Concat along the tokens of [B, T, C] sequences with a constant
/// part and a computed one (a vision transformer's class token before its patches) moves
/// below its readers that work on each token alone -- LayerNormalization over the last
/// axis, Add / Sub / Mul / Div (the other operand taken per part: a Slice of the tokens,
/// or whole when it broadcasts along them), a Gather of one token -- which then run once
/// per part, and on below their readers in turn. Constant parts are folded (in float), and
/// every part gets its own int8 range.
size_t runSinkTokenConcat(Function& f, const PassContext& ctx = {});

/// `lower`: rewrites every node for which ctx.backend->shouldLower(node) is true and a
/// lowering exists into primitives: Gemm -> (Transpose) MatMul (Mul) (Add);
/// LayerNormalization -> ReduceMean/Sub/Mul/Add/Sqrt/Div; BatchNormalization -> Mul +
/// Add of folded constants; GlobalAveragePool <-> ReduceMean over the spatial axes;
/// HardSigmoid -> Mul/Add/Clip; HardSwish -> x * HardSigmoid form; Silu -> x *
/// Sigmoid(x); Gelu -> its erf form. No backend: nothing is lowered.
size_t runLower(Function& f, const PassContext& ctx = {});

/// Node kinds for which runLower has a lowering.
std::vector<NodeKind> lowerableKinds();

} // namespace ember
