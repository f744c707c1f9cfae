#include "grading/command_line.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "grader_config.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "sandbox_default.hpp"

namespace fs = std::filesystem;

namespace grading {
namespace {

const char* description = R"(Grades a directory of <exercise>.cu files (see CONTRACT.md) and writes results.json:
  grade --submission DIR [OPTIONS]
or lists the exercises and their cases:
  grade --list [--exercise NAME]
or measures the hidden references beside their ceilings on this GPU (see grade bench --help):
  grade bench [--sizes N[,N...]] [--output-dir DIR]
or grades every student of a class, several at once on each GPU (see grade class --help):
  grade class --submissions DIR --output-dir OUT [GRADING OPTIONS])";

// Where a file that the help names is, seen from grade's own bin/ folder: an installed grader's
// share/pmpp-grader/, else the sources beside a build tree (the repository's build/bin/, the
// handout's, whose grader sources are in grader/); `in_sources` (its path in the grader's sources)
// where none is there.
std::string shipped_file(const std::string& bin_dir, const std::string& name, const std::string& in_sources)
{
    if (bin_dir.empty()) return in_sources;
    const fs::path bin(bin_dir);
    for (const fs::path& candidate : {bin / ".." / "share" / "pmpp-grader" / name, bin / ".." / ".." / in_sources,
                                      bin / ".." / ".." / "grader" / in_sources}) {
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
    }
    return in_sources;
}

// grade's bin/ folder: where main found the reference runner, beside grade.
std::string bin_dir_of(const GradeOptions& defaults)
{
    const std::string& runner = defaults.environment.reference_runner;
    return runner.empty() ? std::string() : fs::path(runner).parent_path().string();
}

// Short: it is also the subcommand's line in grade --help.
const char* bench_description = "measures the hidden references beside their ceilings on this GPU";

const char* bench_footer = R"(The ceilings: the device-to-device copy of the same bytes, and CUB's scan or sum where
CUB has the operation. Median of many calls, CUDA events, the L2 flushed before each;
each reference's output is checked once against CUB or a direct convolution first.
Prints a Markdown table and writes it to bench.md, the numbers to bench.json. Holds
the GPU's lock exclusively throughout, so no grading times anything meanwhile.

Exit codes:
  0  measured: the table is printed and in bench.md, the numbers in bench.json
  2  usage error: the command line is wrong; nothing was measured
  3  nothing could be measured: no usable GPU, no reference runner, an output directory
     missing or not writable, a GPU lock it cannot open, or the reference runner failed
     (a CUDA error, a reference whose output is wrong); nothing was written)";

const char* exit_codes = R"(Exit codes:
  0  graded, and every case of every exercise asked for passed (speed points, which depend
     on the machine's load, do not count here); also --help, --version and --list; with
     --build-only: every submitted file builds and passes the build checks
  1  graded, and something did not pass: the table and the results file say what (with
     --build-only: a submitted file does not build or fails a build check)
  2  usage error: the command line or the --rubric file is wrong; nothing was graded
  3  this machine cannot grade: no usable GPU, a compiler that does not work, the grader's
     lib/ not beside its bin/, no sandbox, an output directory missing or not writable, a
     --rubric file it may not read, a GPU lock it cannot open; nothing was graded and no
     results file was written)";

// An upper bound keeps the conversion to milliseconds from overflowing; a day is far beyond any exercise.
constexpr double max_limit_seconds = 24 * 60 * 60;

// CLI11 puts the option's name before each of these validators' messages.
const CLI::Validator positive_seconds(
    [](std::string& text) -> std::string {
        char* end = nullptr;
        const double seconds = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !(seconds > 0 && seconds <= max_limit_seconds))
            return "expected seconds, more than 0 and at most " + std::to_string(static_cast<int>(max_limit_seconds)) +
                   ", not " + text;
        return {};
    },
    "");

// nvcc's -arch=sm_NN takes the compute capability's digits, with a suffix for the
// architecture-specific features (90a).
const CLI::Validator gpu_architecture(
    [](std::string& arch) -> std::string {
        if (std::regex_match(arch, std::regex("[0-9]+[a-z]?"))) return {};
        return "expected digits with an optional letter, e.g. 90 or 90a, not '" + arch + "'";
    },
    "");

