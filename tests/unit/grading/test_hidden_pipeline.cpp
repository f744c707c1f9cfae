// Hidden cases through `grade` end to end (grading/hidden_cases.hpp), with the fake toolchain
// (tests/fake_toolchain): seeds from the secret, the refusal without one, the secret in no file, no
// runner's environment, argv or output (the fake runner's `spy` prints all it can find, as
// tests/adversarial/*/hidden_secret does on the GPU), and students' files that say of a hidden case
// only whether it passed and its status.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "grading/hidden_cases.hpp"
#include "grading/json_schema.hpp"
#include "harness/cases.hpp"
#include "harness/process.hpp"
#include "support/sandbox_args.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string course_secret = "s3cr3t-of-the-course-Zq81xKw0pL";
const std::string other_secret = "another-s3cr3t-entirely-9f8e7d6c";

using test_support::fresh_dir;

using test_support::file_text;

// Every file below `dir` that holds `text`.
std::vector<std::string> files_holding(const fs::path& dir, const std::string& text)
{
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(dir))
        if (entry.is_regular_file() && !entry.is_symlink() && file_text(entry.path()).find(text) != std::string::npos)
            found.push_back(entry.path().string());
    return found;
}

// One hidden case of scan_kogge_stone the students never saw, every case but n=1/* and n=2/* hidden.
void write_rubric(const fs::path& path)
{
    std::ofstream(path) << R"({"visible_cases": {"scan_kogge_stone": ["n=1/*", "n=2/*"]},
                               "hidden_cases": {"scan_kogge_stone": [{"n": 777777}]}})";
}

enum class SecretBy { none, file, environment };

struct Grading {
    fs::path dir;
    harness::CommandResult run;
    json results;
};

// Grades dir/submission/scan_kogge_stone.cu (`source`) with the hidden rubric, every format asked for,
// the work kept; the secret given as `by` says.
Grading grade_hidden(const std::string& name, const std::string& source, SecretBy by, const std::string& secret,
                     std::vector<std::string> extra = {})
{
    Grading g;
    g.dir = fresh_dir(name);
    fs::create_directories(g.dir / "submission");
    std::ofstream(g.dir / "submission" / "scan_kogge_stone.cu") << source << "\n";
    write_rubric(g.dir / "rubric.json");
    std::vector<std::string> command = {GRADE_EXECUTABLE, "--submission", (g.dir / "submission").string(),
                                        "--exercise", "scan_kogge_stone", "--rubric", (g.dir / "rubric.json").string(),
                                        "--nvcc", FAKE_NVCC, "--reference-runner", FAKE_RUNNER,
                                        "--work-dir", (g.dir / "work").string(), "--keep-work",
                                        "--output", (g.dir / "out" / "results.json").string(),
                                        "--gradescope", (g.dir / "out" / "gradescope.json").string(),
                                        "--prairielearn", (g.dir / "out" / "prairielearn.json").string(),
                                        "--junit", (g.dir / "out" / "junit.xml").string(),
                                        "--markdown", (g.dir / "out" / "summary.md").string(),
                                        "--student-results", (g.dir / "out" / "student-results.json").string(),
                                        "--case-time-limit", "15", "--reps", "3"};
    fs::create_directories(g.dir / "out");
    if (by == SecretBy::file) {
        // Outside the output and work directories, as an instructor keeps it.
        fs::create_directories(g.dir / "private");
        std::ofstream(g.dir / "private" / "secret") << secret << "\n";
        command.insert(command.end(), {"--secret-file", (g.dir / "private" / "secret").string()});
    }
    command.insert(command.end(), extra.begin(), extra.end());
    if (std::find(extra.begin(), extra.end(), "--no-sandbox") == extra.end())
        command.insert(command.end(), sandbox_args().begin(), sandbox_args().end());
    if (by == SecretBy::environment) ::setenv(grading::secret_variable, secret.c_str(), 1);
    g.run = harness::run_command(test_support::with_own_gpu_lock(command), std::chrono::minutes(4), 4 << 20);
    ::unsetenv(grading::secret_variable);
    INFO(g.run.output);
    REQUIRE(g.run.status.kind == harness::ExitStatus::Kind::exited);
    if (fs::exists(g.dir / "out" / "results.json")) g.results = json::parse(file_text(g.dir / "out" / "results.json"));
    return g;
}

const json& first_exercise_case(const json& results, const std::string& label)
{
    for (const auto& c : results.at("exercises").at(0).at("cases"))
        if (c.at("label") == label) return c;
    FAIL("no case " << label);
    throw;
}

using test_support::results_schema;

void check_schema(const json& document, const std::string& what)
{
    for (const auto& error : grading::validate_json_schema(results_schema(), document))
        FAIL(what << error.instance_path << ": " << error.message);
}

// The students' files of a grading: none names a hidden case, its seed or what was printed during it.
void check_students_files(const Grading& g)
{
    std::vector<std::string> forbidden = {"n=777777",     "777777",      "spy: case n=4096", "spy: case n=777777",
                                          "spy: environ", course_secret, other_secret};
    for (const auto& c : g.results.at("exercises").at(0).at("cases"))
        if (c.at("hidden") == true) forbidden.push_back(c.at("seed").get<std::string>().substr(2));
    for (const char* name : {"gradescope.json", "prairielearn.json", "junit.xml", "summary.md", "student-results.json"}) {
        const std::string text = file_text(g.dir / "out" / name);
        INFO(name);
        REQUIRE_FALSE(text.empty());
        for (const auto& word : forbidden) CHECK_MESSAGE(text.find(word) == std::string::npos, word);
    }
    const json students = json::parse(file_text(g.dir / "out" / "student-results.json"));
    check_schema(students, "student-results.json");
    CHECK(students.at("hidden_cases").at("redacted") == true);
    CHECK(students.dump().find("hidden case 1") != std::string::npos);
}

}  // namespace

TEST_CASE("a rubric with hidden cases and no secret grades nothing (exit code 2)")
{
    const Grading g = grade_hidden("no_secret", "// FAKE_RUNNER: correct", SecretBy::none, "");
    CHECK(g.run.status.code == 2);
    CHECK(g.run.output.find("no secret was given") != std::string::npos);
    CHECK(g.run.output.find("--secret-file") != std::string::npos);
    CHECK_FALSE(fs::exists(g.dir / "out" / "results.json"));
    // A secret too short to keep a seed from leading back to it is refused too.
    const Grading short_secret = grade_hidden("short_secret", "", SecretBy::environment, "tiny");
    CHECK(short_secret.run.status.code == 2);
    CHECK(short_secret.run.output.find("at least 16") != std::string::npos);
    fs::remove_all(g.dir);
    fs::remove_all(short_secret.dir);
}

TEST_CASE("hidden cases grade on the secret's seeds; the secret is nowhere a runner or a file shows it")
{
    const Grading g = grade_hidden("spy", "// FAKE_RUNNER: spy", SecretBy::file, course_secret);
    INFO(g.run.output);
    REQUIRE(g.run.status.code == 0);
    check_schema(g.results, "results.json");
    const grading::HiddenCaseSecret secret(course_secret, grading::HiddenCaseSecret::Source::file);
    CHECK(g.results.at("hidden_cases").at("secret_id") == secret.id());
    const json& cases = g.results.at("exercises").at(0).at("cases");
    const std::size_t own = harness::cases_for(*harness::find_exercise("scan_kogge_stone")).size();
    REQUIRE(cases.size() == own + 1);
    int hidden = 0;
    for (const auto& c : cases) {
        const std::string label = c.at("label");
        CHECK(c.at("status") == "pass");
        const bool visible = label.rfind("n=1/", 0) == 0 || label.rfind("n=2/", 0) == 0;
        CHECK(c.at("hidden") == !visible);
        const std::uint64_t expected = visible ? harness::seed_for("scan_kogge_stone", label)
                                               : secret.seed("scan_kogge_stone", label);
        CHECK(c.at("seed") == harness::hex64(expected));
        hidden += !visible;
    }
    CHECK(g.results.at("hidden_cases").at("count") == hidden);
    CHECK(first_exercise_case(g.results, "n=777777/int").at("index") == static_cast<int>(own));

    // What the runners printed: the visible runner saw only visible cases; the hidden cases' runners
    // printed theirs into the instructor's record alone.
    const json& e = g.results.at("exercises").at(0);
    const std::string visible_output = e.at("runner_output"), hidden_output = e.at("hidden_runner_output");
    CHECK(visible_output.find("spy: case n=1/int") != std::string::npos);
    CHECK(visible_output.find("spy: case n=777777") == std::string::npos);
    CHECK(visible_output.find("spy: case n=31/int") == std::string::npos);
    CHECK(hidden_output.find("spy: case n=777777/int") != std::string::npos);
    // Each runner's whole log (the results keep their tails): the hidden cases' runner has its own.
    const std::string hidden_log = file_text(g.dir / "work" / "scan_kogge_stone" / "runner-2.log");
    CHECK(hidden_log.find("spy: environ") != std::string::npos);  // the probe ran
    CHECK(hidden_log.find("spy: case n=1/int") == std::string::npos);
    CHECK(file_text(g.dir / "work" / "scan_kogge_stone" / "runner-1.log").find("spy: case n=31/int") == std::string::npos);

    // The secret: in no file of the output and work directories (the runners' logs, the spy's
    // dumps of its environment, argv, /proc and files included), nor on the console.
    CHECK(files_holding(g.dir / "out", course_secret).empty());
    CHECK(files_holding(g.dir / "work", course_secret).empty());
    CHECK(g.run.output.find(course_secret) == std::string::npos);
    CHECK_FALSE(files_holding(g.dir / "work", "spy: argv").empty());  // the logs are there to search
    check_students_files(g);

    // The same secret again: the same seeds; another secret: others.
    const Grading again = grade_hidden("again", "", SecretBy::environment, course_secret, {"--case", "n=777777/int"});
    const Grading other = grade_hidden("other", "", SecretBy::environment, other_secret, {"--case", "n=777777/int"});
    {
        INFO(again.run.output);
        REQUIRE(again.run.status.code == 0);
    }
    {
        INFO(other.run.output);
        REQUIRE(other.run.status.code == 0);
    }
    CHECK(first_exercise_case(again.results, "n=777777/int").at("seed") ==
          first_exercise_case(g.results, "n=777777/int").at("seed"));
    CHECK(first_exercise_case(other.results, "n=777777/int").at("seed") !=
          first_exercise_case(g.results, "n=777777/int").at("seed"));
    CHECK(other.results.at("hidden_cases").at("secret_id") != secret.id());
    for (const auto* run : {&g, &again, &other}) fs::remove_all(run->dir);
}

TEST_CASE("without the sandbox, neither grade's environment nor the timing server's shows the secret")
{
    // The secret in the environment; the runner and a spying reference runner (the timing server runs
    // outside any sandbox) read /proc/<parent>/environ, which is grade's own.
    const fs::path dir = fresh_dir("spy_reference");
    const fs::path spy_reference = dir / "spy_reference";
    fs::copy_file(FAKE_RUNNER, spy_reference);
    std::ofstream(spy_reference, std::ios::app) << "\nFAKE_RUNNER_BEHAVIOUR=spy;\n";
    fs::permissions(spy_reference, fs::perms::owner_all);
    const Grading g = grade_hidden("no_sandbox", "// FAKE_RUNNER: spy", SecretBy::environment, course_secret,
                                   {"--no-sandbox", "--reference-runner", spy_reference.string()});
    INFO(g.run.output);
    REQUIRE(g.run.status.code == 0);
    const std::string server_log = file_text(g.dir / "work" / "timing-server.log");
    CHECK(server_log.find("spy: /proc/") != std::string::npos);  // it looked at its parent, grade
    CHECK(server_log.find(grading::secret_variable) != std::string::npos);  // the name's bytes stay, emptied
    CHECK(files_holding(g.dir, course_secret).empty());
    CHECK(g.run.output.find(course_secret) == std::string::npos);
    check_students_files(g);
    fs::remove_all(g.dir);
    fs::remove_all(dir);
}

TEST_CASE("a hidden case that fails: its status for the student, everything for the instructor")
{
    // Case 24 is the rubric's extra case n=777777/int; case 5 (n=1023/int) a hidden case of the exercise's own.
    const Grading crash = grade_hidden("hidden_crash", "// FAKE_RUNNER: crash_at:24", SecretBy::file, course_secret);
    REQUIRE(crash.run.status.code == 1);
    const json& crashed = first_exercise_case(crash.results, "n=777777/int");
    CHECK(crashed.at("status") == "crashed");
    CHECK(crashed.at("summary").get<std::string>().find("SIGSEGV") != std::string::npos);
    const json students = json::parse(file_text(crash.dir / "out" / "student-results.json"));
    int crashed_hidden = 0;
    for (const auto& c : students.at("exercises").at(0).at("cases")) CHECK(c.at("hidden") == false);
    for (const auto& c : students.at("exercises").at(0).at("hidden_cases")) {
        CHECK(c.at("label").get<std::string>().rfind("hidden case ", 0) == 0);
        CHECK_FALSE(c.contains("seed"));
        CHECK_FALSE(c.contains("n"));
        crashed_hidden += c.at("status") == "crashed";
    }
    CHECK(crashed_hidden == 1);
    for (const char* name : {"gradescope.json", "summary.md", "junit.xml", "prairielearn.json"}) {
        const std::string text = file_text(crash.dir / "out" / name);
        INFO(name);
        CHECK(text.find("crashed") != std::string::npos);
        CHECK(text.find("SIGSEGV") == std::string::npos);
    }
    check_students_files(crash);

    const Grading wrong = grade_hidden("hidden_wrong", "// FAKE_RUNNER: exclusive_scan", SecretBy::file, course_secret,
                                       {"--case", "n=777777/int"});
    REQUIRE(wrong.run.status.code == 1);
    const json& w = first_exercise_case(wrong.results, "n=777777/int");
    CHECK(w.at("status") == "wrong");
    CHECK_FALSE(w.at("findings").empty());  // the instructor's: where and what
    const std::string student_view = file_text(wrong.dir / "out" / "student-results.json");
    CHECK(student_view.find("\"wrong\"") != std::string::npos);
    for (const auto& finding : w.at("findings")) CHECK(student_view.find(finding.get<std::string>()) == std::string::npos);
    check_students_files(wrong);
    fs::remove_all(crash.dir);
    fs::remove_all(wrong.dir);
}
