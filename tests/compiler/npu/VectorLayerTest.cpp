// The vector and data-movement layers (Add, Rescale, Lut, Relu/Clip, MaxPool,
// AveragePool, GlobalAveragePool, GlobalMaxPool, Concat, Pad, Reshape, bilinear Resize)
// and multi-layer chains: compiled for both descriptions, simulated, and compared bit for bit with
// the interpreter's int8 kernels (a separate implementation of docs/numerics.md); where built, the
// cpu backend must give the interpreter's outputs bit for bit as well.
#include "NpuTestUtil.h"

#include "ember/graph/attrs/FusedActivation.h"
#include "ember/isa/roles.h"
#include "ember/isa/timing.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

namespace ember::npu::test {
namespace {

using Builder = std::function<void(G&)>;

struct VecCase {
  const char* name;
  Builder build;
};

using ember::test::ints;

NodeValue conv3x3(G& g, NodeValue x, int64_t C, int64_t K, int64_t H, int64_t W, const char* nm) {
  Attrs a = ints({{"pads", {1, 1, 1, 1}}, {"kernel_shape", {3, 3}}});
  FusedActivation fa;
  fa.kind = FusedActivation::Kind::Relu;
  fa.writeTo(a);
  return g.node(
      NodeKind::Conv, nm,
      {x, g.weights(std::string(nm) + "_w", {K, C, 3, 3}, 0), g.bias(std::string(nm) + "_b", K)}, a,
      {1, K, H, W}, 0.07f, -20);
}

/// A bilinear Resize of x (NCHW, scale 0.06, zero point -7) to H x W under `ctm`, scales
/// given as attributes when `withScales` (else sizes only).
NodeValue bilinear(G& g, NodeValue x, int64_t H, int64_t W, const char* ctm, bool withScales) {
  const Shape d = x.dims();
  Attrs a;
  a.set("mode", std::string("linear"));
  a.set("coordinate_transformation_mode", std::string(ctm));
  a.set("nearest_mode", std::string("round_prefer_floor"));
  a.set("sizes", std::vector<int64_t>{d[0], d[1], H, W});
  if (withScales)
    a.set("scales", std::vector<double>{1, 1, double(H) / double(d[2]), double(W) / double(d[3])});
  return g.node(NodeKind::Resize, "up", {x}, a, {d[0], d[1], H, W}, 0.06f, -7);
}

const VecCase kCases[] = {
    // Bilinear upsampling by whole factors (docs/numerics.md 4.4): several channel
    // counts (one block, more than one, a partial block), odd H and W, batch 2.
    {"bilinear_x2_half_pixel",
     [](G& g) {
       g.output("y",
                bilinear(g, g.input("x", {1, 20, 7, 9}, 0.06f, -7), 14, 18, "half_pixel", true));
     }},
    {"bilinear_x2_pytorch_sizes",
     [](G& g) {
       g.output("y", bilinear(g, g.input("x", {2, 5, 6, 5}, 0.06f, -7), 12, 10,
                              "pytorch_half_pixel", false));
     }},
    {"bilinear_x3x2_16ch",
     [](G& g) {
       g.output("y",
                bilinear(g, g.input("x", {1, 16, 5, 7}, 0.06f, -7), 15, 14, "half_pixel", true));
     }},
    {"bilinear_x4_33ch",
     [](G& g) {
       g.output("y",
                bilinear(g, g.input("x", {1, 33, 3, 5}, 0.06f, -7), 12, 20, "half_pixel", true));
     }},
    {"bilinear_x2_one_pixel_wide",
     [](G& g) {
       g.output("y", bilinear(g, g.input("x", {1, 3, 4, 1}, 0.06f, -7), 8, 2, "half_pixel", true));
     }},
    {"add_relu",
     [](G& g) {
       NodeValue a = g.input("a", {1, 20, 7, 9}, 0.05f, 3);
       NodeValue b = g.input("b", {1, 20, 7, 9}, 0.11f, -9);
       Attrs at;
       FusedActivation fa;
       fa.kind = FusedActivation::Kind::Relu;
       fa.writeTo(at);
       g.output("y", g.node(NodeKind::Add, "add", {a, b}, at, {1, 20, 7, 9}, 0.09f, -4));
     }},
    {"add_plain_rank2",
     [](G& g) {
       NodeValue a = g.input("a", {3, 70}, 0.02f, 0);
       NodeValue b = g.input("b", {3, 70}, 0.03f, 17);
       g.output("y", g.node(NodeKind::Add, "add", {a, b}, {}, {3, 70}, 0.04f, 2));
     }},
    {"add_per_channel",
     [](G& g) {
       // A per-channel offset on the first operand (multipliers follow the operands), a
       // full second one across several tiles, batch 2, fused ReLU.
       NodeValue a = g.input("a", {2, 40, 1, 1}, 0.03f, -20);
       NodeValue b = g.input("b", {2, 40, 30, 30}, 0.05f, 3);
       Attrs at;
       FusedActivation fa;
       fa.kind = FusedActivation::Kind::Relu;
       fa.writeTo(at);
       g.output("y", g.node(NodeKind::Add, "add", {a, b}, at, {2, 40, 30, 30}, 0.06f, -7));
     }},
    {"matmul_sequence",
     [](G& g) {
       // A transformer's projection: [B, T, C] x constant [C, K], then a residual Add and
       // a Reshape to rank 2 (an alias: the same NCHWc bytes).
       NodeValue x = g.input("x", {2, 5, 40}, 0.05f, 3);
       NodeValue w = g.weights("w", {40, 40}, 1);
       NodeValue p = g.node(NodeKind::MatMul, "proj", {x, w}, {}, {2, 5, 40}, 0.1f, -2);
       NodeValue r = g.node(NodeKind::Add, "res", {x, p}, {}, {2, 5, 40}, 0.12f, 1);
       g.output("y", g.node(NodeKind::Reshape, "flat", {r}, ints({{"shape", {10, 40}}}), {10, 40},
                            0.12f, 1));
     }},
    {"attention_heads",
     [](G& g) {
       // How sequence-first attention reaches its heads: [T, B, E] split into heads of 32
       // channels ([T, B * H, 32], an alias on 16 and 32 lanes), the outer axes swapped ([B * H, T,
       // 32], strided row copies), the queries scaled by a constant scalar, and the way back; a [B,
       // T, E] -> [T, B, E] swap whose channels do not fill their last block; a scalar Add; swaps
       // of an axis of length 1 (aliases).
       NodeValue x = g.input("x", {5, 2, 64}, 0.05f, 3);
       NodeValue h = g.node(NodeKind::Reshape, "heads", {x}, ints({{"shape", {5, 4, 32}}}),
                            {5, 4, 32}, 0.05f, 3);
       NodeValue tr = g.node(NodeKind::Transpose, "swap", {h}, ints({{"perm", {1, 0, 2}}}),
                             {4, 5, 32}, 0.05f, 3);
       Tensor sc(ElemKind::Int8, {});
       sc.data<int8_t>()[0] = 57;
       sc.mutableType().quant = perTensor(0.004f, -20);
       NodeValue k = g.constant("scale", std::move(sc));
       NodeValue q = g.node(NodeKind::Mul, "scaled", {tr, k}, {}, {4, 5, 32}, 0.02f, 1);
       NodeValue back = g.node(NodeKind::Transpose, "unswap", {q}, ints({{"perm", {1, 0, 2}}}),
                               {5, 4, 32}, 0.02f, 1);
       g.output("y", g.node(NodeKind::Reshape, "merge", {back}, ints({{"shape", {10, 64}}}),
                            {10, 64}, 0.02f, 1));
       NodeValue s = g.input("s", {2, 3, 20}, 0.1f, -4);
       NodeValue st = g.node(NodeKind::Transpose, "seq_first", {s}, ints({{"perm", {1, 0, 2}}}),
                             {3, 2, 20}, 0.1f, -4);
       Tensor one(ElemKind::Int8, {1});
       one.data<int8_t>()[0] = -90;
       one.mutableType().quant = perTensor(0.01f, 5);
       NodeValue c = g.constant("offset", std::move(one));
       g.output("z", g.node(NodeKind::Add, "shift", {c, st}, {}, {3, 2, 20}, 0.11f, -2));
       NodeValue u = g.input("u", {1, 4, 24}, 0.1f, 0);
       NodeValue ut = g.node(NodeKind::Transpose, "unit", {u}, ints({{"perm", {1, 0, 2}}}),
                             {4, 1, 24}, 0.1f, 0);
       g.output("w", g.node(NodeKind::Transpose, "unit_back", {ut}, ints({{"perm", {1, 0, 2}}}),
                            {1, 4, 24}, 0.1f, 0));
     }},
    {"add_constant_sequence",
     [](G& g) {
       // A constant int8 operand (a positional embedding added to a sequence) lives in the
       // constant region; channels that do not fill their last block.
       NodeValue x = g.input("x", {2, 5, 24}, 0.05f, 3);
       Tensor pos(ElemKind::Int8, {2, 5, 24});
       for (int64_t i = 0; i < pos.size(); ++i)
         pos.data<int8_t>()[i] = static_cast<int8_t>((i * 37) % 255 - 127);
       pos.mutableType().quant = perTensor(0.02f, -6);
       NodeValue p = g.constant("pos", std::move(pos));
       g.output("y", g.node(NodeKind::Add, "embed", {x, p}, {}, {2, 5, 24}, 0.07f, 2));
     }},
    {"class_token_sequence",
     [](G& g) {
       // A vision transformer's tokens: a constant class token concatenated before the
       // patches along the tokens (40 channels: the last block partial), positions added
       // and the class token taken back (Gather of index 0 -> [1, C]); two sequences with a
       // run of tokens sliced and their last two tokens gathered by negative indices (a
       // strided copy per sequence), and a Concat of two computed sequences along the tokens.
       NodeValue x = g.input("x", {1, 6, 40}, 0.05f, 3);
       Tensor cls(ElemKind::Int8, {1, 1, 40});
       for (int64_t i = 0; i < cls.size(); ++i)
         cls.data<int8_t>()[i] = static_cast<int8_t>((i * 53) % 255 - 127);
       cls.mutableType().quant = perTensor(0.05f, 3);
       Attrs tokens;
       tokens.set("axis", int64_t(1));
       NodeValue cat = g.node(NodeKind::Concat, "cls", {g.constant("cls.token", std::move(cls)), x},
                              tokens, {1, 7, 40}, 0.05f, 3);
       Tensor pos(ElemKind::Int8, {1, 7, 40});
       for (int64_t i = 0; i < pos.size(); ++i)
         pos.data<int8_t>()[i] = static_cast<int8_t>((i * 29) % 255 - 127);
       pos.mutableType().quant = perTensor(0.02f, -6);
       NodeValue p = g.node(NodeKind::Add, "pos", {cat, g.constant("pos", std::move(pos))}, {},
                            {1, 7, 40}, 0.07f, 2);
       Tensor first(ElemKind::Int64, {});
       first.data<int64_t>()[0] = 0;
       g.output("y", g.node(NodeKind::Gather, "first", {p, g.constant("first", std::move(first))},
                            tokens, {1, 40}, 0.07f, 2));
       NodeValue s = g.input("s", {2, 9, 24}, 0.1f, -4);
       Attrs run = ints({{"starts", {0, 2, 0}}, {"ends", {2, 7, 24}}, {"steps", {1, 1, 1}}});
       NodeValue mid = g.node(NodeKind::Slice, "mid", {s}, run, {2, 5, 24}, 0.1f, -4);
       Tensor last(ElemKind::Int64, {2});
       last.data<int64_t>()[0] = -2;
       last.data<int64_t>()[1] = -1;
       NodeValue tail = g.node(NodeKind::Gather, "tail", {s, g.constant("last", std::move(last))},
                               tokens, {2, 2, 24}, 0.1f, -4);
       g.output("z", g.node(NodeKind::Concat, "both", {mid, tail}, tokens, {2, 7, 24}, 0.1f, -4));
     }},
    {"softmax_lines",
     [](G& g) {
       // Softmax on the normalize instruction: along a sequence's channels (two blocks on
       // 16 lanes, the last partial), a rank-2 row of 33 (three blocks on 16 lanes, two on
       // 32) with result parameters of its own, along an image's channels (a line's
       // blocks H x W rows apart), and 300 one-block lines.
       NodeValue x = g.input("x", {3, 5, 20}, 0.08f, 3);
       g.output("y", g.node(NodeKind::Softmax, "attn", {x}, {}, {3, 5, 20}, 1.f / 255, -128));
       NodeValue r = g.input("r", {4, 33}, 0.2f, -7);
       Attrs a;
       a.set("axis", int64_t(1));
       g.output("z", g.node(NodeKind::Softmax, "row", {r}, a, {4, 33}, 0.004f, -100));
       NodeValue m = g.input("m", {2, 20, 3, 4}, 0.05f, 0);
       g.output("w", g.node(NodeKind::Softmax, "pixels", {m}, a, {2, 20, 3, 4}, 1.f / 255, -128));
       // 300 lines of one block: more lines in a tile than n1 holds (255 on ember-v1).
       NodeValue t = g.input("t", {300, 16}, 0.1f, 2);
       g.output("v", g.node(NodeKind::Softmax, "tokens", {t}, {}, {300, 16}, 1.f / 255, -128));
     }},
    {"layernorm_lines",
     [](G& g) {
       // LayerNormalization on the normalize instruction: per-element scale (some negative)
       // and bias over a sequence's 40 channels; one scale and no bias over 70; a row of 8
       // (one partial block) with a large epsilon.
       auto layerNorm = [&](const char* name, NodeValue x, std::vector<NodeValue> gb, float eps,
                            float s, int32_t zp) {
         Attrs a;
         a.set("axis", int64_t(-1));
         a.set("epsilon", eps);
         Shape stats = x.dims();
         stats.back() = 1;
         std::vector<NodeValue> in{x};
         in.insert(in.end(), gb.begin(), gb.end());
         return g.f
             ->create(NodeKind::LayerNormalization, name, in, a,
                      std::vector<Type>{Type(ElemKind::Int8, x.dims(), perTensor(s, zp)),
                                        Type(ElemKind::Float32, stats),
                                        Type(ElemKind::Float32, stats)})
             ->result();
       };
       NodeValue x = g.input("x", {2, 6, 40}, 0.06f, -5);
       g.output("y", layerNorm("norm", x,
                               {g.constant("gamma", {40}, -1.5f, 2.f),
                                g.constant("beta", {40}, -0.5f, 0.5f)},
                               1e-5f, 0.03f, -2));
       NodeValue r = g.input("r", {5, 70}, 0.1f, 20);
       g.output("z", layerNorm("wide", r, {g.constant("g1", {1}, 0.5f, 1.5f)}, 1e-5f, 0.02f, 0));
       NodeValue q = g.input("q", {9, 8}, 0.01f, 0);
       g.output("w", layerNorm("short", q,
                               {g.constant("g8", {8}, 0.5f, 1.f), g.constant("b8", {8}, -1.f, 1.f)},
                               0.5f, 0.05f, 3));
     }},
    {"mean_over_tokens",
     [](G& g) {
       // ReduceMean over a sequence's tokens (rows of one channel block CB rows apart; a
       // transformer classifier's pooling), both keepdims, and over an NCHW value's H, W.
       NodeValue x = g.input("x", {2, 7, 40}, 0.05f, 9);
       Attrs a = ints({{"axes", {1}}});
       a.set("keepdims", int64_t(0));
       g.output("y", g.node(NodeKind::ReduceMean, "pool", {x}, a, {2, 40}, 0.02f, -4));
       Attrs k = ints({{"axes", {-2}}});
       g.output("yk", g.node(NodeKind::ReduceMean, "poolk", {x}, k, {2, 1, 40}, 0.03f, 1));
       NodeValue m = g.input("m", {1, 20, 5, 6}, 0.1f, -2);
       Attrs s = ints({{"axes", {2, 3}}});
       s.set("keepdims", int64_t(0));
       g.output("z", g.node(NodeKind::ReduceMean, "spatial", {m}, s, {1, 20}, 0.05f, 0));
     }},
    {"matmul_activations",
     [](G& g) {
       // MatMuls of two activations (attention's q x k^T and p x v): batched with partial
       // blocks of c and k and a's zero point -128 (a softmax's), rank 2 with b's zero
       // point -128, and b the product of an earlier act x act MatMul.
       NodeValue a = g.input("a", {3, 5, 20}, 0.004f, -128);
       NodeValue b = g.input("b", {3, 20, 24}, 0.05f, 7);
       NodeValue y = g.node(NodeKind::MatMul, "pv", {a, b}, {}, {3, 5, 24}, 0.03f, -3);
       g.output("y", y);
       NodeValue c = g.input("c", {6, 40}, 0.05f, 5);
       NodeValue d = g.input("d", {40, 9}, 0.02f, -128);
       g.output("z", g.node(NodeKind::MatMul, "cd", {c, d}, {}, {6, 9}, 0.1f, 2));
       NodeValue e = g.input("e", {3, 24, 33}, 0.05f, -1);
       g.output("w", g.node(NodeKind::MatMul, "ye", {y, e}, {}, {3, 5, 33}, 0.2f, 0));
     }},
    {"transposes_moving_channels",
     [](G& g) {
       // Transposes that change values' lanes (through the MAC array): [G, R, C] -> [G,
       // C, R] with partial blocks both ways, a matrix, and attention's scores q x k^T
       // with the keys [T, heads, head_dim] -> [heads, head_dim, T] (perm 1, 2, 0).
       NodeValue x = g.input("x", {3, 20, 24}, 0.05f, -7);
       g.output("xt", g.node(NodeKind::Transpose, "t021", {x}, ints({{"perm", {0, 2, 1}}}),
                             {3, 24, 20}, 0.05f, -7));
       NodeValue m = g.input("m", {7, 40}, 0.1f, 3);
       g.output("mt", g.node(NodeKind::Transpose, "t10", {m}, ints({{"perm", {1, 0}}}), {40, 7},
                             0.1f, 3));
       NodeValue q = g.input("q", {4, 6, 16}, 0.05f, 2);
       NodeValue k = g.input("k", {6, 4, 16}, 0.05f, -5);
       NodeValue kt = g.node(NodeKind::Transpose, "keys", {k}, ints({{"perm", {1, 2, 0}}}),
                             {4, 16, 6}, 0.05f, -5);
       g.output("scores", g.node(NodeKind::MatMul, "qk", {q, kt}, {}, {4, 6, 6}, 0.08f, 1));
       // Keys computed and also returned: their transpose cannot share an output's
       // buffer, so it runs as a layer of its own (and a constant's too).
       NodeValue k2 = g.node(NodeKind::Add, "keys_out", {k, k}, {}, {6, 4, 16}, 0.1f, -3);
       g.output("k2", k2);
       NodeValue k2t = g.node(NodeKind::Transpose, "keys2", {k2}, ints({{"perm", {1, 2, 0}}}),
                              {4, 16, 6}, 0.1f, -3);
       g.output("scores2", g.node(NodeKind::MatMul, "qk2", {q, k2t}, {}, {4, 6, 6}, 0.08f, 1));
       Tensor kc(ElemKind::Int8, {3, 20});
       for (int64_t i = 0; i < kc.size(); ++i)
         kc.data<int8_t>()[i] = static_cast<int8_t>((i * 53) % 251 - 125);
       kc.mutableType().quant = perTensor(0.03f, 4);
       NodeValue kct = g.node(NodeKind::Transpose, "const_t", {g.constant("kc", std::move(kc))},
                              ints({{"perm", {1, 0}}}), {20, 3}, 0.03f, 4);
       NodeValue r = g.input("r", {5, 20}, 0.05f, -9);
       g.output("rc", g.node(NodeKind::MatMul, "rc", {r, kct}, {}, {5, 3}, 0.1f, 0));
     }},
    {"channel_split_and_shuffle",
     [](G& g) {
       // ShuffleNet's unit: a channel split (Slice at an offset inside a block), a Concat
       // and a channel shuffle (Gather of every channel, as channel-shuffle-to-gather
       // writes it); a strided Slice of a sequence's features; batch 2.
       NodeValue x = g.input("x", {2, 48, 5, 6}, 0.05f, -3);
       Attrs sa =
           ints({{"starts", {0, 24, 0, 0}}, {"ends", {2, 48, 5, 6}}, {"steps", {1, 1, 1, 1}}});
       NodeValue hi = g.node(NodeKind::Slice, "split", {x}, sa, {2, 24, 5, 6}, 0.05f, -3);
       Attrs at;
       at.set("axis", int64_t(1));
       NodeValue cat = g.node(NodeKind::Concat, "cat", {hi, x}, at, {2, 72, 5, 6}, 0.05f, -3);
       Tensor idx(ElemKind::Int64, {72});
       for (int64_t j = 0; j < 36; ++j)
         for (int64_t i = 0; i < 2; ++i)
           idx.data<int64_t>()[j * 2 + i] = i * 36 + j;
       NodeValue perm = g.constant("perm", std::move(idx));
       at.set("axis", int64_t(1));
       g.output("y",
                g.node(NodeKind::Gather, "shuffle", {cat, perm}, at, {2, 72, 5, 6}, 0.05f, -3));
       NodeValue s = g.input("s", {2, 3, 40}, 0.1f, 4);
       Attrs ss = ints({{"starts", {0, 0, 38}}, {"ends", {2, 3, -1}}, {"steps", {1, 1, -3}}});
       g.output("z", g.node(NodeKind::Slice, "rev", {s}, ss, {2, 3, 13}, 0.1f, 4));
     }},
    {"pad_many_blocks",
     [](G& g) {
       // Eight channel blocks of a small map (DenseNet's transition at 32x32 input): on a
       // small act SRAM a tile holds fewer blocks than the value has.
       NodeValue x = g.input("x", {1, 128, 8, 8}, 0.05f, 5);
       Attrs a = ints({{"pads", {0, 0, 1, 1, 0, 0, 1, 1}}});
       g.output("y", g.node(NodeKind::Pad, "pad", {x}, a, {1, 128, 10, 10}, 0.05f, 5));
     }},
    {"slice_whole_blocks",
     [](G& g) {
       // Runs of whole channel blocks on 16 and 32 lanes (a fused projection's thirds; a
       // tail ending at the input's last channel): copied by strided DMA.
       NodeValue q = g.input("q", {6, 96}, 0.05f, -3);
       Attrs sa = ints({{"starts", {0, 32}}, {"ends", {6, 64}}, {"steps", {1, 1}}});
       g.output("k", g.node(NodeKind::Slice, "third", {q}, sa, {6, 32}, 0.05f, -3));
       NodeValue x = g.input("x", {2, 80, 3, 3}, 0.1f, 7);
       Attrs ta =
           ints({{"starts", {0, 64, 0, 0}}, {"ends", {2, 80, 3, 3}}, {"steps", {1, 1, 1, 1}}});
       g.output("t", g.node(NodeKind::Slice, "tail", {x}, ta, {2, 16, 3, 3}, 0.1f, 7));
     }},
    {"slice_pixels",
     [](G& g) {
       // Constant Slices of lines and columns (steps 1, N and C whole), copied by strided
       // DMA: a window of two images of three blocks (one partial),
       // the crop of the last line (whole width), columns of every line.
       NodeValue x = g.input("x", {2, 40, 9, 11}, 0.05f, -3);
       Attrs wa =
           ints({{"starts", {0, 0, 3, 2}}, {"ends", {2, 40, 8, 9}}, {"steps", {1, 1, 1, 1}}});
       g.output("w", g.node(NodeKind::Slice, "window", {x}, wa, {2, 40, 5, 7}, 0.05f, -3));
       NodeValue l = g.input("l", {1, 20, 12, 8}, 0.1f, 6);
       Attrs la =
           ints({{"starts", {0, 0, 0, 0}}, {"ends", {1, 20, 11, 8}}, {"steps", {1, 1, 1, 1}}});
       g.output("lines", g.node(NodeKind::Slice, "crop", {l}, la, {1, 20, 11, 8}, 0.1f, 6));
       NodeValue c = g.input("c", {1, 5, 7, 13}, 0.02f, 0);
       Attrs ca =
           ints({{"starts", {0, 0, 0, 3}}, {"ends", {1, 5, 7, 10}}, {"steps", {1, 1, 1, 1}}});
       g.output("cols", g.node(NodeKind::Slice, "cols", {c}, ca, {1, 5, 7, 7}, 0.02f, 0));
     }},
    {"mul_same_shape",
     [](G& g) {
       NodeValue a = g.input("a", {1, 20, 7, 9}, 0.05f, 3);
       NodeValue b = g.input("b", {1, 20, 7, 9}, 0.11f, -9);
       g.output("y", g.node(NodeKind::Mul, "mul", {a, b}, {}, {1, 20, 7, 9}, 0.2f, -4));
     }},
    {"mul_per_channel",
     [](G& g) {
       // Squeeze-and-excitation: every pixel of a channel times that channel's scale.
       NodeValue a = g.input("a", {2, 40, 30, 30}, 0.05f, 3);
       NodeValue b = g.input("b", {2, 40, 1, 1}, 0.004f, -128);
       g.output("y", g.node(NodeKind::Mul, "mul", {b, a}, {}, {2, 40, 30, 30}, 0.03f, 1));
     }},
    {"rescale",
     [](G& g) {
       NodeValue x = g.input("x", {1, 33, 5, 5}, 0.05f, 10);
       g.output("y", g.node(NodeKind::Rescale, "rs", {x}, {}, {1, 33, 5, 5}, 0.021f, -30));
     }},
    {"lut",
     [](G& g) {
       NodeValue x = g.input("x", {1, 18, 6, 6}, 0.05f, 10);
       Tensor tab(ElemKind::Int8, {256});
       for (int i = 0; i < 256; ++i)
         tab.data<int8_t>()[i] = static_cast<int8_t>((i * 37 + 11) % 256 - 128);
       NodeValue t = g.m.createConstant("table", tab)->result();
       g.output("y", g.node(NodeKind::Lut, "lut", {x, t}, {}, {1, 18, 6, 6}, 0.01f, 0));
     }},
    {"relu_and_clip",
     [](G& g) {
       NodeValue x = g.input("x", {1, 17, 4, 5}, 0.05f, 10);
       NodeValue r = g.node(NodeKind::Relu, "relu", {x}, {}, {1, 17, 4, 5}, 0.05f, 10);
       Attrs a;
       a.set("min", 0.2);
       a.set("max", 3.0);
       g.output("y", g.node(NodeKind::Clip, "clip", {r}, a, {1, 17, 4, 5}, 0.05f, 10));
     }},
    {"relu_in_place_many_steps",
     [](G& g) {
       // More rows than one act buffer: the store of a step and the load reusing its
       // buffer must be ordered (in-place streams cycle through 2 D buffers).
       NodeValue x = g.input("x", {1, 32, 112, 112}, 0.05f, 10);
       g.output("y", g.node(NodeKind::Relu, "relu", {x}, {}, {1, 32, 112, 112}, 0.05f, 10));
     }},
    {"concat_many_steps",
     [](G& g) {
       NodeValue a = g.input("a", {1, 32, 90, 90}, 0.05f, 1);
       NodeValue b = g.input("b", {1, 64, 90, 90}, 0.05f, 1);
       Attrs at;
       at.set("axis", int64_t(1));
       g.output("y", g.node(NodeKind::Concat, "cat", {a, b}, at, {1, 96, 90, 90}, 0.05f, 1));
     }},
    {"pad_many_steps",
     [](G& g) {
       NodeValue x = g.input("x", {1, 64, 100, 100}, 0.05f, 4);
       Attrs a = ints({{"pads", {0, 0, 1, 1, 0, 0, 1, 1}}});
       g.output("y", g.node(NodeKind::Pad, "pad", {x}, a, {1, 64, 102, 102}, 0.05f, 4));
     }},
    {"maxpool_3x3_s2_p1",
     [](G& g) {
       NodeValue x = g.input("x", {1, 20, 11, 11}, 0.05f, 10);
       Attrs a = ints({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}});
       g.output("y", g.node(NodeKind::MaxPool, "mp", {x}, a, {1, 20, 6, 6}, 0.05f, 10));
     }},
    {"maxpool_3x3_s1_p1_separable",
     [](G& g) {
       // Row maxima then column maxima (GoogLeNet's pools): fewer vector rows than 8
       // maxima per output row.
       NodeValue x = g.input("x", {1, 17, 9, 9}, 0.05f, 3);
       Attrs a = ints({{"kernel_shape", {3, 3}}, {"strides", {1, 1}}, {"pads", {1, 1, 1, 1}}});
       g.output("y", g.node(NodeKind::MaxPool, "mp", {x}, a, {1, 17, 9, 9}, 0.05f, 3));
     }},
    {"maxpool_3x2_dilated_separable",
     [](G& g) {
       NodeValue x = g.input("x", {1, 16, 10, 9}, 0.05f, -7);
       Attrs a = ints({{"kernel_shape", {3, 2}}, {"strides", {1, 2}}, {"dilations", {2, 2}}});
       g.output("y", g.node(NodeKind::MaxPool, "mp", {x}, a, {1, 16, 6, 4}, 0.05f, -7));
     }},
    {"maxpool_2x2_s2",
     [](G& g) {
       NodeValue x = g.input("x", {1, 33, 8, 8}, 0.05f, -3);
       Attrs a = ints({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}});
       g.output("y", g.node(NodeKind::MaxPool, "mp", {x}, a, {1, 33, 4, 4}, 0.05f, -3));
     }},
    {"globalmaxpool",
     [](G& g) {
       NodeValue x = g.input("x", {1, 24, 5, 6}, 0.05f, -3);
       g.output("y", g.node(NodeKind::GlobalMaxPool, "gmp", {x}, {}, {1, 24, 1, 1}, 0.05f, -3));
     }},
    {"avgpool_3x3_p1_include_pad",
     [](G& g) {
       NodeValue x = g.input("x", {1, 20, 9, 9}, 0.05f, 7);
       Attrs a = ints({{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}});
       a.set("count_include_pad", int64_t(1));
       g.output("y", g.node(NodeKind::AveragePool, "ap", {x}, a, {1, 20, 9, 9}, 0.04f, 3));
     }},
    {"avgpool_2x2_s2",
     [](G& g) {
       NodeValue x = g.input("x", {1, 16, 8, 10}, 0.05f, 7);
       Attrs a = ints({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}});
       g.output("y", g.node(NodeKind::AveragePool, "ap", {x}, a, {1, 16, 4, 5}, 0.03f, -1));
     }},
    {"globalavgpool",
     [](G& g) {
       NodeValue x = g.input("x", {1, 40, 7, 7}, 0.05f, 7);
       g.output("y", g.node(NodeKind::GlobalAveragePool, "gap", {x}, {}, {1, 40, 1, 1}, 0.02f, -5));
     }},
    {"globalavgpool_many_blocks",
     [](G& g) {
       // MobileNetV2's head: 1280 channels (80 or 40 blocks), more output rows than a
       // small act SRAM holds at once.
       NodeValue x = g.input("x", {1, 1280, 2, 3}, 0.05f, 3);
       g.output("y",
                g.node(NodeKind::GlobalAveragePool, "gap", {x}, {}, {1, 1280, 1, 1}, 0.02f, -2));
     }},
    {"globalavgpool_big_image",
     [](G& g) {
       // 3 channel blocks of 90 x 90 pixels: more rows than one step holds.
       NodeValue x = g.input("x", {2, 40, 90, 90}, 0.05f, -7);
       g.output("y", g.node(NodeKind::GlobalAveragePool, "gap", {x}, {}, {2, 40, 1, 1}, 0.002f, 9));
     }},
    {"concat",
     [](G& g) {
       // Channel offsets 0, 32 and 96: multiples of L on both descriptions.
       NodeValue a = g.input("a", {1, 32, 5, 5}, 0.05f, 1);
       NodeValue b = g.input("b", {1, 64, 5, 5}, 0.05f, 1);
       NodeValue c = g.input("c", {1, 7, 5, 5}, 0.05f, 1);
       Attrs at;
       at.set("axis", int64_t(1));
       g.output("y", g.node(NodeKind::Concat, "cat", {a, b, c}, at, {1, 103, 5, 5}, 0.05f, 1));
     }},
    {"concat_inside_blocks",
     [](G& g) {
       // Offsets 24 and 48 start inside a block on both descriptions (ShuffleNet's 24-
       // channel branches): lanes moved on the MAC array; batch 2.
       NodeValue a = g.input("a", {2, 24, 6, 7}, 0.05f, -3);
       NodeValue b = g.input("b", {2, 24, 6, 7}, 0.05f, -3);
       NodeValue c = g.input("c", {2, 5, 6, 7}, 0.05f, -3);
       Attrs at;
       at.set("axis", int64_t(1));
       NodeValue cat = g.node(NodeKind::Concat, "cat", {a, b, c}, at, {2, 53, 6, 7}, 0.05f, -3);
       g.output("y", g.node(NodeKind::Relu, "relu", {cat}, {}, {2, 53, 6, 7}, 0.05f, -3));
     }},
    {"concat_inside_blocks_rank2",
     [](G& g) {
       NodeValue a = g.input("a", {3, 20}, 0.05f, 2);
       NodeValue b = g.input("b", {3, 37}, 0.05f, 2);
       Attrs at;
       at.set("axis", int64_t(1));
       g.output("y", g.node(NodeKind::Concat, "cat", {a, b}, at, {3, 57}, 0.05f, 2));
     }},
    {"pad",
     [](G& g) {
       NodeValue x = g.input("x", {1, 20, 6, 7}, 0.05f, 4);
       Attrs a = ints({{"pads", {0, 0, 1, 2, 0, 0, 3, 1}}});
       a.set("value", 0.3);
       g.output("y", g.node(NodeKind::Pad, "pad", {x}, a, {1, 20, 10, 10}, 0.05f, 4));
     }},
    {"reshape_as_output",
     [](G& g) {
       NodeValue x = g.input("x", {1, 40, 7, 7}, 0.05f, 7);
       NodeValue p = g.node(NodeKind::GlobalAveragePool, "gap", {x}, {}, {1, 40, 1, 1}, 0.02f, -5);
       g.output("y", g.node(NodeKind::Reshape, "flat", {p}, ints({{"shape", {1, 40}}}), {1, 40},
                            0.02f, -5));
     }},
    {"chain_residual_pool_fc",
     [](G& g) {
       NodeValue x = g.input("x", {1, 16, 12, 12}, 0.05f, 7);
       NodeValue c1 = conv3x3(g, x, 16, 24, 12, 12, "c1");
       NodeValue c2 = conv3x3(g, c1, 24, 24, 12, 12, "c2");
       NodeValue add = g.node(NodeKind::Add, "res", {c1, c2}, {}, {1, 24, 12, 12}, 0.1f, -11);
       Attrs mp = ints({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}});
       NodeValue pool = g.node(NodeKind::MaxPool, "mp", {add}, mp, {1, 24, 6, 6}, 0.1f, -11);
       NodeValue c3 = conv3x3(g, pool, 24, 40, 6, 6, "c3");
       NodeValue gap =
           g.node(NodeKind::GlobalAveragePool, "gap", {c3}, {}, {1, 40, 1, 1}, 0.03f, 2);
       NodeValue flat =
           g.node(NodeKind::Reshape, "flat", {gap}, ints({{"shape", {1, 40}}}), {1, 40}, 0.03f, 2);
       NodeValue fc =
           g.node(NodeKind::Gemm, "fc", {flat, g.weights("fcw", {40, 10}, 1), g.bias("fcb", 10)},
                  {}, {1, 10}, 0.2f, 0);
       g.output("logits", fc);
       g.output("features", pool);
     }},
};

