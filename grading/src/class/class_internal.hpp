// Helpers shared by grading/src/class/*.cpp, not part of the grader's interface.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace grading::class_detail {

// `x` with '.' decimals whatever the locale, at most `decimals` of them, trailing zeros dropped.
std::string number_text(double x, int decimals = 2);

// A number from `json` (0 when it is not one).
double number_or_zero(const nlohmann::json& json, const char* key);

// A file name (or any text from a folder) for one line of the console: printable_text, and a line
// feed or tab in it shown as \n or \t, so that a folder named "x\ngrade class: ..." prints no line of
// its own.
std::string one_line_text(std::string_view text);

// Every case of every exercise of grade's results passed, and no library was used (its exit code 0).
bool every_case_passed(const nlohmann::json& results);

}  // namespace grading::class_detail
