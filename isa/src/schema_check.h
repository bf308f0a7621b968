// Internal: a small JSON Schema validator (the subset isa/schema.json uses).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ember::isa::detail {

/// isa/schema.json, embedded at build time.
const nlohmann::json& embeddedSchema();

/// Validates `doc` against `schema` (keywords: $ref, type, enum, const, minimum, maximum,
/// minLength, maxLength, minItems, maxItems, required, properties, additionalProperties,
/// items). Throws Error(file, json-pointer, reason) at the first violation.
void validateSchema(const nlohmann::json& doc, const nlohmann::json& schema,
                    const std::string& file);

/// JSON pointer escaping of one key (~ -> ~0, / -> ~1).
std::string pointerKey(const std::string& key);

} // namespace ember::isa::detail
