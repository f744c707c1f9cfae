// The sanitizer step of an exercise: its small and medium cases again, once per tool, each in a
// runner started under compute-sanitizer (in the sandbox, which then shows compute-sanitizer's own
// directory and nothing else of the toolkit). Outputs are checked as usual; timings are never used.
#include "run.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "../judge.hpp"
#include "../build/toolchain.hpp"
#include "grading/build.hpp"
#include "harness/process.hpp"
#include "harness/text.hpp"

namespace fs = std::filesystem;

namespace grading {

namespace {

// A tool's log is read from its end (the summary comes last), at most this much per process.
constexpr std::size_t log_bytes = 1 << 20;

// Names in a directory that must never be bound into a run's sandbox: the compilers.
bool holds_a_compiler(const fs::path& dir)
{
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
        const std::string name = entry.path().filename().string();
        for (const char* compiler : {"nvcc", "ptxas", "cicc", "nvlink", "fatbinary", "libnvrtc", "libnvJitLink",
                                     "libnvptxcompiler", "libnvvm", "gcc", "g++", "clang"})
            if (name.rfind(compiler, 0) == 0) return true;
    }
    return false;
}

}  // namespace

SanitizerProgram find_compute_sanitizer(const std::string& given, const std::string& toolkit_root, bool sandboxed)
{
    SanitizerProgram found;
    std::vector<std::string> candidates;
    if (!given.empty()) {
        candidates = {given};
    } else {
        if (!toolkit_root.empty())
            candidates = {toolkit_root + "/compute-sanitizer/compute-sanitizer", toolkit_root + "/bin/compute-sanitizer"};
        candidates.push_back("compute-sanitizer");
    }
    for (const auto& candidate : candidates) {
        const std::string real = detail::real_program_path(candidate);
        if (real.empty() || ::access(real.c_str(), X_OK) != 0) continue;
        const fs::path dir = fs::path(real).parent_path();
        if (sandboxed && holds_a_compiler(dir)) {
            found.missing = "compute-sanitizer at " + real + " shares its directory with a compiler, which a run's "
                            "sandbox must not show: not checked (give --compute-sanitizer PATH of the toolkit's "
                            "compute-sanitizer/ directory)";
            return found;
        }
        found.program = real;
        found.directory = dir.string();
        return found;
    }
    found.missing = given.empty() ? "compute-sanitizer not found (not below the toolkit " +
                                        (toolkit_root.empty() ? std::string("(none found)") : toolkit_root) +
                                        ", nor on PATH): not checked"
                                  : "compute-sanitizer not found at " + given + ": not checked";
    return found;
}

std::vector<harness::Case> sanitizer_cases(const std::vector<harness::Case>& cases)
{
    std::vector<harness::Case> small;
    // Never a hidden case: a program whose forged reports students read must not have its input
    // (and the runner's own list has no case the rubric added).
    for (const auto& c : cases)
        if (!c.timed && !c.hidden && c.n <= sanitizer_max_elements) small.push_back(c);
    std::stable_sort(small.begin(), small.end(), [](const harness::Case& a, const harness::Case& b) { return a.n < b.n; });
    if (small.size() <= sanitizer_max_cases) return small;
    // The smallest, the largest and, between, evenly spread.
    std::vector<harness::Case> picked;
    for (std::size_t k = 0; k < sanitizer_max_cases; ++k)
        picked.push_back(small[k * (small.size() - 1) / (sanitizer_max_cases - 1)]);
    std::sort(picked.begin(), picked.end(), [](const harness::Case& a, const harness::Case& b) { return a.index < b.index; });
    return picked;
}

std::vector<std::string> sanitizer_arguments(const std::string& tool)
{
    // No host backtraces and no API errors (a case's CUDA errors are the grader's own verdict);
    // at most 100 reports printed; racecheck at its default level (errors and warnings).
    // The verdict is the tool's exit status: sanitizer_error_exit_code when it found errors (a
    // program's exit code other than 0 is one too: --check-exit-code, yes by default).
    return {"--tool", tool, "--print-limit", "100", "--show-backtrace", "no", "--report-api-errors", "no",
            "--launch-timeout", "120", "--error-exitcode", std::to_string(sanitizer_error_exit_code)};
}

