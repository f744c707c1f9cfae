// Runs one exercise's runner under watch: each case gets a wall-clock limit, the exercise a total
// budget. A case that hangs, crashes or raises a CUDA error is recorded, and the cases after it
// continue in a fresh runner process, so one failure never costs the others.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/channel.hpp"
#include "harness/process.hpp"

namespace harness {

struct SupervisorLimits {
    std::chrono::milliseconds case_limit{10'000};        // per case, plus per_element below
    double case_ns_per_element = 20;                     // large cases get longer
    std::chrono::milliseconds timing_extra{20'000};      // added for timed cases
    std::chrono::milliseconds exercise_budget{120'000};  // all cases together, restarts included
    std::chrono::milliseconds startup_limit{60'000};     // until the runner says hello
    int reps = 25, warmup = 3;
};

// How one case ended, as far as the process is concerned. The verdict on the output is the
// caller's (harness/check.hpp).
struct CaseRun {
    enum class Outcome { output, cuda_error, crashed, timeout, not_run };
    int index = -1;
    Outcome outcome = Outcome::not_run;
    std::optional<Message> output;     // case_output
    std::optional<Message> timing;     // timing, for timed cases
    bool timing_timed_out = false;     // the output arrived, then the timing ran out of time
    nlohmann::json error;              // cuda_error meta, or {"reason": ...}
    double seconds = 0;                // case_begin to end, as the parent saw it
};
const char* outcome_name(CaseRun::Outcome outcome);

struct ExerciseRun {
    nlohmann::json hello;              // from the first runner that said hello
    bool launcher_found = true;
    std::string startup_failure;       // set when no runner could start (nothing was run)
    int processes = 0;                 // runners started
    double seconds = 0;
};

struct RunRequest {
    std::string runner;                // executable
    std::string exercise;
    std::vector<int> cases;            // indices, in order
    std::vector<std::int64_t> case_elements;   // per entry of `cases`: its size, for the limit
    std::vector<bool> case_timed;              // per entry of `cases`
    std::string log_prefix;            // runner output goes to <log_prefix>-<k>.log
};

// Runs the request; `on_case` is called once per requested case, in order, as soon as it is
// settled (a case never started because the budget ran out is reported as not_run).
ExerciseRun run_exercise(const RunRequest& request, const SupervisorLimits& limits,
                         const std::function<void(CaseRun&&)>& on_case);

}  // namespace harness
