// The verdict on one case, from what the supervisor collected: the check of its output against
// the golden result, its timing against the reference's, or what stopped it.
#include "judge.hpp"

#include <cstring>
#include <map>

#include "harness/baseline.hpp"
#include "harness/check.hpp"
#include "harness/data.hpp"
#include "harness/poison.hpp"

namespace grading::detail {

using harness::CaseRun;

TimingSamples samples_of(const harness::Message& timing)
{
    std::vector<double> all(timing.blob.size() / sizeof(float));
    for (std::size_t i = 0; i < all.size(); ++i) {
        float ms;
        std::memcpy(&ms, timing.blob.data() + i * sizeof(float), sizeof(float));
        all[i] = ms;
    }
    const auto reps = static_cast<std::size_t>(timing.meta.value("reps", 0));
    TimingSamples samples;
    if (reps > 0 && all.size() == 2 * reps) {
        samples.event_ms.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(reps));
        samples.host_ms.assign(all.begin() + static_cast<std::ptrdiff_t>(reps), all.end());
    } else {
        samples.event_ms = all;
    }
    return samples;
}

namespace {

// Work a launcher runs outside the legacy default stream is invisible to the events; the host
// clock (launcher call to device idle) still sees it. Beyond launch overhead the two agree.
bool escaped_the_events(double event_ms, double host_ms) { return host_ms > 1.5 * event_ms + 0.05; }

std::string cuda_error_hint(const std::string& error)
{
    static const std::map<std::string, std::string> hints = {
        {"cudaErrorIllegalAddress", "a kernel read or wrote outside any allocation: check every index against its "
                                    "bound (compute-sanitizer shows the line)"},
        {"cudaErrorMisalignedAddress", "a misaligned load or store: check casts of pointers to wider types"},
        {"cudaErrorInvalidConfiguration", "the launch configuration is invalid: more than 1024 threads per block, "
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

CaseResult describe_case(const harness::Exercise& exercise, const harness::Case& c, const std::string& submission)
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
    r.reproduce = "build/bin/grade --submission " + submission + " --exercise " + exercise.name + " --case " + c.label;
    return r;
}

// The verdict on one settled case: the check of its output, or what stopped it.
void judge(const harness::Exercise& exercise, const harness::Case& c, CaseRun& run,
           const std::map<int, TimingSamples>& reference_samples, CaseResult& r)
{
    r.seconds = run.seconds;
    switch (run.outcome) {
    case CaseRun::Outcome::output: {
        const harness::CaseInputs inputs = harness::make_inputs(exercise, c);
        const harness::Expected expected = harness::golden(exercise, c, inputs);
        const harness::RawOutput raw = harness::parse_raw_output(run.output->meta, std::move(run.output->blob));
        harness::Diagnosis d = harness::check_case(exercise, c, inputs, expected, raw);
        const std::uint64_t verified_checksum = raw.output_checksum(harness::element_type(exercise.family));
        r.status = d.correct ? "pass" : "wrong";
        r.summary = d.summary;
        r.findings = d.findings;
        r.detail = d.detail;
        if (!c.timed || !d.correct) return;
        TimingResult t;
        t.cpu_ms = harness::cpu_baseline_ms(exercise, c, inputs);
        const double bytes = static_cast<double>(harness::minimum_bytes(exercise, c));
        TimingSamples reference;
        if (auto ref = reference_samples.find(c.index); ref != reference_samples.end()) reference = ref->second;
        if (run.timing) {
            const TimingSamples student = samples_of(*run.timing);
            t.student_samples_ms = student.event_ms;
            t.reps = static_cast<int>(student.event_ms.size());
            t.student_ms = harness::median(student.event_ms);
            t.student_host_ms = harness::median(student.host_ms);
            t.reference_host_ms = harness::median(reference.host_ms);
            if (!student.host_ms.empty() && escaped_the_events(t.student_ms, t.student_host_ms)) {
                t.note = "part of the work ran outside the legacy default stream, where the events do not see it "
                         "(events " + harness::format_value(t.student_ms) + " ms, host clock " +
                         harness::format_value(t.student_host_ms) + " ms): timed on the host clock, both sides";
                r.findings.push_back("launch every kernel on the default stream (CONTRACT.md); " + t.note);
                t.student_ms = t.student_host_ms;
                reference.event_ms = reference.host_ms;
            }
            if (run.timing->meta.value("output_checksum", std::uint64_t{0}) != verified_checksum) {
                t.note = "the timed repetitions did not leave the verified output in `out` (each starts from a "
                         "poisoned `out`): work skipped or cached on repeated calls is not timed";
                r.findings.push_back("every call of the launcher must compute the whole output; " + t.note);
                t.student_ms = 0;
            }
            t.bandwidth_gb_s = t.student_ms > 0 ? bytes / (t.student_ms * 1e6) : 0;
            t.speedup_vs_cpu = t.student_ms > 0 ? t.cpu_ms / t.student_ms : 0;
        } else {
            t.note = run.timing_timed_out ? "the timing runs did not finish within the case's time limit" : "no timing";
        }
        if (!reference.event_ms.empty()) {
            t.reference_samples_ms = reference.event_ms;
            t.reference_ms = harness::median(reference.event_ms);
            t.reference_bandwidth_gb_s = t.reference_ms > 0 ? bytes / (t.reference_ms * 1e6) : 0;
            t.speedup_vs_reference = t.student_ms > 0 ? t.reference_ms / t.student_ms : 0;
        } else if (t.note.empty()) {
            t.note = "no reference timing in this run";
        }
        r.timing = t;
        return;
    }
    case CaseRun::Outcome::cuda_error: {
        const std::string error = run.error.value("error", std::string("?"));
        r.status = "cuda_error";
        r.summary = error + " during " + run.error.value("phase", std::string("the case"));
        r.findings.push_back(run.error.value("message", std::string()));
        if (auto hint = cuda_error_hint(error); !hint.empty()) r.findings.push_back(hint);
        r.findings.push_back("the cases after this one ran in a fresh process");
        r.detail = run.error;
        return;
    }
    case CaseRun::Outcome::timeout:
        r.status = "timeout";
        r.summary = run.error.value("reason", std::string("stopped by the time limit"));
        r.findings.push_back("the kernel did not finish: an infinite loop, a loop whose condition never changes, or "
                             "a __syncthreads() that not every thread of the block reaches");
        r.detail = run.error;
        return;
    case CaseRun::Outcome::crashed:
        r.status = "crashed";
        r.summary = run.error.value("reason", std::string("the runner crashed"));
        r.findings.push_back("the host code crashed (for example a host pointer dereferenced as if it were device "
                             "memory, or exit() called); what the program printed is in the exercise's output");
        r.detail = run.error;
        return;
    case CaseRun::Outcome::protocol_error:
        r.status = "protocol_error";
        r.summary = run.error.value("reason", std::string("the runner broke the grader's protocol"));
        r.detail = run.error;
        return;
    case CaseRun::Outcome::not_run:
        r.status = "not_run";
        r.summary = run.error.value("reason", std::string("not run"));
        return;
    }
}

void reject_impossible_timings(double peak_gb_s, ExerciseResult& result)
{
    // No honest kernel moves its minimum bytes faster than the DRAM's peak.
    for (auto& c : result.cases) {
        if (!c.timing || peak_gb_s <= 0 || c.timing->bandwidth_gb_s <= 1.1 * peak_gb_s) continue;
        c.timing->note = "the measured time implies " + std::to_string(static_cast<long>(c.timing->bandwidth_gb_s)) +
                         " GB/s, beyond the GPU's peak of " + std::to_string(static_cast<long>(peak_gb_s)) +
                         " GB/s: the timing cannot be right and earns no speed points";
        c.findings.push_back(c.timing->note);
        c.timing->speedup_vs_reference = 0;
    }
}

}  // namespace grading::detail
