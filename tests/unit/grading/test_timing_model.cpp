// The timing module's arithmetic (harness/timing/): statistics, the stopping rule, a call's time
// from batch windows and the fixed cost, the reference that counts, and the check of every timed
// call's output (grading/src/judge.hpp): no GPU, no processes.
#include <doctest/doctest.h>

#include <chrono>
#include <vector>

#include "harness/check.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/timing/statistics.hpp"
#include "harness/timing/stopping_rule.hpp"
#include "harness/timing/timing_model.hpp"
#include "judge.hpp"

using namespace harness::timing;

namespace {

Window window(double ms, bool launched = true, bool warmup = false)
{
    Window w;
    w.window_ms = ms;
    w.launched = launched;
    w.warmup = warmup;
    return w;
}

}  // namespace

TEST_CASE("statistics: median, quantiles, MAD and the median's standard error")
{
    CHECK(median({}) == 0);
    CHECK(median({3, 1, 2}) == 2);
    CHECK(median({4, 1, 3, 2}) == doctest::Approx(2.5));
    CHECK(quantile({1, 2, 3, 4, 5}, 0.25) == doctest::Approx(2));
    CHECK(median_absolute_deviation({}) == 0);
    CHECK(median_absolute_deviation({1, 2, 3, 4, 100}) == doctest::Approx(1));
    CHECK(median_standard_error({5}) == 0);
    const SampleSummary s = summarize({1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0});
    CHECK(s.count == 7);
    CHECK(s.median == doctest::Approx(1.0));
    CHECK(s.minimum == doctest::Approx(0.98));
    CHECK(s.median_rse > 0);
    CHECK(s.median_rse < 0.05);
}

TEST_CASE("the stopping rule: enough batches on every side, each median known to its target")
{
    StoppingRule rule;
    rule.min_batches = 4;
    rule.target_rse = 0.01;
    const std::vector<double> tight(10, 1.0), few(3, 1.0);
    std::vector<double> loose;
    for (int k = 0; k < 10; ++k) loose.push_back(k % 2 ? 1.0 : 2.0);
    CHECK(rule.met({&tight}));
    CHECK_FALSE(rule.met({&few}));
    CHECK_FALSE(rule.met({&tight, &loose}));
    CHECK_FALSE(rule.met({&tight, &few}));
    const auto d = rule.describe();
    CHECK(d["name"] == "median_rse");
    CHECK(d["target_rse"] == 0.01);
    CHECK(d["min_batches"] == 4);
}

TEST_CASE("a call's time: the window less the fixed cost, over the calls; warm-ups and empty batches not counted")
{
    const std::vector<Window> alone = {window(9, false, true), window(2.0, false), window(2.2, false), window(2.1, false),
                                       window(6.1)};
    CHECK(fixed_cost_ms(alone) == doctest::Approx(2.1));  // the warm-up's 9 ms is not counted
    const std::vector<Window> student = {window(50, true, true), window(6.1), window(10.1), window(1.0)};
    const std::vector<double> calls = call_times(student, 2.1, 4);
    REQUIRE(calls.size() == 3);
    CHECK(calls[0] == doctest::Approx(1.0));
    CHECK(calls[1] == doctest::Approx(2.0));
    CHECK(calls[2] == 0);  // never below zero, however early a runner says it is done
    CHECK(fixed_cost_ms({}) == 0);
}

TEST_CASE("the reference beside the submission counts unless it ran more than 3% slower than alone")
{
    CHECK(counted_reference_ms(1.02, 1.0) == doctest::Approx(1.02));
    CHECK(counted_reference_ms(1.10, 1.0) == doctest::Approx(1.0));  // slowed down beside the submission
    CHECK(counted_reference_ms(0.90, 1.0) == doctest::Approx(0.90));
    CHECK(counted_reference_ms(1.10, 0) == doctest::Approx(1.10));  // no time alone
}

TEST_CASE("every timed call is checked: the reference's checksum on the same seed, else the golden one")
{
    const harness::Exercise& e = *harness::find_exercise("reduce_unroll_last_warp");
    harness::Case c;
    c.n = 5000;
    c.timed = true;
    CaseTiming timing;
    timing.spec = batch_spec(e, c, 2);
    auto golden = [&](std::uint64_t seed, std::uint32_t rep) {
        return harness::golden_checksum(e, c, harness::make_timed_inputs(e, c, seed, rep));
    };
    PairedTiming turns;
    Window s = window(1), r = window(1);
    s.seed = r.seed = 77;
    s.checksums = {golden(77, 0), golden(77, 1)};
    r.checksums = s.checksums;
    turns.student.push_back(s);
    turns.reference.push_back(r);
    timing.turns.push_back(turns);
    int verified = 0;
    CHECK_FALSE(grading::detail::first_wrong_repetition(e, c, timing, verified));
    CHECK(verified == 2);

    SUBCASE("a call that differs from the reference and from the golden output is wrong")
    {
        timing.turns[0].student[0].checksums[1] ^= 1;
        const auto wrong = grading::detail::first_wrong_repetition(e, c, timing, verified);
        REQUIRE(wrong);
        CHECK(wrong->seed == 77);
        CHECK(wrong->rep == 1);
    }
    SUBCASE("a reference that erred costs a golden check, never a wrong verdict")
    {
        timing.turns[0].reference[0].checksums[0] ^= 1;
        CHECK_FALSE(grading::detail::first_wrong_repetition(e, c, timing, verified));
    }
    SUBCASE("a student batch with no reference batch on its seed is checked against the golden output")
    {
        timing.turns[0].reference.clear();
        CHECK_FALSE(grading::detail::first_wrong_repetition(e, c, timing, verified));
        timing.turns[0].student[0].checksums[0] = 0;
        CHECK(grading::detail::first_wrong_repetition(e, c, timing, verified));
    }
}

