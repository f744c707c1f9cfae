// What to fix first in an exercise that does not pass: one line that every report puts at the top of
// the exercise (the console under the table, results.json's "first_fix", the Markdown summary and
// the Gradescope and PrairieLearn feedback). Computed here only; the formats print it.
#pragma once

#include <ostream>
#include <string>

#include "grading/results.hpp"

namespace grading {

// Empty where there is nothing to fix: every case passed, or no file was submitted. For a graded
// exercise with failing cases: the smallest failing case (by n), what went wrong with it, said by
// the clearest finding (a crash, CUDA error, exception or hang, then a mistake the checks name,
// then elements never written, then wrong values; at one size the clearer failure is chosen) and
// the command that reruns it:
//   "Fix first: n=1025/int (the smallest failing case): <finding>. Rerun it: grade ... --case n=1025/int"
// For a file that did not compile, the compiler's first error line; otherwise the exercise's
// message. One line, at most a few hundred characters; the text may hold a submission's bytes
// (an exception's message, a compiler line), which each format cleans as it cleans the rest.
std::string first_fix(const ExerciseResult& exercise);

// "<exercise>: <first_fix>" for each exercise that has one, a line each (the console, --quiet too).
void print_first_fixes(const GradeReport& report, std::ostream& out);

}  // namespace grading
