// Red team of issue 20 (redteam20), the sanitizer step: compute-sanitizer's report shares its log
// with the program's own output, which is read from its end (1 MiB). A racy launcher that prints a
// megabyte after each kernel pushes every report of its races out of what is read; the tool's
// summary, printed after the program exits, still counts them. That summary with no report read
// must not be "clean" and must not be cheaper than the findings it hides. And nothing the program
// writes makes a run clean: the verdict is compute-sanitizer's exit status (--error-exitcode), seen
// by the grader from outside the sandbox; a tool that the program kept from ending by itself after
// its last answer costs as errors (fixtures/scripted_sanitizer.sh plays each way, with fake_runner).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "grading/sanitizer.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "sanitizer/run.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace grading;

TEST_CASE("errors the summary counts but the log no longer shows are never clean")
{
    // What the tail of a flooded log holds: the program's filler, then the real summaries.
    std::string pushed_out = "========= COMPUTE-SANITIZER\n";
    for (int k = 0; k < 1000; ++k) pushed_out += "filler filler filler filler filler filler\n";
    pushed_out += "========= RACECHECK SUMMARY: 3 hazards displayed (3 errors, 0 warnings)\n"
                  "========= ERROR SUMMARY: 3 errors\n";
    const SanitizerReport hidden = parse_sanitizer_output(pushed_out, "racecheck");
    CHECK(hidden.summary_seen);
    CHECK(hidden.findings.empty());
    CHECK(hidden.errors_unshown());

    // A forged "0 errors" line of the program's, before the real summary, does not lower the count.
    const SanitizerReport forged =
        parse_sanitizer_output("========= ERROR SUMMARY: 0 errors\n" + pushed_out, "racecheck");
    CHECK(forged.errors_unshown());

    // The races shown: findings, nothing unshown. A clean run: nothing unshown either.
    const SanitizerReport shown = parse_sanitizer_output(
        "========= Error: Race reported between Write access at k(float *)+0x1b0 in a.cu:31\n"
        "=========     and Read access at k(float *)+0x2e0 in a.cu:29 [128 hazards]\n"
        "=========\n"
        "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n",
        "racecheck");
    CHECK_FALSE(shown.findings.empty());
    CHECK_FALSE(shown.errors_unshown());
    const SanitizerReport clean =
        parse_sanitizer_output("========= COMPUTE-SANITIZER\ngrader runner ready\n========= ERROR SUMMARY: 0 errors\n",
                               "memcheck");
    CHECK(clean.summary_seen);
    CHECK_FALSE(clean.errors_unshown());
}

namespace {

harness::ProcessEnd exited(int code, bool answered_all = true)
{
    harness::ProcessEnd end;
    end.status.kind = harness::ExitStatus::Kind::exited;
    end.status.code = code;
    end.answered_all = answered_all;
    return end;
}

harness::ProcessEnd signaled(int signal, bool answered_all = true)
{
    harness::ProcessEnd end;
    end.status.kind = harness::ExitStatus::Kind::signaled;
    end.status.signal = signal;
    end.answered_all = answered_all;
    return end;
}

harness::ProcessEnd killed_after_wait(bool answered_all = true)
{
    harness::ProcessEnd end;
    end.status.kind = harness::ExitStatus::Kind::timed_out;
    end.status.signal = SIGKILL;
    end.answered_all = answered_all;
    return end;
}

}  // namespace

