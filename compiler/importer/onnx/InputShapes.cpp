// The caller's options for an ONNX model's graph inputs, checked against the model's
// declarations, and the shapes the inputs are imported with (InputShapes.h).
#include "InputShapes.h"

#include "OnnxTensor.h"
#include "ember/support/Error.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <vector>

namespace ember::onnx_inputs {

namespace {

/// Ember's name of the input's element type, or ONNX's when Ember has no such kind.
std::string elemName(const onnx::ValueInfoProto& vi) {
  const int32_t t = vi.type().tensor_type().elem_type();
  try {
    return elemKindName(onnxElemKind(t, vi.name()));
  } catch (const Error&) {
    return onnxElemTypeName(t);
  }
}

bool hasShape(const onnx::ValueInfoProto& vi) {
  return vi.has_type() && vi.type().has_tensor_type() && vi.type().tensor_type().has_shape();
}

const onnx::TensorShapeProto& shapeOf(const onnx::ValueInfoProto& vi) {
  return vi.type().tensor_type().shape();
}

/// "the model's input 'x' is float32[batch, 3, 8, 8]".
std::string modelInput(const onnx::ValueInfoProto& vi) {
  return "the model's input '" + vi.name() + "' is " + declaredType(vi);
}

/// A shape against the input's declaration: "" when the rank and every fixed dimension
/// agree, else why not (`what` names the shape: "the shape", "the value").
std::string againstDeclared(const onnx::ValueInfoProto& vi, const Shape& dims,
                            const std::string& what) {
  if (!hasShape(vi))
    return "";
  const onnx::TensorShapeProto& s = shapeOf(vi);
  if (s.dim_size() != static_cast<int>(dims.size()))
    return what + " has rank " + std::to_string(dims.size()) + ", " + modelInput(vi) + " (rank " +
           std::to_string(s.dim_size()) + ")";
  for (int i = 0; i < s.dim_size(); ++i)
    if (s.dim(i).has_dim_value() && s.dim(i).dim_value() != dims[static_cast<size_t>(i)])
      return "dimension " + std::to_string(i) + " is " +
             std::to_string(dims[static_cast<size_t>(i)]) + ", but " + modelInput(vi) +
             " (its dimension " + std::to_string(i) + " is " +
             std::to_string(s.dim(i).dim_value()) + ")";
  return "";
}

/// The run-time inputs of `g` with their declared types, for "its inputs: ...".
std::string inputList(const onnx::GraphProto& g, const std::set<std::string>& initializers) {
  std::string s;
  for (const auto& vi : g.input())
    if (!initializers.count(vi.name()))
      s += (s.empty() ? "" : ", ") + vi.name() + ": " + declaredType(vi);
  return s.empty() ? "none" : s;
}

/// The message's advice for an input nothing gives a shape for.
std::string advice(const OnnxImportOptions& o, const std::string& name, const Shape* example) {
  if (o.shapeAdvice)
    return o.shapeAdvice(name, example);
  return "give the input's shape (OnnxImportOptions::inputShapes)";
}

/// "dimension 0 is unknown ('batch')", "dimensions 0 ('N'), 2 ('T') are unknown".
std::string unknownDimensions(const onnx::ValueInfoProto& vi) {
  std::vector<std::string> dims;
  for (int i = 0; i < shapeOf(vi).dim_size(); ++i) {
    const auto& d = shapeOf(vi).dim(i);
    if (!d.has_dim_value())
      dims.push_back(std::to_string(i) + (d.has_dim_param() ? " ('" + d.dim_param() + "')" : ""));
  }
  if (dims.size() == 1) {
    const std::size_t param = dims[0].find(' ');
    return "dimension " + dims[0].substr(0, param) + " is unknown" +
           (param == std::string::npos ? "" : dims[0].substr(param));
  }
  std::string list;
  for (const std::string& d : dims)
    list += (list.empty() ? "" : ", ") + d;
  return "dimensions " + list + " are unknown";
}

/// Checks one user entry of `kind` ("shape", "constant", "feed") for input `name`.
void checkEntry(const std::string& where, const std::string& name, const char* kind,
                const std::map<std::string, const onnx::ValueInfoProto*>& inputs,
                const std::set<std::string>& initializers, const OnnxImportOptions& o,
                const std::string& list) {
  auto it = inputs.find(name);
  if (it == inputs.end())
    throw Error(where, "the model has no input named '" + name + "' (its inputs: " + list + ")");
  const onnx::ValueInfoProto& vi = *it->second;
  const std::string k = kind;
  if (k != "constant" && initializers.count(name))
    throw Error(where, "'" + name +
                           "' is an initializer of the model (a constant), not a "
                           "run-time input");
  if (k == "shape") {
    const Shape& dims = o.inputShapes.at(name);
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] < 1)
        throw Error(where, "dimension " + std::to_string(i) + " of input '" + name + "' is " +
                               std::to_string(dims[i]) + "; every dimension must be at least 1");
    std::string why = againstDeclared(vi, dims, "the shape");
    if (!why.empty())
      throw Error(where, why);
    auto c = o.origins.constants.find(name);
    if (c != o.origins.constants.end())
      throw Error(where, "input '" + name + "' is also bound to a constant (" + c->second +
                             "); a bound input takes the value's shape");
  } else if (k == "constant") {
    const Tensor& t = o.constantInputs.at(name);
    const std::string want = elemName(vi);
    if (want != elemKindName(t.kind()))
      throw Error(where, "the value is " + t.type().toString() + ", " + modelInput(vi) +
                             " (element type " + want + ")");
    std::string why = againstDeclared(vi, t.dims(), "the value " + t.type().toString());
    if (!why.empty())
      throw Error(where, why);
  }
}

} // namespace

