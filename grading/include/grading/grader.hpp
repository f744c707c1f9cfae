// The grading pipeline: find the submission's files, build a runner per exercise (in the sandbox),
// run each under the supervisor (in the sandbox), check every case in this process, time the speed
// cases against the reference, and score. Progress goes to `progress` as it happens.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "grading/build.hpp"
#include "grading/hidden_cases.hpp"
#include "grading/results.hpp"
#include "grading/rubric.hpp"
#include "harness/gpu_lock.hpp"
#include "harness/sandbox.hpp"
#include "harness/supervisor.hpp"
#include "harness/timing/paired_timing.hpp"
#include "harness/timing/speed_case.hpp"

namespace grading {

// What was asked of one grading: plain data, copyable, the same whichever machine grades it.
struct GradeRequest {
    std::string submission;
    std::vector<std::string> exercises;   // in order; all of CONTRACT.md by default
    std::string case_label;               // only this case (with one exercise)
    std::string grade_command = "grade";  // how reports tell a student to rerun one case
    bool keep_work = false;               // keep runners and logs under the work directory after grading
    // grade --build-only: build each file and run the build checks, no case: every file that passes
    // is `built` (no GPU needed; the environment's reference_runner is empty then, so nothing is timed).
    bool build_only = false;
    bool colour = false;  // status words in colour in `progress` (console.hpp)
    int compile_jobs = 4;
    int parallel_exercises = 4;  // exercises graded side by side (their speed cases take turns); grade: 4-16 by cores
    harness::SupervisorLimits limits;
    harness::timing::TimingPlan timing;  // how speed cases are timed (harness/timing/paired_timing.hpp)
    Rubric rubric;
    // The instructor's secret, which hidden cases' seeds come from (grading/hidden_cases.hpp); needed
    // when the rubric hides a case.
    std::optional<HiddenCaseSecret> hidden_secret;
    // compute-sanitizer as a graded step (grading/sanitizer.hpp), with rubric.sanitizer.run too.
    bool sanitize = false;
};

// Where a grading runs: the machine's programs and directories, and the live resources main sets
// up for it (owned by main; each outlives the grading).
struct GradingEnvironment {
    Toolchain toolchain;
    std::string reference_runner;   // built from reference/; empty: no timing. The grader's own program:
                                    // its timing server runs outside the sandbox (and measures the GPU
                                    // at the start), its reference runners in the sandbox like a
                                    // submission's
    std::string compute_sanitizer;  // the sanitizer step's program; empty: found from the toolkit
    std::string work_dir = "grader-work";
    const harness::Sandbox* sandbox = nullptr;  // nullptr: --no-sandbox (trusted code only)
    std::string gpu_node;  // the graded GPU's /dev/nvidiaN, the only GPU the sandbox shows; empty: all
    const harness::GpuLock* gpu_lock = nullptr;  // keeps timed cases of concurrent gradings apart; nullptr: none
    // Company on the GPU (a description; empty when none): asked around every speed case's
    // timing (harness/timing/speed_case.hpp). Empty function: not watched.
    harness::timing::GpuCompany gpu_intruders;
    // The GPU's clocks, temperature and throttling now (grading/gpu_monitor.hpp), recorded in the
    // results at the start and the end. Empty function: not recorded.
    std::function<nlohmann::json()> gpu_clocks;
    // The bytes over the GPU's PCIe link so far (GpuMonitor::host_link_bytes), read around every
    // timed batch: what decides computes_on_gpu (grading/technique.hpp). Empty function: not read.
    harness::timing::HostLinkBytes gpu_host_link;
    // The GPU memory a runner's processes (it and those below it) hold now, bytes (GpuMonitor::
    // memory_below): asked where the timing server fails beside a submission's runner. Empty
    // function, or nullopt: not known.
    std::function<std::optional<std::uint64_t>(int runner)> gpu_memory_below;
};

// A grading as grade's command line and main give it: what was asked, and where it runs.
struct GradeOptions {
    GradeRequest request;
    GradingEnvironment environment;
};

GradeReport grade(const GradeRequest& request, const GradingEnvironment& environment, std::ostream& progress);

// The order in which grade() builds and grades the files (indices into `files`): the exercises with
// the most case elements first (their inputs, runs and checks take the time), so that the last to
// finish is not one that started late; ties in the order given.
std::vector<std::size_t> grading_order(const std::vector<SubmissionFile>& files, const GradeRequest& request);

}  // namespace grading
