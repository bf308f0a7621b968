#pragma once
/// \file
/// The operator table of the compiler's tests: small float graphs of every operator
/// family, each built on the shared graph builder. The backend table test
/// (tests/compiler/backends) runs every case, in float and in its quantized int8 form, on
/// every registered backend (interp, cpu, npu) and expects what each backend's
/// `supports` says: a supported function equals the interpreter (int8: bit for bit), an
/// unsupported one is refused naming the node. The cpu tests run the same cases with
/// several thread counts.

#include "GraphBuilder.h"

#include <functional>
#include <ostream>
#include <vector>

namespace ember::test {

/// One case: a name (a gtest parameter name) and what it builds.
struct OpCase {
  const char* name;
  std::function<void(GraphBuilder&)> build;
};

inline void PrintTo(const OpCase& c, std::ostream* os) {
  *os << c.name;
}

inline Attrs with(Attrs a, const char* k, AttrValue v) {
  a.set(k, std::move(v));
  return a;
}

/// Conv of x [n, c, h, w] with an [m, c / group, kh, kw] filter and a bias.
inline OpCase conv(const char* name, Shape x, int64_t m, int64_t group, Shape k, Attrs a) {
  return {name, [=](GraphBuilder& g) {
            Shape w = {m, x[1] / group};
            w.insert(w.end(), k.begin(), k.end());
            Attrs at = a;
            at.set("group", group);
            g.output("y", g.node(NodeKind::Conv, "conv",
                                 {g.input("x", x), g.constant("w", w), g.constant("b", {m})}, at));
          }};
}

/// Add(Conv(x), r) (Add(r, Conv(x)) when `convSecond`) with the Add's attributes `add`:
/// the cpu backend computes the Add in the convolution's epilogue. With `alsoOutput`
/// the convolution's result is an output too (so it must be kept: no fusion); with
/// `rIsX` the residual is the convolution's own input (x and the result then have the
/// same shape).
inline OpCase residual(const char* name, Shape x, int64_t m, Shape k, Attrs conv, Attrs add,
                       bool convSecond = false, bool alsoOutput = false, bool rIsX = false) {
  return {name, [=](GraphBuilder& g) {
            Shape w = {m, x[1]};
            w.insert(w.end(), k.begin(), k.end());
            NodeValue in = g.input("x", x);
            NodeValue c = g.node(NodeKind::Conv, "conv",
                                 {in, g.constant("w", w), g.constant("b", {m})}, conv);
            NodeValue r = rIsX ? in : g.input("r", c.dims());
            g.output("y", g.node(NodeKind::Add, "add",
                                 convSecond ? std::vector<NodeValue>{r, c}
                                            : std::vector<NodeValue>{c, r},
                                 add));
            if (alsoOutput)
              g.output("c", c);
          }};
}

/// ConvTranspose of x [n, c, spatial...] with a [c, mPerGroup, k...] filter and, with
/// `bias`, a bias of mPerGroup * group values.
inline OpCase convTranspose(const char* name, Shape x, int64_t mPerGroup, int64_t group, Shape k,
                            Attrs a, bool bias = true) {
  return {name, [=](GraphBuilder& g) {
            Shape w = {x[1], mPerGroup};
            w.insert(w.end(), k.begin(), k.end());
            Attrs at = a;
            at.set("group", group);
            std::vector<NodeValue> in = {g.input("x", x), g.constant("w", w)};
            if (bias)
              in.push_back(g.constant("b", {mPerGroup * group}));
            g.output("y", g.node(NodeKind::ConvTranspose, "convt", in, at));
          }};
}

/// Attributes of a Resize to `sizes` (from `scales` when given, as the importer writes
/// them): mode, coordinate transformation and nearest mode.
inline Attrs resizeAttrs(const char* mode, const char* transform, const char* nearest, Shape sizes,
                         std::vector<double> scales = {}) {
  Attrs a;
  a.set("mode", std::string(mode));
  a.set("coordinate_transformation_mode", std::string(transform));
  a.set("nearest_mode", std::string(nearest));
  a.set("sizes", std::vector<int64_t>(sizes.begin(), sizes.end()));
  if (!scales.empty())
    a.set("scales", scales);
  return a;
}

/// Conv(x) -> `mid` (built by `between` from the convolution's result) -> Conv: in the
/// int8 form the kinds without an int8 rule stay float between DequantizeLinear and
/// QuantizeLinear.
inline OpCase betweenConvs(const char* name,
                           std::function<NodeValue(GraphBuilder&, NodeValue)> mid) {
  return {name, [=](GraphBuilder& g) {
            NodeValue c1 = g.node(
                NodeKind::Conv, "c1",
                {g.input("x", {1, 4, 6, 6}), g.constant("w1", {8, 4, 3, 3}), g.constant("b1", {8})},
                ints({{"pads", {1, 1, 1, 1}}}));
            NodeValue m = mid(g, c1);
            g.output("y",
                     g.node(NodeKind::Conv, "c2",
                            {m, g.constant("w2", {6, m.dims()[1], 1, 1}), g.constant("b2", {6})}));
          }};
}

inline OpCase unary(NodeKind k, Attrs a = {}) {
  return {nodeKindName(k), [=](GraphBuilder& g) {
            g.output("y", g.node(k, "op", {g.input("x", {2, 3, 5, 7})}, a));
          }};
}

inline OpCase binary(const char* name, NodeKind k, Shape a, Shape b, Attrs at = {}) {
  return {name, [=](GraphBuilder& g) {
            g.output("y", g.node(k, "op", {g.input("a", a), g.input("b", b)}, at));
          }};
}

inline std::vector<OpCase> opCases() {
  std::vector<OpCase> c;
  for (NodeKind k : {NodeKind::Relu,     NodeKind::Sigmoid,   NodeKind::Tanh,  NodeKind::Exp,
                     NodeKind::Erf,      NodeKind::Neg,       NodeKind::Abs,   NodeKind::Floor,
                     NodeKind::Ceil,     NodeKind::HardSwish, NodeKind::Silu,  NodeKind::Gelu,
                     NodeKind::Softplus, NodeKind::Round,     NodeKind::Sign,  NodeKind::Sin,
                     NodeKind::Cos,      NodeKind::Tan,       NodeKind::Asin,  NodeKind::Atan,
                     NodeKind::Sinh,     NodeKind::Asinh,     NodeKind::Atanh, NodeKind::Softsign})
    c.push_back(unary(k));
  c.push_back(unary(NodeKind::Celu, with({}, "alpha", 0.8)));
  c.push_back(unary(NodeKind::ThresholdedRelu, with({}, "alpha", 0.3)));
  c.push_back(unary(NodeKind::Shrink, with(with({}, "lambd", 0.6), "bias", 0.2)));
  c.push_back({"CompareLogicWhere", [](GraphBuilder& g) {
                 NodeValue a = g.input("a", {3, 4, 5}), b = g.input("b", {4, 1});
                 NodeValue lt = g.node(NodeKind::Less, "lt", {a, b});
                 NodeValue ge = g.node(NodeKind::GreaterOrEqual, "ge", {a, g.input("c", {5})});
                 NodeValue both = g.node(NodeKind::And, "and", {lt, ge});
                 g.output("xor", g.node(NodeKind::Xor, "xor", {lt, ge}));
                 g.output("eq", g.node(NodeKind::Equal, "eq", {a, a}));
                 g.output("where", g.node(NodeKind::Where, "where", {both, a, b}));
               }});
  c.push_back(unary(NodeKind::LeakyRelu, with({}, "alpha", 0.1)));
  c.push_back(unary(NodeKind::Clip, with(with({}, "min", -0.5), "max", 0.75)));
  c.push_back(unary(NodeKind::HardSigmoid, with(with({}, "alpha", 0.3), "beta", 0.4)));
  c.push_back(unary(NodeKind::Elu, with({}, "alpha", 0.7)));
  c.push_back({"SqrtLogReciprocal", [](GraphBuilder& g) {
                 NodeValue x = g.node(NodeKind::Abs, "abs", {g.input("x", {4, 9})});
                 g.output("s", g.node(NodeKind::Sqrt, "s", {x}));
                 g.output("l", g.node(NodeKind::Log, "l", {x}));
                 g.output("r", g.node(NodeKind::Reciprocal, "r", {x}));
               }});
  c.push_back(binary("AddBroadcast", NodeKind::Add, {2, 3, 4, 5}, {3, 1, 5}));
  c.push_back(binary("AddRelu", NodeKind::Add, {2, 8, 6, 6}, {2, 8, 6, 6},
                     with({}, "activation", std::string("relu"))));
  c.push_back(binary("AddClip", NodeKind::Add, {1, 8, 5, 5}, {1, 8, 1, 1},
                     with(with(with({}, "activation", std::string("clip")), "activation_min", 0.0),
                          "activation_max", 0.6)));
  c.push_back(binary("SubOuter", NodeKind::Sub, {1, 4}, {3, 1}));
  c.push_back(binary("MulScalar", NodeKind::Mul, {3, 7, 11}, {}));
  c.push_back(binary("DivRows", NodeKind::Div, {6, 10}, {6, 1}));
  c.push_back(binary("Max", NodeKind::Max, {5, 6}, {6}));
  c.push_back(binary("Min", NodeKind::Min, {5, 6}, {5, 1}));
  c.push_back(binary("PRelu", NodeKind::PRelu, {2, 3, 4, 4}, {3, 1, 1}));
  c.push_back({"PowSquare", [](GraphBuilder& g) {
                 g.output("y", g.node(NodeKind::Pow, "p",
                                      {g.input("x", {3, 8}),
                                       g.constant("two", Tensor::scalar<float>(2.f))}));
               }});
  Attrs pad1 = ints({{"pads", {1, 1, 1, 1}}});
  c.push_back(conv("Conv3x3", {1, 5, 9, 9}, 13, 1, {3, 3}, pad1));
  c.push_back(conv(
      "Conv3x3Stride2Relu", {2, 6, 11, 10}, 17, 1, {3, 3},
      with(with(pad1, "strides", std::vector<int64_t>{2, 2}), "activation", std::string("relu"))));
  c.push_back(conv("ConvStem7x7", {1, 3, 32, 32}, 16, 1, {7, 7},
                   ints({{"pads", {3, 3, 3, 3}}, {"strides", {2, 2}}})));
  c.push_back(conv("Conv1x1", {1, 40, 7, 7}, 33, 1, {1, 1}, {}));
  c.push_back(conv("Conv1x1Stride2", {1, 16, 8, 8}, 24, 1, {1, 1}, ints({{"strides", {2, 2}}})));
  c.push_back(conv("ConvGrouped", {1, 6, 8, 8}, 10, 2, {3, 3}, pad1));
  c.push_back(conv("ConvDilated", {1, 4, 12, 12}, 9, 1, {3, 3},
                   ints({{"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}})));
  c.push_back(
      conv("ConvAsymmetricPads", {1, 3, 9, 7}, 5, 1, {2, 3}, ints({{"pads", {0, 1, 1, 2}}})));
  // Stride 1 with runs of few positions per panel (width 5: seven runs of a 32-position
  // panel), wide padding past the kernel, dilation, a kernel wider than the input, and
  // a stride of 2 in height only: the masked-load panel gather of AVX-512 hosts.
  c.push_back(conv("ConvNarrowRowsWidePads", {2, 3, 6, 5}, 9, 1, {3, 7},
                   ints({{"pads", {2, 4, 3, 5}}, {"dilations", {1, 2}}})));
  c.push_back(conv("ConvStrideHeightOnly", {1, 4, 9, 13}, 7, 1, {3, 3},
                   with(pad1, "strides", std::vector<int64_t>{2, 1})));
  // Wide planes (panels of positions within one output row): stride 1 and 2, a 7x7
  // stem-like kernel, dilation with groups and two images, asymmetric pads.
  c.push_back(conv("ConvWidePlane3x3", {1, 6, 24, 40}, 20, 1, {3, 3}, pad1));
  c.push_back(conv("ConvWidePlaneStem7x7Stride2", {1, 3, 30, 66}, 16, 1, {7, 7},
                   ints({{"pads", {3, 3, 3, 3}}, {"strides", {2, 2}}})));
  c.push_back(conv("ConvWidePlaneDilatedGrouped", {2, 8, 10, 44}, 12, 2, {3, 3},
                   ints({{"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}})));
  c.push_back(conv("ConvWidePlaneAsymmetricPads", {1, 4, 7, 50}, 9, 1, {2, 3},
                   ints({{"pads", {0, 1, 1, 2}}})));
  // Planes of few positions and many output channels: on AVX-512 hosts the cpu backend's
  // direct kernel (3x3; 49 positions in slices of 7, channels in blocks of 32), with two
  // images, a partial channel block in each of two groups, a stride, and 1x1; and its
  // channel-vectorised GEMM (1x1, 6x6: 36 positions in panels of 8).
  c.push_back(conv("ConvFewPositionsManyChannels", {2, 24, 7, 7}, 64, 1, {3, 3}, pad1));
  c.push_back(conv("ConvFewPositionsGrouped", {1, 8, 6, 6}, 96, 2, {3, 3}, pad1));
  c.push_back(conv("ConvFewPositionsStride2", {1, 12, 13, 13}, 64, 1, {3, 3},
                   with(pad1, "strides", std::vector<int64_t>{2, 2})));
  c.push_back(conv("ConvFewPositionsPointwise", {2, 24, 6, 6}, 64, 1, {1, 1}, {}));
  c.push_back(conv("ConvDirectPointwise", {2, 24, 7, 7}, 64, 1, {1, 1}, {}));
  // The cpu backend's direct kernel (channels in the vectors, inputs broadcast from a
  // zero-padded band of rows; AVX-512 hosts): a stem at stride 2 whose rows end in a
  // partial slice of positions; dilation with two images and rows enough for two bands;
  // two groups of one full channel block each; 1-D.
  c.push_back(conv("ConvDirectStem7x7Stride2", {1, 3, 40, 54}, 32, 1, {7, 7},
                   ints({{"pads", {3, 3, 3, 3}}, {"strides", {2, 2}}})));
  c.push_back(conv("ConvDirectDilatedTwoBands", {2, 32, 30, 62}, 32, 1, {3, 3},
                   ints({{"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}})));
  c.push_back(conv("ConvDirectGrouped", {1, 16, 14, 14}, 64, 2, {3, 3}, pad1));
  // Its narrow variant (14 positions x 16 channels): two groups of 16 channels with two
  // images, and 12 channels on rows of 26 (a partial slice and a partial block), also
  // with a residual Add.
  c.push_back(conv("ConvDirectNarrowGrouped", {2, 32, 14, 14}, 32, 2, {3, 3}, pad1));
  c.push_back(conv("ConvDirectNarrowPartial", {1, 8, 5, 26}, 12, 1, {3, 3}, pad1));
  c.push_back(residual("ConvDirectNarrowResidual", {1, 8, 5, 26}, 12, {3, 3}, pad1,
                       with({}, "activation", std::string("relu"))));
  c.push_back({"ConvDirect1D", [](GraphBuilder& g) {
                 g.output("y", g.node(NodeKind::Conv, "conv",
                                      {g.input("x", {2, 8, 60}), g.constant("w", {32, 8, 5})},
                                      ints({{"pads", {2, 2}}})));
               }});
  // The cpu backend's Winograd F(2x2, 3x3) kernel (3x3, stride 1, one group, at least 16
  // input and output channels, output rows of at least 14; AVX-512 hosts): a partial
  // 32-channel block of outputs, two images with odd rows and columns (partial 2x2
  // tiles), no padding at the narrowest width, and the residual Add with a relu in its
  // output transform.
  c.push_back(conv("ConvWinograd3x3", {1, 32, 20, 30}, 48, 1, {3, 3}, pad1));
  c.push_back(conv("ConvWinogradOddPlaneTwoImages", {2, 16, 15, 17}, 40, 1, {3, 3}, pad1));
  c.push_back(conv("ConvWinogradValidNarrowest", {1, 24, 17, 16}, 16, 1, {3, 3}, {}));
  c.push_back(residual("ConvWinogradResidualRelu", {1, 32, 14, 14}, 32, {3, 3}, pad1,
                       with({}, "activation", std::string("relu"))));
  // A residual Add after a convolution (the cpu backend fuses it into the convolution's
  // epilogue): the direct kernel with a relu and two images, the convolution as the
  // second operand on the packed-GEMM path with a partial panel, the channel-vectorised
  // kernel with a clip, the convolution's own input as the residual, and a convolution
  // whose result is also an output (not fused).
  const Attrs relu = with({}, "activation", std::string("relu"));
  c.push_back(residual("ConvResidualAddRelu", {2, 8, 14, 14}, 40, {3, 3}, pad1, relu));
  c.push_back(residual("ConvResidualAddConvSecond", {1, 16, 10, 10}, 24, {1, 1}, {}, {}, true));
  c.push_back(
      residual("ConvResidualAddClipPointwise", {2, 24, 6, 6}, 64, {1, 1}, {},
               with(with(with({}, "activation", std::string("clip")), "activation_min", 0.0),
                    "activation_max", 0.5)));
  c.push_back(residual("ConvResidualAddOfItsInput", {1, 32, 7, 7}, 32, {3, 3}, pad1, relu, false,
                       false, true));
  c.push_back(
      residual("ConvResidualAddConvAlsoOutput", {1, 8, 9, 9}, 32, {3, 3}, pad1, {}, false, true));
  c.push_back(conv("Depthwise", {1, 8, 10, 10}, 8, 8, {3, 3},
                   with(with(with(pad1, "activation", std::string("clip")), "activation_min", 0.0),
                        "activation_max", 6.0)));
  c.push_back(conv("DepthwiseStride2", {1, 8, 11, 11}, 8, 8, {3, 3},
                   with(pad1, "strides", std::vector<int64_t>{2, 2})));
  c.push_back(conv("DepthwiseMultiplier2", {2, 4, 6, 6}, 8, 4, {3, 3}, pad1));
  // The stride phases of the cpu backend's depthwise kernel: a 5x5 kernel at stride 2
  // with asymmetric pads, dilation, stride 3 (nine phases, some unread), a stride in
  // width only, a plane wider than one vector step and narrower than the kernel.
  // The cpu backend's 16-channel depthwise kernel (one output channel per input
  // channel, whole blocks of 16): batch 2 with a clip, a 5x5 kernel at stride 2 with
  // asymmetric pads, rows of more than 16 pixels (a transposed tile and a tail), dilation,
  // bands.
  c.push_back(conv("DepthwiseChannelVectors", {2, 32, 7, 7}, 32, 32, {3, 3},
                   with(with(with(pad1, "activation", std::string("clip")), "activation_min", 0.0),
                        "activation_max", 6.0)));
  c.push_back(conv("DepthwiseChannelVectors5x5Stride2", {1, 48, 14, 13}, 48, 48, {5, 5},
                   ints({{"pads", {2, 1, 1, 2}}, {"strides", {2, 2}}})));
  c.push_back(conv("DepthwiseChannelVectorsWideRows", {1, 16, 20, 18}, 16, 16, {3, 3},
                   with(pad1, "strides", std::vector<int64_t>{2, 2})));
  c.push_back(conv("DepthwiseChannelVectorsDilated", {1, 32, 11, 11}, 32, 32, {3, 3},
                   ints({{"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}})));
  // 80 x 80: bands of 24 output rows (ConvScratch.h's 256 KiB), the last one of 8.
  c.push_back(conv("DepthwiseChannelVectorsBands", {1, 16, 80, 80}, 16, 16, {3, 3}, pad1));
  c.push_back(conv("Depthwise5x5Stride2AsymmetricPads", {1, 6, 13, 12}, 6, 6, {5, 5},
                   ints({{"pads", {2, 1, 1, 2}}, {"strides", {2, 2}}})));
  c.push_back(conv("DepthwiseDilated", {1, 5, 12, 19}, 5, 5, {3, 3},
                   ints({{"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}})));
  c.push_back(conv("DepthwiseStride3Kernel2", {1, 4, 11, 14}, 4, 4, {2, 2},
                   ints({{"pads", {1, 0, 0, 1}}, {"strides", {3, 3}}})));
  c.push_back(conv("DepthwiseStrideWidthOnlyWide", {1, 3, 5, 37}, 6, 3, {3, 3},
                   ints({{"pads", {1, 1, 1, 1}}, {"strides", {1, 2}}})));
  c.push_back(
      conv("DepthwiseNarrowWidePads", {2, 2, 3, 2}, 2, 2, {3, 5}, ints({{"pads", {2, 3, 1, 4}}})));
  c.push_back({"Conv1D", [](GraphBuilder& g) {
                 g.output("y", g.node(NodeKind::Conv, "conv",
                                      {g.input("x", {2, 4, 20}), g.constant("w", {6, 4, 5})},
                                      ints({{"pads", {2, 1}}, {"strides", {2}}})));
               }});
  // 3-D convolutions (the cpu backend's ember_conv3d_f32 follows each path of the
  // interpreter's GEMM core): strided with a relu on rows of 20 outputs (a vector of 16
  // and one of 4), grouped and dilated with asymmetric pads and a stride in width,
  // depthwise (multiplier 2) with a clip, one output channel (its gemv of one row), one
  // output position (its dot), and 324 products per output (two chains of 256).
  c.push_back(conv("Conv3d", {1, 3, 5, 6, 20}, 4, 1, {3, 3, 3},
                   with(ints({{"pads", {1, 1, 1, 1, 1, 1}}, {"strides", {1, 2, 1}}}), "activation",
                        std::string("relu"))));
  c.push_back(
      conv("Conv3dGroupedDilated", {2, 4, 5, 5, 9}, 6, 2, {2, 3, 3},
           ints({{"pads", {0, 1, 1, 1, 0, 1}}, {"dilations", {1, 2, 1}}, {"strides", {1, 1, 2}}})));
  c.push_back(conv("Conv3dDepthwise", {1, 4, 4, 5, 5}, 8, 4, {3, 3, 3},
                   with(with(with(ints({{"pads", {1, 1, 1, 1, 1, 1}}, {"strides", {2, 2, 2}}}),
                                  "activation", std::string("clip")),
                             "activation_min", -0.25),
                        "activation_max", 0.5)));
  c.push_back(conv("Conv3dOneOutputChannel", {1, 3, 4, 4, 4}, 1, 1, {3, 3, 3},
                   ints({{"pads", {1, 1, 1, 1, 1, 1}}})));
  c.push_back(conv("Conv3dOnePosition", {2, 3, 3, 3, 3}, 5, 1, {3, 3, 3}, {}));
  c.push_back(conv("Conv3dLongChains", {1, 12, 3, 4, 4}, 5, 1, {3, 3, 3},
                   ints({{"pads", {1, 1, 1, 1, 1, 1}}})));
  // Weights known only at run time (graph inputs): 2-D grouped with a bias, 1-D strided.
  c.push_back({"ConvRunTimeWeights", [](GraphBuilder& g) {
                 g.output("y2", g.node(NodeKind::Conv, "c2",
                                       {g.input("x", {1, 4, 7, 6}), g.input("w", {6, 2, 3, 3}),
                                        g.input("b", {6})},
                                       with(ints({{"pads", {1, 1, 1, 1}}}), "group", int64_t(2))));
                 g.output("y1", g.node(NodeKind::Conv, "c1",
                                       {g.input("z", {2, 3, 11}), g.input("v", {5, 3, 3})},
                                       ints({{"strides", {2}}})));
               }});
  c.push_back({"Pools3d", [](GraphBuilder& g) {
                 NodeValue x = g.input("x", {1, 2, 5, 6, 7});
                 Attrs w = ints({{"kernel_shape", {2, 3, 3}},
                                 {"strides", {2, 2, 1}},
                                 {"pads", {0, 1, 1, 1, 1, 0}},
                                 {"dilations", {1, 1, 2}}});
                 g.output("max", g.node(NodeKind::MaxPool, "max", {x}, w));
                 Attrs avg = ints({{"kernel_shape", {2, 3, 3}},
                                   {"strides", {2, 2, 1}},
                                   {"pads", {0, 1, 1, 1, 1, 0}}});
                 g.output("avg", g.node(NodeKind::AveragePool, "avg", {x}, avg));
                 g.output("avgpad", g.node(NodeKind::AveragePool, "avgpad", {x},
                                           with(avg, "count_include_pad", int64_t(1))));
               }});
  // ConvTranspose (the cpu backend's ember_conv_transpose_f32): stride 2 with pads and
  // output_padding, grouped with dilation and asymmetric pads, 1-D without a bias, 3-D,
  // 300 input channels (two chains), and 1x1 filters of one output channel (the
  // interpreter's gemv of one row, and its dot on a single input position).
  c.push_back(convTranspose(
      "ConvTransposeStride2OutputPadding", {1, 4, 5, 6}, 3, 1, {3, 3},
      ints({{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}})));
  c.push_back(
      convTranspose("ConvTransposeGroupedDilated", {2, 6, 4, 4}, 2, 3, {3, 3},
                    ints({{"strides", {1, 2}}, {"pads", {0, 1, 2, 0}}, {"dilations", {2, 1}}})));
  c.push_back(convTranspose("ConvTranspose1D", {1, 3, 7}, 5, 1, {4},
                            ints({{"strides", {3}}, {"pads", {1, 2}}}), false));
  c.push_back(convTranspose("ConvTranspose3D", {1, 2, 3, 3, 3}, 2, 1, {2, 2, 2},
                            ints({{"strides", {2, 2, 2}}})));
  c.push_back(convTranspose("ConvTransposeLongChains", {1, 300, 2, 3}, 2, 1, {2, 2},
                            ints({{"strides", {2, 2}}})));
  c.push_back(convTranspose("ConvTranspose1x1OneChannel", {1, 4, 3, 5}, 1, 1, {1, 1},
                            ints({{"strides", {2, 2}}})));
  c.push_back(convTranspose("ConvTranspose1x1OnePosition", {2, 20, 1, 1}, 1, 1, {1, 1}, {}));
  // Resize (the cpu backend's ember_resize_f32): nearest in every coordinate
  // transformation and nearest mode, up by 2, by non-integer scales and down; linear in
  // every transformation, with a dimension of one output, a crop with extrapolation, the
  // channels resized too, and over three trailing dimensions.
  c.push_back(
      {"ResizeNearest", [](GraphBuilder& g) {
         NodeValue x = g.input("x", {1, 2, 5, 6});
         auto out = [&](const char* name, Attrs a) {
           g.output(name, g.node(NodeKind::Resize, name, {x}, std::move(a)));
         };
         out("up2", resizeAttrs("nearest", "asymmetric", "floor", {1, 2, 10, 12}, {1, 1, 2, 2}));
         out("half", resizeAttrs("nearest", "half_pixel", "round_prefer_floor", {1, 2, 7, 10},
                                 {1, 1, 1.5, 1.75}));
         out("corners", resizeAttrs("nearest", "align_corners", "round_prefer_ceil", {1, 2, 8, 4}));
         out("torch", resizeAttrs("nearest", "pytorch_half_pixel", "ceil", {1, 2, 3, 9}));
         out("tfnn", resizeAttrs("nearest", "tf_half_pixel_for_nn", "round_prefer_floor",
                                 {1, 2, 3, 9}, {1, 1, 0.6, 1.5}));
       }});
  c.push_back(
      {"ResizeLinear", [](GraphBuilder& g) {
         NodeValue x = g.input("x", {1, 2, 5, 6});
         auto out = [&](const char* name, Attrs a) {
           g.output(name, g.node(NodeKind::Resize, name, {x}, std::move(a)));
         };
         const char* fl = "round_prefer_floor";
         out("up2", resizeAttrs("linear", "half_pixel", fl, {1, 2, 10, 12}, {1, 1, 2, 2}));
         out("corners", resizeAttrs("linear", "align_corners", fl, {1, 2, 7, 9}));
         out("asym", resizeAttrs("linear", "asymmetric", fl, {1, 2, 7, 15}, {1, 1, 1.5, 2.5}));
         out("torch", resizeAttrs("linear", "pytorch_half_pixel", fl, {1, 2, 1, 9}));
         Attrs crop = resizeAttrs("linear", "tf_crop_and_resize", fl, {1, 2, 4, 7});
         crop.set("roi", std::vector<double>{0, 0, 0.1, -0.2, 1, 1, 0.9, 1.3});
         crop.set("extrapolation_value", 0.5);
         out("crop", crop);
         out("channels", resizeAttrs("linear", "half_pixel", fl, {1, 3, 4, 6}));
       }});
  c.push_back({"Resize3d", [](GraphBuilder& g) {
                 NodeValue x = g.input("x", {1, 2, 3, 4, 5});
                 g.output("linear", g.node(NodeKind::Resize, "linear", {x},
                                           resizeAttrs("linear", "half_pixel", "round_prefer_floor",
                                                       {1, 2, 5, 6, 9})));
                 g.output("nearest", g.node(NodeKind::Resize, "nearest", {x},
                                            resizeAttrs("nearest", "asymmetric", "floor",
                                                        {1, 2, 6, 8, 10}, {1, 1, 2, 2, 2})));
               }});
  // PRelu with a constant slope per channel ([C, 1, 1]) and along the last axis ([C]).
  c.push_back(
      {"PReluConstantSlopes", [](GraphBuilder& g) {
         g.output("channels", g.node(NodeKind::PRelu, "pc",
                                     {g.input("x", {2, 8, 5, 5}), g.constant("s", {8, 1, 1})}));
         g.output("last",
                  g.node(NodeKind::PRelu, "pl", {g.input("z", {2, 6, 8}), g.constant("t", {8})}));
       }});
  // Between int8 convolutions: PRelu (int8 per channel), bilinear upsampling by 2 (int8,
  // docs/numerics.md 4.4) and an align_corners one (no int8 rule: float), ConvTranspose.
  c.push_back(betweenConvs("ConvPReluConv", [](GraphBuilder& g, NodeValue v) {
    return g.node(NodeKind::PRelu, "prelu", {v, g.constant("slope", {8, 1, 1}, 0.f, 0.5f)});
  }));
  c.push_back(betweenConvs("ConvResizeConv", [](GraphBuilder& g, NodeValue v) {
    return g.node(
        NodeKind::Resize, "up", {v},
        resizeAttrs("linear", "half_pixel", "round_prefer_floor", {1, 8, 12, 12}, {1, 1, 2, 2}));
  }));
  c.push_back(betweenConvs("ConvAlignCornersResizeConv", [](GraphBuilder& g, NodeValue v) {
    return g.node(
        NodeKind::Resize, "up", {v},
        resizeAttrs("linear", "align_corners", "round_prefer_floor", {1, 8, 12, 12}, {1, 1, 2, 2}));
  }));
  // A ConvTranspose whose taps overlap (k = 3, s = 2): convtranspose-to-depthtospace makes
  // it a Conv of its phases and a DepthToSpace (int8 from there).
  c.push_back(betweenConvs("ConvConvTransposeConv", [](GraphBuilder& g, NodeValue v) {
    return g.node(NodeKind::ConvTranspose, "up",
                  {v, g.constant("wt", {8, 4, 3, 3}), g.constant("bt", {4})},
                  ints({{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}}));
  }));
  // Upsampling in int8: nearest x2 picks codes; a k = s = 2 ConvTranspose (5 output
  // channels) becomes a 1 x 1 Conv and a DepthToSpace (convtranspose-to-depthtospace).
  c.push_back(betweenConvs("ConvNearestResizeConv", [](GraphBuilder& g, NodeValue v) {
    return g.node(NodeKind::Resize, "up", {v},
                  resizeAttrs("nearest", "asymmetric", "floor", {1, 8, 12, 12}, {1, 1, 2, 2}));
  }));
  c.push_back(betweenConvs("ConvUpsamplingConvTransposeConv", [](GraphBuilder& g, NodeValue v) {
    return g.node(NodeKind::ConvTranspose, "up",
                  {v, g.constant("wt", {8, 5, 2, 2}), g.constant("bt", {5})},
                  ints({{"strides", {2, 2}}}));
  }));
  c.push_back({"GemmBiasRelu", [](GraphBuilder& g) {
                 g.output("y", g.node(NodeKind::Gemm, "gemm",
                                      {g.input("a", {9, 20}), g.constant("b", {20, 7}),
                                       g.constant("c", {7})},
                                      with({}, "activation", std::string("relu"))));
               }});
  c.push_back({"GemmOneRow", [](GraphBuilder& g) {
                 g.output("y", g.node(NodeKind::Gemm, "gemm",
                                      {g.input("a", {1, 300}), g.constant("b", {300, 150}),
                                       g.constant("c", {1, 150})}));
               }});
  c.push_back(
      {"GemmFullC", [](GraphBuilder& g) {
         g.output("y", g.node(NodeKind::Gemm, "gemm",
                              {g.input("a", {5, 4}), g.input("b", {4, 6}), g.input("c", {5, 6})}));
       }});
  c.push_back(binary("MatMulBatched", NodeKind::MatMul, {2, 3, 5, 6}, {2, 3, 6, 4}));
  c.push_back(binary("MatMulBroadcastB", NodeKind::MatMul, {4, 5, 6}, {6, 3}));
  c.push_back(binary("MatMulVector", NodeKind::MatMul, {7}, {7, 3}));
  c.push_back(
      {"MaxPool", [](GraphBuilder& g) {
         g.output(
             "y",
             g.node(NodeKind::MaxPool, "pool", {g.input("x", {1, 4, 11, 11})},
                    ints({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}})));
       }});
  c.push_back({"AveragePoolPadCounted", [](GraphBuilder& g) {
                 g.output("y", g.node(NodeKind::AveragePool, "pool", {g.input("x", {2, 3, 7, 7})},
                                      with(ints({{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}}),
                                           "count_include_pad", int64_t(1))));
               }});
  c.push_back(
      {"AveragePool", [](GraphBuilder& g) {
         g.output(
             "y",
             g.node(NodeKind::AveragePool, "pool", {g.input("x", {1, 3, 8, 8})},
                    ints({{"kernel_shape", {3, 2}}, {"strides", {2, 2}}, {"pads", {1, 0, 1, 1}}})));
       }});
  c.push_back({"GlobalPools", [](GraphBuilder& g) {
                 NodeValue x = g.input("x", {2, 5, 6, 7});
                 g.output("avg", g.node(NodeKind::GlobalAveragePool, "gap", {x}));
                 g.output("max", g.node(NodeKind::GlobalMaxPool, "gmp", {x}));
               }});
  c.push_back({"SoftmaxAxes", [](GraphBuilder& g) {
                 NodeValue x = g.input("x", {3, 4, 10});
                 g.output("last", g.node(NodeKind::Softmax, "s1", {x}));
                 g.output("mid",
                          g.node(NodeKind::Softmax, "s2", {x}, with({}, "axis", int64_t(1))));
                 g.output("log", g.node(NodeKind::LogSoftmax, "s3", {x}));
               }});
  c.push_back({"LayerNorm", [](GraphBuilder& g) {
                 g.output("y", g.node(NodeKind::LayerNormalization, "ln",
                                      {g.input("x", {2, 5, 16}), g.constant("s", {16}),
                                       g.constant("b", {16})},
                                      with({}, "epsilon", 1e-5)));
               }});
  c.push_back({"ChannelLayerNorm", [](GraphBuilder& g) {
                 // Each pixel's 6 channels of an image; a sequence's 5 channels, no bias.
                 g.output("y", g.node(NodeKind::ChannelLayerNormalization, "ln",
                                      {g.input("x", {2, 6, 3, 4}), g.constant("s", {6}),
                                       g.constant("b", {6})},
                                      with({}, "epsilon", 1e-5)));
                 g.output("z", g.node(NodeKind::ChannelLayerNormalization, "seq",
                                      {g.input("t", {2, 5, 7}), g.constant("s5", {5})}));
               }});
  c.push_back({"BatchNorm", [](GraphBuilder& g) {
                 Tensor var = randomTensor({6}, g.rng, 0.1f, 2.f);
                 g.output("y", g.node(NodeKind::BatchNormalization, "bn",
                                      {g.input("x", {2, 6, 5, 4}), g.constant("s", {6}),
                                       g.constant("b", {6}), g.constant("m", {6}),
                                       g.constant("v", std::move(var))},
                                      with({}, "epsilon", 1e-3)));
               }});
  c.push_back({"Reductions", [](GraphBuilder& g) {
                 NodeValue x = g.input("x", {2, 3, 4, 5});
                 g.output("mean", g.node(NodeKind::ReduceMean, "r1", {x},
                                         with(ints({{"axes", {-1}}}), "keepdims", int64_t(1))));
                 g.output("sum", g.node(NodeKind::ReduceSum, "r2", {x},
                                        with(ints({{"axes", {1, 3}}}), "keepdims", int64_t(0))));
                 g.output("max", g.node(NodeKind::ReduceMax, "r3", {x}));
                 g.output("l2", g.node(NodeKind::ReduceL2, "r4", {x}, ints({{"axes", {0, 2}}})));
                 g.output("l1", g.node(NodeKind::ReduceL1, "r5", {x}, ints({{"axes", {1}}})));
                 g.output("prod", g.node(NodeKind::ReduceProd, "r6", {x}, ints({{"axes", {2}}})));
                 g.output("argmax",
                          g.node(NodeKind::ArgMax, "a1", {x}, with({}, "axis", int64_t(2))));
                 Attrs last = with({}, "axis", int64_t(-1));
                 last.set("select_last_index", int64_t(1));
                 last.set("keepdims", int64_t(0));
                 g.output("argmin", g.node(NodeKind::ArgMin, "a2", {x}, last));
               }});
  c.push_back(
      {"TransposeSliceConcat", [](GraphBuilder& g) {
         NodeValue x = g.input("x", {2, 3, 4, 5});
         NodeValue t = g.node(NodeKind::Transpose, "t", {x}, ints({{"perm", {0, 2, 3, 1}}}));
         NodeValue s = g.node(
             NodeKind::Slice, "s", {x},
             ints({{"starts", {0, 1, 3, 0}}, {"ends", {2, 3, -1, 5}}, {"steps", {1, 1, -2, 2}}}));
         g.output("t", t);
         g.output("s", s);
         g.output("c", g.node(NodeKind::Concat, "c", {x, g.input("z", {2, 2, 4, 5}), x},
                              with({}, "axis", int64_t(1))));
       }});
  c.push_back(
      {"PadGatherSplitExpand", [](GraphBuilder& g) {
         NodeValue x = g.input("x", {3, 4, 5});
         g.output("pad", g.node(NodeKind::Pad, "pad", {x},
                                with(ints({{"pads", {0, 1, -1, 1, 2, 2}}}), "value", 0.5)));
         g.output("gather",
                  g.node(NodeKind::Gather, "gather",
                         {x, g.constant("idx", Tensor::fromVector<int64_t>({2, 2}, {3, -1, 0, 2}))},
                         with({}, "axis", int64_t(1))));
         Node* split = g.f->create(NodeKind::Split, "split", {x},
                                   with(ints({{"split", {1, 4}}}), "axis", int64_t(2)));
         g.output("s0", split->result(0));
         g.output("s1", split->result(1));
         g.output("exp", g.node(NodeKind::Expand, "e", {g.input("v", {4, 1})},
                                ints({{"shape", {2, 4, 3}}})));
       }});
  c.push_back(
      {"ReshapeViews", [](GraphBuilder& g) {
         NodeValue x = g.input("x", {2, 6, 4});
         NodeValue r = g.node(NodeKind::Reshape, "r", {x}, ints({{"shape", {12, 4}}}));
         g.output("r", r);
         g.output("m", g.node(NodeKind::Relu, "relu",
                              {g.node(NodeKind::Reshape, "r2", {r}, ints({{"shape", {4, 12}}}))}));
       }});
  // Shapes the NPU takes (rank 4 with 16-channel multiples, rank-2 matrices with
  // constant weights), so that its layers are in the table too.
  c.push_back(
      {"NpuConvConcatPad", [](GraphBuilder& g) {
         NodeValue x = g.input("x", {1, 16, 8, 8});
         Attrs k3 = ints({{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}});
         NodeValue a = g.node(NodeKind::Conv, "ca",
                              {x, g.constant("wa", {16, 16, 3, 3}), g.constant("ba", {16})},
                              with(k3, "activation", std::string("relu")));
         NodeValue b = g.node(NodeKind::Conv, "cb",
                              {x, g.constant("wb", {16, 16, 1, 1}), g.constant("bb", {16})});
         NodeValue cat = g.node(NodeKind::Concat, "cat", {a, b}, with({}, "axis", int64_t(1)));
         NodeValue pad =
             g.node(NodeKind::Pad, "pad", {cat}, ints({{"pads", {0, 0, 1, 1, 0, 0, 1, 1}}}));
         g.output("y", g.node(NodeKind::Reshape, "rows", {pad}, ints({{"shape", {1, 32, 5, 20}}})));
       }});
  c.push_back(
      {"NpuChannelSliceGather", [](GraphBuilder& g) {
         // A channel split and a channel permutation (ShuffleNet's, after the pass).
         // After a convolution: data movement alone stays float when quantized.
         NodeValue x = g.input("x", {1, 16, 4, 4});
         NodeValue cv = g.node(NodeKind::Conv, "c",
                               {x, g.constant("w", {40, 16, 1, 1}), g.constant("b", {40})});
         NodeValue s = g.node(
             NodeKind::Slice, "split", {cv},
             ints({{"starts", {0, 8, 0, 0}}, {"ends", {1, 32, 4, 4}}, {"steps", {1, 1, 1, 1}}}));
         std::vector<int64_t> perm;
         for (int64_t j = 0; j < 12; ++j)
           perm.insert(perm.end(), {j, 12 + j});
         g.output("y", g.node(NodeKind::Gather, "shuffle",
                              {s, g.constant("perm", Tensor::fromVector<int64_t>({24}, perm))},
                              with({}, "axis", int64_t(1))));
       }});
  c.push_back({"NpuResidualMul", [](GraphBuilder& g) {
                 NodeValue x = g.input("x", {1, 16, 6, 6});
                 NodeValue r = g.node(NodeKind::Relu, "relu", {x});
                 NodeValue s = g.node(NodeKind::Add, "add", {r, x});
                 g.output("y", g.node(NodeKind::Mul, "mul", {s, g.input("z", {1, 16, 6, 6})}));
               }});
  c.push_back({"NpuFlattenMatMul", [](GraphBuilder& g) {
                 NodeValue x = g.input("x", {2, 16, 4, 4});
                 NodeValue r = g.node(NodeKind::Reshape, "flat", {x}, ints({{"shape", {2, 256}}}));
                 NodeValue mm = g.node(NodeKind::MatMul, "mm", {r, g.constant("w", {256, 32})});
                 g.output("y", g.node(NodeKind::Gemm, "fc",
                                      {mm, g.constant("w2", {32, 10}), g.constant("b2", {10})}));
               }});
  c.push_back(
      {"NpuAttentionHeads", [](GraphBuilder& g) {
         // [T, B, E] split into heads of 16, their outer axes swapped, scaled (after an
         // Add, as in an encoder layer).
         NodeValue x =
             g.node(NodeKind::Add, "add", {g.input("x", {5, 2, 32}), g.input("z", {5, 2, 32})});
         NodeValue h = g.node(NodeKind::Reshape, "heads", {x}, ints({{"shape", {5, 4, 16}}}));
         NodeValue t = g.node(NodeKind::Transpose, "t", {h}, ints({{"perm", {1, 0, 2}}}));
         g.output("y", g.node(NodeKind::Mul, "scale", {t, g.scalar("s", 0.25f)}));
       }});
  c.push_back({"NpuSequenceMean", [](GraphBuilder& g) {
                 // A transformer classifier's pooling: the mean over the tokens.
                 NodeValue x = g.node(NodeKind::Add, "add",
                                      {g.input("x", {2, 6, 32}), g.input("z", {2, 6, 32})});
                 g.output("y", g.node(NodeKind::ReduceMean, "mean", {x},
                                      with(ints({{"axes", {1}}}), "keepdims", int64_t(0))));
               }});
  c.push_back({"NpuSoftmaxLines", [](GraphBuilder& g) {
                 // Softmax along a sequence's channels (the quantizer makes it int8 only
                 // after an int8 producer, here an Add): the NPU's softmax instruction.
                 NodeValue x = g.node(NodeKind::Add, "add",
                                      {g.input("x", {2, 3, 20}), g.input("z", {2, 3, 20})});
                 g.output("y", g.node(NodeKind::Softmax, "softmax", {x}));
               }});
  c.push_back({"NpuLayerNormLines", [](GraphBuilder& g) {
                 // LayerNormalization along a sequence's channels: the lnorm instruction.
                 NodeValue x = g.node(NodeKind::Add, "add",
                                      {g.input("x", {2, 3, 24}), g.input("z", {2, 3, 24})});
                 g.output("y", g.node(NodeKind::LayerNormalization, "ln",
                                      {x, g.constant("s", {24}), g.constant("b", {24})},
                                      with({}, "epsilon", 1e-5)));
               }});
  c.push_back({"NpuChannelLayerNorm", [](GraphBuilder& g) {
                 // LayerNormalization of each pixel's channels (ConvNeXt's, after
                 // sink-permutation): a line per pixel of the NCHWc image.
                 NodeValue x = g.node(NodeKind::Add, "add",
                                      {g.input("x", {2, 24, 3, 5}), g.input("z", {2, 24, 3, 5})});
                 g.output("y", g.node(NodeKind::ChannelLayerNormalization, "ln",
                                      {x, g.constant("s", {24}), g.constant("b", {24})},
                                      with({}, "epsilon", 1e-6)));
               }});
  return c;
}

} // namespace ember::test
