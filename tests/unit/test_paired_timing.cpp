// Paired, adaptive timing (harness/paired_timing.hpp) and the statistics that end it
// (grading/sample_statistics.hpp, grading/timing_model.hpp): with scripted runners, no GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "grading/sample_statistics.hpp"
#include "grading/timing_model.hpp"
#include "harness/paired_timing.hpp"

using grading::median_standard_error;
using grading::summarize;
using harness::TimedBatch;
using harness::TimedRep;
using harness::TimingPlan;
using harness::TimingSide;

namespace {

// A runner whose repetitions take `event_ms` (plus a deterministic jitter of `jitter` relative),
// and that writes down which side ran when, on which key.
struct ScriptedSide : TimingSide {
    ScriptedSide(std::string name, double event_ms, double jitter, std::vector<std::string>& log)
        : name(std::move(name)), event_ms(event_ms), jitter(jitter), log(log)
    {
    }
    TimedRep repetition(std::uint64_t key, bool warmup, double hold_us) override
    {
        if (fail_after >= 0 && calls >= fail_after) throw harness::ReferenceFailure("scripted failure");
        ++calls;
        keys.push_back(key);
        log.push_back(name);
        holds.push_back(hold_us);
        TimedRep rep;
        rep.key = key;
        rep.warmup = warmup;
        rep.hold_limit_ms = hold_us / 1000;
        rep.hold_ran_out = rep.held() && (waits_for_gpu || claims_waits);
        rep.event_ms = event_ms * (1 + jitter * std::sin(1.7 * calls));
        rep.launch_ms = rep.event_ms + 0.02 + (rep.held() && waits_for_gpu ? rep.hold_limit_ms : 0);
        rep.prepare_ms = rep.checksum_ms = 0.05;
        return rep;
    }
    std::string name;
    double event_ms, jitter;
    std::vector<std::string>& log;
    std::vector<std::uint64_t> keys;
    std::vector<double> holds;  // each repetition's hold_us
    int calls = 0, fail_after = -1;
    bool waits_for_gpu = false;  // a launcher that synchronizes: every hold runs out
    bool claims_waits = false;   // a runner that says its holds ran out while they did not
};

int timed(const std::vector<TimedRep>& reps)
{
    int count = 0;
    for (const auto& rep : reps) count += !rep.warmup;
    return count;
}

TimingPlan plan(int min_reps, int max_reps)
{
    TimingPlan p;
    p.warmup_min = p.warmup_max = 2;
    p.turn_reps = 5;
    p.min_reps = min_reps;
    p.max_reps = max_reps;
    p.cap = std::chrono::minutes(1);
    return p;
}

}  // namespace

TEST_CASE("the standard error of the median follows the spread and shrinks with the sample")
{
    CHECK(median_standard_error({}) == 0);
    CHECK(median_standard_error({3}) == 0);
    CHECK(median_standard_error(std::vector<double>(100, 2.0)) == 0);

    // Normal samples (fixed seed): the median's standard error is about 1.2533 sigma / sqrt(n).
    std::mt19937_64 random(42);
    std::normal_distribution<double> normal(10, 1);
    for (int n : {100, 400, 1600}) {
        std::vector<double> samples(static_cast<std::size_t>(n));
        for (auto& s : samples) s = normal(random);
        const double expected = 1.2533 / std::sqrt(n);
        CHECK(median_standard_error(samples) == doctest::Approx(expected).epsilon(0.3));
    }
    // A few wild outliers barely move it: order statistics near the middle do not see them.
    std::vector<double> samples(200);
    for (auto& s : samples) s = normal(random);
    const double clean = median_standard_error(samples);
    for (int k = 0; k < 10; ++k) samples[static_cast<std::size_t>(k)] = 1e6;
    CHECK(median_standard_error(samples) < 1.5 * clean);
}

TEST_CASE("a summary gives count, median, minimum, maximum, spread and the median's relative error")
{
    const auto s = summarize({4, 1, 3, 2, 5});
    CHECK(s.count == 5);
    CHECK(s.median == 3);
    CHECK(s.minimum == 1);
    CHECK(s.maximum == 5);
    CHECK(s.spread == doctest::Approx((4.0 - 2.0) / 3.0));  // quartiles 2 and 4
    CHECK(s.median_rse > 0);
    CHECK(summarize({}).count == 0);
    CHECK(grading::quantile({1, 2, 3, 4}, 0.5) == doctest::Approx(2.5));
}

