// `grade`'s command line (see `grade --help`), parsed apart from main so that the unit tests can
// check every refusal without running anything. Each mode is a struct of what it was asked here,
// a function declaring its options in command_line.cpp and one running it in grade_main.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "grading/class_command.hpp"
#include "grading/formats.hpp"
#include "grading/grader.hpp"

namespace grading {

// What a script learns from grade's exit status (also in --help and README.md).
enum ExitCode {
    exit_success = 0,               // graded, every case of every exercise passed; also --help, --version, --list
    exit_graded_with_failures = 1,  // graded; something did not pass (the results say what)
    exit_usage_error = 2,           // the command line or the rubric is wrong: nothing was graded
    exit_environment_error = 3,     // this machine cannot grade (GPU, compiler, sandbox, files): nothing was graded
};

// The default mode: grade a submission, or only list the exercises and their cases.
struct GradeCommand {
    GradeOptions options;
    std::string output = "results.json";
    bool work_dir_given = false;  // --work-dir on the command line: used as it is (grading/work_directory.hpp)
    FormatRequests formats;  // the other results formats asked for, with the rubric's Gradescope settings
    std::string bwrap;       // empty: bwrap from PATH
    std::string gpu_lock_dir = "/tmp";  // where the GPU's lock file is (harness/gpu_lock.hpp)
    bool list = false;
    bool no_sandbox = false;
    bool quiet = false;  // only the final table and errors
};

// `grade bench`: the hidden references beside their ceilings (copy, CUB) on this GPU, measured by the
// reference runner (grading/bench.hpp).
struct BenchCommand {
    std::string reference_runner;  // default: the one beside grade
    // Elements each exercise is measured at (conv2d: the smallest square image of at least as many pixels).
    std::vector<std::int64_t> sizes = {10'000'000, std::int64_t{1} << 26};
    std::vector<std::string> exercises;  // empty: all ten
    int reps = 30;
    std::string output_dir = ".";       // bench.md and bench.json go here
    std::string gpu_lock_dir = "/tmp";  // the GPU's lock, held exclusively while measuring
    std::chrono::milliseconds time_limit = std::chrono::minutes(10);
};

struct CommandLine {
    std::optional<GradeCommand> grade;  // empty, and no bench: print `message` and exit with `exit_code`, now
    int exit_code = exit_success;
    std::string message;  // for stdout when exit_code is exit_success, else stderr
    // `grade bench` asked for (and no grade).
    std::optional<BenchCommand> bench{};
    // `grade class` or `grade class merge` asked for (grading/class_command.hpp).
    std::optional<ClassCommand> class_grading{};
    std::optional<ClassMergeCommand> class_merge{};
};

// `args` is argv, program name first. `defaults` are what the options leave unchanged; those that
// depend on where grade runs (compiler, reference runner, cores) are main's to find.
CommandLine parse_command_line(const std::vector<std::string>& args, const GradeOptions& defaults);
// `grade class ...` (args[1] is "class"; grading/src/class/class_command_line.cpp): its grading
// options are checked by parse_command_line as one grading's.
CommandLine parse_class_command_line(const std::vector<std::string>& args, const GradeOptions& defaults);

}  // namespace grading
