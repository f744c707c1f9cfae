#include "harness/timing/paired_timing.hpp"

#include <algorithm>
#include <chrono>

#include "harness/timing/reference_worker.hpp"
#include "harness/timing/timing_model.hpp"

namespace harness::timing {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// PairedTiming::idle: after a round whose student batch took more than 1.5 times the reference's,
// a window as long with no batch, the student's runner stopped (no signal handler of its can copy
// during it). A runner that cannot be stopped gives no window: none then, the control stays the
// reference's own traffic.
void idle_beside_slow_batch(Batches& batches, TimedWorker& student, PairedTiming& paired, const HostLinkBytes& host_link)
{
    if (!host_link || paired.student.empty() || paired.reference.empty()) return;
    const Window& slow = paired.student.back();
    if (!slow.host_link_bytes || slow.grader_ms <= 1.5 * paired.reference.back().grader_ms) return;
    if (!student.pause(true)) {
        student.pause(false);
        return;
    }
    Window idle = batches.idle(slow.grader_ms);
    const bool stayed = student.stayed_paused();
    student.pause(false);
    if (stayed) paired.idle.push_back(idle);
}

}  // namespace

AloneTiming time_alone(TimingServer& server, TimedWorker& reference, const BatchSpec& spec, const TimingPlan& plan,
                       const HostLinkBytes& host_link)
{
    const auto started = Clock::now();
    AloneTiming alone;
    Batches batches(server, spec, host_link);
    batches.add("reference", reference);
    for (int k = 0; k < plan.warmup_batches; ++k) {
        alone.windows.push_back(batches.run("reference", draw_seed(), true, true));
        alone.windows.push_back(batches.run("reference", draw_seed(), false, true));
    }
    for (int batch = 1;; ++batch) {
        // Launched then empty, then empty then launched: a drift lands on both alike.
        const bool launched_first = batch % 2 == 1;
        alone.windows.push_back(batches.run("reference", draw_seed(), launched_first, false));
        alone.windows.push_back(batches.run("reference", draw_seed(), !launched_first, false));
        const std::vector<double> calls = call_times(alone.windows, fixed_cost_ms(alone.windows), spec.shape.reps);
        if (plan.rule.met({&calls})) break;
        if (batch >= plan.rule.max_batches || Clock::now() - started >= plan.rule.cap) {
            alone.capped = true;
            break;
        }
    }
    alone.seconds = seconds_since(started);
    return alone;
}

PairedTiming time_in_turns(TimingServer& server, TimedWorker& student, TimedWorker* reference, const BatchSpec& spec,
                           const TimingPlan& plan, double fixed_cost_ms, const HostLinkBytes& host_link)
{
    const auto started = Clock::now();
    PairedTiming paired;
    Batches batches(server, spec, host_link);
    batches.add("student", student);
    auto reference_turn = [&](std::uint64_t seed, bool warmup) {
        if (reference == nullptr) return;
        try {
            paired.reference.push_back(batches.run("reference", seed, true, warmup));
            paired.reference_empty.push_back(batches.run("reference", draw_seed(), false, warmup));
        } catch (const ReferenceFailure& failure) {
            paired.reference_failure = failure.what();
            reference = nullptr;
        }
    };
    if (reference != nullptr) {
        try {
            batches.add("reference", *reference);
        } catch (const ReferenceFailure& failure) {
            paired.reference_failure = failure.what();
            reference = nullptr;
        }
    }
    for (int k = 0; k < plan.warmup_batches; ++k) {
        const std::uint64_t seed = draw_seed();
        paired.student.push_back(batches.run("student", seed, true, true));
        reference_turn(seed, true);
    }
    const int reps = spec.shape.reps;
    for (;;) {
        const std::uint64_t seed = draw_seed();
        // A B, then B A: a drift within the timing is charged to both sides alike.
        if (paired.rounds % 2 == 0) {
            paired.student.push_back(batches.run("student", seed, true, false));
            reference_turn(seed, false);
        } else {
            reference_turn(seed, false);
            paired.student.push_back(batches.run("student", seed, true, false));
        }
        ++paired.rounds;
        idle_beside_slow_batch(batches, student, paired, host_link);
        const double fixed = lower_fixed_cost_ms(fixed_cost_ms, paired);
        const std::vector<double> student_calls = call_times(paired.student, fixed, reps);
        const std::vector<double> reference_calls = call_times(paired.reference, fixed, reps);
        std::vector<const std::vector<double>*> sides{&student_calls};
        if (reference != nullptr) sides.push_back(&reference_calls);
        if (plan.rule.met(sides)) break;
        if (paired.rounds >= plan.rule.max_batches || Clock::now() - started >= plan.rule.cap) {
            paired.capped = true;
            break;
        }
    }
    paired.seconds = seconds_since(started);
    return paired;
}

double lower_fixed_cost_ms(double alone_fixed_cost_ms, const PairedTiming& turns)
{
    const double beside = fixed_cost_ms(turns.reference_empty);
    if (beside <= 0) return alone_fixed_cost_ms;
    if (alone_fixed_cost_ms <= 0) return beside;
    return std::min(alone_fixed_cost_ms, beside);
}

}  // namespace harness::timing
