// The two outputs of a grading run: results.json (grading/results.schema.json) and the table.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "grading/results.hpp"

namespace grading {

nlohmann::json to_json(const GradeReport& report);
// `colour`: status words in colour (console.hpp), for a terminal.
void print_summary_table(const GradeReport& report, std::ostream& out, bool colour = false);

// Writes `text` to a temporary file beside `path` and renames it over `path`: a reader sees the old
// file or the whole new one, never a part, and a file or link planted at `path` is replaced, not
// followed. Throws std::runtime_error with the reason when it cannot.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace grading
