#include "grading/grader.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <exception>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <sstream>
#include <thread>

#include "grader_config.hpp"
#include "grading/console.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "harness/text.hpp"
#include "harness/timing/speed_case.hpp"
#include "judge.hpp"
#include "progress.hpp"
#include "sanitizer/run.hpp"

namespace fs = std::filesystem;

namespace grading {
namespace {

using detail::describe_case;
using detail::judge;
using harness::CaseRun;

// Limits on a sandboxed runner: generous for any honest kernel of the course, small enough that a
// fork bomb, a flood of output or a runaway allocation stays inside its own exercise.
harness::ProcessLimits runner_limits()
{
    harness::ProcessLimits limits;
    limits.max_processes = 512;  // threads count too (the CUDA runtime starts a few)
    limits.max_open_files = 1024;
    limits.cpu_seconds = 900;
    limits.max_data_bytes = 32ull << 30;  // the largest case needs a few GiB on the host
    return limits;
}

// The environment of submitted code: only what the grader chose.
std::vector<std::string> sandbox_environment()
{
    std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=/tmp", "LC_ALL=C"};
    if (const char* libraries = std::getenv("LD_LIBRARY_PATH"))
        env.push_back(std::string("LD_LIBRARY_PATH=") + libraries);
    return env;
}

std::string utc_now()
{
    const std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return text;
}

// The exercise's cases as the rubric grades them: hidden ones on seeds from the secret
// (grading/hidden_cases.hpp).
std::vector<harness::Case> cases_to_grade(const harness::Exercise& exercise, const GradeOptions& options)
{
    std::vector<harness::Case> cases =
        graded_cases(exercise, options.rubric, options.hidden_secret ? &*options.hidden_secret : nullptr);
    if (options.case_label.empty()) return cases;
    const harness::Case* only = harness::find_case(cases, options.case_label);
    return only ? std::vector<harness::Case>{*only} : std::vector<harness::Case>{};
}

// How a runner process of an exercise starts: `program` (the submission's runner, or the reference
// runner for the reference's turns) in the sandbox (unless --no-sandbox), its output in
// <work>/<exercise>/<log>.log.
// A sanitizer run (sanitizer/run.hpp) starts it as `wrapper` (compute-sanitizer and its options)
// followed by the runner, in a sandbox that also shows `shown_dir` (the sanitizer's own directory).
harness::SpawnOptions runner_spawn(const GradeOptions& options, const harness::Exercise& exercise,
                                   const std::string& program, const std::string& log,
                                   const std::vector<std::string>& wrapper = {}, const std::string& shown_dir = {})
{
    const fs::path dir = fs::absolute(fs::path(options.work_dir) / exercise.name);
    harness::SpawnOptions spawn;
    spawn.output_file = (dir / (log + ".log")).string();
    spawn.argv = wrapper;
    if (options.sandbox == nullptr) {
        spawn.argv.push_back(program);
        spawn.working_dir = dir.string();
        return spawn;
    }
    spawn.argv.push_back("/grader/runner");
    harness::SandboxPolicy policy;
    if (!shown_dir.empty()) {
        policy.system_paths_extra = {shown_dir};
        policy.shm_bytes = 256ull << 20;  // compute-sanitizer may talk to the runner through shared memory
    }
    policy.gpu = true;
    policy.gpu_node = options.gpu_node;  // the GPU this grading locked and times on, alone
    policy.mounts = {{program, "/grader/runner", false}};
    policy.env = sandbox_environment();
    policy.limits = runner_limits();
    return options.sandbox->wrap(spawn, policy);
}

harness::RunRequest make_request(const harness::Exercise& exercise, const std::vector<harness::Case>& cases,
                                 const std::string& runner, const GradeOptions& options)
{
    harness::RunRequest request;
    request.exercise = exercise.name;
    request.spawn = [&options, &exercise, runner](int k) {
        return runner_spawn(options, exercise, runner, "runner-" + std::to_string(k));
    };
    // Visible cases first, then the hidden ones, which the supervisor gives runners of their own.
    for (const bool hidden : {false, true})
        for (const auto& c : cases)
            if (c.hidden == hidden) request.cases.push_back({c.index, c.n, c.timed, harness::case_spec(c), c.hidden});
    request.gpu_lock = options.gpu_lock;
    return request;
}

// How many exercises one GPU runs at once, over every grading on it: one per 6 GiB of its memory,
// 13 on an 80 GB H100 (measured there: a runner's context takes 0.5 GiB, a reference runner
// between its timings 1-1.5 GiB, the largest untimed case 3 GiB, a speed case's four sets of
// buffers 2.5-5 GiB on each side, and only one exercise at a time is timed); 0 where the memory is
// unknown (no limit).
int exercise_places(const nlohmann::json& calibration)
{
    const double bytes = calibration.value("memory_bytes", 0.0);
    if (bytes <= 0) return 0;
    return std::clamp(static_cast<int>(bytes / (6.0 * (1 << 30))), 1, 24);
}

// The sanitizer step (grading/sanitizer.hpp): the exercise's small and medium cases again under
// each of the rubric's tools.
SanitizerStep sanitize_exercise(const GradeOptions& options, const harness::Exercise& exercise,
                                const std::string& runner, std::ostream& progress)
{
    SanitizerRequest request;
    request.exercise = &exercise;
    request.cases = cases_to_grade(exercise, options);
    request.tools = options.rubric.sanitizer.tools;
    request.program = find_compute_sanitizer(options.compute_sanitizer, toolchain_root(options.toolchain.nvcc),
                                             options.sandbox != nullptr);
    request.spawn = [&options, &exercise, runner](const std::vector<std::string>& wrapper, const std::string& shown,
                                                   const std::string& log) {
        return runner_spawn(options, exercise, runner, log, wrapper, shown);
    };
    request.log_path = [&options, &exercise](const std::string& log) {
        return (fs::absolute(fs::path(options.work_dir) / exercise.name) / (log + ".log")).string();
    };
    request.limits = options.limits;
    request.gpu_lock = options.gpu_lock;
    request.submission = options.submission;
    request.grade_command = options.grade_command;
    progress << "  under compute-sanitizer:\n";
    return run_sanitizers(request, progress);
}

// One exercise's speed-case timing: the reference's runner (in the sandbox like the submission's)
// and the timer that holds its times alone.
struct ExerciseTiming {
    harness::timing::ReferenceWorker reference;
    harness::timing::SpeedCaseTimer timer;
    ExerciseTiming(const GradeOptions& options, const harness::Exercise& exercise,
                   harness::timing::TimingServer& server)
        : reference([&options, &exercise] { return runner_spawn(options, exercise, options.reference_runner, "reference"); },
                    exercise.name, options.limits.startup_limit, options.limits.case_limit + options.limits.timing_extra),
          timer(server, &reference, options.gpu_lock, options.gpu_intruders, options.timing)
    {
    }
};

// What the checks of code the student did not write found (docs/security.md), as results.json
// records it; whether the file's PTX matches the reference's is decided here, with the rubric's
// threshold, and priced by score_exercise.
void record_code_checks(const Rubric& rubric, const BuildResult& build, ExerciseResult& result)
{
    const ReferenceComparison& r = build.reference;
    result.fingerprint = build.fingerprint ? to_json(*build.fingerprint) : nlohmann::json(nullptr);
    result.matches_reference = r.compared && r.decisive && r.overlap >= rubric.reference_match_threshold;
    // Made valid UTF-8 here too: a path of the machine's in a note is no text the writer may trust.
    nlohmann::json findings = nlohmann::json::array(), not_checked = nlohmann::json::array();
    for (const auto& f : build.code_findings) findings.push_back(harness::valid_text(f));
    for (const auto& n : build.not_checked) not_checked.push_back(harness::valid_text(n));
    if (result.matches_reference)
        findings.push_back("matches the reference's compiled code: its PTX has " +
                           std::to_string(static_cast<int>(r.overlap * 100 + 0.5)) + "% of the hidden reference's " +
                           std::to_string(ptx_run_length) + "-instruction runs (honest files: a few per cent)");
    result.code_checks = {{"mode", rubric.code_checks},
                          {"findings", findings},
                          {"not_checked", not_checked},
                          {"reference",
                           {{"compared", r.compared},
                            {"overlap", r.overlap},
                            {"reference_runs", r.reference_runs},
                            {"shared_runs", r.shared_runs},
                            {"decisive", r.decisive},
                            {"threshold", rubric.reference_match_threshold},
                            {"matches", result.matches_reference},
                            {"note", !r.compared && r.note.empty() ? std::string("not compared: the build stopped before")
                                                                    : harness::valid_text(r.note)}}}};
}

// The exercise's message for what the checks found in a file that was graded.
void describe_code_checks(const Rubric& rubric, const BuildResult& build, ExerciseResult& result)
{
    if (!result.message.empty()) return;
    if (result.matches_reference) {
        result.message = "its compiled code matches the hidden reference's (" +
                         std::to_string(static_cast<int>(build.reference.overlap * 100 + 0.5)) +
                         "% of the reference's instruction runs): " +
                         (rubric.reference_match_costs_all ? "no points until course staff review it"
                                                           : "for course staff to review");
    } else if (!build.code_findings.empty()) {
        result.message = "for course staff to review: " + build.code_findings.front() +
                         (build.code_findings.size() > 1
                              ? " (and " + std::to_string(build.code_findings.size() - 1) + " more in code_checks)"
                              : "");
    }
}

// A build that failed because it could not start a process (fork, vfork or clone: "Resource
// temporarily unavailable"), not because of the file.
bool build_starved(const BuildResult& build)
{
    return !build.ok && build.invalid.empty() && build.output.find("Resource temporarily unavailable") != std::string::npos;
}

std::string library_use_message(const ExerciseResult& result)
{
    return "calls " + result.library_use.front() + " to do the exercise's work (docs/CONTRACT.md)";
}

// What the compiled code shows of the exercise's technique, as results.json records it, with the
// rubric's requirement.
void record_technique(const Rubric& rubric, const BuildResult& build, ExerciseResult& result)
{
    result.technique = build.technique;
    result.technique->require_all = rubric.technique == "require";
}

// A required technique the file lacks costs its points (score_exercise): the message says which,
// first, in the student's words.
void describe_technique(const Rubric& rubric, ExerciseResult& result)
{
    if (!result.technique) return;
    const auto missing = result.technique->missing_required(rubric.technique == "require");
    if (missing.empty()) return;
    std::string text = "no points: " + missing_sentence(missing.front());
    if (missing.size() > 1)
        text += " (and " + std::to_string(missing.size() - 1) + " more: technique lists them)";
    result.message = result.message.empty() ? text : text + "; " + result.message;
}

ExerciseResult grade_exercise(const GradeOptions& options, harness::timing::SpeedCaseTimer* timer,
                              const harness::Exercise& exercise, const SubmissionFile& file, const BuildResult* build,
                              const nlohmann::json& calibration, std::ostream& progress)
{
    ExerciseResult result;
    result.name = exercise.name;
    result.source = harness::valid_text(file.path);
    const auto started = std::chrono::steady_clock::now();
    // The file's refusal was decided when it was found (find_submission); grade() built only the rest.
    if (file.path.empty()) {
        result.status = ExerciseStatus::not_submitted;
        result.message = "no " + exercise.name + ".cu in the submission";
        if (!file.near_miss.empty()) result.message += "; " + file.near_miss;
        if (!file.unread.empty()) result.message += " (not read: " + file.unread + ")";
    } else if (!file.buildable()) {
        result.status = ExerciseStatus::invalid_submission;
        result.message = file.refusal;
    } else if (!build->invalid.empty()) {
        result.status = ExerciseStatus::invalid_submission;
        result.message = build->invalid;
        result.compile_output = build->output;
        result.compile_seconds = build->seconds;
        record_code_checks(options.rubric, *build, result);
    } else if (!build->ok) {
        result.status = ExerciseStatus::compile_error;
        result.message = build->failure;
        result.compile_output = build->output;
        result.compile_seconds = build->seconds;
    }
    progress << exercise.name;
    if (!result.message.empty()) {
        std::ostringstream status;
        status << result.status;
        progress << ": " << paint(status.str(), tone_of(result), options.colour) << " ("
                 << harness::printable_text(result.message) << ")\n"
                 << std::flush;
        score_exercise(options.rubric, result);
        return result;
    }
    result.compile_output = build->output;
    result.compile_seconds = build->seconds;
    result.library_use = build->library_use;
    record_code_checks(options.rubric, *build, result);
    record_technique(options.rubric, *build, result);
    if (options.build_only) {
        result.status = ExerciseStatus::built;
        if (!result.library_use.empty()) result.message = library_use_message(result);
        describe_technique(options.rubric, result);
        describe_code_checks(options.rubric, *build, result);
        if (result.message.empty()) result.message = "it builds and passes the build checks; no case was run (--build-only)";
        progress << ": " << paint(to_text(result.status), tone_of(result), options.colour) << " ("
                 << harness::printable_text(result.message) << ")\n"
                 << std::flush;
        score_exercise(options.rubric, result);
        return result;
    }

    // A place on the GPU first (gradings side by side share them), before any runner starts: the
    // wait for it is no time of the submission's.
    harness::GpuLock::Hold place;
    if (const int places = exercise_places(calibration); options.gpu_lock != nullptr && places > 0)
        place = options.gpu_lock->exercise_place(places);
    const std::vector<harness::Case> cases = cases_to_grade(exercise, options);
    progress << " (" << cases.size() << " case" << (cases.size() == 1 ? "" : "s") << ")\n" << std::flush;
    // Speed cases are timed in turns with the reference (harness/timing/speed_case.hpp); the
    // reference alone was timed before any runner of the submission started (grade()).
    auto request = make_request(exercise, cases, build->executable, options);
    bool timing_failed = false;  // the grader's timing server failed (out of GPU memory beside others, say)
    if (timer)
        request.time_case = [&](const harness::RunCase& run_case, harness::TimedWorker& worker,
                                std::chrono::steady_clock::duration& waited) -> std::any {
            const harness::Case& c = *std::find_if(cases.begin(), cases.end(),
                                                   [&](const harness::Case& k) { return k.index == run_case.index; });
            harness::timing::CaseTiming timing = timer->time_in_turns(exercise, c, worker, waited);
            timing_failed = timing_failed || !timing.failure.empty();
            return timing;
        };
    // Each settled case is judged on a thread of its own while the GPU runs the next one: the
    // grader's checking overlaps the runner and counts against none of its time limits. Cases are
    // reported in order; at most `checks_in_flight` wait at once (each holds its inputs).
    constexpr std::size_t checks_in_flight = 3;
    detail::CaseProgress case_progress(progress, cases.size(), options.colour);
    std::deque<std::future<CaseResult>> checks;
    auto report_oldest = [&] {
        CaseResult r = checks.front().get();
        checks.pop_front();
        detail::bound_by_copy_bandwidth(calibration.value("copy_gb_s", 0.0), r);
        case_progress.add(r);
        result.cases.push_back(std::move(r));
    };
    const harness::ExerciseRun run = harness::run_exercise(request, options.limits, [&](CaseRun&& case_run) {
        const harness::Case& c = *std::find_if(cases.begin(), cases.end(),
                                               [&](const harness::Case& k) { return k.index == case_run.index; });
        if (checks.size() >= checks_in_flight) report_oldest();
        checks.push_back(std::async(std::launch::async, [&exercise, &options, &c,
                                                         case_run = std::move(case_run)]() mutable {
            CaseResult r = describe_case(exercise, c, options.submission, options.grade_command);
            const auto check_started = std::chrono::steady_clock::now();
            try {
                judge(exercise, c, case_run, r);
            } catch (const std::exception& e) {  // data the runner never sends: forged or corrupted
                r.status = CaseStatus::protocol_error;
                r.summary = std::string("the runner's data for this case could not be read: ") + e.what();
                r.findings = {"submitted code must not write to the grader's file descriptors"};
                r.timing.reset();
            }
            r.check_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - check_started).count();
            return r;
        }));
        while (!checks.empty() && checks.front().wait_for(std::chrono::seconds(0)) == std::future_status::ready)
            report_oldest();
    });
    while (!checks.empty()) report_oldest();
    case_progress.finish();
    const fs::path dir = fs::absolute(fs::path(options.work_dir) / exercise.name);
    // What runners that ran hidden cases printed is kept apart: students never see it.
    for (int k = 1; k <= run.processes; ++k) {
        const std::string tail =
            harness::read_file_tail((dir / ("runner-" + std::to_string(k) + ".log")).string(), 4096);
        const bool hidden = static_cast<std::size_t>(k) <= run.hidden_processes.size() && run.hidden_processes[k - 1];
        (hidden ? result.hidden_runner_output : result.runner_output) += tail;
    }
    for (std::string* output : {&result.runner_output, &result.hidden_runner_output}) {
        if (output->size() > 8192) *output = output->substr(output->size() - 8192);
        *output = harness::valid_text(*output);  // the submission's bytes
    }
    std::stable_sort(result.cases.begin(), result.cases.end(),
                     [](const CaseResult& a, const CaseResult& b) { return a.index < b.index; });

