// The two outputs of a grading run: results.json (grading/results.schema.json) and the table.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "grading/results.hpp"

namespace grading {

nlohmann::json to_json(const GradeReport& report);
void print_summary_table(const GradeReport& report, std::ostream& out);
// Gradescope's autograder results format: one test per exercise, its points, and the failing
// cases' summaries and findings as the test's output.
nlohmann::json to_gradescope(const GradeReport& report);

}  // namespace grading
