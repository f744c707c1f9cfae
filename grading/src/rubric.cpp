#include "grading/rubric.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fnmatch.h>
#include <fstream>
#include <sstream>

#include "grading/hidden_cases.hpp"
#include "grading/json_schema.hpp"
#include "harness/exercise.hpp"
#include "rubric_schema.hpp"

namespace grading {
namespace {

// A JSON pointer as a person reads it: the whole document has the empty pointer.
std::string where(const std::string& pointer)
{
    return pointer.empty() ? "(the whole rubric)" : pointer;
}

// valijson's words for a key that additionalProperties refuses, the key in quotes after them.
constexpr const char* unknown_key_message = "Object contains a property that could not be validated";

// The schema's object for the value at `pointer` (its "properties", else its "additionalProperties"
// schema, followed down; a "$ref" to "#/$defs/..." resolved), or null. The rubric's keys need no
// JSON pointer escapes.
const nlohmann::json* schema_at(const nlohmann::json& schema, const std::string& pointer)
{
    const auto resolved = [&schema](const nlohmann::json* at) {
        const auto ref = at->find("$ref");
        if (ref == at->end() || !ref->is_string() || ref->get<std::string>().rfind("#/", 0) != 0) return at;
        const nlohmann::json::json_pointer target(ref->get<std::string>().substr(1));
        return schema.contains(target) ? &schema.at(target) : at;
    };
    const nlohmann::json* at = &schema;
    std::istringstream tokens(pointer.empty() ? "" : pointer.substr(1));
    for (std::string token; !pointer.empty() && std::getline(tokens, token, '/');) {
        const auto properties = at->find("properties");
        const auto additional = at->find("additionalProperties");
        if (properties != at->end() && properties->contains(token))
            at = &(*properties)[token];
        else if (additional != at->end() && additional->is_object())
            at = &*additional;
        else
            return nullptr;
    }
    return resolved(at);
}

std::string number(double value)
{
    std::ostringstream text;
    text << value;
    return text.str();
}

// JSON Schema's type names as words.
std::string type_in_words(const std::string& type)
{
    if (type == "number") return "a number";
    if (type == "integer") return "a whole number";
    if (type == "boolean") return "true or false";
    if (type == "string") return "a string in double quotes";
    if (type == "object") return "an object ({\"key\": value, ...})";
    if (type == "array") return "a list ([...])";
    return type;
}

// What the schema allows for one value, in words: "one of \"refuse\", \"name\"", "a number, at
// least 0", "true or false".
std::string allowed_in_words(const nlohmann::json& schema)
{
    if (schema.contains("enum")) {
        std::string values;
        for (const auto& value : schema.at("enum")) values += (values.empty() ? "" : ", ") + value.dump();
        return "one of " + values;
    }
    std::string text = schema.contains("type") && schema.at("type").is_string()
                           ? type_in_words(schema.at("type").get<std::string>())
                           : std::string("a value of the kind the schema describes");
    std::vector<std::string> bounds;
    const auto bound = [&](const char* key, const char* words) {
        if (schema.contains(key) && schema.at(key).is_number())
            bounds.push_back(std::string(words) + " " + number(schema.at(key).get<double>()));
    };
    bound("minimum", "at least");
    bound("exclusiveMinimum", "more than");
    bound("maximum", "at most");
    bound("exclusiveMaximum", "less than");
    for (std::size_t k = 0; k < bounds.size(); ++k) text += (k == 0 ? ", " : " and ") + bounds[k];
    return text;
}

// One schema error as an instructor reads it: where, the rule, and the value that breaks it; an
// unknown key (a typo, most often) by its own pointer, with the keys allowed there.
std::string explained(const SchemaError& error, const nlohmann::json& document)
{
    const std::string& message = error.message;
    if (message.rfind(unknown_key_message, 0) == 0) {
        const std::size_t open = message.rfind(": '");
        const std::string key = open == std::string::npos ? "" : message.substr(open + 3, message.size() - open - 5);
        std::string allowed;
        const nlohmann::json* schema = schema_at(rubric_schema(), error.instance_path);
        if (schema != nullptr && schema->contains("properties"))
            for (const auto& property : schema->at("properties").items())
                allowed += (allowed.empty() ? "" : ", ") + property.key();
        return error.instance_path + "/" + key +
               ": unknown key (additionalProperties is false; the keys here: " + allowed + ")";
    }
    // Every other rule in words: the value given, and what is allowed there (the validator's own
    // sentence, "Failed to match against any enum values.", says neither).
    const nlohmann::json::json_pointer pointer(error.instance_path);
    std::string given = document.contains(pointer) ? document.at(pointer).dump() : std::string("the value");
    if (given.size() > 60) given = given.substr(0, 57) + "...";
    const nlohmann::json* schema = schema_at(rubric_schema(), error.instance_path);
    if (schema == nullptr) return where(error.instance_path) + ": " + given + " is not allowed here (" + message + ")";
    return where(error.instance_path) + ": " + given + " is not allowed; it must be " + allowed_in_words(*schema);
}

// What the schema cannot say: values that are each allowed but do not work together, and names
// that only the exercise registry knows.
std::vector<std::string> consistency_problems(const Rubric& r)
{
    std::vector<std::string> problems;
    if (r.speed_floor >= r.speed_full)
        problems.push_back("/speed_floor: must be less than speed_full (" + number(r.speed_full) +
                           "): speed points grow from 0 at speed_floor (" + number(r.speed_floor) +
                           ") to full at speed_full");
    for (const auto& [name, w] : r.weight)
        if (!harness::find_exercise(name))
            problems.push_back("/weight/" + name + ": no exercise named '" + name + "' (grade --list names them)");
    return problems;
}

std::string indented_lines(const std::vector<std::string>& lines)
{
    std::string text;
    for (const auto& line : lines) text += "\n  " + line;
    return text;
}

}  // namespace

const nlohmann::json& rubric_schema()
{
    static const nlohmann::json schema = nlohmann::json::parse(generated::rubric_schema_text);
    return schema;
}

Rubric Rubric::from_json(const nlohmann::json& j)
{
    std::vector<std::string> problems;
    for (const auto& error : validate_json_schema(rubric_schema(), j))
        // A value that breaks two rules (a type and a bound) is one line: it says all that is allowed.
        if (const std::string line = explained(error, j);
            std::find(problems.begin(), problems.end(), line) == problems.end())
            problems.push_back(line);
    if (!problems.empty())
        throw RubricError("not a rubric as grading/rubric.schema.json describes it:" + indented_lines(problems));

    Rubric r;
    r.correctness_points = j.value("correctness_points", r.correctness_points);
    r.speed_points = j.value("speed_points", r.speed_points);
    r.speed_full = j.value("speed_full", r.speed_full);
    r.speed_floor = j.value("speed_floor", r.speed_floor);
    r.speed_step = j.value("speed_step", r.speed_step);
    r.library_use_costs_all = j.value("library_use_costs_all", r.library_use_costs_all);
    r.code_checks = j.value("code_checks", r.code_checks);
    r.reference_match_threshold = j.value("reference_match_threshold", r.reference_match_threshold);
    r.reference_match_costs_all = j.value("reference_match_costs_all", r.reference_match_costs_all);
    r.technique = j.value("technique", r.technique);
    if (j.contains("weight")) r.weight = j.at("weight").get<std::map<std::string, double>>();
    if (j.contains("gradescope")) {
        const nlohmann::json& g = j.at("gradescope");
        r.gradescope.visibility = g.value("visibility", r.gradescope.visibility);
        r.gradescope.stdout_visibility = g.value("stdout_visibility", r.gradescope.stdout_visibility);
        r.gradescope.test_visibility = g.value("test_visibility", r.gradescope.test_visibility);
    }
    if (j.contains("sanitizer")) {
        const nlohmann::json& s = j.at("sanitizer");
        r.sanitizer.run = s.value("run", r.sanitizer.run);
        if (s.contains("tools")) r.sanitizer.tools = s.at("tools").get<std::vector<std::string>>();
        r.sanitizer.cost_per_tool = s.value("cost_per_tool", r.sanitizer.cost_per_tool);
    }
    problems = consistency_problems(r);
    read_case_visibility(j, r, problems);
    if (!problems.empty()) throw RubricError("a rubric whose values cannot work together:" + indented_lines(problems));
    return r;
}

Rubric load_rubric(const std::string& path)
{
    std::error_code ignored;
    if (std::filesystem::is_directory(path, ignored)) throw RubricError(path + ": is a directory, not a rubric file");
    errno = 0;
    std::ifstream file(path);
    if (!file) {
        const int error = errno;
        // A name that leads nowhere is a mistake on the command line; a file that is there but
        // closed to this process is the machine's permissions.
        if (error == ENOENT || error == ENOTDIR) throw RubricError(path + ": no such file");
        throw RubricUnreadable(path + ": cannot read it: " + (error ? std::strerror(error) : "reason unknown"));
    }
    nlohmann::json document;
    try {
        document = nlohmann::json::parse(file);
    } catch (const nlohmann::json::parse_error& e) {
        // e.what() starts with "[json.exception.parse_error.101] ", which says nothing to an instructor.
        const std::string what = e.what();
        const std::size_t tag_end = what.find("] ");
        throw RubricError(path + ": not JSON: " + (tag_end == std::string::npos ? what : what.substr(tag_end + 2)));
    }
    try {
        return Rubric::from_json(document);
    } catch (const RubricError& e) {
        throw RubricError(path + ": " + e.what());
    }
}

bool CaseVisibility::visible(const std::string& exercise, const std::string& label) const
{
    const auto named = per_exercise.find(exercise);
    for (const auto& pattern : named == per_exercise.end() ? others : named->second)
        if (::fnmatch(pattern.c_str(), label.c_str(), 0) == 0) return true;
    return false;
}

double Rubric::max_points(const std::string& exercise) const
{
    const auto w = weight.find(exercise);
    return (correctness_points + speed_points) * (w == weight.end() ? 1.0 : w->second);
}

bool points_withheld(const Rubric& rubric, const ExerciseResult& result)
{
    return (!result.library_use.empty() && rubric.library_use_costs_all) ||
           (result.matches_reference && rubric.reference_match_costs_all) ||
           (result.technique && !result.technique->missing_required(rubric.technique == "require").empty());
}

void score_exercise(const Rubric& rubric, ExerciseResult& result)
{
    const auto w = rubric.weight.find(result.name);
    const double scale = w == rubric.weight.end() ? 1.0 : w->second;
    result.max_points = rubric.max_points(result.name);
    result.correctness_points = result.speed_points = result.points = 0;
    if (result.status != ExerciseStatus::graded || result.cases.empty()) return;

    const auto passed = std::count_if(result.cases.begin(), result.cases.end(),
                                      [](const CaseResult& c) { return c.status == CaseStatus::pass; });
    result.correctness_points =
        scale * rubric.correctness_points * static_cast<double>(passed) / static_cast<double>(result.cases.size());

    if (passed == static_cast<long>(result.cases.size())) {
        // The slowest timed case decides (an exercise has one or a few).
        double ratio = INFINITY;
        bool timed = false;
        for (const auto& c : result.cases) {
            if (!c.timed) continue;
            timed = true;  // a timed case without a timing (it ran out of time) scores no speed
            ratio = std::min(ratio, c.timing && c.timing->student_ms > 0 ? c.timing->speedup_vs_reference : 0.0);
        }
        if (timed) {
            const double fraction =
                std::clamp((ratio - rubric.speed_floor) / (rubric.speed_full - rubric.speed_floor), 0.0, 1.0);
            double points = scale * rubric.speed_points * fraction;
            if (rubric.speed_step > 0) points = std::round(points / rubric.speed_step) * rubric.speed_step;
            result.speed_points = points;
        }
    }
    if (points_withheld(rubric, result)) result.correctness_points = result.speed_points = 0;
    // Each sanitizer tool that found something costs its price, from the correctness points first.
    result.sanitizer_points_lost = 0;
    for (const auto& tool : result.sanitizer_tools_with_findings)
        if (std::find(rubric.sanitizer.tools.begin(), rubric.sanitizer.tools.end(), tool) != rubric.sanitizer.tools.end())
            result.sanitizer_points_lost += scale * rubric.sanitizer.cost_per_tool;
    double lost = std::min(result.sanitizer_points_lost, result.correctness_points + result.speed_points);
    result.sanitizer_points_lost = lost;
    const double from_correctness = std::min(lost, result.correctness_points);
    result.correctness_points -= from_correctness;
    result.speed_points -= lost - from_correctness;
    result.points = result.correctness_points + result.speed_points;
}

}  // namespace grading
