// What a grading run found, exercise by exercise and case by case. Written out by report.hpp as
// results.json (schema: grading/results.schema.json) and as the console table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace grading {

// Bumped whenever results.json changes shape (CONTRACT.md: the contract changes only on purpose).
constexpr int results_schema_version = 1;

struct TimingResult {
    double student_ms = 0;          // median over the repetitions
    double reference_ms = 0;        // the hidden reference's median, same case, same run, same GPU
    double cpu_ms = 0;              // a single-threaded CPU version, median of a few runs
    double speedup_vs_reference = 0;  // reference_ms / student_ms (1 = as fast as the reference)
    double speedup_vs_cpu = 0;
    double bandwidth_gb_s = 0;      // minimum bytes the exercise must move / student_ms
    double reference_bandwidth_gb_s = 0;
    double student_host_ms = 0;     // median host-clock time, launcher call to device idle
    double reference_host_ms = 0;
    int reps = 0;
    std::vector<double> student_samples_ms, reference_samples_ms;
    std::string note;               // why a number is missing, if one is
};

struct CaseResult {
    int index = 0;
    std::string label;
    std::int64_t n = 0;
    int height = 0, width = 0, mask_width = 0;
    std::string data;
    std::uint64_t seed = 0;
    bool timed = false;
    std::string status;             // pass | wrong | cuda_error | crashed | timeout | protocol_error | not_run
    double seconds = 0;             // waited on the runner: case_begin to case_end, as the grader saw it
    double check_seconds = 0;       // spent in the grader: inputs and golden results again, the check
    std::string summary;
    std::vector<std::string> findings;
    nlohmann::json detail = nlohmann::json::object();
    std::optional<TimingResult> timing;
    std::string reproduce;          // the command that reruns just this case
};

struct ExerciseResult {
    std::string name;
    // graded | not_submitted | compile_error | missing_launcher | invalid_submission | runner_failed
    std::string status = "not_submitted";
    std::string source;             // the submitted file, if any
    std::string message;            // one line on the status
    std::string compile_output;
    double compile_seconds = 0;
    std::vector<std::string> library_use;   // CUB/Thrust/... found in the source
    std::string runner_output;      // tail of what the student's code printed (never parsed)
    std::vector<CaseResult> cases;
    double correctness_points = 0, speed_points = 0, points = 0, max_points = 0;
    double seconds = 0;
};

struct GradeReport {
    std::string grader_version;
    std::string started_at;         // ISO 8601 UTC
    std::string submission;
    std::string device, compute_capability;
    std::vector<ExerciseResult> exercises;
    double points = 0, max_points = 0;
    double seconds = 0;
};

}  // namespace grading
