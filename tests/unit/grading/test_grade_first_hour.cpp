// What a student meets in the first hour, end to end with the fake toolchain (tests/fake_toolchain):
// failing cases are the grading's answer (exit status 1, and a last line counting them), never a
// failed build step (cmake/GraderGradeStep.cmake); a file named close to an exercise's is named with
// the name it needs; and `grade --build-only` checks the builds on a machine without a GPU.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "grading/json_schema.hpp"
#include "grading/preflight.hpp"
#include "harness/process.hpp"
#include "support/sandbox_args.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Run {
    int code = -1;
    std::string output;
    json results;
};

// A folder of this test process's own, made afresh, with submission/ holding `files` (name -> text).
fs::path submission_dir(const std::string& name, const std::map<std::string, std::string>& files)
{
    const fs::path dir = fs::temp_directory_path() / ("grader_first_hour_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir / "submission");
    for (const auto& [file, text] : files) std::ofstream(dir / "submission" / file) << text << "\n";
    return dir;
}

// A copy of the fake toolchain whose runners stand in for `device` (preflight.hpp's fake_device_file).
std::string fake_toolchain_posing_as(const fs::path& dir, const std::string& device)
{
    // The whole root: nvcc "links" by copying fake_runner from beside itself.
    fs::remove_all(dir / "toolchain");
    fs::copy(fs::path(FAKE_NVCC).parent_path().parent_path(), dir / "toolchain", fs::copy_options::recursive);
    std::ofstream(dir / "toolchain" / grading::fake_device_file) << device << "\n";
    return (dir / "toolchain" / "bin" / "nvcc").string();
}

Run grade(const fs::path& dir, const std::vector<std::string>& args)
{
    std::vector<std::string> command = {GRADE_EXECUTABLE,           "--submission", (dir / "submission").string(),
                                        "--work-dir",               (dir / "work").string(),
                                        "--output",                 (dir / "results.json").string(),
                                        "--case-time-limit",        "15"};
    command.insert(command.end(), sandbox_args().begin(), sandbox_args().end());
    command.insert(command.end(), args.begin(), args.end());
    const auto run = harness::run_command(test_support::with_own_gpu_lock(command), std::chrono::minutes(4), 1 << 20);
    INFO(run.output);
    REQUIRE(run.status.kind == harness::ExitStatus::Kind::exited);
    Run result{run.status.code, run.output, json()};
    if (fs::exists(dir / "results.json")) {
        result.results = json::parse(std::ifstream(dir / "results.json"));
        CHECK(grading::validate_json_schema(test_support::results_schema(), result.results).empty());
    }
    return result;
}

const json& exercise(const Run& run, const std::string& name)
{
    for (const auto& e : run.results.at("exercises"))
        if (e.at("name") == name) return e;
    FAIL("no exercise " << name);
    throw;
}

std::string last_line(const std::string& text)
{
    const std::size_t end = text.find_last_not_of('\n');
    const std::size_t start = text.rfind('\n', end);
    return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

// The build step that grades (the handout's grade_all, the demo) run on a stand-in for grade that
// ends with `status`: the step's own exit status.
int grade_step(int status)
{
    const fs::path script = fs::temp_directory_path() / ("grader_step_" + std::to_string(::getpid()) + ".sh");
    std::ofstream(script) << "#!/bin/sh\necho 'graded: 3 of 24 cases fail in 1 exercise'\nexit " << status << "\n";
    fs::permissions(script, fs::perms::owner_all);
    const auto run = harness::run_command({GRADER_CMAKE_COMMAND, "-P", GRADER_GRADE_STEP, "--", script.string()},
                                          std::chrono::seconds(60));
    INFO(run.output);
    CHECK(run.output.find("graded: 3 of 24 cases fail in 1 exercise") != std::string::npos);
    fs::remove(script);
    REQUIRE(run.status.kind == harness::ExitStatus::Kind::exited);
    return run.status.code;
}

}  // namespace

TEST_CASE("failing cases: exit status 1, the table says failed with the count, the last line counts them")
{
    const fs::path dir = submission_dir("failing", {{"scan_kogge_stone.cu", "// FAKE_RUNNER: correct"},
                                                    {"scan_brent_kung.cu", "// FAKE_RUNNER: exclusive_scan"}});
    const Run run = grade(dir, {"--nvcc", FAKE_NVCC, "--reference-runner", FAKE_RUNNER, "--reps", "5", "--exercise",
                                "scan_kogge_stone,scan_brent_kung,scan_hierarchical"});
    INFO(run.output);
    CHECK(run.code == 1);
    const json& ks = exercise(run, "scan_kogge_stone");
    const json& bk = exercise(run, "scan_brent_kung");
    int failing = 0;
    for (const auto& c : bk.at("cases")) failing += c.at("status") != "pass";
    REQUIRE(failing > 0);
    const std::size_t total = ks.at("cases").size() + bk.at("cases").size();
    CHECK(last_line(run.output) == "graded: " + std::to_string(failing) + " of " + std::to_string(total) +
                                       " cases fail in 1 exercise; 1 not submitted");
    CHECK(run.output.find("passed") != std::string::npos);
    CHECK(run.output.find("failed (" + std::to_string(failing) + " of " + std::to_string(bk.at("cases").size()) +
                          ")") != std::string::npos);
}

TEST_CASE("the build step that grades: failing cases pass the step, a machine that cannot grade fails it")
{
    CHECK(grade_step(0) == 0);
    CHECK(grade_step(1) == 0);  // graded; the console's last line says what fails
    CHECK(grade_step(2) != 0);  // usage error
    CHECK(grade_step(3) != 0);  // no GPU, no compiler, ...
}

TEST_CASE("a file named close to an exercise's: not submitted, with the name it needs, on the console too")
{
    const fs::path dir = submission_dir("near", {{"kogge_stone.cu", "// FAKE_RUNNER: correct"},
                                                 {"Scan_Brent_Kung.cu", "// FAKE_RUNNER: correct"},
                                                 {"scan_hierarchical (1).cu", "// FAKE_RUNNER: correct"}});
    const std::string nvcc = fake_toolchain_posing_as(dir, R"({"error": "no GPU in this test"})");
    const Run run = grade(dir, {"--nvcc", nvcc, "--build-only", "--exercise",
                                "scan_kogge_stone,scan_brent_kung,scan_hierarchical"});
    INFO(run.output);
    CHECK(run.code == 0);  // nothing submitted that fails to build
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"scan_kogge_stone", "kogge_stone.cu: did you mean scan_kogge_stone.cu?"},
        {"scan_brent_kung", "Scan_Brent_Kung.cu: did you mean scan_brent_kung.cu?"},
        {"scan_hierarchical", "scan_hierarchical (1).cu: did you mean scan_hierarchical.cu?"}};
    for (const auto& [name, hint] : expected) {
        const json& e = exercise(run, name);
        CHECK(e.at("status") == "not_submitted");
        CHECK(e.at("message").get<std::string>().find(hint) != std::string::npos);
        CHECK(run.output.find(hint) != std::string::npos);
    }
}

