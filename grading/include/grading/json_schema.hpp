// A small JSON Schema validator for the subset of draft 2020-12 that grading/results.schema.json
// uses. It exists so the tests can prove every results.json we write matches the published schema
// without pulling in another dependency.
//
// Supported keywords: type (string or array of strings; "integer" accepts integral numbers),
// properties, required, additionalProperties (bool or schema), items (schema), minItems, maxItems,
// enum, const, minimum, maximum, minLength, pattern (std::regex ECMAScript), $ref to "#/$defs/NAME",
// $defs, anyOf, oneOf, description/title/$schema/$id/$comment (ignored). Any other keyword is an error
// reported by validate(), so the schema cannot silently use something unchecked.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace grading {

struct SchemaError {
    std::string instance_path;   // JSON pointer into the document, e.g. "/exercises/0/points"
    std::string message;         // e.g. "required property 'status' is missing"
};

// Validates `document` against `schema`; returns every error found (empty: valid).
std::vector<SchemaError> validate_json_schema(const nlohmann::json& schema, const nlohmann::json& document);

}  // namespace grading