// An empty name is let through, as before CLI11: `--exercise "$LIST"` with an empty list grades all.
// --exercise's names without the empty ones (a script's empty variable) and each once, where first
// named: a repeated one (--exercise a,b --exercise a, as a script that appends to a command writes)
// would be built and graded twice into one work folder.
void keep_each_exercise_once(std::vector<std::string>& names)
{
    std::set<std::string> seen;
    names.erase(std::remove_if(names.begin(), names.end(),
                               [&seen](const std::string& n) { return n.empty() || !seen.insert(n).second; }),
                names.end());
}

const CLI::Validator known_exercise(
    [](std::string& name) -> std::string {
        if (name.empty() || harness::find_exercise(name)) return {};
        return "unknown exercise '" + name + "' (see grade --list)";
    },
    "");

// Rounded, and never 0 ms for a limit that was more than 0 s.
std::chrono::milliseconds to_milliseconds(double seconds)
{
    return std::chrono::milliseconds(std::max(1LL, std::llround(seconds * 1000)));
}

// A rubric's mistakes are a usage error (the instructor's input, like an option); a rubric file
// this process may not read is not, and leaves parse_command_line as RubricUnreadable.
Rubric rubric_from_file(const std::string& path)
{
    try {
        return load_rubric(path);
    } catch (const RubricError& e) {
        throw CLI::ValidationError("--rubric", e.what());
    }
}

// `grade bench` has options of its own: grading's, given before it, would be silently ignored.
void refuse_grading_options(const CLI::App& app)
{
    for (const CLI::Option* option : app.get_options())
        if (option->count() > 0)
            throw CLI::ValidationError(option->get_name(), "is an option of grading, not of grade bench");
}

// What single options cannot check: how they combine, the submission directory and the case labels.
void check_grade_command(const CLI::App& app, GradeCommand& command)
{
    GradeRequest& request = command.options.request;
    command.formats.gradescope_settings = request.rubric.gradescope;
    command.work_dir_given = app.count("--work-dir") > 0;
    if (app.count("--no-reference-timing") && app.count("--reference-runner"))
        throw CLI::ValidationError("--no-reference-timing", "contradicts --reference-runner");
    if (request.build_only) {
        for (const char* timing : {"--case", "--reference-runner", "--reps", "--timing-precision"})
            if (app.count(timing))
                throw CLI::ValidationError("--build-only",
                                           std::string("runs no case: ") + timing + " has nothing to do");
        command.options.environment.reference_runner.clear();  // nothing is timed
    }
    std::vector<std::string>& names = request.exercises;
    keep_each_exercise_once(names);
    if (names.empty())
        for (const auto& e : harness::all_exercises()) names.push_back(e.name);
    if (command.list) return;
    // One grading is one submission: a second --submission would silently replace the first (the
    // options' policy elsewhere), and a class has grade class.
    if (const CLI::Option* submission = app.get_option("--submission"); submission->count() > 1) {
        std::string given;
        for (const auto& path : submission->results()) given += (given.empty() ? "" : "' and '") + path;
        throw CLI::ValidationError("--submission", "given more than once ('" + given +
                                                       "'); grade grades one submission (grade class grades "
                                                       "every student folder below one directory)");
    }
    if (request.submission.empty()) throw CLI::RequiredError("--submission (or --list)");
    if (!fs::is_directory(request.submission))
        throw CLI::ValidationError("--submission", "no directory " + request.submission);
    // Hidden cases never fall back to public seeds (grading/hidden_cases.hpp).
    if (!request.hidden_secret && declares_hidden_cases(request.rubric, names))
        throw CLI::ValidationError("--rubric",
                                   std::string("hides cases (visible_cases, hidden_cases), and no secret was "
                                               "given for their seeds: pass --secret-file FILE or set ") +
                                       secret_variable);
    if (request.case_label.empty()) return;
    if (names.size() != 1) throw CLI::ValidationError("--case", "needs exactly one --exercise");
    if (!harness::find_case(graded_cases(*harness::find_exercise(names[0]), request.rubric, nullptr),
                            request.case_label))
        throw CLI::ValidationError("--case",
                                   "no case '" + request.case_label + "' in " + names[0] + " (see grade --list)");
}

