// Drives one exercise's runner through its cases, one command at a time (harness/channel.hpp),
// with a wall-clock limit per case and a budget for the exercise. A case that hangs, crashes or
// raises a CUDA error is recorded, and the cases after it continue in a fresh runner process, so
// one failure never costs the others.
//
// Submitted code runs inside the runner and can write anything to the channel, so nothing the
// runner says is trusted: each answer must be the one the command asks for (anything else is a
// protocol_error). A speed case, once its output has arrived, is timed by the request's
// `time_case` (harness/timing/), which drives the runner through this conversation as a
// TimedWorker: the runner only maps buffers and runs batches when told.
#pragma once

#include <chrono>
#include <cstdint>
#include <any>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/channel.hpp"
#include "harness/gpu_lock.hpp"
#include "harness/process.hpp"
#include "harness/timed_worker.hpp"

namespace harness {

struct SupervisorLimits {
    std::chrono::milliseconds case_limit{10'000};        // per case, plus per_element below
    double case_ns_per_element = 20;                     // large cases get longer
    std::chrono::milliseconds timing_extra{20'000};      // added for timed cases (their timing)
    std::chrono::milliseconds exercise_budget{120'000};  // all cases together, restarts included
    std::chrono::milliseconds startup_limit{60'000};     // until the runner says hello
};

// How one case ended, as far as the process is concerned. The verdict is the caller's.
struct CaseRun {
    enum class Outcome { output, cuda_error, exception, crashed, timeout, protocol_error, not_run };
    int index = -1;
    Outcome outcome = Outcome::not_run;
    std::optional<Message> output;  // case_output
    // Speed cases: what the request's time_case returned (harness/timing/speed_case.hpp's
    // CaseTiming), once the timing finished; empty where the conversation broke off during it.
    std::any timing;
    bool timing_incomplete = false;                   // the output arrived, the timing did not finish
    nlohmann::json error = nlohmann::json::object();  // cuda_error or exception meta, or {"reason": ...}
    double seconds = 0;                               // the whole case as the grader saw it, but the waits
    double gpu_wait_seconds = 0;                      // waiting for the GPU lock (other gradings' speed cases)
    double gpu_exclusive_seconds = 0;                 // a speed case's timing, with the GPU to itself
};

// How one runner process ended, for a wrapper's verdict (compute-sanitizer's exit status).
struct ProcessEnd {
    ExitStatus status;          // timed_out: still running when the grader gave up on it and killed it
    bool answered_all = false;  // every case it was given got its answer: what ended it came after
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
    // Per runner started (number k at k - 1): it was started for hidden cases. A runner runs cases of
    // one visibility only, so that what a runner printed while it had a hidden case's input is in a
    // log of its own (runner-k.log), which students never see.
    std::vector<bool> hidden_processes;
    std::vector<ProcessEnd> process_ends;  // per runner started, in order (number k at k - 1)
    double seconds = 0;
};

struct RunCase {
    int index = 0;
    std::int64_t elements = 0;  // for the size allowance of the case's time limit
    bool timed = false;
    // The case as the runner makes its input from it (harness::case_spec), sent with load_case and
    // run_case; null: the runner looks the case up by its index in its own list.
    nlohmann::json spec = nullptr;
    bool hidden = false;  // run only by runners that run no visible case (ExerciseRun::hidden_processes)
};

struct RunRequest {
    std::string exercise;
    std::vector<RunCase> cases;  // in order
    // How to start runner process number k (from 1): program, sandbox, log file. The program is
    // started with create_channel and must take `--exercise NAME` (added here).
    std::function<SpawnOptions(int k)> spawn;
    // Times a speed case once its output has arrived, driving the runner as `worker`; its result
    // goes into the case's CaseRun::timing. It sets `gpu_wait` to how long it waited for the GPU,
    // which, like the rest of the time the reference's side takes, counts against neither the
    // case's limit nor the exercise's budget beyond `timing_extra`. Null: speed cases are not timed.
    std::function<std::any(const RunCase& c, TimedWorker& worker, std::chrono::steady_clock::duration& gpu_wait)>
        time_case;
    // Held shared for each case's GPU work (harness/gpu_lock.hpp). Time spent waiting for it
    // counts against neither the case's limit nor the exercise's budget.
    const GpuLock* gpu_lock = nullptr;
    // After the runner's last answer, how long its process may take to end by itself before it is
    // killed: a wrapper (compute-sanitizer) prints its summary once the runner has exited. 0: killed at once.
    // Also the wait, where longer than 5 s, for a runner that reported a CUDA error or an exception
    // (it exits by itself) or closed its channel in a case: the wrapper's findings come after its end.
    std::chrono::milliseconds exit_wait{0};
};

// Runs the request; `on_case` is called once per requested case, in order, as soon as it is
// settled (a case never started because the budget ran out is reported as not_run).
ExerciseRun run_exercise(const RunRequest& request, const SupervisorLimits& limits,
                         const std::function<void(CaseRun&&)>& on_case);

}  // namespace harness
