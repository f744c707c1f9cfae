// The verdict on one case, from what the supervisor collected: the check of its output against
// the golden result, its timing against the reference's, or what stopped it.
#include "judge.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>

#include "harness/baseline.hpp"
#include "harness/check.hpp"
#include "harness/data.hpp"
#include "harness/poison.hpp"
#include "harness/variant.hpp"

namespace grading::detail {

using harness::CaseRun;

namespace {

// How many repetitions of a speed case the grader checks against its own golden results, picked
// after all of them have run.
constexpr int verified_repetitions = 4;

// The repetitions to check, chosen now that all have run: the fastest timed ones (the median is
// made of the fast half: work skipped on some calls makes those the fastest, so they are always
// checked), then others at random.
std::vector<int> repetitions_to_verify(const std::vector<harness::TimedRep>& reps, const Allowance& allowance)
{
    std::vector<int> timed, rest;
    for (std::size_t k = 0; k < reps.size(); ++k) (reps[k].warmup ? rest : timed).push_back(static_cast<int>(k));
    std::sort(timed.begin(), timed.end(), [&](int a, int b) {
        return accepted_ms(reps[static_cast<std::size_t>(a)], allowance) <
               accepted_ms(reps[static_cast<std::size_t>(b)], allowance);
    });
    std::vector<int> picked(timed.begin(),
                            timed.begin() + std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(timed.size())));
    rest.insert(rest.end(), timed.begin() + static_cast<std::ptrdiff_t>(picked.size()), timed.end());
    std::random_device random;
    std::shuffle(rest.begin(), rest.end(), std::mt19937_64((static_cast<std::uint64_t>(random()) << 32) ^ random()));
    for (std::size_t k = 0; k < rest.size() && picked.size() < verified_repetitions; ++k) picked.push_back(rest[k]);
    std::sort(picked.begin(), picked.end());
    return picked;
}

// Checks the chosen repetitions' outputs; returns the first wrong one's position, or -1.
int first_wrong_repetition(const harness::Exercise& exercise, const harness::Case& c, const harness::CaseInputs& inputs,
                           const std::vector<harness::TimedRep>& reps, const Allowance& allowance, int& verified)
{
    verified = 0;
    for (int k : repetitions_to_verify(reps, allowance)) {
        ++verified;
        const auto& rep = reps[static_cast<std::size_t>(k)];
        if (rep.checksum != harness::golden_checksum(exercise, c, harness::make_variant(inputs, rep.key))) return k;
    }
    return -1;
}

std::string cuda_error_hint(const std::string& error)
{
    static const std::map<std::string, std::string> hints = {
        {"cudaErrorIllegalAddress",
         "a kernel read or wrote outside any allocation: check every index against its "
         "bound (compute-sanitizer shows the line)"},
        {"cudaErrorMisalignedAddress", "a misaligned load or store: check casts of pointers to wider types"},
        {"cudaErrorInvalidConfiguration",
         "the launch configuration is invalid: more than 1024 threads per block, "
         "0 blocks for a small n, or too much dynamic shared memory"},
        {"cudaErrorLaunchOutOfResources", "the kernel needs more registers or shared memory than a block can have"},
        {"cudaErrorAssert", "a device-side assert() failed"},
        {"cudaErrorLaunchFailure", "the kernel crashed (an exception on the device)"},
        {"cudaErrorInvalidValue", "a CUDA call got an invalid argument (a size, a symbol, a pointer)"},
        {"cudaErrorInvalidSymbol", "cudaMemcpyToSymbol got something that is not a __constant__/__device__ symbol"},
    };
    const auto hit = hints.find(error);
    return hit == hints.end() ? "" : hit->second;
}

}  // namespace

CaseResult describe_case(const harness::Exercise& exercise, const harness::Case& c, const std::string& submission,
                         const std::string& grade_command)
{
    CaseResult r;
    r.index = c.index;
    r.label = c.label;
    r.n = c.n;
    r.height = c.height;
    r.width = c.width;
    r.mask_width = c.mask_width;
    r.data = harness::data_kind_name(c.data);
    r.seed = c.seed;
    r.timed = c.timed;
    r.reproduce = grade_command + " --submission " + submission + " --exercise " + exercise.name + " --case " + c.label;
    return r;
}

