// Drives one exercise's runner through its cases, one command at a time (harness/channel.hpp),
// with a wall-clock limit per case and a budget for the exercise. A case that hangs, crashes or
// raises a CUDA error is recorded, and the cases after it continue in a fresh runner process, so
// one failure never costs the others.
//
// Submitted code runs inside the runner and can write anything to the channel, so nothing the
// runner says is trusted: each answer must be the one the command asks for (anything else is a
// protocol_error), and every round trip of a timed repetition is timed here, on the grader's own
// clock. Speed cases run a random number of warm-ups, then turns of timed repetitions alternating
// with the grader's reference runner (harness/paired_timing.hpp), each on an input variant whose
// key is drawn here at that moment; which calls count is not visible to the runner.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/channel.hpp"
#include "harness/gpu_lock.hpp"
#include "harness/paired_timing.hpp"
#include "harness/process.hpp"

namespace harness {

struct SupervisorLimits {
    std::chrono::milliseconds case_limit{10'000};        // per case, plus per_element below
    double case_ns_per_element = 20;                     // large cases get longer
    std::chrono::milliseconds timing_extra{20'000};      // added for timed cases
    std::chrono::milliseconds exercise_budget{120'000};  // all cases together, restarts included
    std::chrono::milliseconds startup_limit{60'000};     // until the runner says hello
    TimingPlan timing;                                   // repetitions of a speed case
};

// How one case ended, as far as the process is concerned. The verdict is the caller's.
struct CaseRun {
    enum class Outcome { output, cuda_error, exception, crashed, timeout, protocol_error, not_run };
    int index = -1;
    Outcome outcome = Outcome::not_run;
    std::optional<Message> output;  // case_output
    // Speed cases: the batch of repetitions, and a second one when the request's retime_if asked
    // for it or other processes used the GPU during the first.
    std::vector<TimedBatch> batches;
    bool timing_incomplete = false;                   // the output arrived, the repetitions did not all finish
    nlohmann::json error = nlohmann::json::object();  // cuda_error or exception meta, or {"reason": ...}
    double seconds = 0;                               // the whole case as the grader saw it, but the waits
    double gpu_wait_seconds = 0;                      // waiting for the GPU lock (other gradings' speed cases)
    double gpu_exclusive_seconds = 0;                 // a speed case's repetitions, with the GPU to themselves
};

struct ExerciseRun {
    bool launcher_found = true;
    std::string startup_failure;  // set when a runner could not start
    // ...because of the machine, not the submission: the process could not be started at all (a
    // process limit another exercise's runner used up) or hit a CUDA error before its first case.
    bool machine_failure = false;
    // A case's CUDA call found the GPU's memory used up: beside other exercises, perhaps by one of
    // their runners (or what it left behind) rather than by this submission.
    bool gpu_memory_ran_out = false;
    // The runner ended before it said hello: the submission's own doing (a static initializer that
    // exits) or, beside other exercises, the machine's (a process limit a fork bomb used up, which
    // the sandbox meets before the runner starts).
    bool ended_before_hello = false;
    int processes = 0;  // runners started
    double seconds = 0;
};

struct RunCase {
    int index = 0;
    std::int64_t elements = 0;  // for the size allowance of the case's time limit
    bool timed = false;
};

struct RunRequest {
    std::string exercise;
    std::vector<RunCase> cases;  // in order
    // How to start runner process number k (from 1): program, sandbox, log file. The program is
    // started with create_channel and must take `--exercise NAME` (added here).
    std::function<SpawnOptions(int k)> spawn;
    // The grader's reference runner for this exercise, timed in turns with the submission on each
    // speed case (null: the submission is timed alone). Its time counts against no limit.
    ReferenceRunner* reference = nullptr;
    // After each round of a speed case: true once both medians are known well enough.
    std::function<bool(const TimedBatch&)> settled;
    // Asked after a speed case's batch: true runs the whole batch once more (a passing
    // disturbance on the machine can charge an honest batch; a forged one is charged both times).
    std::function<bool(int case_index, const TimedBatch& batch)> retime_if;
    // Processes using the GPU that belong to no grading (a description; empty when none), asked
    // before and after each batch: a batch that had company is run once more, then marked.
    std::function<std::string()> gpu_intruders;
    // Held for each case (harness/gpu_lock.hpp): exclusively for a timed case, shared otherwise.
    // Time spent waiting for it counts against neither the case's limit nor the exercise's budget.
    const GpuLock* gpu_lock = nullptr;
};

// Runs the request; `on_case` is called once per requested case, in order, as soon as it is
// settled (a case never started because the budget ran out is reported as not_run).
ExerciseRun run_exercise(const RunRequest& request, const SupervisorLimits& limits,
                         const std::function<void(CaseRun&&)>& on_case);

// Asks the reference runner (the grader's own program) to measure the device: the calibration
// message's data, or an empty object with `error` set.
nlohmann::json calibrate_device(const SpawnOptions& spawn, std::chrono::milliseconds limit, std::string& error);

}  // namespace harness
