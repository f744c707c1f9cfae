// `grade`'s command line (see `grade --help`), parsed apart from main so that the unit tests can
// check every refusal without running anything. Each mode is a struct of what it was asked here,
// a function declaring its options in command_line.cpp and one running it in grade_main.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "grading/grader.hpp"

namespace grading {

enum ExitCode {
    exit_graded = 0,  // also --help, --version and --list
    exit_usage_error = 2,
    exit_no_sandbox = 3,  // the grading environment is not usable
};

// The default mode: grade a submission, or only list the exercises and their cases.
struct GradeCommand {
    GradeOptions options;
    std::string output = "results.json";
    std::string gradescope;  // empty: no Gradescope results
    std::string bwrap;       // empty: bwrap from PATH
    bool list = false;
    bool no_sandbox = false;
};

struct CommandLine {
    std::optional<GradeCommand> grade;  // empty: print `message` and exit with `exit_code`, now
    int exit_code = exit_graded;
    std::string message;  // for stdout when exit_code is exit_graded, else stderr
};

// `args` is argv, program name first. `defaults` are what the options leave unchanged; those that
// depend on where grade runs (compiler, reference runner, cores) are main's to find.
CommandLine parse_command_line(const std::vector<std::string>& args, const GradeOptions& defaults);

}  // namespace grading
