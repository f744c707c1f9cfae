// What a grading run found, exercise by exercise and case by case. Written out by report.hpp as
// results.json (schema: grading/results.schema.json) and as the console table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grading/sample_statistics.hpp"
#include "grading/status.hpp"

namespace grading {

// Bumped whenever results.json changes shape (CONTRACT.md: the contract changes only on purpose).
constexpr int results_schema_version = 5;

// A speed case's time. The student's figures are the grader's accepted times
// (grading/src/timing_model.hpp): CUDA events where the grader's own clock confirms them.
struct TimingResult {
    // Both sides were timed in alternating turns of one batch (harness/paired_timing.hpp).
    double student_ms = 0;             // median accepted time of the timed repetitions
    double student_event_ms = 0;       // median of the CUDA-event times the runner reported
    double student_round_trip_ms = 0;  // median launch round trip on the grader's clock
    double reference_ms = 0;           // the hidden reference's median, same case, same GPU, in turns
    double reference_alone_ms = 0;     // its median timed alone, before the submission's runner started
    double reference_event_ms = 0;
    double launch_overhead_allowance_ms = 0;  // round trip minus events allowed, from the reference
    double cpu_ms = 0;                        // a single-threaded CPU version, median of a few runs
    double speedup_vs_reference = 0;          // reference_ms / student_ms (1 = as fast as the reference)
    double speedup_vs_cpu = 0;
    double bandwidth_gb_s = 0;  // minimum bytes the exercise must move / student_ms
    double reference_bandwidth_gb_s = 0;
    double fraction_of_copy = 0;       // bandwidth_gb_s / the grader's measured copy bandwidth
    SampleSummary student, reference;  // of the accepted times: count, median, minimum, spread, rse
    int reps = 0, warmups = 0;
    int rounds = 0;               // turns each side took
    bool capped = false;          // the repetition or time cap ended the batch before the medians settled
    bool held = false;            // launches held the stream (harness/paired_timing.hpp): GPU work alone timed
    int batches = 0;              // 2 when the grader's clock disagreed with the first batch, or it had company
    std::string other_processes;  // processes of no grading on the GPU during the counted batch
    int verified_reps = 0;        // repetitions whose output the grader checked, picked afterwards
    double batch_seconds = 0;     // wall time of the batches in turns (both, where there were two)
    double alone_seconds = 0;     // wall time of the reference's batches alone (held and unheld)
    std::vector<double> student_samples_ms, reference_samples_ms;  // accepted times, in order
    std::string note;  // why a number is missing or was not taken as reported
};

struct CaseResult {
    int index = 0;
    std::string label;
    std::int64_t n = 0;
    int height = 0, width = 0, mask_width = 0;
    std::string data;
    std::uint64_t seed = 0;
    bool timed = false;
    CaseStatus status = CaseStatus::not_run;
    double seconds = 0;                // waited on the runners (the GPU lock's waits excepted)
    double check_seconds = 0;          // spent in the grader: inputs and golden results again, the check
    double gpu_wait_seconds = 0;       // waiting for the GPU lock (other speed cases, or case runs)
    double gpu_exclusive_seconds = 0;  // speed cases: the GPU to itself, alone and in turns
    std::string summary;
    std::vector<std::string> findings;
    nlohmann::json detail = nlohmann::json::object();
    std::optional<TimingResult> timing;
    std::string reproduce;  // the command that reruns just this case
};

struct ExerciseResult {
    std::string name;
    ExerciseStatus status = ExerciseStatus::not_submitted;
    std::string source;   // the submitted file, if any
    std::string message;  // one line on the status
    std::string compile_output;
    double compile_seconds = 0;
    std::vector<std::string> library_use;  // CUB/Thrust/... found in the source
    std::string runner_output;             // tail of what the student's code printed (never parsed)
    // Not reported: a runner or the reference runner could not start or use the GPU while other
    // exercises ran beside it (what one leaves behind can starve another): graded again alone.
    bool grade_again_alone = false;
    std::vector<CaseResult> cases;
    double correctness_points = 0, speed_points = 0, points = 0, max_points = 0;
    double seconds = 0;
    double started_seconds = 0;  // when its grading began, counted from the start of the whole run
};

struct GradeReport {
    std::string grader_version;
    std::string started_at;  // ISO 8601 UTC
    std::string submission;
    std::string device, compute_capability;
    nlohmann::json calibration = nlohmann::json::object();  // the reference runner's measurement of the GPU
    std::string sandbox;  // what isolated submitted code: "bubblewrap 0.8.0 ..." or "none (--no-sandbox)"
    std::vector<ExerciseResult> exercises;
    double points = 0, max_points = 0;
    double seconds = 0;
};

}  // namespace grading
