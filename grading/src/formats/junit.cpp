// JUnit XML as CI systems read it (the Ant schema Jenkins follows; GitLab's "Unit test reports"):
// GitLab shows <testcase classname> as the suite and the bodies of <failure>, <error> and
// <skipped>, not their attributes, so the bodies carry the whole story.
#include <map>

#include "feedback.hpp"
#include "grading/formats.hpp"
#include "text.hpp"

namespace grading {
namespace {

using formats::fixed;
using formats::xml_attribute;
using formats::xml_text;

constexpr std::size_t junit_max_compile_lines = 200;

struct Counts {
    int tests = 0, failures = 0, errors = 0, skipped = 0;
    Counts& operator+=(const Counts& other)
    {
        tests += other.tests, failures += other.failures, errors += other.errors, skipped += other.skipped;
        return *this;
    }
};

std::string counts_attributes(const Counts& counts, double seconds)
{
    return " tests=\"" + std::to_string(counts.tests) + "\" failures=\"" + std::to_string(counts.failures) +
           "\" errors=\"" + std::to_string(counts.errors) + "\" skipped=\"" + std::to_string(counts.skipped) +
           "\" time=\"" + fixed(seconds, 3) + "\"";
}

// <failure>, <error> or <skipped>, with the message attribute Jenkins shows and, but for <skipped>
// (some readers take it without attributes but message), the type: the status.
std::string outcome(const std::string& element, const std::string& type, const std::string& message,
                    const std::string& body)
{
    const std::string typed = element == "skipped" ? "" : " type=\"" + xml_attribute(type) + "\"";
    return "      <" + element + typed + " message=\"" + xml_attribute(message) + "\">" + xml_text(body) + "</" +
           element + ">\n";
}

// Appends one <testcase>, counting it and its outcome (`element` empty: passed).
void add_testcase(std::string& xml, Counts& counts, const std::string& classname, const std::string& name,
                  double seconds, const std::string& element, const std::string& inner)
{
    ++counts.tests;
    counts.failures += element == "failure";
    counts.errors += element == "error";
    counts.skipped += element == "skipped";
    xml += "    <testcase classname=\"" + xml_attribute(classname) + "\" name=\"" + xml_attribute(name) + "\" time=\"" +
           fixed(seconds, 3) + "\"";
    xml += inner.empty() ? "/>\n" : ">\n" + inner + "    </testcase>\n";
}

std::string case_body(const CaseResult& c)
{
    std::string body = c.summary.empty() ? formats::spoken(c.status) : c.summary;
    for (const auto& finding : c.findings) body += "\n" + finding;
    if (!c.reproduce.empty()) body += "\nrerun: " + c.reproduce;
    return body;
}

// GitLab keeps only the first of several tests with one name: a repeated label gets its index.
std::string case_name(const CaseResult& c, const std::map<std::string, int>& label_uses)
{
    return label_uses.at(c.label) > 1 ? c.label + " [case " + std::to_string(c.index) + "]" : c.label;
}

Counts graded_cases(const ExerciseResult& e, std::string& xml)
{
    Counts counts;
    std::map<std::string, int> label_uses;
    for (const auto& c : e.cases) ++label_uses[c.label];
    for (const auto& c : e.cases) {
        std::string element, inner;
        if (c.status == CaseStatus::wrong)
            element = "failure";
        else if (formats::is_error(c.status))
            element = "error";
        else if (c.status == CaseStatus::not_run)
            element = "skipped";
        if (!element.empty()) inner = outcome(element, to_text(c.status), c.summary, case_body(c));
        if (c.timing && c.timing->student_ms > 0)
            inner += "      <system-out>" + xml_text("speed: " + formats::timing_line(*c.timing)) + "</system-out>\n";
        add_testcase(xml, counts, e.name, case_name(c, label_uses), c.seconds, element, inner);
    }
    if (!e.library_use.empty())  // every case may pass, yet the exercise's points are gone
        add_testcase(xml, counts, e.name, "library use", 0, "failure",
                     outcome("failure", "library_use", e.message, e.message));
    return counts;
}

// An exercise that never ran a case: one test for the submission itself.
Counts submission_case(const ExerciseResult& e, std::string& xml)
{
    Counts counts;
    const std::string message = formats::status_line(e);
    if (e.status == ExerciseStatus::not_submitted) {
        add_testcase(xml, counts, e.name, "submission", 0, "skipped",
                     outcome("skipped", "not_submitted", message, message));
        return counts;
    }
    std::string body = message;
    if (!e.compile_output.empty()) body += "\n\n" + formats::first_lines(e.compile_output, junit_max_compile_lines);
    if (!e.runner_output.empty())
        body += "\n\nthe program printed (the last of it):\n" + formats::last_chars(e.runner_output, 4096);
    add_testcase(xml, counts, e.name, "submission", e.compile_seconds, "error",
                 outcome("error", to_text(e.status), message, body));
    return counts;
}

}  // namespace

std::string to_junit_xml(const GradeReport& report)
{
    std::string suites;
    Counts total;
    for (const auto& e : report.exercises) {
        std::string cases;
        const bool graded = e.status == ExerciseStatus::graded;
        const Counts counts = graded ? graded_cases(e, cases) : submission_case(e, cases);
        total += counts;
        suites += "  <testsuite name=\"" + xml_attribute(e.name) + "\"" +
                  counts_attributes(counts, graded ? e.seconds : e.compile_seconds) + ">\n" + cases;
        if (graded && !e.runner_output.empty())
            suites += "    <system-out>" + xml_text(e.runner_output) + "</system-out>\n";
        suites += "  </testsuite>\n";
    }
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"pmpp-grader\"" +
           counts_attributes(total, report.seconds) + ">\n" + suites + "</testsuites>\n";
}

}  // namespace grading
