// Unit tests for grading::validate_json_schema: each supported keyword accepting and rejecting,
// instance paths in messages, $ref, and the schema checks (unknown keywords, bad values).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "grading/json_schema.hpp"

using grading::SchemaError;
using grading::validate_json_schema;
using nlohmann::json;

namespace {

std::vector<SchemaError> check(const char* schema, const json& doc) {
    return validate_json_schema(json::parse(schema), doc);
}

bool valid(const char* schema, const json& doc) { return check(schema, doc).empty(); }

// All errors as "path: message" lines, for failure output and substring checks.
std::string dump(const std::vector<SchemaError>& errors) {
    std::string out;
    for (const auto& e : errors) out += e.instance_path + ": " + e.message + "\n";
    return out;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("type: single names") {
    CHECK(valid(R"({"type":"string"})", "x"));
    CHECK_FALSE(valid(R"({"type":"string"})", 1));
    CHECK(valid(R"({"type":"null"})", nullptr));
    CHECK_FALSE(valid(R"({"type":"null"})", false));
    CHECK(valid(R"({"type":"boolean"})", true));
    CHECK_FALSE(valid(R"({"type":"boolean"})", 0));
    CHECK(valid(R"({"type":"object"})", json::object()));
    CHECK_FALSE(valid(R"({"type":"object"})", json::array()));
    CHECK(valid(R"({"type":"array"})", json::array()));
    CHECK_FALSE(valid(R"({"type":"array"})", json::object()));

    auto errors = check(R"({"type":"string"})", 1);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].instance_path == "");
    CHECK(contains(errors[0].message, "expected type string, got integer"));
}

TEST_CASE("type: integer and number") {
    CHECK(valid(R"({"type":"integer"})", 3));
    CHECK(valid(R"({"type":"integer"})", -3));
    CHECK(valid(R"({"type":"integer"})", 3.0));                 // no fractional part
    CHECK(valid(R"({"type":"integer"})", json::parse("1e3")));  // parsed as a float, integral
    CHECK_FALSE(valid(R"({"type":"integer"})", 3.5));
    CHECK_FALSE(valid(R"({"type":"integer"})", true));
    CHECK_FALSE(valid(R"({"type":"integer"})", "3"));
    CHECK(valid(R"({"type":"number"})", 3));
    CHECK(valid(R"({"type":"number"})", 3.5));
    CHECK_FALSE(valid(R"({"type":"number"})", false));  // booleans are not numbers
    CHECK_FALSE(valid(R"({"type":"number"})", "3.5"));
}

TEST_CASE("type: array of names") {
    const char* s = R"({"type":["string","null"]})";
    CHECK(valid(s, "x"));
    CHECK(valid(s, nullptr));
    auto errors = check(s, 1.5);
    REQUIRE(errors.size() == 1);
    CHECK(contains(errors[0].message, R"(expected type ["string","null"], got number)"));
}

TEST_CASE("boolean schemas") {
    CHECK(valid("true", json{{"anything", 1}}));
    CHECK_FALSE(valid("false", 1));
    CHECK(valid("{}", json::array({1, "a"})));
}

TEST_CASE("properties and required") {
    const char* s = R"({"type":"object","required":["name","points"],
                        "properties":{"name":{"type":"string"},"points":{"type":"number"}}})";
    CHECK(valid(s, json{{"name", "a"}, {"points", 1.5}}));
    CHECK(valid(s, json{{"name", "a"}, {"points", 1}, {"extra", true}}));  // extras allowed by default

    auto missing = check(s, json{{"name", "a"}});
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].instance_path == "");
    CHECK(missing[0].message == "required property 'points' is missing");

    auto wrong = check(s, json{{"name", 7}, {"points", 1}});
    REQUIRE(wrong.size() == 1);
    CHECK(wrong[0].instance_path == "/name");

    // Object keywords ignore non-objects (type catches those).
    CHECK(valid(R"({"required":["a"]})", 5));
}

TEST_CASE("additionalProperties: false") {
    const char* s = R"({"properties":{"a":{}},"additionalProperties":false})";
    CHECK(valid(s, json{{"a", 1}}));
    CHECK(valid(s, json::object()));
    auto errors = check(s, json{{"a", 1}, {"b", 2}});
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].instance_path == "");
    CHECK(contains(errors[0].message, "property 'b' is not allowed"));
}

TEST_CASE("additionalProperties: schema") {
    const char* s = R"({"properties":{"name":{"type":"string"}},"additionalProperties":{"type":"integer"}})";
    CHECK(valid(s, json{{"name", "x"}, {"a", 1}, {"b", 2}}));
    auto errors = check(s, json{{"name", "x"}, {"a", 1}, {"b", "two"}});
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].instance_path == "/b");
    CHECK(contains(errors[0].message, "expected type integer, got string"));
    CHECK(valid(R"({"additionalProperties":true})", json{{"z", nullptr}}));
}

