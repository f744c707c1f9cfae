// `grade` end to end without a GPU: the fake toolchain stands in for the compiler and fake_runner
// for the GPU runner (tests/fake_toolchain), inside the real sandbox where bubblewrap works here.
// This proves on CI that a hang, a crash, a CUDA error, a compile error or a fake score printed on
// stdout each stay inside their own case or exercise, and that the grader's own clock and checks
// decide what a timing is worth.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <thread>

#include <unistd.h>

#include "grading/json_schema.hpp"
#include "harness/gpu_lock.hpp"
#include "harness/process.hpp"
#include "harness/sandbox.hpp"
#include "support/sandbox_args.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// No process of this name is left on the machine.
bool no_process_named(const std::string& name)
{
    for (const auto& entry : fs::directory_iterator("/proc")) {
        std::ifstream comm(entry.path() / "comm");
        std::string text;
        if (std::getline(comm, text) && text == name) return false;
    }
    return true;
}

// A directory of this test process's own, so that two runs at once do not collide.
fs::path test_dir(const std::string& name)
{
    return fs::temp_directory_path() / ("grader_pipeline_" + std::to_string(::getpid()) + "_" + name);
}

struct GradeRun {
    json results;
    std::string output;
    int exit_code = -1;  // 0: every case passed, 1: something did not
};

// Writes one fake source per entry (exercise -> its contents) and grades them.
GradeRun grade_fake(const std::string& name, const std::map<std::string, std::string>& files,
                    const std::vector<std::string>& extra_args)
{
    const fs::path dir = test_dir(name);
    fs::remove_all(dir);
    fs::create_directories(dir / "submission");
    for (const auto& [exercise, text] : files) {  // "folder/exercise": in a folder of the submission
        const fs::path file = dir / "submission" / (exercise + ".cu");
        fs::create_directories(file.parent_path());
        std::ofstream(file) << text << "\n";
    }
    // The reference runner is fake_runner itself: without a behaviour trailer it is correct.
    std::vector<std::string> command = {GRADE_EXECUTABLE,
                                        "--submission",
                                        (dir / "submission").string(),
                                        "--nvcc",
                                        FAKE_NVCC,
                                        "--reference-runner",
                                        FAKE_RUNNER,
                                        "--work-dir",
                                        (dir / "work").string(),
                                        "--output",
                                        (dir / "results.json").string(),
                                        // A correct fake's n=10000000 case took 5.7 s on CI's two cores
                                        // with the package test's build beside it: 15 s, three times that.
                                        "--case-time-limit",
                                        "15",
                                        "--reps",
                                        "5"};
    command.insert(command.end(), sandbox_args().begin(), sandbox_args().end());
    command.insert(command.end(), extra_args.begin(), extra_args.end());
    const auto run = harness::run_command(test_support::with_own_gpu_lock(command), std::chrono::minutes(4), 1 << 20);
    INFO(run.output);
    REQUIRE(run.status.kind == harness::ExitStatus::Kind::exited);
    REQUIRE((run.status.code == 0 || run.status.code == 1));
    GradeRun result{json::parse(std::ifstream(dir / "results.json")), run.output, run.status.code};
    const auto errors = grading::validate_json_schema(test_support::results_schema(), result.results);
    CHECK(errors.empty());
    return result;
}

const json& exercise(const GradeRun& run, const std::string& name)
{
    for (const auto& e : run.results.at("exercises"))
        if (e.at("name") == name) return e;
    FAIL("no exercise " << name);
    throw;
}

const json& case_labelled(const json& e, const std::string& label)
{
    for (const auto& c : e.at("cases"))
        if (c.at("label") == label) return c;
    FAIL("no case " << label);
    throw;
}

int count_status(const json& e, const std::string& status)
{
    int count = 0;
    for (const auto& c : e.at("cases")) count += c.at("status") == status;
    return count;
}

// `name` was graded again alone after the others, and its neighbour, a correct fake, passed every
// case: the failed exercise's results.
const json& graded_again_alone(const GradeRun& run, const std::string& name, const std::string& neighbour)
{
    CHECK(run.output.find(name + ": a runner could not start or use the GPU (or its memory) beside the other "
                                 "exercises; grading it again, alone") != std::string::npos);
    CHECK(run.output.find(neighbour + ": a runner") == std::string::npos);
    const json& other = exercise(run, neighbour);
    CHECK(count_status(other, "pass") == static_cast<int>(other.at("cases").size()));
    return exercise(run, name);
}

}  // namespace

TEST_CASE("a hang is stopped by the time limit; the following cases and exercises still run")
{
    const GradeRun run = grade_fake(
        "hang", {{"scan_kogge_stone", "// FAKE_RUNNER: correct"}, {"scan_brent_kung", "// FAKE_RUNNER: hang_at:2"}},
        {"--exercise", "scan_kogge_stone,scan_brent_kung,scan_hierarchical"});
    const json& ks = exercise(run, "scan_kogge_stone");
    CHECK(ks.at("status") == "graded");
    CHECK(ks.at("correctness_points") == 8.0);  // speed points depend on this machine's load
    const json& bk = exercise(run, "scan_brent_kung");
    CHECK(bk.at("cases").at(2).at("status") == "timeout");
    CHECK(bk.at("cases").at(2).at("summary").get<std::string>().find("time limit") != std::string::npos);
    CHECK(count_status(bk, "pass") == static_cast<int>(bk.at("cases").size()) - 1);
    CHECK(bk.at("speed_points") == 0.0);
    CHECK(exercise(run, "scan_hierarchical").at("status") == "not_submitted");
    CHECK(run.exit_code == 1);  // graded, with failures
    // Progress is printed per case, with the timing against the reference.
    CHECK(run.output.find("[ 3/24] n=31/int") != std::string::npos);
    CHECK(run.output.find("vs reference") != std::string::npos);
}

