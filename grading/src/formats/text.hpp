// Internal to the formats: making any text (students' output included) safe for JSON, XML and
// Markdown, and the few number spellings the formats share.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace grading::formats {

// `text` as valid UTF-8 holding only characters XML 1.0 allows (so JSON and Markdown take it too):
// each byte of a broken sequence and each forbidden character becomes U+FFFD, and terminal colour
// sequences (ESC [ ... m) are dropped.
std::string valid_text(std::string_view text);

// XML character data, or an attribute value (there line breaks and tabs are escaped too, since a
// parser would turn them into spaces).
std::string xml_text(std::string_view text);
std::string xml_attribute(std::string_view text);

// Markdown: text shown as written (punctuation that would format is escaped; line breaks become
// spaces, so that it stays on its line or in its table cell), a code span, a fenced block.
std::string md_text(std::string_view text);
std::string md_code(std::string_view text);
std::string md_block(std::string_view text);

// The first `max_lines` lines of `text`, with a line saying how many more there were.
std::string first_lines(std::string_view text, std::size_t max_lines);
// The last `max_chars` characters of `text`, starting at a line where one is near.
std::string last_chars(std::string_view text, std::size_t max_chars);

std::string fixed(double value, int decimals);
double rounded(double value, int decimals);

}  // namespace grading::formats
