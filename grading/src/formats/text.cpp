#include "text.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ctime>
#include <sstream>

namespace grading::formats {
namespace {

std::string escape_xml(std::string_view text, bool attribute)
{
    std::string out;
    for (const char c : valid_text(text)) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            case '\r':
                out += "&#13;";
                break;  // a parser would turn a bare one into a line feed
            case '\n':
                out += attribute ? "&#10;" : "\n";
                break;
            case '\t':
                out += attribute ? "&#9;" : "\t";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::size_t longest_backtick_run(std::string_view text)
{
    std::size_t longest = 0, run = 0;
    for (const char c : text) {
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    return longest;
}

}  // namespace

std::string xml_text(std::string_view text)
{
    return escape_xml(text, false);
}

std::string xml_attribute(std::string_view text)
{
    return escape_xml(text, true);
}

std::string md_text(std::string_view text)
{
    // '@' too: in a pull request comment, "@name" would notify someone.
    static constexpr std::string_view formatting = "\\`*_[]<>|~#&!@";
    std::string out;
    for (const char c : valid_text(text)) {
        if (c == '\n' || c == '\r' || c == '\t') {
            out += ' ';
            continue;
        }
        if (formatting.find(c) != std::string_view::npos) out += '\\';
        out += c;
    }
    return out;
}

std::string md_code(std::string_view text)
{
    std::string inner = valid_text(text);
    std::replace_if(
        inner.begin(), inner.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
    const std::string fence(longest_backtick_run(inner) + 1, '`');
    // Spaces inside the fence keep a backtick at either end from joining it; Markdown drops them.
    const bool pad = fence.size() > 1 || inner.empty() || inner.front() == ' ' || inner.back() == ' ';
    return pad ? fence + " " + inner + " " + fence : fence + inner + fence;
}

std::string md_block(std::string_view text)
{
    std::string inner = valid_text(text);
    if (!inner.empty() && inner.back() != '\n') inner += '\n';
    const std::string fence(std::max<std::size_t>(3, longest_backtick_run(inner) + 1), '`');
    return fence + "\n" + inner + fence + "\n";
}

std::string first_lines(std::string_view text, std::size_t max_lines)
{
    constexpr std::size_t max_chars = 16384;  // a single enormous line must not pass whole
    std::size_t end = 0, lines = 0;
    while (end < text.size() && lines < max_lines && end < max_chars) {
        const std::size_t line_end = text.find('\n', end);
        end = line_end == std::string_view::npos ? text.size() : line_end + 1;
        ++lines;
    }
    end = std::min(end, max_chars);
    if (end >= text.size()) return std::string(text);
    const auto more =
        std::count(text.begin() + static_cast<std::ptrdiff_t>(end), text.end(), '\n') + (text.back() == '\n' ? 0 : 1);
    std::string out(text.substr(0, end));
    if (out.back() != '\n') out += '\n';
    return out + "... (" + std::to_string(more) + " more line" + (more == 1 ? "" : "s") + ")\n";
}

std::string last_chars(std::string_view text, std::size_t max_chars)
{
    if (text.size() <= max_chars) return std::string(text);
    std::size_t start = text.size() - max_chars;
    const std::size_t line = text.find('\n', start);
    if (line != std::string_view::npos && line - start < 200) start = line + 1;
    return std::string(text.substr(start));
}

std::string trimmed(std::string_view text)
{
    const std::size_t first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return {};
    const std::size_t last = text.find_last_not_of(" \t\r");
    return std::string(text.substr(first, last - first + 1));
}

std::string last_line(std::string_view text)
{
    std::string line, last;
    std::istringstream lines{std::string(text)};
    while (std::getline(lines, line))
        if (!line.empty()) last = line;
    return last;
}

std::string utc_now()
{
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    ::gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

std::string fixed(double value, int decimals)
{
    std::ostringstream out;
    out << std::fixed << std::setprecision(decimals) << value;
    return out.str();
}

double rounded(double value, int decimals)
{
    const double scale = std::pow(10.0, decimals);
    return std::round(value * scale) / scale;
}

}  // namespace grading::formats
