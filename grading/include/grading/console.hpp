// What grade prints for people: status words in colour on a terminal (green passed, yellow not run
// or partly scored, red failed), plain text wherever the output is kept or parsed (files, pipes, CI
// logs) and wherever NO_COLOR asks for it (https://no-color.org).
#pragma once

#include <string>

#include "grading/results.hpp"

namespace grading {

enum class Tone { plain, good, partial, bad };

// True when `fd` is a terminal and NO_COLOR is unset or empty (no-color.org: "present and not an
// empty string" turns colour off).
bool colour_wanted(int fd);

// `text` between the tone's ANSI colour and a reset when `colour`, else `text` unchanged. Pad text
// before painting it: the escape codes have no width on screen but count for std::setw.
std::string paint(const std::string& text, Tone tone, bool colour);

Tone tone_of(CaseStatus status);
// Good: graded with every case passed (or, --build-only, built); partial: graded with failures, or not submitted; bad: it
// never got to run (compile error, invalid, no launcher, runner failed).
Tone tone_of(const ExerciseResult& exercise);

}  // namespace grading
