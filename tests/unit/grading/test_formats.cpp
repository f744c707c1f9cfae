// Gradescope and PrairieLearn: each against its published field list, with points that add up and
// students' text (compiler output, any bytes) made safe.
#include <doctest/doctest.h>

#include <set>

#include "formats_fixture.hpp"
#include "grading/formats.hpp"

using namespace grading;
using namespace formats_fixture;
using nlohmann::json;

TEST_CASE("Gradescope: only documented keys, two tests per exercise, points that add up")
{
    // gradescope-autograders.readthedocs.io/en/latest/specs/, "Output format".
    const std::set<std::string> top_level = {
        "score",      "execution_time",    "output",     "output_format", "test_output_format", "test_name_format",
        "visibility", "stdout_visibility", "extra_data", "tests",         "leaderboard"};
    const std::set<std::string> test_keys = {"score",  "max_score",     "status", "name",       "name_format", "number",
                                             "output", "output_format", "tags",   "visibility", "extra_data"};
    const std::set<std::string> visibilities = {"hidden", "after_due_date", "after_published", "visible"};
    const GradeReport report = sample_report();
    const json g = to_gradescope(report, {"after_due_date", "visible", "after_published"}, rubric());

    CHECK(subset(keys(g), top_level));
    CHECK(subset({"score", "execution_time", "output", "output_format", "test_output_format", "visibility",
                  "stdout_visibility", "tests", "leaderboard"},
                 keys(g)));
    CHECK(g.at("output_format") == "md");
    CHECK(g.at("test_output_format") == "md");
    CHECK(g.at("visibility") == "after_due_date");
    CHECK(g.at("stdout_visibility") == "visible");
    CHECK(g.at("execution_time") == 42);
    CHECK_NOTHROW(g.dump());  // strict: every string is valid UTF-8

    REQUIRE(g.at("tests").size() == 2 * report.exercises.size());
    double score = 0, max_score = 0;
    for (const json& t : g.at("tests")) {
        CHECK(subset(keys(t), test_keys));
        CHECK(
            subset({"name", "score", "max_score", "status", "output", "output_format", "number", "tags", "visibility"},
                   keys(t)));
        CHECK((t.at("status") == "passed" || t.at("status") == "failed"));
        CHECK(visibilities.count(t.at("visibility").get<std::string>()));
        CHECK(t.at("visibility") == "after_published");
        CHECK(t.at("score").get<double>() <= t.at("max_score").get<double>() + 1e-9);
        score += t.at("score").get<double>();
        max_score += t.at("max_score").get<double>();
    }
    CHECK(score == doctest::Approx(g.at("score").get<double>()));
    CHECK(score == doctest::Approx(report.points));
    CHECK(max_score == doctest::Approx(report.max_points));

    const json& tests = g.at("tests");
    CHECK(tests[0].at("name") == "vector_add: correctness");
    CHECK(tests[0].at("number") == "1.1");
    CHECK(tests[1].at("number") == "1.2");
    CHECK(tests[0].at("tags") == json::array({"correctness", "vector_add"}));
    CHECK(tests[1].at("tags") == json::array({"speed", "vector_add"}));
    CHECK(tests[0].at("max_score") == doctest::Approx(8));
    CHECK(tests[0].at("score") == doctest::Approx(8.0 * 2 / 5));
    const std::string failing = tests[0].at("output");
    CHECK(contains(failing, "**n=1025/int**: wrong: 3 of 1,025 output element(s) wrong"));
    CHECK(contains(failing, "first wrong element: out\\[1,024\\] = 1, expected 2"));
    CHECK(contains(failing, "\\<all\\> \\& more"));
    CHECK(contains(failing, "rerun: `grade --submission s --exercise vector_add --case n=1025/int`"));
    CHECK(contains(failing, "**n=4096/float**: cuda error"));
    CHECK(contains(failing, "**n=65536/float**: not run"));
    CHECK_FALSE(contains(failing, "**n=1/int**"));
    // What to fix first, at the top (grading/first_fix.hpp): the cases of the fixture have no size, so
    // the clearest failure among them, the CUDA error.
    CHECK(failing.rfind("Fix first: n=4096/float (the smallest failing case): the launcher left "
                        "cudaErrorIllegalAddress. Rerun it: grade --submission s --exercise vector\\_add --case "
                        "n=4096/float\n\n**2 of 5 cases passed",
                        0) == 0);
    CHECK_FALSE(contains(tests[2].at("output"), "Fix first"));  // every case passed

    // Correct but slow: correctness passed in full, speed failed with part of its points.
    CHECK(tests[2].at("name") == "scan_kogge_stone: correctness");
    CHECK(tests[2].at("status") == "passed");
    CHECK(tests[2].at("score") == doctest::Approx(12));
    CHECK(tests[2].at("max_score") == doctest::Approx(12));
    CHECK(tests[3].at("status") == "failed");
    CHECK(tests[3].at("max_score") == doctest::Approx(3));
    CHECK(tests[3].at("score") == doctest::Approx(1.25));
    CHECK(contains(tests[3].at("output"), "0.50\u00d7 the reference's speed"));
    CHECK(contains(tests[3].at("output"), "800 GB/s"));

    CHECK(tests[4].at("score") == 0);
    const std::string compile = tests[4].at("output");
    CHECK(contains(compile, "**Compile error**: nvcc failed"));
    CHECK(compile.rfind("Fix first: the compiler's first error: conv2d\\_tiled.cu(12): error: expected a \";\"\n\n", 0) == 0);
    CHECK(contains(compile, "```\nconv2d_tiled.cu(12): error"));
    CHECK(contains(compile, "a < b && c"));  // verbatim inside the fenced block
    CHECK_FALSE(contains(compile, "\x01"));
    CHECK(tests[6].at("score") == 0);
    CHECK(tests[7].at("score") == 0);
    CHECK(contains(tests[6].at("output"), "**Not submitted**: no histogram.cu in the submission"));

    // One entry per correct exercise with a speed case, and the total.
    const json& board = g.at("leaderboard");
    REQUIRE(board.size() == 2);
    for (const json& entry : board) {
        CHECK(subset(keys(entry), {"name", "value", "order"}));
        CHECK(entry.at("name").is_string());
        CHECK(entry.at("value").is_number());
        CHECK((entry.at("order") == "asc" || entry.at("order") == "desc"));
    }
    CHECK(board[0].at("value") == doctest::Approx(16.45));
    CHECK(board[1] == json({{"name", "scan_kogge_stone speedup"}, {"value", 0.5}, {"order", "desc"}}));
}

