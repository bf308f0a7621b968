#pragma once
/// \file
/// A function as bytes, and back: how a package (docs/package.md) carries the segments
/// a host backend runs. The form is Ember's own graph IR (node kinds of Nodes.def, typed
/// values with their quantization, ONNX-style attributes, constants with their bytes), so
/// the interpreter and the cpu backend run a loaded function exactly as they ran the one
/// that was saved. Loading never trusts the bytes: every node is re-created through
/// Function::create, which infers and checks its types.

#include "ember/graph/Graph.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember {

/// The bytes of `f`: a JSON description (placeholders, constants, nodes, outputs)
/// followed by the constants' bytes. Deterministic: the same function gives the same
/// bytes. Throws ember::Error for what JSON cannot carry (a NaN or infinite attribute).
std::vector<uint8_t> serializeFunction(const Function& f);

/// A module holding the one function `bytes` describe (its placeholders and constants
/// too). Throws ember::Error naming `where` and the place (node, field) for anything
/// malformed: bad JSON, unknown kinds, dangling references, sizes that disagree.
std::unique_ptr<Module> deserializeFunction(const uint8_t* data, size_t size,
                                            const std::string& where);

} // namespace ember