void declare_grade_options(CLI::App& app, GradeCommand& command)
{
    GradeRequest& o = command.options.request;
    GradingEnvironment& environment = command.options.environment;
    app.add_option("--submission", o.submission, "the student's directory (files may sit anywhere below it)")
        ->type_name("DIR");
    app.add_option("--exercise", o.exercises, "grade only these exercises (default: all ten)")
        ->type_name("A[,B...]")
        ->delimiter(',')
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(known_exercise);
    app.add_option("--case", o.case_label, "run only this case (with one --exercise); labels from --list")
        ->type_name("LABEL");
    app.add_flag("--list", command.list, "list the exercises and their cases, then exit");
    app.add_flag("--build-only", o.build_only,
                 "build each file and run the build checks (compile, forbidden headers and symbols,\n"
                 "code checks), no case: each exercise is built, compile_error or invalid_submission;\n"
                 "needs no GPU; exit code 0 when every submitted file builds and passes them");
    app.add_option("--output", command.output, "where to write the results (default: results.json)")->type_name("FILE");
    FormatRequests& formats = command.formats;
    app.add_option("--gradescope", formats.gradescope,
                   "also write Gradescope's results format (one test per exercise; the rubric's\n"
                   "\"gradescope\" object sets what students see)")
        ->type_name("FILE");
    app.add_option("--prairielearn", formats.prairielearn, "also write PrairieLearn's external grader results")
        ->type_name("FILE");
    app.add_option("--junit", formats.junit, "also write JUnit XML (one test case per exercise case)")
        ->type_name("FILE");
    app.add_option("--markdown", formats.markdown, "also write a Markdown summary")->type_name("FILE");
    app.add_option("--student-results", formats.student_results,
                   "also write results.json as students may see it: hidden cases say only whether\n"
                   "they passed (as in every format above; --output is the instructor's)")
        ->type_name("FILE");
    app.add_flag("--quiet", command.quiet, "print only the final table and errors");
    app.add_option("--work-dir", environment.work_dir,
                   "runners and logs go here, locked for this grading (default: a fresh\n"
                   "directory of its own below grader-work/, removed afterwards unless --keep-work)")
        ->type_name("DIR");
    app.add_option_function<double>(
           "--time-limit", [&o](const double& s) { o.limits.exercise_budget = to_milliseconds(s); },
           "wall-clock budget per exercise in seconds (default: 120)")
        ->type_name("S")
        ->check(positive_seconds);
    app.add_option_function<double>(
           "--case-time-limit", [&o](const double& s) { o.limits.case_limit = to_milliseconds(s); },
           "per case, before a size allowance (default: 10)")
        ->type_name("S")
        ->check(positive_seconds);
    app.add_option("--reps", o.timing.rule.max_batches,
                   "at most N timed batches of each side (the submission, the reference) of a speed\n"
                   "case, each of 8 launcher calls, 1 to 10000 (default: 60); timing ends sooner once\n"
                   "both medians are known to --timing-precision")
        ->type_name("N")
        ->check(CLI::Range(1, 10000).description(""));
    app.add_option_function<double>(
           "--timing-precision", [&o](const double& percent) { o.timing.rule.target_rse = percent / 100; },
           "relative standard error of the medians at which a speed case's timing ends, in\n"
           "percent, 0.01 to 100 (default: 1)")
        ->type_name("PERCENT")
        ->check(CLI::Range(0.01, 100.0).description(""));
    const std::string bin_dir = bin_dir_of(command.options);
    app.add_option_function<std::string>(
           "--rubric", [&o](const std::string& path) { o.rubric = rubric_from_file(path); },
           "points, speed thresholds, weights and Gradescope's visibility, checked against\n" +
               shipped_file(bin_dir, "rubric.schema.json", "grading/rubric.schema.json") + "\nan example: " +
               shipped_file(bin_dir, "rubric.example.json", "grading/rubric.example.json") +
               "\na wrong rubric is a usage error (exit code 2)")
        ->type_name("FILE");
    app.add_option_function<std::string>(
           "--secret-file",
           [&o](const std::string& path) {
               if (o.hidden_secret && o.hidden_secret->source() == HiddenCaseSecret::Source::environment)
                   throw CLI::ValidationError("--secret-file", std::string("and ") + secret_variable +
                                                                   " both give a secret: give it one way");
               try {
                   o.hidden_secret = read_secret_file(path);
               } catch (const SecretError& e) {
                   throw CLI::ValidationError("--secret-file", e.what());
               }
           },
           std::string("the instructor's secret that the rubric's hidden cases draw their seeds from\n"
                       "(or the environment variable ") +
               secret_variable + ", which grade removes before anything runs)")
        ->type_name("FILE");
    app.add_option("--jobs", o.compile_jobs, "compiles in parallel, 1 to 1024 (default: number of cores)")
        ->type_name("N")
        ->check(CLI::Range(1, 1024).description(""));
    app.add_option("--parallel", o.parallel_exercises,
                   "exercises graded side by side, 1 to 64 (default: two thirds of the cores, 4 to 16);\n"
                   "their speed cases still take the GPU in turn")
        ->type_name("N")
        ->check(CLI::Range(1, 64).description(""));
    app.add_option("--nvcc", environment.toolchain.nvcc, "compiler (default: the one the grader was built with)")
        ->type_name("PATH");
    app.add_option("--arch", environment.toolchain.arch, "GPU architecture, e.g. 90 for sm_90 (default: the build's)")
        ->type_name("NN")
        ->check(gpu_architecture);
    app.add_flag_callback(
        "--no-reference-timing", [&environment] { environment.reference_runner.clear(); },
        "do not time the hidden reference (no speed points)");
    app.add_option("--reference-runner", environment.reference_runner,
                   "the reference runner to time against (default: next to grade)")
        ->type_name("P");
    app.add_flag("--no-sandbox", command.no_sandbox,
                 sandbox_by_default()
                     ? "run submitted code without the bubblewrap sandbox: for trusted code only\n"
                       "(results.json records it); without this option, grade refuses to grade\n"
                       "on a machine where the sandbox cannot run"
                     : "run the code without the bubblewrap sandbox (this grader's default: it is\n"
                       "the students' handout, which grades their own code)");
    // The handout's grader runs without the sandbox unless asked; the course's never needs asking.
    if (!sandbox_by_default())
        app.add_flag_callback(
            "--sandbox", [&command] { command.no_sandbox = false; },
            "run the code in the bubblewrap sandbox, as the course's grader always does");
    app.add_option("--gpu-lock-dir", command.gpu_lock_dir,
                   "where the GPU's lock file is (default /tmp): timed cases of every grading\n"
                   "that uses the same directory take turns on the GPU")
        ->type_name("DIR");
    app.add_option("--bwrap", command.bwrap, "the bubblewrap executable (default: bwrap from PATH)")->type_name("PATH");
    app.add_flag("--keep-work", o.keep_work, "keep the runners and logs under the work directory after grading");
    app.add_flag("--sanitize", o.sanitize,
                 "also run the small and medium cases under compute-sanitizer (memcheck, racecheck,\n"
                 "synccheck, initcheck; the rubric's sanitizer chooses the tools and prices findings)");
    app.add_option("--compute-sanitizer", environment.compute_sanitizer,
                   "the compute-sanitizer to use (default: the toolkit's, else from PATH)")
        ->type_name("PATH");
    app.callback([&app, &command] {
        if (app.got_subcommand("bench"))
            refuse_grading_options(app);
        else
            check_grade_command(app, command);
    });
}

