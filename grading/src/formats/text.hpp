// Internal to the grader: making any text (students' output included) safe for JSON, XML and
// Markdown, the few number spellings the formats share, and small text helpers its files share.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "harness/text.hpp"

namespace grading::formats {

using harness::valid_text;

// harness::valid_text (harness/text.hpp) makes text valid; the formats escape it on top.

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

// `text` without the spaces, tabs and carriage returns at either end.
std::string trimmed(std::string_view text);

// The last line of `text` that is not empty ("" for none).
std::string last_line(std::string_view text);

// Now, ISO 8601 UTC ("2026-01-31T12:00:00Z"), as every file the grader writes dates itself.
std::string utc_now();

std::string fixed(double value, int decimals);
double rounded(double value, int decimals);

}  // namespace grading::formats
