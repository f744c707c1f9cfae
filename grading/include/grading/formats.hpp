// Every results format from one grading run, besides results.json: Gradescope's autograder
// results, PrairieLearn's external grader results, JUnit XML, a Markdown summary and the student's
// results.json. Each is written only when asked for, atomically (write_file_atomically). All of them
// are the students': written from student_view (grading/hidden_cases.hpp), so a hidden case shows
// only whether it passed and how it failed.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "grading/results.hpp"
#include "grading/rubric.hpp"

namespace grading {

// Where to write each format; an empty path: not asked for.
struct FormatRequests {
    std::string gradescope, prairielearn, junit, markdown;
    std::string student_results;  // results.json as a student may see it (--student-results)
    GradescopeSettings gradescope_settings;
    // The rubric that scored the report. An ExerciseResult's points alone cannot say how its maximum
    // splits into correctness and speed (a failed exercise has 0 of each), the rubric's proportions
    // can; its speed thresholds also explain the speed points to the student.
    Rubric rubric;
};

// Two tests per exercise, "<exercise>: correctness" and "<exercise>: speed", so that a correct but
// slow exercise shows its correctness as passed; a leaderboard of speedups of correct exercises.
nlohmann::json to_gradescope(const GradeReport& report, const GradescopeSettings& settings, const Rubric& rubric = {});
// The same two tests per exercise; its score is a fraction of the maximum, as PrairieLearn wants.
nlohmann::json to_prairielearn(const GradeReport& report, const Rubric& rubric = {});
// One <testsuite> per exercise, one <testcase> per case (one in all for an exercise that never ran).
std::string to_junit_xml(const GradeReport& report);
// For a CI job summary or a pull request comment: a table of exercises, then what failed.
std::string to_markdown_summary(const GradeReport& report);

// Writes every requested format, each even when another fails; throws std::runtime_error naming
// every file it could not write.
void write_requested_formats(const GradeReport& report, const FormatRequests& requests);

}  // namespace grading
