// validate_json_schema on top of valijson. What is ours: valijson's error contexts become JSON pointers, the
// repeats it adds at every enclosing level of a failure are dropped (so each violation is reported once, where
// it is), and unsigned integers beyond int64 are kept away from its nlohmann adapter.
#include "grading/json_schema.hpp"

#include <cstdint>
#include <exception>
#include <limits>
#include <optional>

// Without exceptions valijson aborts the whole grader on a schema it cannot use; with them that becomes an error.
#ifndef VALIJSON_USE_EXCEPTIONS
#define VALIJSON_USE_EXCEPTIONS 1
#endif
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

namespace grading {
namespace {

using json = nlohmann::json;

// RFC 6901 escaping of one reference token: '~' -> "~0", '/' -> "~1".
std::string escape_token(const std::string& token)
{
    std::string out;
    for (char c : token) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

// valijson names the failing value by its context: "<root>", then one "[key]" or "[index]" per level.
std::string json_pointer(const std::vector<std::string>& context)
{
    std::string pointer;
    for (std::size_t i = 1; i < context.size(); ++i) {
        const std::string& piece = context[i];
        const bool bracketed = piece.size() >= 2 && piece.front() == '[' && piece.back() == ']';
        pointer += "/" + escape_token(bracketed ? piece.substr(1, piece.size() - 2) : piece);
    }
    return pointer;
}

// After the error that says what is wrong, valijson adds one at each enclosing property, item and allOf
// branch ("Failed to validate item #0 in array."); they say nothing more, and would multiply every violation.
bool is_enclosing_repeat(const std::string& description)
{
    static const char* const kRepeatPrefixes[] = {
        "Failed to validate item #",
        "Failed to validate against schema associated with property name ",
        "Failed to validate against schema associated with pattern ",
        "Failed to validate against additional properties schema",
        "Failed to validate against child schema #",
    };
    for (const char* prefix : kRepeatPrefixes)
        if (description.rfind(prefix, 0) == 0) return true;
    return false;
}

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

bool beyond_int64(const json& value)
{
    return value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(kInt64Max);
}

bool contains_beyond_int64(const json& value)
{
    if (beyond_int64(value)) return true;
    if (value.is_structured())
        for (const auto& item : value)
            if (contains_beyond_int64(item)) return true;
    return false;
}

void clamp_to_int64(json& value)
{
    if (beyond_int64(value))
        value = kInt64Max;
    else if (value.is_structured())
        for (auto& item : value) clamp_to_int64(item);
}

}  // namespace

std::vector<SchemaError> validate_json_schema(const nlohmann::json& schema, const nlohmann::json& document)
{
    using valijson::adapters::NlohmannJsonAdapter;

    // valijson's nlohmann adapter reads every integer as int64_t, so a 64-bit seed above INT64_MAX would wrap
    // negative and fail "minimum": 0. INT64_MAX stands in for such values: still an integer, and on the same
    // side as the real value of every bound below 2^63. The copy is made only when there is one.
    std::optional<json> clamped;
    if (contains_beyond_int64(document)) {
        clamped = document;
        clamp_to_int64(*clamped);
    }

    valijson::ValidationResults results;
    try {
        valijson::Schema parsed;
        valijson::SchemaParser(valijson::SchemaParser::kDraft7).populateSchema(NlohmannJsonAdapter(schema), parsed);
        valijson::Validator validator;  // strict types: "3" is not a number, 1 is not a boolean
        validator.validate(parsed, NlohmannJsonAdapter(clamped ? *clamped : document), &results);
    } catch (const std::exception& e) {  // patterns are compiled while validating, so both steps can throw
        return {{"", std::string("schema error: ") + e.what()}};
    }

    std::vector<SchemaError> errors;
    for (const auto& error : results)
        if (!is_enclosing_repeat(error.description)) errors.push_back({json_pointer(error.context), error.description});
    return errors;
}

}  // namespace grading