/// Compiles case `c` for `isa` (double-buffered, and single-buffered in tiles of two
/// lines), simulates it and compares every output with the int8 interpreter (and once
/// with the cpu backend on `cpuThreads` threads).
void expectBitExact(const VecCase& c, const isa::IsaDescription& isa, int cpuThreads) {
  G g;
  c.build(g);
  for (bool dbl : {true, false}) {
    CompileOptions o;
    o.doubleBuffer = dbl;
    o.maxTileHeight = dbl ? 0 : 2;
    CompileResult r = compile(*g.f, isa, o);
    auto in = randomInputs(r.binary, 21);
    SimOut s = simulate(r.binary, isa, in);
    // The graph and inputs are the same both times: the cpu backend runs once.
    auto want = dbl ? interpretAndCpu(*g.f, in, cpuThreads, c.name) : interpret(*g.f, in);
    for (const auto& kv : want) {
      ASSERT_EQ(s.outputs.count(kv.first), 1u) << kv.first;
      EXPECT_EQ(mismatches(s.outputs[kv.first], kv.second), 0u)
          << c.name << " output " << kv.first << " double buffer " << dbl << "\n"
          << formatSummary(r.summary);
    }
    if (dbl)
      std::printf("[ %s on %s ] estimated %.0f / simulated %llu cycles = %.3f\n", c.name,
                  isa.name().c_str(), r.summary.cycles, (unsigned long long)s.report.cycles,
                  r.summary.cycles / double(s.report.cycles));
  }
}

