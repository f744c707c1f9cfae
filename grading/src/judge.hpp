// Internal to grading/: turning one settled case into a CaseResult (grader.cpp calls these).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "grading/results.hpp"
#include "grading/timing_model.hpp"
#include "harness/cases.hpp"
#include "harness/channel.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/supervisor.hpp"

namespace grading::detail {

// The reference timed alone on each speed case, by case index, before the submission's runner
// started: the anchor its paired turns are held to (a submission cannot slow the reference down
// beside it to look faster). Timed both ways a batch beside the submission may go: with the
// stream held, and without (a launcher that waits for the GPU, harness/paired_timing.hpp).
struct AnchorBatches {
    harness::TimedBatch held, unheld;
    double exclusive_seconds = 0;  // the GPU to itself, both batches
};
using ReferenceAlone = std::map<int, AnchorBatches>;

// The case's identity and the command that reruns it, before any verdict.
CaseResult describe_case(const harness::Exercise& exercise, const harness::Case& c, const std::string& submission,
                         const std::string& grade_command);

// The verdict on one settled case: the check of its output, or what stopped it. Throws on data no
// runner sends (the caller reports a protocol_error).
void judge(const harness::Exercise& exercise, const harness::Case& c, harness::CaseRun& run,
           const ReferenceAlone& alone, CaseResult& r);

// Checks the speed case's repetitions the grader picks now (the fastest and others at random) and
// returns the first wrong one's position in `reps`, or -1; `verified` is how many it checked. An
// output bit for bit the reference runner's on the same key (`reference_checksums`: key to
// checksum) is right; any other is judged against the golden output computed here.
int first_wrong_repetition(const harness::Exercise& exercise, const harness::Case& c, const harness::CaseInputs& inputs,
                           const std::vector<harness::TimedRep>& reps,
                           const std::map<std::uint64_t, std::uint64_t>& reference_checksums,
                           const Allowance& allowance, int& verified);

// The case's fraction of the copy bandwidth the grader itself measured at the start; a timing that
// implies more than that bandwidth (with a margin) earns no speed points.
void bound_by_copy_bandwidth(double copy_gb_s, CaseResult& c);

}  // namespace grading::detail