TEST_CASE("the tool's exit status decides: clean only when every process exited 0")
{
    const int errors = sanitizer_error_exit_code;
    CHECK(errors > 0);
    CHECK(errors <= 128);  // bwrap reports a signal N as 128 + N
    const std::vector<std::string> args = sanitizer_arguments("racecheck");
    const auto option = std::find(args.begin(), args.end(), "--error-exitcode");
    REQUIRE(option != args.end());
    REQUIRE(option + 1 != args.end());
    CHECK(*(option + 1) == std::to_string(errors));
    CHECK(tool_verdict({exited(0)}).end == ToolEnd::clean);
    CHECK(tool_verdict({exited(0), exited(0)}).end == ToolEnd::clean);
    CHECK(tool_verdict({exited(0), exited(errors)}).end == ToolEnd::errors);
    CHECK(tool_verdict({exited(errors, false)}, {true}).end == ToolEnd::errors);  // found before a case broke off
    // The error code with nothing shown after a case broke off: maybe only the program's exit status.
    CHECK(tool_verdict({exited(errors, false)}).end == ToolEnd::unfinished);
    CHECK(tool_verdict({exited(errors, false)}, {false}).end == ToolEnd::unfinished);
    CHECK(tool_verdict({signaled(SIGKILL), exited(errors)}).end == ToolEnd::errors);

    // Kept from ending by itself after the last answer: only the program can, so it costs.
    for (const harness::ProcessEnd& end : {signaled(SIGKILL), signaled(SIGXFSZ), killed_after_wait(), exited(3)}) {
        const ToolVerdict v = tool_verdict({exited(0), end});
        CHECK(v.end == ToolEnd::withheld);
        CHECK(test_support::contains(v.why, "after its runner's last answer"));
        CHECK(test_support::contains(v.why, "counts as errors found"));
    }
    CHECK(test_support::contains(tool_verdict({signaled(SIGKILL)}).why, "SIGKILL"));
    CHECK(test_support::contains(tool_verdict({killed_after_wait()}).why, "still running"));
    CHECK(test_support::contains(tool_verdict({exited(3)}).why, "exited with code 3"));

    // Ended while a case broke off (a crash, a hang the grader killed, a CUDA error) or before the
    // first case: not checked, at no cost (the case itself costs).
    const ToolVerdict broke_off = tool_verdict({signaled(SIGKILL, false), exited(0)});
    CHECK(broke_off.end == ToolEnd::unfinished);
    CHECK(test_support::contains(broke_off.why, "after a case broke off"));
    CHECK(tool_verdict({killed_after_wait(false)}).end == ToolEnd::unfinished);
    CHECK(tool_verdict({}).end == ToolEnd::unfinished);
    // A withheld verdict is not excused by another process's broken-off case.
    CHECK(tool_verdict({killed_after_wait(false), signaled(SIGKILL)}).end == ToolEnd::withheld);
}

namespace {

// One tool's step of scan_kogge_stone under fixtures/scripted_sanitizer.sh playing
// `scenario`, with `runner` (fake_runner) as the program; logs of at most 1 MiB each.
struct Played {
    nlohmann::json entry;  // results.json's sanitizer.<tool>
    bool costs = false;    // the tool is among those with findings
    std::string progress;
};

Played play(const std::string& scenario, const std::string& runner = FAKE_RUNNER,
            std::chrono::milliseconds exit_wait = std::chrono::seconds(30), std::vector<harness::Case> cases = {})
{
    const fs::path dir = test_support::fresh_dir("sanitizer_" + scenario);
    const harness::Exercise* exercise = harness::find_exercise("scan_kogge_stone");
    REQUIRE(exercise != nullptr);
    SanitizerRequest request;
    request.exercise = exercise;
    request.cases = cases.empty() ? harness::cases_for(*exercise) : std::move(cases);
    request.tools = {"racecheck"};
    request.program.program = std::string(SANITIZER_FIXTURES) + "/scripted_sanitizer.sh";
    request.program.directory = SANITIZER_FIXTURES;
    request.log_path = [dir](const std::string& log) { return (dir / (log + ".log")).string(); };
    request.spawn = [&](const std::vector<std::string>& wrapper, const std::string&, const std::string& log) {
        harness::SpawnOptions spawn;
        spawn.argv = wrapper;
        spawn.argv.push_back(runner);
        spawn.output_file = request.log_path(log);
        spawn.extra_env = {"SANITIZER_SCENARIO=" + scenario};
        spawn.limits.max_file_bytes = 1 << 20;
        return spawn;
    };
    request.exit_wait = exit_wait;
    request.submission = "submission";
    request.grade_command = "grade";
    std::ostringstream progress;
    SanitizerStep step = run_sanitizers(request, progress);
    Played played;
    played.entry = step.json.at("racecheck");
    played.costs = step.tools_with_findings == std::vector<std::string>{"racecheck"};
    played.progress = progress.str();
    fs::remove_all(dir);
    return played;
}

std::string why(const Played& p) { return p.entry.value("why", std::string()); }

}  // namespace

TEST_CASE("a clean exit is clean, with or without its summary in the log; errors shown are findings")
{
    const Played clean = play("clean");
    CHECK(clean.entry.at("checked") == true);
    CHECK(clean.entry.at("findings").empty());
    CHECK(clean.entry.at("cases_failed").empty());  // fake_runner is correct, and its cases ran
    CHECK_FALSE(clean.entry.at("cases").empty());
    CHECK_FALSE(clean.costs);
    CHECK(test_support::contains(clean.progress, "racecheck: clean"));

    // The program's filler pushed the summary out (or it could not be written): exit 0 still says clean.
    const Played flooded = play("clean_flooded");
    CHECK(flooded.entry.at("checked") == true);
    CHECK_FALSE(flooded.costs);

    const Played shown = play("errors_shown");
    CHECK(shown.entry.at("checked") == true);
    REQUIRE(shown.entry.at("findings").size() == 1);
    CHECK(shown.entry.at("findings")[0].at("line") == 31);
    CHECK(shown.costs);

    // A report the program forged costs it (a finding can only cost), though the tool found nothing.
    const Played forged = play("forged_finding");
    CHECK(forged.entry.at("findings").size() == 1);
    CHECK(forged.costs);
}

