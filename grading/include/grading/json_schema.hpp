// JSON Schema validation of the documents the grader writes and reads (results.json, the rubric), done by
// valijson (Debian: libvalijson-dev). valijson implements draft 07: a schema may use only keywords that
// draft 07 defines with the same meaning, since valijson ignores any keyword it does not know.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace grading {

struct SchemaError {
    std::string instance_path;  // JSON pointer into the document, e.g. "/exercises/0/points"
    std::string message;        // e.g. "Missing required property 'status'."
};

// Validates `document` against `schema`; returns every error found (empty: valid). A schema valijson cannot
// use (malformed keyword value, unresolvable $ref, invalid pattern) gives one error with an empty path whose
// message starts "schema error:", so a broken schema never passes a document.
std::vector<SchemaError> validate_json_schema(const nlohmann::json& schema, const nlohmann::json& document);

}  // namespace grading