namespace {

// The time of a speed case: the accepted times of its repetitions (timing_model.hpp) against the
// reference's, measured the same way.
TimingResult time_case(const harness::Exercise& exercise, const harness::Case& c, const harness::CaseInputs& inputs,
                       const CaseRun& run, const ReferenceReps& reference_reps, const Allowance& allowance)
{
    TimingResult t;
    t.cpu_ms = harness::cpu_baseline_ms(exercise, c, inputs);
    const double bytes = static_cast<double>(harness::minimum_bytes(exercise, c));
    const auto ref = reference_reps.find(c.index);
    const bool have_reference = ref != reference_reps.end() && !ref->second.empty();
    t.launch_overhead_allowance_ms = allowance.launch_overhead_ms;
    if (run.reps.empty()) {
        t.note =
            run.timing_incomplete ? "the timed repetitions did not finish within the case's time limit" : "no timing";
    } else {
        // A batch the grader's clock disagreed with was timed again; the better batch counts (a
        // disturbance rarely strikes twice, and a forgery is charged in both).
        const bool retimed = !run.retimed_reps.empty();
        const auto& reps = retimed && harness::median(accepted_times(run.retimed_reps, allowance)) <
                                          harness::median(accepted_times(run.reps, allowance))
                               ? run.retimed_reps
                               : run.reps;
        t.student_samples_ms = accepted_times(reps, allowance);
        t.reps = static_cast<int>(t.student_samples_ms.size());
        t.warmups = static_cast<int>(reps.size()) - t.reps;
        t.batches = retimed ? 2 : 1;
        t.student_ms = harness::median(t.student_samples_ms);
        t.student_event_ms = harness::median(event_times(reps));
        std::vector<double> round_trips;
        for (const auto& rep : reps)
            if (!rep.warmup) round_trips.push_back(rep.launch_ms);
        t.student_round_trip_ms = harness::median(round_trips);
        if (clock_disagrees(reps, allowance))
            t.note = "the grader's clock saw more time than the CUDA events (events " +
                     harness::format_value(t.student_event_ms) + " ms, accepted " +
                     harness::format_value(t.student_ms) + " ms" + (retimed ? ", in both of two batches" : "") +
                     "): work outside the legacy default stream, or a launcher that returns before its work is "
                     "done, is timed on the grader's clock";
        else if (retimed)
            t.note = "timed twice: the grader's clock disagreed with the events in the first batch of repetitions";
        t.bandwidth_gb_s = t.student_ms > 0 ? bytes / (t.student_ms * 1e6) : 0;
        t.speedup_vs_cpu = t.student_ms > 0 ? t.cpu_ms / t.student_ms : 0;
    }
    if (have_reference) {
        t.reference_samples_ms = accepted_times(ref->second, allowance);
        t.reference_ms = harness::median(t.reference_samples_ms);
        t.reference_event_ms = harness::median(event_times(ref->second));
        t.reference_bandwidth_gb_s = t.reference_ms > 0 ? bytes / (t.reference_ms * 1e6) : 0;
        t.speedup_vs_reference = t.student_ms > 0 ? t.reference_ms / t.student_ms : 0;
    } else if (t.note.empty()) {
        t.note = "no reference timing in this run";
    }
    return t;
}

}  // namespace

Allowance allowance_for(const ReferenceReps& reference, int case_index)
{
    const auto ref = reference.find(case_index);
    return ref != reference.end() && !ref->second.empty() ? allowance_from(ref->second) : Allowance{};
}

