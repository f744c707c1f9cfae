#include "grading/grader.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

#include "grader_config.hpp"
#include "harness/baseline.hpp"
#include "harness/cases.hpp"
#include "harness/check.hpp"
#include "harness/data.hpp"
#include "harness/poison.hpp"
#include "harness/exercise.hpp"

namespace fs = std::filesystem;

namespace grading {
namespace {

using harness::CaseRun;

std::string utc_now()
{
    const std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return text;
}

std::string read_text(const std::string& path)
{
    std::ifstream file(path, std::ios::binary);
    std::stringstream s;
    s << file.rdbuf();
    return s.str();
}

// A timing message holds the event times of every repetition, then (from runners that measure
// it) the host-clock times of the same repetitions.
struct TimingSamples {
    std::vector<double> event_ms, host_ms;
};

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
        const std::size_t element = harness::element_bytes(harness::element_type(exercise.family));
        const std::uint64_t verified_checksum =
            harness::checksum64(raw.out_with_guards.data() + harness::guard_elements * element,
                                expected.value.size() * element);
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

std::string progress_line(const CaseResult& r, std::size_t position, std::size_t total)
{
    std::ostringstream line;
    const int width = static_cast<int>(std::to_string(total).size());
    line << "  [" << std::setw(width) << position << "/" << total << "] " << std::left << std::setw(22) << r.label
         << std::setw(11) << r.status << std::right << std::fixed << std::setprecision(2) << std::setw(7) << r.seconds
         << " s";
    if (r.timing && r.timing->student_ms > 0) {
        line << std::setprecision(3) << "   " << r.timing->student_ms << " ms";
        if (r.timing->reference_ms > 0)
            line << " vs reference " << r.timing->reference_ms << " ms (" << std::setprecision(2)
                 << r.timing->speedup_vs_reference << "x)";
        line << ", " << std::setprecision(0) << r.timing->bandwidth_gb_s << " GB/s";
    } else if (r.status != "pass") {
        line << "   " << r.summary;
        // The first few findings, so a student sees what went wrong without opening the JSON.
        for (std::size_t k = 0; k < r.findings.size() && k < 4; ++k) line << "\n" << std::string(12, ' ') << r.findings[k];
        line << "\n" << std::string(12, ' ') << "rerun: " << r.reproduce;
    }
    return line.str();
}

std::vector<harness::Case> cases_to_grade(const harness::Exercise& exercise, const GradeOptions& options)
{
    std::vector<harness::Case> cases = harness::cases_for(exercise);
    if (options.case_label.empty()) return cases;
    const harness::Case* only = harness::find_case(cases, options.case_label);
    return only ? std::vector<harness::Case>{*only} : std::vector<harness::Case>{};
}

harness::RunRequest make_request(const harness::Exercise& exercise, const std::vector<harness::Case>& cases,
                                 const std::string& runner, bool timed_only, const GradeOptions& options,
                                 const std::string& log)
{
    harness::RunRequest request;
    request.runner = runner;
    request.exercise = exercise.name;
    request.working_dir = (fs::path(options.work_dir) / exercise.name).string();   // nothing to overwrite there
    request.log_prefix = (fs::path(request.working_dir) / log).string();
    for (const auto& c : cases)
        if (!timed_only || c.timed) request.cases.push_back({c.index, c.n, c.timed});
    return request;
}

// The reference's timings of an exercise's speed cases, on this GPU, before any submitted code
// has run (nothing a submission leaves behind can slow the reference down).
std::map<int, TimingSamples> time_reference(const GradeOptions& options, const harness::Exercise& exercise)
{
    std::map<int, TimingSamples> samples;
    if (options.reference_runner.empty()) return samples;
    const auto request = make_request(exercise, cases_to_grade(exercise, options), options.reference_runner, true,
                                      options, "reference");
    if (!request.cases.empty())
        harness::run_exercise(request, options.limits, [&](CaseRun&& run) {
            if (run.timing) samples[run.index] = samples_of(*run.timing);
        });
    return samples;
}

ExerciseResult grade_exercise(const GradeOptions& options, const harness::Exercise& exercise,
                              const SubmissionFile& file, const BuildResult* build,
                              const std::map<int, TimingSamples>& reference_samples, GradeReport& report,
                              std::ostream& progress)
{
    ExerciseResult result;
    result.name = exercise.name;
    result.source = file.path;
    const auto started = std::chrono::steady_clock::now();
    if (file.path.empty()) {
        result.status = "not_submitted";
        result.message = "no " + exercise.name + ".cu in the submission";
    } else if (!file.duplicates.empty()) {
        result.status = "invalid_submission";
        result.message = "more than one file named " + exercise.name + ".cu; the name must be unique";
    } else if (file.symlink) {
        result.status = "invalid_submission";
        result.message = exercise.name + ".cu is a symbolic link; submit the file itself";
    } else if (!build->ok) {
        result.status = "compile_error";
        result.message = build->failure;
        result.compile_output = build->output;
        result.compile_seconds = build->seconds;
    }
    progress << exercise.name;
    if (!result.message.empty()) {
        progress << ": " << result.status << " (" << result.message << ")\n" << std::flush;
        score_exercise(options.rubric, result);
        return result;
    }
    result.compile_output = build->output;
    result.compile_seconds = build->seconds;
    result.library_use = detect_library_use(read_text(file.path));
    for (const auto& name : detect_library_symbols(read_text(build->executable)))
        if (std::find(result.library_use.begin(), result.library_use.end(), name) == result.library_use.end())
            result.library_use.push_back(name);

    const std::vector<harness::Case> cases = cases_to_grade(exercise, options);
    progress << " (" << cases.size() << " case" << (cases.size() == 1 ? "" : "s") << ")\n" << std::flush;
    const auto request = make_request(exercise, cases, build->executable, false, options, "runner");
    std::size_t position = 0;
    const harness::ExerciseRun run = harness::run_exercise(request, options.limits, [&](CaseRun&& case_run) {
        const harness::Case& c = *std::find_if(cases.begin(), cases.end(),
                                               [&](const harness::Case& k) { return k.index == case_run.index; });
        CaseResult r = describe_case(exercise, c, options.submission);
        try {
            judge(exercise, c, case_run, reference_samples, r);
        } catch (const std::exception& e) {   // data the runner never sends: forged or corrupted
            r.status = "protocol_error";
            r.summary = std::string("the runner's data for this case could not be read: ") + e.what();
            r.findings = {"submitted code must not write to the grader's file descriptors"};
            r.timing.reset();
        }
        progress << progress_line(r, ++position, cases.size()) << "\n" << std::flush;
        result.cases.push_back(std::move(r));
    });
    // No honest kernel moves its minimum bytes faster than the DRAM's peak.
    const double peak_gb_s = run.hello.is_object() ? run.hello.value("peak_gb_s", 0.0) : 0.0;
    for (auto& c : result.cases) {
        if (!c.timing || peak_gb_s <= 0 || c.timing->bandwidth_gb_s <= 1.1 * peak_gb_s) continue;
        c.timing->note = "the measured time implies " + std::to_string(static_cast<long>(c.timing->bandwidth_gb_s)) +
                         " GB/s, beyond the GPU's peak of " + std::to_string(static_cast<long>(peak_gb_s)) +
                         " GB/s: the timing cannot be right and earns no speed points";
        c.findings.push_back(c.timing->note);
        c.timing->speedup_vs_reference = 0;
    }
    if (report.device.empty() && run.hello.is_object()) {
        report.device = run.hello.value("device", std::string());
        report.compute_capability = run.hello.value("cc", std::string());
    }
    for (int k = 1; k <= run.processes; ++k) {
        const std::string tail = harness::read_file_tail(request.log_prefix + "-" + std::to_string(k) + ".log", 4096);
        if (!tail.empty()) result.runner_output += tail;
    }
    if (result.runner_output.size() > 8192) result.runner_output = result.runner_output.substr(result.runner_output.size() - 8192);

    if (!run.launcher_found) {
        result.status = "missing_launcher";
        result.message = "the file defines no `" + exercise.signature + "`: check the name and the exact signature";
        result.cases.clear();
        progress << "  " << result.message << "\n";
    } else if (!run.startup_failure.empty() && result.cases.empty()) {
        result.status = "runner_failed";
        result.message = run.startup_failure;
    } else {
        result.status = "graded";
        if (!run.startup_failure.empty()) result.message = run.startup_failure;
    }
    if (!result.library_use.empty())
        result.message = "calls " + result.library_use.front() + " to do the exercise's work (CONTRACT.md)";
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    score_exercise(options.rubric, result);
    return result;
}

}  // namespace

GradeReport grade(const GradeOptions& options, std::ostream& progress)
{
    const auto started = std::chrono::steady_clock::now();
    GradeReport report;
    report.grader_version = GRADER_VERSION;
    report.started_at = utc_now();
    report.submission = options.submission;
    fs::create_directories(options.work_dir);

    const auto files = find_submission(options.submission, options.exercises);
    std::vector<std::pair<std::string, std::string>> work;
    std::vector<int> build_of(files.size(), -1);
    for (std::size_t k = 0; k < files.size(); ++k) {
        if (files[k].path.empty() || !files[k].duplicates.empty() || files[k].symlink) continue;
        fs::create_directories(fs::path(options.work_dir) / files[k].exercise);
        build_of[k] = static_cast<int>(work.size());
        work.emplace_back(fs::absolute(files[k].path).string(),
                          (fs::absolute(options.work_dir) / files[k].exercise / "runner").string());
    }
    progress << "grade: " << options.submission << ": compiling " << work.size() << " file(s) with "
             << options.toolchain.nvcc << " for sm_" << options.toolchain.arch << " ...\n" << std::flush;
    const auto builds = build_runners(options.toolchain, work, options.compile_jobs);
    for (std::size_t k = 0; k < files.size(); ++k)
        if (build_of[k] >= 0)
            progress << "  " << std::left << std::setw(36) << files[k].exercise
                     << (builds[static_cast<std::size_t>(build_of[k])].ok ? "compiled" : "FAILED to compile") << " in "
                     << std::fixed << std::setprecision(1) << builds[static_cast<std::size_t>(build_of[k])].seconds
                     << " s\n";

    // Orphans a submission leaves behind (setsid, double fork) are re-parented here and killed.
    harness::become_subreaper();
    std::map<std::string, std::map<int, TimingSamples>> reference_timings;
    if (!options.reference_runner.empty()) {
        progress << "timing the reference solutions ...\n" << std::flush;
        for (std::size_t k = 0; k < files.size(); ++k)
            if (build_of[k] >= 0 && builds[static_cast<std::size_t>(build_of[k])].ok)
                reference_timings[files[k].exercise] = time_reference(options, *harness::find_exercise(files[k].exercise));
    }
    for (std::size_t k = 0; k < files.size(); ++k) {
        const harness::Exercise* exercise = harness::find_exercise(files[k].exercise);
        const BuildResult* build = build_of[k] >= 0 ? &builds[static_cast<std::size_t>(build_of[k])] : nullptr;
        try {
            report.exercises.push_back(grade_exercise(options, *exercise, files[k], build,
                                                      reference_timings[exercise->name], report, progress));
        } catch (const std::exception& e) {   // a grader bug or an exhausted machine: report it, go on
            ExerciseResult failed;
            failed.name = exercise->name;
            failed.source = files[k].path;
            failed.status = "runner_failed";
            failed.message = std::string("the grader could not finish this exercise: ") + e.what();
            score_exercise(options.rubric, failed);
            progress << "  " << failed.message << "\n";
            report.exercises.push_back(failed);
        }
        report.points += report.exercises.back().points;
        report.max_points += report.exercises.back().max_points;
    }
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

}  // namespace grading
