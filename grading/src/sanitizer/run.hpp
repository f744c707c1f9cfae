// The sanitizer step of one exercise (grading/sanitizer.hpp says what it is for).
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grading/sanitizer.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "harness/gpu_lock.hpp"
#include "harness/supervisor.hpp"

namespace grading {

// Which cases run under the sanitizers: untimed ones of at most 2^20 elements, at most 3 (the
// smallest, the largest and one between), in their order.
constexpr std::int64_t sanitizer_max_elements = std::int64_t{1} << 20;
constexpr std::size_t sanitizer_max_cases = 3;
std::vector<harness::Case> sanitizer_cases(const std::vector<harness::Case>& cases);

// compute-sanitizer's options for `tool`, before the program to run.
std::vector<std::string> sanitizer_arguments(const std::string& tool);
// The supervisor's limits for a sanitizer run, from the grading's.
harness::SupervisorLimits sanitizer_limits(const harness::SupervisorLimits& limits);

struct SanitizerRequest {
    const harness::Exercise* exercise = nullptr;
    std::vector<harness::Case> cases;  // the exercise's graded cases; sanitizer_cases picks from them
    std::vector<std::string> tools;    // the rubric's
    SanitizerProgram program;          // found, or why not
    // Starts runner process `log` (a name, no extension) as `wrapper` + the runner, in a sandbox that
    // also shows `shown_dir` read-only.
    std::function<harness::SpawnOptions(const std::vector<std::string>& wrapper, const std::string& shown_dir,
                                        const std::string& log)>
        spawn;
    std::function<std::string(const std::string& log)> log_path;  // where spawn(..., log) writes
    harness::SupervisorLimits limits;                              // the grading's (scaled here)
    const harness::GpuLock* gpu_lock = nullptr;
    std::string submission, grade_command;  // for the cases' descriptions
};

struct SanitizerStep {
    nlohmann::json json;                          // results.json's "sanitizer": tool -> result
    std::vector<std::string> tools_with_findings;  // priced by the rubric
};

SanitizerStep run_sanitizers(const SanitizerRequest& request, std::ostream& progress);

}  // namespace grading
