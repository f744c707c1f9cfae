// The references' timings alone on one GPU, measured once for a class. `grade class` has a grading
// of an empty submission time every reference alone on each GPU before any student's grading starts
// (grade --record-reference-timings FILE: no process of any submission exists then), and each
// student's grading adopts those timings (--reference-timings FILE) instead of timing the references
// alone itself between other students' gradings. Timing them is a third of a grading's time with
// the GPU to itself and half of its exclusive holds, each of which waits for every other grading's
// runs on the GPU to end (docs/measurement.md, "A class").
//
// The file is the grader's: it lies in the class's output directory, which no sandbox shows. A
// grading adopts a case's timing only where it was measured on the same GPU (its UUID), by the same
// grader version, for the same batches and timing plan; a file that does not fit, or cannot be read,
// is said once and the references are timed alone as without it. How a slower machine since then
// is told from a slowed reference is unchanged (CaseTiming::alone_after, timed per student).
#pragma once

#include <map>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace grading {

struct ReferenceTimings {
    std::string grader_version;
    std::string measured_at;     // UTC, ISO 8601
    nlohmann::json calibration;  // the recording grading's measurement of the GPU (its "uuid" names it)
    // exercise -> case label -> the reference's timing alone (harness/timing/alone_record.hpp)
    std::map<std::string, std::map<std::string, nlohmann::json>> cases;
};

struct ReferenceTimingsUnusable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

nlohmann::json to_json(const ReferenceTimings& timings);
// Throws ReferenceTimingsUnusable, with the reason, where `path` is not a file to_json wrote
// (missing, unreadable, over 64 MiB, not JSON, another layout).
ReferenceTimings read_reference_timings(const std::string& path);
// Why `timings` cannot stand for this grading's on the GPU `calibration` describes (another GPU, or
// another grader version); empty where they can.
std::string reference_timings_mismatch(const ReferenceTimings& timings, const nlohmann::json& calibration);

}  // namespace grading
