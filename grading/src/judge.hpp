// Internal to grading/: turning one settled case into a CaseResult (grader.cpp calls these).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "grading/results.hpp"
#include "harness/cases.hpp"
#include "harness/channel.hpp"
#include "harness/exercise.hpp"
#include "harness/supervisor.hpp"

namespace grading::detail {

// A timing message holds the event times of every repetition, then (from runners that measure
// it) the host-clock times of the same repetitions.
struct TimingSamples {
    std::vector<double> event_ms, host_ms;
};
TimingSamples samples_of(const harness::Message& timing);

// The case's identity and the command that reruns it, before any verdict.
CaseResult describe_case(const harness::Exercise& exercise, const harness::Case& c, const std::string& submission);

// The verdict on one settled case: the check of its output, or what stopped it. Throws on data no
// runner sends (the caller reports a protocol_error).
void judge(const harness::Exercise& exercise, const harness::Case& c, harness::CaseRun& run,
           const std::map<int, TimingSamples>& reference_samples, CaseResult& r);

// Timings that imply more bandwidth than the GPU has earn no speed points.
void reject_impossible_timings(double peak_gb_s, ExerciseResult& result);

}  // namespace grading::detail
