// ONNX importers of RNN, GRU and LSTM (opsets 7-14), unrolled at import over the static
// sequence length into MatMul, Add, Sub, Mul, Slice, Reshape, Concat, Transpose, Clip
// and the gate activations: no node kind of their own, so every backend (and the NPU's
// partitioner) sees plain linear algebra.
//
// Per direction the input projection X W^T + Wb (+ Rb) is one MatMul over the whole
// sequence; each step adds H R^T and applies the gates of the ONNX definition (gate
// order: RNN i; GRU z, r, h; LSTM i, o, f, c). `clip` clips every gate's input before
// its activation. `sequence_lens` must be known at compile time and equal the
// sequence length (shorter sequences would need masking): other values are unsupported.
#include "ember/importer/OnnxOpImporter.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

namespace ember {

namespace {

using K = NodeKind;

std::string str(int64_t v) {
  return std::to_string(v);
}

std::string lower(std::string s) {
  for (char& c : s)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// Emits the decomposition's nodes, each with a suffix of its own.
struct Builder {
  OnnxNodeContext& ctx;
  int count = 0;

  NodeValue emit(K k, std::vector<NodeValue> in, Attrs a = {}) {
    return ctx.emit(k, std::move(in), std::move(a), "_" + str(count++));
  }
  NodeValue scalar(float v) { return ctx.constant(Tensor::scalar<float>(v), "_" + str(count++)); }
  NodeValue zeros(Shape dims) {
    std::vector<float> v(static_cast<size_t>(numElements(dims)), 0.0f);
    return ctx.constant(Tensor::fromVector<float>(dims, v), "_" + str(count++));
  }
  /// x[begin:end] along `axis`.
  NodeValue slice(NodeValue x, size_t axis, int64_t begin, int64_t end) {
    const Shape& d = x.dims();
    std::vector<int64_t> s(d.size(), 0), e(d.begin(), d.end()), st(d.size(), 1);
    s[axis] = begin;
    e[axis] = end;
    Attrs a;
    a.set("starts", s);
    a.set("ends", e);
    a.set("steps", st);
    return emit(K::Slice, {x}, a);
  }
  NodeValue reshape(NodeValue x, std::vector<int64_t> shape) {
    Attrs a;
    a.set("shape", std::move(shape));
    return emit(K::Reshape, {x}, a);
  }
  NodeValue transpose(NodeValue x, std::vector<int64_t> perm) {
    Attrs a;
    a.set("perm", std::move(perm));
    return emit(K::Transpose, {x}, a);
  }
  NodeValue concat(std::vector<NodeValue> xs, int64_t axis) {
    if (xs.size() == 1)
      return xs[0];
    Attrs a;
    a.set("axis", axis);
    return emit(K::Concat, std::move(xs), a);
  }
  NodeValue add(NodeValue a, NodeValue b) { return emit(K::Add, {a, b}); }
  NodeValue sub(NodeValue a, NodeValue b) { return emit(K::Sub, {a, b}); }
  NodeValue mul(NodeValue a, NodeValue b) { return emit(K::Mul, {a, b}); }
  NodeValue matmul(NodeValue a, NodeValue b) { return emit(K::MatMul, {a, b}); }
};

/// One gate activation with its alpha and beta (ONNX's defaults where absent).
struct Activation {
  std::string name; // lower case
  double alpha = 0, beta = 0;
};

/// The activations of all directions: `perDir` per direction, ONNX's defaults when the
/// attribute is absent; alphas and betas are consumed in order by the activations that
/// take them.
std::vector<Activation> readActivations(OnnxNodeContext& ctx, size_t perDir, size_t dirs,
                                        const std::vector<std::string>& defaults) {
  std::vector<std::string> names;
  if (ctx.hasAttr("activations")) {
    for (const std::string& s : ctx.attrStrings("activations"))
      names.push_back(lower(s));
    if (names.size() != perDir * dirs)
      ctx.fail("attribute activations has " + str(int64_t(names.size())) + " values, expected " +
               str(int64_t(perDir * dirs)));
  } else {
    for (size_t d = 0; d < dirs; ++d)
      for (const std::string& s : defaults)
        names.push_back(lower(s));
  }
  const std::vector<double> alphas = ctx.attrFloats("activation_alpha");
  const std::vector<double> betas = ctx.attrFloats("activation_beta");
  size_t ai = 0, bi = 0;
  std::vector<Activation> out;
  for (const std::string& n : names) {
    Activation a{n};
    auto take = [&](const std::vector<double>& list, size_t& i, double def) {
      return i < list.size() ? list[i++] : def;
    };
    if (n == "leakyrelu")
      a.alpha = take(alphas, ai, 0.01);
    else if (n == "thresholdedrelu" || n == "elu")
      a.alpha = take(alphas, ai, 1.0);
    else if (n == "hardsigmoid") {
      a.alpha = take(alphas, ai, 0.2);
      a.beta = take(betas, bi, 0.5);
    } else if (n == "affine" || n == "scaledtanh") {
      a.alpha = take(alphas, ai, 1.0);
      a.beta = take(betas, bi, n == "affine" ? 0.0 : 1.0);
    } else if (n != "relu" && n != "tanh" && n != "sigmoid" && n != "softsign" && n != "softplus") {
      ctx.unsupported("activation '" + n + "' is not supported");
    }
    out.push_back(a);
  }
  return out;
}

NodeValue activate(Builder& b, const Activation& f, NodeValue x) {
  const std::string& n = f.name;
  if (n == "relu")
    return b.emit(K::Relu, {x});
  if (n == "tanh")
    return b.emit(K::Tanh, {x});
  if (n == "sigmoid")
    return b.emit(K::Sigmoid, {x});
  if (n == "softsign")
    return b.emit(K::Softsign, {x});
  if (n == "softplus")
    return b.emit(K::Softplus, {x});
  Attrs a;
  if (n == "leakyrelu" || n == "thresholdedrelu" || n == "elu") {
    a.set("alpha", f.alpha);
    return b.emit(n == "leakyrelu" ? K::LeakyRelu
                  : n == "elu"     ? K::Elu
                                   : K::ThresholdedRelu,
                  {x}, a);
  }
  if (n == "hardsigmoid") {
    a.set("alpha", f.alpha);
    a.set("beta", f.beta);
    return b.emit(K::HardSigmoid, {x}, a);
  }
  if (n == "affine")
    return b.add(b.mul(x, b.scalar(float(f.alpha))), b.scalar(float(f.beta)));
  // scaledtanh: alpha * tanh(beta * x)
  return b.mul(b.emit(K::Tanh, {b.mul(x, b.scalar(float(f.beta)))}), b.scalar(float(f.alpha)));
}

enum class Cell { Rnn, Gru, Lstm };

/// Everything one direction needs, as [batch, gates * hidden] pieces.
struct Direction {
  NodeValue xp;   // [seq, batch, G*H]: X W^T + biases outside the reset gate
  NodeValue rt;   // [H, G*H]: R^T
  NodeValue rbh;  // GRU with linear_before_reset: Rbh, [H] (else none)
  NodeValue p;    // LSTM peepholes [3H] (else none)
  NodeValue h, c; // initial state [batch, H]
  std::vector<Activation> acts;
};

struct Spec {
  Cell cell;
  int64_t seq = 0, batch = 0, in = 0, hidden = 0, gates = 1;
  bool layout1 = false, lbr = false, inputForget = false;
  std::optional<double> clip;
};

NodeValue gateInput(Builder& b, const Spec& s, NodeValue x) {
  if (!s.clip)
    return x;
  Attrs a;
  a.set("min", -*s.clip);
  a.set("max", *s.clip);
  return b.emit(K::Clip, {x}, a);
}

/// One step: the new H (and C for LSTM) from the projected input xt [batch, G*H].
void step(Builder& b, const Spec& s, Direction& d, NodeValue xt) {
  const int64_t H = s.hidden;
  auto gate = [&](NodeValue v, int64_t g) { return b.slice(v, 1, g * H, (g + 1) * H); };
  auto act = [&](size_t i, NodeValue v) { return activate(b, d.acts[i], gateInput(b, s, v)); };
  if (s.cell == Cell::Rnn) {
    d.h = act(0, b.add(xt, b.matmul(d.h, d.rt)));
    return;
  }
  if (s.cell == Cell::Gru) {
    NodeValue zr = b.add(b.slice(xt, 1, 0, 2 * H), b.matmul(d.h, b.slice(d.rt, 1, 0, 2 * H)));
    NodeValue z = act(0, gate(zr, 0)), r = act(0, gate(zr, 1));
    NodeValue rh = b.slice(d.rt, 1, 2 * H, 3 * H);
    NodeValue pre;
    if (s.lbr) {
      NodeValue hr = b.matmul(d.h, rh);
      if (d.rbh)
        hr = b.add(hr, d.rbh);
      pre = b.mul(r, hr);
    } else {
      pre = b.matmul(b.mul(r, d.h), rh);
    }
    NodeValue hh = act(1, b.add(gate(xt, 2), pre));
    // H = (1 - z) hh + z H
    d.h = b.add(b.mul(b.sub(b.scalar(1.0f), z), hh), b.mul(z, d.h));
    return;
  }
  NodeValue g4 = b.add(xt, b.matmul(d.h, d.rt));
  NodeValue iPre = gate(g4, 0), oPre = gate(g4, 1), fPre = gate(g4, 2), cPre = gate(g4, 3);
  if (d.p) {
    iPre = b.add(iPre, b.mul(b.slice(d.p, 0, 0, H), d.c));
    fPre = b.add(fPre, b.mul(b.slice(d.p, 0, 2 * H, 3 * H), d.c));
  }
  NodeValue i = act(0, iPre);
  NodeValue f = s.inputForget ? b.sub(b.scalar(1.0f), i) : act(0, fPre);
  d.c = b.add(b.mul(f, d.c), b.mul(i, act(1, cPre)));
  if (d.p)
    oPre = b.add(oPre, b.mul(b.slice(d.p, 0, H, 2 * H), d.c));
  d.h = b.mul(act(0, oPre), act(2, d.c));
}

/// Operand `i` of direction `dir` as [rest...] (its leading direction axis dropped).
NodeValue perDirection(Builder& b, NodeValue v, int64_t dir) {
  Shape rest(v.dims().begin() + 1, v.dims().end());
  return b.reshape(b.slice(v, 0, dir, dir + 1), rest);
}

/// The initial state operand `i` ([dirs, batch, H]; layout 1: [batch, dirs, H]) of `dir`.
NodeValue initialState(Builder& b, const Spec& s, int64_t dir, size_t i) {
  OnnxNodeContext& ctx = b.ctx;
  if (!ctx.hasInput(i))
    return b.zeros({s.batch, s.hidden});
  NodeValue v = ctx.input(i);
  return b.reshape(b.slice(v, s.layout1 ? 1 : 0, dir, dir + 1), {s.batch, s.hidden});
}

Direction prepare(Builder& b, const Spec& s, NodeValue x2, int64_t dir) {
  OnnxNodeContext& ctx = b.ctx;
  const int64_t GH = s.gates * s.hidden, H = s.hidden;
  Direction d;
  NodeValue wt = b.transpose(perDirection(b, ctx.input(1), dir), {1, 0});
  d.rt = b.transpose(perDirection(b, ctx.input(2), dir), {1, 0});
  NodeValue xp = b.matmul(x2, wt); // [seq * batch, G*H]
  if (ctx.hasInput(3)) {
    NodeValue bias = perDirection(b, ctx.input(3), dir); // [2 G*H]
    NodeValue wb = b.slice(bias, 0, 0, GH), rb = b.slice(bias, 0, GH, 2 * GH);
    if (s.cell == Cell::Gru && s.lbr) {
      // Rbh stays inside the reset gate's product.
      d.rbh = b.slice(rb, 0, 2 * H, 3 * H);
      rb = b.concat({b.slice(rb, 0, 0, 2 * H), b.zeros({H})}, 0);
    }
    xp = b.add(xp, b.add(wb, rb));
  }
  d.xp = b.reshape(xp, {s.seq, s.batch, GH});
  if (s.cell == Cell::Lstm && ctx.numInputs() > 7 && ctx.hasInput(7))
    d.p = perDirection(b, ctx.input(7), dir);
  d.h = initialState(b, s, dir, 5);
  if (s.cell == Cell::Lstm)
    d.c = initialState(b, s, dir, 6);
  return d;
}

void requireShape(OnnxNodeContext& ctx, size_t i, const char* what, const Shape& want) {
  if (i >= ctx.numInputs() || !ctx.hasInput(i))
    return;
  if (ctx.input(i).kind() != ElemKind::Float32)
    ctx.unsupported(std::string("operand ") + what + " has element kind " +
                    elemKindName(ctx.input(i).kind()) + "; only float32 is supported");
  if (ctx.input(i).dims() != want)
    ctx.fail(std::string("operand ") + what + " is " + shapeToString(ctx.input(i).dims()) +
             ", expected " + shapeToString(want));
}

Spec readSpec(OnnxNodeContext& ctx, Cell cell, size_t& dirs, bool& reverse) {
  Spec s;
  s.cell = cell;
  s.gates = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4;
  s.layout1 = ctx.attrInt("layout", 0) != 0;
  const std::string direction = ctx.attrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    ctx.fail("direction '" + direction + "' is not forward, reverse or bidirectional");
  dirs = direction == "bidirectional" ? 2 : 1;
  reverse = direction == "reverse";
  const Shape& x = ctx.input(0).dims();
  if (x.size() != 3)
    ctx.fail("input X " + shapeToString(x) + " must have rank 3");
  s.seq = s.layout1 ? x[1] : x[0];
  s.batch = s.layout1 ? x[0] : x[1];
  s.in = x[2];
  const Shape& r = ctx.input(2).dims();
  if (r.size() != 3)
    ctx.fail("operand R " + shapeToString(r) + " must have rank 3");
  s.hidden = ctx.attrInt("hidden_size", r[2]);
  if (s.hidden < 1 || s.seq < 1)
    ctx.fail("hidden_size and the sequence length must be positive");
  const int64_t D = int64_t(dirs), GH = s.gates * s.hidden;
  requireShape(ctx, 0, "X", x);
  requireShape(ctx, 1, "W", {D, GH, s.in});
  requireShape(ctx, 2, "R", {D, GH, s.hidden});
  requireShape(ctx, 3, "B", {D, 2 * GH});
  const Shape state = s.layout1 ? Shape{s.batch, D, s.hidden} : Shape{D, s.batch, s.hidden};
  requireShape(ctx, 5, "initial_h", state);
  if (cell == Cell::Lstm) {
    requireShape(ctx, 6, "initial_c", state);
    requireShape(ctx, 7, "P", {D, 3 * s.hidden});
    s.inputForget = ctx.attrInt("input_forget", 0) != 0;
  }
  if (cell == Cell::Gru)
    s.lbr = ctx.attrInt("linear_before_reset", 0) != 0;
  if (ctx.hasAttr("clip")) {
    s.clip = ctx.attrFloat("clip", 0);
    if (!(*s.clip > 0))
      ctx.fail("clip must be positive");
  }
  if (ctx.hasInput(4))
    for (int64_t len : ctx.constantInts(4, "sequence_lens"))
      if (len != s.seq)
        ctx.unsupported("sequence_lens value " + str(len) + " differs from the sequence length " +
                        str(s.seq) + " (sequences of different lengths are not supported)");
  return s;
}

void importRecurrent(OnnxNodeContext& ctx, Cell cell) {
  size_t dirs = 1;
  bool reverse = false;
  const Spec s = readSpec(ctx, cell, dirs, reverse);
  const size_t perDir = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 2 : 3;
  const std::vector<std::string> defaults =
      cell == Cell::Rnn   ? std::vector<std::string>{"Tanh"}
      : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                          : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  const std::vector<Activation> acts = readActivations(ctx, perDir, dirs, defaults);
  Builder b{ctx};
  NodeValue x = ctx.input(0);
  if (s.layout1)
    x = b.transpose(x, {1, 0, 2});
  NodeValue x2 = b.reshape(x, {s.seq * s.batch, s.in});
  std::vector<NodeValue> ys, yhs, ycs;
  for (size_t dir = 0; dir < dirs; ++dir) {
    Direction d = prepare(b, s, x2, int64_t(dir));
    d.acts.assign(acts.begin() + long(dir * perDir), acts.begin() + long((dir + 1) * perDir));
    const bool back = reverse || dir == 1;
    std::vector<NodeValue> hs(static_cast<size_t>(s.seq));
    for (int64_t k = 0; k < s.seq; ++k) {
      const int64_t t = back ? s.seq - 1 - k : k;
      NodeValue xt =
          b.reshape(b.slice(d.xp, 0, t, t + 1), {s.batch, s.gates * s.hidden}); // [batch, G*H]
      step(b, s, d, xt);
      hs[size_t(t)] = d.h;
    }
    if (ctx.hasOutput(0)) {
      std::vector<NodeValue> steps;
      for (NodeValue h : hs)
        steps.push_back(b.reshape(h, {1, 1, s.batch, s.hidden}));
      ys.push_back(b.concat(steps, 0));
    }
    yhs.push_back(b.reshape(d.h, {1, s.batch, s.hidden}));
    if (cell == Cell::Lstm)
      ycs.push_back(b.reshape(d.c, {1, s.batch, s.hidden}));
  }
  if (ctx.hasOutput(0)) {
    NodeValue y = b.concat(ys, 1); // [seq, dirs, batch, H]
    ctx.setOutput(0, s.layout1 ? b.transpose(y, {2, 0, 1, 3}) : y);
  }
  auto state = [&](const std::vector<NodeValue>& parts) {
    NodeValue v = b.concat(parts, 0); // [dirs, batch, H]
    return s.layout1 ? b.transpose(v, {1, 0, 2}) : v;
  };
  if (ctx.numOutputs() > 1 && ctx.hasOutput(1))
    ctx.setOutput(1, state(yhs));
  if (cell == Cell::Lstm && ctx.numOutputs() > 2 && ctx.hasOutput(2))
    ctx.setOutput(2, state(ycs));
}

} // namespace

void registerOnnxRecurrentImporters() {
  const std::vector<std::string> common = {
      "activation_alpha", "activation_beta", "activations", "clip",
      "direction",        "hidden_size",     "layout"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), common.begin(), common.end());
    return extra;
  };
  registerOnnxOp("RNN", with({}), [](OnnxNodeContext& c) { importRecurrent(c, Cell::Rnn); });
  registerOnnxOp("GRU", with({"linear_before_reset"}),
                 [](OnnxNodeContext& c) { importRecurrent(c, Cell::Gru); });
  registerOnnxOp("LSTM", with({"input_forget"}),
                 [](OnnxNodeContext& c) { importRecurrent(c, Cell::Lstm); });
}

} // namespace ember
