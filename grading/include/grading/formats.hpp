// Every results format from one grading run, besides results.json: Gradescope's autograder
// results, PrairieLearn's external grader results, JUnit XML and a Markdown summary. Each is
// written only when asked for, atomically (write_file_atomically).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "grading/results.hpp"

namespace grading {

// Gradescope's visibility settings ("hidden", "after_due_date", "after_published", "visible"),
// from the rubric's "gradescope" object.
struct GradescopeSettings {
    std::string visibility = "visible";          // of the whole result
    std::string stdout_visibility = "hidden";    // of what the autograder printed
    std::string test_visibility = "visible";     // of each test
};

// Where to write each format; an empty path: not asked for.
struct FormatRequests {
    std::string gradescope, prairielearn, junit, markdown;
    GradescopeSettings gradescope_settings;
};

nlohmann::json to_gradescope(const GradeReport& report, const GradescopeSettings& settings);
nlohmann::json to_prairielearn(const GradeReport& report);
std::string to_junit_xml(const GradeReport& report);
std::string to_markdown_summary(const GradeReport& report);

// Writes every requested format; throws std::runtime_error naming the file it could not write.
void write_requested_formats(const GradeReport& report, const FormatRequests& requests);

}  // namespace grading
