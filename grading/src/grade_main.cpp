// grade: the command instructors, students and CI run. See README.md and `grade --help`.
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <thread>

#include "grader_config.hpp"
#include "grading/grader.hpp"
#include "grading/report.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "harness/sandbox.hpp"

namespace fs = std::filesystem;

namespace {

const char* usage = R"(usage: grade --submission DIR [options]
       grade --list [--exercise NAME]

Grades a directory of <exercise>.cu files (see CONTRACT.md) and writes results.json.

  --submission DIR       the student's directory (files may sit anywhere below it)
  --exercise A[,B...]    grade only these exercises (default: all ten)
  --case LABEL           run only this case (with one --exercise); labels from --list
  --list                 list the exercises and their cases, then exit
  --output FILE          where to write the results (default: results.json)
  --gradescope FILE      also write Gradescope's results format (one test per exercise)
  --work-dir DIR         runners and logs go here (default: grader-work)
  --time-limit S         wall-clock budget per exercise in seconds (default: 120)
  --case-time-limit S    per case, before a size allowance (default: 10)
  --reps N               timing repetitions per speed case (default: 25)
  --rubric FILE          points and speed thresholds (see grading/rubric.example.json)
  --jobs N               compiles in parallel (default: number of cores)
  --nvcc PATH            compiler (default: the one the grader was built with)
  --arch NN              GPU architecture, e.g. 90 for sm_90 (default: the build's)
  --no-reference-timing  do not time the hidden reference (no speed points)
  --reference-runner P   the reference runner to time against (default: next to grade)
  --no-sandbox           run submitted code without the bubblewrap sandbox: for trusted code only
                         (results.json records it); without this option, grade refuses to grade
                         on a machine where the sandbox cannot run
  --bwrap PATH           the bubblewrap executable (default: bwrap from PATH)
  --keep-work            keep the runners and logs under the work directory after grading

Exit codes: 0 graded, 2 usage error, 3 the grading environment is not usable (no sandbox).
)";

void list_cases(const std::vector<std::string>& names)
{
    for (const auto& name : names) {
        const harness::Exercise& e = *harness::find_exercise(name);
        const auto cases = harness::cases_for(e);
        std::cout << e.name << ": " << e.summary << "\n  " << e.signature << "\n";
        for (const auto& c : cases)
            std::cout << "    " << std::left << std::setw(28) << c.label << " seed " << std::hex << c.seed << std::dec
                      << (c.timed ? "  (timed)" : "") << "\n";
    }
}

std::vector<std::string> split_names(const std::string& list)
{
    std::vector<std::string> names;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = list.find(',', start);
        const std::string name = list.substr(start, comma - start);
        if (!name.empty()) names.push_back(name);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return names;
}

int fail(const std::string& message)
{
    std::cerr << "grade: " << message << "\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv)
{
    grading::GradeOptions options;
    options.toolchain = grading::default_toolchain(argv[0]);
    options.compile_jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const fs::path bin_dir = fs::weakly_canonical(fs::path(argv[0])).parent_path();
    if (fs::exists(bin_dir / "grader_reference_runner"))
        options.reference_runner = (bin_dir / "grader_reference_runner").string();
    std::string output = "results.json", gradescope, exercise_list, bwrap;
    bool list = false, no_sandbox = false;

    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
            return argv[++i];
        };
        try {
            if (flag == "--help" || flag == "-h") return std::cout << usage, 0;
            else if (flag == "--list") list = true;
            else if (flag == "--submission") options.submission = value();
            else if (flag == "--exercise") exercise_list = value();
            else if (flag == "--case") options.case_label = value();
            else if (flag == "--output") output = value();
            else if (flag == "--gradescope") gradescope = value();
            else if (flag == "--work-dir") options.work_dir = value();
            else if (flag == "--time-limit") options.limits.exercise_budget = std::chrono::milliseconds(static_cast<long long>(std::stod(value()) * 1000));
            else if (flag == "--case-time-limit") options.limits.case_limit = std::chrono::milliseconds(static_cast<long long>(std::stod(value()) * 1000));
            else if (flag == "--reps") options.limits.reps = std::stoi(value());
            else if (flag == "--jobs") options.compile_jobs = std::stoi(value());
            else if (flag == "--nvcc") options.toolchain.nvcc = value();
            else if (flag == "--arch") options.toolchain.arch = value();
            else if (flag == "--no-reference-timing") options.reference_runner.clear();
            else if (flag == "--no-sandbox") no_sandbox = true;
            else if (flag == "--bwrap") bwrap = value();
            else if (flag == "--keep-work") options.keep_work = true;
            else if (flag == "--reference-runner") options.reference_runner = value();
            else if (flag == "--rubric") {
                std::ifstream file(value());
                if (!file) return fail("cannot read the rubric file");
                options.rubric = grading::Rubric::from_json(nlohmann::json::parse(file));
            } else return fail("unknown option " + flag + "\n" + usage);
        } catch (const std::exception& e) {
            return fail(std::string("bad arguments: ") + e.what());
        }
    }

    for (const auto& e : harness::all_exercises()) options.exercises.push_back(e.name);
    if (!exercise_list.empty()) {
        options.exercises = split_names(exercise_list);
        for (const auto& name : options.exercises)
            if (!harness::find_exercise(name)) return fail("unknown exercise '" + name + "' (see --list)");
    }
    if (list) return list_cases(options.exercises), 0;
    if (options.submission.empty()) return fail("--submission DIR is required\n" + std::string(usage));
    if (!fs::is_directory(options.submission)) return fail("no directory " + options.submission);
    if (!options.case_label.empty()) {
        if (options.exercises.size() != 1) return fail("--case needs exactly one --exercise");
        if (!harness::find_case(harness::cases_for(*harness::find_exercise(options.exercises[0])), options.case_label))
            return fail("no case '" + options.case_label + "' in " + options.exercises[0] + " (see --list)");
    }

    // Submitted code runs only inside the sandbox; a machine where it cannot run is an error of the
    // grading environment, never a reason to run the code unprotected or to score it zero.
    std::optional<harness::Sandbox> sandbox;
    if (!no_sandbox) {
        std::string why;
        sandbox = harness::Sandbox::find(why, bwrap);
        if (!sandbox) {
            std::cerr << "grade: cannot sandbox submitted code: " << why
                      << "\n  (install Debian's bubblewrap package, or pass --no-sandbox for trusted code only)\n";
            return 3;
        }
        options.sandbox = &*sandbox;
    }
    options.grade_command = argv[0];

    try {
        const grading::GradeReport report = grading::grade(options, std::cout);
        grading::write_file_atomically(output, grading::to_json(report).dump(2) + "\n");
        if (!gradescope.empty()) grading::write_file_atomically(gradescope, grading::to_gradescope(report).dump(2) + "\n");
        grading::print_summary_table(report, std::cout);
        std::cout << "results written to " << output << "\n";
    } catch (const std::exception& e) {
        return fail(std::string("internal error: ") + e.what());
    }
    return 0;
}
