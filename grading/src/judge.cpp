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

}  // namespace

// Both sides run the same keys, and the speed cases' integer data makes every correct order exact:
// a correct output matches the reference's bit for bit and needs no golden output on the CPU. A
// reference that erred costs time only: the golden output still decides.
int first_wrong_repetition(const harness::Exercise& exercise, const harness::Case& c, const harness::CaseInputs& inputs,
                           const std::vector<harness::TimedRep>& reps,
                           const std::map<std::uint64_t, std::uint64_t>& reference_checksums,
                           const Allowance& allowance, int& verified)
{
    verified = 0;
    for (int k : repetitions_to_verify(reps, allowance)) {
        ++verified;
        const auto& rep = reps[static_cast<std::size_t>(k)];
        const auto reference = reference_checksums.find(rep.key);
        if (reference != reference_checksums.end() && reference->second == rep.checksum) continue;
        if (rep.checksum != harness::golden_checksum(exercise, c, harness::make_variant(inputs, rep.key))) return k;
    }
    return -1;
}

namespace {

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

// The batch that counts: the one whose student median is lower (a disturbance rarely strikes
// twice, and a forgery is charged in both).
const harness::TimedBatch& counted_batch(const CaseRun& run)
{
    const harness::TimedBatch* best = &run.batches.front();
    for (const auto& batch : run.batches) {
        const Allowance allowance = allowance_from(batch.reference);
        if (harness::median(accepted_times(batch.student, allowance)) <
            harness::median(accepted_times(best->student, allowance_from(best->reference))))
            best = &batch;
    }
    return *best;
}

std::vector<double> launch_round_trips(const std::vector<harness::TimedRep>& reps)
{
    std::vector<double> times;
    for (const auto& rep : reps)
        if (!rep.warmup) times.push_back(rep.launch_ms);
    return times;
}

// The time of a speed case: the accepted times of its repetitions (timing_model.hpp) against the
// reference's turns in the same batch, measured the same way.
TimingResult time_case(const harness::Exercise& exercise, const harness::Case& c, const harness::CaseInputs& inputs,
                       const CaseRun& run, const harness::TimedBatch* alone)
{
    TimingResult t;
    t.cpu_ms = harness::cpu_baseline_ms(exercise, c, inputs);
    const double bytes = static_cast<double>(harness::minimum_bytes(exercise, c));
    if (run.batches.empty()) {
        t.note =
            run.timing_incomplete ? "the timed repetitions did not finish within the case's time limit" : "no timing";
        return t;
    }
    const harness::TimedBatch& batch = counted_batch(run);
    // The allowances come from the reference's turns beside the submission, or from its time
    // alone where those failed.
    const bool paired = !batch.reference.empty() && batch.reference_failure.empty();
    const std::vector<harness::TimedRep>* reference_reps = paired ? &batch.reference
                                                           : alone != nullptr && !alone->reference.empty()
                                                               ? &alone->reference
                                                               : nullptr;
    const Allowance allowance = reference_reps ? allowance_from(*reference_reps) : Allowance{};
    t.launch_overhead_allowance_ms = allowance.launch_overhead_ms;

    t.student_samples_ms = accepted_times(batch.student, allowance);
    t.student = summarize(t.student_samples_ms);
    t.reps = t.student.count;
    t.warmups = static_cast<int>(batch.student.size()) - t.reps;
    t.rounds = batch.rounds;
    t.capped = batch.capped;
    t.held = batch.held;
    t.batches = static_cast<int>(run.batches.size());
    for (const auto& b : run.batches) t.batch_seconds += b.seconds;
    t.other_processes = batch.other_processes;
    t.student_ms = t.student.median;
    t.student_event_ms = harness::median(event_times(batch.student));
    t.student_round_trip_ms = harness::median(launch_round_trips(batch.student));
    std::vector<std::string> notes;
    if (clock_disagrees(batch.student, allowance))
        notes.push_back("the grader's clock saw more time than the CUDA events (events " +
                        harness::format_value(t.student_event_ms) + " ms, accepted " +
                        harness::format_value(t.student_ms) + " ms" +
                        (t.batches > 1 ? ", in both of two batches" : "") +
                        "): work outside the legacy default stream, or a launcher that returns before its work is "
                        "done, is timed on the grader's clock");
    else if (t.batches > 1)
        notes.push_back("timed twice: the first batch was disturbed or shared the GPU");
    if (!t.other_processes.empty())
        notes.push_back("other processes used the GPU during both batches (" + t.other_processes +
                        "): the times may be slower than on a quiet GPU");
    if (!batch.held && harness::launcher_waits_for_gpu(batch.student))
        notes.push_back(
            "the launcher waits for the GPU (a synchronous copy such as cudaMemcpyToSymbol, or "
            "cudaDeviceSynchronize): it and the reference were timed with the CPU's launch latency "
            "included; the Async calls on the default stream avoid it");
    if (t.capped)
        notes.push_back("the repetition cap ended the timing before the medians were known to 1% (student " +
                        harness::format_value(100 * t.student.median_rse) + "%)");
    t.bandwidth_gb_s = t.student_ms > 0 ? bytes / (t.student_ms * 1e6) : 0;
    t.speedup_vs_cpu = t.student_ms > 0 ? t.cpu_ms / t.student_ms : 0;

    if (alone != nullptr && !alone->reference.empty())
        t.reference_alone_ms = harness::median(accepted_times(alone->reference, allowance));
    if (reference_reps != nullptr) {
        t.reference_samples_ms = accepted_times(*reference_reps, allowance);
        t.reference = summarize(t.reference_samples_ms);
        t.reference_ms = t.reference.median;
        t.reference_event_ms = harness::median(event_times(*reference_reps));
        if (!paired)
            notes.push_back("the reference could not be timed beside the submission (" + batch.reference_failure +
                            "); its time alone counts");
        if (paired && counted_reference_ms(t.reference_ms, t.reference_alone_ms) != t.reference_ms) {
            notes.push_back("the reference ran " + harness::format_value(t.reference_ms / t.reference_alone_ms) +
                            "x slower beside the submission's runner than alone; its time alone counts");
            t.reference_ms = t.reference_alone_ms;
        }
        t.reference_bandwidth_gb_s = t.reference_ms > 0 ? bytes / (t.reference_ms * 1e6) : 0;
        t.speedup_vs_reference = t.student_ms > 0 ? t.reference_ms / t.student_ms : 0;
    } else {
        notes.push_back("no reference timing in this run");
    }
    for (const auto& note : notes) t.note += (t.note.empty() ? "" : "; ") + note;
    return t;
}

}  // namespace

