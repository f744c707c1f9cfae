// What the grader relies on from grading::validate_json_schema (valijson underneath): results.schema.json loads,
// a report as the grader writes it passes, and every kind of constraint the schema uses rejects a document that
// breaks it, at the right instance path. valijson ignores keywords it does not implement, so the schemas
// (results.schema.json and rubric.schema.json) are also held to the keywords proven here.
#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "grading/json_schema.hpp"
#include "support/test_support.hpp"
#include "grading/report.hpp"
#include "harness/timing/stopping_rule.hpp"
#include "grading/rubric.hpp"

using grading::SchemaError;
using grading::validate_json_schema;
using nlohmann::json;

namespace {

using test_support::results_schema;

// One graded exercise with a timed case (timing object) and an untimed one (timing null), as to_json writes it.
json valid_report()
{
    grading::CaseResult timed;
    timed.label = "n=1024/int";
    timed.n = 1024;
    timed.shape = {{"n", 1024}};
    timed.data = "integers";
    timed.seed = std::numeric_limits<std::uint64_t>::max();  // seeds are 64-bit hashes: beyond int64 too
    timed.timed = true;
    timed.status = grading::CaseStatus::pass;
    timed.timing = grading::TimingResult{};
    timed.timing->reps_per_batch = 4;
    timed.timing->turns = 1;
    timed.timing->stopping_rule = harness::timing::StoppingRule{}.describe();
    grading::CaseResult untimed = timed;
    untimed.index = 1;
    untimed.timed = false;
    untimed.timing.reset();

    grading::ExerciseResult exercise;
    exercise.name = "scan_kogge_stone";
    exercise.status = grading::ExerciseStatus::graded;
    exercise.cases = {timed, untimed};
    grading::GradeReport report;
    report.started_at = "2026-11-22T01:00:00Z";
    report.exercises = {exercise};
    return grading::to_json(report);
}

std::string dump(const std::vector<SchemaError>& errors)
{
    std::string out;
    for (const auto& e : errors) out += "'" + e.instance_path + "': " + e.message + "\n";
    return out;
}

struct Violation {
    const char* what;
    std::function<void(json&)> apply;
    const char* instance_path;
    const char* message_part;
};

// Each breaks one constraint inside a $ref'd definition or at the top level; "exercise" and "case" are reached
// through "#/$defs/...", so an error at their paths also proves the $ref is followed.
const std::vector<Violation>& violations()
{
    static const std::vector<Violation> list = {
        {"type", [](json& d) { d["exercises"][0]["points"] = "10"; }, "/exercises/0/points", "'type'"},
        {"integer type", [](json& d) { d["exercises"][0]["cases"][1]["index"] = 1.5; }, "/exercises/0/cases/1/index",
         "'type'"},
        {"required", [](json& d) { d["exercises"][0]["cases"][0].erase("status"); }, "/exercises/0/cases/0",
         "Missing required property 'status'"},
        {"enum", [](json& d) { d["exercises"][0]["status"] = "full_marks"; }, "/exercises/0/status", "enum"},
        {"const", [](json& d) { d["schema_version"] = 2; }, "/schema_version", "'const'"},
        {"additionalProperties false", [](json& d) { d["exercises"][0]["cases"][0]["bonus"] = 5; },
         "/exercises/0/cases/0", "'bonus'"},
        {"minimum", [](json& d) { d["exercises"][0]["max_points"] = -1; }, "/exercises/0/max_points",
         "greater than or equal to 0"},
        {"a case's shape is required", [](json& d) { d["exercises"][0]["cases"][1].erase("shape"); },
         "/exercises/0/cases/1", "Missing required property 'shape'"},
        {"minLength", [](json& d) { d["exercises"][0]["cases"][1]["label"] = ""; }, "/exercises/0/cases/1/label",
         "no fewer than 1 characters"},
        {"pattern", [](json& d) { d["started_at"] = "2026-11-22 01:00"; }, "/started_at", "'pattern'"},
        {"sandbox limit names", [](json& d) { d["sandbox_limits"]["enforced"] = {"everything"}; },
         "/sandbox_limits/enforced/0", "enum"},
        {"items",
         [](json& d) {
             d["exercises"][0]["library_use"] = {"cub", 3};
         },
         "/exercises/0/library_use/1", "'type'"},
    };
    return list;
}

bool has_error(const std::vector<SchemaError>& errors, const std::string& path, const std::string& message_part)
{
    for (const auto& e : errors)
        if (e.instance_path == path && e.message.find(message_part) != std::string::npos) return true;
    return false;
}

// Calls `visit` on the schema and every subschema reached through the keywords results.schema.json nests with.
void for_each_subschema(const json& schema, const std::string& at,
                        const std::function<void(const std::string&, const json&)>& visit)
{
    visit(at, schema);
    if (!schema.is_object()) return;
    for (const char* keyword : {"properties", "$defs"})
        if (auto it = schema.find(keyword); it != schema.end())
            for (const auto& [name, sub] : it->items()) for_each_subschema(sub, at + "/" + keyword + "/" + name, visit);
    for (const char* keyword : {"items", "additionalProperties"})
        if (auto it = schema.find(keyword); it != schema.end()) for_each_subschema(*it, at + "/" + keyword, visit);
    if (auto it = schema.find("anyOf"); it != schema.end())
        for (std::size_t i = 0; i < it->size(); ++i)
            for_each_subschema((*it)[i], at + "/anyOf/" + std::to_string(i), visit);
}

}  // namespace

