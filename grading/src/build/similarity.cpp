// The code nvcc generates for a submission compared with the hidden reference's (docs/security.md):
// both PTX texts reduced to their instructions' opcodes with type suffixes (registers, labels,
// immediates, predicates and directives dropped), cut into every run of 5 consecutive
// instructions, and the share of the reference's distinct runs that the submission's PTX also
// has. Pasted reference PTX (inline `asm`) keeps its runs whatever surrounds it; independent code
// shares almost none. A reference too small to have many runs (a ten-line reduction) is matched by
// any honest textbook kernel: there the overlap is reported, never decisive.
#include <cctype>
#include <sstream>
#include <unordered_set>

#include "grading/build.hpp"

namespace grading {
namespace {

bool opcode_char(char c)
{
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '.' ||
           c == '_';
}

std::unordered_set<std::string> runs_of(const std::vector<std::string>& opcodes)
{
    std::unordered_set<std::string> runs;
    for (std::size_t k = 0; k + ptx_run_length <= opcodes.size(); ++k) {
        std::string run;
        for (std::size_t j = 0; j < ptx_run_length; ++j) run += opcodes[k + j] + ' ';
        runs.insert(std::move(run));
    }
    return runs;
}

}  // namespace

std::vector<std::string> ptx_opcodes(const std::string& ptx)
{
    std::vector<std::string> opcodes;
    std::istringstream lines(ptx);
    for (std::string line; std::getline(lines, line);) {
        // One instruction per statement; a line may hold several ("mov.u32 %r1, 0; add.s32 ...").
        const std::size_t comment = line.find("//");
        if (comment != std::string::npos) line.erase(comment);
        std::size_t at = 0;
        while (at < line.size()) {
            std::size_t end = line.find(';', at);
            if (end == std::string::npos) end = line.size();
            std::string statement = line.substr(at, end - at);
            at = end + 1;
            std::size_t k = statement.find_first_not_of(" \t\r{}");
            if (k == std::string::npos) continue;
            statement.erase(0, k);
            if (statement[0] == '@') {  // a predicate guards it: the instruction stays
                k = statement.find_first_of(" \t");
                if (k == std::string::npos) continue;
                statement.erase(0, statement.find_first_not_of(" \t", k));
            }
            if (statement.empty() || !std::islower(static_cast<unsigned char>(statement[0]))) continue;  // .dir, $L:
            std::size_t n = 0;
            while (n < statement.size() && opcode_char(statement[n])) ++n;
            if (n < statement.size() && statement[n] == ':') continue;  // a label
            opcodes.push_back(statement.substr(0, n));
        }
    }
    return opcodes;
}

ReferenceComparison compare_with_reference(const std::string& submission_ptx, const std::string& reference_ptx)
{
    ReferenceComparison c;
    const auto reference = runs_of(ptx_opcodes(reference_ptx));
    const auto submission = runs_of(ptx_opcodes(submission_ptx));
    c.compared = true;
    c.reference_runs = reference.size();
    for (const auto& run : reference) c.shared_runs += submission.count(run);
    c.overlap = reference.empty() ? 0.0 : static_cast<double>(c.shared_runs) / static_cast<double>(reference.size());
    c.decisive = reference.size() >= min_decisive_reference_runs;
    if (!c.decisive)
        c.note = "the reference has " + std::to_string(reference.size()) + " distinct " +
                 std::to_string(ptx_run_length) +
                 "-instruction runs, too few to tell copying from an honest kernel of the same textbook pattern";
    return c;
}

}  // namespace grading
