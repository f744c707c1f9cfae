// The two outputs of a grading run: results.json (grading/results.schema.json) and the table.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "grading/results.hpp"

namespace grading {

nlohmann::json to_json(const GradeReport& report);
void print_summary_table(const GradeReport& report, std::ostream& out);

}  // namespace grading