TEST_CASE("results.schema.json loads and a report as the grader writes it passes")
{
    const auto errors = validate_json_schema(results_schema(), valid_report());
    INFO(dump(errors));
    CHECK(errors.empty());
}

TEST_CASE("each constraint the schema relies on rejects a document that breaks it, once, at its path")
{
    for (const auto& v : violations()) {
        json doc = valid_report();
        v.apply(doc);
        const auto errors = validate_json_schema(results_schema(), doc);
        INFO(v.what << "\n" << dump(errors));
        CHECK(errors.size() == 1);  // valijson's repeats at the enclosing levels are not reported
        CHECK(has_error(errors, v.instance_path, v.message_part));
    }
}

TEST_CASE("a case's shape is one of the families' (results.schema.json's $defs/case_shape)")
{
    json doc = valid_report();
    for (const json& shape : {json{{"n", 5}, {"mask_width", 3}}, json{{"height", 2}, {"width", 3}, {"mask_width", 3}}}) {
        doc["exercises"][0]["cases"][0]["shape"] = shape;
        CHECK(validate_json_schema(results_schema(), doc).empty());
    }
    // An array's n with an image's height, an image without its width: each branch says why it does not
    // fit, then anyOf that none did.
    for (const json& shape : {json{{"n", 5}, {"height", 3}}, json{{"height", 2}, {"mask_width", 3}}, json::object()}) {
        doc["exercises"][0]["cases"][0]["shape"] = shape;
        const auto errors = validate_json_schema(results_schema(), doc);
        INFO(shape.dump() << "\n" << dump(errors));
        CHECK(has_error(errors, "/exercises/0/cases/0/shape", "any schemas allowed by anyOf"));
        for (const auto& e : errors) CHECK(e.instance_path == "/exercises/0/cases/0/shape");
    }
}

TEST_CASE("every violation in a document is reported, not just the first")
{
    json doc = valid_report();
    for (const auto& v : violations()) v.apply(doc);  // each touches a different value
    const auto errors = validate_json_schema(results_schema(), doc);
    INFO(dump(errors));
    CHECK(errors.size() == violations().size());
    for (const auto& v : violations()) CHECK(has_error(errors, v.instance_path, v.message_part));
}

TEST_CASE("a timing object breaking its $ref'd definition fails the timing anyOf (null or timing)")
{
    json doc = valid_report();
    doc["exercises"][0]["cases"][0]["timing"]["reps_per_batch"] = -1;
    doc["exercises"][0]["cases"][0]["timing"]["turns"] = 3;
    const auto errors = validate_json_schema(results_schema(), doc);
    INFO(dump(errors));
    const std::string timing = "/exercises/0/cases/0/timing";
    CHECK(has_error(errors, timing, "anyOf"));
    CHECK(has_error(errors, timing + "/reps_per_batch", "greater than or equal to 0"));
    CHECK(has_error(errors, timing + "/turns", "less than or equal to 2"));
}

TEST_CASE("instance paths escape '~' and '/' in property names")
{
    const auto errors =
        validate_json_schema(json::parse(R"({"additionalProperties": {"type": "integer"}})"), json{{"a/b~c", "x"}});
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].instance_path == "/a~1b~0c");
}

TEST_CASE("a schema valijson cannot use fails every document instead of passing it")
{
    for (const char* schema : {R"({"type": "float"})", R"({"$ref": "#/$defs/missing"})", R"({"pattern": "("})"}) {
        const auto errors = validate_json_schema(json::parse(schema), "x");
        INFO(schema << "\n" << dump(errors));
        REQUIRE(errors.size() == 1);
        CHECK(errors[0].instance_path == "");
        CHECK(errors[0].message.rfind("schema error: ", 0) == 0);
    }
}

TEST_CASE("exclusiveMinimum (the rubric's speed_step) rejects the bound itself and accepts what is above it")
{
    const json schema = json::parse(R"({"properties": {"step": {"type": "number", "exclusiveMinimum": 0}}})");
    for (const double refused : {0.0, -0.25}) {
        const auto errors = validate_json_schema(schema, json{{"step", refused}});
        INFO(refused << "\n" << dump(errors));
        REQUIRE(errors.size() == 1);
        CHECK(has_error(errors, "/step", "greater than 0"));
    }
    CHECK(validate_json_schema(schema, json{{"step", 1e-9}}).empty());
}

TEST_CASE("the schemas use only keywords proven above, and nothing beside a $ref")
{
    // A keyword added to the schema belongs here only with a violation above proving valijson enforces it: an
    // unknown one (a 2020-12 novelty, a typo) is silently ignored. Draft 07, which valijson implements, also
    // ignores whatever sits beside a "$ref", and reads an array "items" as a tuple.
    static const std::set<std::string> proven = {
        "type",    "required", "enum", "const", "additionalProperties", "properties", "minimum", "maximum", "minLength",
        "pattern", "items",    "$ref", "anyOf", "exclusiveMinimum"};
    static const std::set<std::string> annotations = {"$schema", "$id", "$defs", "title", "description"};
    const json results = results_schema();
    for (const json* checked : {&results, &grading::rubric_schema()}) {
        for_each_subschema(*checked, "#", [&](const std::string& at, const json& schema) {
            if (schema.is_boolean()) return;
            for (const auto& [keyword, value] : schema.items()) {
                INFO(checked->value("$id", "") << " " << at << ": " << keyword);
                CHECK((proven.count(keyword) > 0 || annotations.count(keyword) > 0));
                if (schema.contains("$ref")) CHECK((keyword == "$ref" || annotations.count(keyword) > 0));
                if (keyword == "items") CHECK(value.is_object());
            }
        });
    }
}