TEST_CASE("a budget that runs out while a runner starts leaves the cases not run, not blamed on the runner")
{
    const GradeRun run = grade_fake("slow_start", {{"scan_kogge_stone", "// FAKE_RUNNER: slow_start"}},
                                    {"--exercise", "scan_kogge_stone", "--time-limit", "1"});
    const json& ks = exercise(run, "scan_kogge_stone");
    CHECK(count_status(ks, "not_run") == static_cast<int>(ks.at("cases").size()));
    CHECK(ks.at("cases").at(0).at("summary").get<std::string>().find("time limit was used up") != std::string::npos);
    // One line for the cases not run for one reason, not one each.
    CHECK(run.output.find("[1-24/24] 24 cases not_run") != std::string::npos);
    CHECK(run.output.find("[ 2/24]") == std::string::npos);
}

TEST_CASE("a compile error, a CUDA error and a crash each cost only their own case or exercise")
{
    const GradeRun run = grade_fake(
        "errors", {{"scan_kogge_stone", "FAKE_COMPILE_ERROR"}, {"scan_brent_kung", "// FAKE_RUNNER: cuda_error_at:1"}},
        {"--exercise", "scan_kogge_stone,scan_brent_kung"});
    const json& ks = exercise(run, "scan_kogge_stone");
    CHECK(ks.at("status") == "compile_error");
    CHECK(ks.at("compile_output").get<std::string>().find("error: expected a") != std::string::npos);
    // The compiler's message on the console too, under the build's line.
    CHECK(run.output.find("FAILED to compile") != std::string::npos);
    CHECK(run.output.find("scan_kogge_stone.cu(3): error: expected a \";\"") != std::string::npos);
    const json& bk = exercise(run, "scan_brent_kung");
    CHECK(bk.at("cases").at(1).at("status") == "cuda_error");
    CHECK(bk.at("cases").at(1).at("summary") == "cudaErrorIllegalAddress during launch");
    CHECK(count_status(bk, "pass") == static_cast<int>(bk.at("cases").size()) - 1);

    const GradeRun crash =
        grade_fake("crash", {{"scan_kogge_stone", "// FAKE_RUNNER: crash_at:4"}}, {"--exercise", "scan_kogge_stone"});
    const json& c = exercise(crash, "scan_kogge_stone").at("cases").at(4);
    CHECK(c.at("status") == "crashed");
    CHECK(c.at("summary").get<std::string>().find("SIGSEGV") != std::string::npos);
    CHECK(count_status(exercise(crash, "scan_kogge_stone"), "pass") ==
          static_cast<int>(exercise(crash, "scan_kogge_stone").at("cases").size()) - 1);
}

TEST_CASE("a runner that cannot be started is graded again alone, and its cases are not run rather than crashed")
{
    // Without the sandbox, so that the grader's own exec of the runner is what fails (in the
    // sandbox, bubblewrap would start and fail in its place).
    const GradeRun run =
        grade_fake("unstartable", {{"scan_kogge_stone", "// FAKE_RUNNER: unstartable"}, {"scan_brent_kung", ""}},
                   {"--no-sandbox", "--parallel", "2"});
    const json& failed = graded_again_alone(run, "scan_kogge_stone", "scan_brent_kung");
    CHECK(failed.at("points") == 0);
    CHECK(failed.at("message").get<std::string>().find("the runner could not be started") != std::string::npos);
    CHECK(count_status(failed, "not_run") == static_cast<int>(failed.at("cases").size()));
    CHECK(count_status(failed, "crashed") == 0);
}

TEST_CASE("a runner that ends before its hello beside other exercises is graded again alone, then crashed")
{
    // As when another exercise's fork bomb used up the processes the sandbox needs to start it; a
    // submission that exits at its start by itself does so again alone.
    const GradeRun run =
        grade_fake("exits_at_start", {{"scan_kogge_stone", "// FAKE_RUNNER: exits_at_start"}, {"scan_brent_kung", ""}},
                   {"--parallel", "2"});
    const json& failed = graded_again_alone(run, "scan_kogge_stone", "scan_brent_kung");
    CHECK(failed.at("points") == 0);
    CHECK(failed.at("message").get<std::string>().find("the runner ended before its first case") != std::string::npos);
    CHECK(count_status(failed, "crashed") == static_cast<int>(failed.at("cases").size()));
}

TEST_CASE("a case that finds the GPU's memory used up beside other exercises is graded again alone")
{
    const GradeRun run = grade_fake(
        "out_of_memory", {{"scan_kogge_stone", ""}, {"scan_brent_kung", "// FAKE_RUNNER: out_of_memory_at:3"}},
        {"--no-sandbox", "--parallel", "2"});
    // Alone, a submission that runs out of memory by itself does so again: the case stays failed.
    const json& bk = graded_again_alone(run, "scan_brent_kung", "scan_kogge_stone");
    CHECK(bk.at("cases").at(3).at("status") == "cuda_error");
    CHECK(count_status(bk, "pass") == static_cast<int>(bk.at("cases").size()) - 1);
    const json& ks = exercise(run, "scan_kogge_stone");
    // Graded alone means after the others were done.
    CHECK(bk.at("started_seconds").get<double>() >=
          ks.at("started_seconds").get<double>() + ks.at("seconds").get<double>());
}

