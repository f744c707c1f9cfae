// Runs one exercise's runner under watch: each case gets a wall-clock limit, the exercise a total
// budget. A case that hangs, crashes or raises a CUDA error is recorded, and the cases after it
// continue in a fresh runner process, so one failure never costs the others.
//
// The runner's messages must follow the protocol exactly, per case: case_begin, case_output,
// timing (speed cases only), case_end; a case counts as finished only when the next case_begin
// or done confirms it. Anything else (garbage, a message out of turn, a second timing) is a
// protocol_error for the case at hand: submitted code runs in the runner and can reach the channel.
#pragma once

#include <chrono>
#include <cstdint>
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
    enum class Outcome { output, cuda_error, crashed, timeout, protocol_error, not_run };
    int index = -1;
    Outcome outcome = Outcome::not_run;
    std::optional<Message> output;     // case_output
    std::optional<Message> timing;     // timing, for timed cases
    bool timing_timed_out = false;     // the output arrived, then the timing ran out of time
    nlohmann::json error = nlohmann::json::object();   // cuda_error meta, or {"reason": ...}
    double seconds = 0;                // case_begin to case_end, as the parent saw it
};

struct ExerciseRun {
    nlohmann::json hello;              // from the first runner that said hello
    bool launcher_found = true;
    std::string startup_failure;       // set when a runner could not start
    int processes = 0;                 // runners started
    double seconds = 0;
};

struct RunCase {
    int index = 0;
    std::int64_t elements = 0;         // for the size allowance of the case's time limit
    bool timed = false;
};

struct RunRequest {
    std::string runner;                // executable
    std::string exercise;
    std::vector<RunCase> cases;        // in order
    std::string log_prefix;            // runner output goes to <log_prefix>-<k>.log
    std::string working_dir;           // the runner's working directory (empty: inherit)
};

// Runs the request; `on_case` is called once per requested case, in order, as soon as it is
// settled (a case never started because the budget ran out is reported as not_run).
ExerciseRun run_exercise(const RunRequest& request, const SupervisorLimits& limits,
                         const std::function<void(CaseRun&&)>& on_case);

}  // namespace harness
