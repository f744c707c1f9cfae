// `grade class` with hidden cases (grading/hidden_cases.hpp), the fake toolchain standing in for the
// GPU: the secret from the class's environment reaches every student's grade (their hidden seeds are
// the secret's) and nothing else: no file under OUT, no command line; each student's files for
// students (gradescope.json, summary.md, student-results.json, ...) say of a hidden case only whether
// it passed; without a secret the class grades nobody.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "grading/hidden_cases.hpp"
#include "grading/json_schema.hpp"
#include "harness/process.hpp"
#include "support/sandbox_args.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string secret_text = "class-secret-of-the-course-5Wq2Lm9x";

using test_support::file_text;

fs::path make_class(const std::string& name)
{
    const fs::path dir = fs::temp_directory_path() / ("grader_class_hidden_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir);
    for (const auto& [student, behaviour] : {std::pair<std::string, std::string>{"alice", "spy"}, {"bob", "exclusive_scan"}}) {
        fs::create_directories(dir / "submissions" / student);
        std::ofstream(dir / "submissions" / student / "scan_kogge_stone.cu") << "// FAKE_RUNNER: " << behaviour << "\n";
    }
    std::ofstream(dir / "rubric.json") << R"({"hidden_cases": {"scan_kogge_stone": [{"n": 777777}]}})";
    return dir;
}

harness::CommandResult grade_class(const fs::path& dir, bool with_secret, const std::string& secret = secret_text)
{
    std::vector<std::string> command = {GRADE_EXECUTABLE, "class", "--submissions", (dir / "submissions").string(),
                                        "--output-dir", (dir / "out").string(), "--nvcc", FAKE_NVCC,
                                        "--reference-runner", FAKE_RUNNER, "--exercise", "scan_kogge_stone",
                                        "--rubric", (dir / "rubric.json").string(), "--case", "n=777777/int",
                                        "--case-time-limit", "10", "--reps", "3"};
    command.insert(command.end(), sandbox_args().begin(), sandbox_args().end());
    if (with_secret) ::setenv(grading::secret_variable, secret.c_str(), 1);
    const auto run = harness::run_command(test_support::with_own_gpu_lock(command), std::chrono::minutes(5), 1 << 20);
    ::unsetenv(grading::secret_variable);
    INFO(run.output);
    REQUIRE(run.status.kind == harness::ExitStatus::Kind::exited);
    return run;
}

}  // namespace

TEST_CASE("grade class hands the secret to each student's grade, and to nothing else")
{
    const fs::path dir = make_class("secret");
    const auto run = grade_class(dir, true);
    INFO(run.output);
    CHECK(run.status.code == 1);  // bob's exclusive scan fails the hidden case
    const grading::HiddenCaseSecret secret(secret_text, grading::HiddenCaseSecret::Source::environment);
    const std::string seed = harness::hex64(secret.seed("scan_kogge_stone", "n=777777/int"));
    const json schema = test_support::results_schema();
    for (const char* student : {"alice", "bob"}) {
        const fs::path folder = dir / "out" / "students" / student;
        const json results = json::parse(file_text(folder / "results.json"));
        CHECK(grading::validate_json_schema(schema, results).empty());
        const json& c = results.at("exercises").at(0).at("cases").at(0);
        CHECK(c.at("label") == "n=777777/int");
        CHECK(c.at("hidden") == true);
        CHECK(c.at("seed") == seed);
        CHECK(c.at("status") == (std::string(student) == "alice" ? "pass" : "wrong"));
        CHECK(results.at("hidden_cases").at("secret_id") == secret.id());
        for (const char* name : {"gradescope.json", "prairielearn.json", "junit.xml", "summary.md", "student-results.json"}) {
            const std::string text = file_text(folder / name);
            INFO(student << "/" << name);
            REQUIRE_FALSE(text.empty());
            CHECK(text.find("777777") == std::string::npos);
            CHECK(text.find(seed.substr(2)) == std::string::npos);
            CHECK(text.find("spy:") == std::string::npos);
        }
        CHECK(file_text(folder / "student-results.json").find(std::string(student) == "alice" ? "\"pass\"" : "\"wrong\"") !=
              std::string::npos);
    }
    // The secret: in no file under OUT (grade.log, the records, alice's spy's output included).
    for (const auto& entry : fs::recursive_directory_iterator(dir / "out"))
        if (entry.is_regular_file()) CHECK_MESSAGE(file_text(entry.path()).find(secret_text) == std::string::npos, entry.path());
    CHECK(run.output.find(secret_text) == std::string::npos);

    // Red team 13: run again with another secret (a Slurm task started from another shell, a secret
    // file made anew), the students keep results whose hidden cases drew other seeds; like other
    // options or another rubric, that is said, for --regrade (record.json's grading covers the
    // secret's id, never the secret).
    const std::string other_secret = "another-class-secret-Hh3kP0qZ7v";
    const auto again = grade_class(dir, true, other_secret);
    INFO(again.output);
    CHECK(again.output.find("2 student(s) graded before with other grading options or another rubric keep those "
                            "results: alice, bob") != std::string::npos);
    for (const auto& entry : fs::recursive_directory_iterator(dir / "out"))
        if (entry.is_regular_file())
            CHECK_MESSAGE(file_text(entry.path()).find(other_secret) == std::string::npos, entry.path());
    fs::remove_all(dir);
}

TEST_CASE("grade class with hidden cases and no secret grades nobody (exit code 2)")
{
    const fs::path dir = make_class("no_secret");
    const auto run = grade_class(dir, false);
    CHECK(run.status.code == 2);
    CHECK(run.output.find("no secret was given") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "out" / "students" / "alice" / "results.json"));
    fs::remove_all(dir);
}