std::string declaredType(const onnx::ValueInfoProto& vi) {
  std::string s = elemName(vi) + "[";
  if (!hasShape(vi))
    return s + "?]";
  const onnx::TensorShapeProto& shape = shapeOf(vi);
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& d = shape.dim(i);
    s += (i ? ", " : "") + (d.has_dim_value()   ? std::to_string(d.dim_value())
                            : d.has_dim_param() ? d.dim_param()
                                                : std::string("?"));
  }
  return s + "]";
}

void checkUserEntries(const onnx::GraphProto& g, const OnnxImportOptions& o,
                      const std::string& what) {
  std::map<std::string, const onnx::ValueInfoProto*> inputs;
  for (const auto& vi : g.input())
    inputs.emplace(vi.name(), &vi);
  std::set<std::string> initializers;
  for (const auto& init : g.initializer())
    initializers.insert(init.name());
  const std::string list = inputList(g, initializers);
  const std::pair<const std::map<std::string, std::string>*, const char*> kinds[] = {
      {&o.origins.shapes, "shape"}, {&o.origins.constants, "constant"}, {&o.origins.feeds, "feed"}};
  for (const auto& [origins, kind] : kinds)
    for (const auto& [name, origin] : *origins) {
      const bool present = std::string(kind) == "shape"      ? o.inputShapes.count(name)
                           : std::string(kind) == "constant" ? o.constantInputs.count(name)
                                                             : o.feedShapes.count(name);
      if (present)
        checkEntry(what + ": " + origin, name, kind, inputs, initializers, o, list);
    }
}

std::vector<int64_t> declaredDims(const onnx::ValueInfoProto& vi, std::size_t rank) {
  if (!hasShape(vi))
    return std::vector<int64_t>(rank, -1);
  std::vector<int64_t> dims;
  for (int i = 0; i < shapeOf(vi).dim_size(); ++i)
    dims.push_back(shapeOf(vi).dim(i).has_dim_value() ? shapeOf(vi).dim(i).dim_value() : -1);
  return dims;
}

Shape inputShape(const onnx::ValueInfoProto& vi, const OnnxImportOptions& o,
                 const std::string& where, bool& overrodeFixed) {
  const bool declared = hasShape(vi);
  auto given = o.inputShapes.find(vi.name());
  if (given != o.inputShapes.end()) {
    const Shape& dims = given->second;
    if (declared && shapeOf(vi).dim_size() != static_cast<int>(dims.size()))
      throw Error(where, "the given shape " + shapeToString(dims) + " has rank " +
                             std::to_string(dims.size()) + ", the model's input has rank " +
                             std::to_string(shapeOf(vi).dim_size()));
    for (int i = 0; declared && i < shapeOf(vi).dim_size(); ++i)
      if (shapeOf(vi).dim(i).has_dim_value() &&
          shapeOf(vi).dim(i).dim_value() != dims[static_cast<size_t>(i)])
        overrodeFixed = true;
    return dims;
  }
  if (!declared)
    throw Error(where, "the model gives no shape for this input; " + advice(o, vi.name(), nullptr));
  Shape dims, example;
  bool unknown = false;
  for (int i = 0; i < shapeOf(vi).dim_size(); ++i) {
    const auto& d = shapeOf(vi).dim(i);
    dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    example.push_back(d.has_dim_value() ? d.dim_value() : 1);
    unknown |= !d.has_dim_value();
  }
  if (!unknown)
    return dims;
  auto feed = o.feedShapes.find(vi.name());
  if (feed == o.feedShapes.end())
    throw Error(where, unknownDimensions(vi) + "; " + advice(o, vi.name(), &example));
  if (feed->second.size() != dims.size()) {
    auto origin = o.origins.feeds.find(vi.name());
    throw Error(origin == o.origins.feeds.end() ? where : origin->second,
                "the value's shape " + shapeToString(feed->second) + " has rank " +
                    std::to_string(feed->second.size()) + ", " + modelInput(vi) + " (rank " +
                    std::to_string(dims.size()) + ")");
  }
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0)
      dims[i] = feed->second[i];
  return dims;
}

} // namespace ember::onnx_inputs