// Red team 16: a grading of one exercise (--exercise X, as a class graded one assignment at a time)
// at --parallel above 1 was graded "beside others" (grade_beside_others asked only --parallel), but
// only a grading of more than one exercise is graded again alone: an exercise whose runner said
// cudaErrorMemoryAllocation was marked and never graded again, its work stayed, and
// check_host_link_again returned at once on the mark, so computes_on_gpu was never decided
// (tests/adversarial/scan_kogge_stone/computes_on_host_claims_out_of_memory). Now nothing is beside
// it: what its runner says is its own, and its work goes as every graded exercise's.
TEST_CASE("one exercise whose runner runs out of GPU memory is not left marked to be graded again alone")
{
    const GradeRun run = grade_fake("out_of_memory_alone", {{"scan_brent_kung", "// FAKE_RUNNER: out_of_memory_at:3"}},
                                    {"--no-sandbox", "--parallel", "2", "--exercise", "scan_brent_kung"});
    const json& bk = exercise(run, "scan_brent_kung");
    CHECK(bk.at("cases").at(3).at("status") == "cuda_error");
    CHECK(count_status(bk, "pass") == static_cast<int>(bk.at("cases").size()) - 1);
    CHECK_FALSE(fs::exists(test_dir("out_of_memory_alone") / "work" / "scan_brent_kung"));
}

TEST_CASE("printing a fake score sets nothing; a missing launcher is named")
{
    const GradeRun run = grade_fake(
        "forgery",
        {{"scan_kogge_stone", "// FAKE_RUNNER: fake_score"}, {"scan_brent_kung", "// FAKE_RUNNER: no_launcher"}},
        {"--exercise", "scan_kogge_stone,scan_brent_kung"});
    const json& ks = exercise(run, "scan_kogge_stone");
    CHECK(ks.at("points") == 0.0);
    CHECK(count_status(ks, "wrong") == static_cast<int>(ks.at("cases").size()));
    CHECK(ks.at("runner_output").get<std::string>().find("ALL TESTS PASSED") != std::string::npos);
    const json& bk = exercise(run, "scan_brent_kung");
    CHECK(bk.at("status") == "missing_launcher");
    CHECK(bk.at("message").get<std::string>().find("void scan_brent_kung(const float* in, float* out, int n)") !=
          std::string::npos);
}

TEST_CASE("a runner that says a batch is done before its outputs are written gains nothing")
{
    const GradeRun run = grade_fake("early_answer", {{"scan_kogge_stone", "// FAKE_RUNNER: early_answer"}},
                                    {"--exercise", "scan_kogge_stone", "--case", "n=67108864/int"});
    const json& c = exercise(run, "scan_kogge_stone").at("cases").at(0);
    CHECK(c.at("status") == "wrong");  // the timing server read the outputs before they were there
    CHECK(c.at("summary") == "a timed call computed a wrong output");
    CHECK(exercise(run, "scan_kogge_stone").at("speed_points") == 0.0);
    CHECK(run.results.at("calibration").at("copy_gb_s") == 100.0);
}

TEST_CASE("a speed case's timing: batches of calls timed by the timing server, every call checked, the rule recorded")
{
    const GradeRun honest =
        grade_fake("honest", {{"scan_kogge_stone", ""}}, {"--exercise", "scan_kogge_stone", "--case", "n=67108864/int"});
    const json& h = exercise(honest, "scan_kogge_stone").at("cases").at(0);
    REQUIRE(h.at("status") == "pass");
    const json& t = h.at("timing");
    const int calls = t.at("reps_per_batch").get<int>();
    CHECK(calls >= 4);
    CHECK(t.at("stopping_rule").at("name") == "median_rse");
    CHECK(t.at("fixed_cost_ms").get<double>() > 0);
    CHECK(t.at("student_window_ms").get<double>() > calls * 5.0);  // a 5 ms "kernel" a call in each window
    CHECK(t.at("student_ms").get<double>() > 0);
    CHECK(t.at("reference_ms").get<double>() > 0);
    CHECK(t.at("verified_reps").get<int>() == calls * (t.at("student").at("count").get<int>() + 1));  // and the warm-up
    CHECK(t.at("turns") == 1);

    const GradeRun slow = grade_fake("slow_kernel", {{"scan_kogge_stone", "// FAKE_RUNNER: slow_kernel"}},
                                     {"--exercise", "scan_kogge_stone", "--case", "n=67108864/int"});
    const json& s = exercise(slow, "scan_kogge_stone").at("cases").at(0);
    REQUIRE(s.at("status") == "pass");
    CHECK(s.at("timing").at("speedup_vs_reference").get<double>() < 0.5);  // 50 ms calls against 5 ms
}

TEST_CASE("batches disturbed at the start do not move the median")
{
    const GradeRun run = grade_fake("disturbed_once", {{"scan_kogge_stone", "// FAKE_RUNNER: disturbed_once"}},
                                    {"--exercise", "scan_kogge_stone", "--case", "n=67108864/int"});
    const json& c = exercise(run, "scan_kogge_stone").at("cases").at(0);
    REQUIRE(c.at("status") == "pass");
    // The honest batches count: 5 ms calls (plus what a loaded machine may charge), not 200.
    CHECK(c.at("timing").at("student_ms").get<double>() < 100.0);
}

