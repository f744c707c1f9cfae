#include "harness/timing/speed_case.hpp"

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

}  // namespace

Clock::duration SpeedCaseTimer::time_alone(const Exercise& exercise, const Case& c)
{
    CaseTiming& timing = alone_[c.index];
    timing.plan = plan_;
    timing.spec = batch_spec(exercise, c, plan_.reps_per_batch);
    if (reference_ == nullptr) {
        timing.alone_failure = "no reference runner";
        return {};
    }
    const Exclusive exclusive(gpu_lock_, server_, true);
    try {
        // Timed once more where a process of no grading used the GPU around it.
        for (int run = 0; run < 2; ++run) {
            const std::string before = intruders_ ? intruders_() : std::string();
            timing.alone = harness::timing::time_alone(server_, *reference_, timing.spec, plan_);
            const std::string after = intruders_ ? intruders_() : std::string();
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
            const std::string before = intruders_ ? intruders_() : std::string();
            timing.turns.push_back(
                harness::timing::time_in_turns(server_, student, reference, timing.spec, plan_, timing.fixed_cost_ms));
            const std::string after = intruders_ ? intruders_() : std::string();
            timing.other_processes = !before.empty() ? before : after;
            if (timing.other_processes.empty()) break;
        }
    } catch (const TimingServerFailure& failure) {
        timing.failure = failure.what();
        timing.turns.clear();
    }
    timing.exclusive_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return timing;
}

}  // namespace harness::timing