class VectorOnNpu : public ::testing::TestWithParam<std::tuple<VecCase, bool>> {};

TEST_P(VectorOnNpu, BitExactAgainstInt8Interpreter) {
  const bool large = std::get<1>(GetParam());
  expectBitExact(std::get<0>(GetParam()), large ? largeIsa() : refIsa(), large ? 2 : 1);
}

INSTANTIATE_TEST_SUITE_P(Layers, VectorOnNpu,
                         ::testing::Combine(::testing::ValuesIn(kCases), ::testing::Bool()),
                         [](const auto& p) {
                           return std::string(std::get<0>(p.param).name) +
                                  (std::get<1>(p.param) ? "_large" : "_ref");
                         });

/// ONNX's linear Resize of one axis under half_pixel, written out here (independent of
/// BilinearUpsample.h): output o of `out` reads (o + 0.5) * in / out - 0.5, clamped to the
/// input, between floor and floor + 1 (clamped).
std::vector<std::pair<std::pair<int64_t, int64_t>, double>> onnxLinearAxis(int64_t in,
                                                                           int64_t out) {
  std::vector<std::pair<std::pair<int64_t, int64_t>, double>> t;
  for (int64_t o = 0; o < out; ++o) {
    const double x = std::clamp((o + 0.5) * double(in) / double(out) - 0.5, 0.0, double(in - 1));
    const int64_t i = int64_t(std::floor(x));
    t.push_back({{i, std::min(i + 1, in - 1)}, x - double(i)});
  }
  return t;
}

