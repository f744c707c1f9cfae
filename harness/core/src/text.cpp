#include "harness/text.hpp"

namespace harness {
namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

unsigned char byte_at(std::string_view text, std::size_t i)
{
    return static_cast<unsigned char>(text[i]);
}

// Unicode's bidirectional controls (marks, embeddings, overrides, isolates): in a terminal or a
// page that honours them they reorder what follows on the line, a submission's text over the
// grader's own.
bool bidi_control(char32_t c)
{
    return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

// A character every reader takes as itself: XML 1.0's Char production without the controls (C0
// but tab, line feed and carriage return; C1; the bidirectional ones). DEL is left to
// printable_text (XML allows it).
bool kept(char32_t c)
{
    if (bidi_control(c)) return false;
    return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0x7F) || (c >= 0xA0 && c <= 0xD7FF) ||
           (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

// The length of the valid UTF-8 encoding of one character at text[i] (0 when the bytes there are
// not one: broken, overlong, cut short), and the character.
std::size_t decode(std::string_view text, std::size_t i, char32_t& c)
{
    const auto lead = byte_at(text, i);
    const std::size_t length = lead < 0x80           ? 1
                               : (lead >> 5) == 0x6  ? 2
                               : (lead >> 4) == 0xE  ? 3
                               : (lead >> 3) == 0x1E ? 4
                                                     : 0;
    if (length == 0 || i + length > text.size()) return 0;
    c = length == 1 ? lead : lead & (0x7F >> length);
    for (std::size_t k = 1; k < length; ++k) {
        const auto next = byte_at(text, i + k);
        if ((next & 0xC0) != 0x80) return 0;
        c = (c << 6) | (next & 0x3F);
    }
    static constexpr char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};  // below: an overlong encoding
    const bool surrogate = c >= 0xD800 && c <= 0xDFFF;
    return c >= smallest[length] && c <= 0x10FFFF && !surrogate ? length : 0;
}

// A C1 control in UTF-8 (U+0080..U+009F: C2 80..C2 9F) at text[i].
bool c1_at(std::string_view text, std::size_t i)
{
    return byte_at(text, i) == 0xC2 && i + 1 < text.size() && byte_at(text, i + 1) >= 0x80 &&
           byte_at(text, i + 1) <= 0x9F;
}

bool in(unsigned char byte, unsigned char low, unsigned char high)
{
    return byte >= low && byte <= high;
}

// Finds the terminal control sequences in one text (ECMA-48, ECMA-35). An introducer is ESC and a
// byte, or a C1 control, which stands for ESC and that control less 0x40 (U+009B is ESC [).
class Sequences {
public:
    explicit Sequences(std::string_view text) : text_(text) {}

    // The length of the sequence that starts at text[i]; 0 where none does.
    std::size_t at(std::size_t i)
    {
        const auto first = byte_at(text_, i);
        if (first != 0x1B && !c1_at(text_, i)) return 0;
        if (i + 1 >= text_.size()) return 0;  // a lone ESC at the end
        const unsigned char kind = first == 0x1B ? byte_at(text_, i + 1) : byte_at(text_, i + 1) - 0x40;
        const std::size_t body = i + 2;
        switch (kind) {
            case '[':  // CSI: parameter bytes, intermediate bytes, a final byte
            {
                std::size_t end = body;
                while (end < text_.size() && in(byte_at(text_, end), 0x30, 0x3F)) ++end;
                while (end < text_.size() && in(byte_at(text_, end), 0x20, 0x2F)) ++end;
                // Cut short by another byte: what it held so far goes, that byte is read on its own.
                return end < text_.size() && in(byte_at(text_, end), 0x40, 0x7E) ? end + 1 - i : end - i;
            }
            case ']':  // OSC, DCS, SOS, PM, APC: a string up to its terminator
            case 'P':
            case 'X':
            case '^':
            case '_':
                return string_end(body) - i;
            default:
                break;
        }
        if (first != 0x1B) return 0;  // another C1 control: a character of its own
        // ESC, intermediate bytes, a final byte (ESC c, ESC 7, ESC ( B, ...).
        std::size_t end = i + 1;
        while (end < text_.size() && in(byte_at(text_, end), 0x20, 0x2F)) ++end;
        return end < text_.size() && in(byte_at(text_, end), 0x30, 0x7E) ? end + 1 - i : 0;
    }

private:
    // Where the control string whose body starts at `body` ends: after its terminator (BEL, ST as
    // ESC and a backslash, or U+009C), or at `body` where none follows (only the introducer goes
    // then). Once a search found no terminator up to the end, none follows any later start either:
    // each byte is searched at most once, so a text of many unended introducers takes linear time.
    std::size_t string_end(std::size_t body)
    {
        if (body >= unterminated_from_) return body;
        for (std::size_t end = body; end < text_.size(); ++end) {
            const auto b = byte_at(text_, end);
            if (b == 0x07) return end + 1;
            if (b == 0x1B && end + 1 < text_.size() && text_[end + 1] == '\\') return end + 2;
            if (b == 0xC2 && end + 1 < text_.size() && byte_at(text_, end + 1) == 0x9C) return end + 2;
        }
        unterminated_from_ = body;
        return body;
    }

    std::string_view text_;
    std::size_t unterminated_from_ = std::string_view::npos;
};

std::string clean(std::string_view text, bool for_terminal)
{
    std::string out;
    out.reserve(text.size());
    Sequences sequences(text);
    for (std::size_t i = 0; i < text.size();) {
        if (const std::size_t skip = sequences.at(i)) {
            i += skip;
            continue;
        }
        char32_t c = 0;
        const std::size_t length = decode(text, i, c);
        if (length == 0) {  // a byte of no character
            out.append(replacement);
            ++i;
            continue;
        }
        if (for_terminal && c == '\r') {
            if (i + 1 >= text.size() || text[i + 1] != '\n') out += '\n';
        } else if (!kept(c) || (for_terminal && c == 0x7F)) {
            out.append(replacement);
        } else {
            out.append(text.substr(i, length));
        }
        i += length;
    }
    return out;
}

}  // namespace

std::string valid_text(std::string_view text)
{
    return clean(text, false);
}

std::string printable_text(std::string_view text)
{
    return clean(text, true);
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes)
{
    if (text.size() <= max_bytes) return text;
    std::size_t end = max_bytes;
    // Back to the start of the character the cut falls in (at most 3 continuation bytes).
    for (std::size_t k = 0; k < 3 && end > 0 && (byte_at(text, end) & 0xC0) == 0x80; ++k) --end;
    return text.substr(0, end);
}

}  // namespace harness
