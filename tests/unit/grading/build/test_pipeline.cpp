// What the build finds, through `grade` end to end with the fake toolchain (tests/fake_toolchain),
// in the sandbox where bubblewrap works here: an odd submission tree and a compiler that prints
// bytes that are no text each end as their own exercise's status, and results.json is written,
// valid, with every exercise in it.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "grading/json_schema.hpp"
#include "harness/process.hpp"
#include "harness/sandbox.hpp"
#include "odd_tree.hpp"
#include "toolchain_copy.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path test_dir(const std::string& name)
{
    const fs::path dir = fs::temp_directory_path() / ("grader_build_pipeline_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir / "submission");
    return dir;
}

struct GradeRun {
    json results;
    std::string output;
    int exit_code = -1;
};

// grade on dir/submission with `nvcc`, results in dir/results.json, checked against the schema.
GradeRun grade(const fs::path& dir, const std::string& nvcc, const std::vector<std::string>& args)
{
    std::vector<std::string> command = {GRADE_EXECUTABLE,      "--submission", (dir / "submission").string(),
                                        "--nvcc",              nvcc,           "--no-reference-timing",
                                        "--case-time-limit",   "15",            "--work-dir",
                                        (dir / "work").string(), "--output",   (dir / "results.json").string()};
    std::string why;
    if (!harness::Sandbox::find(why)) {
        MESSAGE("no sandbox on this machine, grading with --no-sandbox: " << why);
        command.push_back("--no-sandbox");
    }
    command.insert(command.end(), args.begin(), args.end());
    const auto run = harness::run_command(test_support::with_own_gpu_lock(command), std::chrono::minutes(4), 1 << 20);
    INFO(run.output);
    REQUIRE(run.status.kind == harness::ExitStatus::Kind::exited);
    REQUIRE((run.status.code == 0 || run.status.code == 1));
    std::ifstream file(dir / "results.json");
    REQUIRE(file);
    GradeRun result;
    REQUIRE_NOTHROW(result.results = json::parse(file));  // strict: every string valid UTF-8
    result.output = run.output;
    result.exit_code = run.status.code;
    const auto errors =
        grading::validate_json_schema(test_support::results_schema(), result.results);
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

std::string message(const GradeRun& run, const std::string& name)
{
    return exercise(run, name).value("message", std::string());
}

using test_support::contains;

}  // namespace

TEST_CASE("an odd submission tree: links, loops, a FIFO, a folder, odd names; every exercise in results.json")
{
    const fs::path dir = test_dir("odd_tree");
    const fs::path s = dir / "submission";
    make_odd_tree(s);

    const GradeRun run = grade(dir, FAKE_NVCC, {});
    CHECK(run.exit_code == 1);
    const json& exercises = run.results.at("exercises");
    CHECK(exercises.size() == 10);  // every exercise of the course, graded or not
    for (const char* name : {"scan_kogge_stone", "scan_brent_kung", "scan_hierarchical", "conv1d_tiled",
                             "reduce_first_add_during_load"}) {
        CAPTURE(name);
        CHECK(exercise(run, name).at("status") == "invalid_submission");
    }
    CHECK(contains(message(run, "scan_kogge_stone"), "is a symbolic link (to /etc/passwd)"));
    CHECK(contains(message(run, "scan_brent_kung"), "which loops"));
    CHECK(contains(message(run, "scan_hierarchical"), "FIFO"));
    CHECK(contains(message(run, "conv1d_tiled"), "is a folder"));
    CHECK(exercise(run, "reduce_interleaved_divergent").at("status") == "not_submitted");

    CHECK(exercise(run, "conv2d_tiled").at("status") == "graded");
    const json& odd_name = exercise(run, "reduce_sequential_addressing");
    CHECK(odd_name.at("status") == "graded");
    const std::string source = odd_name.at("source");
    CHECK(contains(source, "/caf\xEF\xBF\xBD/reduce_sequential_addressing.cu"));  // 0xe9: U+FFFD; ESC [31m: gone
    fs::remove_all(dir);
}

TEST_CASE("a compiler that prints bytes that are no text and terminal sequences: results.json is valid")
{
    const fs::path dir = test_dir("odd_compiler");
    const std::string nvcc = fake_toolchain_copy(
        FAKE_NVCC, dir / "toolchain", "printf 'warning: \\377\\376 \\033[31mred\\033[0m \\033]0;title\\007\\n' >&2");
    std::ofstream(dir / "submission" / "scan_kogge_stone.cu") << "// FAKE_RUNNER: correct\n";
    std::ofstream(dir / "submission" / "scan_brent_kung.cu") << "FAKE_COMPILE_ERROR\n";
    const GradeRun run = grade(dir, nvcc, {"--exercise", "scan_kogge_stone,scan_brent_kung"});
    const json& ok = exercise(run, "scan_kogge_stone");
    CHECK(ok.at("status") == "graded");
    const std::string output = ok.at("compile_output");
    CHECK(contains(output, "warning: \xEF\xBF\xBD\xEF\xBF\xBD red"));
    CHECK_FALSE(contains(output, "\x1b"));
    const json& failed = exercise(run, "scan_brent_kung");
    CHECK(failed.at("status") == "compile_error");
    CHECK(contains(failed.at("compile_output").get<std::string>(), "error: expected a"));
    fs::remove_all(dir);
}

TEST_CASE("code the student did not write, through grade: refused by default, named with code_checks \"name\"")
{
    const fs::path dir = test_dir("foreign_code");
    std::ofstream(dir / "submission" / "scan_kogge_stone.cu") << "// FAKE_CALLS: fork getenv\n";
    const GradeRun refused = grade(dir, FAKE_NVCC, {"--exercise", "scan_kogge_stone"});
    const json& r = exercise(refused, "scan_kogge_stone");
    CHECK(r.at("status") == "invalid_submission");
    CHECK(r.at("points") == 0);
    CHECK(contains(r.at("message").get<std::string>(), "scan_kogge_stone.cu calls `fork`, which starts or signals"));
    const json& checks = r.at("code_checks");
    CHECK(checks.at("mode") == "refuse");
    REQUIRE(checks.at("findings").size() == 2);
    CHECK(contains(checks.at("findings")[1].get<std::string>(), "calls `getenv`"));
    // The fake compiler keeps no fatbin and no PTX: said, not silently passed.
    CHECK(contains(checks.at("not_checked").dump(), "the GPU code section"));
    CHECK(checks.at("reference").at("compared") == false);

    std::ofstream(dir / "rubric.json") << R"({"code_checks": "name"})";
    const GradeRun named = grade(dir, FAKE_NVCC, {"--exercise", "scan_kogge_stone", "--rubric", (dir / "rubric.json").string()});
    const json& n = exercise(named, "scan_kogge_stone");
    CHECK(n.at("status") == "graded");
    CHECK(n.at("correctness_points") == 8);  // every case passed (no speed points without the reference timed)
    CHECK(contains(n.at("message").get<std::string>(), "for course staff to review: calls `fork`"));
    CHECK(n.at("code_checks").at("mode") == "name");
    CHECK(n.at("code_checks").at("findings").size() == 2);
    fs::remove_all(dir);
}

TEST_CASE("a result computed without a kernel: every case passes, no correctness points, and the reason")
{
    const fs::path dir = test_dir("no_kernel");
    std::ofstream(dir / "submission" / "scan_kogge_stone.cu") << "// FAKE_RUNNER: correct\n// FAKE_LAUNCHES_NO_KERNEL\n";
    std::ofstream(dir / "submission" / "scan_brent_kung.cu") << "// FAKE_RUNNER: correct\n";
    const GradeRun run = grade(dir, FAKE_NVCC, {"--exercise", "scan_kogge_stone,scan_brent_kung"});
    const json& cpu = exercise(run, "scan_kogge_stone");
    CHECK(cpu.at("status") == "graded");
    for (const auto& c : cpu.at("cases")) CHECK(c.at("status") == "pass");
    CHECK(cpu.at("correctness_points") == 0);
    CHECK(cpu.at("points") == 0);
    CHECK(contains(cpu.at("message").get<std::string>(), "no points: your launcher never launches a kernel"));
    const json& technique = cpu.at("technique");
    CHECK(technique.at("missing") == json::array({"launches_kernel"}));
    const json& launch = technique.at("checks").at("launches_kernel");
    CHECK(launch.at("found") == false);
    CHECK(launch.at("required") == true);
    // The fake compiler keeps no PTX: what only the PTX shows is not checked, never a verdict.
    const json& shared = technique.at("checks").at("uses_shared_memory");
    CHECK(shared.at("found").is_null());
    CHECK(contains(shared.at("not_checked").get<std::string>(), "kept no PTX"));
    CHECK(technique.at("kernels").is_null());
    CHECK(technique.at("resources").at("checked") == false);
    CHECK(contains(run.output, "technique: scan_kogge_stone: never launches a kernel (no points)"));

    // The same file with a kernel launch scores as before.
    const json& gpu = exercise(run, "scan_brent_kung");
    CHECK(gpu.at("correctness_points").get<double>() == doctest::Approx(8));  // the default rubric's
    CHECK(gpu.at("technique").at("missing") == json::array());
    CHECK(gpu.at("technique").at("checks").at("launches_kernel").at("found") == true);
    fs::remove_all(dir);
}