// The int8 rule against the real bilinear value of the codes (input and output share the
// parameters): for factors 2 and 4 the multiplier 1 / (4 fH fW) is a power of two and the
// result is the real value rounded half up; for 3 within one code.
TEST(BilinearNumerics, Int8IsTheRealBilinearValueRounded) {
  for (int64_t f : {2, 3, 4}) {
    SCOPED_TRACE(f);
    G g;
    const int64_t C = 3, H = 5, W = 4;
    g.output("y",
             bilinear(g, g.input("x", {1, C, H, W}, 0.06f, -7), f * H, f * W, "half_pixel", true));
    std::map<std::string, std::vector<int8_t>> in;
    std::vector<int8_t> x(size_t(C * H * W));
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = int8_t(int((i * 97 + 13) % 256) - 128);
    in["x"] = x;
    const std::vector<int8_t> y = interpret(*g.f, in).at("y");
    const auto th = onnxLinearAxis(H, f * H), tw = onnxLinearAxis(W, f * W);
    int64_t worst = 0;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < f * H; ++i)
        for (int64_t j = 0; j < f * W; ++j) {
          const auto at = [&](int64_t r, int64_t q) {
            return x[size_t((c * H + r) * W + q)] + 7.0;
          };
          const auto row = [&](int64_t r) {
            return (1 - tw[j].second) * at(r, tw[j].first.first) +
                   tw[j].second * at(r, tw[j].first.second);
          };
          const double v =
              (1 - th[i].second) * row(th[i].first.first) + th[i].second * row(th[i].first.second);
          const int64_t want = std::clamp<int64_t>(int64_t(std::floor(v + 0.5)) - 7, -128, 127);
          const int64_t got = y[size_t((c * f * H + i) * f * W + j)];
          worst = std::max<int64_t>(worst, std::abs(got - want));
        }
    EXPECT_LE(worst, f == 3 ? 1 : 0);
  }
}

