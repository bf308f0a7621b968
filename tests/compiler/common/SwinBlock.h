#pragma once
/// \file
/// A Swin-style graph built as torchvision's export writes it (float, random constants):
/// from an NCHW patch embedding, LayerNorm over the last axis of [1, H, W, C], a plain and a
/// shifted window block (cyclic shift as Slice + Concat, window partition and reverse as
/// rank-6 Reshape / Transpose, multi-head attention with a relative-position bias and the
/// window mask on rank-4 and rank-5 values, an MLP with GELU), patch merging (strided
/// Slices, Concat of the channels, LayerNorm, Linear without bias), back to NCHW. Used by
/// the pass tests (collapse-batch-axes, moves-to-gather) and the NPU tests.
#include "GraphBuilder.h"

namespace ember::test::swin {

struct Swin {
  int64_t H = 8, W = 8, C = 32, ws = 4, heads = 2, shift = 2;
};

inline NodeValue slice(GraphBuilder& g, const std::string& name, NodeValue x,
                       std::vector<int64_t> starts, std::vector<int64_t> ends,
                       std::vector<int64_t> steps) {
  return g.node(NodeKind::Slice, name, {x},
                attrs({{"starts", starts}, {"ends", ends}, {"steps", steps}}));
}

inline NodeValue reshape(GraphBuilder& g, const std::string& name, NodeValue x,
                         std::vector<int64_t> to) {
  return g.node(NodeKind::Reshape, name, {x}, attrs({{"shape", to}}));
}

inline NodeValue transpose(GraphBuilder& g, const std::string& name, NodeValue x,
                           std::vector<int64_t> perm) {
  return g.node(NodeKind::Transpose, name, {x}, attrs({{"perm", perm}}));
}

/// torch.roll of [1, H, W, C] by (s, s) along axes 1 and 2, as the export writes it.
inline NodeValue roll(GraphBuilder& g, const std::string& name, NodeValue x, const Swin& s,
                      int64_t by) {
  const int64_t kh = ((by % s.H) + s.H) % s.H, kw = ((by % s.W) + s.W) % s.W;
  NodeValue a = slice(g, name + "a", x, {0, s.H - kh, 0, 0}, {1, s.H, s.W, s.C}, {1, 1, 1, 1});
  NodeValue b = slice(g, name + "b", x, {0, 0, 0, 0}, {1, s.H - kh, s.W, s.C}, {1, 1, 1, 1});
  NodeValue h = g.node(NodeKind::Concat, name + "h", {a, b}, attrs({{"axis", int64_t(1)}}));
  NodeValue c = slice(g, name + "c", h, {0, 0, s.W - kw, 0}, {1, s.H, s.W, s.C}, {1, 1, 1, 1});
  NodeValue d = slice(g, name + "d", h, {0, 0, 0, 0}, {1, s.H, s.W - kw, s.C}, {1, 1, 1, 1});
  return g.node(NodeKind::Concat, name + "w", {c, d}, attrs({{"axis", int64_t(2)}}));
}

inline NodeValue layerNorm(GraphBuilder& g, const std::string& name, NodeValue x, int64_t c) {
  return g.node(NodeKind::LayerNormalization, name,
                {x, g.constant(name + ".s", {c}, 0.5f, 1.5f), g.constant(name + ".b", {c})},
                attrs({{"axis", int64_t(-1)}, {"epsilon", 1e-5}}));
}

inline NodeValue linear(GraphBuilder& g, const std::string& name, NodeValue x, int64_t c, int64_t k,
                        bool bias) {
  NodeValue y = g.node(NodeKind::MatMul, name, {x, g.constant(name + ".w", {c, k})});
  return bias ? g.node(NodeKind::Add, name + ".add", {y, g.constant(name + ".bias", {k})}) : y;
}

inline NodeValue gatherHead(GraphBuilder& g, const std::string& name, NodeValue x, int64_t i) {
  return g.node(NodeKind::Gather, name, {x, g.constant(name + ".i", Tensor::scalar<int64_t>(i))},
                attrs({{"axis", int64_t(0)}}));
}

/// One shifted-window block (torchvision's SwinTransformerBlock on [1, H, W, C]).
inline NodeValue block(GraphBuilder& g, const std::string& p, NodeValue x, const Swin& s,
                       int64_t shift) {
  const int64_t nW = (s.H / s.ws) * (s.W / s.ws), T = s.ws * s.ws, d = s.C / s.heads;
  NodeValue y = layerNorm(g, p + "ln1", x, s.C);
  if (shift)
    y = roll(g, p + "roll", y, s, -shift);
  y = reshape(g, p + "r6", y, {1, s.H / s.ws, s.ws, s.W / s.ws, s.ws, s.C});
  y = transpose(g, p + "part", y, {0, 1, 3, 2, 4, 5});
  y = reshape(g, p + "win", y, {nW, T, s.C});
  y = linear(g, p + "qkv", y, s.C, 3 * s.C, true);
  y = reshape(g, p + "r5", y, {nW, T, 3, s.heads, d});
  y = transpose(g, p + "heads", y, {2, 0, 3, 1, 4});
  NodeValue q =
      g.node(NodeKind::Mul, p + "scale", {gatherHead(g, p + "q", y, 0), g.scalar(p + "sc", 0.25f)});
  NodeValue k = transpose(g, p + "kt", gatherHead(g, p + "k", y, 1), {0, 1, 3, 2});
  NodeValue v = gatherHead(g, p + "v", y, 2);
  NodeValue a = g.node(NodeKind::MatMul, p + "qk", {q, k});
  a = g.node(NodeKind::Add, p + "bias", {a, g.constant(p + "rpb", {s.heads, T, T})});
  if (shift) {
    a = reshape(g, p + "r5m", a, {1, nW, s.heads, T, T});
    a = g.node(NodeKind::Add, p + "mask", {a, g.constant(p + "m", {1, nW, 1, T, T}, -100, 0)});
    a = reshape(g, p + "r4m", a, {nW, s.heads, T, T});
  }
  a = g.node(NodeKind::Softmax, p + "softmax", {a}, attrs({{"axis", int64_t(-1)}}));
  a = g.node(NodeKind::MatMul, p + "av", {a, v});
  a = transpose(g, p + "merge", a, {0, 2, 1, 3});
  a = reshape(g, p + "r3", a, {nW, T, s.C});
  a = linear(g, p + "proj", a, s.C, s.C, true);
  a = reshape(g, p + "r6b", a, {1, s.H / s.ws, s.W / s.ws, s.ws, s.ws, s.C});
  a = transpose(g, p + "rev", a, {0, 1, 3, 2, 4, 5});
  a = reshape(g, p + "img", a, {1, s.H, s.W, s.C});
  if (shift)
    a = roll(g, p + "unroll", a, s, shift);
  x = g.node(NodeKind::Add, p + "res1", {x, a});
  NodeValue m = linear(g, p + "fc1", layerNorm(g, p + "ln2", x, s.C), s.C, 4 * s.C, true);
  m = linear(g, p + "fc2", g.node(NodeKind::Gelu, p + "gelu", {m}), 4 * s.C, s.C, true);
  return g.node(NodeKind::Add, p + "res2", {x, m});
}

/// From an NCHW image, two blocks (plain and shifted), then patch merging (four strided
/// slices, a Concat of the channels, a LayerNorm and a Linear without bias), back to NCHW.
inline void buildSwin(GraphBuilder& g, const Swin& s) {
  NodeValue x = g.input("x", {1, s.C, s.H, s.W}); // a patch embedding's NCHW result
  x = layerNorm(g, "embed_ln", transpose(g, "nhwc", x, {0, 2, 3, 1}), s.C);
  x = block(g, "b0.", x, s, 0);
  x = block(g, "b1.", x, s, s.shift);
  std::vector<NodeValue> parts;
  for (int64_t i : {0, 1})
    for (int64_t j : {0, 1})
      parts.push_back(slice(g, "pm" + std::to_string(i) + std::to_string(j), x, {0, j, i, 0},
                            {1, s.H, s.W, s.C}, {1, 2, 2, 1}));
  x = g.node(NodeKind::Concat, "pm", parts, attrs({{"axis", int64_t(-1)}}));
  x = layerNorm(g, "pm_ln", x, 4 * s.C);
  x = linear(g, "pm_red", x, 4 * s.C, 2 * s.C, false);
  g.output("y", transpose(g, "nchw", x, {0, 3, 1, 2})); // to a classifier's pooling
}

} // namespace ember::test::swin
