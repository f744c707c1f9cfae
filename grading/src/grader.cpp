#include "grading/grader.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <future>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "grader_config.hpp"
#include "formats/text.hpp"
#include "grading/console.hpp"
#include "harness/baseline.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "harness/parallel.hpp"
#include "harness/text.hpp"
#include "harness/timing/speed_case.hpp"
#include "judge.hpp"
#include "progress.hpp"
#include "sanitizer/run.hpp"

namespace fs = std::filesystem;

namespace grading {

// What was asked is plain data: a class grader may copy it for each student.
static_assert(std::is_copy_constructible_v<GradeRequest> && std::is_copy_assignable_v<GradeRequest>);

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

// The exercise's cases as the rubric grades them: hidden ones on seeds from the secret
// (grading/hidden_cases.hpp).
std::vector<harness::Case> cases_to_grade(const harness::Exercise& exercise, const GradeRequest& request)
{
    std::vector<harness::Case> cases =
        graded_cases(exercise, request.rubric, request.hidden_secret ? &*request.hidden_secret : nullptr);
    if (request.case_label.empty()) return cases;
    const harness::Case* only = harness::find_case(cases, request.case_label);
    return only ? std::vector<harness::Case>{*only} : std::vector<harness::Case>{};
}

// How a runner process of an exercise starts: `program` (the submission's runner, or the reference
// runner for the reference's turns) in the sandbox (unless --no-sandbox), its output in
// <work>/<exercise>/<log>.log.
// A sanitizer run (sanitizer/run.hpp) starts it as `wrapper` (compute-sanitizer and its options)
// followed by the runner, in a sandbox that also shows `shown_dir` (the sanitizer's own directory).
harness::SpawnOptions runner_spawn(const GradingEnvironment& environment, const harness::Exercise& exercise,
                                   const std::string& program, const std::string& log,
                                   const std::vector<std::string>& wrapper = {}, const std::string& shown_dir = {})
{
    const fs::path dir = fs::absolute(fs::path(environment.work_dir) / exercise.name);
    harness::SpawnOptions spawn;
    spawn.output_file = (dir / (log + ".log")).string();
    spawn.argv = wrapper;
    if (environment.sandbox == nullptr) {
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
    policy.gpu_node = environment.gpu_node;  // the GPU this grading locked and times on, alone
    policy.mounts = {{program, "/grader/runner", false}};
    policy.env = sandbox_environment();
    policy.limits = runner_limits();
    return environment.sandbox->wrap(spawn, policy);
}

harness::RunRequest make_request(const harness::Exercise& exercise, const std::vector<harness::Case>& cases,
                                 const std::string& runner, const GradingEnvironment& environment,
                                 const std::string& log_prefix)
{
    harness::RunRequest request;
    request.exercise = exercise.name;
    request.spawn = [&environment, &exercise, runner, log_prefix](int k) {
        return runner_spawn(environment, exercise, runner, log_prefix + std::to_string(k));
    };
    // Visible cases first, then the hidden ones, which the supervisor gives runners of their own.
    for (const bool hidden : {false, true})
        for (const auto& c : cases)
            if (c.hidden == hidden) request.cases.push_back({c.index, c.n, c.timed, harness::case_spec(exercise, c), c.hidden});
    request.gpu_lock = environment.gpu_lock;
    return request;
}

// How many exercises one GPU runs at once, over every grading on it: one per 3.5 GiB of its memory,
// 22 on an 80 GB H100, so that the two gradings `grade class` runs at once on a GPU never wait for a
// place. Measured there: a runner's context takes 0.5 GiB, a reference runner between its timings
// 1-1.5 GiB, the largest untimed case 3 GiB for a moment, a speed case's four sets of buffers 2.5-5
// GiB on each side (one exercise at a time is timed); a class of 8 reference copies two at once used
// 31.5 GB at most with 26 places (53.7 GB four at once with 52) and took 120 s, 140 s with one
// place per 6 GiB (13), where exercises waited for places while other gradings timed; 134 s with
// these 22 on another machine, 33.1 GB (session 16).
// A grading that runs out of memory beside others has the exercise graded again alone. 0 where the
// memory is unknown (no limit).
int exercise_places(const nlohmann::json& calibration)
{
    const double bytes = calibration.value("memory_bytes", 0.0);
    if (bytes <= 0) return 0;
    return std::clamp(static_cast<int>(bytes / (3.5 * (1 << 30))), 1, harness::GpuLock::most_places);
}

// The sanitizer step (grading/sanitizer.hpp): the exercise's small and medium cases again under
// each of the rubric's tools.
SanitizerStep sanitize_exercise(const GradeRequest& asked, const GradingEnvironment& environment,
                                const harness::Exercise& exercise, const std::string& runner, std::ostream& progress)
{
    SanitizerRequest request;
    request.exercise = &exercise;
    request.cases = cases_to_grade(exercise, asked);
    request.tools = asked.rubric.sanitizer.tools;
    request.program = find_compute_sanitizer(environment.compute_sanitizer, toolchain_root(environment.toolchain.nvcc),
                                             environment.sandbox != nullptr);
    request.spawn = [&environment, &exercise, runner](const std::vector<std::string>& wrapper, const std::string& shown,
                                                      const std::string& log) {
        return runner_spawn(environment, exercise, runner, log, wrapper, shown);
    };
    request.log_path = [&environment, &exercise](const std::string& log) {
        return (fs::absolute(fs::path(environment.work_dir) / exercise.name) / (log + ".log")).string();
    };
    request.limits = asked.limits;
    request.gpu_lock = environment.gpu_lock;
    request.submission = asked.submission;
    request.grade_command = asked.grade_command;
    progress << "  under compute-sanitizer:\n";
    return run_sanitizers(request, progress);
}

// Where the timing server failed beside the submission's runner: that runner's doing when it held
// far more of the GPU's memory than the case needs (red team 14, hogs_gpu_memory_to_skip_timing:
// the runner takes nearly all of it, so the speed case passes its checked run and is never timed,
// and computes_on_gpu is never shown). An honest runner holds its context (about 0.5 GiB), the
// case's buffers with guard zones and its scratch (under three times the case's minimum bytes) and
// whatever temporaries its launcher allocates: 2 GiB and four times the minimum bytes are allowed.
harness::timing::SubmissionBlame memory_blame(const GradingEnvironment& environment, const harness::Exercise& exercise)
{
    if (!environment.gpu_memory_below) return {};
    return [&environment, &exercise](int runner, const harness::Case& c) -> std::string {
        const std::optional<std::uint64_t> held = environment.gpu_memory_below(runner);
        const double allowed = 2.0 * (1 << 30) + 4.0 * static_cast<double>(harness::minimum_bytes(exercise, c));
        if (!held || static_cast<double>(*held) <= allowed) return {};
        // A hidden case's size is not told, nor the memory held: what the runner takes is its choice,
        // a channel for what it read (the technique's evidence, in a student's view, quotes this).
        if (c.hidden)
            return "the submission's runner held far more of the GPU's memory than this case needs, so the grader "
                   "could not allocate the timed calls' buffers";
        auto gib = [](double bytes) { return formats::fixed(bytes / (1 << 30), 1) + " GiB"; };
        return "the submission's runner held " + gib(static_cast<double>(*held)) +
               " of the GPU's memory (this case needs at most about " + gib(allowed) +
               "), so the grader could not allocate the timed calls' buffers";
    };
}

// One exercise's speed-case timing: the reference's runner (in the sandbox like the submission's)
// and the timer that holds its times alone.
struct ExerciseTiming {
    harness::timing::ReferenceWorker reference;
    harness::timing::SpeedCaseTimer timer;
    ExerciseTiming(const GradeRequest& request, const GradingEnvironment& environment,
                   const harness::Exercise& exercise, harness::timing::TimingServer& server)
        : reference(
              [&environment, &exercise] {
                  return runner_spawn(environment, exercise, environment.reference_runner, "reference");
              },
              exercise.name, request.limits.startup_limit, request.limits.case_limit + request.limits.timing_extra),
          timer(server, &reference, environment.gpu_lock, environment.gpu_intruders, request.timing,
                environment.gpu_host_link, memory_blame(environment, exercise)),
          link_timer(server, &reference, environment.gpu_lock, environment.gpu_intruders, link_plan(),
                     environment.gpu_host_link, memory_blame(environment, exercise))
    {
    }
    // Two calls a side, one round, no warm-up (the case ran in the runner just before): what the
    // calls move, not how fast they are.
    static harness::timing::TimingPlan link_plan()
    {
        harness::timing::TimingPlan plan;
        plan.reps_per_batch = 2;
        plan.warmup_batches = 0;
        plan.rule.target_rse = 1e9;
        plan.rule.min_batches = 1;
        plan.rule.max_batches = 1;
        return plan;
    }
    harness::timing::SpeedCaseTimer link_timer;  // check_host_link_again's
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

// A case's record of traffic over the host link (grading/technique.hpp), named as a student's report
// names it: a hidden case by neither size nor seed, and its evidence tells no number
// (HostLinkTraffic::hidden).
HostLinkTraffic traffic_of(const std::string& label, bool hidden, std::int64_t data_bytes)
{
    HostLinkTraffic traffic;
    traffic.case_label = hidden ? std::string("a hidden case") : label;
    traffic.hidden = hidden;
    traffic.data_bytes = static_cast<double>(data_bytes);
    return traffic;
}

// A timed case's traffic, as its timing counted it.
HostLinkTraffic timed_traffic(HostLinkTraffic traffic, const TimingResult& t)
{
    traffic.student_per_call = t.student_link_bytes_per_call;
    traffic.reference_per_call = t.reference_link_bytes_per_call;
    traffic.student_ms_per_call = t.student_link_ms_per_call;
    traffic.reference_ms_per_call = t.reference_link_ms_per_call;
    traffic.idle_per_call = t.idle_link_bytes_per_call;
    return traffic;
}

// A case whose traffic the submission kept from being counted, and why.
HostLinkTraffic withheld_traffic(HostLinkTraffic traffic, const std::string& why)
{
    traffic.withheld = why;
    return traffic;
}

// What the timed cases' launcher calls moved over the GPU's PCIe link decides computes_on_gpu
// (grading/technique.hpp); a case not timed leaves it not checked.
void record_timed_host_link(const harness::Exercise& exercise, const std::vector<harness::Case>& cases,
                            ExerciseResult& result)
{
    if (!result.technique) return;
    std::vector<HostLinkTraffic> timed;
    for (const auto& r : result.cases) {
        const harness::Case* c = harness::find_case(cases, r.index);
        if (c == nullptr) continue;
        const HostLinkTraffic traffic = traffic_of(r.label, r.hidden, harness::minimum_bytes(exercise, *c));
        if (!r.timing_withheld.empty()) {
            timed.push_back(withheld_traffic(traffic, r.timing_withheld));
            continue;
        }
        // A case whose timing did not happen (its note says why) has no turns to read.
        if (!r.timing || r.timing->student_samples_ms.empty()) continue;
        timed.push_back(timed_traffic(traffic, *r.timing));
    }
    record_host_link(*result.technique, timed);
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

// One exercise of a grading, as grade_exercise sees it.
struct ExerciseGrading {
    const GradeRequest& request;
    const GradingEnvironment& environment;
    const harness::Exercise& exercise;
    const SubmissionFile& file;
    const BuildResult* build;                // nullptr: not built (no file, or a refused one)
    harness::timing::SpeedCaseTimer* timer;  // nullptr: no speed case is timed
    const nlohmann::json& calibration;       // the timing server's measurement of the GPU
    bool beside_others;                      // other exercises are graded at the same time
    // The short timing of a case run again for computes_on_gpu (check_host_link_again); nullptr: none.
    harness::timing::SpeedCaseTimer* link_timer = nullptr;
    bool holds_every_place = false;  // the grading holds every place of the GPU (grade_again_alone)
};

// The case's result as its check finds it (on a thread of the checks' map, while the GPU runs the
// next case).
CaseResult check_case(const ExerciseGrading& g, const harness::Case& c, CaseRun& case_run)
{
    CaseResult r = describe_case(g.exercise, c, g.request.submission, g.request.grade_command);
    const auto check_started = std::chrono::steady_clock::now();
    try {
        judge(g.exercise, c, case_run, r);
    } catch (const std::exception& e) {  // data the runner never sends: forged or corrupted
        r.status = CaseStatus::protocol_error;
        r.summary = std::string("the runner's data for this case could not be read: ") + e.what();
        r.findings = {"submitted code must not write to the grader's file descriptors"};
        r.timing.reset();
    }
    r.check_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - check_started).count();
    return r;
}

// The exercise's cases run under the supervisor, each settled case checked while the GPU runs the
// next, into result.cases (in case order); what the runs found.
harness::ExerciseRun run_and_check_cases(const ExerciseGrading& g, const std::vector<harness::Case>& cases,
                                         ExerciseResult& result, bool& timing_failed, std::ostream& progress,
                                         const std::string& log_prefix = "runner-")
{
    // Speed cases are timed in turns with the reference (harness/timing/speed_case.hpp); the
    // reference alone was timed before any runner of the submission started (GradingRun).
    auto request = make_request(g.exercise, cases, g.build->executable, g.environment, log_prefix);
    auto case_of = [&cases](int index) -> const harness::Case& { return *harness::find_case(cases, index); };
    if (g.timer)
        request.time_case = [&](const harness::RunCase& run_case, harness::TimedWorker& worker,
                                std::chrono::steady_clock::duration& waited) -> std::any {
            harness::timing::CaseTiming timing =
                g.timer->time_in_turns(g.exercise, case_of(run_case.index), worker, waited);
            // The grader's failure, to try again alone; not one the submission caused.
            timing_failed = timing_failed || (!timing.failure.empty() && timing.withheld.empty());
            return timing;
        };
    // Each settled case is checked on a thread of the checks' map while the GPU runs the next one:
    // the grader's checking overlaps the runner and counts against none of its time limits. Cases
    // are reported in order; at most `checks_in_flight` wait at once (each holds its inputs).
    constexpr std::size_t checks_in_flight = 3;
    detail::CaseProgress case_progress(progress, cases.size(), g.request.colour);
    harness::OrderedParallelMap<CaseResult> checks(checks_in_flight);
    auto report_oldest = [&] {
        CaseResult r = checks.pop();
        detail::bound_by_copy_bandwidth(g.calibration.value("copy_gb_s", 0.0), r);
        case_progress.add(r);
        result.cases.push_back(std::move(r));
    };
    const harness::ExerciseRun run = harness::run_exercise(request, g.request.limits, [&](CaseRun&& case_run) {
        const harness::Case& c = case_of(case_run.index);
        if (checks.size() >= checks_in_flight) report_oldest();
        checks.push([&g, &c, case_run = std::move(case_run)]() mutable { return check_case(g, c, case_run); });
        while (checks.oldest_ready()) report_oldest();
    });
    while (!checks.empty()) report_oldest();
    case_progress.finish();
    std::stable_sort(result.cases.begin(), result.cases.end(),
                     [](const CaseResult& a, const CaseResult& b) { return a.index < b.index; });
    return run;
}

// computes_on_gpu where the speed case's timing showed nothing of the submission's traffic (its
// checked run failed, a timed call was wrong, its timing did not finish or its runner ended in it):
// the largest case that passed (hidden ones too), with at least 1 MB to move, is run once more by a
// fresh runner and timed in turns with the reference, two calls a side (ExerciseTiming::link_timer:
// an honest launcher whose checked run and its repeat fitted the case's limit fits them), and its
// calls' traffic decides. A launcher that computes on the host and keeps the speed case from being
// timed (red teams 14 and 15) is found here, or must fail every case this large too
// (docs/security.md). The submission's run that does not pass and finish its timing again withholds
// the evidence: computes_on_gpu false. The grader's own failures leave it not checked.
void check_host_link_again(const ExerciseGrading& g, const std::vector<harness::Case>& cases, ExerciseResult& result,
                           std::ostream& progress)
{
    constexpr std::int64_t smallest_bytes = 1'000'000;  // the reference's calls move some 0.05 MB: 15% of 1 MB tells
    if (g.link_timer == nullptr || !g.environment.gpu_host_link || !result.technique || result.grade_again_alone)
        return;
    const auto check = std::find_if(result.technique->checks.begin(), result.technique->checks.end(),
                                    [](const TechniqueCheck& c) { return c.technique == harness::Technique::computes_on_gpu; });
    if (check == result.technique->checks.end() || check->found.has_value()) return;
    for (const auto& r : result.cases)
        if (r.timed && r.timing && !r.timing->student_samples_ms.empty()) return;  // its turns were read
    const harness::Case* largest = nullptr;
    std::int64_t largest_bytes = 0;
    for (const auto& r : result.cases) {
        if (r.status != CaseStatus::pass || r.timed) continue;
        const harness::Case* c = harness::find_case(cases, r.index);
        if (c == nullptr) continue;
        const std::int64_t bytes = harness::minimum_bytes(g.exercise, *c);
        if (bytes >= smallest_bytes && bytes > largest_bytes) largest = c, largest_bytes = bytes;
    }
    if (largest == nullptr) return;
    harness::Case again = *largest;
    again.timed = true;
    HostLinkTraffic traffic = traffic_of(again.label, again.hidden, largest_bytes);
    progress << "  " << traffic.case_label << " once more, timed in turns with the reference, for computes_on_gpu\n";
    traffic.case_label += " (run again for this check)";
    g.link_timer->time_alone(g.exercise, again);
    ExerciseGrading probe = g;
    probe.timer = g.link_timer;
    ExerciseResult checked;
    bool timing_failed = false;
    const harness::ExerciseRun run = run_and_check_cases(probe, {again}, checked, timing_failed, progress, "link-runner-");
    // What went wrong beside other exercises (a runner that could not start or use the GPU, memory
    // that ran out, the timing server's failure: another exercise's runner, a neighbour's or the
    // submission's own, may hold what it needed, red team 15) has the exercise graded again alone,
    // as for the exercise's own cases (grade_exercise). Alone, the timing server's failure is the
    // grader's and decides nothing; the runner's are its own run's outcome and withhold the
    // evidence, as the cases it did not start cost their points (review 15: a runner that knows it
    // is this check's could otherwise fail its start and leave the check not decided).
    if ((run.machine_failure || run.gpu_memory_ran_out || run.ended_before_hello || timing_failed) &&
        g.beside_others) {
        result.grade_again_alone = true;
        return;
    }
    if (timing_failed) return;
    if (checked.cases.empty() || run.machine_failure || run.ended_before_hello) {
        const std::string why = !run.startup_failure.empty() && !again.hidden
                                    ? run.startup_failure
                                    : std::string("its runner did not start");
        record_host_link(*result.technique,
                         {withheld_traffic(traffic, "it passed this case in its checked run, and for this check " + why)});
        return;
    }
    const CaseResult& r = checked.cases.front();
    HostLinkTraffic seen;
    if (!r.timing_withheld.empty()) {
        seen = withheld_traffic(traffic, r.timing_withheld);
    } else if (r.status == CaseStatus::pass && r.timing && !r.timing->student_samples_ms.empty()) {
        seen = timed_traffic(traffic, *r.timing);
    } else if (r.status == CaseStatus::pass) {
        seen = withheld_traffic(traffic, "it passed, and its timed calls did not finish within the case's time limit, "
                                         "so nothing showed that they compute on the GPU");
    } else if (r.status != CaseStatus::not_run) {
        seen = withheld_traffic(traffic, "it passed this case in its checked run, and when it ran again for this "
                                         "check: " + (again.hidden ? to_text(r.status) : r.summary));
    } else {
        return;
    }
    record_host_link(*result.technique, {seen});
}

// What the runners printed, the last 8 KiB of each kind; what runners that ran hidden cases printed
// is kept apart: students never see it.
void record_runner_output(const ExerciseGrading& g, const harness::ExerciseRun& run, ExerciseResult& result)
{
    const fs::path dir = fs::absolute(fs::path(g.environment.work_dir) / g.exercise.name);
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
}

ExerciseResult grade_exercise(const ExerciseGrading& g, std::ostream& progress)
{
    const GradeRequest& asked = g.request;
    const harness::Exercise& exercise = g.exercise;
    const SubmissionFile& file = g.file;
    const BuildResult* build = g.build;
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
        record_code_checks(asked.rubric, *build, result);
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
        progress << ": " << paint(status.str(), tone_of(result), asked.colour) << " ("
                 << harness::printable_text(result.message) << ")\n"
                 << std::flush;
        score_exercise(asked.rubric, result);
        return result;
    }
    result.compile_output = build->output;
    result.compile_seconds = build->seconds;
    result.library_use = build->library_use;
    record_code_checks(asked.rubric, *build, result);
    record_technique(asked.rubric, *build, result);
    if (asked.build_only) {
        result.status = ExerciseStatus::built;
        if (!result.library_use.empty()) result.message = library_use_message(result);
        describe_technique(asked.rubric, result);
        describe_code_checks(asked.rubric, *build, result);
        if (result.message.empty())
            result.message = "it builds and passes the build checks; no case was run (--build-only)";
        progress << ": " << paint(to_text(result.status), tone_of(result), asked.colour) << " ("
                 << harness::printable_text(result.message) << ")\n"
                 << std::flush;
        score_exercise(asked.rubric, result);
        return result;
    }

    // A place on the GPU first (gradings side by side share them), before any runner starts: the
    // wait for it is no time of the submission's.
    harness::GpuLock::Hold place;
    if (const int places = exercise_places(g.calibration);
        g.environment.gpu_lock != nullptr && places > 0 && !g.holds_every_place)
        place = g.environment.gpu_lock->exercise_place(places);
    result.gpu_place_wait_seconds = std::chrono::duration<double>(place.waited).count();
    const std::vector<harness::Case> cases = cases_to_grade(exercise, asked);
    progress << " (" << cases.size() << " case" << (cases.size() == 1 ? "" : "s") << ")\n" << std::flush;
    bool timing_failed = false;  // the grader's timing server failed (out of GPU memory beside others, say)
    const harness::ExerciseRun run = run_and_check_cases(g, cases, result, timing_failed, progress);
    record_runner_output(g, run, result);

    // What went wrong beside other exercises (a runner that could not start, ended before its
    // hello or could not use the GPU, a case that found the GPU's memory used up, a reference runner
    // that failed, as when another exercise's runner took the GPU's memory or the process limit) is
    // tried once more with the GPU and the machine to itself. A submission that runs out of memory
    // or exits at its start by itself does so again. (A reference runner that failed leaves the
    // submission timed against the reference's time alone.)
    result.grade_again_alone =
        (run.machine_failure || run.gpu_memory_ran_out || run.ended_before_hello || timing_failed) && g.beside_others;
    if (g.timer)
        for (auto& r : result.cases)
            if (r.timing) r.gpu_exclusive_seconds += g.timer->alone_seconds(r.index);
    record_timed_host_link(exercise, cases, result);
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
        check_host_link_again(g, cases, result, progress);
    }
    if (!result.library_use.empty()) result.message = library_use_message(result);
    if (result.status == ExerciseStatus::graded) describe_technique(asked.rubric, result);
    if (result.status == ExerciseStatus::graded) describe_code_checks(asked.rubric, *build, result);
    if (result.status == ExerciseStatus::graded && (asked.sanitize || asked.rubric.sanitizer.run)) {
        SanitizerStep step = sanitize_exercise(asked, g.environment, exercise, build->executable, progress);
        result.sanitizer = std::move(step.json);
        result.sanitizer_tools_with_findings = std::move(step.tools_with_findings);
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    score_exercise(asked.rubric, result);
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

// A ready future of `value`: a build that is already there.
template <typename T>
std::shared_future<T> ready(T value)
{
    std::promise<T> promise;
    promise.set_value(std::move(value));
    return promise.get_future().share();
}

// One grading of one submission, the steps of run() in their order. The files build in the
// background (a future per file) while the grader's timing server measures the GPU and times the
// references alone; the exercises are then graded side by side, each as soon as its own file is
// built, their speed cases taking the GPU in turns; what failed beside the others is done again
// alone at the end.
class GradingRun {
public:
    GradingRun(const GradeRequest& request, const GradingEnvironment& environment, std::ostream& progress)
        : request_(request), environment_(environment), progress_(progress)
    {
    }

    GradeReport run()
    {
        describe_the_grading();
        find_the_files();
        start_the_builds();
        start_the_timing_server();
        time_the_references_alone();
        grade_the_others_may_run_beside();
        wait_for_the_builds();
        build_starved_files_again();
        grade_again_alone();
        return total();
    }

private:
    const GradeRequest& request_;
    const GradingEnvironment& environment_;
    std::ostream& progress_;
    const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    GradeReport report_;

    std::vector<SubmissionFile> files_;
    std::vector<std::size_t> order_;  // grading_order of files_
    // The files to build, in order_: (source, runner); build_of_[k]: file k's place in it, -1: none.
    std::vector<std::pair<std::string, std::string>> work_;
    std::vector<int> build_of_;
    // What the checks of code the student did not write refuse, refused or named (the rubric).
    Toolchain toolchain_;
    std::vector<std::promise<BuildResult>> build_promises_;  // kept by the background builds
    std::vector<std::shared_future<BuildResult>> builds_;    // work_'s builds, each as it is done
    std::vector<bool> rebuilt_;                              // files built again alone

    std::optional<harness::timing::TimingServer> timing_server_;
    std::vector<std::unique_ptr<ExerciseTiming>> timings_;  // per file: its speed cases' timer, or none
    std::vector<ExerciseResult> results_;                   // per file

    // Last: the background builds end before anything they use goes (a grading that throws waits
    // for them here). Its one task rethrows the grader's own failure to build (wait_for_the_builds).
    harness::OrderedParallelMap<void> background_{1};

    double since_start() const
    {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    }
    const harness::Exercise& exercise_of(std::size_t k) const { return *harness::find_exercise(files_[k].exercise); }
    harness::timing::SpeedCaseTimer* timer_of(std::size_t k) const
    {
        return timings_[k] ? &timings_[k]->timer : nullptr;
    }
    harness::timing::SpeedCaseTimer* link_timer_of(std::size_t k) const
    {
        return timings_[k] ? &timings_[k]->link_timer : nullptr;
    }
    // File k's build once it is done; nullptr for a file that is not built.
    const BuildResult* build_for(std::size_t k) const
    {
        return build_of_[k] < 0 ? nullptr : &builds_[static_cast<std::size_t>(build_of_[k])].get();
    }
    bool all_built() const
    {
        return std::all_of(builds_.begin(), builds_.end(), [](const std::shared_future<BuildResult>& b) {
            return b.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        });
    }

    // The report's header: the grader, the submission, the sandbox and its limits, the hidden cases.
    void describe_the_grading()
    {
        report_.grader_version = GRADER_VERSION;
        report_.started_at = formats::utc_now();
        report_.submission = request_.submission;
        const harness::Sandbox* sandbox = environment_.sandbox;
        report_.sandbox = sandbox ? sandbox->describe() : "none (--no-sandbox)";
        if (sandbox) {
            const harness::SandboxLimits limits = sandbox->limits();
            report_.sandbox_limits["enforced"] = limits.enforced;
            for (const auto& [name, why] : limits.not_enforced) report_.sandbox_limits["not_enforced"][name] = why;
        } else {
            report_.sandbox_limits["not_enforced"]["sandbox"] =
                "none (--no-sandbox): submitted code runs as the grader";
        }
        fs::create_directories(environment_.work_dir);
        // Hidden cases never fall back to public seeds: the command line refuses a rubric with hidden
        // cases and no secret before this; this is the last line of defence.
        if (declares_hidden_cases(request_.rubric, request_.exercises) && !request_.hidden_secret)
            throw std::runtime_error("the rubric hides cases, and no secret was given for their seeds");
        for (const auto& name : request_.exercises)
            if (const harness::Exercise* exercise = harness::find_exercise(name))
                for (const auto& c : cases_to_grade(*exercise, request_)) report_.hidden_cases.count += c.hidden;
        if (report_.hidden_cases.count > 0) report_.hidden_cases.secret_id = request_.hidden_secret->id();
    }

    // The submission's files, and the order they are built and graded in: the longest exercises
    // first, so that the last to finish is not one that started late.
    void find_the_files()
    {
        files_ = find_submission(request_.submission, request_.exercises);
        order_ = grading_order(files_, request_);
        build_of_.assign(files_.size(), -1);
        for (const std::size_t k : order_) {
            if (!files_[k].buildable()) continue;
            fs::create_directories(fs::path(environment_.work_dir) / files_[k].exercise);
            build_of_[k] = static_cast<int>(work_.size());
            work_.emplace_back(fs::absolute(files_[k].path).string(),
                               (fs::absolute(environment_.work_dir) / files_[k].exercise / "runner").string());
        }
        timings_.resize(files_.size());
        results_.resize(files_.size());
        rebuilt_.assign(files_.size(), false);
    }

    // The files build in the background, `compile_jobs` at a time; each exercise waits only for its
    // own (build_for). A failure of the grader's own (its runner object unreadable) fails every build
    // not done, and is rethrown once the exercises are done.
    void start_the_builds()
    {
        progress_ << "grade: " << request_.submission << ": compiling " << work_.size() << " file(s) with "
                  << environment_.toolchain.nvcc << " for sm_" << environment_.toolchain.arch << " ...\n"
                  << std::flush;
        toolchain_ = environment_.toolchain;
        toolchain_.refuse_foreign_code = request_.rubric.code_checks != "name";
        build_promises_.resize(work_.size());
        for (auto& promise : build_promises_) builds_.push_back(promise.get_future().share());
        background_.push([this] {
            std::vector<char> delivered(work_.size(), 0);  // one byte each: set by several build threads
            try {
                build_runners(toolchain_, work_, request_.compile_jobs, environment_.sandbox,
                              [&](std::size_t w, const BuildResult& build) {
                                  delivered[w] = 1;
                                  build_promises_[w].set_value(build);
                              });
            } catch (const std::exception& e) {
                for (std::size_t w = 0; w < work_.size(); ++w)
                    if (!delivered[w]) {
                        BuildResult failed;
                        failed.failure = std::string("the grader could not build any file: ") + e.what();
                        build_promises_[w].set_value(failed);
                    }
                throw;
            }
        });
    }

    // The grader's timing server (the reference runner, outside the sandbox), one for the grading: it
    // measures the GPU while the files compile (its identity, and the copy bandwidth that bounds
    // every plausible timing), then owns every speed case's batches.
    void start_the_timing_server()
    {
        if (!environment_.reference_runner.empty() && !work_.empty()) {
            harness::SpawnOptions spawn;
            spawn.argv = {environment_.reference_runner};
            spawn.output_file = (fs::absolute(environment_.work_dir) / "timing-server.log").string();
            timing_server_.emplace(spawn, request_.limits.startup_limit);
            if (!calibrated()) timing_server_.reset();
            report_.device = report_.calibration.value("device", std::string());
            report_.compute_capability = report_.calibration.value("cc", std::string());
        }
        if (environment_.gpu_clocks) report_.calibration["clocks_start"] = environment_.gpu_clocks();
    }

    // The timing server's measurement of the GPU. One that fails (its buffers out of the GPU's memory,
    // which another grading's runner may hold: red team 16) is taken again once every exercise on
    // the GPU has ended (every place held: none of another grading starts meanwhile); a second
    // failure leaves the grading's speed cases untimed.
    bool calibrated()
    {
        try {
            report_.calibration = timing_server_->calibrate();
            return true;
        } catch (const harness::timing::TimingServerFailure& e) {
            if (environment_.gpu_lock == nullptr) {
                progress_ << "grade: " << e.what() << "; speed cases are not timed\n";
                return false;
            }
            progress_ << "grade: " << e.what() << "; measuring the GPU again once every exercise on it (other "
                      << "gradings' too) has ended\n"
                      << std::flush;
        }
        try {
            const auto every_place = environment_.gpu_lock->every_place(harness::GpuLock::most_places);
            report_.calibration = timing_server_->calibrate();
            return true;
        } catch (const std::exception& e) {
            progress_ << "grade: " << e.what() << "; speed cases are not timed\n";
            return false;
        }
    }

    // Every speed case's reference alone (its time, and the batches' fixed cost) before any runner of
    // the submission exists, while the files compile: no process of the submission can slow it down
    // (docs/measurement.md). The exercises' reference runners stay for their turns.
    void time_the_references_alone()
    {
        if (!timing_server_) return;
        progress_ << "grade: timing the references alone on the speed cases ...\n" << std::flush;
        std::vector<std::size_t> timed;
        for (const std::size_t k : order_) {
            if (build_of_[k] < 0) continue;
            const harness::Exercise& exercise = exercise_of(k);
            const std::vector<harness::Case> cases = cases_to_grade(exercise, request_);
            if (std::none_of(cases.begin(), cases.end(), [](const harness::Case& c) { return c.timed; })) continue;
            timings_[k] = std::make_unique<ExerciseTiming>(request_, environment_, exercise, *timing_server_);
            timed.push_back(k);
        }
        // The reference runners start side by side first, with the GPU shared (never during another
        // grading's timing): a start held the GPU to itself for half a second in each timing alone.
        // Started from this thread, which outlives them (each sandbox dies with its starter).
        if (!timed.empty()) {
            harness::GpuLock::Hold shared;
            if (environment_.gpu_lock != nullptr) shared = environment_.gpu_lock->hold(false);
            for (const std::size_t k : timed) timings_[k]->reference.spawn_early();
            for (const std::size_t k : timed) timings_[k]->reference.await_start();
        }
        for (const std::size_t k : timed)
            for (const auto& c : cases_to_grade(exercise_of(k), request_))
                if (c.timed) timings_[k]->timer.time_alone(exercise_of(k), c);
        // A timing alone that the busy machine kept from its stopping rule is taken again where the
        // files are all built by then (no waiting for them: exercises start as their own file is
        // built), still before any runner of the submission exists. One still disturbed is no
        // anchor for the turns (judge.cpp).
        std::vector<std::pair<std::size_t, harness::Case>> disturbed;
        for (const std::size_t k : order_) {
            if (!timings_[k]) continue;
            for (const auto& c : cases_to_grade(exercise_of(k), request_))
                if (c.timed && timings_[k]->timer.alone_disturbed(c.index)) disturbed.emplace_back(k, c);
        }
        if (disturbed.empty() || !all_built()) return;
        progress_ << "grade: " << disturbed.size() << " reference timing(s) alone were disturbed; timing them again\n"
                  << std::flush;
        for (const auto& [k, c] : disturbed) timings_[k]->timer.time_alone(exercise_of(k), c);
    }

    // Exercises are graded side by side, `parallel_exercises` at once in order_: their correctness
    // phases share the GPU, their speed cases take it in turn (the GPU lock), and each prints its
    // lines whole, in the files' order.
    void grade_the_others_may_run_beside()
    {
        // Orphans a submission leaves behind (setsid, double fork) are re-parented here and killed.
        harness::become_subreaper();
        const std::size_t workers =
            std::max<std::size_t>(1, std::min<std::size_t>(request_.parallel_exercises, files_.size()));
        if (workers == 1) {
            for (std::size_t k = 0; k < files_.size(); ++k) grade_beside_others(k, progress_);
            return;
        }
        std::vector<std::ostringstream> lines(files_.size());
        std::vector<std::shared_future<void>> graded(files_.size());
        harness::OrderedParallelMap<void> exercises(workers);
        for (const std::size_t k : order_)
            graded[k] = exercises.push([this, k, &lines] { grade_beside_others(k, lines[k]); });
        for (std::size_t k = 0; k < files_.size(); ++k) {
            graded[k].get();
            progress_ << lines[k].str() << std::flush;
        }
    }

    // File k's exercise in the side-by-side phase; the grader's own failure (a bug, an exhausted
    // machine) becomes the exercise's result, and the others go on.
    void grade_beside_others(std::size_t k, std::ostream& out)
    {
        const harness::Exercise& exercise = exercise_of(k);
        const BuildResult* build = build_for(k);
        if (build) out << detail::build_line(files_[k].exercise, *build, request_.colour) << "\n";
        const double began = since_start();
        try {
            results_[k] = grade_exercise({request_, environment_, exercise, files_[k], build, timer_of(k),
                                          report_.calibration, others_may_run_beside(), link_timer_of(k)},
                                         out);
        } catch (const std::exception& e) {
            ExerciseResult failed;
            failed.name = exercise.name;
            failed.source = harness::valid_text(files_[k].path);
            failed.status = ExerciseStatus::runner_failed;
            failed.message = std::string("the grader could not finish this exercise: ") + e.what();
            score_exercise(request_.rubric, failed);
            out << "  " << harness::printable_text(failed.message) << "\n";  // may name a submission's file
            results_[k] = failed;
        }
        results_[k].started_seconds = began;
        if (!results_[k].grade_again_alone) remove_work_of(k);
    }

    // The runner, its object and its logs (already in the report) go: nothing a submission left
    // behind stays on the grading machine (unless --keep-work).
    void remove_work_of(std::size_t k) const
    {
        std::error_code ignored;
        if (!request_.keep_work) fs::remove_all(fs::path(environment_.work_dir) / files_[k].exercise, ignored);
    }

    // The grader's own failure to build (its runner object unreadable) ends the grading here, once
    // the exercises have reported what they could.
    void wait_for_the_builds() { background_.pop(); }

    // A file whose build could not start its processes beside the other exercises' runners (where no
    // control group bounds each sandbox, every sandbox of the machine shares one process limit, and
    // another file's runner may have filled it: docs/security.md) is built again now that they are
    // gone, and graded again alone. A file that says so of itself in an #error is only built twice.
    void build_starved_files_again()
    {
        for (std::size_t k = 0; k < files_.size(); ++k) {
            const BuildResult* build = build_for(k);
            if (build == nullptr || !build_starved(*build)) continue;
            progress_ << files_[k].exercise << ": its build could not start its processes beside the other exercises' "
                      << "runners; building it again, alone\n"
                      << std::flush;
            const auto w = static_cast<std::size_t>(build_of_[k]);
            try {
                builds_[w] = ready(build_runners(toolchain_, {work_[w]}, 1, environment_.sandbox).front());
            } catch (const std::exception& e) {
                progress_ << "  the grader could not build it again: " << harness::printable_text(e.what()) << "\n";
                continue;
            }
            rebuilt_[k] = true;
        }
    }

    // An exercise whose runner or reference runner could not start or use the GPU beside the others
    // is graded again on its own, after them: whatever another exercise's submission left on the
    // GPU or the machine (memory taken, processes forked) is gone by then. So is a file built again.
    void grade_again_alone()
    {
        std::vector<std::size_t> again;
        for (std::size_t k = 0; k < files_.size(); ++k)
            if (rebuilt_[k] || (others_may_run_beside() && results_[k].grade_again_alone)) again.push_back(k);
        const int places = exercise_places(report_.calibration);
        for (const std::size_t k : again) {
            // Alone on the GPU, not only in this grading: every place of the GPU first, so that no
            // exercise of another grading (whose runner may hold the memory that ran out: red team 16)
            // runs beside it. The wait is for the exercises running when it asked to end, each within
            // its own time limit; the places are dropped after each exercise, so that other gradings
            // take turns with a grading that has many to grade again (red team 16b).
            if (!rebuilt_[k])
                progress_ << files_[k].exercise << ": a runner could not start or use the GPU (or its memory) beside "
                          << "the other exercises; grading it again, alone\n";
            std::vector<harness::GpuLock::Hold> every_place;
            try {
                if (environment_.gpu_lock != nullptr && places > 0) {
                    progress_ << files_[k].exercise << ": waiting for every other exercise on this GPU (other "
                              << "gradings' too) to end\n"
                              << std::flush;
                    every_place = environment_.gpu_lock->every_place(places);
                }
                // The reference's timings alone that failed beside the others are taken again first,
                // with no runner of the submission alive (as at the start).
                if (timings_[k])
                    for (const auto& c : cases_to_grade(exercise_of(k), request_))
                        if (c.timed && timings_[k]->timer.alone_failed(c.index))
                            timings_[k]->timer.time_alone(exercise_of(k), c);
                const double began = since_start();
                results_[k] = grade_exercise({request_, environment_, exercise_of(k), files_[k], build_for(k),
                                              timer_of(k), report_.calibration, false, link_timer_of(k),
                                              !every_place.empty()},
                                             progress_);
                results_[k].started_seconds = began;
            } catch (const std::exception& e) {
                progress_ << "  the grader could not grade it again: " << harness::printable_text(e.what()) << "\n";
            }
            remove_work_of(k);
        }
    }

    // Whether anything may run beside an exercise: other exercises of this grading, or, wherever the
    // GPU lock is shared, other gradings (grade class grades two at once on a GPU; red team 16b: a
    // grading of one exercise beside another's memory hog). Only then can its failure be another's
    // doing, and only then is it graded again alone, once, holding every place: what its runner
    // reports there, out of memory included, is its own.
    bool others_may_run_beside() const
    {
        return (request_.parallel_exercises > 1 && files_.size() > 1) || environment_.gpu_lock != nullptr;
    }

    // The points, the clocks at the end, the time taken.
    GradeReport total()
    {
        for (auto& result : results_) {
            report_.points += result.points;
            report_.max_points += result.max_points;
            report_.exercises.push_back(std::move(result));
        }
        if (environment_.gpu_clocks) record_clocks_at_end(environment_.gpu_clocks(), report_, progress_);
        report_.seconds = since_start();
        return std::move(report_);
    }
};

}  // namespace

std::vector<std::size_t> grading_order(const std::vector<SubmissionFile>& files, const GradeRequest& request)
{
    std::vector<std::int64_t> elements(files.size(), 0);
    for (std::size_t k = 0; k < files.size(); ++k)
        if (const harness::Exercise* exercise = harness::find_exercise(files[k].exercise))
            for (const auto& c : cases_to_grade(*exercise, request)) elements[k] += c.n;
    std::vector<std::size_t> order(files.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return elements[a] > elements[b]; });
    return order;
}

GradeReport grade(const GradeRequest& request, const GradingEnvironment& environment, std::ostream& progress)
{
    return GradingRun(request, environment, progress).run();
}

}  // namespace grading