TEST_CASE("a forged summary with the tool's own summary lost is not clean")
{
    // The tool's write of its summary fails at the file-size limit; it exits with its error code.
    const Played lost = play("forged_flood_errors");
    CHECK(lost.entry.at("checked") == false);
    CHECK(lost.entry.at("findings").empty());
    CHECK(lost.costs);
    CHECK(test_support::contains(why(lost), "exit status says so"));
    CHECK(test_support::contains(lost.progress, "racecheck: errors found, none shown"));

    // It dies of SIGXFSZ writing it.
    const Played killed = play("forged_flood_killed");
    CHECK(killed.entry.at("checked") == false);
    CHECK(killed.costs);
    CHECK(test_support::contains(why(killed), "SIGXFSZ"));
}

TEST_CASE("a tool the program kept from ending by itself after its last answer costs as errors")
{
    const Played killed = play("killed");  // the program killed its parent
    CHECK(killed.entry.at("checked") == false);
    CHECK(killed.costs);
    CHECK(test_support::contains(why(killed), "SIGKILL"));
    CHECK(test_support::contains(killed.progress, "verdict withheld"));

    // A process left behind keeps the tool waiting: killed once the wait is over.
    const Played lingering = play("lingers", FAKE_RUNNER, std::chrono::milliseconds(200));
    CHECK(lingering.entry.at("checked") == false);
    CHECK(lingering.costs);
    CHECK(test_support::contains(why(lingering), "still running"));

    const Played other = play("other_exit");
    CHECK(other.entry.at("checked") == false);
    CHECK(other.costs);
    CHECK(test_support::contains(why(other), "exited with code 3"));
}

TEST_CASE("a tool that ended while a case broke off is not checked, at no cost")
{
    // A runner that crashes in its first case; the tool ends with its exit status. The remaining
    // cases run in a fresh runner, which ends cleanly.
    const harness::Exercise* exercise = harness::find_exercise("scan_kogge_stone");
    REQUIRE(exercise != nullptr);
    const std::vector<harness::Case> cases = sanitizer_cases(harness::cases_for(*exercise));
    REQUIRE(cases.size() >= 2);
    const fs::path dir = test_support::fresh_dir("sanitizer_crashing_runner");
    const fs::path runner = dir / "runner";
    fs::copy_file(FAKE_RUNNER, runner);
    {
        std::ofstream trailer(runner, std::ios::binary | std::ios::app);
        trailer << "FAKE_RUNNER_BEHAVIOUR=crash_at:" << cases.front().index << ";";
    }
    fs::permissions(runner, fs::perms::owner_all);
    const Played crashed = play("passthrough", runner.string());
    fs::remove_all(dir);
    CHECK(crashed.entry.at("checked") == false);
    CHECK_FALSE(crashed.costs);
    CHECK(test_support::contains(why(crashed), "after a case broke off"));
    CHECK(crashed.entry.at("cases_failed").size() == 1);
}

namespace {

// A copy of fake_runner in `dir` that plays `behaviour` (fake_behaviour.hpp's trailer).
std::string runner_playing(const fs::path& dir, const std::string& behaviour)
{
    const fs::path runner = dir / "runner";
    fs::copy_file(FAKE_RUNNER, runner, fs::copy_options::overwrite_existing);
    {
        std::ofstream trailer(runner, std::ios::binary | std::ios::app);
        trailer << "FAKE_RUNNER_BEHAVIOUR=" << behaviour << ";";
    }
    fs::permissions(runner, fs::perms::owner_all);
    return runner.string();
}

}  // namespace

// Red team 13: a tool that exits 0 has checked only what the program let it run. A runner that says
// it has no launcher, or ends itself with 0 in the middle of every case, runs no kernel under the
// tool: that is no clean verdict ("checked": true with nothing checked), it is not checked.
TEST_CASE("a tool that exited 0 while its cases broke off, or before any, is not clean")
{
    CHECK(tool_verdict({exited(0, false)}).end == ToolEnd::unfinished);
    CHECK(tool_verdict({exited(0), exited(0, false)}).end == ToolEnd::unfinished);
    CHECK(tool_verdict({exited(0, false), exited(sanitizer_error_exit_code)}).end == ToolEnd::errors);

    const harness::Exercise* exercise = harness::find_exercise("scan_kogge_stone");
    REQUIRE(exercise != nullptr);
    const std::vector<harness::Case> cases = sanitizer_cases(harness::cases_for(*exercise));
    REQUIRE(cases.size() >= 2);
    const fs::path dir = test_support::fresh_dir("sanitizer_exits_clean");
    // Told to quit once it said it has no launcher, it ends by itself, with 0 (it was left waiting for
    // a command, and the tool killed, after the whole exit wait of each tool: 2 minutes an exercise).
    const Played no_launcher = play("passthrough", runner_playing(dir, "no_launcher"));
    CHECK(test_support::contains(why(no_launcher), "exited with code 0"));
    CHECK(no_launcher.entry.at("cases").empty());
    CHECK(no_launcher.entry.at("checked") == false);
    CHECK_FALSE(no_launcher.costs);
    CHECK_FALSE(test_support::contains(no_launcher.progress, "racecheck: clean"));

    // Ends with 0 in its last case: the earlier cases ran under the tool, the last did not.
    const Played exits =
        play("passthrough", runner_playing(dir, "exits_clean_at:" + std::to_string(cases.back().index)));
    CHECK(exits.entry.at("checked") == false);
    CHECK_FALSE(exits.costs);
    CHECK(test_support::contains(why(exits), "exited with code 0"));
    CHECK(exits.entry.at("cases_failed").size() == 1);
    fs::remove_all(dir);
}

