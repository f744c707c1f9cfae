// Scoring, the results JSON against its schema, the order of grading. (Finding and building the
// files: tests/unit/grading/build/.)
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "grading/build.hpp"
#include "grading/grader.hpp"
#include "grading/json_schema.hpp"
#include "grading/report.hpp"
#include "grading/rubric.hpp"
#include "grading/status.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "support/test_support.hpp"

using namespace grading;
namespace fs = std::filesystem;

namespace {

CaseResult case_with(CaseStatus status, bool timed = false, double speedup = 0)
{
    CaseResult c;
    c.label = "n=1/int";
    c.n = 1;
    c.shape = {{"n", 1}};
    c.data = "integers";
    c.status = status;
    c.timed = timed;
    if (timed && speedup > 0) {
        TimingResult t;
        t.student_ms = 1.0;
        t.reference_ms = speedup;
        t.speedup_vs_reference = speedup;
        c.timing = t;
    }
    return c;
}

ExerciseResult graded(std::vector<CaseResult> cases)
{
    ExerciseResult e;
    e.name = "scan_kogge_stone";
    e.status = ExerciseStatus::graded;
    e.cases = std::move(cases);
    return e;
}

using test_support::results_schema;

}  // namespace

TEST_CASE("correctness points are split over the cases; speed needs every case to pass")
{
    Rubric rubric;
    ExerciseResult e = graded({case_with(CaseStatus::pass), case_with(CaseStatus::pass), case_with(CaseStatus::wrong),
                               case_with(CaseStatus::pass, true, 1.0)});
    score_exercise(rubric, e);
    CHECK(e.correctness_points == doctest::Approx(6.0));
    CHECK(e.speed_points == 0);
    CHECK(e.max_points == 10);

    e = graded({case_with(CaseStatus::pass), case_with(CaseStatus::pass, true, 1.0)});
    score_exercise(rubric, e);
    CHECK(e.points == doctest::Approx(10.0));
}

TEST_CASE("speed points: linear between the floor and full ratio, rounded to steps")
{
    Rubric rubric;
    auto speed = [&](double ratio) {
        ExerciseResult e = graded({case_with(CaseStatus::pass, true, ratio)});
        score_exercise(rubric, e);
        return e.speed_points;
    };
    CHECK(speed(2.0) == 2.0);
    CHECK(speed(0.8) == 2.0);
    CHECK(speed(0.79) == 2.0);  // rounding to quarter points absorbs small noise near the top
    CHECK(speed(0.525) == 1.0);
    CHECK(speed(0.25) == 0.0);
    CHECK(speed(0.1) == 0.0);
    ExerciseResult no_timing = graded({case_with(CaseStatus::pass, true, 0)});
    score_exercise(rubric, no_timing);
    CHECK(no_timing.speed_points == 0);  // a timed case without a timing earns no speed points
}

TEST_CASE("library use, statuses other than graded, and rubric overrides")
{
    Rubric rubric;
    ExerciseResult e = graded({case_with(CaseStatus::pass, true, 1.0)});
    e.library_use = {"CUB"};
    score_exercise(rubric, e);
    CHECK(e.points == 0);
    ExerciseResult missing;
    missing.name = "scan_brent_kung";
    score_exercise(rubric, missing);
    CHECK(missing.points == 0);
    CHECK(missing.max_points == 10);

    const Rubric custom =
        Rubric::from_json({{"correctness_points", 5}, {"speed_points", 5}, {"weight", {{"scan_kogge_stone", 2.0}}}});
    ExerciseResult w = graded({case_with(CaseStatus::pass, true, 1.0)});
    score_exercise(custom, w);
    CHECK(w.max_points == 20);
    CHECK(w.points == 20);
}

TEST_CASE("a match with the reference's compiled code: no points by default, priced by the rubric")
{
    ExerciseResult e = graded({case_with(CaseStatus::pass, true, 1.0)});
    e.matches_reference = true;
    score_exercise(Rubric{}, e);
    CHECK(e.points == 0);
    CHECK(e.max_points == 10);
    const Rubric lenient = Rubric::from_json({{"reference_match_costs_all", false},
                                              {"reference_match_threshold", 0.5},
                                              {"code_checks", "name"}});
    CHECK(lenient.reference_match_threshold == 0.5);
    CHECK(lenient.code_checks == "name");
    score_exercise(lenient, e);
    CHECK(e.points == 10);
    CHECK(Rubric{}.code_checks == "refuse");
    CHECK(Rubric{}.reference_match_threshold == doctest::Approx(0.25));
    // Values the schema refuses: a mode it does not know, a threshold outside (0, 1].
    CHECK_THROWS_WITH_AS(Rubric::from_json({{"code_checks", "ignore"}}), doctest::Contains("/code_checks"), RubricError);
    CHECK_THROWS_AS(Rubric::from_json({{"reference_match_threshold", 0}}), RubricError);
    CHECK_THROWS_AS(Rubric::from_json({{"reference_match_threshold", 1.5}}), RubricError);
}

