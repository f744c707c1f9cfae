#include "text.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace grading::formats {
namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// XML 1.0's Char production; every other code point is invalid in any XML document.
bool allowed_in_xml(char32_t c)
{
    return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
           (c >= 0x10000 && c <= 0x10FFFF);
}

// The length of the UTF-8 sequence starting at text[i] when it is a valid encoding of an allowed
// character; 0 when not.
std::size_t valid_sequence(std::string_view text, std::size_t i)
{
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80           ? 1
                               : (lead >> 5) == 0x6  ? 2
                               : (lead >> 4) == 0xE  ? 3
                               : (lead >> 3) == 0x1E ? 4
                                                     : 0;
    if (length == 0 || i + length > text.size()) return 0;
    char32_t c = length == 1 ? lead : lead & (0x7F >> length);
    for (std::size_t k = 1; k < length; ++k) {
        const auto next = static_cast<unsigned char>(text[i + k]);
        if ((next & 0xC0) != 0x80) return 0;
        c = (c << 6) | (next & 0x3F);
    }
    static constexpr char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};  // below: an overlong encoding
    return c >= smallest[length] && allowed_in_xml(c) ? length : 0;       // surrogates fail allowed_in_xml
}

// The length of a terminal control sequence (ESC [ parameters intermediates final) at text[i], 0 if none.
std::size_t terminal_sequence(std::string_view text, std::size_t i)
{
    if (text[i] != '\x1B' || i + 1 >= text.size() || text[i + 1] != '[') return 0;
    std::size_t end = i + 2;
    while (end < text.size() && text[end] >= 0x20 && text[end] <= 0x3F) ++end;
    return end < text.size() && text[end] >= 0x40 && text[end] <= 0x7E ? end + 1 - i : 0;
}

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

std::string valid_text(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        if (const std::size_t skip = terminal_sequence(text, i)) {
            i += skip;
        } else if (const std::size_t length = valid_sequence(text, i)) {
            out.append(text.substr(i, length));
            i += length;
        } else {
            out.append(replacement);
            ++i;
        }
    }
    return out;
}

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
