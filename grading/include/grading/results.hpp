// What a grading run found, exercise by exercise and case by case. Written out by report.hpp as
// results.json (schema: grading/results.schema.json) and as the console table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/timing/statistics.hpp"
#include "grading/status.hpp"
#include "grading/technique.hpp"

namespace grading {

// Bumped whenever results.json changes shape (CONTRACT.md: the contract changes only on purpose).
constexpr int results_schema_version = 13;

using harness::timing::SampleSummary;

// A speed case's time (harness/timing/): batches of launcher calls on inputs the grader's timing
// server wrote from seeds no runner sees, timed by that server's clock from before the inputs to
// after its own checksums of the outputs, less the batch's fixed cost measured on the reference
// alone; every call's output checked against the reference's on the same inputs.
struct TimingResult {
    double student_ms = 0;          // median time of one launcher call
    double reference_ms = 0;        // the hidden reference's, in turns beside the submission (or alone: note)
    double reference_alone_ms = 0;  // its median alone, before the submission's runner started
    // Its median alone again after the turns, the submission's runner stopped, where it was more
    // than 3% slower beside the submission than alone before it (0: not timed, or had company).
    double reference_after_ms = 0;
    double fixed_cost_ms = 0;       // a batch's window without launcher calls (the reference's empty batches)
    double student_window_ms = 0;   // median window of the student's counted batches
    int reps_per_batch = 0;         // launcher calls in each batch
    double cpu_ms = 0;              // a single-threaded CPU version, median of a few runs
    double speedup_vs_reference = 0;  // reference_ms / student_ms (1 = as fast as the reference)
    double speedup_vs_cpu = 0;
    double bandwidth_gb_s = 0;  // minimum bytes the exercise must move / student_ms
    double reference_bandwidth_gb_s = 0;
    double fraction_of_copy = 0;       // bandwidth_gb_s / the grader's measured copy bandwidth
    SampleSummary student, reference;  // of one call's time, one sample per counted batch
    int warmup_batches = 0;            // per side, not counted
    int rounds = 0;                    // turns each side took
    bool capped = false;               // a cap ended the timing before the stopping rule was met
    nlohmann::json stopping_rule = nlohmann::json::object();  // the rule (harness/timing/stopping_rule.hpp)
    int turns = 0;                     // 2 when other processes used the GPU during the first; the better counts
    std::string other_processes;       // processes of no grading on the GPU during the counted turns
    int verified_reps = 0;             // launcher calls whose output the grader checked
    // Bytes over the GPU's PCIe link per launcher call in the counted turns (Window::
    // host_link_bytes), the submission's and the reference's beside it: what computes_on_gpu is
    // decided from (grading/technique.hpp). nullopt: not counted.
    std::optional<double> student_link_bytes_per_call, reference_link_bytes_per_call;
    // The grader's clock around those batches, per call: traffic of the machine grows with it.
    double student_link_ms_per_call = 0, reference_link_ms_per_call = 0;
    // The machine's own traffic per call over windows as long as the submission's slow batches,
    // with its runner stopped (PairedTiming::idle); nullopt: not measured (no batch of the
    // submission's took more than 1.5 times the reference's, or the link is not counted).
    std::optional<double> idle_link_bytes_per_call;
    double batch_seconds = 0;          // wall time of the turns (the GPU to themselves)
    double alone_seconds = 0;          // wall time of the reference's batches alone
    std::vector<double> student_samples_ms, reference_samples_ms;  // one call's time per batch, in order
    // Every batch of this case as the grader saw it (the audit record): for each of the reference
    // alone, the student's and the reference's turns and the reference's empty batches between them,
    // rows of batch_columns (judge.cpp), in order, warm-ups included.
    nlohmann::json batches = nlohmann::json::object();
    std::string note;  // why a number is missing or was not taken as measured
};

struct CaseResult {
    int index = 0;
    std::string label;
    std::int64_t n = 0;
    // The case's shape as its family writes it (harness::ExerciseFamily::shape_json): {"n"}, or a
    // convolution's {"n", "mask_width"} or {"height", "width", "mask_width"}.
    nlohmann::json shape = nlohmann::json::object();
    std::string data;
    std::uint64_t seed = 0;
    bool timed = false;
    bool hidden = false;  // its seed from the instructor's secret (grading/hidden_cases.hpp)
    CaseStatus status = CaseStatus::not_run;
    double seconds = 0;                // waited on the runners (the GPU lock's waits excepted)
    double check_seconds = 0;          // spent in the grader: inputs and golden results again, the check
    double gpu_wait_seconds = 0;       // waiting for the GPU lock (other speed cases, or case runs)
    double gpu_exclusive_seconds = 0;  // speed cases: the GPU to itself, alone and in turns
    std::string summary;
    std::vector<std::string> findings;
    nlohmann::json detail = nlohmann::json::object();
    std::optional<TimingResult> timing;
    // Why the submission kept this case's timed calls from showing what they do, where it did (its
    // runner held the GPU's memory the timing needed; for the check of computes_on_gpu, a call that
    // was wrong or a timing that did not finish): computes_on_gpu is false then. Empty: it did not.
    std::string timing_withheld;
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
    // What the checks of code the student did not write found (docs/security.md): {"mode",
    // "findings", "not_checked", "reference"}; null when the file was not built.
    nlohmann::json code_checks = nullptr;
    bool matches_reference = false;  // its PTX matches the hidden reference's: the rubric prices it
    // Its compiled kernels' fingerprint (grading/build.hpp's KernelFingerprint, as JSON), which the
    // class step compares between students; null when the file was not built. The instructor's
    // only: absent from a student's view.
    nlohmann::json fingerprint = nullptr;
    // What its compiled code shows of the exercise's technique (grading/technique.hpp); none when the
    // file was not built. A required technique it lacks costs the correctness points (the rubric).
    std::optional<TechniqueReport> technique;
    // compute-sanitizer's step (grading/sanitizer.hpp): tool -> {"checked", "findings", ...} or
    // {"checked": false, "why"}; null when it did not run. The tools that found something (priced
    // by the rubric's sanitizer.cost_per_tool) and the points that cost.
    nlohmann::json sanitizer = nullptr;
    std::vector<std::string> sanitizer_tools_with_findings;
    double sanitizer_points_lost = 0;
    std::string runner_output;             // tail of what the student's code printed (never parsed)
    // The same of the runners that ran hidden cases (each runs no other): the instructor's only.
    std::string hidden_runner_output;
    // Not reported: a runner or the reference runner could not start or use the GPU while other
    // exercises ran beside it (what one leaves behind can starve another): graded again alone.
    bool grade_again_alone = false;
    std::vector<CaseResult> cases;
    double correctness_points = 0, speed_points = 0, points = 0, max_points = 0;
    double seconds = 0;
    double started_seconds = 0;  // when its grading began, counted from the start of the whole run
    double gpu_place_wait_seconds = 0;  // waited for a place on the GPU (GpuLock::exercise_place)
};

// The hidden cases of a grading (grading/hidden_cases.hpp).
struct HiddenCasesSummary {
    int count = 0;          // hidden cases graded, over every exercise
    std::string secret_id;  // names the secret they were drawn with (HiddenCaseSecret::id); empty: none
    bool redacted = false;  // this report is a student's view (student_view)
};

struct GradeReport {
    std::string grader_version;
    std::string started_at;  // ISO 8601 UTC
    std::string submission;
    std::string device, compute_capability;
    nlohmann::json calibration = nlohmann::json::object();  // the reference runner's measurement of the GPU
    std::string sandbox;  // what isolated submitted code: "bubblewrap 0.8.0 ..." or "none (--no-sandbox)"
    // Which limits hold for each sandbox on this machine (harness::Sandbox::limits()):
    // {"enforced": ["processes", "memory", ...], "not_enforced": {"memory": "why", ...}}.
    nlohmann::json sandbox_limits = {{"enforced", nlohmann::json::array()}, {"not_enforced", nlohmann::json::object()}};
    HiddenCasesSummary hidden_cases;
    std::vector<ExerciseResult> exercises;
    double points = 0, max_points = 0;
    double seconds = 0;
};

}  // namespace grading
