// Text that comes from a submission (compiler messages, a program's output, file names, runner
// messages) made safe once, where it enters: every later reader, writer and terminal takes it.
#pragma once

#include <string>
#include <string_view>

namespace harness {

// `text` as valid UTF-8 holding only characters XML 1.0 allows (so JSON, XML and Markdown take it):
// each byte of a broken sequence and each forbidden character becomes U+FFFD, and terminal control
// sequences (ESC [ ... final byte) are dropped.
std::string valid_text(std::string_view text);

}  // namespace harness
