// Each grading's own work directory (grading/work_directory.hpp): two gradings started from one
// directory give the results each gives alone, and a directory named for one is refused to another.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <future>

#include <unistd.h>

#include "grading/work_directory.hpp"
#include "harness/process.hpp"
#include "harness/sandbox.hpp"
#include "support/sandbox_args.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using test_support::fresh_dir;

std::vector<fs::path> entries(const fs::path& dir)
{
    std::vector<fs::path> found;
    if (fs::exists(dir))
        for (const auto& e : fs::directory_iterator(dir)) found.push_back(e.path());
    return found;
}


// `grade` on one fake file, from `cwd`, with `extra` arguments; the submission is made in `cwd`.
harness::CommandResult grade_in(const fs::path& cwd, const std::string& name, const std::string& behaviour,
                                const std::vector<std::string>& extra)
{
    fs::create_directories(cwd / name);
    std::ofstream(cwd / name / "scan_kogge_stone.cu") << "// FAKE_RUNNER: " << behaviour << "\n";
    std::vector<std::string> command = {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", cwd.string(), GRADE_EXECUTABLE,
                                        "--submission", name, "--exercise", "scan_kogge_stone", "--nvcc", FAKE_NVCC,
                                        "--reference-runner", FAKE_RUNNER, "--output", name + ".json",
                                        "--case-time-limit", "15", "--reps", "5", "--quiet"};
    command.insert(command.end(), sandbox_args().begin(), sandbox_args().end());
    command.insert(command.end(), extra.begin(), extra.end());
    return harness::run_command(test_support::with_own_gpu_lock(command), std::chrono::minutes(3), 1 << 20);
}

std::map<std::string, std::string> statuses(const fs::path& results)
{
    std::map<std::string, std::string> by_label;
    const json j = json::parse(std::ifstream(results));
    for (const auto& c : j.at("exercises").at(0).at("cases")) by_label[c.at("label")] = c.at("status");
    return by_label;
}

}  // namespace

TEST_CASE("without --work-dir each claim is a fresh directory of its own, removed afterwards unless kept")
{
    const fs::path parent = fresh_dir("fresh") / "grader-work";
    std::string first_path, kept_path;
    {
        const grading::WorkDirectory first = grading::WorkDirectory::claim(parent.string(), false);
        grading::WorkDirectory second = grading::WorkDirectory::claim(parent.string(), false);
        first_path = first.path();
        CHECK(first.fresh());
        CHECK(first.path() != second.path());
        CHECK(fs::path(first.path()).parent_path() == fs::absolute(parent));
        CHECK((fs::status(first.path()).permissions() & fs::perms::others_exec) != fs::perms::none);
        std::ofstream(fs::path(first.path()) / "log") << "x";
        second.keep();
        kept_path = second.path();
    }
    CHECK_FALSE(fs::exists(first_path));
    CHECK(fs::is_directory(kept_path));
    fs::remove_all(parent.parent_path());
}

TEST_CASE("a directory named with --work-dir is locked: a second claim is refused until the first ends")
{
    const fs::path dir = fresh_dir("named") / "work";
    {
        const grading::WorkDirectory held = grading::WorkDirectory::claim(dir.string(), true);
        CHECK_FALSE(held.fresh());
        CHECK(held.path() == fs::absolute(dir).string());
        try {
            grading::WorkDirectory::claim(dir.string(), true);
            FAIL("a second claim of a locked directory succeeded");
        } catch (const grading::WorkDirectoryError& e) {
            CHECK(std::string(e.what()).find("in use by another grading") != std::string::npos);
        }
    }
    CHECK(fs::is_directory(dir));  // a named directory stays
    CHECK_NOTHROW(grading::WorkDirectory::claim(dir.string(), true));
    fs::remove_all(dir.parent_path());
}

TEST_CASE("a work directory that cannot be made is a clear error")
{
    const fs::path dir = fresh_dir("unmakeable");
    std::ofstream(dir / "a_file") << "x";
    CHECK_THROWS_AS(grading::WorkDirectory::claim((dir / "a_file" / "work").string(), false),
                    grading::WorkDirectoryError);
    fs::remove_all(dir);
}

TEST_CASE("two gradings started from one directory give the results each gives alone")
{
    const fs::path cwd = fresh_dir("together");
    auto correct = std::async(std::launch::async, [&] { return grade_in(cwd, "correct", "correct", {}); });
    auto wrong = std::async(std::launch::async, [&] { return grade_in(cwd, "wrong", "exclusive_scan", {}); });
    const harness::CommandResult a = correct.get(), b = wrong.get();
    INFO(a.output);
    INFO(b.output);
    REQUIRE(a.status.kind == harness::ExitStatus::Kind::exited);
    REQUIRE(b.status.kind == harness::ExitStatus::Kind::exited);
    CHECK(a.status.code == 0);
    CHECK(b.status.code == 1);
    for (const auto& [label, status] : statuses(cwd / "correct.json")) CHECK_MESSAGE(status == "pass", label);
    int wrong_cases = 0;
    for (const auto& [label, status] : statuses(cwd / "wrong.json")) wrong_cases += status == "wrong";
    CHECK(wrong_cases > 0);
    CHECK(entries(cwd / "grader-work").empty());  // each grading's own directory went with it
    fs::remove_all(cwd);
}

TEST_CASE("grade refuses a --work-dir another grading holds, grading nothing (exit 3)")
{
    const fs::path cwd = fresh_dir("refused");
    const grading::WorkDirectory held = grading::WorkDirectory::claim((cwd / "shared").string(), true);
    const harness::CommandResult run = grade_in(cwd, "correct", "correct", {"--work-dir", "shared"});
    INFO(run.output);
    REQUIRE(run.status.kind == harness::ExitStatus::Kind::exited);
    CHECK(run.status.code == 3);
    CHECK(run.output.find("in use by another grading") != std::string::npos);
    CHECK_FALSE(fs::exists(cwd / "correct.json"));
}