// `grade bench`'s options, on its subcommand `app`.
void declare_bench_options(CLI::App& app, BenchCommand& command)
{
    app.footer(bench_footer);
    // As grade's own: help wins over a mistake elsewhere on the line.
    app.set_help_flag();
    app.add_flag_callback(
           "-h,--help", [] { throw CLI::CallForHelp(); }, "print this help, then exit")
        ->trigger_on_parse();
    app.add_option("--sizes", command.sizes,
                   "elements each exercise is measured at, 1 to 2^30 (default: 10000000,67108864);\n"
                   "conv2d: the smallest square image of at least that many pixels")
        ->type_name("N[,N...]")
        ->delimiter(',')
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30).description(""));
    app.add_option("--exercise", command.exercises, "only these exercises (default: all ten)")
        ->type_name("A[,B...]")
        ->delimiter(',')
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(known_exercise);
    app.add_option("--reps", command.reps, "timed calls of each kernel after 3 warm-up calls, 1 to 10000 (default: 30)")
        ->type_name("N")
        ->check(CLI::Range(1, 10000).description(""));
    app.add_option("--output-dir", command.output_dir, "where bench.md and bench.json go (default: .)")
        ->type_name("DIR");
    app.add_option("--reference-runner", command.reference_runner, "the reference runner (default: next to grade)")
        ->type_name("P");
    app.add_option("--gpu-lock-dir", command.gpu_lock_dir,
                   "where the GPU's lock file is (default /tmp): gradings that use the same\n"
                   "directory do not time anything while the bench measures")
        ->type_name("DIR");
    app.add_option_function<double>(
           "--time-limit", [&command](const double& s) { command.time_limit = to_milliseconds(s); },
           "wall-clock limit of the measurement in seconds (default: 600)")
        ->type_name("S")
        ->check(positive_seconds);
    app.callback([&command] {
        keep_each_exercise_once(command.exercises);
    });
}

}  // namespace

