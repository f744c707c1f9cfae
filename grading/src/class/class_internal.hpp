// Helpers shared by grading/src/class/*.cpp, not part of the grader's interface.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace grading::class_detail {

// Now, ISO 8601 UTC ("2026-01-31T12:00:00Z").
std::string utc_now();

// `x` with '.' decimals whatever the locale, at most `decimals` of them, trailing zeros dropped.
std::string number_text(double x, int decimals = 2);

// A number from `json` (0 when it is not one).
double number_or_zero(const nlohmann::json& json, const char* key);

// Every case of every exercise of grade's results passed, and no library was used (its exit code 0).
bool every_case_passed(const nlohmann::json& results);

}  // namespace grading::class_detail