// The verdict on one settled case: the check of its output, or what stopped it.
void judge(const harness::Exercise& exercise, const harness::Case& c, CaseRun& run, const ReferenceReps& reference,
           CaseResult& r)
{
    r.seconds = run.seconds;
    switch (run.outcome) {
        case CaseRun::Outcome::output: {
            const harness::CaseInputs inputs = harness::make_inputs(exercise, c);
            const harness::Expected expected = harness::golden(exercise, c, inputs);
            const harness::RawOutput raw = harness::parse_raw_output(run.output->meta, std::move(run.output->blob));
            harness::Diagnosis d = harness::check_case(exercise, c, inputs, expected, raw);
            r.status = d.correct ? CaseStatus::pass : CaseStatus::wrong;
            r.summary = d.summary;
            r.findings = d.findings;
            r.detail = d.detail;
            if (!c.timed || !d.correct) return;
            int verified = 0;
            std::vector<harness::TimedRep> all_reps = run.reps;
            all_reps.insert(all_reps.end(), run.retimed_reps.begin(), run.retimed_reps.end());
            const Allowance allowance = allowance_for(reference, c.index);
            const int wrong = first_wrong_repetition(exercise, c, inputs, all_reps, allowance, verified);
            if (wrong >= 0) {
                const auto& rep = all_reps[static_cast<std::size_t>(wrong)];
                r.status = CaseStatus::wrong;
                r.summary = "a timed repetition computed a wrong output";
                r.findings = {
                    "call " + std::to_string(wrong + 3) +
                    " of the launcher on this case ran on the case's input "
                    "with the signs of some elements flipped (key " +
                    harness::hex64(rep.key) +
                    ") and its output was "
                    "wrong: every call must compute the whole output from the input it is given; results kept "
                    "from an earlier call, or work done on some calls only, fail here (a race can too)"};
                r.detail["wrong_repetition"] = {{"call", wrong + 3}, {"key", harness::hex64(rep.key)}};
                return;
            }
            r.timing = time_case(exercise, c, inputs, run, reference, allowance);
            r.timing->verified_reps = verified;
            if (r.timing->note.rfind("the grader's clock saw more", 0) == 0)
                r.findings.push_back(
                    "launch every kernel on the legacy default stream and return when the output is "
                    "complete (docs/CONTRACT.md); " +
                    r.timing->note);
            return;
        }
        case CaseRun::Outcome::cuda_error: {
            const std::string error = run.error.value("error", std::string("?"));
            r.status = CaseStatus::cuda_error;
            r.summary = error + " during " + run.error.value("phase", std::string("the case"));
            r.findings.push_back(run.error.value("message", std::string()));
            if (auto hint = cuda_error_hint(error); !hint.empty()) r.findings.push_back(hint);
            r.findings.push_back("the cases after this one ran in a fresh process");
            r.detail = run.error;
            return;
        }
        case CaseRun::Outcome::exception:
            r.status = CaseStatus::exception;
            r.summary = "a C++ exception (" + run.error.value("type", std::string("?")) + ") escaped during " +
                        run.error.value("phase", std::string("the case"));
            r.findings.push_back(run.error.value("message", std::string()));
            r.findings.push_back(
                "the launcher, or code it calls, threw an exception that nothing caught; "
                "the cases after this one ran in a fresh process");
            r.detail = run.error;
            return;
        case CaseRun::Outcome::timeout:
            r.status = CaseStatus::timeout;
            r.summary = run.error.value("reason", std::string("stopped by the time limit"));
            r.findings.push_back(
                "the kernel did not finish: an infinite loop, a loop whose condition never changes, or "
                "a __syncthreads() that not every thread of the block reaches");
            r.detail = run.error;
            return;
        case CaseRun::Outcome::crashed:
            r.status = CaseStatus::crashed;
            r.summary = run.error.value("reason", std::string("the runner crashed"));
            r.findings.push_back(
                "the host code crashed (for example a host pointer dereferenced as if it were device "
                "memory, or exit() called); what the program printed is in the exercise's output");
            r.detail = run.error;
            return;
        case CaseRun::Outcome::protocol_error:
            r.status = CaseStatus::protocol_error;
            r.summary = run.error.value("reason", std::string("the runner broke the grader's protocol"));
            r.detail = run.error;
            return;
        case CaseRun::Outcome::not_run:
            r.status = CaseStatus::not_run;
            r.summary = run.error.value("reason", std::string("not run"));
            return;
    }
}

void reject_impossible_timings(double copy_gb_s, ExerciseResult& result)
{
    // No honest kernel moves its minimum bytes much faster than a device-to-device copy does (the
    // margin covers read-only traffic, which runs a little faster than a copy's mix).
    for (auto& c : result.cases) {
        if (!c.timing || copy_gb_s <= 0) continue;
        c.timing->fraction_of_copy = c.timing->bandwidth_gb_s / copy_gb_s;
        if (c.timing->bandwidth_gb_s <= 1.25 * copy_gb_s) continue;
        c.timing->note = "the measured time implies " + std::to_string(static_cast<long>(c.timing->bandwidth_gb_s)) +
                         " GB/s, beyond the GPU's measured copy bandwidth of " +
                         std::to_string(static_cast<long>(copy_gb_s)) +
                         " GB/s (the GPU's peak, in practice): the timing cannot be right and earns no speed points";
        c.findings.push_back(c.timing->note);
        c.timing->speedup_vs_reference = 0;
    }
}

}  // namespace grading::detail
