// `grade`'s command line: what it accepts, and that every refusal is exit code 2 with a message
// naming the option, before anything is compiled or run.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "grader_config.hpp"
#include "grading/command_line.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"

using namespace grading;
namespace fs = std::filesystem;

namespace {

GradeOptions defaults()
{
    GradeOptions options;
    options.environment.toolchain.nvcc = "/opt/cuda/bin/nvcc";
    options.environment.toolchain.arch = "90";
    options.environment.reference_runner = "/opt/grader/bin/grader_reference_runner";
    return options;
}

CommandLine parse(std::vector<std::string> args)
{
    args.insert(args.begin(), "grade");
    return parse_command_line(args, defaults());
}

// A rubric file with this text, in a directory of this test process's own.
fs::path write_rubric(const std::string& name, const std::string& text)
{
    const fs::path dir = fs::temp_directory_path() / ("grader_command_line_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path path = dir / (name + ".json");
    std::ofstream(path) << text;
    return path;
}

// A submission directory that exists, so that a command is refused only for what it tests.
std::vector<std::string> submitted(std::vector<std::string> args)
{
    args.insert(args.begin(), {"--submission", fs::temp_directory_path().string()});
    return args;
}

GradeCommand accepted(const std::vector<std::string>& args)
{
    const CommandLine command_line = parse(args);
    INFO(command_line.message);
    REQUIRE(command_line.grade);
    CHECK(command_line.exit_code == exit_success);
    return *command_line.grade;
}

// The usage error's message, checked to name `option` and to point at --help.
std::string refused(const std::vector<std::string>& args, const std::string& option)
{
    const CommandLine command_line = parse(args);
    INFO(command_line.message);
    CHECK_FALSE(command_line.grade);
    CHECK(command_line.exit_code == exit_usage_error);
    CHECK(command_line.message.find(option) != std::string::npos);
    CHECK(command_line.message.find("grade --help") != std::string::npos);
    return command_line.message;
}

}  // namespace

TEST_CASE("a submission alone grades every exercise with the defaults")
{
    const GradeCommand command = accepted(submitted({}));
    CHECK(command.options.request.submission == fs::temp_directory_path().string());
    CHECK(command.options.request.exercises.size() == harness::all_exercises().size());
    CHECK(command.options.environment.toolchain.nvcc == "/opt/cuda/bin/nvcc");
    CHECK(command.options.environment.reference_runner == "/opt/grader/bin/grader_reference_runner");
    CHECK(command.options.request.timing.rule.max_batches == 60);
    CHECK(command.output == "results.json");
    CHECK_FALSE(command.list);
    CHECK_FALSE(command.no_sandbox);
}

TEST_CASE("--list needs no submission; any other command does, and it must be a directory")
{
    CHECK(accepted({"--list"}).list);
    refused({}, "--submission");
    refused({"--output", "x.json"}, "--submission");
    CHECK(refused({"--submission", "/nonexistent/submission"}, "--submission").find("no directory") !=
          std::string::npos);
}

TEST_CASE("--reps and --jobs: whole numbers in range")
{
    CHECK(accepted(submitted({"--reps", "5"})).options.request.timing.rule.max_batches == 5);
    refused(submitted({"--reps", "0"}), "--reps");
    refused(submitted({"--reps", "10001"}), "--reps");
    refused(submitted({"--reps", "many"}), "--reps");
    CHECK(accepted(submitted({"--jobs", "3"})).options.request.compile_jobs == 3);
    refused(submitted({"--jobs", "0"}), "--jobs");
    refused(submitted({"--jobs", "-2"}), "--jobs");
}

TEST_CASE("time limits: seconds more than 0, to the supervisor's milliseconds")
{
    CHECK(accepted(submitted({"--time-limit=30"})).options.request.limits.exercise_budget == std::chrono::seconds(30));
    CHECK(accepted(submitted({"--case-time-limit", "0.25"})).options.request.limits.case_limit ==
          std::chrono::milliseconds(250));
    // Far below a millisecond is still a limit, not none.
    CHECK(accepted(submitted({"--case-time-limit", "1e-6"})).options.request.limits.case_limit ==
          std::chrono::milliseconds(1));
    refused(submitted({"--time-limit", "-5"}), "--time-limit");
    refused(submitted({"--time-limit", "0"}), "--time-limit");
    refused(submitted({"--time-limit", "30s"}), "--time-limit");
    refused(submitted({"--case-time-limit", "nan"}), "--case-time-limit");
    refused(submitted({"--case-time-limit", "1e300"}), "--case-time-limit");
}

TEST_CASE("--exercise: known names, comma-separated or repeated, in the order given")
{
    using names = std::vector<std::string>;
    CHECK(accepted(submitted({"--exercise", "scan_brent_kung,scan_kogge_stone"})).options.request.exercises ==
          names{"scan_brent_kung", "scan_kogge_stone"});
    CHECK(accepted(submitted({"--exercise", "scan_kogge_stone", "--exercise=conv1d_tiled,scan_hierarchical"}))
              .options.request.exercises == names{"scan_kogge_stone", "conv1d_tiled", "scan_hierarchical"});
    // Each once, where first named: a script that appends to a command may name one again.
    CHECK(accepted(submitted({"--exercise", "scan_kogge_stone,conv1d_tiled", "--exercise", "scan_kogge_stone"}))
              .options.request.exercises == names{"scan_kogge_stone", "conv1d_tiled"});
    // An empty list, as a script's empty variable gives, means all of them.
    CHECK(accepted(submitted({"--exercise", ""})).options.request.exercises.size() == harness::all_exercises().size());
    const std::string message = refused(submitted({"--exercise", "scan_kogge_stone,scan_nonexistent"}), "--exercise");
    CHECK(message.find("scan_nonexistent") != std::string::npos);
    refused(submitted({"--exercise"}), "--exercise");
}

TEST_CASE("--case: one exercise, and a label it has")
{
    const std::string label = harness::cases_for(*harness::find_exercise("scan_kogge_stone")).at(0).label;
    CHECK(accepted(submitted({"--exercise", "scan_kogge_stone", "--case", label})).options.request.case_label == label);
    refused(submitted({"--case", label}), "--case");
    refused(submitted({"--exercise", "scan_kogge_stone,scan_brent_kung", "--case", label}), "--case");
    CHECK(refused(submitted({"--exercise", "scan_kogge_stone", "--case", "n=7/none"}), "--case")
              .find("no case 'n=7/none'") != std::string::npos);
}

TEST_CASE("--arch: digits with an optional letter")
{
    CHECK(accepted(submitted({"--arch", "90a"})).options.environment.toolchain.arch == "90a");
    CHECK(accepted(submitted({"--arch=100"})).options.environment.toolchain.arch == "100");
    refused(submitted({"--arch", "sm_90"}), "--arch");
    refused(submitted({"--arch", "9.0"}), "--arch");
}

TEST_CASE("the remaining options reach the command")
{
    const GradeCommand command =
        accepted(submitted({"--output", "out.json", "--gradescope", "gs.json", "--prairielearn", "pl.json", "--junit",
                            "j.xml", "--markdown", "m.md", "--work-dir", "w", "--nvcc", "nvcc13", "--no-sandbox",
                            "--keep-work", "--no-reference-timing", "--quiet"}));
    CHECK(command.output == "out.json");
    CHECK(command.formats.gradescope == "gs.json");
    CHECK(command.formats.prairielearn == "pl.json");
    CHECK(command.formats.junit == "j.xml");
    CHECK(command.formats.markdown == "m.md");
    CHECK(command.quiet);
    CHECK(command.options.environment.work_dir == "w");
    CHECK(command.options.environment.toolchain.nvcc == "nvcc13");
    CHECK(command.no_sandbox);
    CHECK(command.options.request.keep_work);
    CHECK(command.options.environment.reference_runner.empty());
    CHECK(accepted(submitted({"--reference-runner", "ref"})).options.environment.reference_runner == "ref");
    CHECK(accepted(submitted({"--bwrap", "/usr/bin/bwrap"})).bwrap == "/usr/bin/bwrap");
    // A repeated option overrides, as before CLI11.
    CHECK(accepted(submitted({"--reps", "3", "--reps", "4"})).options.request.timing.rule.max_batches == 4);
    refused(submitted({"--no-reference-timing", "--reference-runner", "ref"}), "--reference-runner");
}

TEST_CASE("--rubric: a file that passes rubric.schema.json, its Gradescope settings in the format requests")
{
    const fs::path rubric = write_rubric(
        "good", R"({"speed_points": 0, "gradescope": {"visibility": "hidden", "test_visibility": "after_due_date"}})");
    const GradeCommand command = accepted(submitted({"--rubric", rubric.string(), "--gradescope", "gs.json"}));
    CHECK(command.options.request.rubric.speed_points == 0);
    CHECK(command.formats.gradescope_settings.visibility == "hidden");
    CHECK(command.formats.gradescope_settings.stdout_visibility == "hidden");  // the default
    CHECK(command.formats.gradescope_settings.test_visibility == "after_due_date");
}

TEST_CASE("--rubric: every mistake is a usage error naming the file, the field and the rule")
{
    CHECK(refused(submitted({"--rubric", "/nonexistent/rubric.json"}), "--rubric").find("no such file") !=
          std::string::npos);
    struct Bad {
        const char* name;
        const char* text;
        std::vector<std::string> expected;  // each in the message
    };
    const std::vector<Bad> bad = {
        {"not_json", R"({"speed_points": 2,})", {"not JSON", "line 1"}},
        {"unknown_key", R"({"speed_point": 2})", {"/speed_point", "unknown key", "speed_points"}},
        {"negative", R"({"correctness_points": -1})", {"/correctness_points", "-1 is not allowed", "a number, at least 0"}},
        {"floor_above_full", R"({"speed_floor": 0.9, "speed_full": 0.5})", {"/speed_floor", "less than speed_full"}},
        {"floor_at_default_full", R"({"speed_floor": 0.8})", {"/speed_floor", "speed_full (0.8)"}},
        {"zero_step", R"({"speed_step": 0})", {"/speed_step", "0 is not allowed", "a number, more than 0"}},
        {"negative_weight", R"({"weight": {"scan_kogge_stone": -1}})",
         {"/weight/scan_kogge_stone", "-1 is not allowed", "a number, at least 0"}},
        {"unknown_exercise", R"({"weight": {"scan_kogge": 2}})", {"/weight/scan_kogge", "no exercise named"}},
        {"visibility", R"({"gradescope": {"visibility": "students"}})",
         {"/gradescope/visibility", "\"students\" is not allowed",
          "one of \"hidden\", \"after_due_date\", \"after_published\", \"visible\""}},
        {"code_checks", R"({"code_checks": "ignore"})", {"/code_checks", "\"ignore\"", "one of \"refuse\", \"name\""}},
        {"string_points", R"({"speed_points": "2"})", {"/speed_points", "\"2\" is not allowed", "a number, at least 0"}},
        {"boolean", R"({"library_use_costs_all": 1})", {"/library_use_costs_all", "1 is not allowed", "true or false"}},
        {"threshold", R"({"reference_match_threshold": 1.5})",
         {"/reference_match_threshold", "1.5 is not allowed", "more than 0 and at most 1"}},
        {"not_an_object", R"([1, 2])", {"(the whole rubric)", "[1,2] is not allowed", "an object"}},
    };
    for (const auto& b : bad) {
        const fs::path rubric = write_rubric(b.name, b.text);
        const std::string message = refused(submitted({"--rubric", rubric.string()}), "--rubric");
        INFO(b.name << ": " << message);
        CHECK(message.find(rubric.string()) != std::string::npos);
        for (const auto& part : b.expected) CHECK(message.find(part) != std::string::npos);
        // The validator's own sentences say neither the value nor what is allowed.
        for (const char* raw : {"Failed to", "Value ", "Expected "}) CHECK(message.find(raw) == std::string::npos);
        // One line per value, however many rules it breaks.
        CHECK(message.find("is not allowed") == message.rfind("is not allowed"));
    }
}

TEST_CASE("a second --submission is a usage error naming both; other options still take the last")
{
    const std::string first = fs::temp_directory_path().string(), second = fs::current_path().string();
    const std::string message = refused({"--submission", first, "--submission", second}, "--submission");
    CHECK(message.find("'" + first + "' and '" + second + "'") != std::string::npos);
    CHECK(message.find("grade class") != std::string::npos);
    CHECK(accepted(submitted({"--reps", "5", "--reps", "7"})).options.request.timing.rule.max_batches == 7);
}

TEST_CASE("--build-only: no timing, and no option that only running cases uses")
{
    const GradeCommand command = accepted(submitted({"--build-only"}));
    CHECK(command.options.request.build_only);
    CHECK(command.options.environment.reference_runner.empty());
    CHECK_FALSE(accepted(submitted({})).options.request.build_only);
    refused(submitted({"--build-only", "--exercise", "scan_kogge_stone", "--case", "n=1/int"}), "--case");
    refused(submitted({"--build-only", "--reps", "3"}), "--reps");
    const CommandLine help = parse({"--help"});
    CHECK(help.message.find("--build-only") != std::string::npos);
}

TEST_CASE("grade --help names the rubric files and the contract where this grader has them")
{
    // No grader files beside bin/: the paths in the grader's sources.
    const CommandLine plain = parse({"--help"});
    CHECK(plain.message.find("grading/rubric.schema.json") != std::string::npos);
    CHECK(plain.message.find("grading/rubric.example.json") != std::string::npos);
    CHECK(plain.message.find("docs/CONTRACT.md") != std::string::npos);

    // An installed grader (cmake --install's layout): share/pmpp-grader/ beside bin/.
    const fs::path prefix = fs::temp_directory_path() / ("grader_help_prefix_" + std::to_string(::getpid()));
    fs::remove_all(prefix);
    fs::create_directories(prefix / "bin");
    fs::create_directories(prefix / "share" / "pmpp-grader");
    for (const char* name : {"rubric.schema.json", "rubric.example.json", "CONTRACT.md"})
        std::ofstream(prefix / "share" / "pmpp-grader" / name) << "{}\n";
    GradeOptions installed = defaults();
    installed.environment.reference_runner = (prefix / "bin" / "grader_reference_runner").string();
    const CommandLine help = parse_command_line({"grade", "--help"}, installed);
    const std::string share = fs::weakly_canonical(prefix / "share" / "pmpp-grader").string();
    INFO(help.message);
    CHECK(help.message.find(share + "/rubric.schema.json") != std::string::npos);
    CHECK(help.message.find(share + "/rubric.example.json") != std::string::npos);
    CHECK(help.message.find(share + "/CONTRACT.md") != std::string::npos);
    CHECK(help.message.find("grading/rubric.example.json") == std::string::npos);
    fs::remove_all(prefix);
}

TEST_CASE("--rubric: a file this user may not read is the machine's problem (exit code 3)")
{
    if (::geteuid() == 0) {
        MESSAGE("skipped: root reads every file");
        return;
    }
    const fs::path rubric = write_rubric("closed", "{}");
    fs::permissions(rubric, fs::perms::none);
    const CommandLine command_line = parse(submitted({"--rubric", rubric.string()}));
    CHECK_FALSE(command_line.grade);
    CHECK(command_line.exit_code == exit_environment_error);
    CHECK(command_line.message.find("Permission denied") != std::string::npos);
}

TEST_CASE("unknown options and stray arguments are refused by name")
{
    refused(submitted({"--bogus"}), "--bogus");
    refused(submitted({"--rep", "5"}), "--rep");
    refused(submitted({"stray"}), "stray");
}

TEST_CASE("--help and --version print and exit 0, whatever else is given")
{
    const std::vector<std::vector<std::string>> asking_for_help = {
        {"--help"}, {"-h", "--reps", "0"}, {"--bogus", "--help"}};
    for (const auto& args : asking_for_help) {
        const CommandLine help = parse(args);
        CHECK_FALSE(help.grade);
        CHECK(help.exit_code == exit_success);
        CHECK(help.message.find("--submission DIR") != std::string::npos);
        for (const char* line :
             {"Exit codes:", "  0  graded, and every case", "  1  graded, and something did not pass",
              "  2  usage error", "  3  this machine cannot grade"})
            CHECK(help.message.find(line) != std::string::npos);
    }
    const CommandLine version = parse({"--jobs", "0", "--version"});
    CHECK_FALSE(version.grade);
    CHECK(version.exit_code == exit_success);
    CHECK(version.message == std::string("grade ") + GRADER_VERSION + "\n");
}