// The verdict on one settled case: the check of its output, or what stopped it.
void judge(const harness::Exercise& exercise, const harness::Case& c, CaseRun& run, const ReferenceAlone& alone,
           CaseResult& r)
{
    r.seconds = run.seconds;
    r.gpu_wait_seconds = run.gpu_wait_seconds;
    const auto anchor = alone.find(c.index);
    r.gpu_exclusive_seconds = run.gpu_exclusive_seconds + (anchor != alone.end() ? anchor->second.exclusive_seconds : 0);
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
            std::vector<harness::TimedRep> all_reps;
            std::map<std::uint64_t, std::uint64_t> reference_checksums;  // key -> the reference's output
            for (const auto& batch : run.batches) {
                all_reps.insert(all_reps.end(), batch.student.begin(), batch.student.end());
                for (const auto& rep : batch.reference) reference_checksums.emplace(rep.key, rep.checksum);
            }
            const harness::TimedBatch* reference_alone = nullptr;
            if (anchor != alone.end() && !run.batches.empty())
                reference_alone = counted_batch(run).held ? &anchor->second.held : &anchor->second.unheld;
            const Allowance allowance =
                run.batches.empty() ? Allowance{} : allowance_from(counted_batch(run).reference);
            const int wrong =
                first_wrong_repetition(exercise, c, inputs, all_reps, reference_checksums, allowance, verified);
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
            r.timing = time_case(exercise, c, inputs, run, reference_alone);
            r.timing->verified_reps = verified;
            if (anchor != alone.end()) r.timing->alone_seconds = anchor->second.held.seconds + anchor->second.unheld.seconds;
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

void bound_by_copy_bandwidth(double copy_gb_s, CaseResult& c)
{
    // No honest kernel moves its minimum bytes much faster than a device-to-device copy does (the
    // margin covers read-only traffic, which runs a little faster than a copy's mix).
    if (!c.timing || copy_gb_s <= 0) return;
    c.timing->fraction_of_copy = c.timing->bandwidth_gb_s / copy_gb_s;
    if (c.timing->bandwidth_gb_s <= 1.25 * copy_gb_s) return;
    c.timing->note = "the measured time implies " + std::to_string(static_cast<long>(c.timing->bandwidth_gb_s)) +
                     " GB/s, beyond the GPU's measured copy bandwidth of " +
                     std::to_string(static_cast<long>(copy_gb_s)) +
                     " GB/s (the GPU's peak, in practice): the timing cannot be right and earns no speed points";
    c.findings.push_back(c.timing->note);
    c.timing->speedup_vs_reference = 0;
}

}  // namespace grading::detail