TEST_CASE("--build-only on a machine without a GPU: built, compile_error, invalid_submission; no case runs")
{
    const fs::path dir = submission_dir(
        "build_only", {{"scan_kogge_stone.cu", "// FAKE_RUNNER: correct"},
                       {"scan_brent_kung.cu", "FAKE_COMPILE_ERROR"},
                       {"scan_hierarchical.cu", "// FAKE_RUNNER: correct\n// FAKE_DEFINES: main"},
                       {"conv2d_tiled.cu", "// FAKE_RUNNER: correct\n// FAKE_INCLUDES: @ROOT@/include/cccl/thrust/scan.h"}});
    const std::string nvcc = fake_toolchain_posing_as(dir, R"({"error": "no GPU in this test"})");
    // Without --build-only this machine cannot grade at all.
    const Run refused = grade(dir, {"--nvcc", nvcc, "--exercise", "scan_kogge_stone"});
    CHECK(refused.code == 3);
    CHECK(refused.output.find("no usable GPU") != std::string::npos);

    const Run run = grade(dir, {"--nvcc", nvcc, "--build-only", "--exercise",
                                "scan_kogge_stone,scan_brent_kung,scan_hierarchical,conv1d_tiled,conv2d_tiled"});
    INFO(run.output);
    CHECK(run.code == 1);
    CHECK(run.output.find("no usable GPU") == std::string::npos);
    CHECK(exercise(run, "scan_kogge_stone").at("status") == "built");
    CHECK(exercise(run, "scan_brent_kung").at("status") == "compile_error");
    CHECK(exercise(run, "scan_hierarchical").at("status") == "invalid_submission");
    CHECK(exercise(run, "conv1d_tiled").at("status") == "not_submitted");
    // Built, but calling a library to do the work: said, and no exit code 0 for it.
    const json& library = exercise(run, "conv2d_tiled");
    CHECK(library.at("status") == "built");
    CHECK(library.at("message").get<std::string>().find("calls Thrust") != std::string::npos);
    for (const auto& e : run.results.at("exercises")) {
        CHECK(e.at("cases").empty());
        CHECK(e.at("points") == 0.0);
    }
    CHECK(last_line(run.output) == "checked: 1 file builds and passes the build checks; 1 exercise uses a library it "
                                   "may not; 1 not submitted; 1 compile error; 1 invalid submission");
    const Run library_only = grade(dir, {"--nvcc", nvcc, "--build-only", "--exercise", "conv2d_tiled"});
    CHECK(library_only.code == 1);

    // Every submitted file builds: exit status 0.
    const Run good = grade(dir, {"--nvcc", nvcc, "--build-only", "--exercise", "scan_kogge_stone,conv1d_tiled"});
    CHECK(good.code == 0);
    CHECK(last_line(good.output) == "checked: 1 file builds and passes the build checks; 1 not submitted");
}

