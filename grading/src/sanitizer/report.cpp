// Reading compute-sanitizer's text reports (memcheck, racecheck, synccheck, initcheck) into
// findings a student understands. The text is the submission's process's output: any bytes, any
// length, forged or cut; the reader never throws and keeps at most a bounded number of findings.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <tuple>

#include "grading/sanitizer.hpp"
#include "harness/text.hpp"

namespace grading {
namespace {

constexpr std::string_view prefix = "=========";
constexpr std::size_t max_line = 1024;  // longer lines are cut (a flood on one line; std::regex recurses per byte)
constexpr std::size_t max_field = 200;  // a kernel name, a file name, a header in a finding

std::string clean(std::string_view text)
{
    const std::string valid = harness::valid_text(text);
    return std::string(harness::utf8_prefix(valid, max_field));
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool begins_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// "reduce_kernel(float const*, float*, int)" or "void k<256>(int*)" -> "reduce_kernel", "k<256>".
std::string short_kernel(std::string_view signature)
{
    signature = trim(signature);
    if (begins_with(signature, "void ")) signature.remove_prefix(5);
    // The parameter list starts at the first '(' outside template brackets (an "(anonymous
    // namespace)::" prefix is kept whole).
    int depth = 0;
    for (std::size_t i = 0; i < signature.size(); ++i) {
        const char c = signature[i];
        if (c == '<') ++depth;
        if (c == '>' && depth > 0) --depth;
        if (c == '(' && depth == 0 && i > 0 && !begins_with(signature.substr(i), "(anonymous namespace)"))
            return clean(trim(signature.substr(0, i)));
    }
    return clean(signature);
}

std::string base_name(std::string_view path)
{
    const std::size_t slash = path.find_last_of('/');
    return clean(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

struct Location {
    std::string kernel, file;
    int line = 0;
};

int small_number(const std::string& digits)
{
    if (digits.empty() || digits.size() > 9) return 0;
    return std::stoi(digits);
}

// What follows "at " in a report: "KERNEL+0x1f0 in FILE:LINE" (compute-sanitizer 2022 and
// later), "0x1f0 in FILE:LINE:KERNEL" (earlier), "0x1f0 in KERNEL" or "KERNEL+0x1f0" (no
// -lineinfo). A trailing " [4 hazards]" is dropped.
Location parse_location(std::string_view text)
{
    text = trim(text);
    if (const std::size_t bracket = text.rfind(" ["); bracket != std::string_view::npos && text.back() == ']')
        text = trim(text.substr(0, bracket));
    Location at;
    std::string_view where = text, code = text;
    if (const std::size_t in = text.rfind(" in "); in != std::string_view::npos) {
        code = text.substr(0, in);
        where = trim(text.substr(in + 4));
    } else {
        where = {};
    }
    if (const std::size_t plus = code.rfind("+0x"); plus != std::string_view::npos) at.kernel = short_kernel(code.substr(0, plus));
    static const std::regex file_line(R"(^([^:]*):([0-9]+)(?::(.*))?$)");
    std::cmatch m;
    if (!where.empty() && std::regex_match(where.begin(), where.end(), m, file_line)) {
        at.file = base_name(std::string_view(m[1].first, static_cast<std::size_t>(m[1].length())));
        at.line = small_number(m[2].str());
        if (m[3].matched && at.kernel.empty()) at.kernel = short_kernel(m[3].str());
    } else if (!where.empty() && at.kernel.empty()) {
        at.kernel = short_kernel(where);  // "0x1f0 in KERNEL"
    }
    return at;
}

std::string access_of(std::string_view word)
{
    const std::string w = lower(word);
    if (w.find("write") != std::string::npos) return "write";
    if (w.find("read") != std::string::npos) return "read";
    if (w.find("atomic") != std::string::npos) return "atomic";
    return {};
}

class Reader {
public:
    Reader(const std::string& tool, std::size_t max_findings) : tool_(tool), max_(max_findings) {}

    void line(std::string_view raw)
    {
        if (!begins_with(raw, prefix)) return;  // the program's own output
        std::string_view rest = raw.substr(prefix.size());
        if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        const bool indented = !rest.empty() && (rest.front() == ' ' || rest.front() == '\t');
        const std::string_view content = trim(rest);
        if (!indented) header(content);
        else if (current_) detail(content);
    }

    SanitizerReport finish()
    {
        close();
        SanitizerReport report = std::move(report_);
        report.not_listed = distinct_ > report.findings.size() ? distinct_ - report.findings.size() : 0;
        return report;
    }

private:
    void header(std::string_view h)
    {
        close();
        if (h.empty()) return;
        static const std::regex summary(R"(^ERROR SUMMARY: ([0-9]{1,9}) errors?)");
        // racecheck ends its report with its own summary instead (compute-sanitizer 2025.3, CUDA 13.0,
        // seen on an H100): "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)".
        static const std::regex race_summary(
            R"(^RACECHECK SUMMARY: [0-9]{1,9} hazards? displayed \(([0-9]{1,9}) errors?, [0-9]{1,9} warnings?\))");
        static const std::regex invalid(R"(^Invalid (__\w+__ )?(read|write|atomic)\w* of size ([0-9]+) bytes?)");
        static const std::regex race(R"(^(Error|ERROR|Warning|WARNING): Race reported between (\w+) access at (.*)$)");
        static const std::regex hazard(R"(^(ERROR|WARNING): Potential (\w+) hazard detected at __shared__)");
        std::cmatch m;
        const std::string text(h);
        if (std::regex_search(text.c_str(), m, summary) || std::regex_search(text.c_str(), m, race_summary)) {
            report_.summary_seen = true;
            report_.summary_errors = std::max<long>(report_.summary_errors, small_number(m[1].str()));
        } else if (std::regex_search(text.c_str(), m, invalid)) {
            open("invalid_access", h);
            current_->access = m[2].str() == "atomic" ? "atomic" : m[2].str();
            const std::string space = m[1].str();
            current_->space = space.size() > 4 ? space.substr(2, space.size() - 5) : "";
        } else if (begins_with(h, "Uninitialized __global__ memory read")) {
            open("uninitialized_read", h);
            current_->access = "read";
            current_->space = "global";
        } else if (std::regex_search(text.c_str(), m, race)) {
            open("race", h);
            current_->space = "shared";
            current_->access = access_of(m[2].str());
            place(parse_location(m[3].str()));
        } else if (std::regex_search(text.c_str(), m, hazard)) {
            open("race", h);
            current_->space = "shared";
            hazard_sides_ = 0;
        } else if (begins_with(h, "Barrier error detected") || begins_with(h, "Invalid arguments")) {
            open(h.find("Divergent") != std::string_view::npos ? "divergent_barrier" : "invalid_barrier", h);
        } else if (begins_with(h, "Warp Illegal Address") || begins_with(h, "Out-of-range") ||
                   begins_with(h, "Illegal Address") || begins_with(h, "Misaligned") ||
                   begins_with(h, "Hardware exception") || begins_with(h, "Warp Misaligned") ||
                   begins_with(h, "Illegal Instruction") || begins_with(h, "Warp Illegal Instruction")) {
            open("hardware_exception", h);
        } else if ((begins_with(h, "Error:") || begins_with(h, "Internal Sanitizer Error")) && report_.tool_error.empty()) {
            report_.tool_error = clean(h);
        }
        // Anything else (the banner, "Program hit ...", leak summaries) is no finding.
    }

    void detail(std::string_view d)
    {
        static const std::regex side(R"(^(\w+) Thread \([0-9, ]*\) at (.*)$)");  // racecheck's hazard mode
        std::cmatch m;
        const std::string text(d);
        if (begins_with(d, "at ")) {
            if (!placed_) place(parse_location(d.substr(3)));
        } else if (current_->kind == "race" && begins_with(d, "and ")) {
            static const std::regex other(R"(^and (\w+) access at (.*)$)");
            if (std::regex_search(text.c_str(), m, other)) other_side(access_of(m[1].str()), parse_location(m[2].str()));
        } else if (current_->kind == "race" && std::regex_search(text.c_str(), m, side)) {
            if (hazard_sides_++ == 0) {
                current_->access = access_of(m[1].str());
                place(parse_location(m[2].str()));
            } else {
                other_side(access_of(m[1].str()), parse_location(m[2].str()));
            }
        } else if (current_->kind == "invalid_access" && begins_with(d, "Address ")) {
            if (d.find("out of bounds") != std::string_view::npos) current_->kind = "out_of_bounds";
            else if (d.find("misaligned") != std::string_view::npos) current_->kind = "misaligned";
        }
    }

    void open(const char* kind, std::string_view header_text)
    {
        current_ = SanitizerFinding{};
        current_->tool = tool_;
        current_->kind = kind;
        current_->detail = clean(header_text);
        placed_ = false;
    }

    void place(const Location& at)
    {
        current_->kernel = at.kernel;
        current_->file = at.file;
        current_->line = at.line;
        placed_ = true;
    }

    void other_side(const std::string& access, const Location& at)
    {
        current_->other_access = access;
        current_->other_line = at.line;
        if (current_->kernel.empty()) current_->kernel = at.kernel;
    }

    void close()
    {
        if (!current_) return;
        SanitizerFinding f = std::move(*current_);
        current_.reset();
        const auto key = std::make_tuple(f.kind, f.kernel, f.line, f.other_line, f.access, f.other_access);
        const auto seen = index_.find(key);
        if (seen != index_.end()) {
            if (seen->second >= 0) ++report_.findings[static_cast<std::size_t>(seen->second)].count;
            return;
        }
        ++distinct_;
        if (report_.findings.size() >= max_) {
            index_.emplace(key, -1);
            return;
        }
        f.explanation = explain(f);
        index_.emplace(key, static_cast<int>(report_.findings.size()));
        report_.findings.push_back(std::move(f));
    }

    std::string tool_;
    std::size_t max_;
    SanitizerReport report_;
    std::optional<SanitizerFinding> current_;
    bool placed_ = false;
    int hazard_sides_ = 0;
    std::size_t distinct_ = 0;
    std::map<std::tuple<std::string, std::string, int, int, std::string, std::string>, int> index_;
};

// "in reduce_kernel (line 31)", "in reduce_kernel", "at line 31", "" as far as the report said.
std::string where(const SanitizerFinding& f)
{
    std::string text;
    if (!f.kernel.empty()) text += " in " + f.kernel;
    if (f.line > 0) text += (f.kernel.empty() ? " at line " : " (line ") + std::to_string(f.line) + (f.kernel.empty() ? "" : ")");
    return text;
}

}  // namespace

const std::vector<std::string>& sanitizer_tools()
{
    static const std::vector<std::string> tools = {"memcheck", "racecheck", "synccheck", "initcheck"};
    return tools;
}

bool is_sanitizer_tool(const std::string& name)
{
    const auto& tools = sanitizer_tools();
    return std::find(tools.begin(), tools.end(), name) != tools.end();
}

SanitizerReport parse_sanitizer_output(std::string_view text, const std::string& tool, std::size_t max_findings)
{
    Reader reader(tool, max_findings);
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        reader.line(line.substr(0, max_line));
    }
    return reader.finish();
}

std::string explain(const SanitizerFinding& f)
{
    const std::string at = where(f);
    const std::string space = f.space.empty() ? "" : f.space + "-memory ";
    const std::string access = f.access.empty() ? "access" : f.access;
    if (f.kind == "out_of_bounds")
        return "memcheck: a " + space + access + at +
               " falls outside every allocation: compare the index with the array's length before the access "
               "(the threads of the last block past n must not touch memory)";
    if (f.kind == "misaligned")
        return "memcheck: a " + space + access + at +
               " uses an address that is not a multiple of the element's size: check the pointer arithmetic and casts";
    if (f.kind == "invalid_access")
        return "memcheck: an invalid " + space + access + at + ": check the index against the array's bounds";
    if (f.kind == "hardware_exception")
        return "memcheck: the GPU stopped the kernel" + at + " (" + f.detail +
               "): usually an index far outside its array, or a pointer to host memory";
    if (f.kind == "uninitialized_read")
        return "initcheck: a global-memory read" + at +
               " reads memory nothing has written yet: read only the input's n elements, or write (or cudaMemset) a "
               "buffer before the kernel reads it";
    if (f.kind == "race") {
        const std::string first = f.access.empty() ? "an access" : "a " + f.access;
        const std::string second = f.other_access.empty() ? "another access" : "a " + f.other_access;
        const std::string second_line = f.other_line > 0 && f.other_line != f.line
                                            ? " (line " + std::to_string(f.other_line) + ")"
                                            : "";
        return "racecheck: " + first + " of shared memory" + at + " races with " + second + second_line +
               " in another thread of the block: a __syncthreads() is missing between the two steps (or, within a "
               "warp, a __syncwarp())";
    }
    if (f.kind == "divergent_barrier")
        return "synccheck: a barrier" + at +
               " is reached by only some of the threads (it sits in a branch or a loop that not every thread "
               "takes): every thread of the block must reach each __syncthreads(), so move it out of the if";
    if (f.kind == "invalid_barrier")
        return "synccheck: a barrier" + at + " is used in a way the hardware does not allow (" + f.detail + ")";
    return f.tool + ": " + f.detail + at;
}

nlohmann::json sanitizer_finding_json(const SanitizerFinding& f)
{
    nlohmann::json j = {{"tool", f.tool},
                        {"kind", f.kind},
                        {"kernel", f.kernel},
                        {"file", f.file},
                        {"line", f.line},
                        {"count", f.count},
                        {"report", f.detail},
                        {"explanation", f.explanation}};
    if (f.kind == "race") j["other_line"] = f.other_line;
    return j;
}

}  // namespace grading
