// Timing a speed case in turns. The submission's runner and the grader's reference runner, each in
// its own process, take alternate turns of repetitions (A B, then B A, ...) on the same input
// variants, the L2 flushed before each one, until the caller's rule says both medians are known
// well enough, or a cap on repetitions or time is hit. Drift of the machine (clocks, temperature,
// other load) lands on both sides alike, so their ratio is what stays stable.
//
// Every repetition is three round trips that the grader times on its own clock: prepare (poisoned
// output), launch (the input variant of the key sent with it, the L2 flushed, then the launcher
// between two CUDA events), checksum. No input exists before the launch command: a submission's
// own thread cannot start on it while the grader's messages travel.
//
// A launch holds the stream (harness/runner/timed_runs.hpp): the launcher call is queued behind a
// spinning kernel, so the events time the GPU's work and not how fast each process submits it. A
// launcher that waits for the GPU itself runs the hold out; when the submission's warm-ups do, the
// whole batch, both sides, goes without the hold, so that the two are timed alike.
// The reference runner is the grader's own program; it never runs inside a submission's process.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/channel.hpp"
#include "harness/gpu_lock.hpp"
#include "harness/process.hpp"

namespace harness {

// One repetition of a speed case as the grader saw it. The three *_ms are the grader's clock, from
// sending the command to receiving the whole answer; event_ms and checksum are what the runner
// said (untrusted from a submission: the judge bounds the one and verifies the other).
struct TimedRep {
    std::uint64_t key = 0;  // the input variant (harness/variant.hpp)
    double prepare_ms = 0, launch_ms = 0, checksum_ms = 0;
    double event_ms = 0;
    std::uint64_t checksum = 0;
    bool warmup = false;
    double hold_limit_ms = 0;   // the launch held the stream for at most this long (0: not held)
    bool hold_ran_out = false;  // ...and the limit, not the runner, ended the hold (the runner's word)
    bool held() const { return hold_limit_ms > 0; }
};

// One batch of a speed case: both sides' repetitions, warm-ups first, in the order they ran.
struct TimedBatch {
    std::vector<TimedRep> student, reference;
    int rounds = 0;                 // turns of each side
    bool held = false;              // its timed repetitions held the stream (both sides)
    bool capped = false;            // stopped by the repetition or time cap, not by the rule
    std::string reference_failure;  // why the reference's turns stopped, when they did
    std::string other_processes;    // processes of no grading's seen on the GPU during the batch
    double seconds = 0;
};

struct TimingPlan {
    int warmup_min = 2, warmup_max = 4;    // warm-ups per side, drawn at random
    int turn_reps = 10;                    // timed repetitions per turn
    int min_reps = 20, max_reps = 300;     // timed repetitions per side
    std::chrono::milliseconds cap{8'000};  // the whole batch, both sides
    double hold_us = 5'000;                // the hold's time limit; 0: launches never hold the stream
};

// Whether most of these warm-ups ran the hold out: the launcher waits for the GPU itself. A claim
// counts only where the grader's clock saw the launch take at least the hold's limit.
bool launcher_waits_for_gpu(const std::vector<TimedRep>& warmups);

// A runner that times one repetition on a given input variant (throws when it cannot).
class TimingSide {
public:
    virtual ~TimingSide() = default;
    // `hold_us`: the launch holds the stream for at most that long (0: it does not).
    virtual TimedRep repetition(std::uint64_t key, bool warmup, double hold_us) = 0;
};

// What the reference runner throws when it cannot go on: the batch goes on without it.
struct ReferenceFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Runs one batch. `student` or `reference` may be null (the reference timed alone, or a
// submission with no reference). `settled` is asked after each round once both sides have
// min_reps timed repetitions; null means settled then. Errors of the student's side propagate.
// The student's warm-ups hold the stream (plan.hold_us); the rest of the batch does too unless
// they ran the hold out (launcher_waits_for_gpu).
TimedBatch run_batch(TimingSide* student, TimingSide* reference, const TimingPlan& plan,
                     const std::function<bool(const TimedBatch&)>& settled);

// The three timed round trips of one repetition over any runner's channel.
TimedRep time_repetition(const std::function<void(MessageType, const nlohmann::json&)>& send,
                         const std::function<Message(MessageType)>& expect, std::uint64_t key, bool warmup,
                         double hold_us);

// The grader's reference runner for one exercise, kept running beside the submission's: it runs a
// speed case once (its output is not needed) and then times repetitions of it on request.
class ReferenceRunner : public TimingSide {
public:
    // `spawn` starts the reference runner (without `--exercise`, which is added here).
    ReferenceRunner(std::function<SpawnOptions()> spawn, std::string exercise, std::chrono::milliseconds startup_limit,
                    std::chrono::milliseconds command_limit);
    ~ReferenceRunner() override;
    ReferenceRunner(const ReferenceRunner&) = delete;
    ReferenceRunner& operator=(const ReferenceRunner&) = delete;

    // Makes case `index` (of `elements` elements) the one repetitions run on: its input made on the
    // host, then its run on the GPU, under `gpu_lock` held shared (when given) from the run's start
    // until its GPU work is done. Returns how long it waited for the lock (and for another batch's
    // end before making the input). Throws ReferenceFailure.
    std::chrono::steady_clock::duration begin_case(int index, std::int64_t elements, const GpuLock* gpu_lock = nullptr);
    TimedRep repetition(std::uint64_t key, bool warmup, double hold_us) override;
    // Gives the repetitions' buffers (three more sets of the speed case's, a gigabyte or two) back
    // to the GPU; the case stays begun, and the next repetition makes them again. Throws
    // ReferenceFailure.
    void end_timing();
    // Set once the runner failed: later calls throw at once.
    const std::string& failure() const { return failure_; }

private:
    void start();
    Message expect(MessageType type);
    void send(MessageType type, const nlohmann::json& meta);
    [[noreturn]] void fail(const std::string& why);

    std::function<SpawnOptions()> spawn_;
    std::string exercise_;
    std::chrono::milliseconds startup_limit_, command_limit_;
    std::optional<Child> child_;
    std::chrono::steady_clock::time_point deadline_{};
    int current_case_ = -1;
    std::string failure_;
};

}  // namespace harness
