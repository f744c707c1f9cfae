#include <functional>
#include <stdexcept>

#include "grading/formats.hpp"
#include "grading/hidden_cases.hpp"
#include "grading/report.hpp"

namespace grading {
namespace {

std::string json_text(const nlohmann::json& j)
{
    // Replace, not throw: the formats keep their text valid UTF-8, but a byte that slipped through
    // must not cost the student every other format.
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

void write_requested_formats(const GradeReport& instructors, const FormatRequests& requests)
{
    // Every format here is a student's (grading/hidden_cases.hpp): hidden cases say only whether
    // they passed.
    const GradeReport report = student_view(instructors);
    struct Format {
        const char* what;
        const std::string& path;
        std::function<std::string()> text;
    };
    const Format formats[] = {
        {"Gradescope results", requests.gradescope,
         [&] { return json_text(to_gradescope(report, requests.gradescope_settings, requests.rubric)); }},
        {"PrairieLearn results", requests.prairielearn,
         [&] { return json_text(to_prairielearn(report, requests.rubric)); }},
        {"JUnit XML", requests.junit, [&] { return to_junit_xml(report); }},
        {"Markdown summary", requests.markdown, [&] { return to_markdown_summary(report); }},
        {"student's results", requests.student_results, [&] { return to_json_text(report); }},
    };
    // Every format is attempted: one unwritable path should not cost the others.
    std::string failures;
    for (const Format& format : formats) {
        if (format.path.empty()) continue;
        try {
            write_file_atomically(format.path, format.text());
        } catch (const std::exception& e) {
            failures +=
                std::string(failures.empty() ? "" : "; ") + format.what + " to " + format.path + ": " + e.what();
        }
    }
    if (!failures.empty()) throw std::runtime_error("could not write " + failures);
}

}  // namespace grading
