#pragma once
/// \file
/// The shapes and bindings of an ONNX model's graph inputs: the caller's options
/// (OnnxImportOptions::inputShapes, constantInputs, feedShapes) checked against what the
/// model declares, and the shape every run-time input is imported with. Private to the
/// ONNX importer.

#include "ember/importer/OnnxImporter.h"

#include <string>

namespace onnx {
class GraphProto;
class ValueInfoProto;
} // namespace onnx

namespace ember::onnx_inputs {

/// The declared type of a graph input as the model writes it, symbolic dimensions by
/// name and unknown ones as '?': "float32[batch, 3, 224, 224]" ("float32[?]" without a
/// shape).
std::string declaredType(const onnx::ValueInfoProto& vi);

/// Checks every entry of `o` that has an origin (a user's) against the graph inputs of
/// `g`, before anything is imported: the name must be a graph input, a shape must keep
/// the input's rank and every dimension the model fixes and have no dimension below 1, a
/// constant must have the input's element type, rank and fixed dimensions, and no input
/// may be both bound and shaped. Errors name `what` (the model), the origin, the input
/// and the reason.
void checkUserEntries(const onnx::GraphProto& g, const OnnxImportOptions& o,
                      const std::string& what);

/// The dimensions graph input `vi` is imported with: its inputShapes entry, else the
/// declared ones with the unknown dimensions taken from its feedShapes entry. An input
/// whose dimensions nothing decides is an ember::Error naming `where` with the caller's
/// advice (OnnxImportOptions::shapeAdvice). Sets `overrodeFixed` when an inputShapes
/// entry replaced a dimension the model fixes.
/// The input's dimensions as the model declares them, -1 for an unknown one (all `rank`
/// of them when the model gives no shape).
std::vector<int64_t> declaredDims(const onnx::ValueInfoProto& vi, std::size_t rank);

Shape inputShape(const onnx::ValueInfoProto& vi, const OnnxImportOptions& o,
                 const std::string& where, bool& overrodeFixed);

} // namespace ember::onnx_inputs
