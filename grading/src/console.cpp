#include "grading/console.hpp"

#include <algorithm>
#include <cstdlib>

#include <unistd.h>

namespace grading {

bool colour_wanted(int fd)
{
    const char* no_color = std::getenv("NO_COLOR");
    return ::isatty(fd) == 1 && (no_color == nullptr || *no_color == '\0');
}

std::string paint(const std::string& text, Tone tone, bool colour)
{
    if (!colour || tone == Tone::plain) return text;
    const char* code = tone == Tone::good ? "\033[32m" : tone == Tone::partial ? "\033[33m" : "\033[31m";
    return code + text + "\033[0m";
}

Tone tone_of(CaseStatus status)
{
    return status == CaseStatus::pass ? Tone::good : status == CaseStatus::not_run ? Tone::partial : Tone::bad;
}

Tone tone_of(const ExerciseResult& exercise)
{
    if (exercise.status == ExerciseStatus::not_submitted) return Tone::partial;
    if (exercise.status == ExerciseStatus::built) return exercise.library_use.empty() ? Tone::good : Tone::partial;
    if (exercise.status != ExerciseStatus::graded) return Tone::bad;
    const bool all_passed = std::all_of(exercise.cases.begin(), exercise.cases.end(),
                                        [](const CaseResult& c) { return c.status == CaseStatus::pass; });
    return all_passed && exercise.library_use.empty() ? Tone::good : Tone::partial;
}

}  // namespace grading
