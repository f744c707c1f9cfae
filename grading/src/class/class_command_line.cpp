// `grade class` and `grade class merge`: their own options, and the grading options passed through to
// every student's `grade`, checked here by parsing them as one grading's (parse_command_line).
#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "grading/command_line.hpp"

namespace grading {
namespace {

const char* class_description =
    R"(Grades every student folder below DIR, each by a `grade` of its own (so a student's grading that
crashes or hangs costs only that student), several at once on each GPU, and writes the class's
results in OUT: class.csv, results.json (grading/class_results.schema.json) and report.html, and
each student's files in OUT/students/<name>/ (results.json, gradescope.json, junit.xml,
summary.md, prairielearn.json, student-results.json, grade.log).
  grade class --submissions DIR --output-dir OUT [OPTIONS] [GRADING OPTIONS]
  grade class merge --output-dir OUT [--submissions DIR] [SHARD_DIR...]

DIR holds one folder per student, a Gradescope "Export Submissions" folder (submission_metadata.yml
beside submission_<id>/), or a GitHub Classroom clone (<assignment>-<username>/). Run the same
command again after a stop, even kill -9: students whose results.json is there are not graded again
(those graded with other grading options or another rubric are named: --regrade them).)";

const char* class_footer = R"(Grading options, passed to every student's grade (see grade --help): --exercise, --rubric,
--arch, --nvcc, --reference-runner, --no-reference-timing, --time-limit, --case-time-limit,
--reps, --timing-precision, --jobs, --parallel, --case, --no-sandbox, --bwrap, --gpu-lock-dir,
--secret-file (or PMPP_GRADER_SECRET in the environment: each student's grade gets it there).
Each student's grade gets CUDA_VISIBLE_DEVICES=<its GPU>; timed phases take turns on each GPU
across every grading (its lock file), correctness phases run side by side.

Exit codes:
  0  every student of this run was graded and passed every case
  1  graded; some student did not pass everything, or could not be graded (the report says who)
  2  usage error: the command line, the rubric or the submissions folder is wrong; nothing was graded
  3  this machine cannot grade (as grade's exit code 3); nothing was graded)";

// One grading's options that the class sets itself for each student, or are its own.
const std::set<std::string> class_owned = {"--submission", "--output",   "--gradescope", "--prairielearn",
                                           "--junit",      "--markdown", "--work-dir",   "--list",
                                           "--keep-work",  "--quiet",    "--student-results"};

const CLI::Validator shard_form(
    [](std::string& text) -> std::string {
        std::smatch m;
        if (!std::regex_match(text, m, std::regex("([0-9]{1,6})/([0-9]{1,6})")))
            return "expected I/N, e.g. 0/4, not '" + text + "'";
        const int i = std::stoi(m[1]), n = std::stoi(m[2]);
        if (n < 1 || i >= n) return "expected 0 <= I < N, not '" + text + "'";
        return {};
    },
    "");

const CLI::Validator gpu_name(
    [](std::string& text) -> std::string {
        if (std::regex_match(text, std::regex("[A-Za-z0-9:/_-]{1,96}"))) return {};
        return "expected a CUDA device index or UUID (e.g. 0 or GPU-5e3a...), not '" + text + "'";
    },
    "");

const CLI::Validator student_limit_seconds(
    [](std::string& text) -> std::string {
        char* end = nullptr;
        const double seconds = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !(seconds >= 1 && seconds <= 7 * 24 * 3600))
            return "expected seconds, 1 to 604800, not " + text;
        return {};
    },
    "");

std::string option_name(const std::string& arg)
{
    return arg.substr(0, arg.find('='));
}

CommandLine usage_error(const std::string& what, const std::string& help)
{
    CommandLine result;
    result.exit_code = exit_usage_error;
    result.message = "grade class: " + what + "\n  (run " + help + " for the options)\n";
    return result;
}

}  // namespace