    // What went wrong beside other exercises (a runner that could not start, ended before its
    // hello or could not use the GPU, a case that found the GPU's memory used up, a reference runner
    // that failed, as when another exercise's runner took the GPU's memory or the process limit) is
    // tried once more with the GPU and the machine to itself. A submission that runs out of memory
    // or exits at its start by itself does so again. (A reference runner that failed leaves the
    // submission timed against the reference's time alone.)
    result.grade_again_alone = (run.machine_failure || run.gpu_memory_ran_out || run.ended_before_hello ||
                                timing_failed) &&
                               options.parallel_exercises > 1;
    if (timer)
        for (auto& r : result.cases)
            if (r.timing) r.gpu_exclusive_seconds += timer->alone_seconds(r.index);
    if (!run.launcher_found) {
        result.status = ExerciseStatus::missing_launcher;
        result.message = "the file defines no `" + exercise.signature + "`: check the name and the exact signature";
        result.cases.clear();
        progress << "  " << result.message << "\n";
    } else if (!run.startup_failure.empty() && result.cases.empty()) {
        result.status = ExerciseStatus::runner_failed;
        result.message = run.startup_failure;
    } else {
        result.status = ExerciseStatus::graded;
        if (!run.startup_failure.empty()) result.message = run.startup_failure;
    }
    if (!result.library_use.empty()) result.message = library_use_message(result);
    if (result.status == ExerciseStatus::graded) describe_technique(options.rubric, result);
    if (result.status == ExerciseStatus::graded) describe_code_checks(options.rubric, *build, result);
    if (result.status == ExerciseStatus::graded && (options.sanitize || options.rubric.sanitizer.run)) {
        SanitizerStep step = sanitize_exercise(options, exercise, build->executable, progress);
        result.sanitizer = std::move(step.json);
        result.sanitizer_tools_with_findings = std::move(step.tools_with_findings);
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    score_exercise(options.rubric, result);
    return result;
}

// The clocks at the end, and whether anything held them down then: a GPU that slowed for power or
// heat during the grading timed the later exercises on a slower clock (their ratios to the
// reference, timed in turns, still hold).
void record_clocks_at_end(const nlohmann::json& clocks, GradeReport& report, std::ostream& progress)
{
    report.calibration["clocks_end"] = clocks;
    nlohmann::json throttled = nlohmann::json::array();
    for (const auto& reason : clocks.value("clocks_held_by", nlohmann::json::array()))
        if (reason != "gpu_idle" && reason != "applications_clocks_setting" && reason != "display_clock_setting")
            throttled.push_back(reason);
    report.calibration["throttled"] = throttled;
    if (!throttled.empty())
        progress << "grade: the GPU's clocks were held down at the end: " << throttled.dump() << "\n";
}

}  // namespace

std::vector<std::size_t> grading_order(const std::vector<SubmissionFile>& files, const GradeOptions& options)
{
    std::vector<std::int64_t> elements(files.size(), 0);
    for (std::size_t k = 0; k < files.size(); ++k)
        if (const harness::Exercise* exercise = harness::find_exercise(files[k].exercise))
            for (const auto& c : cases_to_grade(*exercise, options)) elements[k] += c.n;
    std::vector<std::size_t> order(files.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return elements[a] > elements[b]; });
    return order;
}

