#include "harness/timing/speed_case.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include "harness/timing/timing_model.hpp"

namespace harness::timing {
namespace {

using Clock = std::chrono::steady_clock;

// The GPU to itself, every grading's checking paused, the timing server to itself.
struct Exclusive {
    GpuLock::Hold gpu, quiet;
    std::unique_lock<std::mutex> server;
    Clock::duration waited{};
    // `hold_gpu`: take the GPU lock too (the turns' caller holds it already).
    Exclusive(const GpuLock* lock, TimingServer& timing_server, bool hold_gpu)
    {
        const auto from = Clock::now();
        if (lock != nullptr) {
            if (hold_gpu) gpu = lock->hold(true);
            quiet = lock->quiet();
        }
        server = std::unique_lock<std::mutex>(timing_server.session());
        waited = Clock::now() - from;
    }
};

// Whether the reference ran slower beside the submission, in the turns that were just timed, than
// alone before the submission's runner started, by more than the judge lets pass
// (timing_model.hpp: counted_reference_ms).
bool reference_slowed(const CaseTiming& timing)
{
    if (timing.turns.empty() || timing.alone.capped || !timing.alone_failure.empty()) return false;
    const PairedTiming& turns = counted_turns(timing);
    if (turns.reference.empty() || !turns.reference_failure.empty()) return false;
    const int reps = timing.spec.shape.reps;
    const double alone = median_call_ms(timing.alone.windows, timing.fixed_cost_ms, reps);
    const double beside = median_call_ms(turns.reference, lower_fixed_cost_ms(timing.fixed_cost_ms, turns), reps);
    return alone > 0 && counted_reference_ms(beside, alone) != beside;
}

// The submission's runner stopped for as long as this lives; `stopped` says whether all of it is.
struct Paused {
    TimedWorker& worker;
    bool stopped = false;
    explicit Paused(TimedWorker& w) : worker(w) { stopped = worker.pause(true); }
    ~Paused() { worker.pause(false); }
    Paused(const Paused&) = delete;
    Paused& operator=(const Paused&) = delete;
};

}  // namespace

const PairedTiming& counted_turns(const CaseTiming& timing)
{
    const int reps = timing.spec.shape.reps;
    auto student_ms = [&](const PairedTiming& turns) {
        return median_call_ms(turns.student, lower_fixed_cost_ms(timing.fixed_cost_ms, turns), reps);
    };
    const PairedTiming* best = &timing.turns.front();
    for (const auto& turns : timing.turns)
        if (student_ms(turns) < student_ms(*best)) best = &turns;
    return *best;
}

CountedReference counted_reference(const CaseTiming& timing, double beside_ms, double alone_ms)
{
    CountedReference counted{beside_ms, 0, {}};
    if (counted_reference_ms(beside_ms, alone_ms) == beside_ms) return counted;
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.3g", beside_ms / alone_ms);
    const std::string slower = "the reference ran " + std::string(ratio) +
                               "x slower beside the submission's runner than alone before it";
    const auto& after = timing.alone_after.windows;
    const bool clean = !after.empty() && same_server_work(timing.alone.windows, after);
    if (clean) counted.after_ms = median_call_ms(after, fixed_cost_ms(after), timing.spec.shape.reps);
    if (counted.after_ms > 0 && counted_reference_ms(beside_ms, counted.after_ms) == beside_ms) {
        counted.note = slower + ", and as slow alone after the turns with the runner stopped (the machine "
                                "drifted): its time beside counts";
        return counted;
    }
    counted.ms = counted.after_ms > 0 ? std::min(alone_ms, counted.after_ms) : alone_ms;
    if (after.empty())
        counted.note = slower + "; its time alone counts";
    else if (!clean)
        counted.note = slower + " (its timing alone after the turns had company on the GPU); its time alone counts";
    else
        counted.note = slower + " and than alone after the turns; its lower time alone counts";
    return counted;
}

Clock::duration SpeedCaseTimer::time_alone(const Exercise& exercise, const Case& c)
{
    // A new timing alone starts afresh: an earlier one's failure (the timing server or the
    // reference runner out of GPU memory beside another grading's runner, say) is not kept.
    CaseTiming& timing = alone_[c.index];
    timing = CaseTiming{};
    timing.plan = plan_;
    timing.spec = batch_spec(exercise, c, plan_.reps_per_batch);
    if (reference_ == nullptr) {
        timing.alone_failure = "no reference runner";
        return {};
    }
    reference_->retry();
    const Exclusive exclusive(gpu_lock_, server_, true);
    try {
        // Timed once more where a process of no grading used the GPU around it.
        for (int run = 0; run < 2; ++run) {
            const std::string before = intruders_ ? intruders_(std::nullopt, 0) : std::string();
            const auto began = std::chrono::system_clock::now();
            timing.alone = harness::timing::time_alone(server_, *reference_, timing.spec, plan_, host_link_);
            const std::string after = intruders_ ? intruders_(began, 0) : std::string();
            if (before.empty() && after.empty()) break;
        }
        timing.fixed_cost_ms = fixed_cost_ms(timing.alone.windows);
    } catch (const ReferenceFailure& failure) {
        timing.alone_failure = failure.what();
    } catch (const TimingServerFailure& failure) {
        timing.alone_failure = timing.failure = failure.what();
    }
    return exclusive.waited;
}

double SpeedCaseTimer::alone_seconds(int case_index) const
{
    const auto found = alone_.find(case_index);
    return found == alone_.end() ? 0 : found->second.alone.seconds;
}

bool SpeedCaseTimer::alone_failed(int case_index) const
{
    const auto found = alone_.find(case_index);
    return found != alone_.end() && !found->second.alone_failure.empty();
}

bool SpeedCaseTimer::alone_disturbed(int case_index) const
{
    const auto found = alone_.find(case_index);
    return found != alone_.end() && found->second.alone_failure.empty() && found->second.alone.capped;
}

CaseTiming SpeedCaseTimer::time_in_turns(const Exercise& exercise, const Case& c, TimedWorker& student,
                                         Clock::duration& waited)
{
    CaseTiming timing;
    if (const auto found = alone_.find(c.index); found != alone_.end()) timing = found->second;
    timing.plan = plan_;
    timing.spec = batch_spec(exercise, c, plan_.reps_per_batch);
    if (!timing.failure.empty()) return timing;
    const Exclusive exclusive(gpu_lock_, server_, false);
    waited = exclusive.waited;
    const auto started = Clock::now();
    ReferenceWorker* reference = reference_ != nullptr && reference_->failure().empty() ? reference_ : nullptr;
    try {
        for (int run = 0; run < 2; ++run) {
            const std::string before = intruders_ ? intruders_(std::nullopt, 0) : std::string();
            const auto began = std::chrono::system_clock::now();
            timing.turns.push_back(
                harness::timing::time_in_turns(server_, student, reference, timing.spec, plan_, timing.fixed_cost_ms,
                                               host_link_));
            const std::string after = intruders_ ? intruders_(began, 0) : std::string();
            timing.other_processes = !before.empty() ? before : after;
            if (timing.other_processes.empty()) break;
        }
        if (reference != nullptr && reference_slowed(timing)) {
            const Paused paused(student);
            try {
                // A runner whose processes could not all be stopped, or of which one ran while the
                // reference was timed (continued by another of its processes), gives no anchor.
                // Nor does one with company on the GPU around it (NVML, as for the turns) that the
                // turns did not have: company in both (a neighbour's grading busy throughout) is the
                // machine's state, as drift is, and the anchor then tells it from a slowed reference.
                if (paused.stopped) {
                    const std::string before = intruders_ ? intruders_(std::nullopt, 0) : std::string();
                    const auto began = std::chrono::system_clock::now();
                    timing.alone_after = harness::timing::time_alone(server_, *reference, timing.spec, plan_);
                    const std::string after = intruders_ ? intruders_(began, 0) : std::string();
                    const bool new_company = (!before.empty() || !after.empty()) && timing.other_processes.empty();
                    // And none where the stopped runner's GPU work, queued before the stop, went on.
                    const bool runner_busy = intruders_ && student.process_id() > 0 &&
                                             !intruders_(began, student.process_id()).empty();
                    if (!student.stayed_paused() || new_company || runner_busy) timing.alone_after = {};
                }
            } catch (const ReferenceFailure&) {
                timing.alone_after = {};  // no second anchor: the judge keeps the first
            }
        }
    } catch (const TimingServerFailure& failure) {
        timing.failure = failure.what();
        timing.turns.clear();
        // Asked while the runner still holds what it took (red team 14: hogs_gpu_memory_to_skip_timing).
        if (blame_ && student.process_id() > 0) timing.withheld = blame_(student.process_id(), c);
    }
    timing.exclusive_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return timing;
}

}  // namespace harness::timing