/// ember-v1 with an act SRAM of `actRows` rows and an acc SRAM of `accRows` rows.
isa::IsaDescription refIsaWithRows(int64_t actRows, int64_t accRows) {
  return ember::npu::test::refIsaWithRows({{"act", actRows}, {"acc", accRows}});
}

/// ember-v1 without its quantized-add instruction (a description that never had one).
isa::IsaDescription refIsaWithoutQadd() {
  nlohmann::json j = refIsa().json();
  auto& ins = j["instructions"];
  for (auto it = ins.begin(); it != ins.end(); ++it)
    if ((*it)["class"] == "quantized-add") {
      ins.erase(it);
      break;
    }
  return isa::IsaDescription::loadString(j.dump(), "ember-v1 without qadd");
}

TEST(VectorWithoutQuantizedAdd, AddsRunInTheAccumulators) {
  // The vsub/vmul/vadd/requant path of every Add, and no fused residual.
  const isa::IsaDescription noQadd = refIsaWithoutQadd();
  for (const VecCase& c : kCases) {
    const std::string name = c.name;
    if (name.find("add") == std::string::npos && name.find("residual") == std::string::npos)
      continue;
    expectBitExact(c, noQadd, 1);
    G g;
    c.build(g);
    for (const auto& l : compile(*g.f, noQadd, {}).summary.layers)
      EXPECT_EQ(l.kind.find("+Add"), std::string::npos) << name << ": " << l.name;
  }
}

