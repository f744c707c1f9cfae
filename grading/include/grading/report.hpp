// The two outputs of a grading run: results.json (grading/results.schema.json) and the table.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "grading/results.hpp"
#include "grading/rubric.hpp"

namespace grading {

// Every string in it is valid UTF-8 (harness::valid_text), whatever bytes the report holds.
nlohmann::json to_json(const GradeReport& report);
// results.json's text: to_json(report), two spaces of indentation, a final line feed. Never throws
// on a byte that is not UTF-8 (it would be U+FFFD).
std::string to_json_text(const GradeReport& report);
// `colour`: status words in colour (console.hpp), for a terminal.
void print_summary_table(const GradeReport& report, std::ostream& out, bool colour = false);

// Cases of a graded exercise that did not pass.
std::size_t failing_cases(const ExerciseResult& exercise);
// The run in one line, the console's last: "graded: 37 of 243 cases fail in 3 exercises; 1
// not_submitted" or "graded: all 243 cases pass"; with --build-only, "checked: 9 files build and
// pass the build checks; 1 compile_error". A build or script that runs grade prints it as it is.
// With `rubric`, a file whose points it withholds whatever its cases do (points_withheld: no
// kernel launched, the reference's code) is counted apart: "1 exercise scores no points".
std::string grading_verdict(const GradeReport& report, bool build_only = false, const Rubric* rubric = nullptr);

// Writes `text` to a temporary file beside `path` and renames it over `path`: a reader sees the old
// file or the whole new one, never a part, and a file or link planted at `path` is replaced, not
// followed. Throws std::runtime_error with the reason when it cannot.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace grading
