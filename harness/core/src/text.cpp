#include "harness/text.hpp"

namespace harness {
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

}  // namespace harness