TEST_CASE("items, minItems, maxItems") {
    const char* s = R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":2})";
    CHECK(valid(s, json::array({1})));
    CHECK(valid(s, json::array({1, 2})));

    auto few = check(s, json::array());
    REQUIRE(few.size() == 1);
    CHECK(contains(few[0].message, "fewer than minItems 1"));

    auto many = check(s, json::array({1, 2, 3}));
    REQUIRE(many.size() == 1);
    CHECK(contains(many[0].message, "more than maxItems 2"));

    auto bad = check(s, json::array({1, "x"}));
    REQUIRE(bad.size() == 1);
    CHECK(bad[0].instance_path == "/1");
}

TEST_CASE("enum and const") {
    const char* e = R"({"enum":["passed","failed",null,1]})";
    CHECK(valid(e, "passed"));
    CHECK(valid(e, nullptr));
    CHECK(valid(e, 1.0));  // numbers compare by value
    auto errors = check(e, "skipped");
    REQUIRE(errors.size() == 1);
    CHECK(contains(errors[0].message, R"("skipped" is not one of)"));

    CHECK(valid(R"({"const":{"v":[1,2]}})", json{{"v", {1, 2}}}));
    CHECK_FALSE(valid(R"({"const":{"v":[1,2]}})", json{{"v", {2, 1}}}));
    CHECK_FALSE(valid(R"({"const":1})", true));
    CHECK(contains(dump(check(R"({"const":"a"})", "b")), "does not equal const \"a\""));
}

TEST_CASE("minimum and maximum") {
    const char* s = R"({"minimum":0,"maximum":10.5})";
    CHECK(valid(s, 0));
    CHECK(valid(s, 10.5));
    CHECK(valid(s, 7u));
    CHECK(valid(s, "not a number"));  // only numbers are checked
    auto low = check(s, -1);
    REQUIRE(low.size() == 1);
    CHECK(contains(low[0].message, "less than minimum 0"));
    auto high = check(s, 11);
    REQUIRE(high.size() == 1);
    CHECK(contains(high[0].message, "greater than maximum 10.5"));
    CHECK_FALSE(valid(s, -0.001));
}

TEST_CASE("minLength counts code points") {
    const char* s = R"({"minLength":2})";
    CHECK(valid(s, "ab"));
    CHECK(valid(s, "\xC3\xA9\xC3\xA9"));        // two 2-byte characters
    CHECK_FALSE(valid(s, "\xE2\x82\xAC"));      // one 3-byte character
    CHECK_FALSE(valid(s, "a"));
    CHECK(contains(dump(check(s, "a")), "shorter than minLength 2"));
    CHECK(valid(s, 5));
}

TEST_CASE("pattern uses regex_search semantics") {
    CHECK(valid(R"({"pattern":"b+"})", "abbbc"));  // unanchored: a match anywhere will do
    CHECK_FALSE(valid(R"({"pattern":"^b+$"})", "abbbc"));
    CHECK(valid(R"({"pattern":"^ex[0-9]{2}$"})", "ex07"));
    auto errors = check(R"({"pattern":"^ex[0-9]{2}$"})", "ex7");
    REQUIRE(errors.size() == 1);
    CHECK(contains(errors[0].message, "does not match pattern"));
    CHECK(valid(R"({"pattern":"^x$"})", 3));
}

TEST_CASE("anyOf") {
    const char* s = R"({"anyOf":[{"type":"string"},{"type":"integer","minimum":0}]})";
    CHECK(valid(s, "x"));
    CHECK(valid(s, 4));
    auto errors = check(s, -4);
    REQUIRE(errors.size() == 1);  // one summarizing error
    CHECK(contains(errors[0].message, "none of the 2 anyOf alternatives"));
    CHECK(contains(errors[0].message, "expected type string"));
    CHECK(contains(errors[0].message, "less than minimum 0"));
}

TEST_CASE("oneOf") {
    const char* s = R"({"oneOf":[{"type":"integer"},{"type":"number"}]})";
    CHECK(valid(s, 1.5));
    auto two = check(s, 2);  // an integer is also a number
    REQUIRE(two.size() == 1);
    CHECK(contains(two[0].message, "matches 2 oneOf alternatives (#0, #1)"));
    auto none = check(s, "x");
    REQUIRE(none.size() == 1);
    CHECK(contains(none[0].message, "none of the 2 oneOf alternatives"));
}

