#include "grading/first_fix.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

#include "formats/feedback.hpp"
#include "harness/text.hpp"
#include "judge.hpp"

namespace grading {
namespace {

using formats::spoken;

constexpr std::size_t max_chars = 600;  // one line: a finding or a compiler line can be long

// How clearly a failing case's result says what to fix, clearest first.
enum class Clarity {
    stopped,        // a crash, CUDA error, exception, hang or broken protocol
    named_mistake,  // the family checks name the mistake (detail "pattern")
    never_written,  // some output elements were never written
    wrong_values,   // values are wrong, nothing more specific
    not_run,        // no verdict of its own: an earlier case or the time budget stopped it
};

// The finding at detail[key] (an index into findings, harness/check.hpp), if there is one.
const std::string* indexed_finding(const CaseResult& c, const char* key)
{
    if (!c.detail.is_object()) return nullptr;
    const auto at = c.detail.find(key);
    if (at == c.detail.end() || !at->is_number_integer() || at->get<std::int64_t>() < 0) return nullptr;
    const auto index = at->get<std::size_t>();
    return index < c.findings.size() ? &c.findings[index] : nullptr;
}

Clarity clarity(const CaseResult& c)
{
    switch (c.status) {
        case CaseStatus::pass:  // not a failing case; never asked
        case CaseStatus::wrong:
            if (indexed_finding(c, "pattern_finding")) return Clarity::named_mistake;
            if (indexed_finding(c, "unwritten_finding")) return Clarity::never_written;
            return Clarity::wrong_values;
        case CaseStatus::not_run:
            return Clarity::not_run;
        default:
            return Clarity::stopped;
    }
}

// What went wrong with a failing case, in its clearest words.
std::string diagnosis(const CaseResult& c)
{
    switch (clarity(c)) {
        case Clarity::stopped: {
            // A CUDA error's name is in detail (what the runner said, so checked for a string).
            const bool named_error = c.status == CaseStatus::cuda_error && c.detail.is_object() &&
                                     c.detail.contains("error") && c.detail["error"].is_string();
            const std::string hint = named_error ? detail::cuda_error_hint(c.detail["error"].get<std::string>()) : "";
            const std::string why = !hint.empty() ? hint : c.findings.empty() ? "" : c.findings.front();
            return c.summary + (why.empty() ? "" : ": " + why);
        }
        case Clarity::named_mistake:
            return *indexed_finding(c, "pattern_finding");
        case Clarity::never_written:
            return *indexed_finding(c, "unwritten_finding");
        case Clarity::wrong_values:
            // The summary alone where it already ends in the first finding ("output correct, but ...").
            if (c.findings.empty() || c.summary.find(c.findings.front()) != std::string::npos) return c.summary;
            return c.summary + "; " + c.findings.front();
        case Clarity::not_run:
            break;
    }
    return c.summary;
}

// Whether a summary may name this case (its label, size and rerun command): never a hidden case
// (grading/hidden_cases.hpp), in any report; where only hidden cases fail, first_fix says "a
// hidden case fails: <status>" (below).
bool may_name(const CaseResult& c)
{
    return !c.hidden;
}

// The compiler's first line that reports an error, else its first line.
std::string first_error_line(const std::string& output)
{
    std::string first;
    std::size_t begin = 0;
    while (begin < output.size()) {
        const std::size_t end = std::min(output.find('\n', begin), output.size());
        const std::string line = output.substr(begin, end - begin);
        if (first.empty() && line.find_first_not_of(" \t\r") != std::string::npos) first = line;
        if (line.find("error") != std::string::npos) return line;
        begin = end + 1;
    }
    return first;
}

// One line of at most max_chars: line breaks and tabs of a submission's text become spaces.
std::string one_line(std::string text)
{
    std::replace_if(text.begin(), text.end(), [](char ch) { return ch == '\n' || ch == '\r' || ch == '\t'; }, ' ');
    const std::string_view cut = harness::utf8_prefix(text, max_chars);
    return cut.size() < text.size() ? std::string(cut) + " ..." : text;
}

std::string graded_first_fix(const ExerciseResult& e)
{
    // Smallest first; at one size the clearer failure; a case that never got a verdict only when
    // no other failed.
    auto rank = [](const CaseResult& c) {
        return std::make_tuple(clarity(c) == Clarity::not_run, c.n, clarity(c), c.index);
    };
    const CaseResult *chosen = nullptr, *unnamed = nullptr;
    for (const auto& c : e.cases) {
        if (c.status == CaseStatus::pass) continue;
        const CaseResult*& best = may_name(c) ? chosen : unnamed;
        if (!best || rank(c) < rank(*best)) best = &c;
    }
    if (chosen)
        return "Fix first: " + chosen->label + " (the smallest failing case): " + diagnosis(*chosen) +
               (chosen->reproduce.empty() ? "" : ". Rerun it: " + chosen->reproduce);
    if (unnamed) return "Fix first: a hidden case fails: " + spoken(unnamed->status);
    return "";
}

}  // namespace

std::string first_fix(const ExerciseResult& exercise)
{
    std::string text;
    switch (exercise.status) {
        case ExerciseStatus::not_submitted:
            break;
        case ExerciseStatus::graded:
            text = graded_first_fix(exercise);
            if (text.empty() && !exercise.library_use.empty()) text = "Fix first: library use: " + exercise.message;
            break;
        case ExerciseStatus::built:
            if (!exercise.library_use.empty()) text = "Fix first: library use: " + exercise.message;
            break;
        case ExerciseStatus::compile_error:
            if (const std::string line = first_error_line(exercise.compile_output); !line.empty()) {
                text = "Fix first: the compiler's first error: " + line;
                break;
            }
            [[fallthrough]];
        default:
            text = "Fix first: " + spoken(exercise.status) + (exercise.message.empty() ? "" : ": " + exercise.message);
    }
    return one_line(std::move(text));
}

void print_first_fixes(const GradeReport& report, std::ostream& out)
{
    for (const auto& e : report.exercises)
        if (const std::string fix = first_fix(e); !fix.empty())
            out << e.name << ": " << harness::printable_text(fix) << "\n";
}

}  // namespace grading
