#include "grading/report.hpp"

#include "grading/console.hpp"
#include "grading/first_fix.hpp"
#include "harness/cases.hpp"
#include "harness/text.hpp"

#include "formats/text.hpp"

#include <algorithm>
#include <cerrno>
#include <map>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <stdexcept>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sstream>

namespace grading {
namespace {

using formats::fixed;

nlohmann::json summary_json(const SampleSummary& s)
{
    return {{"count", s.count},        {"median_ms", s.median}, {"minimum_ms", s.minimum},
            {"maximum_ms", s.maximum}, {"spread", s.spread},    {"median_rse", s.median_rse}};
}

nlohmann::json timing_json(const TimingResult& t)
{
    return {{"student_ms", t.student_ms},
            {"reference_ms", t.reference_ms},
            {"reference_alone_ms", t.reference_alone_ms},
            {"reference_after_ms", t.reference_after_ms},
            {"fixed_cost_ms", t.fixed_cost_ms},
            {"student_window_ms", t.student_window_ms},
            {"reps_per_batch", t.reps_per_batch},
            {"student", summary_json(t.student)},
            {"reference", summary_json(t.reference)},
            {"warmup_batches", t.warmup_batches},
            {"rounds", t.rounds},
            {"capped", t.capped},
            {"stopping_rule", t.stopping_rule},
            {"turns", t.turns},
            {"other_processes", t.other_processes},
            {"cpu_ms", t.cpu_ms},
            {"speedup_vs_reference", t.speedup_vs_reference},
            {"speedup_vs_cpu", t.speedup_vs_cpu},
            {"bandwidth_gb_s", t.bandwidth_gb_s},
            {"reference_bandwidth_gb_s", t.reference_bandwidth_gb_s},
            {"fraction_of_copy", t.fraction_of_copy},
            {"verified_reps", t.verified_reps},
            {"host_link_bytes_per_call",
             {{"student", t.student_link_bytes_per_call ? nlohmann::json(*t.student_link_bytes_per_call) : nullptr},
              {"reference",
               t.reference_link_bytes_per_call ? nlohmann::json(*t.reference_link_bytes_per_call) : nullptr},
              {"idle", t.idle_link_bytes_per_call ? nlohmann::json(*t.idle_link_bytes_per_call) : nullptr}}},
            {"batch_seconds", t.batch_seconds},
            {"alone_seconds", t.alone_seconds},
            {"student_samples_ms", t.student_samples_ms},
            {"reference_samples_ms", t.reference_samples_ms},
            {"batches", t.batches},
            {"note", t.note}};
}

// A hidden case in a student's view (hidden_cases.hpp): its status and, timed, its speedup only.
nlohmann::json redacted_case_json(const CaseResult& c)
{
    nlohmann::json timing = nullptr;
    if (c.timing)
        timing = {{"student_ms", c.timing->student_ms},
                  {"reference_ms", c.timing->reference_ms},
                  {"speedup_vs_reference", c.timing->speedup_vs_reference}};
    return {{"label", c.label}, {"hidden", true},         {"timed", c.timed},
            {"status", c.status}, {"summary", c.summary}, {"timing", timing}};
}

nlohmann::json case_json(const CaseResult& c)
{
    nlohmann::json j = {{"index", c.index},
                        {"label", c.label},
                        {"hidden", c.hidden},
                        {"n", c.n},
                        {"data", c.data},
                        {"seed", harness::hex64(c.seed)},
                        {"timed", c.timed},
                        {"status", c.status},
                        {"seconds", c.seconds},
                        {"check_seconds", c.check_seconds},
                        {"gpu_wait_seconds", c.gpu_wait_seconds},
                        {"gpu_exclusive_seconds", c.gpu_exclusive_seconds},
                        {"summary", c.summary},
                        {"findings", c.findings},
                        {"detail", c.detail},
                        {"timing_withheld", c.timing_withheld},
                        {"reproduce", c.reproduce}};
    j["shape"] = c.shape;
    j["timing"] = c.timing ? timing_json(*c.timing) : nlohmann::json(nullptr);
    return j;
}

// What the compiled code shows of the exercise's technique (grading/technique.hpp): one object
// per technique, every one reported, whether expected, required, found or not checked and why.
nlohmann::json technique_json(const std::optional<TechniqueReport>& t)
{
    if (!t) return nullptr;
    nlohmann::json checks = nlohmann::json::object();
    for (const auto& c : t->checks)
        checks[harness::to_text(c.technique)] = {
            {"description", describe(c.technique)},
            {"expected", c.expected},
            {"required", t->required(c.technique, t->require_all)},
            {"basis", c.basis},
            {"found", c.found ? nlohmann::json(*c.found) : nlohmann::json(nullptr)},
            {"evidence", c.evidence},
            {"not_checked", c.found ? std::string() : c.not_checked}};
    nlohmann::json missing = nlohmann::json::array();
    for (const auto m : t->missing()) missing.push_back(harness::to_text(m));
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : t->resources)
        kernels.push_back({{"name", k.name},
                           {"arch", k.arch},
                           {"registers", k.registers},
                           {"shared_bytes", k.shared_bytes},
                           {"local_bytes", k.local_bytes},
                           {"stack_bytes", k.stack_bytes}});
    return {{"mode", t->require_all ? "require" : "report"},
            {"kernels", t->kernels ? nlohmann::json(*t->kernels) : nlohmann::json(nullptr)},
            {"kernel_names", t->kernel_names},
            {"checks", checks},
            {"missing", missing},
            {"resources", {{"checked", !t->resources.empty()}, {"note", t->resources_not_checked}, {"kernels", kernels}}}};
}

// Every string and key of `j` made valid_text (harness/text.hpp): text from a submission is cleaned
// where it enters, and this is the results' last line of defence, so that a byte that slipped
// past (a file name, a message a later change forgot) costs nothing but itself. Iterative: how deep
// `j` is does not matter.
void make_valid(nlohmann::json& j)
{
    std::vector<nlohmann::json*> pending = {&j};
    while (!pending.empty()) {
        nlohmann::json& value = *pending.back();
        pending.pop_back();
        if (value.is_string()) {
            std::string& text = value.get_ref<std::string&>();
            if (std::string clean = harness::valid_text(text); clean != text) text = std::move(clean);
        } else if (value.is_object()) {
            bool keys_valid = true;
            for (const auto& item : value.items())
                keys_valid = keys_valid && harness::valid_text(item.key()) == item.key();
            if (!keys_valid) {
                nlohmann::json renamed = nlohmann::json::object();
                for (auto& [key, member] : value.items()) renamed[harness::valid_text(key)] = std::move(member);
                value = std::move(renamed);
            }
            for (auto& member : value) pending.push_back(&member);
        } else if (value.is_array()) {
            for (auto& element : value) pending.push_back(&element);
        }
    }
}

// The table's status word: what a student needs from one glance. "graded" alone would read the
// same for 0 of 24 cases passed and for all 24.
std::string table_status(const ExerciseResult& e)
{
    if (e.status != ExerciseStatus::graded) return to_text(e.status);
    const auto failing = failing_cases(e);
    if (failing > 0) return "failed (" + std::to_string(failing) + " of " + std::to_string(e.cases.size()) + ")";
    return e.library_use.empty() ? "passed" : "library use";
}

std::string plural(std::size_t count, const std::string& one, const std::string& many)
{
    return std::to_string(count) + " " + (count == 1 ? one : many);
}

// One line per exercise whose compiled code lacks a technique it is expected to show.
void print_technique_lines(const GradeReport& report, std::ostream& out)
{
    for (const auto& e : report.exercises) {
        if (!e.technique) continue;
        const auto missing = e.technique->missing();
        if (missing.empty()) continue;
        std::string line;
        for (const auto m : missing) line += std::string(line.empty() ? "" : "; ") + "never " + describe(m);
        const bool costs = !e.technique->missing_required(e.technique->require_all).empty();
        out << "technique: " << e.name << ": " << line << (costs ? " (no points)" : "") << "\n";
    }
}

}  // namespace

