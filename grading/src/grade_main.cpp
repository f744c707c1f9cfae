// grade: the command instructors, students and CI run. See README.md and `grade --help`.
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <thread>

#include "grading/command_line.hpp"
#include "grading/grader.hpp"
#include "grading/report.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "harness/sandbox.hpp"

namespace fs = std::filesystem;

namespace {

// The defaults that depend on where grade runs: the runner archive and the reference runner sit
// next to it, and compiles use every core.
grading::GradeOptions defaults_for(const std::string& grade_executable)
{
    grading::GradeOptions options;
    options.grade_command = grade_executable;
    options.toolchain = grading::default_toolchain(grade_executable);
    options.compile_jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const fs::path reference_runner =
        fs::weakly_canonical(fs::path(grade_executable)).parent_path() / "grader_reference_runner";
    if (fs::exists(reference_runner)) options.reference_runner = reference_runner.string();
    return options;
}

void list_cases(const std::vector<std::string>& names)
{
    for (const auto& name : names) {
        const harness::Exercise& e = *harness::find_exercise(name);
        const auto cases = harness::cases_for(e);
        std::cout << e.name << ": " << e.summary << "\n  " << e.signature << "\n";
        for (const auto& c : cases)
            std::cout << "    " << std::left << std::setw(28) << c.label << " seed " << harness::hex64(c.seed)
                      << (c.timed ? "  (timed)" : "") << "\n";
    }
}

int run_grade(grading::GradeCommand command)
{
    if (command.list) return list_cases(command.options.exercises), grading::exit_graded;

    // Submitted code runs only inside the sandbox; a machine where it cannot run is an error of the
    // grading environment, never a reason to run the code unprotected or to score it zero.
    std::optional<harness::Sandbox> sandbox;
    if (!command.no_sandbox) {
        std::string why;
        sandbox = harness::Sandbox::find(why, command.bwrap);
        if (!sandbox) {
            std::cerr << "grade: cannot sandbox submitted code: " << why
                      << "\n  (install Debian's bubblewrap package, or pass --no-sandbox for trusted code only)\n";
            return grading::exit_no_sandbox;
        }
        command.options.sandbox = &*sandbox;
    }

    try {
        const grading::GradeReport report = grading::grade(command.options, std::cout);
        grading::write_file_atomically(command.output, grading::to_json(report).dump(2) + "\n");
        if (!command.gradescope.empty())
            grading::write_file_atomically(command.gradescope, grading::to_gradescope(report).dump(2) + "\n");
        grading::print_summary_table(report, std::cout);
        std::cout << "results written to " << command.output << "\n";
    } catch (const std::exception& e) {
        std::cerr << "grade: internal error: " << e.what() << "\n";
        return 2;  // the code it has always had, although --help documents 2 as a usage error
    }
    return grading::exit_graded;
}

}  // namespace

int main(int argc, char** argv)
{
    const grading::CommandLine command_line = grading::parse_command_line({argv, argv + argc}, defaults_for(argv[0]));
    if (!command_line.grade) {
        (command_line.exit_code == grading::exit_graded ? std::cout : std::cerr) << command_line.message;
        return command_line.exit_code;
    }
    return run_grade(*command_line.grade);
}
