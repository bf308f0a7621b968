// The registry of ONNX operator importers, and the few importers the framework itself
// provides (Constant, Identity, Dropout, Shape, Size) when no family registers them:
// they turn into Constants or plain value forwarding, never into nodes.
#include "ember/importer/OnnxImporter.h"
#include "ember/importer/OnnxOpImporter.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace ember {

namespace {

std::map<std::string, OnnxOpDef>& table() {
  static std::map<std::string, OnnxOpDef> t;
  return t;
}

/// Constant: the `value` tensor attribute, or one of the opset-12 value_* forms.
void importConstant(OnnxNodeContext& ctx) {
  if (auto t = ctx.attrTensor("value")) {
    ctx.setOutput(0, ctx.constant(std::move(*t)));
  } else if (ctx.hasAttr("value_float")) {
    ctx.setOutput(0, ctx.constant(Tensor::scalar<float>(
                         static_cast<float>(ctx.attrFloat("value_float", 0)))));
  } else if (ctx.hasAttr("value_int")) {
    ctx.setOutput(0, ctx.constant(Tensor::scalar<int64_t>(ctx.attrInt("value_int", 0))));
  } else if (ctx.hasAttr("value_floats")) {
    std::vector<double> v = ctx.attrFloats("value_floats");
    std::vector<float> f(v.begin(), v.end());
    ctx.setOutput(0, ctx.constant(Tensor::fromVector<float>({int64_t(f.size())}, f)));
  } else if (ctx.hasAttr("value_ints")) {
    std::vector<int64_t> v = ctx.attrInts("value_ints");
    ctx.setOutput(0, ctx.constant(Tensor::fromVector<int64_t>({int64_t(v.size())}, v)));
  } else if (ctx.hasAttr("sparse_value") || ctx.hasAttr("value_string") ||
             ctx.hasAttr("value_strings")) {
    ctx.unsupported("sparse and string constants are not supported");
  } else {
    ctx.fail("has no value attribute");
  }
}

/// Identity: forwards its operand.
void importIdentity(OnnxNodeContext& ctx) {
  ctx.setOutput(0, ctx.input(0));
}

/// Dropout in inference (or training with ratio 0): forwards its operand; the optional
/// mask is all true.
void importDropout(OnnxNodeContext& ctx) {
  if (ctx.hasInput(2)) {
    std::optional<Tensor> training = ctx.constantInput(2);
    if (!training)
      ctx.unsupported("training_mode must be known at compile time");
    if (training->size() > 0 && training->getAsInt(0) != 0) {
      // Training mode drops at random, except with ratio 0 (ONNX's default is 0.5).
      std::optional<Tensor> ratio = ctx.hasInput(1) ? ctx.constantInput(1) : std::nullopt;
      if (ctx.hasInput(1) && !ratio)
        ctx.unsupported("in training mode, ratio must be known at compile time");
      if (!ratio || ratio->size() != 1 || ratio->getAsDouble(0) != 0.0)
        ctx.unsupported("Dropout in training mode with a ratio other than 0 (random drops)");
    }
  }
  NodeValue x = ctx.input(0);
  ctx.setOutput(0, x);
  if (ctx.hasOutput(1)) {
    Tensor mask(ElemKind::Bool, x.dims());
    for (int64_t i = 0; i < mask.size(); ++i)
      mask.data<bool>()[i] = true;
    ctx.setOutput(1, ctx.constant(std::move(mask), "_mask"));
  }
}

/// Shape: static shapes make it a Constant (opset-15 start/end honoured).
void importShape(OnnxNodeContext& ctx) {
  const Shape& dims = ctx.input(0).dims();
  auto rank = static_cast<int64_t>(dims.size());
  auto clampAxis = [rank](int64_t a) {
    if (a < 0)
      a += rank;
    return a < 0 ? 0 : (a > rank ? rank : a);
  };
  int64_t start = clampAxis(ctx.attrInt("start", 0));
  int64_t end = clampAxis(ctx.attrInt("end", rank));
  std::vector<int64_t> v;
  for (int64_t i = start; i < end; ++i)
    v.push_back(dims[static_cast<size_t>(i)]);
  ctx.setOutput(0, ctx.constant(Tensor::fromVector<int64_t>({int64_t(v.size())}, v)));
}

/// Size: number of elements, a scalar int64 Constant.
void importSize(OnnxNodeContext& ctx) {
  ctx.setOutput(0, ctx.constant(Tensor::scalar<int64_t>(numElements(ctx.input(0).dims()))));
}

void registerAll() {
  registerOnnxElementwiseImporters();
  registerOnnxReductionImporters();
  registerOnnxNNImporters();
  registerOnnxDataMovementImporters();
  registerOnnxQuantImporters();
  registerOnnxQLinearImporters();
  registerOnnxIndexImporters();
  registerOnnxRecurrentImporters();
  registerOnnxComposedImporters();
  // Framework fall-backs: only where no family provides its own.
  const std::pair<const char*, OnnxOpDef> builtins[] = {
      {"Constant",
       {{"sparse_value", "value", "value_float", "value_floats", "value_int", "value_ints",
         "value_string", "value_strings"},
        importConstant}},
      {"Identity", {{}, importIdentity}},
      // ratio and seed do not matter in inference.
      {"Dropout", {{"ratio", "seed"}, importDropout}},
      {"Shape", {{"end", "start"}, importShape}},
      {"Size", {{}, importSize}},
  };
  for (const auto& [name, def] : builtins)
    if (!table().count(name))
      registerOnnxOp(name, def.attrs, def.fn);
}

const std::map<std::string, OnnxOpDef>& registry() {
  static std::once_flag once;
  std::call_once(once, registerAll);
  return table();
}

} // namespace

void registerOnnxOp(const std::string& opType, std::vector<std::string> attrs, OnnxOpImportFn fn) {
  std::sort(attrs.begin(), attrs.end());
  table()[opType] = OnnxOpDef{std::move(attrs), std::move(fn)};
}

const OnnxOpDef* findOnnxOp(const std::string& opType) {
  const auto& t = registry();
  auto it = t.find(opType);
  return it == t.end() ? nullptr : &it->second;
}

std::vector<std::string> supportedOnnxOps() {
  std::vector<std::string> out;
  for (const auto& [name, def] : registry())
    out.push_back(name);
  return out;
}

} // namespace ember