GradeReport grade(const GradeOptions& options, std::ostream& progress)
{
    const auto started = std::chrono::steady_clock::now();
    GradeReport report;
    report.grader_version = GRADER_VERSION;
    report.started_at = utc_now();
    report.submission = options.submission;
    report.sandbox = options.sandbox ? options.sandbox->describe() : "none (--no-sandbox)";
    if (options.sandbox) {
        const harness::SandboxLimits limits = options.sandbox->limits();
        report.sandbox_limits["enforced"] = limits.enforced;
        for (const auto& [name, why] : limits.not_enforced) report.sandbox_limits["not_enforced"][name] = why;
    } else {
        report.sandbox_limits["not_enforced"]["sandbox"] = "none (--no-sandbox): submitted code runs as the grader";
    }
    fs::create_directories(options.work_dir);
    // Hidden cases never fall back to public seeds: the command line refuses a rubric with hidden
    // cases and no secret before this; this is the last line of defence.
    if (declares_hidden_cases(options.rubric, options.exercises) && !options.hidden_secret)
        throw std::runtime_error("the rubric hides cases, and no secret was given for their seeds");
    for (const auto& name : options.exercises)
        if (const harness::Exercise* exercise = harness::find_exercise(name))
            for (const auto& c : cases_to_grade(*exercise, options)) report.hidden_cases.count += c.hidden;
    if (report.hidden_cases.count > 0) report.hidden_cases.secret_id = options.hidden_secret->id();

    const auto files = find_submission(options.submission, options.exercises);
    // The longest exercises are built and graded first, so that the last to finish is not one that
    // started late.
    const std::vector<std::size_t> order = grading_order(files, options);
    std::vector<std::pair<std::string, std::string>> work;
    std::vector<int> build_of(files.size(), -1);
    for (const std::size_t k : order) {
        if (!files[k].buildable()) continue;
        fs::create_directories(fs::path(options.work_dir) / files[k].exercise);
        build_of[k] = static_cast<int>(work.size());
        work.emplace_back(fs::absolute(files[k].path).string(),
                          (fs::absolute(options.work_dir) / files[k].exercise / "runner").string());
    }
    progress << "grade: " << options.submission << ": compiling " << work.size() << " file(s) with "
             << options.toolchain.nvcc << " for sm_" << options.toolchain.arch << " ...\n"
             << std::flush;

    // The files build in the background; each exercise starts as soon as its own runner is built.
    std::vector<BuildResult> builds(work.size());
    std::vector<bool> built(work.size(), false);
    std::mutex building;
    std::condition_variable one_built;
    std::exception_ptr toolchain_failure;  // the grader's own: rethrown once the exercises are done
    // What the checks of code the student did not write refuse, refused or named (the rubric).
    Toolchain toolchain = options.toolchain;
    toolchain.refuse_foreign_code = options.rubric.code_checks != "name";
    std::thread builder([&] {
        try {
            build_runners(toolchain, work, options.compile_jobs, options.sandbox,
                          [&](std::size_t w, const BuildResult& build) {
                              std::lock_guard<std::mutex> lock(building);
                              builds[w] = build;
                              built[w] = true;
                              one_built.notify_all();
                          });
        } catch (const std::exception& e) {
            std::lock_guard<std::mutex> lock(building);
            toolchain_failure = std::current_exception();
            for (std::size_t w = 0; w < work.size(); ++w)
                if (!built[w]) {
                    builds[w].failure = std::string("the grader could not build any file: ") + e.what();
                    built[w] = true;
                }
            one_built.notify_all();
        }
    });
    struct JoinOnExit {
        std::thread& thread;
        ~JoinOnExit()
        {
            if (thread.joinable()) thread.join();
        }
    } join_builder{builder};
    auto build_for = [&](std::size_t k) -> const BuildResult* {
        if (build_of[k] < 0) return nullptr;
        const auto w = static_cast<std::size_t>(build_of[k]);
        std::unique_lock<std::mutex> lock(building);
        one_built.wait(lock, [&] { return static_cast<bool>(built[w]); });
        return &builds[w];
    };

    // The grader's timing server (the reference runner, outside the sandbox), one for the grading: it
    // measures the GPU while the files compile (its identity, and the copy bandwidth that bounds
    // every plausible timing), then owns every speed case's batches.
    std::optional<harness::timing::TimingServer> timing_server;
    if (!options.reference_runner.empty() && !work.empty()) {
        harness::SpawnOptions spawn;
        spawn.argv = {options.reference_runner};
        spawn.output_file = (fs::absolute(options.work_dir) / "timing-server.log").string();
        timing_server.emplace(spawn, options.limits.startup_limit);
        try {
            report.calibration = timing_server->calibrate();
        } catch (const harness::timing::TimingServerFailure& e) {
            progress << "grade: " << e.what() << "; speed cases are not timed\n";
            timing_server.reset();
        }
        report.device = report.calibration.value("device", std::string());
        report.compute_capability = report.calibration.value("cc", std::string());
    }
    if (options.gpu_clocks) report.calibration["clocks_start"] = options.gpu_clocks();

    // Every speed case's reference alone (its time, and the batches' fixed cost) before any runner of
    // the submission exists, while the files compile: no process of the submission can slow it down
    // (docs/measurement.md). The exercises' reference runners stay for their turns.
    std::vector<std::unique_ptr<ExerciseTiming>> timings(files.size());
    if (timing_server) {
        progress << "grade: timing the references alone on the speed cases ...\n" << std::flush;
        for (const std::size_t k : order) {
            if (build_of[k] < 0) continue;
            const harness::Exercise& exercise = *harness::find_exercise(files[k].exercise);
            const std::vector<harness::Case> cases = cases_to_grade(exercise, options);
            if (std::none_of(cases.begin(), cases.end(), [](const harness::Case& c) { return c.timed; })) continue;
            timings[k] = std::make_unique<ExerciseTiming>(options, exercise, *timing_server);
            for (const auto& c : cases)
                if (c.timed) timings[k]->timer.time_alone(exercise, c);
        }
        // A timing alone that the busy machine kept from its stopping rule is taken again where the
        // files are all built by then (no waiting for them: exercises start as their own file is
        // built), still before any runner of the submission exists. One still disturbed is no
        // anchor for the turns (judge.cpp).
        std::vector<std::pair<std::size_t, harness::Case>> disturbed;
        for (const std::size_t k : order) {
            if (!timings[k]) continue;
            for (const auto& c : cases_to_grade(*harness::find_exercise(files[k].exercise), options))
                if (c.timed && timings[k]->timer.alone_disturbed(c.index)) disturbed.emplace_back(k, c);
        }
        const bool all_built = [&] {
            std::lock_guard<std::mutex> lock(building);
            return std::all_of(built.begin(), built.end(), [](bool b) { return b; });
        }();
        if (!disturbed.empty() && all_built) {
            progress << "grade: " << disturbed.size() << " reference timing(s) alone were disturbed; timing them again\n"
                     << std::flush;
            for (const auto& [k, c] : disturbed)
                timings[k]->timer.time_alone(*harness::find_exercise(files[k].exercise), c);
        }
    }
    auto timer_of = [&](std::size_t k) { return timings[k] ? &timings[k]->timer : nullptr; };

    // Orphans a submission leaves behind (setsid, double fork) are re-parented here and killed.
    harness::become_subreaper();
    // Exercises are graded side by side: their correctness phases share the GPU, their speed
    // cases take it in turn (the GPU lock), and each prints its lines whole, in order.
    const std::size_t workers =
        std::max<std::size_t>(1, std::min<std::size_t>(options.parallel_exercises, files.size()));
    std::vector<ExerciseResult> results(files.size());
    std::vector<std::ostringstream> lines(files.size());
    std::vector<bool> finished(files.size(), false);
    std::mutex finishing;
    std::condition_variable one_finished;
    std::atomic<std::size_t> next{0};
    auto since_start = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    };
    auto grade_one = [&](std::size_t k, std::ostream& out) {
        const harness::Exercise* exercise = harness::find_exercise(files[k].exercise);
        const BuildResult* build = build_for(k);
        if (build) out << detail::build_line(files[k].exercise, *build, options.colour) << "\n";
        const double began = since_start();
        try {
            results[k] = grade_exercise(options, timer_of(k), *exercise, files[k], build, report.calibration, out);
        } catch (const std::exception& e) {  // a grader bug or an exhausted machine: report it, go on
            ExerciseResult failed;
            failed.name = exercise->name;
            failed.source = harness::valid_text(files[k].path);
            failed.status = ExerciseStatus::runner_failed;
            failed.message = std::string("the grader could not finish this exercise: ") + e.what();
            score_exercise(options.rubric, failed);
            out << "  " << harness::printable_text(failed.message) << "\n";  // may name a submission's file
            results[k] = failed;
        }
        results[k].started_seconds = began;
        // The runner, its object and its logs (already in the report) go: nothing a submission
        // left behind stays on the grading machine.
        std::error_code ignored;
        if (!options.keep_work && !results[k].grade_again_alone)
            fs::remove_all(fs::path(options.work_dir) / exercise->name, ignored);
    };
    if (workers == 1) {
        for (std::size_t k = 0; k < files.size(); ++k) grade_one(k, progress);
    } else {
        std::vector<std::thread> threads;
        for (std::size_t w = 0; w < workers; ++w)
            threads.emplace_back([&] {
                for (std::size_t i; (i = next++) < order.size();) {
                    const std::size_t k = order[i];
                    grade_one(k, lines[k]);
                    std::lock_guard<std::mutex> lock(finishing);
                    finished[k] = true;
                    one_finished.notify_all();
                }
            });
        for (std::size_t k = 0; k < files.size(); ++k) {
            std::unique_lock<std::mutex> lock(finishing);
            one_finished.wait(lock, [&] { return static_cast<bool>(finished[k]); });
            progress << lines[k].str() << std::flush;
        }
        for (auto& thread : threads) thread.join();
    }
    builder.join();
    if (toolchain_failure) std::rethrow_exception(toolchain_failure);
    // A file whose build could not start its processes beside the other exercises' runners (where no
    // control group bounds each sandbox, every sandbox of the machine shares one process limit, and
    // another file's runner may have filled it: docs/security.md) is built again now that they are
    // gone, and graded again alone. A file that says so of itself in an #error is only built twice.
    std::vector<bool> rebuilt(files.size(), false);
    for (std::size_t k = 0; k < files.size(); ++k) {
        const BuildResult* build = build_for(k);
        if (build == nullptr || !build_starved(*build)) continue;
        progress << files[k].exercise << ": its build could not start its processes beside the other exercises' "
                 << "runners; building it again, alone\n" << std::flush;
        const auto w = static_cast<std::size_t>(build_of[k]);
        try {
            build_runners(toolchain, {work[w]}, 1, options.sandbox,
                          [&](std::size_t, const BuildResult& again) { builds[w] = again; });
        } catch (const std::exception& e) {
            progress << "  the grader could not build it again: " << harness::printable_text(e.what()) << "\n";
            continue;
        }
        rebuilt[k] = true;
    }
    // An exercise whose runner or reference runner could not start or use the GPU beside the others
    // is graded again on its own, after them: whatever another exercise's submission left on the
    // GPU or the machine (memory taken, processes forked) is gone by then.
    {
        GradeOptions alone = options;
        alone.parallel_exercises = 1;
        for (std::size_t k = 0; k < files.size(); ++k) {
            if (!rebuilt[k] && !(workers > 1 && results[k].grade_again_alone)) continue;
            if (!rebuilt[k])
                progress << files[k].exercise << ": a runner could not start or use the GPU (or its memory) beside "
                         << "the other exercises; grading it again, alone\n";
            const harness::Exercise* exercise = harness::find_exercise(files[k].exercise);
            try {
                const double began = since_start();
                results[k] = grade_exercise(alone, timer_of(k), *exercise, files[k], build_for(k), report.calibration,
                                            progress);
                results[k].started_seconds = began;
            } catch (const std::exception& e) {
                progress << "  the grader could not grade it again: " << harness::printable_text(e.what()) << "\n";
            }
            std::error_code ignored;
            if (!options.keep_work) fs::remove_all(fs::path(options.work_dir) / exercise->name, ignored);
        }
    }
    for (auto& result : results) {
        report.points += result.points;
        report.max_points += result.max_points;
        report.exercises.push_back(std::move(result));
    }
    if (options.gpu_clocks) record_clocks_at_end(options.gpu_clocks(), report, progress);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

}  // namespace grading