TEST(BinaryBankConflicts, APerChannelOperandMeetsEveryRowOfAInTheOtherAccBank) {
  // Squeeze-and-excitation's Mul (and a per-channel Add without qadd): b's row is held
  // twice in acc, a's row j meets copy j mod 2, so no combining vmul / vadd reads two rows
  // of one of ember-v1's two acc banks (rule V1 charges a cycle for each; with one copy
  // every other row of a did). Bit-exact as before on both descriptions.
  const isa::IsaDescription noQadd = refIsaWithoutQadd();
  for (const char* name : {"mul_per_channel", "add_per_channel"}) {
    const VecCase& c = *std::find_if(std::begin(kCases), std::end(kCases),
                                     [&](const VecCase& k) { return std::string(k.name) == name; });
    const isa::IsaDescription& isa = std::string(name) == "mul_per_channel" ? refIsa() : noQadd;
    G g;
    c.build(g);
    const CompileResult r = compile(*g.f, isa);
    const std::string op = std::string(name) == "mul_per_channel" ? "mul" : "add";
    int64_t combined = 0;
    for (const auto& in : r.binary.code) {
      if (in.desc().cls->id != isa::SemanticClass::VectorBinary || in.desc().op != op)
        continue;
      EXPECT_EQ(isa::timing::bankConflicts(isa, in), 0u) << name;
      combined += in.get(isa::role::kN0) * in.get(isa::role::kN1);
    }
    EXPECT_EQ(combined, 2 * 3 * 30 * 30) << name; // every row of a once (2 images, 3 blocks)
    expectBitExact(c, isa, 1);
  }
  expectBitExact(
      *std::find_if(std::begin(kCases), std::end(kCases),
                    [](const VecCase& k) { return std::string(k.name) == "mul_per_channel"; }),
      largeIsa(), 2);
}