// The sanitizer step with what its findings cost; null when it did not run.
static nlohmann::json sanitizer_json(const ExerciseResult& e)
{
    if (e.sanitizer.is_null()) return nullptr;
    nlohmann::json j = e.sanitizer;
    j["points_lost"] = e.sanitizer_points_lost;
    j["tools_with_findings"] = e.sanitizer_tools_with_findings;
    return j;
}

nlohmann::json to_json(const GradeReport& report)
{
    nlohmann::json exercises = nlohmann::json::array();
    for (const auto& e : report.exercises) {
        // A student's view (hidden_cases.hpp) lists its hidden cases apart, as little as they are.
        nlohmann::json cases = nlohmann::json::array(), hidden_cases = nlohmann::json::array();
        for (const auto& c : e.cases)
            (report.hidden_cases.redacted && c.hidden ? hidden_cases : cases)
                .push_back(report.hidden_cases.redacted && c.hidden ? redacted_case_json(c) : case_json(c));
        exercises.push_back({{"name", e.name},
                             {"status", e.status},
                             {"message", e.message},
                             {"first_fix", first_fix(e)},
                             {"source", e.source},
                             {"points", e.points},
                             {"max_points", e.max_points},
                             {"correctness_points", e.correctness_points},
                             {"speed_points", e.speed_points},
                             {"compile_seconds", e.compile_seconds},
                             {"compile_output", e.compile_output},
                             {"library_use", e.library_use},
                             {"code_checks", e.code_checks},
                             {"technique", technique_json(e.technique)},
                             {"sanitizer", sanitizer_json(e)},
                             {"runner_output", e.runner_output},
                             {"seconds", e.seconds},
                             {"started_seconds", e.started_seconds},
                             {"gpu_place_wait_seconds", e.gpu_place_wait_seconds},
                             {"cases", cases}});
        if (report.hidden_cases.redacted) {
            exercises.back()["hidden_cases"] = hidden_cases;
        } else {
            exercises.back()["hidden_runner_output"] = e.hidden_runner_output;
            exercises.back()["fingerprint"] = e.fingerprint;
        }
    }
    const HiddenCasesSummary& hidden = report.hidden_cases;
    nlohmann::json results = {{"schema_version", results_schema_version},
                              {"grader_version", report.grader_version},
                              {"started_at", report.started_at},
                              {"submission", report.submission},
                              {"device", report.device},
                              {"compute_capability", report.compute_capability},
                              {"calibration", report.calibration},
                              {"sandbox", report.sandbox},
                              {"sandbox_limits", report.sandbox_limits},
                              {"hidden_cases",
                               {{"count", hidden.count},
                                {"secret_id", hidden.secret_id.empty() ? nlohmann::json(nullptr)
                                                                       : nlohmann::json(hidden.secret_id)},
                                {"redacted", hidden.redacted}}},
                              {"points", report.points},
                              {"max_points", report.max_points},
                              {"seconds", report.seconds},
                              {"exercises", exercises}};
    make_valid(results);
    return results;
}

