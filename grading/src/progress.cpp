#include "progress.hpp"

#include <iomanip>
#include <sstream>

#include "grading/console.hpp"
#include "harness/text.hpp"

namespace grading::detail {
namespace {

constexpr std::size_t compiler_lines_shown = 10;
constexpr std::size_t compiler_line_width = 300;  // template errors run to thousands of characters
constexpr std::size_t text_shown = 2000;          // a summary or finding from a runner's message, at most

// Text from outside the grader (a compiler's messages, a runner's, file names) as the console shows
// it: no terminal control of the submission's (harness::printable_text), at most `width` bytes.
std::string shown(const std::string& text, std::size_t width = text_shown)
{
    const std::string clean = harness::printable_text(text);
    const std::string_view cut = harness::utf8_prefix(clean, width);
    return cut.size() < clean.size() ? std::string(cut) + " ..." : clean;
}

std::string padded(const std::string& text, int width)
{
    return text.size() >= static_cast<std::size_t>(width) ? text : text + std::string(width - text.size(), ' ');
}

std::string status_text(CaseStatus status)
{
    std::ostringstream text;
    text << status;
    return text.str();
}

}  // namespace

std::string build_line(const std::string& exercise, const BuildResult& build, bool colour)
{
    std::ostringstream line;
    const std::string verdict = !build.invalid.empty() ? "INVALID" : build.ok ? "compiled" : "FAILED to compile";
    line << "  " << std::left << std::setw(36) << exercise << paint(verdict, build.ok ? Tone::good : Tone::bad, colour)
         << " in " << std::fixed << std::setprecision(1) << build.seconds << " s";
    if (!build.invalid.empty()) line << "\n      " << shown(build.invalid);
    if (build.ok || !build.invalid.empty()) return line.str();
    if (!build.failure.empty()) line << " (" << shown(build.failure) << ")";
    // Cleaned first: a carriage return or an escape sequence cannot then hide or join lines.
    std::istringstream output(harness::printable_text(build.output));
    std::string text;
    std::size_t lines_shown = 0, total = 0;
    while (std::getline(output, text)) {
        if (++total > compiler_lines_shown) continue;
        line << "\n      " << shown(text, compiler_line_width);
        ++lines_shown;
    }
    if (total > lines_shown) line << "\n      ... " << total - lines_shown << " more line(s) in the results file";
    return line.str();
}

std::string progress_line(const CaseResult& r, std::size_t position, std::size_t total, bool colour)
{
    std::ostringstream line;
    const int width = static_cast<int>(std::to_string(total).size());
    line << "  [" << std::setw(width) << position << "/" << total << "] " << std::left << std::setw(22) << r.label
         << paint(padded(status_text(r.status), 11), tone_of(r.status), colour) << std::right << std::fixed
         << std::setprecision(2) << std::setw(7) << r.seconds << " s + check " << std::setw(5) << r.check_seconds
         << " s";
    if (r.timing && r.timing->student_ms > 0) {
        const TimingResult& t = *r.timing;
        // The median and how well it is known, the reference's in the same turns, then what the
        // time means: bandwidth, its share of what the GPU can copy, and the CPU's time.
        line << std::setprecision(4) << "   " << t.student_ms << " ms (" << t.student.count << " batches, +-"
             << std::setprecision(1) << 100 * t.student.median_rse << "%)";
        if (t.reference_ms > 0)
            line << std::setprecision(4) << " vs reference " << t.reference_ms << " ms: " << std::setprecision(2)
                 << t.speedup_vs_reference << "x";
        line << "; " << std::setprecision(0) << t.bandwidth_gb_s << " GB/s";
        if (t.fraction_of_copy > 0) line << " = " << 100 * t.fraction_of_copy << "% of copy";
        if (t.speedup_vs_cpu > 0) line << "; " << std::setprecision(0) << t.speedup_vs_cpu << "x one CPU thread";
    } else if (r.status != CaseStatus::pass) {
        line << "   " << shown(r.summary);
    }
    // The first few findings, so a student sees what went wrong (or, on a passing speed case, what
    // the grader did not take as reported) without opening the JSON.
    for (std::size_t k = 0; k < r.findings.size() && k < 4; ++k)
        line << "\n" << std::string(12, ' ') << shown(r.findings[k]);
    if (r.status != CaseStatus::pass) line << "\n" << std::string(12, ' ') << "rerun: " << shown(r.reproduce);
    return line.str();
}

void CaseProgress::add(const CaseResult& r)
{
    ++position_;
    const bool joins_held = held_count_ > 0 && r.status == CaseStatus::not_run && r.summary == held_.summary;
    if (joins_held) {
        ++held_count_;
        return;
    }
    finish();
    if (r.status == CaseStatus::not_run) {
        held_ = r;
        held_first_ = position_;
        held_count_ = 1;
        return;
    }
    out_ << progress_line(r, position_, total_, colour_) << "\n" << std::flush;
}

void CaseProgress::finish()
{
    if (held_count_ == 0) return;
    if (held_count_ == 1) {
        out_ << progress_line(held_, held_first_, total_, colour_) << "\n";
    } else {
        out_ << "  [" << held_first_ << "-" << held_first_ + held_count_ - 1 << "/" << total_ << "] " << held_count_
             << " cases " << paint("not_run", Tone::partial, colour_) << "   " << shown(held_.summary) << "\n"
             << std::string(12, ' ') << "rerun the first: " << shown(held_.reproduce) << "\n";
    }
    out_ << std::flush;
    held_count_ = 0;
}

}  // namespace grading::detail
