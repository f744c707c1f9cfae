// The verdict on one case, from what the supervisor collected: the check of its output against
// the golden result, its timing against the reference's, or what stopped it.
#include "judge.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <any>

#include "harness/baseline.hpp"
#include "harness/check.hpp"
#include "harness/data.hpp"
#include "harness/family.hpp"
#include "harness/poison.hpp"
#include "harness/timed_data.hpp"
#include "harness/timing/timing_model.hpp"

namespace grading::detail {

using harness::CaseRun;

// Each repetition of the submission's batches is right where its checksum equals the
// reference's on the same seed (the speed cases' integer inputs make every correct summation order
// exact), else where it equals the golden output's, computed here from the seed: a reference that
// erred costs time, never a wrong verdict.
std::optional<WrongRepetition> first_wrong_repetition(const harness::Exercise& exercise, const harness::Case& c,
                                                      const harness::timing::CaseTiming& timing, int& verified)
{
    verified = 0;
    std::map<std::uint64_t, const std::vector<std::uint64_t>*> reference;  // seed -> its checksums
    for (const auto& turns : timing.turns)
        for (const auto& w : turns.reference) reference.emplace(w.seed, &w.checksums);
    for (const auto& turns : timing.turns)
        for (const auto& w : turns.student) {
            const auto theirs = reference.find(w.seed);
            for (std::size_t k = 0; k < w.checksums.size(); ++k) {
                ++verified;
                if (theirs != reference.end() && k < theirs->second->size() && (*theirs->second)[k] == w.checksums[k])
                    continue;
                const auto rep = static_cast<std::uint32_t>(k);
                if (w.checksums[k] != harness::golden_checksum(exercise, c, harness::make_timed_inputs(exercise, c, w.seed, rep)))
                    return WrongRepetition{w.seed, static_cast<int>(k)};
            }
        }
    return std::nullopt;
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

CaseResult describe_case(const harness::Exercise& exercise, const harness::Case& c, const std::string& submission,
                         const std::string& grade_command)
{
    CaseResult r;
    r.index = c.index;
    r.label = c.label;
    r.n = c.n;
    r.shape = harness::family_of(exercise).shape_json(c);
    r.data = harness::data_kind_name(c.data);
    r.seed = c.seed;
    r.timed = c.timed;
    r.hidden = c.hidden;
    r.reproduce = grade_command + " --submission " + submission + " --exercise " + exercise.name + " --case " + c.label;
    if (c.hidden) r.reproduce += "  # with this grading's --rubric and secret (a hidden case)";
    return r;
}

namespace {

using harness::timing::call_times;
using harness::timing::median;

// The columns of a batch's row in TimingResult::batches.
const nlohmann::json batch_columns = {"counted",         "launched",        "window_ms",      "grader_ms",
                                      "generate_gpu_ms", "checksum_gpu_ms", "host_link_bytes"};

nlohmann::json batch_rows(const std::vector<harness::timing::Window>& windows)
{
    auto round4 = [](double v) { return std::round(v * 1e4) / 1e4; };
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& w : windows)
        rows.push_back({w.warmup ? 0 : 1, w.launched ? 1 : 0, round4(w.window_ms), round4(w.grader_ms),
                        round4(w.generate_gpu_ms), round4(w.checksum_gpu_ms),
                        w.host_link_bytes ? nlohmann::json(*w.host_link_bytes) : nlohmann::json(nullptr)});
    return rows;
}

// Bytes over the host link per launcher call in the counted, launched batches, and the grader's
// milliseconds around them per call; bytes nullopt where one of them was not counted, or there are none.
struct LinkPerCall {
    std::optional<double> bytes;
    double ms = 0;
};
LinkPerCall link_per_call(const std::vector<harness::timing::Window>& windows, int reps)
{
    double bytes = 0, ms = 0;
    int calls = 0;
    for (const auto& w : windows) {
        if (w.warmup || !w.launched) continue;
        if (!w.host_link_bytes) return {};
        bytes += static_cast<double>(*w.host_link_bytes);
        ms += w.grader_ms;
        calls += reps;
    }
    if (calls == 0) return {};
    return {bytes / calls, ms / calls};
}

// The machine's traffic over the idle windows beside the submission's slow batches, per call of
// the batch each matched; nullopt where there are none or one was not counted.
std::optional<double> idle_per_call(const std::vector<harness::timing::Window>& idle, int reps)
{
    if (idle.empty() || reps <= 0) return std::nullopt;
    double bytes = 0;
    for (const auto& w : idle) {
        if (!w.host_link_bytes) return std::nullopt;
        bytes += static_cast<double>(*w.host_link_bytes);
    }
    return bytes / (static_cast<double>(idle.size()) * reps);
}

// The time of a speed case from its batches (harness/timing/timing_model.hpp).
TimingResult time_case(const harness::Exercise& exercise, const harness::Case& c, const harness::CaseInputs& inputs,
                       const harness::timing::CaseTiming& timing)
{
    TimingResult t;
    t.cpu_ms = harness::cpu_baseline_ms(exercise, c, inputs);
    t.stopping_rule = timing.plan.rule.describe();
    t.reps_per_batch = timing.spec.shape.reps;
    t.warmup_batches = timing.plan.warmup_batches;
    t.alone_seconds = timing.alone.seconds;
    const int reps = timing.spec.shape.reps;
    const double bytes = static_cast<double>(harness::minimum_bytes(exercise, c));
    const std::vector<double> alone_calls = call_times(timing.alone.windows, timing.fixed_cost_ms, reps);
    t.reference_alone_ms = median(alone_calls);
    if (!timing.failure.empty() || timing.turns.empty()) {
        t.note = !timing.withheld.empty() ? timing.withheld + " (" + timing.failure + "): the case was not timed"
                 : timing.failure.empty()  ? "no timing"
                                           : timing.failure + ": the case was not timed";
        return t;
    }
    const harness::timing::PairedTiming& turns = harness::timing::counted_turns(timing);
    const double fixed = harness::timing::lower_fixed_cost_ms(timing.fixed_cost_ms, turns);
    t.fixed_cost_ms = fixed;
    t.batches = {{"columns", batch_columns},
                 {"alone", batch_rows(timing.alone.windows)},
                 {"student", batch_rows(turns.student)},
                 {"reference", batch_rows(turns.reference)},
                 {"reference_empty", batch_rows(turns.reference_empty)},
                 {"alone_after", batch_rows(timing.alone_after.windows)}};
    std::vector<std::string> notes;
    t.student_samples_ms = call_times(turns.student, fixed, reps);
    t.student = harness::timing::summarize(t.student_samples_ms);
    t.student_ms = t.student.median;
    std::vector<double> windows;
    for (const auto& w : turns.student)
        if (!w.warmup) windows.push_back(w.window_ms);
    t.student_window_ms = median(windows);
    t.rounds = turns.rounds;
    t.capped = turns.capped;
    const LinkPerCall student_link = link_per_call(turns.student, reps);
    t.student_link_bytes_per_call = student_link.bytes;
    t.student_link_ms_per_call = student_link.ms;
    if (turns.reference_failure.empty()) {
        const LinkPerCall reference_link = link_per_call(turns.reference, reps);
        t.reference_link_bytes_per_call = reference_link.bytes;
        t.reference_link_ms_per_call = reference_link.ms;
    }
    t.idle_link_bytes_per_call = idle_per_call(turns.idle, reps);
    t.turns = static_cast<int>(timing.turns.size());
    for (const auto& run : timing.turns) t.batch_seconds += run.seconds;
    t.other_processes = timing.other_processes;
    if (t.turns > 1) notes.push_back("timed twice: other processes used the GPU during the first timing");
    if (!t.other_processes.empty())
        notes.push_back("other processes used the GPU during both timings (" + t.other_processes +
                        "): the times may be slower than on a quiet GPU");
    if (t.capped)
        notes.push_back("a cap ended the timing before the medians were known to " +
                        harness::format_value(100 * timing.plan.rule.target_rse) + "% (student " +
                        harness::format_value(100 * t.student.median_rse) + "%)");
    if (t.student_ms <= 0)
        notes.push_back("the batches took no longer than the grader's own work around them (the fixed cost): no "
                        "honest kernel is that fast, and no speed points are given");
    t.bandwidth_gb_s = t.student_ms > 0 ? bytes / (t.student_ms * 1e6) : 0;
    t.speedup_vs_cpu = t.student_ms > 0 ? t.cpu_ms / t.student_ms : 0;

    const bool paired = !turns.reference.empty() && turns.reference_failure.empty();
    t.reference_samples_ms = paired ? call_times(turns.reference, fixed, reps) : alone_calls;
    t.reference = harness::timing::summarize(t.reference_samples_ms);
    t.reference_ms = t.reference.median;
    if (t.reference_ms <= 0) {
        notes.push_back("no reference timing in this run" +
                        (timing.alone_failure.empty() ? std::string() : " (" + timing.alone_failure + ")"));
    } else {
        if (!paired)
            notes.push_back("the reference could not be timed beside the submission (" + turns.reference_failure +
                            "); its time alone counts");
        if (paired && timing.alone.capped)
            notes.push_back("the reference's timing alone was disturbed (it hit its caps before its median was "
                            "known), so its turns beside the submission were not held to it");
        else if (paired) {
            const auto counted = harness::timing::counted_reference(timing, t.reference_ms, t.reference_alone_ms);
            t.reference_ms = counted.ms;
            t.reference_after_ms = counted.after_ms;
            if (!counted.note.empty()) notes.push_back(counted.note);
        }
        t.reference_bandwidth_gb_s = bytes / (t.reference_ms * 1e6);
        t.speedup_vs_reference = t.student_ms > 0 ? t.reference_ms / t.student_ms : 0;
    }
    for (const auto& note : notes) t.note += (t.note.empty() ? "" : "; ") + note;
    return t;
}

}  // namespace

// The verdict on one settled case: the check of its output, or what stopped it.
void judge(const harness::Exercise& exercise, const harness::Case& c, CaseRun& run, CaseResult& r)
{
    r.seconds = run.seconds;
    r.gpu_wait_seconds = run.gpu_wait_seconds;
    r.gpu_exclusive_seconds = run.gpu_exclusive_seconds;
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
            const auto* timing = std::any_cast<harness::timing::CaseTiming>(&run.timing);
            if (timing == nullptr) {
                r.timing = TimingResult{};
                r.timing->note = run.timing_incomplete ? "the timing did not finish within the case's time limit"
                                                       : "no timing";
                return;
            }
            int verified = 0;
            if (const auto wrong = first_wrong_repetition(exercise, c, *timing, verified)) {
                r.status = CaseStatus::wrong;
                r.summary = "a timed call computed a wrong output";
                r.findings = {"call " + std::to_string(wrong->rep + 1) + " of a timed batch ran on inputs drawn from seed " +
                              harness::hex64(wrong->seed) +
                              " and its output was wrong when the grader read it: every call must compute its whole "
                              "output from the input it is given, and be done when the launcher returns; results "
                              "kept from an earlier call, work done on some calls only, or work still running when "
                              "the launcher returns fail here (a race can too)"};
                r.detail["wrong_repetition"] = {{"call", wrong->rep + 1}, {"seed", harness::hex64(wrong->seed)}};
                return;
            }
            r.timing = time_case(exercise, c, inputs, *timing);
            r.timing->verified_reps = verified;
            if (!timing->withheld.empty()) {
                r.timing_withheld = timing->withheld;
                r.findings.push_back(timing->withheld + ": the case was not timed, and nothing showed that its "
                                                        "calls compute on the GPU");
            }
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