TEST(ResidualFusion, TheAddIsTheConvolutionsEpilogueAndGivesTheSameBytes) {
  // chain_residual_pool_fc: res = Add(c1, c2); c2 has no other reader, so c2 takes the
  // Add into its epilogue; c1 feeds c2 and the Add, so it stays a layer.
  const VecCase* c = nullptr;
  for (const VecCase& k : kCases)
    if (std::string(k.name) == "chain_residual_pool_fc")
      c = &k;
  ASSERT_NE(c, nullptr);
  G g;
  c->build(g);
  for (const isa::IsaDescription* isa : {&refIsa(), &largeIsa()}) {
    CompileOptions fused, apart;
    apart.fuseResidual = false;
    const CompileResult rf = compile(*g.f, *isa, fused), ra = compile(*g.f, *isa, apart);
    auto kinds = [](const CompileResult& r) {
      std::vector<std::string> k;
      for (const auto& l : r.summary.layers)
        k.push_back(l.kind);
      return k;
    };
    const auto kf = kinds(rf), ka = kinds(ra);
    EXPECT_EQ(std::count(kf.begin(), kf.end(), "Conv+Add"), 1) << formatSummary(rf.summary);
    EXPECT_EQ(std::count(kf.begin(), kf.end(), "Add"), 0) << formatSummary(rf.summary);
    EXPECT_EQ(std::count(ka.begin(), ka.end(), "Add"), 1) << formatSummary(ra.summary);
    EXPECT_EQ(kf.size() + 1, ka.size());
    const auto in = randomInputs(rf.binary, 5);
    SimOut sf = simulate(rf.binary, *isa, in), sa = simulate(ra.binary, *isa, in);
    const auto want = interpret(*g.f, in);
    for (const auto& kv : want) {
      EXPECT_EQ(mismatches(sf.outputs[kv.first], kv.second), 0u) << kv.first;
      EXPECT_EQ(mismatches(sa.outputs[kv.first], kv.second), 0u) << kv.first;
    }
    // The fused program skips y's DRAM round trip and the Add's six vector passes.
    EXPECT_LT(sf.report.cycles, sa.report.cycles) << isa->name();
    std::printf("[ residual fusion on %s ] %llu cycles fused, %llu apart\n", isa->name().c_str(),
                (unsigned long long)sf.report.cycles, (unsigned long long)sa.report.cycles);
  }
}

