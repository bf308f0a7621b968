// Typed views of the element-wise kinds' attributes, with ONNX's defaults.
#include "ember/graph/attrs/ElementwiseAttrs.h"

namespace ember {

namespace {

/// The ONNX defaults of the float unary maps that have parameters.
struct UnaryDefaults {
  NodeKind kind;
  UnaryAttrs defaults;
};

const UnaryDefaults kUnaryDefaults[] = {
    {NodeKind::LeakyRelu, {0.01}},
    {NodeKind::Elu, {1.0}},
    {NodeKind::Selu, {1.67326319217681884765625, 0, 1.05070102214813232421875}},
    {NodeKind::Celu, {1.0}},
    {NodeKind::ThresholdedRelu, {1.0}},
    {NodeKind::HardSigmoid, {0.2, 0.5}},
    {NodeKind::Shrink, {0, 0, 0, 0, 0.5}},
};

} // namespace

UnaryAttrs unaryOf(NodeKind k, const Attrs& a) {
  UnaryAttrs d;
  for (const UnaryDefaults& e : kUnaryDefaults)
    if (e.kind == k)
      d = e.defaults;
  UnaryAttrs p;
  p.alpha = a.getFloat("alpha", d.alpha);
  p.beta = a.getFloat("beta", d.beta);
  p.gamma = a.getFloat("gamma", d.gamma);
  p.bias = a.getFloat("bias", d.bias);
  p.lambd = a.getFloat("lambd", d.lambd);
  return p;
}

ClipAttrs clipOf(const Attrs& a) {
  ClipAttrs c;
  if (a.has("min"))
    c.min = a.getFloat("min");
  if (a.has("max"))
    c.max = a.getFloat("max");
  return c;
}

CastAttrs castOf(const Attrs& a) {
  return {a.getString("to")};
}

IsInfAttrs isInfOf(const Attrs& a) {
  IsInfAttrs r;
  r.detectNegative = a.getInt("detect_negative", 1) != 0;
  r.detectPositive = a.getInt("detect_positive", 1) != 0;
  return r;
}

ModAttrs modOf(const Attrs& a) {
  return {a.getInt("fmod", 0) != 0};
}

BitShiftAttrs bitShiftOf(const Attrs& a) {
  return {a.getString("direction", "")};
}

} // namespace ember