TEST_CASE("nested instance paths escape ~ and /") {
    const char* s = R"({"properties":{"exercises":{"items":{
        "properties":{"points":{"type":"number"}},
        "additionalProperties":{"type":"string"}}}}})";
    json doc = {{"exercises", json::array({json{{"points", 1}}, json{{"points", "x"}, {"a/b~c", 3}}})}};
    auto errors = check(s, doc);
    REQUIRE(errors.size() == 2);
    std::string text = dump(errors);
    CHECK(contains(text, "/exercises/1/points: expected type number"));
    CHECK(contains(text, "/exercises/1/a~1b~0c: expected type string"));
}

TEST_CASE("$ref to $defs") {
    const char* s = R"({"$defs":{"status":{"enum":["ok","error"]},
                                 "a/b":{"type":"integer"},
                                 "node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"},
                                                                       "s":{"$ref":"#/$defs/status"}}}},
                        "type":"object",
                        "properties":{"status":{"$ref":"#/$defs/status"},
                                      "n":{"$ref":"#/$defs/a~1b"},
                                      "list":{"$ref":"#/$defs/node"}}})";
    CHECK(valid(s, json{{"status", "ok"}, {"n", 3}}));
    CHECK(valid(s, json{{"list", {{"next", {{"next", {{"s", "error"}}}}}}}}));

    auto errors = check(s, json{{"status", "maybe"}, {"n", "3"}, {"list", {{"next", {{"s", "bad"}}}}}});
    std::string text = dump(errors);
    INFO(text);
    CHECK(errors.size() == 3);
    CHECK(contains(text, "/status: value \"maybe\" is not one of"));
    CHECK(contains(text, "/n: expected type integer"));
    CHECK(contains(text, "/list/next/s: value \"bad\""));
}

TEST_CASE("$ref: unresolvable or unsupported forms are schema errors") {
    for (const char* s : {R"({"$ref":"#/$defs/missing","$defs":{}})", R"({"$ref":"#/definitions/x"})",
                          R"({"$ref":"other.json#/$defs/x"})", R"({"$ref":"#/$defs/a/b","$defs":{"a":{}}})"}) {
        auto errors = check(s, 1);
        INFO(s);
        REQUIRE(errors.size() == 1);
        CHECK(contains(errors[0].message, "unresolvable $ref"));
        CHECK(contains(errors[0].message, "#/$ref"));
    }
}

TEST_CASE("$ref cycle that never descends is reported, not followed forever") {
    const char* s = R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})";
    auto errors = check(s, 1);
    REQUIRE(errors.size() == 1);
    CHECK(contains(errors[0].message, "$ref cycle"));
}

TEST_CASE("unknown keywords are errors naming keyword and schema location") {
    auto top = check(R"({"type":"object","patternProperties":{}})", json::object());
    REQUIRE(top.size() == 1);
    CHECK(contains(top[0].message, "unknown keyword 'patternProperties'"));
    CHECK(contains(top[0].message, "at #:"));

    // Found even in branches the document never reaches, with escaped locations.
    auto deep = check(R"({"properties":{"a/b":{"items":{"maxLength":3}}},
                          "$defs":{"unused":{"anyOf":[{},{"format":"date"}]}}})", json::object());
    std::string text = dump(deep);
    INFO(text);
    REQUIRE(deep.size() == 2);
    CHECK(contains(text, "at #/properties/a~1b/items: unknown keyword 'maxLength'"));
    CHECK(contains(text, "at #/$defs/unused/anyOf/1: unknown keyword 'format'"));
}

TEST_CASE("annotation keywords are accepted and ignored") {
    const char* s = R"({"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","title":"t",
                        "description":"d","$comment":"c","type":"integer"})";
    CHECK(valid(s, 1));
    CHECK_FALSE(valid(s, "1"));
}

TEST_CASE("malformed keyword values are schema errors") {
    for (const char* s : {R"({"type":"float"})", R"({"type":[]})", R"({"required":"a"})",
                          R"({"minItems":-1})", R"({"maxItems":1.5})", R"({"minimum":"0"})",
                          R"({"enum":1})", R"({"pattern":"("})", R"({"properties":[]})",
                          R"({"anyOf":[]})", R"({"items":3})", R"(5)"}) {
        INFO(s);
        auto errors = check(s, 1);
        REQUIRE(errors.size() == 1);
        CHECK(errors[0].instance_path == "");
        CHECK(contains(errors[0].message, "schema error at #"));
    }
}

TEST_CASE("every error is reported, not just the first") {
    const char* s = R"({"type":"object","required":["a","b"],"additionalProperties":false})";
    auto errors = check(s, json{{"x", 1}, {"y", 2}});
    CHECK(errors.size() == 4);
}