TEST_CASE("the example rubric in grading/ passes rubric.schema.json, parses and changes the points")
{
    const nlohmann::json example = nlohmann::json::parse(std::ifstream(GRADER_RUBRIC_EXAMPLE));
    const auto errors = validate_json_schema(rubric_schema(), example);
    std::string listed;
    for (const auto& e : errors) listed += e.instance_path + ": " + e.message + "\n";
    INFO(listed);
    CHECK(errors.empty());
    const Rubric r = Rubric::from_json(example);
    CHECK(r.max_points("scan_hierarchical") == doctest::Approx(15.0));
    CHECK(r.max_points("scan_kogge_stone") == doctest::Approx(10.0));
    CHECK(r.gradescope.visibility == "after_published");
    // The schema compiled into the grader is the file in grading/ (CMake re-reads it when it changes).
    CHECK(rubric_schema() == nlohmann::json::parse(std::ifstream(GRADER_RUBRIC_SCHEMA_FILE)));
}

TEST_CASE("exercises are graded longest first: the most case elements, ties in the given order")
{
    std::vector<SubmissionFile> files;
    for (const auto& e : harness::all_exercises()) files.push_back({e.name, "/nowhere/" + e.name + ".cu", {}, {}});
    GradeRequest request;
    const std::vector<std::size_t> order = grading_order(files, request);
    REQUIRE(order.size() == files.size());
    auto elements = [&](std::size_t k) {
        std::int64_t sum = 0;
        for (const auto& c : harness::cases_for(*harness::find_exercise(files[k].exercise))) sum += c.n;
        return sum;
    };
    // scan_hierarchical has the largest case (2^28 + 3 elements).
    CHECK(files[order.front()].exercise == "scan_hierarchical");
    for (std::size_t i = 1; i < order.size(); ++i) {
        CHECK(elements(order[i - 1]) >= elements(order[i]));
        if (elements(order[i - 1]) == elements(order[i])) CHECK(order[i - 1] < order[i]);
    }
    // One case only: that case's size decides.
    request.case_label = "n=1/int";
    const std::vector<std::size_t> one = grading_order(files, request);
    CHECK(std::is_permutation(one.begin(), one.end(), order.begin()));
}

TEST_CASE("results JSON matches the published schema, and the schema rejects a forged document")
{
    GradeReport report;
    report.grader_version = "0.1.0";
    report.started_at = "2026-11-22T01:00:00Z";
    report.submission = "sub";
    ExerciseResult e = graded({case_with(CaseStatus::pass, true, 1.0), case_with(CaseStatus::wrong)});
    e.cases[1].findings = {"first wrong element: out[3] = 1, expected 2"};
    e.cases[1].detail = {{"wrong", 1}};
    score_exercise(Rubric{}, e);
    report.exercises.push_back(e);
    report.exercises.back().code_checks = {
        {"mode", "refuse"},
        {"findings", {"calls `getenv`, which is not among the calls of honest launchers"}},
        {"not_checked", nlohmann::json::array()},
        {"reference",
         {{"compared", true}, {"overlap", 0.01}, {"reference_runs", 237}, {"shared_runs", 2}, {"decisive", true},
          {"threshold", 0.25}, {"matches", false}, {"note", ""}}}};
    ExerciseResult missing;
    missing.name = "scan_hierarchical";
    report.exercises.push_back(missing);
    const nlohmann::json doc = to_json(report);
    CHECK(doc["exercises"][1]["code_checks"].is_null());  // not built: nothing was checked
    const auto errors = validate_json_schema(results_schema(), doc);
    for (const auto& error : errors) MESSAGE(error.instance_path << ": " << error.message);
    CHECK(errors.empty());

    nlohmann::json forged = doc;
    forged["exercises"][0]["status"] = "full_marks";
    forged["exercises"][0]["cases"][0]["bonus"] = 5;
    CHECK(validate_json_schema(results_schema(), forged).size() == 2);
    nlohmann::json unchecked = doc;
    unchecked["exercises"][0]["code_checks"]["reference"]["overlap"] = 1.5;
    unchecked["exercises"][0]["code_checks"]["mode"] = "ignore";
    std::string paths;
    for (const auto& error : validate_json_schema(results_schema(), unchecked)) paths += error.instance_path + " ";
    CHECK(paths.find("/exercises/0/code_checks/reference/overlap") != std::string::npos);
    CHECK(paths.find("/exercises/0/code_checks/mode") != std::string::npos);
}

