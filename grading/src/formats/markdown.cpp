// A Markdown summary for a CI job summary ($GITHUB_STEP_SUMMARY) or a pull request comment: the
// table first, then only what needs fixing, short; results.json and the job log hold the rest.
#include "feedback.hpp"
#include "grading/first_fix.hpp"
#include "grading/formats.hpp"
#include "text.hpp"

namespace grading {
namespace {

using formats::fixed;
using formats::md_text;

constexpr std::size_t markdown_max_failing_cases = 10, markdown_max_compile_lines = 20;

std::string markdown_status(const ExerciseResult& e)
{
    if (e.status != ExerciseStatus::graded) return formats::spoken(e.status);
    if (!e.library_use.empty()) return "library use";
    return formats::all_cases_pass(e) ? "passed" : "failed";
}

std::string table_row(const ExerciseResult& e)
{
    const CaseResult* slowest = formats::slowest_timed_case(e);
    const bool speed = slowest && slowest->timing->reference_ms > 0;
    const std::string cases =
        e.cases.empty() ? "-" : std::to_string(formats::cases_passed(e)) + "/" + std::to_string(e.cases.size());
    return "| " + md_text(e.name) + " | " + md_text(markdown_status(e)) + " | " + cases + " | " + fixed(e.points, 2) +
           " / " + fixed(e.max_points, 2) + " | " +
           (speed ? fixed(slowest->timing->speedup_vs_reference, 2) + "\u00d7" : "-") + " | " +
           (slowest && slowest->timing->bandwidth_gb_s > 0 ? fixed(slowest->timing->bandwidth_gb_s, 0) : "-") + " |\n";
}

std::string failing_case_item(const CaseResult& c)
{
    std::string out = "- **" + md_text(c.label) + "**: " + md_text(formats::spoken(c.status));
    if (!c.summary.empty()) out += ": " + md_text(c.summary);
    out += "\n";
    if (!c.findings.empty()) out += "  - " + md_text(c.findings.front()) + "\n";
    if (!c.reproduce.empty()) out += "  - rerun: " + formats::md_code(c.reproduce) + "\n";
    return out;
}

// What failed in one exercise; empty when nothing did.
std::string failure_section(const ExerciseResult& e)
{
    if (e.status == ExerciseStatus::not_submitted) return "";
    const std::string heading = "### " + md_text(e.name) + ": ";
    const std::string fix = first_fix(e);
    const std::string fix_first = fix.empty() ? "" : md_text(fix) + "\n\n";
    if (e.status != ExerciseStatus::graded) {
        std::string out = heading + md_text(formats::spoken(e.status)) + "\n\n" + fix_first;
        if (!e.message.empty()) out += md_text(e.message) + "\n\n";
        if (!e.compile_output.empty() && e.status != ExerciseStatus::missing_launcher)
            out += formats::md_block(formats::first_lines(e.compile_output, markdown_max_compile_lines)) + "\n";
        return out;
    }
    const std::size_t failing = e.cases.size() - formats::cases_passed(e);
    const std::string technique = formats::technique_sentences(e, formats::Markup::markdown);
    if (failing == 0 && e.library_use.empty() && technique.empty()) return "";
    std::string out =
        heading +
        (failing > 0                 ? std::to_string(failing) + " of " + std::to_string(e.cases.size()) + " cases failed"
         : !e.library_use.empty() ? "library use"
                                  : "technique") +
        "\n\n";
    out += fix_first;
    if (!e.message.empty()) out += md_text(e.message) + "\n\n";
    if (!technique.empty()) out += technique.substr(1) + "\n";
    std::size_t listed = 0;
    for (const auto& c : e.cases)
        if (c.status != CaseStatus::pass && listed++ < markdown_max_failing_cases) out += failing_case_item(c);
    if (failing > markdown_max_failing_cases)
        out += "- ... and " + std::to_string(failing - markdown_max_failing_cases) + " more (results.json lists them all)\n";
    return out + "\n";
}

}  // namespace

std::string to_markdown_summary(const GradeReport& report)
{
    std::string out = "## GPU exercises: " + fixed(report.points, 2) + " / " + fixed(report.max_points, 2) +
                      " points\n\n"
                      "| exercise | status | cases passed | points | speed vs reference | GB/s |\n"
                      "| --- | --- | --- | --- | --- | --- |\n";
    for (const auto& e : report.exercises) out += table_row(e);
    out += "\nGraded on " + md_text(report.device.empty() ? std::string("no GPU") : report.device) +
           " by pmpp-grader " + md_text(report.grader_version) + " in " + fixed(report.seconds, 1) + " s.\n\n";

    std::string not_submitted;
    for (const auto& e : report.exercises) {
        out += failure_section(e);
        if (e.status == ExerciseStatus::not_submitted)
            not_submitted += (not_submitted.empty() ? "" : ", ") + md_text(e.name);
    }
    if (!not_submitted.empty()) out += "Not submitted: " + not_submitted + ".\n";
    return out;
}

}  // namespace grading