TEST_CASE("speed that cannot be honest earns nothing: results replayed from an earlier call, impossible bandwidth")
{
    const GradeRun cached = grade_fake("cached_replay", {{"scan_kogge_stone", "// FAKE_RUNNER: cached_replay"}},
                                       {"--exercise", "scan_kogge_stone", "--case", "n=67108864/int"});
    const json& c = exercise(cached, "scan_kogge_stone").at("cases").at(0);
    CHECK(c.at("status") == "wrong");
    CHECK(c.at("summary") == "a timed call computed a wrong output");
    CHECK(c.at("findings").at(0).get<std::string>().find("inputs drawn from seed") != std::string::npos);
    CHECK(exercise(cached, "scan_kogge_stone").at("points") == 0.0);

    // Work skipped on most batches: every call of every batch is checked.
    const GradeRun skips = grade_fake("skips_most", {{"scan_kogge_stone", "// FAKE_RUNNER: skips_most"}},
                                      {"--exercise", "scan_kogge_stone", "--case", "n=67108864/int"});
    CHECK(exercise(skips, "scan_kogge_stone").at("cases").at(0).at("status") == "wrong");

    const GradeRun fast = grade_fake("too_fast", {{"scan_kogge_stone", "// FAKE_RUNNER: too_fast"}},
                                     {"--exercise", "scan_kogge_stone", "--case", "n=67108864/int"});
    const json& f = exercise(fast, "scan_kogge_stone").at("cases").at(0);
    // A time beyond the copy bandwidth, or none above the batches' fixed cost at all.
    const std::string note = f.at("timing").at("note").get<std::string>();
    CHECK((note.find("beyond the GPU's measured copy bandwidth") != std::string::npos ||
           note.find("no longer than the grader's own work") != std::string::npos));
    CHECK(exercise(fast, "scan_kogge_stone").at("speed_points") == 0.0);
}

TEST_CASE("messages written into the grader's channel are a protocol error, never a score")
{
    const GradeRun forged = grade_fake("forged_timing", {{"scan_kogge_stone", "// FAKE_RUNNER: forged_timing"}},
                                       {"--exercise", "scan_kogge_stone"});
    const json& ks = exercise(forged, "scan_kogge_stone");
    const json& timed = case_labelled(ks, "n=67108864/int");
    // An unasked "done" is an early answer to the next batch, or an answer to no command at all.
    CHECK((timed.at("status") == "protocol_error" || timed.at("status") == "wrong"));
    // The rest ran on; the forged message left in the channel may break the next case too.
    CHECK(count_status(ks, "pass") >= static_cast<int>(ks.at("cases").size()) - 2);
    CHECK(ks.at("speed_points") == 0.0);

    const GradeRun garbage = grade_fake("garbage_meta", {{"scan_kogge_stone", "// FAKE_RUNNER: garbage_meta"}},
                                        {"--exercise", "scan_kogge_stone"});
    const json& g = exercise(garbage, "scan_kogge_stone");
    CHECK(g.at("cases").at(2).at("status") == "protocol_error");
    CHECK(count_status(g, "pass") == static_cast<int>(g.at("cases").size()) - 1);
}

TEST_CASE("a wrong output that differs between two runs is reported as a race")
{
    const GradeRun run = grade_fake("racy", {{"scan_kogge_stone", "// FAKE_RUNNER: racy"}},
                                    {"--exercise", "scan_kogge_stone", "--case", "n=4096/int"});
    const json& c = exercise(run, "scan_kogge_stone").at("cases").at(0);
    CHECK(c.at("status") == "wrong");
    CHECK(c.at("detail").at("changes_between_runs") == true);
    // The race's finding comes after the one that names the mistake: first_fix still quotes that one.
    const std::string fix = exercise(run, "scan_kogge_stone").at("first_fix");
    CHECK(fix.find("): every wrong element equals the sum of the elements BEFORE it") != std::string::npos);
}

TEST_CASE("a process that escapes the runner's process group is killed all the same")
{
    const GradeRun run = grade_fake("escape", {{"scan_kogge_stone", "// FAKE_RUNNER: escape"}},
                                    {"--exercise", "scan_kogge_stone", "--case", "n=1/int"});
    CHECK(exercise(run, "scan_kogge_stone").at("points").get<double>() > 0);
    // The escapee named itself before the runner answered, so it existed; now it must be gone.
    CHECK(no_process_named("grader_escapee"));
}

TEST_CASE("submitted code runs in the sandbox, and no sandbox is an error of the environment, not a score")
{
    const GradeRun run = grade_fake("sandboxed", {{"scan_kogge_stone", "// FAKE_RUNNER: correct"}},
                                    {"--exercise", "scan_kogge_stone", "--case", "n=1/int"});
    const std::string sandbox = run.results.at("sandbox");
    CHECK(sandbox.find(sandbox_args().empty() ? "bubblewrap" : "none (--no-sandbox)") == 0);
    CHECK(run.exit_code == 0);  // every case passed
    CHECK_FALSE(fs::exists(test_dir("sandboxed") / "work" / "scan_kogge_stone"));

    const fs::path dir = test_dir("sandboxed");
    const auto refused = harness::run_command(
        {GRADE_EXECUTABLE, "--submission", (dir / "submission").string(), "--nvcc", FAKE_NVCC, "--bwrap",
         "/nonexistent/bwrap", "--output", (dir / "refused.json").string(), "--work-dir", (dir / "work2").string()},
        std::chrono::seconds(60));
    CHECK(refused.status.kind == harness::ExitStatus::Kind::exited);
    CHECK(refused.status.code == 3);
    CHECK(refused.output.find("cannot sandbox submitted code") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "refused.json"));
}

