// PrairieLearn's external grader results (prairielearn.readthedocs.io, "External Grading",
// "Grading results"): a score between 0 and 1, and tests as <pl-external-grader-results> shows
// them. Its outputs are shown as written, so they are plain text.
#include <algorithm>

#include "feedback.hpp"
#include "grading/formats.hpp"
#include "text.hpp"

namespace grading {
namespace {

using formats::Markup;

nlohmann::json test_json(const std::string& name, const std::string& description, double points, double max_points,
                         const std::string& message, const std::string& output)
{
    return {{"name", formats::valid_text(name)},
            {"description", description},
            {"points", points},
            {"max_points", max_points},
            {"message", formats::valid_text(message)},
            {"output", output}};
}

std::string overall_output(const GradeReport& report)
{
    std::string out;
    for (const auto& e : report.exercises)
        out += e.name + ": " + formats::fixed(e.points, 2) + " / " + formats::fixed(e.max_points, 2) + " points (" +
               formats::correctness_message(e) + ")\n";
    out += "Graded on " + (report.device.empty() ? std::string("no GPU") : report.device) + " by pmpp-grader " +
           report.grader_version + ".\n";
    return formats::valid_text(out);
}

}  // namespace

nlohmann::json to_prairielearn(const GradeReport& report, const Rubric& rubric)
{
    nlohmann::json tests = nlohmann::json::array();
    for (const auto& e : report.exercises) {
        const formats::PointsSplit split = formats::split_points(e, rubric);
        tests.push_back(test_json(e.name + ": correctness",
                                  "Every case's output checked against the reference (" + e.name + ".cu)",
                                  e.correctness_points, split.correctness, formats::correctness_message(e),
                                  formats::correctness_details(e, Markup::text)));
        tests.push_back(test_json(e.name + ": speed", "Time of the timed cases against the reference implementation's",
                                  e.speed_points, split.speed, formats::speed_message(e),
                                  formats::speed_details(e, rubric, Markup::text)));
    }
    const double score = report.max_points > 0 ? std::clamp(report.points / report.max_points, 0.0, 1.0) : 0.0;
    // Always gradable: PrairieLearn awards nothing and counts no attempt for an ungradable result, but
    // an exercise that does not compile must cost its points like any other failure.
    return {{"gradable", true},
            {"score", score},
            {"message", formats::fixed(report.points, 2) + " of " + formats::fixed(report.max_points, 2) + " points"},
            {"output", overall_output(report)},
            {"tests", tests}};
}

}  // namespace grading
