// The report every format test renders: one exercise with a case of each kind, one correct but
// slow, one that does not compile (its output full of markup and bad bytes), one not submitted.
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "grading/results.hpp"
#include "grading/rubric.hpp"
#include "support/test_support.hpp"

namespace formats_fixture {

// A student's compiler output: markup characters, a control character, a byte that is not UTF-8.
extern const std::string compile_output;

grading::Rubric rubric();  // scan_kogge_stone weighs 1.5: 12 points for correctness, 3 for speed
grading::GradeReport sample_report();

std::set<std::string> keys(const nlohmann::json& object);
bool subset(const std::set<std::string>& part, const std::set<std::string>& whole);
using test_support::contains;

}  // namespace formats_fixture
