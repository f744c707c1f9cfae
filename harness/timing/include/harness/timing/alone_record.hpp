// The reference's timing alone on a speed case as data that outlives the grading that measured it.
// `grade class` times the references alone once per GPU before any student's process exists
// (grading/reference_timings.hpp); each student's grading then adopts those timings instead of
// timing the references alone itself, between other students' gradings.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/timing/paired_timing.hpp"

namespace harness::timing {

// What a timing alone was measured for: the batches' shape and arguments and the plan. A record is
// adopted only for the same (SpeedCaseTimer::adopt_alone).
nlohmann::json alone_subject(const BatchSpec& spec, const TimingPlan& plan);

// {"subject", "windows", "capped", "seconds"} (the fixed cost is the windows': fixed_cost_ms).
nlohmann::json alone_record(const BatchSpec& spec, const TimingPlan& plan, const AloneTiming& alone);

// The timing alone in `record`, measured for `subject` (alone_subject's). Throws std::runtime_error
// where the record is of another subject, or is not one alone_record wrote (edited, cut short).
AloneTiming read_alone_record(const nlohmann::json& record, const nlohmann::json& subject);

}  // namespace harness::timing
