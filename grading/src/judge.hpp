// Internal to grading/: turning one settled case into a CaseResult (grader.cpp calls these).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "grading/results.hpp"
#include "harness/cases.hpp"
#include "harness/channel.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/supervisor.hpp"
#include "harness/timing/speed_case.hpp"

namespace grading::detail {

// The case's identity and the command that reruns it, before any verdict.
CaseResult describe_case(const harness::Exercise& exercise, const harness::Case& c, const std::string& submission,
                         const std::string& grade_command);

// What a CUDA error (its name, "cudaErrorIllegalAddress") usually means in a student's kernel, in
// words; empty for an error without a hint.
std::string cuda_error_hint(const std::string& error);

// The verdict on one settled case: the check of its output, or what stopped it. Throws on data no
// runner sends (the caller reports a protocol_error).
void judge(const harness::Exercise& exercise, const harness::Case& c, harness::CaseRun& run, CaseResult& r);

// Checks every repetition of the submission's counted and warm-up batches: its checksum (read by
// the timing server) against the reference's on the same seed, and where they differ or the
// reference has none, against the golden output computed here. Returns the first wrong one, if
// any; `verified` counts the repetitions checked.
struct WrongRepetition {
    std::uint64_t seed = 0;
    int rep = 0;
};
std::optional<WrongRepetition> first_wrong_repetition(const harness::Exercise& exercise, const harness::Case& c,
                                                      const harness::timing::CaseTiming& timing, int& verified);

// The case's fraction of the copy bandwidth the grader itself measured at the start; a timing that
// implies more than that bandwidth (with a margin) earns no speed points.
void bound_by_copy_bandwidth(double copy_gb_s, CaseResult& c);

}  // namespace grading::detail
