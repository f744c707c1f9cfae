// The code nvcc generates for a submission compared with the hidden reference's (docs/security.md):
// both PTX texts reduced to their instructions' opcodes with type suffixes (registers, labels,
// immediates, predicates and directives dropped), cut into every run of 5 consecutive
// instructions, and the share of the reference's distinct runs that the submission's PTX also
// has. Pasted reference PTX (inline `asm`) keeps its runs whatever surrounds it; independent code
// shares almost none. A reference too small to have many runs (a ten-line reduction) is matched by
// any honest textbook kernel: there the overlap is reported, never decisive.
//
// The same runs, hashed, make a kernel's fingerprint (KernelFingerprint) that the class step
// compares between students: from the SASS where cuobjdump lists it, else from the PTX.
#include <algorithm>
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

// `statement` from its first non-blank character, past a guarding predicate ("@%p1 ", "@!P0 ": the
// instruction stays); false when nothing follows.
bool skip_to_instruction(std::string_view& statement, std::string_view blanks)
{
    std::size_t k = statement.find_first_not_of(blanks);
    if (k == std::string_view::npos) return false;
    statement.remove_prefix(k);
    if (statement[0] != '@') return true;
    k = statement.find_first_of(" \t");
    if (k == std::string_view::npos) return false;
    k = statement.find_first_not_of(" \t", k);
    if (k == std::string_view::npos) return false;
    statement.remove_prefix(k);
    return true;
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
            if (!skip_to_instruction(statement, " \t\r{}")) continue;
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

// FNV-1a, 64 bits folded to 32: the same on every machine (shards of a class graded elsewhere are
// compared with each other), unlike std::hash.
std::uint32_t run_hash(std::string_view run)
{
    std::uint64_t h = 14695981039346656037ull;
    for (const char c : run) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return static_cast<std::uint32_t>(h ^ (h >> 32));
}

// The hashes of every run of ptx_run_length consecutive opcodes, distinct.
std::unordered_set<std::uint32_t> run_hashes(const std::vector<std::string>& opcodes)
{
    std::unordered_set<std::uint32_t> hashes;
    std::string run;
    for (std::size_t k = 0; k + ptx_run_length <= opcodes.size(); ++k) {
        run.clear();
        for (std::size_t j = k; j < k + ptx_run_length; ++j) (run += opcodes[j]) += ' ';
        hashes.insert(run_hash(run));
    }
    return hashes;
}

bool sass_opcode_char(char c)
{
    return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '.' ||
           c == '_';
}

}  // namespace

std::vector<std::string> sass_opcodes(const std::string& listing)
{
    // "        /*0090*/  @!P0 LDG.E.CONSTANT R2, desc[UR4][R2.64] ;   /* 0x... */": an address in a
    // comment, then the instruction; the encoding's second line has no instruction.
    std::vector<std::string> opcodes;
    std::size_t line_start = 0;
    while (line_start < listing.size()) {
        std::size_t line_end = listing.find('\n', line_start);
        if (line_end == std::string::npos) line_end = listing.size();
        std::string_view line(listing.data() + line_start, line_end - line_start);
        line_start = line_end + 1;
        std::size_t k = line.find_first_not_of(" \t");
        if (k == std::string_view::npos || line.compare(k, 2, "/*") != 0) continue;
        const std::size_t close = line.find("*/", k + 2);
        if (close == std::string_view::npos) continue;
        const std::string_view address = line.substr(k + 2, close - k - 2);
        if (address.empty() || !std::all_of(address.begin(), address.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
            continue;
        std::string_view rest = line.substr(close + 2);
        if (!skip_to_instruction(rest, " \t{")) continue;
        std::size_t n = 0;
        while (n < rest.size() && sass_opcode_char(rest[n])) ++n;
        if (n == 0 || !std::isupper(static_cast<unsigned char>(rest[0]))) continue;
        const std::string_view opcode = rest.substr(0, n);
        if (opcode == "NOP") continue;  // padding
        opcodes.emplace_back(opcode);
    }
    return opcodes;
}

KernelFingerprint fingerprint_kernel(const std::vector<std::string>& opcodes, std::string code,
                                     const std::vector<std::string>* reference_opcodes)
{
    KernelFingerprint f;
    f.code = std::move(code);
    f.instructions = opcodes.size();
    const std::unordered_set<std::uint32_t> runs = run_hashes(opcodes);
    f.runs = runs.size();
    const std::unordered_set<std::uint32_t> reference =
        reference_opcodes ? run_hashes(*reference_opcodes) : std::unordered_set<std::uint32_t>();
    f.reference = reference_opcodes ? "the hidden reference's " + f.code : std::string("none");
    for (const std::uint32_t h : runs)
        if (!reference.count(h)) f.sketch.push_back(h);
    f.own_runs = f.sketch.size();
    std::sort(f.sketch.begin(), f.sketch.end());
    if (f.sketch.size() > fingerprint_sketch_size) f.sketch.resize(fingerprint_sketch_size);
    return f;
}

double fingerprint_similarity(const KernelFingerprint& a, const KernelFingerprint& b)
{
    if (a.code != b.code || a.sketch.empty() || b.sketch.empty()) return 0;
    // The smallest k hashes of the union of both sets are the smallest k of the two sketches
    // together; each is in a set exactly when it is in that set's sketch (fewer than k of the set's
    // hashes are smaller). The share of those in both estimates |A & B| / |A | B|.
    std::size_t i = 0, j = 0, taken = 0, both = 0;
    while (taken < fingerprint_sketch_size && (i < a.sketch.size() || j < b.sketch.size())) {
        if (j == b.sketch.size() || (i < a.sketch.size() && a.sketch[i] < b.sketch[j])) {
            ++i;
        } else if (i == a.sketch.size() || b.sketch[j] < a.sketch[i]) {
            ++j;
        } else {
            ++both, ++i, ++j;
        }
        ++taken;
    }
    return taken == 0 ? 0.0 : static_cast<double>(both) / static_cast<double>(taken);
}

nlohmann::json to_json(const KernelFingerprint& f)
{
    return {{"code", f.code},
            {"instructions", f.instructions},
            {"runs", f.runs},
            {"own_runs", f.own_runs},
            {"reference", f.reference},
            {"sketch", f.sketch}};
}

std::optional<KernelFingerprint> fingerprint_from_json(const nlohmann::json& j)
{
    if (!j.is_object()) return std::nullopt;
    try {
        KernelFingerprint f;
        f.code = j.at("code").get<std::string>();
        f.instructions = j.at("instructions").get<std::size_t>();
        f.runs = j.at("runs").get<std::size_t>();
        f.own_runs = j.at("own_runs").get<std::size_t>();
        f.reference = j.value("reference", std::string());
        f.sketch = j.at("sketch").get<std::vector<std::uint32_t>>();
        if (f.code != "sass" && f.code != "ptx") return std::nullopt;
        // A sketch as fingerprint_kernel made it: ascending, distinct, at most the size.
        if (f.sketch.size() > fingerprint_sketch_size || std::adjacent_find(f.sketch.begin(), f.sketch.end(), std::greater_equal<>()) != f.sketch.end())
            return std::nullopt;
        return f;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

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