namespace {

bool exited_with(const harness::ProcessEnd& end, int code)
{
    return end.status.kind == harness::ExitStatus::Kind::exited && end.status.code == code;
}

// "exited with code 3", "was still running when the grader stopped waiting", "was killed by signal 9 (SIGKILL)".
std::string how_it_ended(const harness::ExitStatus& status)
{
    switch (status.kind) {
        case harness::ExitStatus::Kind::exited:
            return "exited with code " + std::to_string(status.code) +
                   (status.limit_reached.empty() ? "" : " after reaching " + status.limit_reached);
        case harness::ExitStatus::Kind::timed_out:
            return "was still running when the grader stopped waiting for it (killed)" +
                   (status.limit_reached.empty() ? "" : " after reaching " + status.limit_reached);
        case harness::ExitStatus::Kind::failed_to_start:
            return "could not start (" + status.error + ")";
        case harness::ExitStatus::Kind::signaled:
            break;
    }
    return "was " + status.describe();
}

}  // namespace

ToolVerdict tool_verdict(const std::vector<harness::ProcessEnd>& ends, const std::vector<bool>& shows_findings)
{
    if (ends.empty()) return {ToolEnd::unfinished, "no runner ran under compute-sanitizer"};
    // The error code after a case broke off may be only the program's own exit status (a crash, the
    // runner's exit after a CUDA error: --check-exit-code), so there it says errors only where the
    // process's log shows what the tool found (memcheck's out-of-bounds access that failed the launch).
    for (std::size_t k = 0; k < ends.size(); ++k)
        if (exited_with(ends[k], sanitizer_error_exit_code) &&
            (ends[k].answered_all || (k < shows_findings.size() && shows_findings[k])))
            return {ToolEnd::errors, {}};
    for (const auto& e : ends)
        if (!exited_with(e, 0) && e.answered_all)
            return {ToolEnd::withheld,
                    "compute-sanitizer " + how_it_ended(e.status) +
                        " after its runner's last answer, so its verdict is missing: only the program, which "
                        "owns the runner, can cause that (killing the tool, leaving a process behind, filling "
                        "the log to its limit, exiting with another code), so it counts as errors found"};
    // Exit 0 is clean only where every case ran under the tool: a program that ended itself with 0
    // in a case (or said it had no launcher) kept its kernels from the tool as surely as a crash.
    for (const auto& e : ends)
        if (!e.answered_all)
            return {ToolEnd::unfinished, "compute-sanitizer " + how_it_ended(e.status) +
                                             " after a case broke off (a crash, a hang, a CUDA error, an exit) or "
                                             "before its first case: its verdict is missing"};
    return {ToolEnd::clean, {}};
}

harness::SupervisorLimits sanitizer_limits(const harness::SupervisorLimits& limits)
{
    // Kernels run 10-100 times slower under a sanitizer: per case a minute more, and 100 times the
    // size allowance; per tool two minutes for all its cases.
    harness::SupervisorLimits scaled = limits;
    scaled.case_limit = limits.case_limit + std::chrono::seconds(60);
    scaled.case_ns_per_element = limits.case_ns_per_element * 100;
    scaled.startup_limit = limits.startup_limit * 2;
    scaled.exercise_budget = std::chrono::seconds(120);
    return scaled;
}