std::string to_json_text(const GradeReport& report)
{
    // Replace, not throw, as the other formats do (formats/write.cpp): to_json made every string
    // valid already, this holds even where it did not.
    return to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void print_summary_table(const GradeReport& report, std::ostream& out, bool colour)
{
    out << "\n"
        << std::left << std::setw(35) << "exercise" << std::setw(19) << "status" << std::right << std::setw(7)
        << "cases" << std::setw(13) << "points" << std::setw(12) << "vs ref" << std::setw(10) << "GB/s"
        << "\n";
    out << std::string(96, '-') << "\n";
    for (const auto& e : report.exercises) {
        std::size_t passed = 0;
        std::string speed = "-", bandwidth = "-";
        for (const auto& c : e.cases) {
            passed += c.status == CaseStatus::pass;
            if (c.timing && c.timing->student_ms > 0) {
                if (c.timing->reference_ms > 0) speed = fixed(c.timing->speedup_vs_reference, 2) + "x";
                bandwidth = fixed(c.timing->bandwidth_gb_s, 0);
            }
        }
        const std::string cases = e.cases.empty() ? "-" : std::to_string(passed) + "/" + std::to_string(e.cases.size());
        std::ostringstream status;
        status << std::left << std::setw(19) << table_status(e);
        out << std::left << std::setw(35) << e.name << paint(status.str(), tone_of(e), colour) << std::right
            << std::setw(7) << cases << std::setw(13) << (fixed(e.points, 2) + "/" + fixed(e.max_points, 0))
            << std::setw(12) << speed << std::setw(10) << bandwidth << "\n";
    }
    out << std::string(96, '-') << "\n";
    out << std::left << std::setw(61) << "total" << std::right << std::setw(13)
        << (fixed(report.points, 2) + "/" + fixed(report.max_points, 0)) << "\n";
    out << "device: "
        << (report.device.empty()
                ? "(none used)"
                : harness::printable_text(report.device + " (compute capability " + report.compute_capability + ")"))
        << "; wall time " << fixed(report.seconds, 1) << " s\n";
    print_technique_lines(report, out);
}

std::size_t failing_cases(const ExerciseResult& exercise)
{
    return static_cast<std::size_t>(std::count_if(exercise.cases.begin(), exercise.cases.end(),
                                                  [](const CaseResult& c) { return c.status != CaseStatus::pass; }));
}

std::string grading_verdict(const GradeReport& report, bool build_only, const Rubric* rubric)
{
    std::size_t cases = 0, failing = 0, exercises_failing = 0, built = 0;
    std::map<ExerciseStatus, std::size_t> not_graded;  // by status, in the statuses' order
    std::size_t library_use = 0, withheld = 0;
    for (const auto& e : report.exercises) {
        const bool no_points = (e.status == ExerciseStatus::built || e.status == ExerciseStatus::graded) &&
                               e.library_use.empty() && rubric != nullptr && points_withheld(*rubric, e);
        withheld += no_points;
        if (e.status == ExerciseStatus::built) {
            // One that calls a library to do the work builds, but does not pass what the build checks.
            if (!no_points) ++(e.library_use.empty() ? built : library_use);
        } else if (e.status != ExerciseStatus::graded) {
            ++not_graded[e.status];
        } else {
            cases += e.cases.size();
            const std::size_t f = failing_cases(e);
            failing += f;
            exercises_failing += f > 0;
            library_use += f == 0 && !e.library_use.empty();
        }
    }
    std::string text;
    if (built > 0 || build_only)
        text = built == 0   ? "no file builds and passes the build checks"
               : built == 1 ? "1 file builds and passes the build checks"
                            : std::to_string(built) + " files build and pass the build checks";
    if (cases > 0) {
        if (!text.empty()) text += "; ";
        text += failing > 0    ? std::to_string(failing) + " of " + plural(cases, "case fails", "cases fail") + " in " +
                                     plural(exercises_failing, "exercise", "exercises")
                : cases == 1 ? "the one case passes"
                             : "all " + std::to_string(cases) + " cases pass";
    } else if (!build_only) {
        text = "no case ran";
    }
    if (library_use > 0) text += "; " + plural(library_use, "exercise uses", "exercises use") + " a library it may not";
    if (withheld > 0)
        text += "; " + plural(withheld, "exercise scores", "exercises score") +
                " no points whatever its cases do (its message says why)";
    for (const auto& [status, count] : not_graded) {
        std::string words = to_text(status);
        std::replace(words.begin(), words.end(), '_', ' ');
        text += "; " + std::to_string(count) + " " + words;
    }
    return (build_only ? "checked: " : "graded: ") + text;
}

void write_file_atomically(const std::string& path, const std::string& text)
{
    const std::filesystem::path target(path);
    const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    std::string temporary = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
    const int fd = ::mkstemp(temporary.data());
    if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
    }
    const int saved = errno;
    const bool written = done == text.size() && ::fchmod(fd, 0644) == 0 && ::fsync(fd) == 0;
    ::close(fd);
    if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(written ? errno : saved);
        ::unlink(temporary.c_str());
        throw std::runtime_error("cannot write " + path + ": " + why);
    }
}

}  // namespace grading