TEST_CASE("a symbolic link instead of a file is refused")
{
    const fs::path dir = test_dir("link_target");
    fs::create_directories(dir);
    std::ofstream(dir / "scan_kogge_stone.cu") << "// FAKE_RUNNER: correct\n";
    const fs::path link_dir = test_dir("link");
    fs::remove_all(link_dir);
    fs::create_directories(link_dir);
    fs::create_symlink(dir / "scan_kogge_stone.cu", link_dir / "scan_kogge_stone.cu");
    std::vector<std::string> command = {GRADE_EXECUTABLE,   "--submission",
                                        link_dir.string(),  "--exercise",
                                        "scan_kogge_stone", "--nvcc",
                                        FAKE_NVCC,          "--no-reference-timing",
                                        "--work-dir",       (link_dir / "work").string(),
                                        "--output",         (link_dir / "results.json").string()};
    command.insert(command.end(), sandbox_args().begin(), sandbox_args().end());
    const auto run = harness::run_command(test_support::with_own_gpu_lock(command), std::chrono::seconds(60));
    CHECK(run.status.code == 1);  // graded; the exercise failed
    const json results = json::parse(std::ifstream(link_dir / "results.json"));
    CHECK(results.at("exercises").at(0).at("status") == "invalid_submission");
    CHECK(results.at("exercises").at(0).at("message").get<std::string>().find("symbolic link") != std::string::npos);
}

TEST_CASE("one case by its label, and a usage error for an unknown one")
{
    const GradeRun run = grade_fake("one_case", {{"scan_kogge_stone", "// FAKE_RUNNER: exclusive_scan"}},
                                    {"--exercise", "scan_kogge_stone", "--case", "n=1025/int"});
    const json& cases = exercise(run, "scan_kogge_stone").at("cases");
    REQUIRE(cases.size() == 1);
    CHECK(cases[0].at("label") == "n=1025/int");
    CHECK(cases[0].at("detail").at("pattern") == "exclusive_scan");
    CHECK(cases[0].at("reproduce").get<std::string>().find("--case n=1025/int") != std::string::npos);

    const auto bad = harness::run_command(
        {GRADE_EXECUTABLE, "--submission", ".", "--exercise", "scan_kogge_stone", "--case", "n=7/none"},
        std::chrono::seconds(30));
    CHECK(bad.status.kind == harness::ExitStatus::Kind::exited);
    CHECK(bad.status.code == 2);
    CHECK(bad.output.find("no case 'n=7/none'") != std::string::npos);
}

TEST_CASE("--quiet prints the table and what to fix first; exit code 0 when every case passed, 1 when one did not")
{
    const GradeRun passed = grade_fake("quiet_pass", {{"scan_kogge_stone", "// FAKE_RUNNER: correct"}},
                                       {"--exercise", "scan_kogge_stone", "--case", "n=1025/int", "--quiet"});
    CHECK(passed.exit_code == 0);
    CHECK(passed.output.find("total") != std::string::npos);
    CHECK(passed.output.find("compiling") == std::string::npos);
    CHECK(passed.output.find("[1/1]") == std::string::npos);
    CHECK(passed.output.find("\033[") == std::string::npos);  // not a terminal: no colour

    const GradeRun failed = grade_fake("quiet_fail", {{"scan_kogge_stone", "// FAKE_RUNNER: exclusive_scan"}},
                                       {"--exercise", "scan_kogge_stone", "--case", "n=1025/int", "--quiet"});
    CHECK(failed.exit_code == 1);
    CHECK(failed.output.find("rerun:") == std::string::npos);
    // One line on what to fix first (grading/first_fix.hpp), from the checks' own sentence.
    CHECK(failed.output.find("scan_kogge_stone: Fix first: n=1025/int (the smallest failing case): every wrong "
                             "element equals the sum of the elements BEFORE it (an exclusive scan)") != std::string::npos);
    CHECK(failed.output.find("Rerun it: ") != std::string::npos);
    CHECK(passed.output.find("Fix first") == std::string::npos);
}