CommandLine parse_class_command_line(const std::vector<std::string>& args, const GradeOptions& defaults)
{
    CLI::App app(class_description, "grade class");
    app.footer(class_footer);
    app.set_help_flag();
    app.add_flag_callback(
           "-h,--help", [] { throw CLI::CallForHelp(); }, "print this help, then exit")
        ->trigger_on_parse();
    app.allow_extras();
    ClassCommand command;
    app.add_option("--submissions", command.submissions, "the folder of student folders")->type_name("DIR");
    app.add_option("--output-dir", command.output_dir, "where the class's and each student's results go")
        ->type_name("OUT");
    app.add_option("--gpus", command.gpus,
                   "the GPUs to grade on, as CUDA_VISIBLE_DEVICES names them (default: every GPU\n"
                   "visible: CUDA_VISIBLE_DEVICES where set, else nvidia-smi -L)")
        ->type_name("G[,G...]")
        ->delimiter(',')
        ->check(gpu_name);
    app.add_option("--per-gpu", command.per_gpu, "students graded at once on each GPU, 1 to 32 (default: 2; more is slower for correct submissions: docs/gpu-runs.md)")
        ->type_name("K")
        ->check(CLI::Range(1, 32).description(""));
    app.add_option("--regrade", command.regrade,
                   "grade these students again (names as in OUT/students/); their previous results\n"
                   "are kept in OUT/students/<name>/previous/<n>/ and the report says what changed")
        ->type_name("NAME[,NAME...]")
        ->delimiter(',')
        ->expected(1, -1);
    std::string shard;
    app.add_option("--shard", shard,
                   "grade only share I of N of the students: those whose folder name's SHA-256 (its\n"
                   "first 8 bytes) mod N is I, so adding a folder moves nobody; then grade class merge")
        ->type_name("I/N")
        ->check(shard_form);
    app.add_option_function<double>(
           "--student-time-limit",
           [&command](const double& s) { command.student_time_limit = std::chrono::seconds(static_cast<long>(s)); },
           "wall-clock limit of one student's whole grading in seconds (default: 1800); it counts\n"
           "the time the grading waits for the GPU behind the others on it, so keep it well above\n"
           "a grading's time alone times --per-gpu (a student stopped by it is not graded, and\n"
           "is graded again by the next run)")
        ->type_name("S")
        ->check(student_limit_seconds);
    app.add_flag("--keep-work", command.keep_work, "keep each student's work directory (runners, logs)");
    app.add_flag("--quiet", command.quiet, "no line per student, only the summary at the end");

    ClassMergeCommand merge;
    CLI::App* merge_app = app.add_subcommand(
        "merge", "builds the class's results from the students' results under OUT and each SHARD_DIR");
    merge_app->add_option("--output-dir", merge.output_dir, "where the class's results go")
        ->type_name("OUT")
        ->required();
    merge_app
        ->add_option("--submissions", merge.submissions,
                     "the class's submissions folder: names the students no shard graded, and leaves\n"
                     "out folders of students no longer in it")
        ->type_name("DIR");
    merge_app->add_option("shard_dirs", merge.shard_dirs,
                          "output folders of shards graded elsewhere; their students are copied into OUT")
        ->type_name("SHARD_DIR");

    command.student_time_limit = std::chrono::seconds(1800);
    try {
        std::vector<std::string> reversed(args.rbegin(), args.rend());
        reversed.resize(reversed.size() - 2);  // "grade", "class"
        app.parse(reversed);
    } catch (const CLI::ParseError& e) {
        std::ostringstream out, err;
        if (app.exit(e, out, err) == 0) {
            CommandLine help;
            help.message = out.str();
            return help;
        }
        return usage_error(e.what(), "grade class --help");
    }

    if (merge_app->parsed()) {
        if (!merge_app->remaining().empty() || !app.remaining().empty())
            return usage_error("grade class merge takes only --output-dir, --submissions and shard folders",
                               "grade class --help");
        if (merge.submissions.empty()) merge.submissions = command.submissions;  // given before "merge"
        CommandLine result;
        result.class_merge = merge;
        return result;
    }
    if (command.submissions.empty()) return usage_error("--submissions is required", "grade class --help");
    if (command.output_dir.empty()) return usage_error("--output-dir is required", "grade class --help");
    if (!shard.empty()) {
        const auto slash = shard.find('/');
        command.shard_index = std::stoi(shard.substr(0, slash));
        command.shard_count = std::stoi(shard.substr(slash + 1));
    }
    std::sort(command.gpus.begin(), command.gpus.end());
    if (std::adjacent_find(command.gpus.begin(), command.gpus.end()) != command.gpus.end())
        return usage_error("--gpus names a GPU twice", "grade class --help");

    // The rest are grading options: none that the class sets per student, and all of them right.
    command.grade_args = app.remaining();
    for (const auto& arg : command.grade_args)
        if (class_owned.count(option_name(arg)))
            return usage_error(option_name(arg) + " is set by grade class for each student, not an option of it",
                               "grade class --help");
    std::vector<std::string> one = {args.empty() ? "grade" : args[0], "--submission", command.submissions};
    one.insert(one.end(), command.grade_args.begin(), command.grade_args.end());
    CommandLine parsed = parse_command_line(one, defaults);
    if (!parsed.grade) {
        if (parsed.exit_code == exit_success) return usage_error("unexpected " + parsed.message, "grade class --help");
        std::string message = parsed.message;
        if (message.rfind("grade: ", 0) == 0) message = "grade class: " + message.substr(7);
        const auto help = message.find("(run grade --help");
        if (help != std::string::npos) message.replace(help, 17, "(run grade class --help, and grade --help");
        parsed.message = message;
        return parsed;
    }
    command.options = parsed.grade->options;
    command.no_sandbox = parsed.grade->no_sandbox;
    command.bwrap = parsed.grade->bwrap;
    CommandLine result;
    result.class_grading = command;
    return result;
}

}  // namespace grading