TEST_CASE("a launcher that launches no kernel passes neither --build-only nor a grading (exit 1), as it scores nothing")
{
    // Red team: --build-only said "builds and passes the build checks" (exit 0), and a grading
    // "every case passed" (exit 0), of a file whose points a grading takes (no kernel launched).
    const fs::path dir = submission_dir("no_kernel", {{"scan_kogge_stone.cu", "// FAKE_RUNNER: correct\nFAKE_LAUNCHES_NO_KERNEL"}});
    const std::string nvcc = fake_toolchain_posing_as(dir, R"({"error": "no GPU in this test"})");
    const Run checked = grade(dir, {"--nvcc", nvcc, "--build-only", "--exercise", "scan_kogge_stone"});
    INFO(checked.output);
    CHECK(checked.code == 1);
    CHECK(exercise(checked, "scan_kogge_stone").at("status") == "built");
    CHECK(last_line(checked.output).find("no file builds and passes the build checks") != std::string::npos);
    CHECK(last_line(checked.output).find("1 exercise scores no points") != std::string::npos);

    const Run graded = grade(dir, {"--nvcc", FAKE_NVCC, "--reference-runner", FAKE_RUNNER, "--reps", "5", "--exercise",
                                   "scan_kogge_stone"});
    INFO(graded.output);
    const json& e = exercise(graded, "scan_kogge_stone");
    for (const auto& c : e.at("cases")) CHECK(c.at("status") == "pass");
    CHECK(e.at("points") == 0.0);
    CHECK(graded.code == 1);
    CHECK(last_line(graded.output).find("1 exercise scores no points") != std::string::npos);
}