TEST_CASE("turns alternate A B, B A, on the same input variants for both sides")
{
    std::vector<std::string> log;
    ScriptedSide student("S", 1.0, 0, log), reference("R", 1.0, 0, log);
    const TimedBatch batch = harness::run_batch(&student, &reference, plan(10, 10), nullptr);
    // Two warm-ups each, then two rounds of five: S R, then R S.
    REQUIRE(log.size() == 24);
    const std::string order = [&] {
        std::string o;
        for (std::size_t k = 0; k < log.size(); k += (k < 4 ? 2 : 5)) o += log[k];
        return o;
    }();
    CHECK(order == "SRSRRS");
    CHECK(student.keys == reference.keys);
    CHECK(batch.rounds == 2);
    CHECK(timed(batch.student) == 10);
    CHECK(timed(batch.reference) == 10);
    CHECK_FALSE(batch.capped);
    // Keys are drawn fresh for every repetition.
    CHECK(std::set<std::uint64_t>(student.keys.begin(), student.keys.end()).size() == student.keys.size());
}

TEST_CASE("a batch ends when the rule is met, or at the cap, which it reports")
{
    std::vector<std::string> log;
    ScriptedSide student("S", 1.0, 0.05, log), reference("R", 0.5, 0.05, log);
    int asked = 0;
    const TimedBatch settled =
        harness::run_batch(&student, &reference, plan(10, 300), [&](const TimedBatch&) { return ++asked == 3; });
    CHECK(timed(settled.student) == 20);  // asked at 10, 15 and 20 repetitions: yes the third time
    CHECK_FALSE(settled.capped);

    const TimedBatch capped =
        harness::run_batch(&student, &reference, plan(10, 40), [](const TimedBatch&) { return false; });
    CHECK(timed(capped.student) == 40);
    CHECK(timed(capped.reference) == 40);
    CHECK(capped.capped);

    // With real statistics: steady times settle quickly, noisy ones need more repetitions.
    auto rule = [](const TimedBatch& b) { return grading::detail::medians_settled(b, 0.01); };
    ScriptedSide steady_s("S", 1.0, 0.001, log), steady_r("R", 1.0, 0.001, log);
    ScriptedSide noisy_s("S", 1.0, 0.3, log), noisy_r("R", 1.0, 0.3, log);
    const int steady = timed(harness::run_batch(&steady_s, &steady_r, plan(10, 300), rule).student);
    const int noisy = timed(harness::run_batch(&noisy_s, &noisy_r, plan(10, 300), rule).student);
    CHECK(steady == 10);
    CHECK(noisy > steady);
}

TEST_CASE("a reference that fails mid-batch leaves the submission's timing to go on alone")
{
    std::vector<std::string> log;
    ScriptedSide student("S", 1.0, 0, log), reference("R", 1.0, 0, log);
    reference.fail_after = 6;  // two warm-ups and four repetitions
    const TimedBatch batch = harness::run_batch(&student, &reference, plan(20, 20), nullptr);
    CHECK(batch.reference_failure == "scripted failure");
    CHECK(timed(batch.student) == 20);
    CHECK(timed(batch.reference) == 4);
}

TEST_CASE("the reference timed alone")
{
    std::vector<std::string> log;
    ScriptedSide reference("R", 1.0, 0, log);
    const TimedBatch batch = harness::run_batch(nullptr, &reference, plan(15, 15), nullptr);
    CHECK(batch.student.empty());
    CHECK(timed(batch.reference) == 15);
}

TEST_CASE("the reference's time beside the submission counts unless it is over 3% slower than alone")
{
    using grading::detail::counted_reference_ms;
    CHECK(counted_reference_ms(1.02, 1.0) == 1.02);        // drift: beside counts
    CHECK(counted_reference_ms(0.90, 1.0) == 0.90);        // faster beside: beside counts
    CHECK(counted_reference_ms(1.10, 1.0) == 1.0);         // slowed beside the submission: alone counts
    CHECK(counted_reference_ms(0.0115, 0.010) == 0.0115);  // within 2 us on a tiny kernel
    CHECK(counted_reference_ms(1.10, 0.0) == 1.10);        // no time alone
}

