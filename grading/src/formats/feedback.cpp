#include "feedback.hpp"

#include <algorithm>
#include <cctype>

#include "grading/first_fix.hpp"
#include "text.hpp"

namespace grading::formats {
namespace {

// Enough to act on; results.json keeps everything.
constexpr std::size_t max_failing_cases = 20, max_findings = 5, max_compile_lines = 40, max_runner_chars = 2000;

std::string shown(std::string_view text, Markup markup)
{
    return markup == Markup::markdown ? md_text(text) : valid_text(text);
}

std::string strong(std::string_view text, Markup markup)
{
    return markup == Markup::markdown ? "**" + md_text(text) + "**" : valid_text(text);
}

std::string code(std::string_view text, Markup markup)
{
    return markup == Markup::markdown ? md_code(text) : valid_text(text);
}

std::string block(std::string_view text, Markup markup)
{
    if (markup == Markup::markdown) return md_block(text);
    std::string out = "    ";
    for (const char c : valid_text(text)) out += c == '\n' ? std::string("\n    ") : std::string(1, c);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out.empty() || out.back() == '\n' ? out : out + "\n";
}

std::string item(const std::string& rendered, Markup markup)
{
    return (markup == Markup::markdown ? "- " : "  ") + rendered + "\n";
}

std::string capitalized(std::string text)
{
    if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    return text;
}

std::string plural(std::size_t count, const std::string& noun)
{
    return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

bool has_time(const CaseResult& c)
{
    return c.timing && c.timing->student_ms > 0;
}

// A timed case without a time scores no speed points (score_exercise counts it as 0x).
bool timed_case_without_time(const ExerciseResult& exercise)
{
    return std::any_of(exercise.cases.begin(), exercise.cases.end(),
                       [](const CaseResult& c) { return c.timed && !has_time(c); });
}

std::string failing_case(const CaseResult& c, Markup markup)
{
    std::string out = strong(c.label, markup) + ": " + shown(spoken(c.status), markup);
    if (!c.summary.empty()) out += ": " + shown(c.summary, markup);
    out += "\n";
    for (std::size_t i = 0; i < c.findings.size() && i < max_findings; ++i)
        out += item(shown(c.findings[i], markup), markup);
    if (c.findings.size() > max_findings)
        out += item("... and " + plural(c.findings.size() - max_findings, "more finding"), markup);
    if (!c.reproduce.empty()) out += item("rerun: " + code(c.reproduce, markup), markup);
    return out;
}

std::string runner_output(const ExerciseResult& exercise, Markup markup)
{
    if (exercise.runner_output.empty()) return "";
    return "\nYour program printed (the last of it):\n\n" +
           block(last_chars(exercise.runner_output, max_runner_chars), markup);
}

}  // namespace

PointsSplit split_points(const ExerciseResult& exercise, const Rubric& rubric)
{
    const double whole = rubric.correctness_points + rubric.speed_points;
    if (whole <= 0) return {};
    const double correctness = exercise.max_points * rubric.correctness_points / whole;
    return {correctness, exercise.max_points - correctness};
}

std::size_t cases_passed(const ExerciseResult& exercise)
{
    return static_cast<std::size_t>(std::count_if(exercise.cases.begin(), exercise.cases.end(),
                                                  [](const CaseResult& c) { return c.status == CaseStatus::pass; }));
}

bool all_cases_pass(const ExerciseResult& exercise)
{
    return exercise.status == ExerciseStatus::graded && !exercise.cases.empty() &&
           cases_passed(exercise) == exercise.cases.size();
}

bool is_error(CaseStatus status)
{
    return status != CaseStatus::pass && status != CaseStatus::wrong && status != CaseStatus::not_run;
}

std::string spoken(ExerciseStatus status)
{
    std::string text = to_text(status);
    std::replace(text.begin(), text.end(), '_', ' ');
    return text;
}

std::string spoken(CaseStatus status)
{
    std::string text = to_text(status);
    std::replace(text.begin(), text.end(), '_', ' ');
    return text;
}

const CaseResult* slowest_timed_case(const ExerciseResult& exercise)
{
    const CaseResult* slowest = nullptr;
    for (const auto& c : exercise.cases)
        if (c.timed && has_time(c) &&
            (!slowest || c.timing->speedup_vs_reference < slowest->timing->speedup_vs_reference))
            slowest = &c;
    return slowest;
}

std::optional<double> counted_speedup(const ExerciseResult& exercise)
{
    const CaseResult* slowest = slowest_timed_case(exercise);
    if (!all_cases_pass(exercise) || timed_case_without_time(exercise) || !slowest) return std::nullopt;
    return slowest->timing->speedup_vs_reference;
}

std::string status_line(const ExerciseResult& exercise)
{
    return spoken(exercise.status) + (exercise.message.empty() ? "" : ": " + exercise.message);
}

std::string correctness_message(const ExerciseResult& exercise)
{
    if (exercise.status != ExerciseStatus::graded) return status_line(exercise);
    const std::size_t passed = cases_passed(exercise), total = exercise.cases.size();
    std::string text = total == 0        ? "no case ran"
                       : passed == total ? "all " + plural(total, "case") + " passed"
                                         : std::to_string(passed) + " of " + plural(total, "case") + " passed";
    if (!exercise.message.empty()) text += "; " + exercise.message;
    return text;
}

std::string speed_message(const ExerciseResult& exercise)
{
    if (exercise.status != ExerciseStatus::graded) return "no speed points: " + spoken(exercise.status);
    if (!all_cases_pass(exercise))
        return "speed points need every case to pass (" + std::to_string(cases_passed(exercise)) + " of " +
               std::to_string(exercise.cases.size()) + " passed)";
    if (timed_case_without_time(exercise)) return "a timed case has no time, so no speed points";
    const CaseResult* slowest = slowest_timed_case(exercise);
    if (!slowest) return "no case of this exercise is timed";
    return fixed(slowest->timing->speedup_vs_reference, 2) +
           "\u00d7 the reference's speed (slowest timed case: " + slowest->label + ")";
}

std::string timing_line(const TimingResult& t)
{
    std::string line = fixed(t.student_ms, 4) + " ms";
    if (t.reference_ms > 0)
        line += ", reference " + fixed(t.reference_ms, 4) + " ms: " + fixed(t.speedup_vs_reference, 2) +
                "\u00d7 the reference's speed";
    if (t.speedup_vs_cpu > 0) line += ", " + fixed(t.speedup_vs_cpu, 1) + "\u00d7 the CPU's";
    if (t.bandwidth_gb_s > 0) {
        line += "; " + fixed(t.bandwidth_gb_s, 0) + " GB/s";
        if (t.reference_bandwidth_gb_s > 0) line += " (reference " + fixed(t.reference_bandwidth_gb_s, 0) + " GB/s)";
        if (t.fraction_of_copy > 0) line += ", " + fixed(100 * t.fraction_of_copy, 0) + "% of the GPU's copy bandwidth";
    }
    return line;
}

std::string technique_sentences(const ExerciseResult& exercise, Markup markup)
{
    if (!exercise.technique) return {};
    std::string out;
    for (const auto t : exercise.technique->missing()) {
        const bool costs = exercise.technique->required(t, exercise.technique->require_all);
        out += item(capitalized(shown(missing_sentence(t), markup)) + (costs ? " (no points until it does)." : "."),
                    markup);
    }
    return out.empty() ? out : "\nWhat the compiled code shows of the exercise's technique:\n\n" + out;
}

// The sanitizer step, one item per tool: its findings' explanations (at most 3), clean, or not
// checked and why. Empty when it did not run.
std::string sanitizer_details(const ExerciseResult& exercise, Markup markup)
{
    if (!exercise.sanitizer.is_object()) return "";
    std::string out;
    for (const auto& [tool, r] : exercise.sanitizer.items()) {
        if (!r.is_object() || !r.contains("checked")) continue;
        const nlohmann::json findings = r.value("findings", nlohmann::json::array());
        std::string line = strong("compute-sanitizer " + tool, markup) + ": ";
        if (!findings.empty()) {
            for (std::size_t k = 0; k < findings.size() && k < 3; ++k)
                line += (k ? "; " : "") + shown(findings[k].value("explanation", std::string()), markup);
            if (findings.size() + r.value("not_listed", std::size_t{0}) > 3) line += " (results.json lists more)";
        } else {
            line += r.value("checked", false) ? "nothing found" : shown(r.value("why", std::string("not checked")), markup);
        }
        out += item(line, markup);
    }
    if (exercise.sanitizer_points_lost > 0)
        out += "Sanitizer findings cost " + fixed(exercise.sanitizer_points_lost, 2) + " points.\n";
    return out.empty() ? out : "\n" + out;
}

std::string correctness_details(const ExerciseResult& exercise, Markup markup)
{
    const std::string fix = first_fix(exercise);
    const std::string fix_first = fix.empty() ? "" : shown(fix, markup) + "\n\n";
    if (exercise.status != ExerciseStatus::graded) {
        std::string out = fix_first + strong(capitalized(spoken(exercise.status)), markup);
        if (!exercise.message.empty()) out += ": " + shown(exercise.message, markup);
        out += "\n";
        if (!exercise.compile_output.empty() && exercise.status != ExerciseStatus::missing_launcher)
            out += "\nThe compiler said (first lines):\n\n" +
                   block(first_lines(exercise.compile_output, max_compile_lines), markup);
        return out + runner_output(exercise, markup);
    }
    std::string out = strong(capitalized(correctness_message(exercise)) + ".", markup) + "\n";
    out += technique_sentences(exercise, markup);
    std::size_t shown_cases = 0, failing = 0;
    for (const auto& c : exercise.cases) {
        if (c.status == CaseStatus::pass) continue;
        if (++failing > max_failing_cases) continue;
        out += "\n" + failing_case(c, markup);
        ++shown_cases;
    }
    if (failing > shown_cases)
        out += "\n... and " + plural(failing - shown_cases, "more failing case") + " (results.json lists them all)\n";
    return fix_first + (failing > 0 ? out + runner_output(exercise, markup) : out) + sanitizer_details(exercise, markup);
}

std::string speed_details(const ExerciseResult& exercise, const Rubric& rubric, Markup markup)
{
    if (exercise.status != ExerciseStatus::graded)
        return strong("No speed points", markup) + ": " + shown(status_line(exercise), markup) + "\n";
    std::string out;
    for (const auto& c : exercise.cases) {
        if (!c.timed) continue;
        std::string line = strong(c.label, markup) + ": ";
        if (has_time(c))
            line += shown(timing_line(*c.timing), markup);
        else
            line += "no time (" +
                    shown(c.timing && !c.timing->note.empty() ? c.timing->note : spoken(c.status), markup) + ")";
        if (has_time(c) && !c.timing->note.empty()) line += " (" + shown(c.timing->note, markup) + ")";
        out += item(line, markup);
    }
    if (out.empty()) out = "No case of this exercise is timed.\n";
    out += "\n";
    if (!counted_speedup(exercise))  // the message says why no speedup counts
        out += capitalized(shown(speed_message(exercise), markup)) + ".\n";
    else
        out += "Speed points follow the slowest timed case: all of them from " + fixed(rubric.speed_full, 2) +
               "\u00d7 the reference's speed, none below " + fixed(rubric.speed_floor, 2) + "\u00d7.\n";
    if (!exercise.library_use.empty() && rubric.library_use_costs_all) out += shown(exercise.message, markup) + "\n";
    return out;
}

}  // namespace grading::formats