SanitizerStep run_sanitizers(const SanitizerRequest& request, std::ostream& progress)
{
    SanitizerStep step;
    step.json = nlohmann::json::object();
    auto not_checked = [&](const std::string& tool, const std::string& why) {
        step.json[tool] = {{"checked", false}, {"why", harness::valid_text(why)}};
    };
    const std::vector<harness::Case> cases = sanitizer_cases(request.cases);
    const SanitizerProgram& program = request.program;
    for (const auto& tool : request.tools) {
        if (!program.missing.empty()) {
            not_checked(tool, program.missing);
            continue;
        }
        if (cases.empty()) {
            not_checked(tool, "no visible untimed case of at most " + std::to_string(sanitizer_max_elements) +
                                  " elements to run: not checked");
            continue;
        }
        std::vector<std::string> argv = {program.program};
        for (auto& a : sanitizer_arguments(tool)) argv.push_back(a);
        harness::RunRequest run_request;
        run_request.exercise = request.exercise->name;
        run_request.gpu_lock = request.gpu_lock;
        run_request.exit_wait = request.exit_wait;  // compute-sanitizer's summary comes after the runner's exit
        const std::string log = "sanitizer-" + tool;
        run_request.spawn = [&](int k) { return request.spawn(argv, program.directory, log + "-" + std::to_string(k)); };
        for (const auto& c : cases) run_request.cases.push_back({c.index, c.n, false});
        nlohmann::json labels = nlohmann::json::array(), failed = nlohmann::json::array();
        const harness::ExerciseRun run =
            harness::run_exercise(run_request, sanitizer_limits(request.limits), [&](harness::CaseRun&& case_run) {
                const harness::Case& c = *harness::find_case(cases, case_run.index);
                labels.push_back(c.label);
                CaseResult r = detail::describe_case(*request.exercise, c, request.submission, request.grade_command);
                try {
                    detail::judge(*request.exercise, c, case_run, r);
                } catch (const std::exception&) {
                    r.status = CaseStatus::protocol_error;
                }
                if (r.status != CaseStatus::pass) failed.push_back(c.label);
            });
        // The verdict comes from the tool's exit status (tool_verdict); its log, which the program
        // shares (it can print forged reports, flood the log, cut it), only explains it. Every
        // process's log, read from its end, is parsed as one text; what it shows can only cost.
        std::string text;
        std::vector<bool> shows_findings;
        for (int k = 1; k <= run.processes; ++k) {
            const std::string tail =
                harness::read_file_tail(request.log_path(log + "-" + std::to_string(k)), log_bytes);
            shows_findings.push_back(!parse_sanitizer_output(tail, tool).findings.empty());
            text += tail + "\n";
        }
        const ToolVerdict verdict = tool_verdict(run.process_ends, shows_findings);
        const SanitizerReport report = parse_sanitizer_output(text, tool);
        nlohmann::json findings = nlohmann::json::array();
        for (const auto& f : report.findings) findings.push_back(sanitizer_finding_json(f));
        const bool shown = !findings.empty();
        // Errors the tool found (its exit status, or a count in the log) that the log no longer
        // shows, and a verdict the program withheld, cost as findings do: hiding errors must not be
        // cheaper than having them.
        // (After a case broke off, a count with nothing shown may be only the program's exit status.)
        const bool unshown = !shown && (verdict.end == ToolEnd::errors ||
                                        (verdict.end != ToolEnd::unfinished && report.errors_unshown()));
        const bool checked = (verdict.end == ToolEnd::clean && report.tool_error.empty() && !unshown) ||
                             (verdict.end == ToolEnd::errors && shown);
        nlohmann::json entry = {{"checked", checked},
                                {"findings", findings},
                                {"not_listed", report.not_listed},
                                {"cases", labels},
                                {"cases_failed", failed}};
        if (!run.startup_failure.empty() && labels.empty())
            entry["why"] = harness::valid_text("the runner did not start under compute-sanitizer: " + run.startup_failure);
        else if (verdict.end == ToolEnd::withheld || verdict.end == ToolEnd::unfinished)
            entry["why"] = harness::valid_text(verdict.why);
        else if (unshown)
            entry["why"] = verdict.end == ToolEnd::errors
                               ? "compute-sanitizer found errors (its exit status says so) and its log, as read, "
                                 "shows none of them (the program's own output can push them out or cut the log): "
                                 "findings are missing"
                               : "compute-sanitizer's log counts " + std::to_string(report.summary_errors) +
                                     " error(s) and, as read, shows none of them: findings are missing";
        else if (verdict.end == ToolEnd::clean && !report.tool_error.empty())
            entry["why"] = "compute-sanitizer's log says it failed: " + report.tool_error;
        const bool costs = shown || unshown || verdict.end == ToolEnd::withheld;
        if (costs) step.tools_with_findings.push_back(tool);
        progress << "  " << tool << ": "
                 << (shown ? std::to_string(report.findings.size() + report.not_listed) + " finding(s)"
                     : unshown ? std::string("errors found, none shown")
                     : verdict.end == ToolEnd::withheld ? std::string("verdict withheld by the program (counts as errors)")
                     : checked ? std::string("clean")
                               : std::string("not checked"))
                 << "\n";
        step.json[tool] = std::move(entry);
    }
    return step;
}

}  // namespace grading