// The schema's enums and the types' spellings are one list: a status added to one and not the
// other would write results that fail validation, or a schema that admits what we never write.
TEST_CASE("the schema's status, data and exercise enums list exactly the values the code has")
{
    const nlohmann::json s = results_schema();
    const nlohmann::json& defs = s.contains("$defs") ? s.at("$defs") : s.at("definitions");
    auto enum_at = [&](const char* definition, const char* property) {
        auto values = defs.at(definition).at("properties").at(property).at("enum").get<std::vector<std::string>>();
        std::sort(values.begin(), values.end());
        return values;
    };
    auto sorted = [](std::vector<std::string> values) {
        std::sort(values.begin(), values.end());
        return values;
    };
    std::vector<std::string> exercise_statuses, case_statuses, data_kinds, exercises;
    for (const auto& [value, text] : StatusNames<ExerciseStatus>::all) exercise_statuses.push_back(text);
    for (const auto& [value, text] : StatusNames<CaseStatus>::all) case_statuses.push_back(text);
    for (auto kind : {harness::DataKind::integers, harness::DataKind::fractions, harness::DataKind::mixed_magnitudes})
        data_kinds.push_back(harness::data_kind_name(kind));
    for (const auto& e : harness::all_exercises()) exercises.push_back(e.name);
    CHECK(enum_at("exercise", "status") == sorted(exercise_statuses));
    CHECK(enum_at("case", "status") == sorted(case_statuses));
    CHECK(enum_at("case", "data") == sorted(data_kinds));
    CHECK(enum_at("exercise", "name") == sorted(exercises));
}

TEST_CASE("a status reads back from its text, and nothing else reads as a status")
{
    for (const auto& [value, text] : StatusNames<CaseStatus>::all) {
        CHECK(status_from_text<CaseStatus>(text) == value);
        CHECK(nlohmann::json(value).get<CaseStatus>() == value);
    }
    for (const auto& [value, text] : StatusNames<ExerciseStatus>::all)
        CHECK(nlohmann::json(value).get<ExerciseStatus>() == value);
    CHECK_FALSE(status_from_text<CaseStatus>("passed"));
    CHECK_THROWS(nlohmann::json("full_marks").get<ExerciseStatus>());
}

TEST_CASE("summary table lists every exercise and the total")
{
    GradeReport report;
    ExerciseResult e = graded({case_with(CaseStatus::pass, true, 1.0)});
    score_exercise(Rubric{}, e);
    report.exercises.push_back(e);
    report.points = e.points;
    report.max_points = e.max_points;
    std::ostringstream out;
    print_summary_table(report, out);
    CHECK(out.str().find("scan_kogge_stone") != std::string::npos);
    CHECK(out.str().find("1/1") != std::string::npos);
    CHECK(out.str().find("10.00/10") != std::string::npos);
}

TEST_CASE("the table says passed or failed with the count, not graded; the last line counts what fails")
{
    GradeReport report;
    report.exercises.push_back(graded({case_with(CaseStatus::pass), case_with(CaseStatus::pass)}));
    ExerciseResult failing = graded({case_with(CaseStatus::pass), case_with(CaseStatus::wrong),
                                     case_with(CaseStatus::timeout), case_with(CaseStatus::not_run)});
    failing.name = "scan_brent_kung";
    report.exercises.push_back(failing);
    ExerciseResult broken;
    broken.name = "conv1d_tiled";
    broken.status = ExerciseStatus::compile_error;
    report.exercises.push_back(broken);
    ExerciseResult missing;
    missing.name = "conv2d_tiled";
    report.exercises.push_back(missing);
    std::ostringstream out;
    print_summary_table(report, out);
    const std::string table = out.str();
    INFO(table);
    CHECK(table.find("passed") != std::string::npos);
    CHECK(table.find("failed (3 of 4)") != std::string::npos);
    CHECK(table.find("compile_error") != std::string::npos);
    CHECK(table.find("graded") == std::string::npos);
    CHECK(failing_cases(failing) == 3);
    CHECK(grading_verdict(report) == "graded: 3 of 6 cases fail in 1 exercise; 1 not submitted; 1 compile error");

    GradeReport all_pass;
    all_pass.exercises.push_back(graded({case_with(CaseStatus::pass)}));
    CHECK(grading_verdict(all_pass) == "graded: the one case passes");
    all_pass.exercises.front().cases.push_back(case_with(CaseStatus::pass));
    CHECK(grading_verdict(all_pass) == "graded: all 2 cases pass");
    all_pass.exercises.front().library_use = {"CUB"};
    CHECK(grading_verdict(all_pass) == "graded: all 2 cases pass; 1 exercise uses a library it may not");
    GradeReport nothing;
    nothing.exercises.push_back(missing);
    CHECK(grading_verdict(nothing) == "graded: no case ran; 1 not submitted");

    GradeReport built;  // --build-only
    for (int k = 0; k < 2; ++k) {
        ExerciseResult e;
        e.name = "scan_kogge_stone";
        e.status = ExerciseStatus::built;
        built.exercises.push_back(e);
    }
    built.exercises.push_back(broken);
    CHECK(grading_verdict(built, true) == "checked: 2 files build and pass the build checks; 1 compile error");
    GradeReport none_built;
    none_built.exercises.push_back(broken);
    CHECK(grading_verdict(none_built, true) == "checked: no file builds and passes the build checks; 1 compile error");
    std::ostringstream built_table;
    print_summary_table(built, built_table);
    CHECK(built_table.str().find("built ") != std::string::npos);
}