// Red team 16: another grading's runner that holds the GPU's memory made this grading's timing
// server fail its calibration (its buffers out of memory), and no speed case of the whole grading
// was timed. A calibration that fails is taken again once every exercise on the GPU (other
// gradings' too) has ended: grade takes every place first, in order.
TEST_CASE("a calibration that ran out of GPU memory is taken again once every exercise on the GPU has ended")
{
    const fs::path lock_dir = test_dir("gpu_lock_calibration");
    fs::remove_all(lock_dir);
    fs::create_directories(lock_dir);
    const harness::GpuLock lock(harness::gpu_lock_path(lock_dir.string(), "fake device (CPU)"));
    // Another grading's exercise, its runner holding the memory, until this test drops its place.
    harness::GpuLock::Hold other = lock.exercise_place(harness::GpuLock::most_places);
    const fs::path marker = test_dir("gpu_lock_calibration_marker") / "failed";
    fs::remove_all(marker.parent_path());
    fs::create_directories(marker.parent_path());
    ::setenv("FAKE_CALIBRATION_FAILS_ONCE", marker.c_str(), 1);
    auto grading = std::async(std::launch::async, [&] {
        return grade_fake("calibration_again", {{"scan_kogge_stone", "// FAKE_RUNNER: correct"}},
                          {"--gpu-lock-dir", lock_dir.string(), "--exercise", "scan_kogge_stone", "--case",
                           "n=67108864/int"});
    });
    // The first calibration fails (the marker appears), then grade waits for the place held here.
    for (int i = 0; i < 600 && !fs::exists(marker); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(fs::exists(marker));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    CHECK(grading.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
    other = {};
    const GradeRun run = grading.get();
    ::unsetenv("FAKE_CALIBRATION_FAILS_ONCE");
    CHECK(run.exit_code == 0);
    CHECK(run.output.find("measuring the GPU again once every exercise on it") != std::string::npos);
    const json& c = exercise(run, "scan_kogge_stone").at("cases").at(0);
    CHECK(c.at("status") == "pass");
    REQUIRE(c.contains("timing"));
    CHECK(c.at("timing").at("student_ms").get<double>() > 0);  // timed after all
    CHECK(run.results.at("calibration").at("copy_gb_s") == 100.0);
}

TEST_CASE("the GPU lock: grade waits for another grading's timing, and the wait costs the submission nothing")
{
    // The lock file of the fake device (tests/fake_toolchain: no uuid, so its name), in a directory
    // of this test's own.
    const fs::path lock_dir = test_dir("gpu_lock");
    fs::remove_all(lock_dir);
    fs::create_directories(lock_dir);
    const harness::GpuLock lock(harness::gpu_lock_path(lock_dir.string(), "fake device (CPU)"));
    auto with = [&](std::vector<std::string> more) {
        more.insert(more.begin(), {"--gpu-lock-dir", lock_dir.string(), "--exercise", "scan_kogge_stone"});
        return more;
    };
    const std::map<std::string, std::string> correct = {{"scan_kogge_stone", "// FAKE_RUNNER: correct"}};

    SUBCASE("another grading times: even an untimed case waits, longer than its limits, then passes")
    {
        harness::GpuLock::Hold timing = lock.hold(true);
        // Limits of 5 s (generous for a 1025-element case on a loaded machine), a wait of 7 s.
        auto grading = std::async(std::launch::async, [&] {
            return grade_fake("lock_excl", correct,
                              with({"--case", "n=1025/int", "--case-time-limit", "5", "--time-limit", "5"}));
        });
        CHECK(grading.wait_for(std::chrono::seconds(7)) == std::future_status::timeout);
        timing = {};
        const GradeRun run = grading.get();
        CHECK(run.exit_code == 0);
        const json& waited = exercise(run, "scan_kogge_stone").at("cases").at(0);
        CHECK(waited.at("status") == "pass");
        // The wait is reported (how long depends on how soon the grading reached the case).
        CHECK(waited.at("gpu_wait_seconds").get<double>() > 0);
        CHECK(waited.at("gpu_wait_seconds").get<double>() <= run.results.at("seconds").get<double>());
    }
    SUBCASE("another grading checks correctness: untimed cases share the GPU, a timed case waits")
    {
        harness::GpuLock::Hold checking = lock.hold(false);
        const GradeRun untimed = grade_fake("lock_shared", correct, with({"--case", "n=1025/int"}));
        CHECK(untimed.exit_code == 0);
        auto timed = std::async(std::launch::async, [&] {
            return grade_fake("lock_timed", correct, with({"--case", "n=67108864/int"}));
        });
        CHECK(timed.wait_for(std::chrono::seconds(4)) == std::future_status::timeout);
        checking = {};
        const GradeRun run = timed.get();
        CHECK(exercise(run, "scan_kogge_stone").at("cases").at(0).at("status") == "pass");
    }
}

TEST_CASE("a case holds the GPU lock only for its GPU work: not while its input is made, nor for its checks")
{
    const fs::path lock_dir = test_dir("gpu_lock_host");
    fs::remove_all(lock_dir);
    fs::create_directories(lock_dir);
    const harness::GpuLock lock(harness::gpu_lock_path(lock_dir.string(), "fake device (CPU)"));
    const fs::path log = test_dir("host_work") / "work" / "scan_kogge_stone" / "runner-1.log";
    // Waits (a minute at most) until the runner's log says `what`.
    auto log_says = [&](const std::string& what) {
        for (int i = 0; i < 1200; ++i) {
            std::ifstream in(log);
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            if (text.find(what) != std::string::npos) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    };
    // Another grading times: the case's input is made all the same.
    harness::GpuLock::Hold timing = lock.hold(true);
    auto grading = std::async(std::launch::async, [&] {
        return grade_fake("host_work", {{"scan_kogge_stone", "// FAKE_RUNNER: slow_host"}},
                          {"--gpu-lock-dir", lock_dir.string(), "--exercise", "scan_kogge_stone", "--case",
                           "n=1025/int", "--case-time-limit", "30", "--keep-work"});
    });
    CHECK(log_says("case 7 loaded"));
    timing = {};
    // Once its GPU work is done, the runner's host work (8 s of it) does not keep a timing waiting.
    REQUIRE(log_says("case 7 ran"));
    timing = lock.hold(true);
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text.find("case 7 sent") == std::string::npos);
    timing = {};
    const GradeRun run = grading.get();
    CHECK(run.exit_code == 0);
    CHECK(exercise(run, "scan_kogge_stone").at("cases").at(0).at("status") == "pass");
}

TEST_CASE("an exercise starts as soon as its own file is built, while the others still compile")
{
    const GradeRun run = grade_fake("streamed_builds",
                                    {{"scan_kogge_stone", "// FAKE_RUNNER: correct"},
                                     {"scan_brent_kung", "// FAKE_RUNNER: correct\n// FAKE_COMPILE_SLOW"}},
                                    {"--exercise", "scan_kogge_stone", "--exercise", "scan_brent_kung", "--parallel",
                                     "2"});
    CHECK(run.exit_code == 0);
    const json& quick = exercise(run, "scan_kogge_stone");
    const json& slow = exercise(run, "scan_brent_kung");
    CHECK(slow.at("compile_seconds").get<double>() >= 8);
    // The quick one began before the slow one's build (8 s of it) was done.
    CHECK(quick.at("started_seconds").get<double>() < slow.at("compile_seconds").get<double>());
    CHECK(quick.at("status") == "graded");
    CHECK(slow.at("status") == "graded");
    // Each exercise's lines, its build's first, in the order of the exercises asked for.
    const std::size_t quick_built = run.output.find("scan_kogge_stone                    compiled");
    const std::size_t slow_built = run.output.find("scan_brent_kung                     compiled");
    CHECK(quick_built < slow_built);
    CHECK(run.output.find("scan_kogge_stone (") > quick_built);
    CHECK(run.output.find("scan_kogge_stone (") < slow_built);
}

TEST_CASE("bytes that are not UTF-8, terminal controls and deep JSON from a submission cost only its own case")
{
    const std::string replaced = "\xEF\xBF\xBD";
    auto clean = [](const std::string& text) {
        return text.find('\x1B') == std::string::npos && text.find("\xC2\x9B") == std::string::npos &&
               text.find("owned") == std::string::npos;
    };
    // Compiler warnings and program output of bytes that are not UTF-8 and escape sequences, then a
    // CUDA error whose strings hold more. (grade_fake parses results.json, strict about UTF-8.)
    const GradeRun hostile =
        grade_fake("hostile_text", {{"scan_kogge_stone", "// FAKE_RUNNER: hostile_text\nFAKE_COMPILER_NOISE"}},
                   {"--exercise", "scan_kogge_stone", "--case", "n=1025/int"});
    CHECK(hostile.exit_code == 1);
    const json& ks = exercise(hostile, "scan_kogge_stone");
    CHECK(ks.at("status") == "graded");
    const json& failed = ks.at("cases").at(0);
    CHECK(failed.at("status") == "cuda_error");
    CHECK(failed.at("summary") == "cudaErrorIllegalAddress during launch");
    CHECK(failed.at("findings").at(0).get<std::string>().find("not UTF-8, red,  8-bit CSI,\r overwritten") !=
          std::string::npos);
    CHECK(clean(failed.at("detail").dump()));
    const std::string printed = ks.at("runner_output");
    CHECK(printed.find(replaced + replaced + " not UTF-8  8-bit reset\r overwritten") != std::string::npos);
    CHECK(clean(printed));
    CHECK(clean(ks.at("compile_output")));
    // The console: the finding cleaned, no carriage return of the submission's (not a terminal: no
    // colour either, so no escape sequence at all).
    CHECK(hostile.output.find("not UTF-8, red,  8-bit CSI,\n overwritten") != std::string::npos);
    CHECK(clean(hostile.output));
    CHECK(hostile.output.find('\r') == std::string::npos);

    // A message 500,000 arrays deep (copied, it would overflow the grader's stack).
    const GradeRun deep = grade_fake("deep_json", {{"scan_brent_kung", "// FAKE_RUNNER: deep_json"}},
                                     {"--exercise", "scan_brent_kung", "--case", "n=1025/int"});
    CHECK(exercise(deep, "scan_brent_kung").at("status") == "graded");
    CHECK(exercise(deep, "scan_brent_kung").at("cases").at(0).at("status") == "protocol_error");

    // The noisy warning in a compile error, which the console shows under the build's line.
    const GradeRun noisy =
        grade_fake("noisy_compile", {{"scan_hierarchical", "FAKE_COMPILER_NOISE\nFAKE_COMPILE_ERROR"}},
                   {"--exercise", "scan_hierarchical"});
    CHECK(exercise(noisy, "scan_hierarchical").at("status") == "compile_error");
    CHECK(clean(exercise(noisy, "scan_hierarchical").at("compile_output")));
    CHECK(noisy.output.find("warning: #warning " + replaced + replaced + " not UTF-8   title\n") != std::string::npos);
    CHECK(clean(noisy.output));
    CHECK(noisy.output.find('\r') == std::string::npos);
}

TEST_CASE("--sanitize: each tool's findings, a clean tool, a flood, an unfinished report, a missing tool")
{
    // The fake compute-sanitizer below the fake toolkit (tests/fake_toolchain/fake_compute_sanitizer.sh)
    // prints the same recorded report for every program: memcheck clean, one race, 3000 divergent
    // barriers, an uninitialized read without a summary.
    const fs::path rubric = test_dir("sanitize_rubric.json");
    std::ofstream(rubric) << R"({"sanitizer": {"tools": ["memcheck", "racecheck", "synccheck", "initcheck"], "cost_per_tool": 1}})";
    const GradeRun run = grade_fake("sanitize", {{"scan_kogge_stone", "// FAKE_RUNNER: correct"}},
                                    {"--exercise", "scan_kogge_stone", "--sanitize", "--rubric",
                                     rubric.string()});
    fs::remove(rubric);
    const json& e = exercise(run, "scan_kogge_stone");
    const json& s = e.at("sanitizer");
    CHECK(s.at("memcheck").at("checked") == true);
    CHECK(s.at("memcheck").at("findings").empty());
    const json& cases = s.at("memcheck").at("cases");
    CHECK(!cases.empty());
    CHECK(cases.size() <= 3);
    CHECK(s.at("memcheck").at("cases_failed").empty());  // outputs checked as usual: the fake is correct

    const json& race = s.at("racecheck").at("findings");
    REQUIRE(race.size() == 1);
    CHECK(race[0].at("kernel") == "reduce_kernel");
    CHECK(race[0].at("line") == 31);
    CHECK(race[0].at("other_line") == 29);
    CHECK(race[0].at("explanation").get<std::string>().find("__syncthreads() is missing") != std::string::npos);

    CHECK(s.at("synccheck").at("findings").size() == 10);  // the flood, bounded
    CHECK(s.at("synccheck").at("not_listed").get<int>() > 2000);

    CHECK(s.at("initcheck").at("checked") == false);  // never read as clean
    CHECK(s.at("initcheck").at("why").get<std::string>().find("its verdict is missing") != std::string::npos);
    CHECK(s.at("initcheck").at("findings").size() == 1);

    CHECK(s.at("tools_with_findings").size() == 3);
    CHECK(s.at("points_lost").get<double>() == doctest::Approx(3));
    CHECK(e.at("points").get<double>() == doctest::Approx(e.at("max_points").get<double>() - 3));
    CHECK(run.output.find("racecheck: 1 finding(s)") != std::string::npos);
    CHECK(run.output.find("memcheck: clean") != std::string::npos);

    // A compute-sanitizer that is not there: every tool "not checked", no point lost.
    const GradeRun missing =
        grade_fake("sanitize_missing", {{"scan_kogge_stone", "// FAKE_RUNNER: correct"}},
                   {"--exercise", "scan_kogge_stone", "--sanitize", "--compute-sanitizer", "/nonexistent/cs"});
    const json& m = exercise(missing, "scan_kogge_stone");
    for (const char* tool : {"memcheck", "racecheck", "synccheck", "initcheck"}) {
        CHECK(m.at("sanitizer").at(tool).at("checked") == false);
        CHECK(m.at("sanitizer").at(tool).at("why") == "compute-sanitizer not found at /nonexistent/cs: not checked");
    }
    CHECK(m.at("points") == m.at("max_points"));

    // Without --sanitize (nor the rubric's run): no sanitizer step.
    const GradeRun plain = grade_fake("sanitize_off", {{"scan_kogge_stone", "// FAKE_RUNNER: correct"}},
                                      {"--exercise", "scan_kogge_stone", "--case", "n=1025/int"});
    CHECK(exercise(plain, "scan_kogge_stone").at("sanitizer").is_null());
}

TEST_CASE("a build that could not start its processes beside the others is built again alone, then graded alone")
{
    // The compiler's message names the file's folder, as "Resource temporarily unavailable" (a
    // fork that failed) would: without the sandbox the compiler sees the file where it is.
    const GradeRun run =
        grade_fake("starved_build",
                   {{"Resource temporarily unavailable/scan_kogge_stone", "FAKE_COMPILE_ERROR"},
                    {"scan_brent_kung", "// FAKE_RUNNER: correct"}},
                   {"--no-sandbox", "--parallel", "2", "--exercise", "scan_kogge_stone,scan_brent_kung"});
    const std::string again =
        "scan_kogge_stone: its build could not start its processes beside the other exercises' "
        "runners; building it again, alone";
    const auto at = run.output.find(again);
    REQUIRE(at != std::string::npos);
    // Graded again after the build alone: its line a second time, after the neighbour's.
    CHECK(run.output.find("scan_kogge_stone: compile_error", at) != std::string::npos);
    CHECK(run.output.find("scan_brent_kung (") < at);
    CHECK(exercise(run, "scan_kogge_stone").at("status") == "compile_error");
    const json& bk = exercise(run, "scan_brent_kung");
    CHECK(count_status(bk, "pass") == static_cast<int>(bk.at("cases").size()));
    CHECK(run.output.find("scan_brent_kung: its build") == std::string::npos);
}

// Red team 16b: a runner that says cudaErrorMemoryAllocation in every exercise has each exercise
// graded again alone, each after waiting for every place of the GPU (other gradings' exercises
// too), one exercise at a time (GpuLock::every_place; test_gpu_lock has the lock's order). Beside it
// on the same GPU lock, as grade class grades two at once, another grading: both end, nothing
// deadlocks, the other's cases all pass, and what the claimer's runner says alone is its own.
TEST_CASE("a grading out of GPU memory in every exercise is graded again alone, each exercise holding every place; "
          "a grading beside it is unharmed")
{
    const fs::path lock_dir = test_dir("gpu_lock_every_exercise");
    fs::remove_all(lock_dir);
    fs::create_directories(lock_dir);
    const std::vector<std::string> options = {"--no-sandbox", "--parallel", "2", "--gpu-lock-dir", lock_dir.string(),
                                              "--exercise", "scan_kogge_stone,scan_brent_kung"};
    auto claiming = std::async(std::launch::async, [&] {
        return grade_fake("out_of_memory_everywhere",
                          {{"scan_kogge_stone", "// FAKE_RUNNER: out_of_memory_at:7"},
                           {"scan_brent_kung", "// FAKE_RUNNER: out_of_memory_at:7"}},
                          options);
    });
    const GradeRun beside = grade_fake(
        "beside_out_of_memory",
        {{"scan_kogge_stone", "// FAKE_RUNNER: correct"}, {"scan_brent_kung", "// FAKE_RUNNER: correct"}}, options);
    const GradeRun claimed = claiming.get();
    for (const std::string name : {"scan_kogge_stone", "scan_brent_kung"}) {
        CAPTURE(name);
        const json& graded = exercise(beside, name);
        CHECK(count_status(graded, "pass") == static_cast<int>(graded.at("cases").size()));
        CHECK(claimed.output.find(name + ": waiting for every other exercise on this GPU") != std::string::npos);
        const json& again = exercise(claimed, name);
        CHECK(again.at("cases").at(7).at("status") == "cuda_error");  // alone too: its own doing
        CHECK(count_status(again, "pass") == static_cast<int>(again.at("cases").size()) - 1);
    }
}
