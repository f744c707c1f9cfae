// The grader's timing model (grading/timing_model.hpp): what a repetition's time is when the
// grader trusts only its own clock and the reference runner, and what forging can and cannot buy;
// and which timed repetitions' outputs it accepts (grading/src/judge.hpp).
#include <doctest/doctest.h>

#include <map>

#include "grading/timing_model.hpp"
#include "harness/check.hpp"
#include "harness/exercise.hpp"
#include "harness/family.hpp"
#include "judge.hpp"

using grading::detail::accepted_ms;
using grading::detail::accepted_times;
using grading::detail::Allowance;
using grading::detail::allowance_from;
using grading::detail::median_absolute_deviation;
using harness::TimedRep;

namespace {

TimedRep rep(double prepare, double launch, double checksum, double event, bool warmup = false)
{
    TimedRep r;
    r.prepare_ms = prepare;
    r.launch_ms = launch;
    r.checksum_ms = checksum;
    r.event_ms = event;
    r.warmup = warmup;
    return r;
}

// A reference whose launch round trip is its kernel (0.100 ms) plus 0.020 ms, with a little jitter.
std::vector<TimedRep> reference_reps()
{
    std::vector<TimedRep> reps = {rep(5, 5, 5, 5, true)};  // a warm-up: ignored
    for (int k = 0; k < 25; ++k) {
        const double jitter = 0.001 * (k % 5);
        reps.push_back(rep(0.200 + jitter, 0.120 + jitter, 0.050 + jitter, 0.100));
    }
    return reps;
}

}  // namespace

TEST_CASE("median absolute deviation")
{
    CHECK(median_absolute_deviation({}) == 0);
    CHECK(median_absolute_deviation({1, 2, 3, 4, 100}) == doctest::Approx(1));
}

TEST_CASE("the allowances come from the reference's timed repetitions, warm-ups ignored")
{
    const Allowance a = allowance_from(reference_reps());
    // overhead 0.020..0.024, median 0.022, MAD 0.001: median + max(3 MAD, 5 us) = 0.027
    CHECK(a.launch_overhead_ms == doctest::Approx(0.027));
    // prepare median 0.202: + max(3 MAD = 0.003, 0.02 ms, 10% = 0.0202) = 0.2222
    CHECK(a.prepare_ms == doctest::Approx(0.2222));
    CHECK(a.checksum_ms == doctest::Approx(0.052 + 0.02));
    const Allowance none = allowance_from({});
    CHECK(none.launch_overhead_ms == doctest::Approx(0.05));
}

TEST_CASE("an honest repetition is timed by its events")
{
    const Allowance a = allowance_from(reference_reps());
    CHECK(accepted_ms(rep(0.201, 0.080, 0.051, 0.060), a) == doctest::Approx(0.060));
    // The reference measured the same way keeps its own event times.
    for (double t : accepted_times(reference_reps(), a)) CHECK(t == doctest::Approx(0.100));
    CHECK(accepted_times(reference_reps(), a).size() == 25);
}

TEST_CASE("forged or hidden work: the grader's clock bounds the time from below")
{
    const Allowance a = allowance_from(reference_reps());
    // Events claim 1 us of a 0.5 ms launch round trip (work on another stream, or a forged time).
    CHECK(accepted_ms(rep(0.2, 0.500, 0.05, 0.001), a) == doctest::Approx(0.500 - 0.027));
    // A launch answered at once while the kernel still runs: its time lands in the checksum step.
    CHECK(accepted_ms(rep(0.2, 0.021, 0.450, 0.001), a) == doctest::Approx(0.001 + 0.450 - 0.072));
    // Work moved into prepare (a result computed before the launch) is charged as prepare's excess.
    CHECK(accepted_ms(rep(0.700, 0.025, 0.05, 0.001), a) == doctest::Approx(0.001 + 0.700 - 0.2222));
    // Skipping harness work earns no credit: a fast prepare or checksum is not subtracted.
    CHECK(accepted_ms(rep(0.001, 0.120, 0.001, 0.100), a) == doctest::Approx(0.100));
    // A reported time longer than what the grader saw only hurts the submission.
    CHECK(accepted_ms(rep(0.2, 0.120, 0.05, 3.0), a) == doctest::Approx(3.0));
}

TEST_CASE("without a reference, only the launch round trip bounds the events")
{
    const Allowance a;
    CHECK(accepted_ms(rep(50, 0.5, 50, 0.1), a) == doctest::Approx(0.45));
    CHECK(accepted_ms(rep(50, 0.12, 50, 0.1), a) == doctest::Approx(0.1));
}

TEST_CASE("timed repetitions: an output the reference's on the same key is right, any other meets the golden")
{
    const harness::Exercise& e = *harness::find_exercise("scan_kogge_stone");
    const auto cases = harness::cases_for(e);
    const harness::Case& c = *harness::find_case(cases, "n=1025/int");
    const harness::CaseInputs inputs = harness::make_inputs(e, c);
    // Four timed repetitions: all four are verified.
    std::vector<TimedRep> reps;
    std::map<std::uint64_t, std::uint64_t> golden;
    for (std::uint64_t key : {11u, 22u, 33u, 44u}) {
        TimedRep r = rep(0.2, 0.12, 0.05, 0.1);
        r.key = key;
        r.checksum = golden[key] = harness::golden_checksum(e, c, harness::make_variant(inputs, key));
        reps.push_back(r);
    }
    const Allowance a = allowance_from(reference_reps());
    int verified = 0;
    using grading::detail::first_wrong_repetition;

    // Correct, and no reference: the golden outputs decide.
    CHECK(first_wrong_repetition(e, c, inputs, reps, {}, a, verified) == -1);
    CHECK(verified == 4);
    // Correct, the reference agreeing.
    CHECK(first_wrong_repetition(e, c, inputs, reps, golden, a, verified) == -1);

    // A wrong output: the reference disagrees, and so does the golden one.
    std::vector<TimedRep> wrong = reps;
    wrong[2].checksum ^= 1;
    CHECK(first_wrong_repetition(e, c, inputs, wrong, golden, a, verified) == 2);
    CHECK(first_wrong_repetition(e, c, inputs, wrong, {}, a, verified) == 2);

    // A reference that erred on a key (or ran another input) does not fail a correct output.
    std::map<std::uint64_t, std::uint64_t> erring = golden;
    erring[33] ^= 1;
    CHECK(first_wrong_repetition(e, c, inputs, reps, erring, a, verified) == -1);

    // What the reference computed is trusted: an output bit for bit the reference's needs nothing
    // more. (The reference runner is the grader's own process; submitted code never runs in it.)
    std::map<std::uint64_t, std::uint64_t> trusted = golden;
    trusted[44] = wrong[3].checksum = 12345;
    CHECK(first_wrong_repetition(e, c, inputs, wrong, trusted, a, verified) == 2);
    wrong[2].checksum = reps[2].checksum;
    CHECK(first_wrong_repetition(e, c, inputs, wrong, trusted, a, verified) == -1);
}
