// harness::valid_text and printable_text (harness/text.hpp): what a submission's bytes become before
// any report or terminal takes them.
#include <doctest/doctest.h>

#include <string>

#include "harness/text.hpp"

using harness::printable_text;
using harness::utf8_prefix;
using harness::valid_text;

namespace {

const std::string bad = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

TEST_CASE("valid UTF-8 and the line controls pass as they are")
{
    const std::string text = "caf\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x98\x80\tx\r\ny\n\xC2\xA0z";
    CHECK(valid_text(text) == text);
    CHECK(valid_text("") == "");
    CHECK(printable_text("plain\ttext\n") == "plain\ttext\n");
}

TEST_CASE("bytes that are not UTF-8 become U+FFFD, one each")
{
    CHECK(valid_text("a\xFF"
                     "b") == "a" + bad + "b");
    CHECK(valid_text("\xC0\xAF") == bad + bad);                      // an overlong '/'
    CHECK(valid_text("\xED\xA0\x80") == bad + bad + bad);            // an encoded surrogate
    CHECK(valid_text("\xF4\x90\x80\x80") == bad + bad + bad + bad);  // beyond U+10FFFF
    CHECK(valid_text("\xE2\x82") == bad + bad);                      // cut short
    CHECK(valid_text("\x80") == bad);                                // a lone continuation byte (no C1 control)
    CHECK(valid_text("\x9B"
                     "31m") == bad + "31m");  // an 8-bit CSI outside UTF-8
}

TEST_CASE("CSI sequences go whole, colours and cursor moves alike, 7-bit and 8-bit")
{
    CHECK(valid_text("\x1B[1;31merror\x1B[0m: x") == "error: x");
    CHECK(valid_text("a\x1B[2J\x1B[H\x1B[?25lb") == "ab");  // clear, home, hide the cursor
    CHECK(valid_text("a\x1B[38;2;255;0;0mb") == "ab");      // true colour
    CHECK(valid_text("a\xC2\x9B"
                     "2Jb") == "ab");                     // U+009B, the 8-bit CSI
    CHECK(valid_text("a\x1B[12") == "a");                 // cut short by the end
    CHECK(valid_text("a\x1B[12\x1B[0mb") == "ab");        // cut short by another sequence
    CHECK(valid_text("a\x1B[1\xC3\xA9") == "a\xC3\xA9");  // cut short by a character: it stays
}

TEST_CASE("control strings go up to their terminator: OSC, DCS, APC, PM, SOS")
{
    CHECK(valid_text("a\x1B]0;owned\x07"
                     "b") == "ab");                                               // a window title, BEL
    CHECK(valid_text("a\x1B]8;;http://x\x1B\\link\x1B]8;;\x1B\\b") == "alinkb");  // a hyperlink, ST
    CHECK(valid_text("a\xC2\x9D"
                     "52;c;aGk=\xC2\x9C"
                     "b") == "ab");                         // 8-bit OSC (a clipboard write), 8-bit ST
    CHECK(valid_text("a\x1BPq#0;2;0;0;0\x1B\\b") == "ab");  // DCS (sixel)
    CHECK(valid_text("a\x1B_hidden\x07"
                     "b\x1B^pm\x07"
                     "c\x1BXsos\x07"
                     "d") == "abcd");
    // Never ended: only the introducer goes, the rest is shown (it holds no control any more).
    CHECK(valid_text("a\x1B]0;title") == "a0;title");
    CHECK(valid_text("a\xC2\x9Dtitle") == "atitle");
}

TEST_CASE("other escape sequences go; a lone ESC and other controls become U+FFFD")
{
    CHECK(valid_text("a\x1B"
                     "cb") == "ab");  // RIS: reset the terminal
    CHECK(valid_text("a\x1B"
                     "7b\x1B"
                     "8") == "ab");         // save and restore the cursor
    CHECK(valid_text("a\x1B(0b") == "ab");  // the line-drawing character set
    CHECK(valid_text("a\x1B#8") == "a");    // fill the screen with E
    CHECK(valid_text("a\x1B") == "a" + bad);
    CHECK(valid_text("a\x1B\x01") == "a" + bad + bad);
    CHECK(valid_text(std::string("a\0b", 3)) == "a" + bad + "b");
    CHECK(valid_text("\x07\x08\x0B\x0C\x7F") == bad + bad + bad + bad + "\x7F");  // XML takes DEL
    CHECK(valid_text("\xC2\x85\xC2\x8D\xC2\x9C") == bad + bad + bad);             // C1: NEL, reverse index, a lone ST
    CHECK(valid_text("\xEF\xBF\xBE\xEF\xBF\xBF") == bad + bad);                   // U+FFFE, U+FFFF
}

TEST_CASE("printable_text: no carriage return, no DEL; else as valid_text")
{
    CHECK(printable_text("a\r\nb") == "a\nb");
    CHECK(printable_text("50%\r100%\r") == "50%\n100%\n");  // a lone CR cannot overwrite the line
    CHECK(printable_text("a\x7F"
                         "b") == "a" + bad + "b");
    CHECK(printable_text("\x1B[31mred\x1B[0m \xFF\r\n") == "red " + bad + "\n");
}

TEST_CASE("cleaning twice changes nothing more; a long text of unended introducers takes linear time")
{
    const std::string messy = "\x1B]0;x\x1B[31m\r\n\xFF\xC2\x9B\x1B\x1B]\xC2\x9D\x07\x1B[";
    CHECK(valid_text(valid_text(messy)) == valid_text(messy));
    CHECK(printable_text(printable_text(messy)) == printable_text(messy));
    std::string introducers;
    for (int k = 0; k < 200'000; ++k) introducers += "\x1B]x";
    CHECK(valid_text(introducers) == std::string(200'000, 'x'));  // quadratic would take minutes
}

TEST_CASE("utf8_prefix cuts at a character's boundary")
{
    const std::string text = "ab\xC3\xA9\xE2\x9C\x93";  // a b é ✓
    CHECK(utf8_prefix(text, 100) == text);
    CHECK(utf8_prefix(text, 3) == "ab");
    CHECK(utf8_prefix(text, 4) == "ab\xC3\xA9");
    CHECK(utf8_prefix(text, 5) == "ab\xC3\xA9");
    CHECK(utf8_prefix(text, 6) == "ab\xC3\xA9");
    CHECK(utf8_prefix(text, 0) == "");
}

// Red team: a submission's output holding Unicode bidirectional controls (RLO U+202E, LRO U+202D,
// RLE/LRE/PDF U+202A..U+202C, the isolates U+2066..U+2069) reaches the console as it is: in a
// bidi-aware terminal (VTE, Konsole, mlterm) and in report.html or summary.md it reorders what
// follows on the line ("Trojan Source"), e.g. grade class's progress line, whose tallies come after
// the student's message. Secure answer: printable_text (the terminal's) leaves none of them, so a
// terminal shows the line in the order it was written; valid_text may keep them for XML/JSON.
TEST_CASE("red team: printable_text leaves no bidirectional override or isolate")
{
    const char* controls[] = {"\xE2\x80\xAA", "\xE2\x80\xAB", "\xE2\x80\xAC", "\xE2\x80\xAD", "\xE2\x80\xAE",
                              "\xE2\x81\xA6", "\xE2\x81\xA7", "\xE2\x81\xA8", "\xE2\x81\xA9"};
    for (const char* control : controls) {
        const std::string shown = printable_text(std::string("0 points ") + control + "stniop 01 (GPU 0) | 3 failed");
        CAPTURE(shown);
        CHECK(shown.find(control) == std::string::npos);
    }
}