namespace {

// A batch of the reference alone with the timing server's own GPU times.
Window server_window(double window_ms, bool launched, double generate_ms, double checksum_ms)
{
    Window w = window(window_ms, launched);
    w.generate_gpu_ms = generate_ms;
    w.checksum_gpu_ms = checksum_ms;
    return w;
}

// An alone timing of `reps` calls a batch: fixed cost 3 ms, calls of `call_ms`, the server's
// generate and checksum taking `server_ms` and a quarter of it.
std::vector<Window> alone_windows(double call_ms, double server_ms, int reps = 4)
{
    std::vector<Window> windows;
    for (int k = 0; k < 5; ++k) {
        windows.push_back(server_window(3 + reps * call_ms, true, server_ms, server_ms / 4));
        windows.push_back(server_window(3, false, server_ms, server_ms / 4));
    }
    return windows;
}

}  // namespace

TEST_CASE("the timing server's own GPU work tells a GPU that was the grader's alone from one that had company")
{
    CHECK(same_server_work(alone_windows(1, 2.0), alone_windows(1, 2.01)));  // 0.5%: the server's own noise
    CHECK_FALSE(same_server_work(alone_windows(1, 2.0), alone_windows(1, 2.2)));  // work queued beside it
    CHECK_FALSE(same_server_work(alone_windows(1, 2.0), {}));
    CHECK(median_call_ms(alone_windows(0.5, 2.0), 3, 4) == doctest::Approx(0.5));
}

TEST_CASE("work beside the timing server in a few of its batches is company, though the median did not move")
{
    // Red team (issue 19): a stopped runner's kernel that keeps the GPU busy in bursts (a duty
    // cycle on %globaltimer) lands in the server's short generate and checksum in a minority of
    // the batches, but in every batch's longer reference part: its median server work is as
    // before, its reference as slow as beside the submission, and the drift branch let the
    // slowed time beside count.
    auto after = alone_windows(1.10, 2.0);
    for (std::size_t k = 0; k < after.size(); k += 3) {  // 4 of 10 batches
        after[k].generate_gpu_ms *= 2;
        after[k].checksum_gpu_ms *= 2;
    }
    CHECK_FALSE(same_server_work(alone_windows(1, 2.0), after));
    CaseTiming timing;
    timing.spec.shape.reps = 4;
    timing.alone.windows = alone_windows(1.0, 2.0);
    timing.alone_after.windows = after;
    const auto counted = counted_reference(timing, 1.10, 1.0);
    CHECK(counted.ms == doctest::Approx(1.0));
    CHECK(counted.note.find("had company") != std::string::npos);
    // One batch a little slower is company too; within 2% everywhere is the server's own noise.
    after = alone_windows(1.10, 2.0);
    after[4].generate_gpu_ms *= 1.05;
    CHECK_FALSE(same_server_work(alone_windows(1, 2.0), after));
    after[4].generate_gpu_ms = 2.0 * 1.015;
    CHECK(same_server_work(alone_windows(1, 2.0), after));
}

TEST_CASE("a reference slower beside the submission: the machine's drift keeps its time beside, a slowed one its time alone")
{
    CaseTiming timing;
    timing.spec.shape.reps = 4;
    timing.alone.windows = alone_windows(1.0, 2.0);
    SUBCASE("within 3% of alone: its time beside counts, no note")
    {
        const auto counted = counted_reference(timing, 1.02, 1.0);
        CHECK(counted.ms == doctest::Approx(1.02));
        CHECK(counted.note.empty());
    }
    SUBCASE("slower, and not timed alone again: its time alone counts")
    {
        const auto counted = counted_reference(timing, 1.10, 1.0);
        CHECK(counted.ms == doctest::Approx(1.0));
        CHECK(counted.after_ms == 0);
        CHECK(counted.note.find("its time alone counts") != std::string::npos);
    }
    SUBCASE("as slow alone after the turns, the runner stopped, the server's work unchanged: the machine drifted")
    {
        timing.alone_after.windows = alone_windows(1.09, 2.0);
        const auto counted = counted_reference(timing, 1.10, 1.0);
        CHECK(counted.ms == doctest::Approx(1.10));
        CHECK(counted.after_ms == doctest::Approx(1.09));
        CHECK(counted.note.find("machine drifted") != std::string::npos);
    }
    SUBCASE("fast alone after the turns: slowed beside the submission, the lower time alone counts")
    {
        timing.alone_after.windows = alone_windows(0.99, 2.0);
        const auto counted = counted_reference(timing, 1.10, 1.0);
        CHECK(counted.ms == doctest::Approx(0.99));
        CHECK(counted.note.find("lower time alone counts") != std::string::npos);
    }
    SUBCASE("slow alone after the turns, but the server's own work slower too (work queued beside it): not believed")
    {
        timing.alone_after.windows = alone_windows(1.10, 2.4);
        const auto counted = counted_reference(timing, 1.10, 1.0);
        CHECK(counted.ms == doctest::Approx(1.0));
        CHECK(counted.after_ms == 0);
        CHECK(counted.note.find("had company") != std::string::npos);
    }
}
