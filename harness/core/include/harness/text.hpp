// Text that comes from a submission (compiler messages, a program's output, file names, runner
// messages) made safe once, where it enters: every later reader, writer and terminal takes it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace harness {

// `text` as valid UTF-8 holding only characters XML 1.0 allows (so JSON, XML and Markdown take it)
// and no terminal control (so a terminal shows it as written):
//   - every terminal control sequence is dropped whole (ECMA-48): CSI (ESC [ or U+009B, parameters,
//     intermediates, a final byte), the strings OSC, DCS, SOS, PM and APC (ESC ] P X ^ _ or U+009D
//     U+0090 U+0098 U+009E U+009F, up to BEL, ESC \ or U+009C; one never ended loses only its
//     introducer) and the other escape sequences (ESC, intermediates, a final byte: ESC c, ESC 7...);
//   - each byte of a broken UTF-8 sequence (overlong, a surrogate, cut short, beyond U+10FFFF) and
//     each other control character (C0 but tab, line feed and carriage return; C1; a lone ESC; the
//     bidirectional marks, embeddings, overrides and isolates, U+061C U+200E-F U+202A-E U+2066-9) and
//     U+FFFE, U+FFFF become U+FFFD.
// Idempotent: valid_text(valid_text(t)) == valid_text(t).
std::string valid_text(std::string_view text);

// valid_text(text) for a terminal: also no carriage return (it would move the cursor back over what
// the line showed; CR LF becomes LF, a lone CR a LF) and no DEL (U+FFFD).
std::string printable_text(std::string_view text);

// The longest prefix of `text` of at most `max_bytes` that does not end inside a UTF-8 sequence
// (valid_text's output cut there stays valid).
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

}  // namespace harness
