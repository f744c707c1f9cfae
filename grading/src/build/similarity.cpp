// The code nvcc generates for a submission compared with the hidden reference's (docs/security.md):
// both PTX texts reduced to their instructions' opcodes with type suffixes (registers, labels,
// immediates, predicates and directives dropped), cut into every run of 5 consecutive
// instructions, and the share of the reference's distinct runs that the submission's PTX also
// has. Pasted reference PTX (inline `asm`) keeps its runs whatever surrounds it; independent code
// shares almost none. A reference too small to have many runs (a ten-line reduction) is matched by
// any honest textbook kernel: there the overlap is reported, never decisive.
#include <cctype>
#include <string_view>
#include <unordered_set>

#include "grading/build.hpp"

namespace grading {
namespace {

bool opcode_char(char c)
{
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '.' ||
           c == '_';
}

// Calls `f` with each instruction's opcode, in order, reading the text in place: a file's PTX may be
// large (the compile's, up to the build's limit), and nothing of it is copied but the opcodes.
template <typename F>
void for_each_opcode(std::string_view ptx, F&& f)
{
    std::size_t line_start = 0;
    while (line_start < ptx.size()) {
        std::size_t line_end = ptx.find('\n', line_start);
        if (line_end == std::string_view::npos) line_end = ptx.size();
        std::string_view line = ptx.substr(line_start, line_end - line_start);
        line_start = line_end + 1;
        // One instruction per statement; a line may hold several ("mov.u32 %r1, 0; add.s32 ...").
        if (const std::size_t comment = line.find("//"); comment != std::string_view::npos) line = line.substr(0, comment);
        while (!line.empty()) {
            std::size_t end = line.find(';');
            if (end == std::string_view::npos) end = line.size();
            std::string_view statement = line.substr(0, end);
            line = end < line.size() ? line.substr(end + 1) : std::string_view();
            std::size_t k = statement.find_first_not_of(" \t\r{}");
            if (k == std::string_view::npos) continue;
            statement.remove_prefix(k);
            if (statement[0] == '@') {  // a predicate guards it: the instruction stays
                k = statement.find_first_of(" \t");
                if (k == std::string_view::npos) continue;
                k = statement.find_first_not_of(" \t", k);
                if (k == std::string_view::npos) continue;
                statement.remove_prefix(k);
            }
            if (!std::islower(static_cast<unsigned char>(statement[0]))) continue;  // .directive, $label:
            std::size_t n = 0;
            while (n < statement.size() && opcode_char(statement[n])) ++n;
            if (n < statement.size() && statement[n] == ':') continue;  // a label
            f(statement.substr(0, n));
        }
    }
}

// Every run of ptx_run_length consecutive opcodes, as one string, in order.
template <typename F>
void for_each_run(std::string_view ptx, F&& f)
{
    std::vector<std::string> window;
    for_each_opcode(ptx, [&](std::string_view opcode) {
        if (window.size() == ptx_run_length) window.erase(window.begin());
        window.emplace_back(opcode);
        if (window.size() < ptx_run_length) return;
        std::string run;
        for (const auto& op : window) (run += op) += ' ';
        f(run);
    });
}

}  // namespace

std::vector<std::string> ptx_opcodes(const std::string& ptx)
{
    std::vector<std::string> opcodes;
    for_each_opcode(ptx, [&](std::string_view opcode) { opcodes.emplace_back(opcode); });
    return opcodes;
}

ReferenceComparison compare_with_reference(const std::string& submission_ptx, const std::string& reference_ptx)
{
    ReferenceComparison c;
    std::unordered_set<std::string> reference, shared;
    for_each_run(reference_ptx, [&](const std::string& run) { reference.insert(run); });
    // The file's runs are only looked up, never kept: memory goes with the reference's size.
    for_each_run(submission_ptx, [&](const std::string& run) {
        if (reference.count(run)) shared.insert(run);
    });
    c.compared = true;
    c.reference_runs = reference.size();
    c.shared_runs = shared.size();
    c.overlap = reference.empty() ? 0.0 : static_cast<double>(c.shared_runs) / static_cast<double>(reference.size());
    c.decisive = reference.size() >= min_decisive_reference_runs;
    if (!c.decisive)
        c.note = "the reference has " + std::to_string(reference.size()) + " distinct " +
                 std::to_string(ptx_run_length) +
                 "-instruction runs, too few to tell copying from an honest kernel of the same textbook pattern";
    return c;
}

}  // namespace grading