TEST_CASE("launches hold the stream on both sides, unless the submission's launcher waits for the GPU")
{
    std::vector<std::string> log;
    ScriptedSide student("S", 0.05, 0.01, log), reference("R", 0.05, 0.01, log);
    TimingPlan p = plan(20, 40);
    p.hold_us = 5000;
    const TimedBatch held = harness::run_batch(&student, &reference, p, nullptr);
    CHECK(held.held);
    for (double h : student.holds) CHECK(h == 5000);
    for (double h : reference.holds) CHECK(h == 5000);

    // A runner that claims its holds ran out, while its launches took far less than the hold's
    // limit on the grader's clock, is not believed: the batch holds.
    ScriptedSide liar("S", 0.05, 0.01, log), reference3("R", 0.05, 0.01, log);
    liar.claims_waits = true;
    CHECK(harness::run_batch(&liar, &reference3, p, nullptr).held);

    // A launcher that synchronizes runs every hold out in its warm-ups: from then on neither side holds.
    ScriptedSide waiting("S", 0.05, 0.01, log), reference2("R", 0.05, 0.01, log);
    waiting.waits_for_gpu = true;
    const TimedBatch unheld = harness::run_batch(&waiting, &reference2, p, nullptr);
    CHECK_FALSE(unheld.held);
    std::size_t held_student = 0;
    for (const auto& rep : unheld.student) held_student += rep.held();
    CHECK(held_student == 2);  // the two warm-ups only
    CHECK(held_student == static_cast<std::size_t>(std::count(waiting.holds.begin(), waiting.holds.end(), 5000.0)));
    for (double h : reference2.holds) CHECK(h == 0);

    // The reference alone holds as the plan says; a plan without a hold never holds.
    ScriptedSide alone("R", 0.05, 0.01, log);
    CHECK(harness::run_batch(nullptr, &alone, p, nullptr).held);
    p.hold_us = 0;
    ScriptedSide never("R", 0.05, 0.01, log);
    CHECK_FALSE(harness::run_batch(nullptr, &never, p, nullptr).held);
    for (double h : never.holds) CHECK(h == 0);
}

TEST_CASE("a launcher waits for the GPU when most of its held warm-ups ran the hold out")
{
    auto reps = [](int held, int ran_out) {
        std::vector<TimedRep> r(static_cast<std::size_t>(held));
        for (auto& rep : r) rep.hold_limit_ms = 5, rep.launch_ms = 0.1;
        for (int k = 0; k < ran_out; ++k)
            r[static_cast<std::size_t>(k)].hold_ran_out = true, r[static_cast<std::size_t>(k)].launch_ms = 5.2;
        return r;
    };
    CHECK_FALSE(harness::launcher_waits_for_gpu({}));
    CHECK_FALSE(harness::launcher_waits_for_gpu(reps(4, 1)));  // one slow moment of the machine
    CHECK(harness::launcher_waits_for_gpu(reps(4, 2)));
    CHECK(harness::launcher_waits_for_gpu(reps(3, 3)));
    CHECK_FALSE(harness::launcher_waits_for_gpu(std::vector<TimedRep>(3)));  // nothing held
    // A claim the grader's clock contradicts (a launch shorter than the hold's limit) is not counted.
    std::vector<TimedRep> lying = reps(4, 0);
    for (auto& rep : lying) rep.hold_ran_out = true;
    CHECK_FALSE(harness::launcher_waits_for_gpu(lying));
}

TEST_CASE("a repetition's key travels with the launch command, never before it")
{
    // The input variant exists only once the timed step begins: a runner that knew the key at
    // prepare could start the work while the grader's messages travel, on no clock.
    using harness::Message;
    using harness::MessageType;
    std::vector<std::pair<MessageType, nlohmann::json>> sent;
    auto send = [&](MessageType type, const nlohmann::json& meta) { sent.emplace_back(type, meta); };
    auto expect = [&](MessageType type) {
        Message answer;
        answer.type = type;
        if (type == MessageType::launched) answer.meta = {{"event_ms", 0.04}, {"hold_ran_out", false}};
        if (type == MessageType::checksummed) answer.meta = {{"checksum", 42}};
        return answer;
    };
    const TimedRep rep = harness::time_repetition(send, expect, 0x1234, false, 5000);
    REQUIRE(sent.size() == 3);
    CHECK(sent[0].first == MessageType::prepare);
    CHECK_FALSE(sent[0].second.contains("key"));
    CHECK(sent[1].first == MessageType::launch);
    CHECK(sent[1].second.at("key") == 0x1234);
    CHECK(sent[1].second.at("hold_us") == 5000);
    CHECK(sent[2].first == MessageType::checksum);
    CHECK(rep.key == 0x1234);
    CHECK(rep.held());
    CHECK(rep.checksum == 42);
}
