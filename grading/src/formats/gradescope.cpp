// Gradescope's autograder results (gradescope-autograders.readthedocs.io, "Autograder
// Specifications"): only the documented keys, every output in Markdown.
#include <cmath>

#include "feedback.hpp"
#include "grading/formats.hpp"
#include "text.hpp"

namespace grading {
namespace {

using formats::Markup;

// Points are sums of fractions (8 points over 3 cases): full marks may miss the maximum by a hair.
constexpr double tolerance = 1e-6;

struct Test {
    std::string name, number, kind, output;
    double score = 0, max_score = 0;
    bool passed = false;
};

nlohmann::json test_json(const Test& t, const std::string& exercise, const GradescopeSettings& settings)
{
    return {{"name", formats::valid_text(t.name)},
            {"number", t.number},
            {"score", t.score},
            {"max_score", t.max_score},
            // Explicit, because a test worth 0 points (a rubric without speed points) would show as
            // passed whatever happened.
            {"status", t.passed ? "passed" : "failed"},
            {"output", t.output},
            {"output_format", "md"},
            {"tags", nlohmann::json::array({t.kind, formats::valid_text(exercise)})},
            {"visibility", settings.test_visibility}};
}

bool correct(const ExerciseResult& e, const formats::PointsSplit& split)
{
    return formats::all_cases_pass(e) && e.correctness_points >= split.correctness - tolerance;
}

std::string overall_output(const GradeReport& report, const Rubric& rubric)
{
    std::size_t correct_exercises = 0;
    for (const auto& e : report.exercises) correct_exercises += correct(e, formats::split_points(e, rubric));
    return "**" + formats::fixed(report.points, 2) + " / " + formats::fixed(report.max_points, 2) + " points**\n\n" +
           std::to_string(correct_exercises) + " of " + std::to_string(report.exercises.size()) +
           " exercises correct. Graded on " +
           formats::md_text(report.device.empty() ? std::string("no GPU") : report.device) + " by pmpp-grader " +
           formats::md_text(report.grader_version) + ".\n";
}

}  // namespace

nlohmann::json to_gradescope(const GradeReport& report, const GradescopeSettings& settings, const Rubric& rubric)
{
    nlohmann::json tests = nlohmann::json::array();
    nlohmann::json leaderboard = nlohmann::json::array();
    leaderboard.push_back({{"name", "total points"}, {"value", formats::rounded(report.points, 2)}, {"order", "desc"}});
    for (std::size_t i = 0; i < report.exercises.size(); ++i) {
        const ExerciseResult& e = report.exercises[i];
        const formats::PointsSplit split = formats::split_points(e, rubric);
        const std::string number = std::to_string(i + 1);
        const bool is_correct = correct(e, split);
        tests.push_back(test_json(
            {e.name + ": correctness", number + ".1", "correctness", formats::correctness_details(e, Markup::markdown),
             e.correctness_points, split.correctness, is_correct},
            e.name, settings));
        tests.push_back(
            test_json({e.name + ": speed", number + ".2", "speed", formats::speed_details(e, rubric, Markup::markdown),
                       e.speed_points, split.speed, is_correct && e.speed_points >= split.speed - tolerance},
                      e.name, settings));
        // Only correct exercises: a wrong kernel can be as fast as it likes.
        if (const auto speedup = formats::counted_speedup(e); speedup && is_correct)
            leaderboard.push_back({{"name", formats::valid_text(e.name) + " speedup"},
                                   {"value", formats::rounded(*speedup, 2)},
                                   {"order", "desc"}});
    }
    return {{"score", report.points},
            // The specification's example is whole seconds.
            {"execution_time", std::lround(report.seconds)},
            {"output", overall_output(report, rubric)},
            {"output_format", "md"},
            {"test_output_format", "md"},
            {"visibility", settings.visibility},
            // The console is the instructor's record, which names hidden cases: never a student's.
            {"stdout_visibility", report.hidden_cases.count > 0 ? std::string("hidden") : settings.stdout_visibility},
            {"extra_data",
             {{"grader_version", formats::valid_text(report.grader_version)},
              {"device", formats::valid_text(report.device)},
              {"started_at", report.started_at}}},
            {"tests", tests},
            {"leaderboard", leaderboard}};
}

}  // namespace grading