CommandLine parse_command_line(const std::vector<std::string>& args, const GradeOptions& defaults)
{
    if (args.size() > 1 && args[1] == "class") return parse_class_command_line(args, defaults);
    CLI::App app(description, "grade");
    app.footer(std::string(exit_codes) + "\n\nThe contract submissions follow: " +
               shipped_file(bin_dir_of(defaults), "CONTRACT.md", "docs/CONTRACT.md"));
    // Help and version win over a mistake anywhere else on the line, as before CLI11: their flags act as soon as
    // they are read, where CLI11 would first check every other option's value.
    app.set_help_flag();
    app.add_flag_callback(
           "-h,--help", [] { throw CLI::CallForHelp(); }, "print this help, then exit")
        ->trigger_on_parse();
    app.set_version_flag("--version", std::string("grade ") + GRADER_VERSION, "print the grader's version, then exit")
        ->trigger_on_parse();
    // As before CLI11: a repeated option overrides, so that a script can append to a command it was given.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

    GradeCommand grade;
    grade.options = defaults;
    grade.no_sandbox = !sandbox_by_default();
    declare_grade_options(app, grade);
    BenchCommand bench;
    bench.reference_runner = defaults.environment.reference_runner;
    CLI::App* bench_app = app.add_subcommand("bench", bench_description);
    declare_bench_options(*bench_app, bench);
    try {
        // CLI11 takes the arguments in reverse order, without the program's name.
        std::vector<std::string> reversed(args.rbegin(), args.rend());
        if (!reversed.empty()) reversed.pop_back();
        app.parse(reversed);
        if (bench_app->parsed()) return {std::nullopt, exit_success, "", bench};
        return {grade, exit_success, ""};
    } catch (const CLI::ParseError& e) {
        std::ostringstream out, err;
        if (app.exit(e, out, err) == 0) return {std::nullopt, exit_success, out.str()};  // --help, --version
        const std::string help = bench_app->parsed() ? "grade bench --help" : "grade --help";
        return {std::nullopt, exit_usage_error,
                "grade: " + std::string(e.what()) + "\n  (run " + help + " for the options)\n"};
    } catch (const RubricUnreadable& e) {
        return {
            std::nullopt, exit_environment_error,
            "grade: --rubric " + std::string(e.what()) + "\n  (make the file readable to the user grade runs as)\n"};
    }
}

}  // namespace grading