/// Every case on `isa`: bit for bit, or refused in check() with a reason that names the
/// description's figure (`has`, e.g. "has 4"). A case that does not fit must never be
/// compiled into a program that faults. Returns the cases that ran.
std::set<std::string> runOrRefuseEveryCase(const isa::IsaDescription& isa, const std::string& has) {
  std::set<std::string> ran;
  for (const VecCase& c : kCases) {
    G g;
    c.build(g);
    const auto bad = unsupportedNodes(*g.f, isa);
    if (!bad.empty()) {
      for (const std::string& b : bad)
        EXPECT_NE(b.find(has), std::string::npos) << c.name << ": " << b;
      std::printf("[ %s on %s ] refused: %s\n", c.name, isa.name().c_str(), bad[0].c_str());
      continue;
    }
    expectBitExact(c, isa, 1);
    ran.insert(c.name);
  }
  return ran;
}

TEST(VectorOnTinySrams, EveryCaseRunsOrIsRefusedWithTheFigures) {
  // 2 KiB of act (128 rows) and 4 acc rows: the Add's stream and the per-channel Add
  // (two multiplier rows, tiles of one row, no spare row), a Pad that must cut its channel
  // blocks (it faulted before: its tile ignored the act size), among others.
  const isa::IsaDescription tiny = refIsaWithRows(128, 4);
  const std::set<std::string> ran = runOrRefuseEveryCase(tiny, "has ");
  for (const char* must : {"add_relu", "add_per_channel", "pad_many_blocks", "pad",
                           "pad_many_steps", "slice_whole_blocks"})
    EXPECT_EQ(ran.count(must), 1u) << must << " did not run on " << tiny.name();
}

TEST(VectorOnTinySrams, WindowsAndLinesBeyondAnEightRowActSram) {
  // 8 act rows hold no 3x3 window and its result in two buffers (20 rows), no padded
  // line, and not the output rows of every channel block: MaxPool goes in chunks of taps
  // (the running maximum kept in act; chunks of border tiles wholly in the padding load
  // a constant row of -128), AveragePool (a convolution) in tap chunks loading only their
  // pixels, Pad in tiles of lines x columns, GlobalAveragePool in fewer blocks per step.
  const isa::IsaDescription tiny = refIsaWithRows(8, 512);
  const std::set<std::string> ran = runOrRefuseEveryCase(tiny, "has 8");
  for (const char* must :
       {"maxpool_3x3_s2_p1", "maxpool_3x3_s1_p1_separable", "maxpool_3x2_dilated_separable",
        "maxpool_2x2_s2", "globalmaxpool", "avgpool_3x3_p1_include_pad", "avgpool_2x2_s2",
        "globalavgpool", "globalavgpool_many_blocks", "globalavgpool_big_image", "pad",
        "pad_many_blocks"})
    EXPECT_EQ(ran.count(must), 1u) << must << " did not run on " << tiny.name();
  for (const VecCase& c : kCases) // the pools fold their windows in chunks of taps
    if (std::string(c.name).find("maxpool") != std::string::npos) {
      G g;
      c.build(g);
      const CompileResult r = compile(*g.f, tiny);
      EXPECT_NE(r.summary.layers.at(0).tiling.find("taps="), std::string::npos)
          << c.name << "\n"
          << formatSummary(r.summary);
    }
}

TEST(VectorOnTinySrams, FourActRowsRunSingleBuffered) {
  // Four act rows (a power of two; three are needed): one row of each operand and of the
  // result, single-buffered; the binary layers' zero-point rows then live in acc (each
  // operand copied there before its zero point is subtracted).
  const isa::IsaDescription tiny = refIsaWithRows(4, 512);
  const std::set<std::string> ran = runOrRefuseEveryCase(tiny, "has 4");
  for (const char* must :
       {"add_relu", "add_per_channel", "mul_same_shape", "mul_per_channel", "rescale", "lut",
        "relu_and_clip", "maxpool_3x3_s2_p1", "globalavgpool", "pad", "concat"})
    EXPECT_EQ(ran.count(must), 1u) << must << " did not run on " << tiny.name();
}

TEST(VectorOnTinySrams, GlobalAveragePoolOnTwoActRowsAndOneAccRow) {
  // The least SRAMs a convolution takes: GlobalAveragePool runs single-buffered, its
  // bias loaded by DMA into the one accumulator row.
  const isa::IsaDescription least = refIsaWithRows(2, 1);
  int ran = 0;
  for (const VecCase& c : kCases) {
    const std::string name = c.name;
    if (name.rfind("globalavgpool", 0) != 0)
      continue;
    G g;
    c.build(g);
    const CompileResult r = compile(*g.f, least);
    EXPECT_NE(r.summary.layers.at(0).tiling.find("bias-dma single-buffered"), std::string::npos)
        << formatSummary(r.summary);
    expectBitExact(c, least, 1);
    ++ran;
  }
  EXPECT_EQ(ran, 3);
}

TEST(VectorRefusal, AMulOnOneAccRowNamesTheAccRowsItNeeds) {
  // Both operands minus their zero points must be int32 rows in acc: one acc row is too
  // few, and the reason says so (not the act rows of a layout act does not need).
  const isa::IsaDescription oneAcc = refIsaWithRows(128, 1);
  for (const VecCase& c : kCases) {
    if (std::string(c.name) != "mul_same_shape")
      continue;
    G g;
    c.build(g);
    const auto bad = unsupportedNodes(*g.f, oneAcc);
    ASSERT_EQ(bad.size(), 1u);
    EXPECT_NE(bad[0].find("needs 5 act rows (has 128) and 2 acc rows (has 1)"), std::string::npos)
        << bad[0];
  }
}

TEST(VectorRefusal, ReasonsNameTheLimit) {
  G g;
  NodeValue a = g.input("a", {1, 7, 4, 4}, 0.05f, 1);
  NodeValue b = g.input("b", {1, 7, 4, 4}, 0.05f, 1);
  Attrs at;
  at.set("axis", int64_t(2));
  NodeValue cat = g.node(NodeKind::Concat, "cat", {a, b}, at, {1, 7, 8, 4}, 0.05f, 1);
  Attrs ap;
  ap.set("kernel_shape", std::vector<int64_t>{3, 3});
  ap.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  NodeValue avg = g.node(NodeKind::AveragePool, "avg", {cat}, ap, {1, 7, 8, 4}, 0.05f, 1);
  NodeValue flat =
      g.node(NodeKind::Reshape, "flat", {avg}, ints({{"shape", {1, 224}}}), {1, 224}, 0.05f, 1);
  g.output("y", flat);
  const auto bad = unsupportedNodes(*g.f, refIsa());
  ASSERT_EQ(bad.size(), 3u);
  EXPECT_NE(bad[0].find("only concatenation along channels"), std::string::npos) << bad[0];
  EXPECT_NE(bad[1].find("count_include_pad = 0"), std::string::npos) << bad[1];
  EXPECT_NE(bad[2].find("moves channels"), std::string::npos) << bad[2];
}

} // namespace
} // namespace ember::npu::test