// Red team 13: the rubric's hidden cases (grading/hidden_cases.hpp) are graded cases like any other,
// and the small ones were picked for the sanitizer step, sent without their spec: a case the rubric
// added has an index the runner's list lacks (the runner fails on it, the case breaks off, and the
// tool is "not checked" for every student of such a course, the honest and the racy alike), and a
// case the rubric hid was checked against its secret seed's input while the runner made the public
// one. Sent with their spec they would put hidden inputs before a program whose forged "findings"
// students read. The sanitizer step runs the visible cases only.
TEST_CASE("a rubric's hidden cases neither switch the sanitizer step off nor run under it")
{
    const harness::Exercise* exercise = harness::find_exercise("scan_kogge_stone");
    REQUIRE(exercise != nullptr);
    std::vector<harness::Case> cases = harness::cases_for(*exercise);
    const std::vector<harness::Case> visible_picked = sanitizer_cases(cases);
    REQUIRE(visible_picked.size() >= 2);
    // The smallest case hidden (a secret seed), and a small case the rubric added.
    for (auto& c : cases)
        if (c.index == visible_picked.front().index) {
            c.hidden = true;
            c.seed = 0x5ec7e7;
        }
    harness::Case extra = visible_picked.back();
    extra.index = static_cast<int>(cases.size());
    extra.label = "n=" + std::to_string(extra.n) + "/hidden";  // as large as the largest picked: picked
    extra.hidden = true;
    extra.seed = 0xabcdef;
    cases.push_back(extra);
    for (const auto& c : sanitizer_cases(cases)) CHECK_FALSE(c.hidden);

    const Played played = play("clean", FAKE_RUNNER, std::chrono::seconds(30), cases);
    CHECK(played.entry.at("checked") == true);
    CHECK(played.entry.at("cases_failed").empty());
    CHECK_FALSE(played.entry.at("cases").empty());
    for (const auto& label : played.entry.at("cases")) {
        CHECK(label != extra.label);
        CHECK(label != visible_picked.front().label);
    }
}

// Red team 13: memcheck stops a kernel at its out-of-bounds access, and the launch fails in the
// program (cudaErrorLaunchFailure): the runner reports a CUDA error and exits. The supervisor
// killed the tool at once on that report, before it printed what it found, so the most common
// memcheck error was "not checked", free, while the graded run (no tool) passed the case. Now the
// tool gets the exit wait to end by itself: its findings cost. A crash or a CUDA error with nothing
// found stays free, though the tool's --check-exit-code turns the runner's exit status into its
// error code.
TEST_CASE("memcheck's out-of-bounds access, which fails the case's launch, costs; a bare exit status does not")
{
    const harness::Exercise* exercise = harness::find_exercise("scan_kogge_stone");
    REQUIRE(exercise != nullptr);
    const std::vector<harness::Case> cases = sanitizer_cases(harness::cases_for(*exercise));
    REQUIRE(cases.size() >= 2);
    const fs::path dir = test_support::fresh_dir("sanitizer_oob");
    const std::string first = std::to_string(cases.front().index);

    const Played oob = play("memcheck_oob", runner_playing(dir, "cuda_error_at:" + first));
    CHECK(oob.costs);
    REQUIRE(oob.entry.at("findings").size() == 1);
    CHECK(oob.entry.at("findings")[0].at("line") == 12);
    CHECK(oob.entry.at("checked") == true);

    for (const std::string behaviour : {"cuda_error_at:" + first, "crash_at:" + first}) {
        INFO(behaviour);
        const Played bare = play("exit_code_checked", runner_playing(dir, behaviour));
        CHECK_FALSE(bare.costs);
        CHECK(bare.entry.at("checked") == false);
        CHECK(test_support::contains(why(bare), "after a case broke off"));
        CHECK(bare.entry.at("cases_failed").size() == 1);
    }
    fs::remove_all(dir);
}
