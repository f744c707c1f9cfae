// The sanitizer step of one exercise (grading/sanitizer.hpp says what it is for).
#pragma once

#include <chrono>
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

// Which cases run under the sanitizers: visible untimed ones of at most 2^20 elements, at most 3 (the
// smallest, the largest and one between), in their order.
constexpr std::int64_t sanitizer_max_elements = std::int64_t{1} << 20;
constexpr std::size_t sanitizer_max_cases = 3;
std::vector<harness::Case> sanitizer_cases(const std::vector<harness::Case>& cases);

// compute-sanitizer's options for `tool`, before the program to run. Among them
// `--error-exitcode sanitizer_error_exit_code`: the tool exits with it when it found errors, whatever
// the program printed. At most 128: a sandbox's bwrap reports a signal N as 128 + N.
constexpr int sanitizer_error_exit_code = 86;
std::vector<std::string> sanitizer_arguments(const std::string& tool);

// The verdict of one tool's runs, from how each compute-sanitizer process ended, as the grader saw
// it from outside the sandbox (never from the log, which the program shares and can forge, flood or
// cut): the tool's exit status is the only thing that says "clean".
enum class ToolEnd {
    clean,       // every process answered all its cases and exited 0: the tool found no error
    errors,      // a process exited with sanitizer_error_exit_code: the tool found errors (after a
                 // case broke off, only where that process's log shows them)
    withheld,    // a process answered all its cases, then did not end with 0 or that code (killed,
                 // still running at the end of the wait, another exit code): costs as errors, since
                 // only the program could cause that and hiding errors must not be cheaper than them
    unfinished,  // a process ended otherwise while a case broke off (a crash, a hang, a CUDA error
                 // that the grader killed it for, an exit, even with 0) or before its first case:
                 // not checked, at no cost
};
struct ToolVerdict {
    ToolEnd end = ToolEnd::unfinished;
    std::string why;  // withheld, unfinished: how the process that decided it ended
};
// shows_findings[k]: process k + 1's log shows a finding (an error code after a case broke off may be
// only the program's own exit status, which the tool's --check-exit-code turns into its error code).
ToolVerdict tool_verdict(const std::vector<harness::ProcessEnd>& ends, const std::vector<bool>& shows_findings = {});
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
    // How long compute-sanitizer may take to end once its runner answered its last command (it
    // prints its summary and exits after the program's exit); past it, it is killed: withheld.
    std::chrono::milliseconds exit_wait{30'000};
};

struct SanitizerStep {
    nlohmann::json json;                          // results.json's "sanitizer": tool -> result
    std::vector<std::string> tools_with_findings;  // priced by the rubric
};

SanitizerStep run_sanitizers(const SanitizerRequest& request, std::ostream& progress);

}  // namespace grading