TEST_CASE("PrairieLearn: documented fields, a score between 0 and 1")
{
    // prairielearn.readthedocs.io/en/latest/externalGrading/, "Grading results".
    const std::set<std::string> top_level = {"gradable", "score",         "message", "output",
                                             "images",   "format_errors", "tests"};
    const std::set<std::string> test_keys = {"name",    "description", "points", "max_points",
                                             "message", "output",      "images"};
    const GradeReport report = sample_report();
    const json p = to_prairielearn(report, rubric());
    CHECK(subset(keys(p), top_level));
    CHECK(p.at("gradable") == true);
    const double score = p.at("score");
    CHECK(score >= 0);
    CHECK(score <= 1);
    CHECK(score == doctest::Approx(report.points / report.max_points));
    CHECK_NOTHROW(p.dump());

    REQUIRE(p.at("tests").size() == 2 * report.exercises.size());
    double points = 0;
    for (const json& t : p.at("tests")) {
        CHECK(keys(t) == std::set<std::string>{"name", "description", "points", "max_points", "message", "output"});
        CHECK(subset(keys(t), test_keys));
        CHECK(t.at("points").get<double>() <= t.at("max_points").get<double>() + 1e-9);
        points += t.at("points").get<double>();
    }
    CHECK(points == doctest::Approx(report.points));
    CHECK(p.at("tests")[0].at("message") == "2 of 5 cases passed");
    // Plain text: PrairieLearn shows it as written.
    CHECK(contains(p.at("tests")[0].at("output"), "first wrong element: out[1,024] = 1, expected 2"));
    CHECK(contains(p.at("tests")[4].at("output"), "    if (a < b && c)"));
    // What to fix first, at the top, plain.
    CHECK(p.at("tests")[0].at("output").get<std::string>().rfind(
              "Fix first: n=4096/float (the smallest failing case): the launcher left cudaErrorIllegalAddress. Rerun "
              "it: grade --submission s --exercise vector_add --case n=4096/float\n\n",
              0) == 0);
}

TEST_CASE("library use: every case passes, yet no test passes and no leaderboard entry")
{
    GradeReport report = sample_report();
    ExerciseResult& scan = report.exercises[1];
    scan.library_use = {"cub::DeviceScan::InclusiveSum"};
    scan.message = "calls cub::DeviceScan::InclusiveSum to do the exercise's work (docs/CONTRACT.md)";
    report.points -= scan.points;
    score_exercise(rubric(), scan);
    report.points += scan.points;

    const json g = to_gradescope(report, {}, rubric());
    const json& correctness = g.at("tests")[2];
    CHECK(correctness.at("status") == "failed");
    CHECK(correctness.at("score") == 0);
    CHECK(contains(correctness.at("output"), "calls cub::DeviceScan::InclusiveSum"));
    CHECK(g.at("tests")[3].at("status") == "failed");
    CHECK(g.at("leaderboard").size() == 1);
    CHECK(contains(to_prairielearn(report, rubric()).at("tests")[2].at("message"), "calls cub::DeviceScan"));
    CHECK(contains(to_junit_xml(report), "name=\"library use\""));
    const std::string md = to_markdown_summary(report);
    CHECK(contains(md, "| scan\\_kogge\\_stone | library use | 2/2 | 0.00 / 15.00 |"));
    CHECK(contains(md, "### scan\\_kogge\\_stone: library use"));
}
